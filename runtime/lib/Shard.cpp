//===- Shard.cpp - shard slices of global tensors
//--------------------------===//
//
// Computes which slice of a global tensor a rank holds under the grid (the
// manifest's `split` rule), and moves slices: from a file (pread of only the
// slice's contiguous runs, so no rank ever reads the whole tensor), from an
// in-memory global tensor, and back to one rank (gather + reassembly of a
// split output, over the world or over the ranks that hold it).
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <mpi.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom::runtime;

namespace loom::runtime {
loomrt_status bytesType(int64_t bytes, MPI_Datatype *type, bool *owned);
} // namespace loom::runtime

namespace {

struct Slice {
  std::vector<int64_t> offsets, local;
};

loomrt_status computeSlice(int64_t rank, const int64_t *gshape,
                           const int64_t *naxes, const int64_t *axes,
                           int64_t worldRank, Slice &s) {
  const std::vector<int64_t> &grid = gridShape();
  std::vector<int64_t> coords(grid.size());
  if (loomrt_status st = loomrt_grid_coords(worldRank, coords.data()))
    return st;
  s.offsets.assign(rank, 0);
  s.local.assign(rank, 0);
  std::vector<bool> used(grid.size(), false);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = naxes ? naxes[d] : 0;
    if (n < 0 || n > 8)
      return fail(LOOMRT_ERR_INVALID,
                  format("dimension %lld: invalid axis count %lld",
                         (long long)d, (long long)n));
    int64_t idx = 0, parts = 1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t a = (axes[d] >> (8 * i)) & 0xff;
      if (a >= (int64_t)grid.size())
        return fail(LOOMRT_ERR_INVALID,
                    format("dimension %lld is split over grid axis %lld but "
                           "the grid has %zu axes",
                           (long long)d, (long long)a, grid.size()));
      if (used[a])
        return fail(
            LOOMRT_ERR_INVALID,
            format("grid axis %lld is used twice in one split", (long long)a));
      used[a] = true;
      idx = idx * grid[a] + coords[a];
      parts *= grid[a];
    }
    if (gshape[d] < 0 || gshape[d] % parts != 0)
      return fail(LOOMRT_ERR_INVALID,
                  format("dimension %lld of size %lld is not divisible into "
                         "%lld shards",
                         (long long)d, (long long)gshape[d], (long long)parts));
    s.local[d] = gshape[d] / parts;
    s.offsets[d] = idx * s.local[d];
  }
  return ok();
}

/// Calls fn(globalByteOffset, localByteOffset, bytes) for every contiguous
/// run of the slice, in local order.
template <typename Fn>
loomrt_status forEachRun(int64_t rank, const int64_t *gshape, const Slice &s,
                         int64_t esize, Fn fn) {
  std::vector<int64_t> g(gshape, gshape + rank);
  if (numel(g) == 0 || numel(s.local) == 0)
    return ok();
  // Innermost dims that are whole form one run with the first partial dim.
  int64_t k = rank - 1;
  while (k >= 0 && s.local[k] == g[k])
    --k;
  if (k < 0)
    return fn(0, 0, numel(g) * esize);
  std::vector<int64_t> stride(rank, esize);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * g[d + 1];
  int64_t runBytes = s.local[k] * stride[k];
  std::vector<int64_t> idx(k, 0);
  int64_t local = 0;
  for (;;) {
    int64_t off = s.offsets[k] * stride[k];
    for (int64_t d = 0; d < k; ++d)
      off += (s.offsets[d] + idx[d]) * stride[d];
    if (loomrt_status st = fn(off, local, runBytes))
      return st;
    local += runBytes;
    int64_t d = k - 1;
    while (d >= 0 && ++idx[d] == s.local[d])
      idx[d--] = 0;
    if (d < 0)
      break;
  }
  return ok();
}

loomrt_status checkDst(const Slice &s, int64_t esize, int64_t dstBytes) {
  int64_t need = numel(s.local) * esize;
  if (need != dstBytes)
    return fail(LOOMRT_ERR_INVALID,
                format("shard %s needs %lld bytes but the buffer has %lld",
                       shapeString(s.local.data(), s.local.size()).c_str(),
                       (long long)need, (long long)dstBytes));
  return ok();
}

} // namespace

