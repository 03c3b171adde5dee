//===- AutodiffPass.cpp - the --loom-autodiff pass ------------------------===//
//
// Finds the entry function and runs differentiate() on it; on a planned
// module, annotates each cotangent with its result's layout.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Autodiff.h"

#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Passes/Lower.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMAUTODIFF
#include "passes/Autodiff/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
/// The layout sharding propagation gives each result of `func` (null where
/// it gives none, or a dynamic one), found on `copy`, a copy of the module
/// that the caller keeps alive while it uses them.
FailureOr<SmallVector<shard::ShardingOp>> resultLayouts(ModuleOp copy, func::FuncOp func) {
  auto copied = copy.lookupSymbol<func::FuncOp>(func.getSymName());
  PassManager pm(copy.getContext());
  pm.addNestedPass<func::FuncOp>(createForwardFirstShardingPropagation());
  if (failed(pm.run(copy)))
    return func.emitError("loom-autodiff: sharding propagation failed on the plan");
  auto layoutOf = [](Value v) -> shard::ShardingOp {
    if (auto s = v.getDefiningOp<shard::ShardOp>(); s && !s.getAnnotateForUsers())
      return s.getSharding().getDefiningOp<shard::ShardingOp>();
    for (Operation *user : v.getUsers())
      if (auto s = dyn_cast<shard::ShardOp>(user); s && !s.getAnnotateForUsers())
        return s.getSharding().getDefiningOp<shard::ShardingOp>();
    return nullptr;
  };
  SmallVector<shard::ShardingOp> layouts;
  for (Value r : copied.getBody().front().getTerminator()->getOperands()) {
    shard::ShardingOp layout = layoutOf(r);
    layouts.push_back(layout && layout->getNumOperands() == 0 ? layout : nullptr);
  }
  return layouts;
}

/// Annotates each cotangent argument of `func` with its result's layout
/// (`layouts`, from resultLayouts), cloned into `func`: a cotangent has its
/// result's layout, so the backward starts where the forward ended.
void annotateCotangents(func::FuncOp func, ArrayRef<shard::ShardingOp> layouts) {
  Block &body = func.getBody().front();
  OpBuilder b(&body, body.begin());
  for (BlockArgument arg : body.getArguments()) {
    auto of = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kCotangentOfAttr);
    if (!of || !layouts[of.getInt()])
      continue;
    auto layout = cast<shard::ShardingOp>(b.clone(*layouts[of.getInt()]));
    auto annotated = shard::ShardOp::create(b, arg.getLoc(), arg, layout.getResult(),
                                            /*annotate_for_users=*/true);
    arg.replaceAllUsesExcept(annotated.getResult(), annotated);
  }
}

struct LoomAutodiffPass : mlir::loom::impl::LoomAutodiffBase<LoomAutodiffPass> {
  using LoomAutodiffBase::LoomAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions = entryFunctions(module, entry);
    if (functions.empty() || functions.front().isExternal()) {
      module.emitError("loom-autodiff: no function '") << entry << "' to differentiate";
      return signalPassFailure();
    }
    if (functions.size() > 1) {
      module.emitError("loom-autodiff: '")
          << entry << "' is split into " << functions.size()
          << " pipeline stage functions; differentiate the pipelined plan "
             "before loom-split-stages, which runs each stage's backward on "
             "its devices";
      return signalPassFailure();
    }
    func::FuncOp func = functions.front();
    // A planned module: the cotangents take their results' layouts.
    OwningOpRef<ModuleOp> copy;
    SmallVector<shard::ShardingOp> layouts;
    if (!module.getOps<shard::GridOp>().empty()) {
      copy = cast<ModuleOp>(module->clone());
      FailureOr<SmallVector<shard::ShardingOp>> found = resultLayouts(*copy, func);
      if (failed(found))
        return signalPassFailure();
      layouts = std::move(*found);
    }
    if (failed(differentiate(func)))
      return signalPassFailure();
    if (!layouts.empty())
      annotateCotangents(func, layouts);
  }
};
} // namespace
