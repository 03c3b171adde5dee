//===- ZeroShards.cpp - ZeRO-3's parameter shards in the IR ---------------===//

#include "loom/Memory/ZeroShards.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

/// A marked `shard.sharding` of `layout` on `grid`.
Value sharding(OpBuilder &b, Location loc, FlatSymbolRefAttr grid,
               const ::loom::SplitDims &layout) {
  MLIRContext *ctx = b.getContext();
  SmallVector<shard::GridAxesAttr> axes;
  for (const ::loom::GridAxes &dim : ::loom::trimmedDims(layout))
    axes.push_back(shard::GridAxesAttr::get(ctx, dim));
  if (axes.empty()) // replicated is spelled [[]]
    axes.push_back(shard::GridAxesAttr::get(ctx, {}));
  auto op = shard::ShardingOp::create(b, loc, grid, axes);
  op->setAttr(kZeroShardMark, b.getUnitAttr());
  return op.getResult();
}

/// A marked `shard.shard` of `value` to `sharding`.
Value annotate(OpBuilder &b, Location loc, Value value, Value sharding,
               bool forUsers) {
  auto op = shard::ShardOp::create(b, loc, value, sharding, forUsers);
  op->setAttr(kZeroShardMark, b.getUnitAttr());
  return op.getResult();
}

/// Why `w` cannot be stored split over its replicas, or "" with `layout`
/// set to the split it is stored in.
std::string zeroLayout(WeightOp w, const WeightFacts &facts, shard::GridOp grid,
                       ::loom::SplitDims &layout) {
  if (!facts.storedLayout || !facts.uniformLayout)
    return "its readers ask for different layouts";
  for (Operation *user : w->getUsers()) {
    auto s = dyn_cast<shard::ShardOp>(user);
    if (isa<FetchOp>(user))
      return "it is streamed";
    if (s && !s.getAnnotateForUsers())
      return "the plan pins its own layout";
  }
  ArrayRef<int64_t> gridShape = grid.getShape();
  auto axesSize = [&](ArrayRef<int16_t> axes) {
    int64_t n = 1;
    for (int16_t a : axes)
      n *= gridShape[a];
    return n;
  };
  ArrayRef<int64_t> shape = w.getType().getShape();
  layout = *facts.storedLayout;
  layout.resize(shape.size());
  int64_t replicas = axesSize(facts.replicaAxes);
  for (const ::loom::GridAxes &dim : layout)
    for (int16_t a : facts.replicaAxes)
      if (llvm::is_contained(dim, a))
        return "its plan already splits it over a replica axis";
  // The leading dimension first: the runtime gathers contiguous blocks there
  // without rearranging them (CollectivesToRuntime).
  for (auto [d, dim] : llvm::enumerate(layout)) {
    int64_t local = shape[d] / axesSize(dim);
    if (local % replicas == 0) {
      dim.append(facts.replicaAxes.begin(), facts.replicaAxes.end());
      return "";
    }
  }
  return llvm::formatv("no dimension of its shard divides into {0} parts", replicas)
      .str();
}

} // namespace

ZeroShardsWritten mlir::loom::writeZeroShards(
    func::FuncOp func, ArrayRef<Operation *> weights,
    function_ref<const WeightFacts *(Operation *)> factsOf) {
  ZeroShardsWritten written;
  auto module = func->getParentOfType<ModuleOp>();
  auto grids = module.getOps<shard::GridOp>();
  if (grids.empty())
    return written;
  // Planned programs have one grid (the search's, or a hand-written plan's).
  shard::GridOp grid = *grids.begin();
  auto gridRef = FlatSymbolRefAttr::get(grid.getSymNameAttr());
  OpBuilder b(func.getContext());
  for (Operation *op : weights) {
    auto w = dyn_cast<WeightOp>(op);
    const WeightFacts *facts = w ? factsOf(op) : nullptr;
    if (!facts || facts->replicas <= 1 || w->getParentOp() != func)
      continue;
    ::loom::SplitDims layout;
    if (std::string why = zeroLayout(w, *facts, grid, layout); !why.empty()) {
      written.kept.push_back((w.getName() + ": " + why).str());
      continue;
    }
    SmallVector<OpOperand *> reads;
    for (OpOperand &use : w->getUses())
      reads.push_back(&use);
    b.setInsertionPointAfter(w);
    Value sharded = annotate(b, w.getLoc(), w.getResult(),
                             sharding(b, w.getLoc(), gridRef, layout),
                             /*forUsers=*/false);
    // Each op reading the weight gets its own gather, just before it, as
    // ZeRO-3 gathers a parameter for each use and frees it after: a marked
    // copy of the plan's annotation for users (which stays, unread, so that
    // removeZeroShards can restore it), or a new one for a direct reader.
    for (OpOperand *use : reads) {
      Operation *user = use->getOwner();
      auto planned = dyn_cast<shard::ShardOp>(user);
      if (!planned) {
        b.setInsertionPoint(user);
        use->set(annotate(b, user->getLoc(), sharded,
                          sharding(b, user->getLoc(), gridRef, *facts->storedLayout),
                          /*forUsers=*/true));
        continue;
      }
      use->set(sharded);
      // A chain of the plan's annotations is gathered where it starts.
      if (llvm::any_of(planned->getUsers(), llvm::IsaPred<shard::ShardOp>))
        continue;
      for (OpOperand &read : llvm::make_early_inc_range(planned->getUses())) {
        b.setInsertionPoint(read.getOwner());
        read.set(annotate(b, read.getOwner()->getLoc(), sharded,
                          planned.getSharding(), /*forUsers=*/true));
      }
    }
    ++written.weights;
  }
  return written;
}
