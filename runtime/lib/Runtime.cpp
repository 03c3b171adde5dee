//===- Runtime.cpp - process state, dtypes, tensors and timing -----------===//
//
// The core of libloomrt: the per-thread last-error string, dtype tables,
// MPI initialisation (singleton-capable), the device grid, tensors with
// 64-byte aligned storage, the monotonic clock, and atomic file writes used
// by every writer in the runtime.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <mpi.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

using namespace loom::runtime;

namespace {
thread_local std::string lastError;
std::vector<int64_t> grid;
bool weInitialisedMPI = false;

struct DTypeInfo {
  const char *name;
  int64_t size;
};
const DTypeInfo dtypeTable[LOOMRT_NUM_DTYPES] = {
    {"float32", 4}, {"float64", 8}, {"float16", 2}, {"bfloat16", 2},
    {"int8", 1},    {"int16", 2},   {"int32", 4},   {"int64", 8},
    {"uint8", 1},   {"uint16", 2},  {"uint32", 4},  {"uint64", 8},
    {"bool", 1}};
} // namespace

//===----------------------------------------------------------------------===//
// Internal helpers
//===----------------------------------------------------------------------===//

loomrt_status loom::runtime::fail(loomrt_status code, const std::string &msg) {
  lastError = msg;
  return code;
}

loomrt_status loom::runtime::ok() {
  lastError.clear();
  return LOOMRT_OK;
}

std::string loom::runtime::format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  std::string s;
  if (n < (int)sizeof(small)) {
    s.assign(small, n < 0 ? 0 : n);
  } else {
    s.resize(n + 1);
    vsnprintf(&s[0], n + 1, fmt, ap2);
    s.resize(n);
  }
  va_end(ap2);
  return s;
}

int64_t loom::runtime::numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > INT64_MAX / d)
      return -1;
    n *= d;
  }
  return n;
}

std::string loom::runtime::shapeString(const int64_t *shape, int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

loomrt_status loom::runtime::makeTensor(int32_t dtype,
                                        const std::vector<int64_t> &shape,
                                        loomrt_tensor **out, void *storage) {
  *out = nullptr;
  int64_t esize = loomrt_dtype_size(dtype);
  if (esize == 0)
    return fail(LOOMRT_ERR_INVALID, format("unknown dtype code %d", dtype));
  int64_t n = numel(shape);
  if (n < 0 || n > INT64_MAX / esize)
    return fail(LOOMRT_ERR_INVALID,
                "invalid tensor shape " +
                    shapeString(shape.data(), (int64_t)shape.size()));
  int64_t bytes = n * esize;
  void *data = storage;
  if (!data) {
    size_t alloc = (size_t)tensorAllocBytes(bytes);
    data = std::aligned_alloc(64, alloc);
    if (!data)
      return fail(LOOMRT_ERR_NOMEM, format("out of memory allocating %lld bytes",
                                           (long long)bytes));
    std::memset(data, 0, alloc);
  }
  auto *t = new (std::nothrow) loomrt_tensor;
  if (!t) {
    if (!storage)
      std::free(data);
    return fail(LOOMRT_ERR_NOMEM, "out of memory");
  }
  t->dtype = dtype;
  t->shape = shape;
  t->nbytes = bytes;
  t->data = data;
  t->ownsData = !storage;
  *out = t;
  return ok();
}

const std::vector<int64_t> &loom::runtime::gridShape() { return grid; }

bool loom::runtime::mpiRunning() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

loomrt_status
loom::runtime::writeFileAtomic(const std::string &path,
                               const std::vector<const void *> &parts,
                               const std::vector<size_t> &sizes) {
  std::string dir = ".", base = path;
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) {
    dir = path.substr(0, slash == 0 ? 1 : slash);
    base = path.substr(slash + 1);
  }
  std::string tmpl =
      (dir == "/" ? std::string("/") : dir + "/") + "." + base + ".tmpXXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0)
    return fail(LOOMRT_ERR_IO,
                format("cannot create a temporary file in '%s' "
                       "to write '%s': %s",
                       dir.c_str(), path.c_str(), strerror(errno)));
  std::string tmp(buf.data());
  auto bail = [&](const char *what) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return fail(LOOMRT_ERR_IO, format("cannot %s '%s': %s", what, path.c_str(),
                                      strerror(err)));
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    const char *p = static_cast<const char *>(parts[i]);
    size_t left = sizes[i];
    while (left > 0) {
      ssize_t w = write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR)
          continue;
        return bail("write");
      }
      p += w;
      left -= (size_t)w;
    }
  }
  // mkstemp creates 0600; give the file the usual permissions.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return fail(LOOMRT_ERR_IO,
                format("cannot write '%s': %s", path.c_str(), strerror(err)));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return fail(LOOMRT_ERR_IO, format("cannot rename a temporary file to "
                                      "'%s': %s",
                                      path.c_str(), strerror(err)));
  }
  return ok();
}

