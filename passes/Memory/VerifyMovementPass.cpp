//===- VerifyMovementPass.cpp - the --loom-verify-movement pass -----------===//
//
// Runs verifyHostUpdates() on every function; reads the chunk sizes and
// budget from loom.memory_plan and runs verifyMovement() on each.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Memory.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Memory/Movement.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMVERIFYMOVEMENT
#include "passes/Memory/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomVerifyMovementPass
    : mlir::loom::impl::LoomVerifyMovementBase<LoomVerifyMovementPass> {
  using LoomVerifyMovementBase::LoomVerifyMovementBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(verifyHostUpdates(func)))
        return signalPassFailure();
    bool moves = false;
    module.walk([&](Operation *op) { moves |= isa<FetchOp, ReleaseOp>(op); });
    auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
    auto sizes = plan ? plan.getAs<DenseI64ArrayAttr>("chunk_sizes") : nullptr;
    auto budget = plan ? plan.getAs<FloatAttr>("chunk_budget_bytes") : nullptr;
    if (!sizes || !budget) {
      if (!moves)
        return;
      module.emitError("loom-verify-movement: the module has loom.fetch or "
                       "loom.release ops but its loom.memory_plan gives no "
                       "chunk_sizes and chunk_budget_bytes");
      return signalPassFailure();
    }
    // The device arena's size, where the plan has a static memory plan.
    int64_t deviceArena = arenaBytes(planArenas(module)).value_or(-1);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          failed(verifyMovement(func, sizes.asArrayRef(),
                                budget.getValueAsDouble(), deviceArena)))
        return signalPassFailure();
  }
};
} // namespace
