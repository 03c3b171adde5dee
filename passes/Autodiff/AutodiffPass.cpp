//===- AutodiffPass.cpp - the --loom-autodiff pass ------------------------===//
//
// Finds the entry function and runs differentiate() on it.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Autodiff.h"

#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMAUTODIFF
#include "passes/Autodiff/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
/// The layout sharding propagation gives each result of `func` (null where
/// it gives none), found on a copy of the module: a cotangent has its
/// result's layout, so the backward starts where the forward ended.
FailureOr<SmallVector<shard::ShardingOp>> resultLayouts(ModuleOp module, func::FuncOp func) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  auto copied = copy->lookupSymbol<func::FuncOp>(func.getSymName());
  PassManager pm(module.getContext());
  // Forward first, as loom-partition propagates (Partition.cpp says why).
  shard::ShardingPropagationOptions propagation;
  propagation.traversal = shard::TraversalOrder::ForwardBackward;
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation(propagation));
  if (failed(pm.run(*copy)))
    return func.emitError("loom-autodiff: sharding propagation failed on the plan");
  SmallVector<shard::ShardingOp> layouts;
  auto layoutOf = [](Value v) -> shard::ShardingOp {
    if (auto s = v.getDefiningOp<shard::ShardOp>(); s && !s.getAnnotateForUsers())
      return s.getSharding().getDefiningOp<shard::ShardingOp>();
    for (Operation *user : v.getUsers())
      if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers())
        return s.getSharding().getDefiningOp<shard::ShardingOp>();
    return nullptr;
  };
  Operation *ret = copied.getBody().front().getTerminator();
  for (Value r : ret->getOperands()) {
    shard::ShardingOp layout = layoutOf(r);
    // Only static layouts move to the original module.
    layouts.push_back(layout && layout->getNumOperands() == 0 ? layout : nullptr);
  }
  // The copy goes with this function: rebuild the layouts in `func`.
  OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
  for (shard::ShardingOp &layout : layouts)
    if (layout)
      layout = cast<shard::ShardingOp>(b.clone(*layout));
  return layouts;
}

/// Annotates each cotangent argument with its result's layout.
void annotateCotangents(func::FuncOp func, ArrayRef<shard::ShardingOp> layouts) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto of = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kCotangentOfAttr);
    if (!of || !layouts[of.getInt()])
      continue;
    shard::ShardingOp layout = layouts[of.getInt()];
    OpBuilder b(layout->getContext());
    b.setInsertionPointAfter(layout);
    auto annotated = shard::ShardOp::create(b, arg.getLoc(), arg, layout.getResult(),
                                            /*annotate_for_users=*/true);
    arg.replaceAllUsesExcept(annotated.getResult(), annotated);
  }
}

struct LoomAutodiffPass : mlir::loom::impl::LoomAutodiffBase<LoomAutodiffPass> {
  using LoomAutodiffBase::LoomAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func) {
      auto defined = llvm::to_vector(llvm::make_filter_range(
          module.getOps<func::FuncOp>(), [](func::FuncOp f) { return !f.isExternal(); }));
      if (defined.size() == 1)
        func = defined.front();
    }
    if (!func || func.isExternal()) {
      module.emitError("loom-autodiff: no function '") << entry << "' to differentiate";
      return signalPassFailure();
    }
    // A planned module: the cotangents take their results' layouts.
    SmallVector<shard::ShardingOp> layouts;
    if (!module.getOps<shard::GridOp>().empty()) {
      FailureOr<SmallVector<shard::ShardingOp>> found = resultLayouts(module, func);
      if (failed(found))
        return signalPassFailure();
      layouts = std::move(*found);
    }
    if (failed(differentiate(func))) {
      for (shard::ShardingOp layout : layouts)
        if (layout)
          layout->erase();
      return signalPassFailure();
    }
    if (!layouts.empty())
      annotateCotangents(func, layouts);
    for (shard::ShardingOp layout : layouts)
      if (layout && layout->use_empty())
        layout->erase();
  }
};
} // namespace
