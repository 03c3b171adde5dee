//===- EntryABI.cpp - TODO ---===//

#include "loom/Passes/Lower.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMENTRYABI
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomEntryABIPass : mlir::loom::impl::LoomEntryABIBase<LoomEntryABIPass> {
  using LoomEntryABIBase::LoomEntryABIBase;
  void runOnOperation() override {}
};
} // namespace
