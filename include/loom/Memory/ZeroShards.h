//===- ZeroShards.h - ZeRO-3's parameter shards in the IR --------*- C++ -*-===//
//
// Under ZeRO-3 each data-parallel replica keeps only its shard of a weight
// and gathers the whole (its plan's shard) before use. Placement prices
// that from the ZeRO stage; this writes it into the IR in upstream's terms,
// so `shard-partition` inserts the all-gathers and the runtime keeps each
// rank's shard only:
//
//   %z = shard.shard %w to <stored layout + replica axes>   {loom.zero_shard}
//   %u = shard.shard %z to <stored layout> annotate_for_users {loom.zero_shard}
//   <the op reading %u>
//
// with one %u just before each op that reads the weight, so each use has
// its own gather, as ZeRO-3 does; %u holds its reader's number. Where the
// plan annotated the stored layout itself, that annotation plays %z's part
// and its mark keeps the plan's split axes. removeZeroShards (ShardValues.h)
// gives back the plan, one annotation for users per reader.
// docs/memory-placement.md, "ZeRO-3 in the IR".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_ZEROSHARDS_H
#define LOOM_MEMORY_ZEROSHARDS_H

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Cost/Estimate.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace mlir::loom {

struct ZeroShardsWritten {
  int weights = 0; // stored split over their replicas
  /// Weights ZeRO-3 shards in the placement but the IR keeps whole, each
  /// as "name: why" (their gathers are still priced).
  std::vector<std::string> kept;
};

/// The layout ZeRO-3 stores weight `w` in (its plan's, with the replica
/// axes of `facts` joining the first dimension they divide), or why it
/// cannot: then the weight is kept whole, and placement prices it so.
std::string zeroShardLayout(WeightOp w, const WeightFacts &facts,
                            ::loom::SplitDims &layout);

/// Writes ZeRO-3's sharding of each weight in `weights` (loom.weight ops in
/// `func`) over its replica axes, as `factsOf` gives them (the estimator's
/// WeightFacts; weights with one replica are left alone). The replica axes
/// join the first dimension whose shard they divide evenly.
ZeroShardsWritten writeZeroShards(
    func::FuncOp func, llvm::ArrayRef<Operation *> weights,
    llvm::function_ref<const WeightFacts *(Operation *)> factsOf);

/// Writes ZeRO-2's layout of each weight's gradient in `weights` (the
/// layout ZeRO-3 would store the weight in) as `loom.zero_gradient` on the
/// weight, for --loom-autodiff to return the gradient in: partitioning then
/// reduce-scatters it over the replicas. `weights` are kept whole, and the
/// weights no such layout exists for are named in `kept`.
ZeroShardsWritten writeZeroGradients(
    func::FuncOp func, llvm::ArrayRef<Operation *> weights,
    llvm::function_ref<const WeightFacts *(Operation *)> factsOf);

} // namespace mlir::loom

#endif // LOOM_MEMORY_ZEROSHARDS_H
