//===- Reshard.h - collectives that move a tensor between shardings -*- C++ -*-===//
//
// The collectives needed to turn a tensor laid out as `from` (per-dimension
// grid axes, plus axes over which it holds partial sums) into `to`:
// partial axes become all-reduces, or reduce-scatters where `to` splits on
// them; axes moving between dimensions become all-to-alls (with the local
// pack/unpack copies they need); axes `to` no longer splits become
// all-gathers; axes only `to` splits are local slices.
// The estimator uses the same function for forward resharding and for the
// gradient of every edge (grads flow `to` -> `from` with partial axes).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_RESHARD_H
#define LOOM_COST_RESHARD_H

#include "loom/Cost/Cluster.h"
#include "loom/Cost/Collectives.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace loom {

using GridAxes = llvm::SmallVector<int16_t, 2>;

using SplitDims = llvm::SmallVector<GridAxes, 4>;

struct TensorLayout {
  llvm::SmallVector<GridAxes, 4> splitAxes; // per tensor dimension
  GridAxes partialAxes;                     // holds partial sums over these
};

struct CollectiveStep {
  CollectiveKind kind;
  GridAxes axes;
  double bytes; // per device, as collectiveCost() takes them
  /// Local bytes copied in device memory around the collective. The runtime
  /// sends and receives contiguous leading blocks (CollectivesToRuntime), so
  /// an all-to-all packs (transposes) a split moving to a dimension other
  /// than the leading one and unpacks one leaving such a dimension; a
  /// reduce-scatter packs its input and an all-gather unpacks its output
  /// when their dimension is not the leading one.
  double rearrangedBytes = 0;
};

/// Seconds `device` spends copying `bytes` in its memory (read and write at
/// the data-movement efficiency of its bandwidth).
double rearrangeSeconds(const DeviceSpec &device, double bytes);

/// `fullBytes` is the size of the unsharded tensor; `axisSize(a)` the size
/// of grid axis a.
llvm::SmallVector<CollectiveStep>
reshardSteps(double fullBytes, const TensorLayout &from, const TensorLayout &to,
             llvm::function_ref<int64_t(int16_t)> axisSize);

/// One step of a parameter gradient's synchronisation as it runs: with
/// `zero` (ZeRO stage 1 and up) an all-reduce becomes a reduce-scatter of
/// the gradients plus an all-gather of the updated parameters, two
/// collectives of the same bytes; anything else is the step itself. The
/// estimator and the strategy search both price gradient synchronisation
/// through this.
llvm::SmallVector<CollectiveStep, 2> gradientSyncSteps(const CollectiveStep &step,
                                                       bool zero);

/// A split reduction over `axes` (ascending, as loom-partition all-reduces
/// it) whose one reader wants `to` where the op gives `from`: the dimension
/// `to` appends exactly those axes to, when that is all it changes, else -1.
/// loom-partition turns such an all-reduce and the slice after it into one
/// reduce-scatter (Megatron's sequence parallelism after a row-parallel
/// matmul), which moves half the bytes.
int reductionScatterDim(const TensorLayout &from, const TensorLayout &to,
                        llvm::ArrayRef<int16_t> axes);

/// The collective completing a split reduction over `axes` of a local result
/// of `localBytes`: a reduce-scatter along `scatterDim` (packed first unless
/// it is the leading dimension, as the runtime does), or with -1 an
/// all-reduce.
CollectiveStep reductionStep(llvm::ArrayRef<int16_t> axes, double localBytes,
                             int scatterDim);

/// Split axes per dimension without trailing unsplit dimensions (which do
/// not change a sharding).
SplitDims trimmedDims(const SplitDims &dims);

/// Whether upstream `shard-partition` can reshard `from` into `to` in the one
/// step it knows (split axes only), counting a drop of several trailing axes
/// of one dimension (upstream drops one; loom-partition splits the rest into
/// steps).
bool upstreamReshardable(const TensorLayout &from, const TensorLayout &to);

/// Whether `from` -> `to` is exactly one upstream step: upstreamReshardable
/// and dropping at most one axis. Anything else is annotated as the chain of
/// reshardPath, one step per annotation.
bool upstreamOneStep(const TensorLayout &from, const TensorLayout &to);

/// Whether `to` is `from` with the last axis of one dimension moved to the
/// end of another, every other dimension unchanged: one all-to-all over that
/// axis. Upstream recognizes it only when the two dimensions' other axes are
/// equal; annotated as reshardPath's all-gather and slice, loom-partition
/// fuses the pair back into the all-to-all (docs/lowering.md).
bool isAxisMove(const TensorLayout &from, const TensorLayout &to);

/// The reshardings the strategy search offers: what the partitioned program
/// executes as the collectives reshardSteps prices (upstream's one step, or
/// an axis move).
inline bool searchReshardable(const TensorLayout &from, const TensorLayout &to) {
  return upstreamReshardable(from, to) || isAxisMove(from, to);
}

/// The split axes a value passes through from `from` to `to`, `to` last, each
/// one axis from the one before: the axes of each dimension past its common
/// prefix with `to` are dropped one at a time (an all-gather each), then
/// `to`'s are appended one at a time (local slices).
llvm::SmallVector<SplitDims> reshardPath(SplitDims from, SplitDims to);

} // namespace loom

#endif // LOOM_COST_RESHARD_H
