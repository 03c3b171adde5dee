//===- Shape.cpp - lower loom shape ops to tensor and linalg --------------===//
//
// loom.reshape, transpose, concat, slice, pad and expand move data without
// computing on it, so they lower to the tensor dialect's view-like ops where
// one expresses the op exactly, and to linalg otherwise:
//   reshape   -> tensor.collapse_shape / expand_shape when a reassociation
//                exists, else a collapse to 1-D followed by an expand;
//   transpose -> linalg.transpose;
//   concat    -> tensor.insert_slice of every input into a tensor.empty;
//   slice     -> tensor.extract_slice with positive strides, plus a reversing
//                linalg.generic for the dims walked with a negative stride;
//   pad       -> a cropping tensor.extract_slice for negative pads, then
//                linalg.fill + tensor.insert_slice (constant mode) or a
//                linalg.generic that gathers with tensor.extract (reflect,
//                edge, wrap, with numpy's index rules);
//   expand    -> tensor.collapse_shape of the broadcast unit dims, then
//                linalg.broadcast.
// All shapes are static; the semantics are those of loom_reference.py.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "Utils.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  return getAsIndexOpFoldResult(b.getContext(), values);
}

/// Reshapes `input` to `type` (same element count) through collapse_shape /
/// expand_shape: directly when one reassociation relates the two shapes,
/// else by collapsing to 1-D (or rank 0) and expanding again.
static Value reshapeTo(OpBuilder &b, Location loc, Value input,
                       RankedTensorType type) {
  auto srcType = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> src = srcType.getShape(), dst = type.getShape();
  if (src == dst)
    return input;
  if (src.size() > dst.size())
    if (auto re = getReassociationIndicesForCollapse(src, dst))
      return tensor::CollapseShapeOp::create(b, loc, type, input, *re);
  if (src.size() < dst.size())
    if (auto re = getReassociationIndicesForCollapse(dst, src))
      return tensor::ExpandShapeOp::create(b, loc, type, input, *re);

  // General case: through a flat 1-D tensor.
  auto flatType =
      RankedTensorType::get({srcType.getNumElements()}, type.getElementType());
  auto allDims = [](int64_t rank) {
    ReassociationIndices group(rank);
    std::iota(group.begin(), group.end(), 0);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat;
  if (src.empty())
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, input,
                                         SmallVector<ReassociationIndices>{});
  else if (src.size() == 1)
    flat = input;
  else
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, input,
                                           allDims(src.size()));
  if (dst.empty())
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           SmallVector<ReassociationIndices>{});
  if (dst.size() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat, allDims(dst.size()));
}

/// The pad value `value` as an element of type `elem`, cast as numpy casts
/// the constant into the array's dtype: floats round, integers truncate
/// toward zero and wrap, booleans are `value != 0`.
static TypedAttr padValueAttr(OpBuilder &b, Type elem, double value) {
  if (isa<FloatType>(elem))
    return b.getFloatAttr(elem, value);
  auto integer = cast<IntegerType>(elem);
  unsigned width = integer.getWidth();
  if (width == 1)
    return b.getIntegerAttr(elem, value != 0 ? 1 : 0);
  double t = std::trunc(value);
  int64_t bits = 0;
  if (t >= std::ldexp(1.0, 63))
    bits = std::numeric_limits<int64_t>::max();
  else if (t < -std::ldexp(1.0, 63))
    bits = std::numeric_limits<int64_t>::min();
  else if (!std::isnan(t))
    bits = static_cast<int64_t>(t);
  APInt v(64, static_cast<uint64_t>(bits));
  return b.getIntegerAttr(elem, v.trunc(width));
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

struct ReshapeLowering : RankedResultConversion<ReshapeOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(ReshapeOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(), resultType));
    return success();
  }
};

