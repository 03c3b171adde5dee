//===- SplitFusedProjectionsPass.cpp - --loom-split-fused-projections -----===//

#include "loom/Passes/Plan.h"
#include "loom/Plan/FusedProjections.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMSPLITFUSEDPROJECTIONS
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;

namespace {
struct LoomSplitFusedProjectionsPass
    : mlir::loom::impl::LoomSplitFusedProjectionsBase<LoomSplitFusedProjectionsPass> {
  void runOnOperation() override {
    if (!mlir::loom::splitFusedProjections(getOperation()))
      markAllAnalysesPreserved();
  }
};
} // namespace
