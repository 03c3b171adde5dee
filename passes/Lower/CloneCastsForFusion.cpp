//===- CloneCastsForFusion.cpp - one widening per reader ------------------===//
//
// Implements --loom-clone-casts-for-fusion (Passes.td). Upstream's
// elementwise fusion (linalg-fuse-elementwise-ops) fuses a producer into
// its consumer only where the consumer is its one reader, so a value
// widened once and read by several loops is a buffer of its own: a 16-bit
// gradient widened for Adam's two moments, 4 bytes a parameter outside
// every arena. A cast is cheaper to redo in each reader's loop than to
// store and load, so each reader gets its own copy, which fusion then
// folds into it.
//
//===----------------------------------------------------------------------===//

#include "LinalgMatchers.h"
#include "loom/Passes/Lower.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Interfaces/CastInterfaces.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMCLONECASTSFORFUSION
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Whether `g` computes one widening cast of its one input, element by
/// element, over at least one dim (a scalar's buffer is not worth a second
/// loop). Only a widening: a copy of a narrowing before each reader would
/// keep its wider input alive until the last of them instead.
bool isElementwiseWidening(linalg::GenericOp g) {
  auto cast = elementwiseBody<CastOpInterface>(g, 1);
  if (!cast || g.getNumLoops() == 0 || cast->getNumOperands() != 1 ||
      cast->getOperand(0) != g.getRegion().front().getArgument(0))
    return false;
  Type from = cast->getOperand(0).getType(), to = cast->getResult(0).getType();
  return from.isIntOrFloat() && to.isIntOrFloat() &&
         to.getIntOrFloatBitWidth() >= from.getIntOrFloatBitWidth();
}

struct CloneCastsForFusionPass
    : mlir::loom::impl::LoomCloneCastsForFusionBase<CloneCastsForFusionPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> casts;
    getOperation().walk([&](linalg::GenericOp g) {
      if (isElementwiseWidening(g))
        casts.push_back(g);
    });
    // Last first: a cast that reads another gives each of its copies to
    // its readers before the one it reads counts its own readers (then
    // those copies, one each).
    for (linalg::GenericOp cast : llvm::reverse(casts)) {
      if (cast->getResult(0).use_empty() || cast->getResult(0).hasOneUse())
        continue;
      // Only where every reader would fuse its copy: a reader that would
      // not keeps one copy whatever happens, and further copies beside it
      // would cost memory rather than save it.
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          cast->getResult(0).getUses(), [](OpOperand &u) { return &u; });
      if (!llvm::all_of(uses, [](OpOperand *u) {
            return isa<linalg::GenericOp>(u->getOwner()) &&
                   linalg::areElementwiseOpsFusable(u);
          }))
        continue;
      // A copy just before each reader, in place of the cast.
      for (OpOperand *use : uses) {
        OpBuilder b(use->getOwner());
        use->set(b.clone(*cast)->getResult(0));
      }
      cast->erase();
    }
  }
};

} // namespace
