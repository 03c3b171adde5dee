//===- TileNarrowContractions.cpp - round a contraction tile by tile ------===//
//
// Implements --loom-tile-narrow-contractions (Passes.td). loom-to-linalg
// computes a 16-bit matmul into a float32 accumulator and rounds it once,
// so the whole accumulator is a buffer: twice the result's bytes, beside
// the result's planned place and outside every arena. Tiling the rounding
// over the result's rows, with the contraction and its zero fill fused
// into the tile loop, leaves an accumulator of one tile.
//
//===----------------------------------------------------------------------===//

#include "LinalgMatchers.h"
#include "loom/Passes/Lower.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMTILENARROWCONTRACTIONS
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The accumulator of one tile holds at most this many bytes (and at
/// least one row).
constexpr int64_t kTileBytes = 64 * 1024;

/// The contraction `g` rounds, where `g` only rounds a float32
/// accumulator of static shape that zeroInitContraction admits.
linalg::LinalgOp roundedContraction(linalg::GenericOp g) {
  if (g->getNumResults() != 1)
    return nullptr;
  Value acc = floatConversionInput<arith::TruncFOp>(g->getResult(0));
  auto type = acc ? dyn_cast<RankedTensorType>(acc.getType()) : nullptr;
  if (!type || !type.hasStaticShape() || type.getNumElements() == 0)
    return nullptr;
  return zeroInitContraction(acc);
}

/// The tile sizes of `g`'s loops (batch..., rows, columns): one batch
/// entry and as many rows as keep the accumulator's tile within
/// kTileBytes and divide the rows (every tile the same static shape);
/// empty where one tile would be the whole.
SmallVector<OpFoldResult> tileSizes(OpBuilder &b, linalg::GenericOp g,
                                    Type accumulator) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(g->getResult(0).getType()).getShape();
  int64_t rank = shape.size();
  int64_t rowBytes = shape.back() * (accumulator.getIntOrFloatBitWidth() / 8);
  int64_t m = shape[rank - 2];
  int64_t rows = std::clamp<int64_t>(kTileBytes / rowBytes, 1, m);
  while (m % rows)
    --rows;
  bool batched =
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d > 1; });
  if (rows == m && !batched)
    return {};
  SmallVector<OpFoldResult> sizes(rank - 2, b.getIndexAttr(1));
  sizes.push_back(b.getIndexAttr(rows == m ? 0 : rows));
  sizes.push_back(b.getIndexAttr(0));
  return sizes;
}

struct TileNarrowContractionsPass
    : mlir::loom::impl::LoomTileNarrowContractionsBase<
          TileNarrowContractionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> roundings;
    getOperation().walk([&](linalg::GenericOp g) {
      if (linalg::LinalgOp c = roundedContraction(g))
        roundings.push_back({g, c});
    });
    IRRewriter rewriter(&getContext());
    for (auto [g, c] : roundings)
      if (failed(tileRounding(rewriter, g, c)))
        return signalPassFailure();
  }

  LogicalResult tileRounding(IRRewriter &rewriter, linalg::GenericOp g,
                             linalg::LinalgOp c) {
    Operation *fill = c.getDpsInitOperand(0)->get().getDefiningOp();
    Operation *wholeAccumulator =
        fill->getOperand(1).getDefiningOp<tensor::EmptyOp>();
    SmallVector<OpFoldResult> sizes =
        tileSizes(rewriter, g, getElementTypeOrSelf(c->getResult(0)));
    if (sizes.empty())
      return success();
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setTileSizes(sizes);
    // Only the contraction and its fill come into the loop: a producer of
    // the contraction's operands would be recomputed, the whole of it in
    // every tile for the right operand.
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer, bool)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (producer.getOwner() == c.getOperation() ||
              producer.getOwner() == fill)
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          return std::nullopt;
        });
    rewriter.setInsertionPoint(g);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(g.getOperation()), options);
    if (failed(tiled))
      return g.emitError("loom-tile-narrow-contractions: cannot tile the "
                         "rounding of this contraction");
    for (auto [value, replacement] : tiled->replacements)
      rewriter.replaceAllUsesWith(value, replacement);
    // The tile's fill writes a slice of the whole accumulator's
    // tensor.empty, which bufferization would allocate whole: it writes a
    // tensor.empty of the tile instead.
    for (Operation *op : tiled->tiledAndFusedOps) {
      auto tileFill = dyn_cast<linalg::FillOp>(op);
      auto slice = tileFill ? tileFill.getDpsInitOperand(0)
                                  ->get()
                                  .getDefiningOp<tensor::ExtractSliceOp>()
                            : nullptr;
      if (!slice || !slice.getSource().getDefiningOp<tensor::EmptyOp>())
        continue;
      rewriter.setInsertionPoint(slice);
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
          slice, slice.getMixedSizes(), slice.getType().getElementType());
    }
    // The fusion leaves the slices it fused along in the loop, unread, and
    // the whole accumulator's tensor.empty.
    for (Operation *op :
         {g.getOperation(), c.getOperation(), fill, wholeAccumulator}) {
      if (!op)
        continue;
      for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
        if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
          rewriter.eraseOp(user);
      if (op->use_empty())
        rewriter.eraseOp(op);
    }
    return success();
  }
};

} // namespace
