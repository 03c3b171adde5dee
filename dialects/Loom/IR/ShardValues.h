//===- ShardValues.h - looking through shard annotations --------*- C++ -*-===//
//
// Planned IR wraps values in chains of `shard.shard` annotations, and placed
// IR reads streamed weights through `loom.fetch`; analyses (folding, the
// estimator, the search) reason about the value underneath. Passes that
// write annotations build their shardings here.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H
#define LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"

namespace mlir::loom {

/// Upstream `sharding-propagation` (a func.func pass), forward first.
/// Upstream's default backward-first traversal starts at the end, where the
/// only annotations are replicated ones (replicated norm scales, biases, a
/// tied LM head, the results), and carries "replicated" up through every op
/// the plan leaves open, undoing a data-, sequence- or tensor-parallel plan
/// right after its first op. Everything that reads a plan propagates this
/// way: loom-partition, loom-split-stages, the estimator, loom-autodiff.
inline std::unique_ptr<Pass> createForwardFirstShardingPropagation() {
  shard::ShardingPropagationOptions options;
  options.traversal = shard::TraversalOrder::ForwardBackward;
  return shard::createShardingPropagation(options);
}

/// A `shard.sharding` on `grid` splitting dimension d over the grid axes
/// `axes[d]`, unsplit trailing dimensions dropped. Fully replicated is
/// spelled `[[]]`, not `[]`: upstream compares shardings structurally and
/// has no resharding from the one spelling to the other.
inline shard::ShardingOp createSharding(OpBuilder &b, Location loc,
                                        FlatSymbolRefAttr grid,
                                        SmallVector<shard::GridAxesAttr> axes = {}) {
  while (!axes.empty() && axes.back().empty())
    axes.pop_back();
  if (axes.empty())
    axes.push_back(shard::GridAxesAttr::get(b.getContext(), {}));
  return shard::ShardingOp::create(b, loc, grid, axes);
}
inline shard::ShardingOp createSharding(OpBuilder &b, Location loc,
                                        FlatSymbolRefAttr grid,
                                        ArrayRef<SmallVector<int16_t, 2>> dims) {
  SmallVector<shard::GridAxesAttr> axes;
  for (const SmallVector<int16_t, 2> &dim : dims)
    axes.push_back(shard::GridAxesAttr::get(b.getContext(), dim));
  return createSharding(b, loc, grid, std::move(axes));
}

/// Marks the annotations (and their sharding ops) memory placement writes
/// for ZeRO-3: a weight stored split further over its data-parallel
/// replicas, gathered for each of its readers (lib/Memory/ZeroShards.cpp).
/// They are placement, not the plan: analyses price the plan's layouts under
/// them. A reader's annotation holds its reader's number (so that no two
/// are merged); the others hold a unit attribute.
inline constexpr llvm::StringLiteral kZeroShardMark = "loom.zero_shard";

/// ZeRO-2's layout of a weight's gradient, on the weight (memory placement
/// writes it where the gradient is sharded and the weight is not): its split
/// axes per dimension, as an array of i16 arrays. --loom-autodiff returns
/// the gradient in it, as it returns a ZeRO-3 weight's in its stored shards.
inline constexpr llvm::StringLiteral kZeroGradientAttr = "loom.zero_gradient";

/// The grid attribute a plan names its pipeline axis with (loom-plan).
inline constexpr llvm::StringLiteral kPipelineAxisAttr = "loom.pipeline_axis";

/// The devices on the pipeline axis of `module`'s first grid naming one
/// within its rank; none without.
inline std::optional<int64_t> pipelineAxisDevices(ModuleOp module) {
  for (auto grid : module.getOps<shard::GridOp>())
    if (auto axis = grid->getAttrOfType<IntegerAttr>(kPipelineAxisAttr);
        axis && axis.getInt() >= 0 && axis.getInt() < grid.getRank())
      return grid.getShape()[axis.getInt()];
  return std::nullopt;
}

/// Split axes per dimension as ZeRO's marks hold them (the plan's axes in a
/// stored annotation's mark, a gradient's in kZeroGradientAttr): an array
/// of i16 arrays, and back.
inline ArrayAttr splitAxesAttr(Builder &b, ArrayRef<SmallVector<int16_t, 2>> dims) {
  SmallVector<Attribute> attrs;
  for (const SmallVector<int16_t, 2> &dim : dims)
    attrs.push_back(b.getDenseI16ArrayAttr(dim));
  return b.getArrayAttr(attrs);
}
inline SmallVector<shard::GridAxesAttr> splitAxesOf(ArrayAttr attr) {
  SmallVector<shard::GridAxesAttr> axes;
  for (Attribute dim : attr)
    axes.push_back(cast<shard::GridAxesAttr>(dim));
  return axes;
}

inline bool isZeroShard(Operation *op) {
  return op && op->hasAttr(kZeroShardMark);
}

/// Removes the ZeRO-3 annotations (and ZeRO-2's gradient layouts) under
/// `root`: its weights are read as the
/// plan left them. A reader's annotation in one of the plan's layouts (its
/// sharding op is not marked) becomes the plan's annotation of the weight
/// for that reader; one for a reader that read the weight directly goes;
/// the plan's own annotation of a stored layout, split further, gets the
/// plan's split axes back from its mark.
inline void removeZeroShards(Operation *root) {
  SmallVector<Operation *> marked;
  root->walk([&](Operation *op) {
    if (isZeroShard(op))
      marked.push_back(op);
    op->removeAttr(kZeroGradientAttr);
  });
  // Readers first: an annotation's readers come after it.
  for (Operation *op : llvm::reverse(marked)) {
    auto s = dyn_cast<shard::ShardOp>(op);
    if (s && s.getAnnotateForUsers() && !isZeroShard(s.getSharding().getDefiningOp())) {
      s->removeAttr(kZeroShardMark); // the plan's, read from the weight below
      continue;
    }
    if (auto planned = op->getAttrOfType<ArrayAttr>(kZeroShardMark); s && planned) {
      OpBuilder b(op);
      auto grid = cast<shard::ShardingOp>(s.getSharding().getDefiningOp()).getGridAttr();
      s.getShardingMutable().assign(createSharding(b, op->getLoc(), grid, splitAxesOf(planned)));
      s->removeAttr(kZeroShardMark);
      continue;
    }
    if (s)
      s.getResult().replaceAllUsesWith(s.getSrc());
    op->erase();
  }
}

/// The annotation storing weight `w` in ZeRO-3's shards over its replicas
/// (memory placement's, marked loom.zero_shard), if it has one.
inline shard::ShardOp zeroStoredShard(WeightOp w) {
  for (Operation *user : w->getUsers())
    if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers() && isZeroShard(s))
      return s;
  return nullptr;
}