loomrt_status loom::runtime::gatherShards(
    MPI_Comm comm, const std::vector<int> &members, int root, const void *local,
    int64_t local_bytes, int32_t dtype, int64_t rank,
    const int64_t *global_shape, const int64_t *split_naxes,
    const int64_t *split_axes, loomrt_tensor **out) {
  *out = nullptr;
  int me = 0;
  MPI_Comm_rank(comm, &me);
  int64_t esize = loomrt_dtype_size(dtype);
  Slice mine;
  MPI_Datatype type = MPI_BYTE;
  bool owned = false;
  loomrt_status st =
      !esize ? fail(LOOMRT_ERR_INVALID, format("unknown dtype code %d", dtype))
             : computeSlice(rank, global_shape, split_naxes, split_axes,
                            members[me], mine);
  if (!st)
    st = checkDst(mine, esize, local_bytes);
  if (!st)
    st = bytesType(local_bytes, &type, &owned);
  // Every member agrees before the gather, so a rank's local error never
  // leaves the others waiting in it.
  int failed = st != LOOMRT_OK, anyFailed = 0;
  if (MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, comm) !=
      MPI_SUCCESS)
    anyFailed = 1;
  if (anyFailed) {
    if (owned)
      MPI_Type_free(&type);
    return st ? st
              : fail(LOOMRT_ERR_MPI,
                     "another rank could not take part in the gather of a "
                     "split tensor");
  }
  std::vector<char> all;
  if (me == root)
    all.resize((size_t)(local_bytes * members.size()));
  int rc = MPI_Gather(local, 1, type, all.data(), 1, type, root, comm);
  if (owned)
    MPI_Type_free(&type);
  if (rc != MPI_SUCCESS)
    return fail(LOOMRT_ERR_MPI, "MPI_Gather of a split tensor failed");
  if (me != root)
    return ok();
  loomrt_tensor *t = nullptr;
  if ((st = makeTensor(
           dtype, std::vector<int64_t>(global_shape, global_shape + rank), &t)))
    return st;
  char *g = static_cast<char *>(t->data);
  for (size_t r = 0; r < members.size(); ++r) {
    Slice s;
    if ((st = computeSlice(rank, global_shape, split_naxes, split_axes,
                           members[r], s))) {
      loomrt_tensor_destroy(t);
      return st;
    }
    const char *src = all.data() + r * local_bytes;
    forEachRun(rank, global_shape, s, esize,
               [&](int64_t go, int64_t lo, int64_t n) -> loomrt_status {
                 memcpy(g + go, src + lo, (size_t)n);
                 return LOOMRT_OK;
               });
  }
  *out = t;
  return ok();
}

