//===- CollectivesToRuntime.cpp - TODO ---===//

#include "loom/Passes/Lower.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMCOLLECTIVESTORUNTIME
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomCollectivesToRuntimePass : mlir::loom::impl::LoomCollectivesToRuntimeBase<LoomCollectivesToRuntimePass> {
  using LoomCollectivesToRuntimeBase::LoomCollectivesToRuntimeBase;
  void runOnOperation() override {}
};
} // namespace
