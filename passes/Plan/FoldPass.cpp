//===- FoldPass.cpp - --loom-fold: report repeated blocks -----------------===//
//
// Runs the folding analysis the strategy search uses and makes it
// inspectable: one remark per run of identical copies (and one summary per
// function), and with `annotate` the position of every op in its run as
// `loom.fold = array<i64: block, copy, index>`.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Plan.h"
#include "loom/Plan/Fold.h"

#include "mlir/IR/Builders.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMFOLD
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomFoldPass : mlir::loom::impl::LoomFoldBase<LoomFoldPass> {
  using LoomFoldBase::LoomFoldBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FoldOptions options;
    options.minCopies = minCopies;
    FoldedFunction folded = foldRepeatedBlocks(func, options);
    emitFoldRemarks(folded);
    if (!annotate) {
      markAllAnalysesPreserved();
      return;
    }
    Builder builder(func.getContext());
    for (const auto &[op, pos] : folded.position)
      op->setAttr("loom.fold",
                  builder.getDenseI64ArrayAttr({pos.block, pos.copy, pos.index}));
  }
};
} // namespace