//===----------------------------------------------------------------------===//
// C API: errors, dtypes
//===----------------------------------------------------------------------===//

extern "C" {

const char *loomrt_last_error(void) { return lastError.c_str(); }

int64_t loomrt_dtype_size(int32_t dtype) {
  if (dtype < 0 || dtype >= LOOMRT_NUM_DTYPES)
    return 0;
  return dtypeTable[dtype].size;
}

const char *loomrt_dtype_name(int32_t dtype) {
  if (dtype < 0 || dtype >= LOOMRT_NUM_DTYPES)
    return nullptr;
  return dtypeTable[dtype].name;
}

int32_t loomrt_dtype_from_name(const char *name) {
  if (!name)
    return -1;
  for (int32_t i = 0; i < LOOMRT_NUM_DTYPES; ++i)
    if (std::strcmp(name, dtypeTable[i].name) == 0)
      return i;
  return -1;
}

//===----------------------------------------------------------------------===//
// C API: process, MPI, grid
//===----------------------------------------------------------------------===//

loomrt_status loomrt_init(int *argc, char ***argv) {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
      return fail(LOOMRT_ERR_MPI, "MPI_Init_thread failed");
    weInitialisedMPI = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return ok();
}

loomrt_status loomrt_finalize(void) {
  if (!mpiRunning())
    return ok();
  loomrt_complete_sends();
  freeCommunicators();
  if (weInitialisedMPI) {
    weInitialisedMPI = false;
    if (MPI_Finalize() != MPI_SUCCESS)
      return fail(LOOMRT_ERR_MPI, "MPI_Finalize failed");
  }
  return ok();
}

int loomrt_world_rank(void) {
  if (!mpiRunning())
    return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int loomrt_world_size(void) {
  if (!mpiRunning())
    return 1;
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

void loomrt_abort(int code) {
  fflush(stdout);
  fflush(stderr);
  if (mpiRunning())
    MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

loomrt_status loomrt_barrier(void) {
  if (!mpiRunning())
    return fail(LOOMRT_ERR_STATE, "MPI is not initialised");
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
    return fail(LOOMRT_ERR_MPI, "MPI_Barrier failed");
  return ok();
}

loomrt_status loomrt_set_grid(int64_t ndims,
                              const int64_t *shape){LOOMRT_GUARD({
  if (ndims < 0 || ndims > 8 || (ndims > 0 && !shape))
    return fail(LOOMRT_ERR_INVALID,
                format("invalid grid rank %lld (0 to 8 axes are supported)",
                       (long long)ndims));
  std::vector<int64_t> s(shape, shape + ndims);
  int64_t n = numel(s);
  for (int64_t d : s)
    if (d <= 0)
      return fail(LOOMRT_ERR_INVALID,
                  "invalid grid shape " + shapeString(shape, ndims));
  if (n < 0)
    return fail(LOOMRT_ERR_INVALID,
                "grid shape " + shapeString(shape, ndims) + " is too large");
  if (mpiRunning())
    freeCommunicators();
  grid = std::move(s);
  return ok();
})}

int64_t loomrt_grid_ndims(void) {
  return (int64_t)grid.size();
}

loomrt_status loomrt_grid_coords(int64_t world_rank, int64_t *coords) {
  int64_t n = numel(grid);
  if (world_rank < 0 || world_rank >= n)
    return fail(LOOMRT_ERR_INVALID,
                format("rank %lld is outside the grid", (long long)world_rank));
  for (int64_t i = (int64_t)grid.size() - 1; i >= 0; --i) {
    coords[i] = world_rank % grid[i];
    world_rank /= grid[i];
  }
  return ok();
}

int64_t loomrt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

//===----------------------------------------------------------------------===//
// C API: tensors
//===----------------------------------------------------------------------===//

loomrt_status loomrt_tensor_create(int32_t dtype, int64_t rank,
                                   const int64_t *shape, loomrt_tensor **out) {
  LOOMRT_GUARD({
    if (!out)
      return fail(LOOMRT_ERR_INVALID, "null output handle");
    *out = nullptr;
    if (rank < 0 || rank > LOOMRT_MAX_RANK || (rank > 0 && !shape))
      return fail(LOOMRT_ERR_INVALID,
                  format("invalid tensor rank %lld", (long long)rank));
    return makeTensor(dtype, std::vector<int64_t>(shape, shape + rank), out);
  })
}

void loomrt_tensor_destroy(loomrt_tensor *t) {
  if (!t)
    return;
  if (t->ownsData)
    std::free(t->data);
  delete t;
}

int32_t loomrt_tensor_dtype(const loomrt_tensor *t) {
  return t ? t->dtype : -1;
}
int64_t loomrt_tensor_rank(const loomrt_tensor *t) {
  return t ? (int64_t)t->shape.size() : -1;
}
const int64_t *loomrt_tensor_shape(const loomrt_tensor *t) {
  return t ? t->shape.data() : nullptr;
}
int64_t loomrt_tensor_numel(const loomrt_tensor *t) {
  return t ? numel(t->shape) : -1;
}
int64_t loomrt_tensor_nbytes(const loomrt_tensor *t) {
  return t ? t->nbytes : -1;
}
void *loomrt_tensor_data(loomrt_tensor *t) { return t ? t->data : nullptr; }

loomrt_status loomrt_tensor_accumulate(loomrt_tensor *sum,
                                       const loomrt_tensor *part){LOOMRT_GUARD({
  if (!sum || !part)
    return fail(LOOMRT_ERR_INVALID, "null tensor");
  int64_t n = numel(sum->shape);
  if (numel(part->shape) != n)
    return fail(LOOMRT_ERR_INVALID,
                format("accumulate: %lld elements into %lld",
                       (long long)numel(part->shape), (long long)n));
  auto add = [&](auto *to, auto widen) {
    using T = std::remove_pointer_t<decltype(to)>;
    for (int64_t k = 0; k < n; ++k)
      to[k] += static_cast<T>(widen(k));
  };
  const void *from = part->data;
  if (sum->dtype == LOOMRT_FLOAT64 && part->dtype == LOOMRT_FLOAT64)
    add(static_cast<double *>(sum->data),
        [&](int64_t k) { return static_cast<const double *>(from)[k]; });
  else if (sum->dtype != LOOMRT_FLOAT32)
    return fail(LOOMRT_ERR_INVALID, format("accumulate: a %s sum of %s",
                                           loomrt_dtype_name(sum->dtype),
                                           loomrt_dtype_name(part->dtype)));
  else if (part->dtype == LOOMRT_FLOAT32)
    add(static_cast<float *>(sum->data),
        [&](int64_t k) { return static_cast<const float *>(from)[k]; });
  else if (part->dtype == LOOMRT_FLOAT16)
    add(static_cast<float *>(sum->data), [&](int64_t k) {
      return halfToFloat(static_cast<const uint16_t *>(from)[k]);
    });
  else if (part->dtype == LOOMRT_BFLOAT16)
    add(static_cast<float *>(sum->data), [&](int64_t k) {
      return bf16ToFloat(static_cast<const uint16_t *>(from)[k]);
    });
  else
    return fail(LOOMRT_ERR_INVALID, format("accumulate: a float32 sum of %s",
                                           loomrt_dtype_name(part->dtype)));
  return ok();
})}

loomrt_status
    loomrt_tensor_round(const loomrt_tensor *from, loomrt_tensor *to) {
  LOOMRT_GUARD({
    if (!from || !to)
      return fail(LOOMRT_ERR_INVALID, "null tensor");
    int64_t n = numel(from->shape);
    if (numel(to->shape) != n)
      return fail(LOOMRT_ERR_INVALID,
                  format("round: %lld elements into %lld", (long long)n,
                         (long long)numel(to->shape)));
    if (from->dtype == to->dtype) {
      if (from != to)
        std::memcpy(to->data, from->data, (size_t)from->nbytes);
      return ok();
    }
    uint16_t (*narrow)(float) = to->dtype == LOOMRT_FLOAT16    ? floatToHalf
                                : to->dtype == LOOMRT_BFLOAT16 ? floatToBf16
                                                               : nullptr;
    if (from->dtype != LOOMRT_FLOAT32 || !narrow)
      return fail(LOOMRT_ERR_INVALID,
                  format("round: %s to %s", loomrt_dtype_name(from->dtype),
                         loomrt_dtype_name(to->dtype)));
    const float *src = static_cast<const float *>(from->data);
    uint16_t *dst = static_cast<uint16_t *>(to->data);
    for (int64_t k = 0; k < n; ++k)
      dst[k] = narrow(src[k]);
    return ok();
  })
}

} // extern "C"
