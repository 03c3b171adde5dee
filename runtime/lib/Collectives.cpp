//===- Collectives.cpp - MPI collectives called by compiled programs
//-------===//
//
// The callbacks a compiled Loom program makes for the collectives upstream
// MLIR does not lower (all-gather, all-to-all, reduce-scatter, all-reduce
// over a set of grid axes, and world send/recv; sends are buffered and
// complete in the background). One communicator per axis
// list is created on first use and cached. Its members are the ranks that
// share this rank's coordinates on the other axes, ordered by the row-major
// linearisation of their coordinates on the listed axes in the listed order:
// exactly MPI_Comm_split(world, color = other coords, key = listed coords),
// but built with MPI_Comm_create_group so only the group's members take part
// (a pipeline stage may run a collective while other stages wait in recv).
//
// float16/bfloat16 reductions use user-defined MPI ops (accumulating in
// float32); bool reductions map sum/max to logical or, min/prod to logical
// and. Any failure prints "loom-run: rank R: <what failed>" and aborts the
// whole job: a compiled program has no way to handle an error.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <mpi.h>

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <vector>

using namespace loom::runtime;

namespace {

std::mutex commMutex;
std::map<std::pair<int64_t, int64_t>, MPI_Comm> comms;

/// A send in flight: its own copy of the bytes, kept until delivered.
struct PendingSend {
  std::vector<char> bytes;
  MPI_Request request = MPI_REQUEST_NULL;
  int64_t dest = 0, tag = 0;
};
std::mutex sendMutex;
std::vector<std::unique_ptr<PendingSend>> pendingSends;

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char *fmt,
                                                            ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "loom-run: rank %d: %s\n", loomrt_world_rank(), msg);
  fflush(stderr);
  if (mpiRunning())
    MPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}

std::string mpiError(int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
    return format("MPI error %d", rc);
  return std::string(s, len);
}

void check(int rc, const char *what, int64_t naxes, int64_t axes) {
  if (rc != MPI_SUCCESS)
    die("%s over %lld grid axes (packed 0x%llx) failed: %s", what,
        (long long)naxes, (unsigned long long)axes, mpiError(rc).c_str());
}

/// The world ranks of this rank's group over the packed axis list, in
/// group order (row-major over the listed axes' coordinates).
std::vector<int> groupMembers(const char *what, int64_t naxes, int64_t axes) {
  if (!mpiRunning())
    die("%s called before MPI was initialised", what);
  const std::vector<int64_t> &grid = gridShape();
  int64_t gridSize = numel(grid);
  if (gridSize != loomrt_world_size())
    die("%s: the grid (%zu axes, %lld devices) does not match the %d ranks; "
        "was the grid set?",
        what, grid.size(), (long long)gridSize, loomrt_world_size());
  if (naxes < 0 || naxes > 8)
    die("%s: invalid axis count %lld", what, (long long)naxes);
  std::vector<int64_t> list;
  for (int64_t i = 0; i < naxes; ++i) {
    int64_t a = (axes >> (8 * i)) & 0xff;
    if (a >= (int64_t)grid.size())
      die("%s: grid axis %lld out of range (the grid has %zu axes)", what,
          (long long)a, grid.size());
    for (int64_t b : list)
      if (b == a)
        die("%s: grid axis %lld listed twice", what, (long long)a);
    list.push_back(a);
  }
  std::vector<int64_t> coords(grid.size());
  loomrt_grid_coords(loomrt_world_rank(), coords.data());
  int64_t groupSize = 1;
  for (int64_t a : list)
    groupSize *= grid[a];
  std::vector<int> members(groupSize);
  for (int64_t j = 0; j < groupSize; ++j) {
    std::vector<int64_t> c = coords;
    int64_t rest = j;
    for (int64_t i = naxes - 1; i >= 0; --i) {
      c[list[i]] = rest % grid[list[i]];
      rest /= grid[list[i]];
    }
    int64_t r = 0;
    for (size_t d = 0; d < grid.size(); ++d)
      r = r * grid[d] + c[d];
    members[j] = (int)r;
  }
  return members;
}

