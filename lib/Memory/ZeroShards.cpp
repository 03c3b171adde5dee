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
  shard::ShardingOp op = createSharding(b, loc, grid, layout);
  op->setAttr(kZeroShardMark, b.getUnitAttr());
  return op.getResult();
}

/// A `shard.shard` of `value` to `sharding`, marked with `mark`.
Value annotate(OpBuilder &b, Location loc, Value value, Value sharding,
               bool forUsers, Attribute mark) {
  auto op = shard::ShardOp::create(b, loc, value, sharding, forUsers);
  op->setAttr(kZeroShardMark, mark);
  return op.getResult();
}

/// The split axes of `annotation`'s sharding, trailing replicated
/// dimensions dropped.
::loom::SplitDims layoutOf(shard::ShardOp annotation) {
  ::loom::SplitDims dims;
  for (shard::GridAxesAttr axes : shard::Sharding(annotation.getSharding()).getSplitAxes())
    dims.emplace_back(axes.asArrayRef().begin(), axes.asArrayRef().end());
  return ::loom::trimmedDims(dims);
}

/// The plan's own annotation of the weight's stored layout (the search
/// writes one on each weight it splits), if it has one.
shard::ShardOp storedAnnotation(WeightOp w) {
  for (Operation *user : w->getUsers())
    if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers())
      return s;
  return nullptr;
}

} // namespace

std::string mlir::loom::zeroShardLayout(WeightOp w, const WeightFacts &facts,
                                        ::loom::SplitDims &layout) {
  auto grids = w->getParentOfType<ModuleOp>().getOps<shard::GridOp>();
  if (grids.empty() || facts.replicas <= 1)
    return "it has no replicas";
  // Planned programs have one grid (the estimator rejects more).
  shard::GridOp grid = *grids.begin();
  if (!facts.storedLayout)
    return "no op reads it in a layout of its own";
  if (!facts.uniformLayout)
    return "its readers ask for different layouts";
  int stored = 0;
  for (Operation *user : w->getUsers()) {
    auto s = dyn_cast<shard::ShardOp>(user);
    if (isa<FetchOp>(user))
      return "it is streamed";
    if (s && !s.getAnnotateForUsers() &&
        (++stored > 1 || layoutOf(s) != ::loom::trimmedDims(*facts.storedLayout)))
      return "the plan pins a layout its readers do not read";
  }
  ArrayRef<int64_t> shape = w.getType().getShape();
  layout = *facts.storedLayout;
  layout.resize(shape.size());
  const int64_t replicas = facts.replicas; // the size of facts.replicaAxes
  for (const ::loom::GridAxes &dim : layout)
    for (int16_t a : facts.replicaAxes)
      if (llvm::is_contained(dim, a))
        return "its plan already splits it over a replica axis";
  // The leading dimension first: the runtime gathers contiguous blocks there
  // without rearranging them (CollectivesToRuntime).
  for (auto [d, dim] : llvm::enumerate(layout)) {
    int64_t local = shape[d] / shard::collectiveProcessGroupSize(dim, grid);
    if (local % replicas == 0) {
      dim.append(facts.replicaAxes.begin(), facts.replicaAxes.end());
      return "";
    }
  }
  return llvm::formatv("no dimension of its shard divides into {0} parts", replicas)
      .str();
}

namespace {
/// Calls `write(w, facts, layout)` for each weight of `weights` in `func`
/// with more than one replica and a ZeRO layout (zeroShardLayout), counting
/// it; names the others in `kept`. Nothing without a grid.
ZeroShardsWritten
forEachZeroLayout(func::FuncOp func, ArrayRef<Operation *> weights,
                  function_ref<const WeightFacts *(Operation *)> factsOf,
                  function_ref<void(FlatSymbolRefAttr grid, WeightOp w,
                                    const WeightFacts &facts,
                                    const ::loom::SplitDims &layout)>
                      write) {
  ZeroShardsWritten written;
  auto grids = func->getParentOfType<ModuleOp>().getOps<shard::GridOp>();
  if (grids.empty())
    return written;
  auto grid = FlatSymbolRefAttr::get((*grids.begin()).getSymNameAttr());
  for (Operation *op : weights) {
    auto w = dyn_cast<WeightOp>(op);
    const WeightFacts *facts = w ? factsOf(op) : nullptr;
    if (!facts || facts->replicas <= 1 || w->getParentOp() != func)
      continue;
    ::loom::SplitDims layout;
    if (std::string why = zeroShardLayout(w, *facts, layout); !why.empty()) {
      written.kept.push_back((w.getName() + ": " + why).str());
      continue;
    }
    write(grid, w, *facts, layout);
    ++written.weights;
  }
  return written;
}
} // namespace