extern "C" {

loomrt_status loomrt_shard_slice(int64_t rank, const int64_t *global_shape,
                                 const int64_t *split_naxes,
                                 const int64_t *split_axes, int64_t world_rank,
                                 int64_t *offsets,
                                 int64_t *local_shape){LOOMRT_GUARD({
  Slice s;
  if (loomrt_status st = computeSlice(rank, global_shape, split_naxes,
                                      split_axes, world_rank, s))
    return st;
  for (int64_t d = 0; d < rank; ++d) {
    offsets[d] = s.offsets[d];
    local_shape[d] = s.local[d];
  }
  return ok();
})}

loomrt_status loomrt_shard_read_file(const char *what, const char *path,
                                     int64_t offset, int32_t dtype,
                                     int64_t rank, const int64_t *global_shape,
                                     const int64_t *split_naxes,
                                     const int64_t *split_axes,
                                     int64_t world_rank, void *dst,
                                     int64_t dst_bytes){LOOMRT_GUARD({
  std::string name = what ? what : "tensor";
  int64_t esize = loomrt_dtype_size(dtype);
  if (!esize)
    return fail(LOOMRT_ERR_INVALID,
                format("%s: unknown dtype code %d", name.c_str(), dtype));
  Slice s;
  if (loomrt_status st = computeSlice(rank, global_shape, split_naxes,
                                      split_axes, world_rank, s))
    return fail(st, name + ": " + loomrt_last_error());
  if (loomrt_status st = checkDst(s, esize, dst_bytes))
    return fail(st, name + ": " + loomrt_last_error());
  int64_t total =
      numel(std::vector<int64_t>(global_shape, global_shape + rank)) * esize;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(LOOMRT_ERR_IO,
                format("%s: cannot open file '%s': %s (expected %lld bytes "
                       "at offset %lld)",
                       name.c_str(), path, strerror(errno), (long long)total,
                       (long long)offset));
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    close(fd);
    return fail(LOOMRT_ERR_IO,
                format("%s: cannot read file '%s'", name.c_str(), path));
  }
  if (offset < 0 || (int64_t)st.st_size < offset + total) {
    close(fd);
    return fail(LOOMRT_ERR_IO,
                format("%s: file '%s' is too short: expected %lld bytes at "
                       "offset %lld (up to byte %lld), the file has %lld "
                       "bytes",
                       name.c_str(), path, (long long)total, (long long)offset,
                       (long long)(offset + total), (long long)st.st_size));
  }
  char *out = static_cast<char *>(dst);
  loomrt_status rs = forEachRun(
      rank, global_shape, s, esize,
      [&](int64_t g, int64_t l, int64_t n) -> loomrt_status {
        while (n > 0) {
          ssize_t r = pread(fd, out + l, (size_t)std::min<int64_t>(n, 1 << 30),
                            offset + g);
          if (r < 0 && errno == EINTR)
            continue;
          if (r <= 0)
            return fail(LOOMRT_ERR_IO,
                        format("%s: cannot read file '%s' at offset %lld: "
                               "%s",
                               name.c_str(), path, (long long)(offset + g),
                               r < 0 ? strerror(errno) : "unexpected end"));
          g += r;
          l += r;
          n -= r;
        }
        return LOOMRT_OK;
      });
  close(fd);
  return rs ? rs : ok();
})}

loomrt_status loomrt_shard_copy(const loomrt_tensor *global,
                                const int64_t *split_naxes,
                                const int64_t *split_axes, int64_t world_rank,
                                void *dst, int64_t dst_bytes){LOOMRT_GUARD({
  if (!global || (!dst && dst_bytes))
    return fail(LOOMRT_ERR_INVALID, "null argument");
  int64_t rank = (int64_t)global->shape.size();
  int64_t esize = loomrt_dtype_size(global->dtype);
  Slice s;
  if (loomrt_status st = computeSlice(rank, global->shape.data(), split_naxes,
                                      split_axes, world_rank, s))
    return st;
  if (loomrt_status st = checkDst(s, esize, dst_bytes))
    return st;
  const char *in = static_cast<const char *>(global->data);
  char *out = static_cast<char *>(dst);
  loomrt_status rs =
      forEachRun(rank, global->shape.data(), s, esize,
                 [&](int64_t g, int64_t l, int64_t n) -> loomrt_status {
                   memcpy(out + l, in + g, (size_t)n);
                   return LOOMRT_OK;
                 });
  return rs ? rs : ok();
})}

loomrt_status
    loomrt_gather_shards(const void *local, int64_t local_bytes, int32_t dtype,
                         int64_t rank, const int64_t *global_shape,
                         const int64_t *split_naxes, const int64_t *split_axes,
                         int root, loomrt_tensor **out) {
  LOOMRT_GUARD({
    if (!out)
      return fail(LOOMRT_ERR_INVALID, "null output handle");
    *out = nullptr;
    if (!mpiRunning())
      return fail(LOOMRT_ERR_STATE, "MPI is not initialised");
    std::vector<int> world(loomrt_world_size());
    for (size_t r = 0; r < world.size(); ++r)
      world[r] = (int)r;
    return gatherShards(MPI_COMM_WORLD, world, root, local, local_bytes, dtype,
                        rank, global_shape, split_naxes, split_axes, out);
  })
}

} // extern "C"
