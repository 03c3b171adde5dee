//===- Internal.h - shared helpers of the Loom runtime ----------*- C++ -*-===//
//
// Private to libloomrt: the per-thread error string, the tensor struct behind
// the opaque handle, grid state and small helpers shared by the runtime's
// translation units. Nothing here is part of the C ABI.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_LIB_INTERNAL_H
#define LOOM_RUNTIME_LIB_INTERNAL_H

#include "loomrt.h"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

struct loomrt_tensor {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  int64_t nbytes = 0;
  void *data = nullptr;
  /// False where `data` lies in a region someone else maps (the artifact's
  /// NVMe tier): loomrt_tensor_destroy then leaves it.
  bool ownsData = true;
};

namespace loom::runtime {

/// Records `msg` as the calling thread's last error and returns `code`.
loomrt_status fail(loomrt_status code, const std::string &msg);
/// Clears the last error and returns LOOMRT_OK.
loomrt_status ok();

/// printf-style std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// Product of dims; -1 on overflow or a negative dim.
int64_t numel(const std::vector<int64_t> &shape);

/// Shape as "[2, 3]".
std::string shapeString(const int64_t *shape, int64_t rank);

/// The bytes a tensor of `bytes` takes in memory: a multiple of 64, at
/// least 64.
inline int64_t tensorAllocBytes(int64_t bytes) {
  return bytes <= 0 ? 64 : (bytes + 63) / 64 * 64;
}

/// Allocates a zero-filled tensor (64-byte aligned data); or, given
/// `storage` (tensorAllocBytes of zeros, 64-byte aligned, which the caller
/// owns), makes the tensor there.
loomrt_status makeTensor(int32_t dtype, const std::vector<int64_t> &shape,
                         loomrt_tensor **out, void *storage = nullptr);

/// Grid state (set by loomrt_set_grid).
const std::vector<int64_t> &gridShape();
bool mpiRunning();

/// Writes `bytes` to `path` atomically (temp file + rename).
loomrt_status writeFileAtomic(const std::string &path,
                              const std::vector<const void *> &parts,
                              const std::vector<size_t> &sizes);

/// Gathers a split tensor over `comm` onto its rank `root`: every member
/// passes its shard (`local_bytes` bytes), member i being world rank
/// members[i], whose grid coordinates say which slice it holds. On the root
/// a new global tensor is assembled into *out (elsewhere NULL). Collective
/// over `comm` (Shard.cpp).
loomrt_status gatherShards(MPI_Comm comm, const std::vector<int> &members,
                           int root, const void *local, int64_t local_bytes,
                           int32_t dtype, int64_t rank,
                           const int64_t *global_shape,
                           const int64_t *split_naxes,
                           const int64_t *split_axes, loomrt_tensor **out);

/// Frees cached communicators (Collectives.cpp).
void freeCommunicators();

/// IEEE float16 and bfloat16 bits to and from float32 (rounding to nearest
/// even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);

} // namespace loom::runtime

/// Runs `body` and turns any C++ exception into a status + message.
#define LOOMRT_GUARD(...)                                                      \
  try {                                                                        \
    __VA_ARGS__                                                                \
  } catch (const std::bad_alloc &) {                                           \
    return ::loom::runtime::fail(LOOMRT_ERR_NOMEM, "out of memory");           \
  } catch (const std::exception &e) {                                          \
    return ::loom::runtime::fail(LOOMRT_ERR_INTERNAL,                          \
                                 std::string("internal error: ") + e.what());  \
  } catch (...) {                                                              \
    return ::loom::runtime::fail(LOOMRT_ERR_INTERNAL, "internal error");       \
  }

#endif // LOOM_RUNTIME_LIB_INTERNAL_H