ZeroShardsWritten mlir::loom::writeZeroShards(
    func::FuncOp func, ArrayRef<Operation *> weights,
    function_ref<const WeightFacts *(Operation *)> factsOf) {
  OpBuilder b(func.getContext());
  return forEachZeroLayout(func, weights, factsOf, [&](FlatSymbolRefAttr gridRef, WeightOp w,
                                                       const WeightFacts &facts,
                                                       const ::loom::SplitDims &layout) {
    // The stored layout: the plan's own annotation of it, now split over
    // the replicas too (its mark keeps the plan's split axes for removal),
    // or a new annotation of the weight.
    Value sharded;
    SmallVector<OpOperand *> reads;
    if (shard::ShardOp stored = storedAnnotation(w)) {
      stored->setAttr(kZeroShardMark, splitAxesAttr(b, layoutOf(stored)));
      Operation *old = stored.getSharding().getDefiningOp();
      b.setInsertionPoint(stored);
      stored.getShardingMutable().assign(sharding(b, stored.getLoc(), gridRef, layout));
      if (old && old->use_empty())
        old->erase();
      sharded = stored.getResult();
    } else {
      b.setInsertionPointAfter(w);
      sharded = annotate(b, w.getLoc(), w.getResult(),
                         sharding(b, w.getLoc(), gridRef, layout),
                         /*forUsers=*/false, b.getUnitAttr());
    }
    for (OpOperand &use : sharded.getUses())
      reads.push_back(&use);
    for (OpOperand &use : w->getUses())
      if (use.getOwner() != sharded.getDefiningOp())
        reads.push_back(&use);
    // Each op reading the weight gets its own gather, just before it, as
    // ZeRO-3 gathers a parameter for each use and frees it after: an
    // annotation in the plan's layout for that reader (which removal turns
    // back into the plan's, one per reader), or in the stored layout for a
    // reader that read the weight directly. Each holds its reader's number,
    // so that no pass merges two readers' gathers.
    auto readerAnnotation = [&](OpOperand &read, Value layout) {
      b.setInsertionPoint(read.getOwner());
      read.set(annotate(b, read.getOwner()->getLoc(), sharded, layout,
                        /*forUsers=*/true, b.getI64IntegerAttr(0)));
    };
    for (OpOperand *use : reads) {
      auto planned = dyn_cast<shard::ShardOp>(use->getOwner());
      if (!planned) {
        b.setInsertionPoint(use->getOwner());
        readerAnnotation(*use, sharding(b, use->getOwner()->getLoc(), gridRef,
                                        *facts.storedLayout));
        continue;
      }
      // A chain of the plan's annotations is gathered where it starts; an
      // annotation nothing reads stays as it is.
      if (planned->use_empty() ||
          llvm::any_of(planned->getUsers(), llvm::IsaPred<shard::ShardOp>)) {
        use->set(sharded);
        continue;
      }
      for (OpOperand &read : llvm::make_early_inc_range(planned->getUses()))
        readerAnnotation(read, planned.getSharding());
      planned->erase();
    }
    // Readers numbered in program order (by where they sit in the body),
    // whatever order the uses came in.
    Block &body = func.getBody().front();
    SmallVector<Operation *> readers;
    for (Operation *user : sharded.getUsers())
      if (auto s = dyn_cast<shard::ShardOp>(user); s && s.getAnnotateForUsers())
        readers.push_back(s);
    llvm::stable_sort(readers, [&](Operation *x, Operation *y) {
      Operation *a = body.findAncestorOpInBlock(*x), *c = body.findAncestorOpInBlock(*y);
      return a != c && a->isBeforeInBlock(c);
    });
    for (auto [n, s] : llvm::enumerate(readers))
      s->setAttr(kZeroShardMark, b.getI64IntegerAttr(static_cast<int64_t>(n)));
  });
}

ZeroShardsWritten mlir::loom::writeZeroGradients(
    func::FuncOp func, ArrayRef<Operation *> weights,
    function_ref<const WeightFacts *(Operation *)> factsOf) {
  Builder b(func.getContext());
  return forEachZeroLayout(func, weights, factsOf, [&](FlatSymbolRefAttr, WeightOp w,
                                                       const WeightFacts &,
                                                       const ::loom::SplitDims &layout) {
    w->setAttr(kZeroGradientAttr, splitAxesAttr(b, layout));
  });
}