struct TransposeLowering : RankedResultConversion<TransposeOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(TransposeOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPermutation();
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Location loc = op.getLoc();
    Value init = createEmptyTensor(rewriter, loc, resultType);
    auto transpose = linalg::TransposeOp::create(
        rewriter, loc, adaptor.getInput(), init, perm);
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

struct ConcatLowering : RankedResultConversion<ConcatOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(ConcatOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    ValueRange inputs = adaptor.getInputs();
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs.front());
      return success();
    }
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = resultType.getRank();
    Value result = createEmptyTensor(rewriter, loc, resultType);
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (Value input : inputs) {
      ArrayRef<int64_t> sizes =
          cast<RankedTensorType>(input.getType()).getShape();
      if (sizes[axis] == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, sizes), indexAttrs(rewriter, strides));
      offsets[axis] += sizes[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : RankedResultConversion<SliceOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(SliceOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<int64_t> offs = op.getOffsets(), sizes = op.getSizes(),
                      steps = op.getStrides();
    int64_t rank = resultType.getRank();
    // A negative stride walks [first, first + (size-1) * stride] backwards:
    // take the same elements forwards, then reverse that dim.
    SmallVector<int64_t> offsets(rank), strides(rank);
    SmallVector<AffineExpr> readExprs;
    bool reverse = false;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr dim = getAffineDimExpr(d, ctx);
      if (sizes[d] == 0) {
        offsets[d] = 0;
        strides[d] = 1;
        readExprs.push_back(dim);
      } else if (steps[d] > 0) {
        offsets[d] = offs[d];
        strides[d] = steps[d];
        readExprs.push_back(dim);
      } else {
        offsets[d] = offs[d] + (sizes[d] - 1) * steps[d];
        strides[d] = -steps[d];
        readExprs.push_back(sizes[d] - 1 - dim);
        reverse |= sizes[d] > 1;
      }
    }
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, resultType, adaptor.getInput(),
        indexAttrs(rewriter, offsets), indexAttrs(rewriter, sizes),
        indexAttrs(rewriter, strides));
    if (!reverse) {
      rewriter.replaceOp(op, slice);
      return success();
    }
    Value reversed = buildParallelGeneric(
        rewriter, loc, slice, AffineMap::get(rank, 0, readExprs, ctx),
        resultType, [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, reversed);
    return success();
  }
};

/// The source index of output index `i` in a padded dim of (cropped) size
/// `n` with `lo` elements of padding in front, under numpy's rules for
/// reflect (mirror without repeating the edge, periodically), edge (clamp)
/// and wrap (periodic).
static Value padSourceIndex(OpBuilder &b, Location loc, PadMode mode, Value i,
                            int64_t lo, int64_t n) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value j = arith::SubIOp::create(b, loc, i, cst(lo));
  auto positiveMod = [&](Value x, int64_t period) -> Value {
    Value p = cst(period);
    Value r = arith::RemSIOp::create(b, loc, x, p);
    Value neg =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, cst(0));
    return arith::SelectOp::create(b, loc, neg,
                                   arith::AddIOp::create(b, loc, r, p), r);
  };
  switch (mode) {
  case PadMode::edge:
    return arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, j, cst(0)), cst(n - 1));
  case PadMode::wrap:
    return positiveMod(j, n);
  case PadMode::reflect: {
    if (n == 1)
      return cst(0);
    int64_t period = 2 * (n - 1);
    Value r = positiveMod(j, period);
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, r, cst(n));
    return arith::SelectOp::create(
        b, loc, past, arith::SubIOp::create(b, loc, cst(period), r), r);
  }
  case PadMode::constant:
    break;
  }
  return j;
}

