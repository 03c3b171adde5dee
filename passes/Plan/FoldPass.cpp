#include "loom/Passes/Plan.h"
namespace mlir::loom {
#define GEN_PASS_DEF_LOOMFOLD
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom
namespace {
struct LoomFoldPass : mlir::loom::impl::LoomFoldBase<LoomFoldPass> {
  using LoomFoldBase::LoomFoldBase;
  void runOnOperation() override {}
};
} // namespace