/// The communicator of this rank's group over the packed axis list.
MPI_Comm groupComm(const char *what, int64_t naxes, int64_t axes) {
  std::lock_guard<std::mutex> lock(commMutex);
  auto key = std::make_pair(naxes, naxes ? axes : 0);
  auto it = comms.find(key);
  if (it != comms.end())
    return it->second;
  std::vector<int> members = groupMembers(what, naxes, axes);
  int64_t groupSize = (int64_t)members.size();
  MPI_Group world, group;
  MPI_Comm comm;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group", naxes, axes);
  check(MPI_Group_incl(world, (int)groupSize, members.data(), &group),
        "MPI_Group_incl", naxes, axes);
  int tag =
      (int)(((uint64_t)(naxes ? axes : 0) * 31u + (uint64_t)naxes) & 0x7fff);
  check(MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm),
        "creating the communicator", naxes, axes);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  comms[key] = comm;
  return comm;
}

/// A datatype covering `bytes` bytes with a count that fits an int.
struct Bytes {
  MPI_Datatype type = MPI_BYTE;
  int count = 0;
  bool owned = false;
  ~Bytes() {
    if (owned)
      MPI_Type_free(&type);
  }
};

bool makeBytes(int64_t bytes, Bytes &b) {
  if (bytes < 0)
    return false;
  if (bytes <= INT_MAX) {
    b.type = MPI_BYTE;
    b.count = (int)bytes;
    return true;
  }
  const int64_t block = 1 << 20;
  int64_t q = bytes / block, r = bytes % block;
  if (q > INT_MAX)
    return false;
  MPI_Datatype mib, whole;
  MPI_Type_contiguous((int)block, MPI_BYTE, &mib);
  MPI_Type_contiguous((int)q, mib, &whole);
  int lens[2] = {1, (int)r};
  MPI_Aint disps[2] = {0, (MPI_Aint)(q * block)};
  MPI_Datatype types[2] = {whole, MPI_BYTE};
  MPI_Type_create_struct(2, lens, disps, types, &b.type);
  MPI_Type_commit(&b.type);
  MPI_Type_free(&whole);
  MPI_Type_free(&mib);
  b.count = 1;
  b.owned = true;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// float16 / bfloat16 conversions, and reductions
//===----------------------------------------------------------------------===//

namespace loom::runtime {

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { // subnormal
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      man &= 0x3ff;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) // inf or nan
    return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
  if (absx >= 0x477ff000) // rounds to >= 65520: overflow
    return (uint16_t)(sign | 0x7c00);
  if (absx < 0x38800000) { // subnormal half (or zero)
    if (absx < 0x33000000)
      return (uint16_t)sign;
    uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e; // value = m * 2^(e-150) = v * 2^-24
    uint32_t v = m >> shift, rem = m & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1)))
      ++v;
    return (uint16_t)(sign | v);
  }
  uint32_t v = ((absx - 0x38000000) >> 13);
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (v & 1)))
    ++v;
  return (uint16_t)(sign | v);
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

} // namespace loom::runtime

namespace {

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float), int Op>
void halfOp(void *in, void *inout, int *len, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i) {
    float x = ToF(a[i]), y = ToF(b[i]), r;
    switch (Op) {
    case LOOMRT_SUM:
      r = x + y;
      break;
    case LOOMRT_MAX:
      r = x > y ? x : y;
      break;
    case LOOMRT_MIN:
      r = x < y ? x : y;
      break;
    default:
      r = x * y;
    }
    b[i] = FromF(r);
  }
}

MPI_Op halfOps[2][4];
std::once_flag halfOnce;

void makeHalfOps() {
  MPI_User_function *fns[2][4] = {
      {halfOp<halfToFloat, floatToHalf, 0>, halfOp<halfToFloat, floatToHalf, 1>,
       halfOp<halfToFloat, floatToHalf, 2>,
       halfOp<halfToFloat, floatToHalf, 3>},
      {halfOp<bf16ToFloat, floatToBf16, 0>, halfOp<bf16ToFloat, floatToBf16, 1>,
       halfOp<bf16ToFloat, floatToBf16, 2>,
       halfOp<bf16ToFloat, floatToBf16, 3>}};
  for (int t = 0; t < 2; ++t)
    for (int o = 0; o < 4; ++o)
      MPI_Op_create(fns[t][o], 1, &halfOps[t][o]);
}