struct PadLowering : RankedResultConversion<PadOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(PadOp op, OpAdaptor adaptor, RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Type elem = resultType.getElementType();
    PadMode mode = op.getMode();
    if (mode == PadMode::constant && !isa<FloatType, IntegerType>(elem))
      return rewriter.notifyMatchFailure(op, "constant pad of a non-number");
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    ArrayRef<int64_t> pads = op.getPadding();
    int64_t rank = inType.getRank();

    // Negative pads crop first.
    SmallVector<int64_t> cropOffsets(rank), cropSizes(rank), lo(rank), hi(rank);
    bool crop = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t begin = pads[d], end = pads[rank + d];
      cropOffsets[d] = std::max<int64_t>(0, -begin);
      cropSizes[d] =
          inType.getDimSize(d) - cropOffsets[d] - std::max<int64_t>(0, -end);
      lo[d] = std::max<int64_t>(0, begin);
      hi[d] = std::max<int64_t>(0, end);
      crop |= begin < 0 || end < 0;
      if (mode != PadMode::constant && cropSizes[d] == 0 &&
          (lo[d] > 0 || hi[d] > 0)) {
        op.emitOpError("cannot pad an empty dim ")
            << d << " in " << stringifyPadMode(mode) << " mode";
        return rewriter.notifyMatchFailure(op, "non-constant pad of empty dim");
      }
    }
    if (crop) {
      SmallVector<int64_t> ones(rank, 1);
      input = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(cropSizes, elem), input,
          indexAttrs(rewriter, cropOffsets), indexAttrs(rewriter, cropSizes),
          indexAttrs(rewriter, ones));
    }
    if (cast<RankedTensorType>(input.getType()) == resultType) {
      rewriter.replaceOp(op, input);
      return success();
    }

    if (mode == PadMode::constant) {
      Value init = createEmptyTensor(rewriter, loc, resultType);
      Value value = arith::ConstantOp::create(
          rewriter, loc,
          padValueAttr(rewriter, elem, op.getValue().convertToDouble()));
      Value filled =
          linalg::FillOp::create(rewriter, loc, value, init).getResult(0);
      SmallVector<int64_t> ones(rank, 1);
      Value result = tensor::InsertSliceOp::create(
          rewriter, loc, input, filled, indexAttrs(rewriter, lo),
          indexAttrs(rewriter, cropSizes), indexAttrs(rewriter, ones));
      rewriter.replaceOp(op, result);
      return success();
    }

    // reflect / edge / wrap: every output element reads one input element.
    Value result = buildParallelGeneric(
        rewriter, loc, ValueRange{}, {}, resultType,
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            if (lo[d] == 0 && hi[d] == 0)
              indices.push_back(i);
            else
              indices.push_back(
                  padSourceIndex(b, l, mode, i, lo[d], cropSizes[d]));
          }
          Value v = tensor::ExtractOp::create(b, l, input, indices);
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ExpandLowering : RankedResultConversion<ExpandOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(ExpandOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    if (inType == resultType) {
      rewriter.replaceOp(op, input);
      return success();
    }
    Location loc = op.getLoc();
    ArrayRef<int64_t> in = inType.getShape(), out = resultType.getShape();
    int64_t lead = out.size() - in.size();

    // Input dims kept as they are; the others are unit dims that broadcast
    // and are collapsed away (linalg.broadcast only adds dims).
    SmallVector<int64_t> keptShape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending; // dropped unit dims before the first kept
    llvm::SmallDenseSet<int64_t> keptOut;
    for (int64_t i = 0, e = in.size(); i < e; ++i) {
      bool kept = !(in[i] == 1 && out[lead + i] != 1);
      if (kept) {
        keptShape.push_back(in[i]);
        keptOut.insert(lead + i);
        groups.push_back(pending);
        groups.back().push_back(i);
        pending.clear();
      } else if (groups.empty()) {
        pending.push_back(i);
      } else {
        groups.back().push_back(i);
      }
    }
    if (keptShape.size() != in.size())
      input = tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(keptShape, inType.getElementType()), input,
          groups);
    SmallVector<int64_t> added;
    for (int64_t d = 0, e = out.size(); d < e; ++d)
      if (!keptOut.contains(d))
        added.push_back(d);
    Value init = createEmptyTensor(rewriter, loc, resultType);
    auto broadcast =
        linalg::BroadcastOp::create(rewriter, loc, input, init, added);
    rewriter.replaceOp(op, broadcast.getResult());
    return success();
  }
};

} // namespace

/// Memory placement's movement (loom.fetch / loom.release): on a CPU the
/// device and host tiers are one memory, so a fetched weight is its source
/// and a release frees nothing.
struct FetchLowering : OpConversionPattern<FetchOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FetchOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

struct ReleaseLowering : OpConversionPattern<ReleaseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ReleaseOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

/// An activation's spill to host memory and its reload, where no arena
/// placed them (loom-arena-buffers lowers placed ones to copies): on a CPU
/// each is its operand.
template <typename MoveOp>
struct SpillReloadLowering : OpConversionPattern<MoveOp> {
  using OpConversionPattern<MoveOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(MoveOp op, typename MoveOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getOperands().front());
    return success();
  }
};

void mlir::loom::populateLoomShapeToTensorPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, ConcatLowering,
               SliceLowering, PadLowering, ExpandLowering, FetchLowering,
               ReleaseLowering, SpillReloadLowering<SpillOp>,
               SpillReloadLowering<ReloadOp>>(converter, patterns.getContext());
}
