//===- LinalgMatchers.h - linalg ops our lowering rewrites ------*- C++ -*-===//
//
// Small matchers shared by loom-fold-into-contractions,
// loom-tile-narrow-contractions and loom-clone-casts-for-fusion, which
// rewrite what loom-to-linalg made.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PASSES_LOWER_LINALGMATCHERS_H
#define LOOM_PASSES_LOWER_LINALGMATCHERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

namespace mlir::loom {

/// The contractions our lowering makes of loom.matmul: both accept
/// indexing maps that transpose an operand's last two dims, accumulate
/// into their init, and tile by the TilingInterface.
inline bool isContraction(Operation *op) {
  return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
}

/// The contraction `v` is the result of, where nothing else reads it and
/// its init is a zero fill nothing else reads: adding it into another
/// value is then the contraction accumulating into that value, and its
/// rounding can compute it a tile at a time. (A
/// contraction is never one of loom-arena-buffers' private readers, which
/// would put a copy between: it ends its operands' reads itself.)
inline linalg::LinalgOp zeroInitContraction(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isContraction(def) || !v.hasOneUse())
    return nullptr;
  auto op = cast<linalg::LinalgOp>(def);
  auto fill = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse() ||
      !matchPattern(fill.value(), m_AnyZeroFloat()))
    return nullptr;
  return op;
}

/// The one op `g` computes, of type `Op`, where `g` is elementwise over
/// `inputs` inputs (identity maps, all parallel, one result) and yields
/// that op's result; null otherwise.
template <typename Op>
Op elementwiseBody(linalg::GenericOp g, unsigned inputs) {
  if (g.getNumDpsInputs() != inputs || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = g.getRegion().front();
  auto op = dyn_cast<Op>(body.front());
  if (body.getOperations().size() != 2 || !op ||
      body.back().getOperand(0) != op->getResult(0))
    return nullptr;
  return op;
}

/// The input of `v`'s defining op where that is an elementwise float
/// conversion of kind `Cast` (arith::ExtFOp or arith::TruncFOp) and
/// nothing else, as convertFloatElements and loom.cast's lowering write it.
template <typename Cast> Value floatConversionInput(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  Cast cast = g ? elementwiseBody<Cast>(g, 1) : nullptr;
  if (!cast || cast->getOperand(0) != g.getRegion().front().getArgument(0))
    return nullptr;
  return g.getDpsInputOperand(0)->get();
}

} // namespace mlir::loom

#endif // LOOM_PASSES_LOWER_LINALGMATCHERS_H