/// MPI datatype and op for a (dtype, op) reduction.
void reduction(const char *what, int32_t dtype, int32_t op, MPI_Datatype &dt,
               MPI_Op &mop) {
  if (op < 0 || op > 3)
    die("%s: unknown reduction op %d", what, op);
  static const MPI_Op ops[4] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
  mop = ops[op];
  switch (dtype) {
  case LOOMRT_FLOAT32:
    dt = MPI_FLOAT;
    return;
  case LOOMRT_FLOAT64:
    dt = MPI_DOUBLE;
    return;
  case LOOMRT_INT8:
    dt = MPI_INT8_T;
    return;
  case LOOMRT_INT16:
    dt = MPI_INT16_T;
    return;
  case LOOMRT_INT32:
    dt = MPI_INT32_T;
    return;
  case LOOMRT_INT64:
    dt = MPI_INT64_T;
    return;
  case LOOMRT_UINT8:
    dt = MPI_UINT8_T;
    return;
  case LOOMRT_UINT16:
    dt = MPI_UINT16_T;
    return;
  case LOOMRT_UINT32:
    dt = MPI_UINT32_T;
    return;
  case LOOMRT_UINT64:
    dt = MPI_UINT64_T;
    return;
  case LOOMRT_BOOL:
    dt = MPI_UINT8_T;
    mop = (op == LOOMRT_SUM || op == LOOMRT_MAX) ? MPI_LOR : MPI_LAND;
    return;
  case LOOMRT_FLOAT16:
  case LOOMRT_BFLOAT16:
    std::call_once(halfOnce, makeHalfOps);
    dt = MPI_UINT16_T;
    mop = halfOps[dtype == LOOMRT_BFLOAT16][op];
    return;
  default:
    die("%s: unknown dtype code %d", what, dtype);
  }
}

int intCount(const char *what, int64_t count) {
  if (count < 0 || count > INT_MAX)
    die("%s: element count %lld is out of range", what, (long long)count);
  return (int)count;
}

} // namespace

namespace loom::runtime {

loomrt_status bytesType(int64_t bytes, MPI_Datatype *type, bool *owned) {
  if (bytes < 0 || bytes / (1 << 20) > INT_MAX)
    return fail(LOOMRT_ERR_INVALID,
                format("message of %lld bytes is too large", (long long)bytes));
  if (bytes <= INT_MAX) {
    MPI_Type_contiguous((int)bytes, MPI_BYTE, type);
    MPI_Type_commit(type);
    *owned = true;
    return ok();
  }
  Bytes b;
  makeBytes(bytes, b);
  *type = b.type;
  *owned = true;
  b.owned = false;
  return ok();
}

void freeCommunicators() {
  std::lock_guard<std::mutex> lock(commMutex);
  for (auto &kv : comms)
    MPI_Comm_free(&kv.second);
  comms.clear();
}

} // namespace loom::runtime

