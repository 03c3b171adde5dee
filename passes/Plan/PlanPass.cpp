#include "loom/Passes/Plan.h"
namespace mlir::loom {
#define GEN_PASS_DEF_LOOMPLAN
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom
namespace {
struct LoomPlanPass : mlir::loom::impl::LoomPlanBase<LoomPlanPass> {
  using LoomPlanBase::LoomPlanBase;
  void runOnOperation() override {}
};
} // namespace