/// What a fetch of streamed weight `w` copies to the device: its ZeRO-3
/// shard where placement stores it so (each device uploads its shard, and
/// the readers' annotations gather it), else the weight itself.
inline Value fetchedValue(WeightOp w) {
  if (shard::ShardOp stored = zeroStoredShard(w))
    return stored.getResult();
  return w.getResult();
}

/// The fetch whose device copy `v` is: a loom.fetch result, or its
/// annotation in the layout it is stored in (createFetch); null otherwise.
inline FetchOp fetchOf(Value v) {
  if (auto s = v.getDefiningOp<shard::ShardOp>(); s && !s.getAnnotateForUsers())
    v = s.getSrc();
  return v.getDefiningOp<FetchOp>();
}

/// A loom.fetch of `source` (fetchedValue), the copy as its readers read
/// it: a ZeRO-3 shard's copy is annotated in the shard's own layout, so
/// that the readers' gathers reshard an annotation (canonicalization
/// merges two gathers of one unannotated value, which would keep a whole
/// weight from its first reader to its last).
inline Value createFetch(OpBuilder &b, Location loc, Value source, int64_t chunk,
                         bool carried, IntegerAttr at) {
  Value copy =
      FetchOp::create(b, loc, source.getType(), source, chunk, carried, at).getResult();
  auto stored = source.getDefiningOp<shard::ShardOp>();
  if (!stored || !isZeroShard(stored))
    return copy;
  auto annotation = shard::ShardOp::create(b, loc, copy, stored.getSharding(),
                                           /*annotate_for_users=*/false);
  annotation->setAttr(kZeroShardMark, b.getUnitAttr());
  return annotation.getResult();
}

/// `w`'s layout in the plan, without ZeRO's split: the plan's own
/// annotation of the weight, else the one its readers ask for (the search
/// annotates a weight's readers; ZeRO-3 a reader of every stored weight);
/// null where the plan leaves it replicated.
inline Value plannedLayout(WeightOp w) {
  Value stored = w.getResult();
  for (Operation *user : w->getUsers())
    if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers()) {
      if (!isZeroShard(s))
        return s.getSharding();
      stored = s.getResult();
    }
  for (Operation *user : stored.getUsers())
    if (auto s = dyn_cast<shard::ShardOp>(user); s && s.getAnnotateForUsers())
      return s.getSharding();
  return {};
}

/// The value `v` annotates, through any chain of shard.shard ops and
/// loom.fetch copies.
inline Value lookThroughShards(Value v) {
  while (true) {
    if (auto s = v.getDefiningOp<shard::ShardOp>())
      v = s.getSrc();
    else if (auto f = v.getDefiningOp<FetchOp>())
      v = f.getSource();
    else
      return v;
  }
}

/// What a chain of `shard.all_gather` ops ending in `v` gathers (`v` itself
/// when no gather makes it).
inline Value rootOfGathers(Value v) {
  while (auto gather = v.getDefiningOp<shard::AllGatherOp>())
    v = gather.getInput();
  return v;
}

/// Calls `fn` on every op that reads `v`, looking through shard.shard ops
/// and loom.fetch copies (a loom.release reads nothing).
inline void forEachReader(Value v, llvm::function_ref<void(Operation *)> fn) {
  for (Operation *user : v.getUsers()) {
    if (auto s = dyn_cast<shard::ShardOp>(user))
      forEachReader(s.getResult(), fn);
    else if (auto f = dyn_cast<FetchOp>(user))
      forEachReader(f.getResult(), fn);
    else if (!isa<ReleaseOp>(user))
      fn(user);
  }
}

/// The one operand that reads `v` (looking through shard.shard ops and
/// loom.fetch copies), or null when no operand or several do.
inline OpOperand *soleReadingUse(Value v) {
  OpOperand *sole = nullptr;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    OpOperand *found = nullptr;
    if (auto s = dyn_cast<shard::ShardOp>(user)) {
      if (s.getResult().use_empty())
        continue;
      if (!(found = soleReadingUse(s.getResult())))
        return nullptr;
    } else if (auto f = dyn_cast<FetchOp>(user)) {
      if (f.getResult().use_empty())
        continue;
      if (!(found = soleReadingUse(f.getResult())))
        return nullptr;
    } else if (isa<ReleaseOp>(user)) {
      continue;
    } else {
      found = &use;
    }
    if (sole)
      return nullptr;
    sole = found;
  }
  return sole;
}

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H