extern "C" {

void loomrt_all_gather(const void *in, void *out, int64_t bytes_per_rank,
                       int64_t naxes, int64_t axes) {
  MPI_Comm comm = groupComm("all_gather", naxes, axes);
  Bytes b;
  if (!makeBytes(bytes_per_rank, b))
    die("all_gather: invalid size of %lld bytes", (long long)bytes_per_rank);
  check(MPI_Allgather(in, b.count, b.type, out, b.count, b.type, comm),
        "MPI_Allgather", naxes, axes);
}

void loomrt_all_to_all(const void *in, void *out, int64_t bytes_per_peer,
                       int64_t naxes, int64_t axes) {
  MPI_Comm comm = groupComm("all_to_all", naxes, axes);
  Bytes b;
  if (!makeBytes(bytes_per_peer, b))
    die("all_to_all: invalid size of %lld bytes", (long long)bytes_per_peer);
  check(MPI_Alltoall(in, b.count, b.type, out, b.count, b.type, comm),
        "MPI_Alltoall", naxes, axes);
}

void loomrt_reduce_scatter(const void *in, void *out, int64_t count_per_rank,
                           int32_t dtype, int32_t op, int64_t naxes,
                           int64_t axes) {
  MPI_Comm comm = groupComm("reduce_scatter", naxes, axes);
  MPI_Datatype dt;
  MPI_Op mop;
  reduction("reduce_scatter", dtype, op, dt, mop);
  int n = intCount("reduce_scatter", count_per_rank);
  check(MPI_Reduce_scatter_block(in == out ? MPI_IN_PLACE : in, out, n, dt, mop,
                                 comm),
        "MPI_Reduce_scatter_block", naxes, axes);
}

void loomrt_all_reduce(void *inout, int64_t count, int32_t dtype, int32_t op,
                       int64_t naxes, int64_t axes) {
  MPI_Comm comm = groupComm("all_reduce", naxes, axes);
  MPI_Datatype dt;
  MPI_Op mop;
  reduction("all_reduce", dtype, op, dt, mop);
  int n = intCount("all_reduce", count);
  check(MPI_Allreduce(MPI_IN_PLACE, inout, n, dt, mop, comm), "MPI_Allreduce",
        naxes, axes);
}

static int checkedTag(const char *what, int64_t tag) {
  int *ub = nullptr, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  int64_t max = flag && ub ? *ub : 32767;
  if (tag < 0 || tag > max)
    die("%s: tag %lld is outside [0, %lld]", what, (long long)tag,
        (long long)max);
  return (int)tag;
}

static int checkedPeer(const char *what, int64_t peer) {
  if (peer < 0 || peer >= loomrt_world_size())
    die("%s: peer rank %lld is outside [0, %d)", what, (long long)peer,
        loomrt_world_size());
  return (int)peer;
}

void loomrt_send(const void *buf, int64_t bytes, int64_t dest_world_rank,
                 int64_t tag) {
  if (!mpiRunning())
    die("send called before MPI was initialised");
  Bytes b;
  if (!makeBytes(bytes, b))
    die("send: invalid size of %lld bytes", (long long)bytes);
  // The caller may free or overwrite `buf` as soon as this returns.
  auto send = std::make_unique<PendingSend>();
  send->bytes = std::vector<char>(static_cast<const char *>(buf),
                                  static_cast<const char *>(buf) + bytes);
  send->dest = dest_world_rank;
  send->tag = tag;
  int rc = MPI_Isend(send->bytes.data(), b.count, b.type,
                     checkedPeer("send", dest_world_rank),
                     checkedTag("send", tag), MPI_COMM_WORLD, &send->request);
  if (rc != MPI_SUCCESS)
    die("MPI_Isend of %lld bytes to rank %lld (tag %lld) failed: %s",
        (long long)bytes, (long long)dest_world_rank, (long long)tag,
        mpiError(rc).c_str());
  std::lock_guard<std::mutex> lock(sendMutex);
  pendingSends.push_back(std::move(send));
}

void loomrt_complete_sends(void) {
  std::lock_guard<std::mutex> lock(sendMutex);
  for (const std::unique_ptr<PendingSend> &send : pendingSends) {
    int rc = MPI_Wait(&send->request, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      die("sending %zu bytes to rank %lld (tag %lld) failed: %s",
          send->bytes.size(), (long long)send->dest, (long long)send->tag,
          mpiError(rc).c_str());
  }
  pendingSends.clear();
}

/* The world rank of member `index` of this rank's group. */
static int64_t memberRank(const char *what, int64_t index, int64_t naxes,
                          int64_t axes) {
  std::vector<int> members = groupMembers(what, naxes, axes);
  if (index < 0 || index >= (int64_t)members.size())
    die("%s: group index %lld is outside the group of %zu ranks", what,
        (long long)index, members.size());
  return members[index];
}

void loomrt_send_in_group(const void *buf, int64_t bytes, int64_t dest_index,
                          int64_t tag, int64_t naxes, int64_t axes) {
  loomrt_send(buf, bytes, memberRank("send", dest_index, naxes, axes), tag);
}

void loomrt_recv_in_group(void *buf, int64_t bytes, int64_t src_index,
                          int64_t tag, int64_t naxes, int64_t axes) {
  loomrt_recv(buf, bytes, memberRank("recv", src_index, naxes, axes), tag);
}

void loomrt_recv(void *buf, int64_t bytes, int64_t src_world_rank,
                 int64_t tag) {
  if (!mpiRunning())
    die("recv called before MPI was initialised");
  Bytes b;
  if (!makeBytes(bytes, b))
    die("recv: invalid size of %lld bytes", (long long)bytes);
  MPI_Status st;
  int rc = MPI_Recv(buf, b.count, b.type, checkedPeer("recv", src_world_rank),
                    checkedTag("recv", tag), MPI_COMM_WORLD, &st);
  if (rc != MPI_SUCCESS)
    die("MPI_Recv of %lld bytes from rank %lld (tag %lld) failed: %s",
        (long long)bytes, (long long)src_world_rank, (long long)tag,
        mpiError(rc).c_str());
  int got = 0;
  MPI_Get_count(&st, b.type, &got);
  if (got != b.count)
    die("MPI_Recv from rank %lld (tag %lld): received a message of a "
        "different size than the %lld bytes expected",
        (long long)src_world_rank, (long long)tag, (long long)bytes);
}

} // extern "C"
