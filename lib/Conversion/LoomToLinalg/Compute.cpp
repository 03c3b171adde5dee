//===- Compute.cpp - lower loom matmul, conv, pool, attention -------------===//
//
// Lowers the compute-heavy loom ops to linalg on tensors, using the named
// linalg ops wherever they express the op exactly so that later tiling and
// vectorization see a matmul or a convolution rather than a generic:
//   - loom.matmul: linalg.matmul for 2-D operands and for a batched lhs
//     times a 2-D weight (batch folded into M), linalg.batch_matmul when both
//     operands carry the same batch dims; a linalg.generic with a reduction
//     loop when batch dims broadcast (numpy matmul) or the operands are i1
//     (logical and/or, as numpy's bool matmul). Accumulates in the
//     element type, or float32 for narrower floats (computeType), rounding
//     the result once.
//   - loom.conv: the input is zero-padded with tensor.pad, the bias (if any)
//     is broadcast into the accumulator; then linalg.conv_{1,2,3}d_nc*_fc*
//     (groups = 1), linalg.depthwise_conv_{1,2,3}d_nc*_c* (one filter per
//     channel), linalg.conv_2d_ngchw_gfchw (other grouped 2-D), else a
//     grouped linalg.generic for any rank.
//   - loom.pool: padded with -inf (max) or 0 (avg), including the ceil-mode
//     overhang at the end; linalg.pooling_ncw/nchw_{max,sum} for 1-D/2-D,
//     else a generic. Average pooling then divides by the per-window count
//     that the reference interpreter uses (declared padding counted only
//     with count_include_pad, ceil-mode overhang never), a constant folded
//     at compile time.
//   - loom.attention: key/value heads are shared by grouping query heads,
//     so q is reshaped to [B * Hkv, G * Sq, D] and both products are
//     linalg.batch_matmul; between them scale, mask (i1 selects, float adds),
//     causal masking (key index > query index) and a softmax that subtracts
//     the row maximum.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "Utils.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Reassociation that merges dims [0, n) into one and keeps the rest.
static SmallVector<ReassociationIndices> mergeLeading(int64_t n, int64_t rank) {
  SmallVector<ReassociationIndices> groups(1);
  for (int64_t d = 0; d < n; ++d)
    groups.back().push_back(d);
  for (int64_t d = n; d < rank; ++d)
    groups.push_back({d});
  return groups;
}

/// Reassociation that splits (or merges) dim `d` and the one after it.
static SmallVector<ReassociationIndices> mergePair(int64_t d, int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == d + 1)
      continue;
    if (i == d)
      groups.push_back({i, i + 1});
    else
      groups.push_back({i});
  }
  return groups;
}

/// `linalg.batch_matmul` of `lhs` and `rhs` into a tensor of `type` filled
/// with `zero`.
static Value createBatchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                               RankedTensorType type, Value zero) {
  Value init = createFilledTensor(b, loc, type.getShape(), zero);
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{type},
                                       ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

/// acc + a * b in the accumulator's type (floats extended to it); i1 is
/// acc | (a & b).
static Value multiplyAccumulate(OpBuilder &b, Location loc, Value x, Value y,
                                Value acc) {
  Type t = x.getType();
  if (t.isInteger(1))
    return arith::OrIOp::create(b, loc, acc,
                                arith::AndIOp::create(b, loc, x, y));
  if (auto accType = dyn_cast<FloatType>(acc.getType())) {
    x = castFloat(b, loc, x, accType);
    y = castFloat(b, loc, y, accType);
    return arith::AddFOp::create(b, loc, acc,
                                 arith::MulFOp::create(b, loc, x, y));
  }
  return arith::AddIOp::create(b, loc, acc,
                               arith::MulIOp::create(b, loc, x, y));
}

//===----------------------------------------------------------------------===//
// loom.matmul
//===----------------------------------------------------------------------===//

namespace {
struct MatmulLowering : RankedResultConversion<MatmulOp> {
  using RankedResultConversion::RankedResultConversion;

  LogicalResult lower(MatmulOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lt = cast<RankedTensorType>(lhs.getType());
    auto rt = cast<RankedTensorType>(rhs.getType());
    Type elem = resultType.getElementType();
    ArrayRef<int64_t> out = resultType.getShape();
    int64_t rl = lt.getRank(), rr = rt.getRank(), rank = resultType.getRank();
    int64_t nb = rank - 2;
    ArrayRef<int64_t> batch = out.drop_back(2);
    int64_t m = out[nb], n = out[nb + 1];
    // The named ops extend their operands to the accumulator's type.
    Type acc = computeType(elem);
    RankedTensorType accType = resultType.clone(acc);
    Value zero = createZeroConstant(rewriter, loc, acc);
    auto replace = [&](Value sum) {
      rewriter.replaceOp(op, convertFloatElements(rewriter, loc, sum, elem));
      return success();
    };
    // A batched product is rounded before its batch is expanded again, so
    // that the rounding reads the contraction itself (which
    // loom-tile-narrow-contractions then rounds tile by tile).
    auto replaceExpanded = [&](Value sum,
                               ArrayRef<ReassociationIndices> groups) {
      rewriter.replaceOp(
          op, createExpandShape(rewriter, loc,
                                convertFloatElements(rewriter, loc, sum, elem),
                                out, groups));
      return success();
    };

    // Named ops; their i1 bodies would be add/mul, so i1 takes the generic.
    if (!elem.isInteger(1)) {
      if (rl == 2 && rr == 2) {
        Value init = createFilledTensor(rewriter, loc, out, zero);
        return replace(
            linalg::MatmulOp::create(rewriter, loc, TypeRange{accType},
                                     ValueRange{lhs, rhs}, ValueRange{init})
                .getResult(0));
      }
      if (rr == 2) {
        // [..., M, K] x [K, N]: fold the batch into M.
        int64_t rows = lt.getNumElements() / lt.getShape().back();
        Value flat =
            createCollapseShape(rewriter, loc, lhs, mergeLeading(rl - 1, rl));
        auto flatType = RankedTensorType::get({rows, n}, acc);
        Value init =
            createFilledTensor(rewriter, loc, flatType.getShape(), zero);
        Value mm =
            linalg::MatmulOp::create(rewriter, loc, TypeRange{flatType},
                                     ValueRange{flat, rhs}, ValueRange{init})
                .getResult(0);
        return replaceExpanded(mm, mergeLeading(rank - 1, rank));
      }
      if (lt.getShape().drop_back(2) == batch &&
          rt.getShape().drop_back(2) == batch) {
        int64_t b = 1;
        for (int64_t s : batch)
          b *= s;
        auto groups = mergeLeading(nb, rank);
        Value l3 = createCollapseShape(rewriter, loc, lhs, groups);
        Value r3 = createCollapseShape(rewriter, loc, rhs, groups);
        Value bmm = createBatchMatmul(
            rewriter, loc, l3, r3, RankedTensorType::get({b, m, n}, acc), zero);
        return replaceExpanded(bmm, groups);
      }
    }

    // Broadcast batch dims: loops (batch..., m, n, k).
    MLIRContext *ctx = rewriter.getContext();
    int64_t loops = nb + 3;
    AffineExpr dm = getAffineDimExpr(nb, ctx),
               dn = getAffineDimExpr(nb + 1, ctx),
               dk = getAffineDimExpr(nb + 2, ctx);
    SmallVector<AffineExpr> le =
        broadcastExprs(ctx, lt.getShape().drop_back(2), batch);
    le.append({dm, dk});
    SmallVector<AffineExpr> re =
        broadcastExprs(ctx, rt.getShape().drop_back(2), batch);
    re.append({dk, dn});
    SmallVector<AffineExpr> oe;
    for (int64_t d = 0; d < nb; ++d)
      oe.push_back(getAffineDimExpr(d, ctx));
    oe.append({dm, dn});
    SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, le, ctx),
                                   AffineMap::get(loops, 0, re, ctx),
                                   AffineMap::get(loops, 0, oe, ctx)};
    SmallVector<utils::IteratorType> iters = parallelIterators(loops);
    iters.back() = utils::IteratorType::reduction;
    Value init = createFilledTensor(rewriter, loc, out, zero);
    return replace(
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{accType}, ValueRange{lhs, rhs},
            ValueRange{init}, maps, iters,
            [](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l,
                                      ValueRange{multiplyAccumulate(
                                          b, l, args[0], args[1], args[2])});
            })
            .getResult(0));
  }
};

//===----------------------------------------------------------------------===//
// loom.conv
//===----------------------------------------------------------------------===//

template <typename NamedOp>
static Value namedWindowOp(OpBuilder &b, Location loc, RankedTensorType type,
                           ValueRange inputs, Value init,
                           ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations) {
  return NamedOp::create(b, loc, TypeRange{type}, inputs, ValueRange{init},
                         b.getI64TensorAttr(strides),
                         b.getI64TensorAttr(dilations))
      .getResult(0);
}

/// `Op1D`, `Op2D` or `Op3D` (by `spatial`: 1 to 3, or 1 to 2 without an
/// `Op3D`) as a named window op.
template <typename Op1D, typename Op2D, typename Op3D = void>
static Value namedWindowOpForRank(int64_t spatial, OpBuilder &b, Location loc,
                                  RankedTensorType type, ValueRange inputs,
                                  Value init, ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations) {
  if (spatial == 1)
    return namedWindowOp<Op1D>(b, loc, type, inputs, init, strides, dilations);
  if constexpr (!std::is_void_v<Op3D>)
    if (spatial == 3)
      return namedWindowOp<Op3D>(b, loc, type, inputs, init, strides,
                                 dilations);
  return namedWindowOp<Op2D>(b, loc, type, inputs, init, strides, dilations);
}

struct ConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), w = adaptor.getWeight();
    auto xt = cast<RankedTensorType>(x.getType());
    auto wt = cast<RankedTensorType>(w.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elem = xt.getElementType();
    if (wt.getElementType() != elem || resultType.getElementType() != elem ||
        (adaptor.getBias() &&
         cast<RankedTensorType>(adaptor.getBias().getType()).getElementType() !=
             elem)) {
      op.emitOpError("lowering needs one element type for input, weight, "
                     "bias and result");
      return rewriter.notifyMatchFailure(op, "mixed element types");
    }
    int64_t rank = xt.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> strides = op.getStrides(), dils = op.getDilations(),
                      pads = op.getPadding();
    int64_t groups = op.getGroups();
    int64_t c = xt.getDimSize(1), f = wt.getDimSize(0);
    ArrayRef<int64_t> out = resultType.getShape();
    Value zero = createZeroConstant(rewriter, loc, elem);
    // Narrow floats accumulate in float32 (the named ops extend their
    // operands to the accumulator's type) and round the result once.
    RankedTensorType accType = resultType.clone(computeType(elem));

    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<OpFoldResult> low(2, rewriter.getIndexAttr(0)),
          high(2, rewriter.getIndexAttr(0));
      SmallVector<int64_t> shape(xt.getShape());
      for (int64_t i = 0; i < spatial; ++i) {
        low.push_back(rewriter.getIndexAttr(pads[i]));
        high.push_back(rewriter.getIndexAttr(pads[spatial + i]));
        shape[2 + i] += pads[i] + pads[spatial + i];
      }
      x = tensor::PadOp::create(rewriter, loc,
                                RankedTensorType::get(shape, elem), x, low,
                                high, zero);
    }

    // The accumulator starts at the bias (broadcast over N and space).
    Value init;
    if (Value bias = adaptor.getBias()) {
      bias =
          convertFloatElements(rewriter, loc, bias, accType.getElementType());
      Value empty = createEmptyTensor(rewriter, loc, accType);
      SmallVector<int64_t> added = {0};
      for (int64_t d = 2; d < rank; ++d)
        added.push_back(d);
      init = linalg::BroadcastOp::create(rewriter, loc, bias, empty, added)
                 .getResult()[0];
    } else {
      init = createFilledTensor(
          rewriter, loc, out,
          createZeroConstant(rewriter, loc, accType.getElementType()));
    }

    Value result;
    if (groups == 1 && spatial <= 3) {
      result =
          namedWindowOpForRank<linalg::Conv1DNcwFcwOp, linalg::Conv2DNchwFchwOp,
                               linalg::Conv3DNcdhwFcdhwOp>(
              spatial, rewriter, loc, accType, {x, w}, init, strides, dils);
    } else if (groups == c && f == c && spatial <= 3) {
      // Depthwise: weight [C, 1, k...] -> [C, k...].
      Value w2 =
          createCollapseShape(rewriter, loc, w, mergePair(0, spatial + 2));
      result = namedWindowOpForRank<linalg::DepthwiseConv1DNcwCwOp,
                                    linalg::DepthwiseConv2DNchwChwOp,
                                    linalg::DepthwiseConv3DNcdhwCdhwOp>(
          spatial, rewriter, loc, accType, {x, w2}, init, strides, dils);
    } else {
      result = groupedConv(rewriter, loc, x, w, init, accType, groups, strides,
                           dils);
    }
    rewriter.replaceOp(op, convertFloatElements(rewriter, loc, result, elem));
    return success();
  }

  /// Splits channels into groups: x [N, G, C/G, ...], w [G, F/G, C/G, ...],
  /// accumulator [N, G, F/G, ...] (of `resultType`'s element type);
  /// linalg.conv_2d_ngchw_gfchw for 2-D, a generic otherwise.
  static Value groupedConv(OpBuilder &b, Location loc, Value x, Value w,
                           Value init, RankedTensorType resultType,
                           int64_t groups, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dils) {
    auto xt = cast<RankedTensorType>(x.getType());
    auto wt = cast<RankedTensorType>(w.getType());
    Type acc = resultType.getElementType();
    int64_t rank = xt.getRank(), spatial = rank - 2;
    int64_t cg = xt.getDimSize(1) / groups, fg = wt.getDimSize(0) / groups;
    auto split = [](ArrayRef<int64_t> shape, int64_t dim, int64_t outer,
                    int64_t inner) {
      SmallVector<int64_t> s(shape.take_front(dim));
      s.append({outer, inner});
      s.append(shape.drop_front(dim + 1).begin(),
               shape.drop_front(dim + 1).end());
      return s;
    };
    auto byGroup = mergePair(1, rank + 1);
    Value xg = createExpandShape(b, loc, x, split(xt.getShape(), 1, groups, cg),
                                 byGroup);
    Value wg = createExpandShape(b, loc, w, split(wt.getShape(), 0, groups, fg),
                                 mergePair(0, rank + 1));
    SmallVector<int64_t> outShape = split(resultType.getShape(), 1, groups, fg);
    Value ig = createExpandShape(b, loc, init, outShape, byGroup);
    auto gType = RankedTensorType::get(outShape, acc);

    Value result;
    if (spatial == 2) {
      result = namedWindowOp<linalg::Conv2DNgchwGfchwOp>(
          b, loc, gType, {xg, wg}, ig, strides, dils);
    } else {
      // Loops: n, g, f, o_1..o_s | c, k_1..k_s.
      MLIRContext *ctx = b.getContext();
      int64_t loops = 4 + 2 * spatial;
      auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
      int64_t cLoop = 3 + spatial;
      SmallVector<AffineExpr> xe = {d(0), d(1), d(cLoop)},
                              we = {d(1), d(2), d(cLoop)},
                              oe = {d(0), d(1), d(2)};
      for (int64_t i = 0; i < spatial; ++i) {
        AffineExpr o = d(3 + i), k = d(cLoop + 1 + i);
        xe.push_back(o * strides[i] + k * dils[i]);
        we.push_back(k);
        oe.push_back(o);
      }
      SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                     AffineMap::get(loops, 0, we, ctx),
                                     AffineMap::get(loops, 0, oe, ctx)};
      SmallVector<utils::IteratorType> iters = parallelIterators(loops);
      for (int64_t i = cLoop; i < loops; ++i)
        iters[i] = utils::IteratorType::reduction;
      result =
          linalg::GenericOp::create(
              b, loc, TypeRange{gType}, ValueRange{xg, wg}, ValueRange{ig},
              maps, iters,
              [](OpBuilder &nb, Location l, ValueRange args) {
                linalg::YieldOp::create(nb, l,
                                        ValueRange{multiplyAccumulate(
                                            nb, l, args[0], args[1], args[2])});
              })
              .getResult(0);
    }
    return createCollapseShape(b, loc, result, byGroup);
  }
};

//===----------------------------------------------------------------------===//
// loom.pool
//===----------------------------------------------------------------------===//

struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto xt = cast<RankedTensorType>(x.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elem = xt.getElementType();
    int64_t rank = xt.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      dils = op.getDilations(), pads = op.getPadding();
    ArrayRef<int64_t> out = resultType.getShape();
    bool isMax = op.getKind() == PoolKind::max;
    Value padValue =
        isMax ? createInfinity(rewriter, loc, elem, /*negative=*/true)
              : createFloatConstant(rewriter, loc, elem, 0.0);

    // Declared pads plus the ceil-mode overhang of the last window.
    SmallVector<OpFoldResult> low(2, rewriter.getIndexAttr(0)),
        high(2, rewriter.getIndexAttr(0));
    SmallVector<int64_t> padded(xt.getShape());
    bool anyPad = false;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t n = xt.getDimSize(2 + i);
      int64_t eff = dils[i] * (kernel[i] - 1) + 1;
      int64_t extra =
          std::max<int64_t>(0, (out[2 + i] - 1) * strides[i] + eff -
                                   (n + pads[i] + pads[spatial + i]));
      int64_t hi = pads[spatial + i] + extra;
      low.push_back(rewriter.getIndexAttr(pads[i]));
      high.push_back(rewriter.getIndexAttr(hi));
      padded[2 + i] += pads[i] + hi;
      anyPad |= pads[i] != 0 || hi != 0;
    }
    if (anyPad)
      x = tensor::PadOp::create(rewriter, loc,
                                RankedTensorType::get(padded, elem), x, low,
                                high, padValue);

    // Window sums of narrow floats accumulate in float32 (the named ops
    // extend the input to the accumulator's type); maxima are exact.
    RankedTensorType accType =
        isMax ? resultType : resultType.clone(computeType(elem));
    Value init = createFilledTensor(
        rewriter, loc, out,
        isMax ? padValue
              : createZeroConstant(rewriter, loc, accType.getElementType()));
    Value pooled;
    if (spatial <= 2) {
      Value window = tensor::EmptyOp::create(rewriter, loc, kernel, elem);
      pooled = isMax ? namedWindowOpForRank<linalg::PoolingNcwMaxOp,
                                            linalg::PoolingNchwMaxOp>(
                           spatial, rewriter, loc, accType, {x, window}, init,
                           strides, dils)
                     : namedWindowOpForRank<linalg::PoolingNcwSumOp,
                                            linalg::PoolingNchwSumOp>(
                           spatial, rewriter, loc, accType, {x, window}, init,
                           strides, dils);
    } else {
      // Loops: n, c, o_1..o_s | k_1..k_s; an unread window operand gives
      // the k loops their extent, as in the named pooling ops.
      MLIRContext *ctx = rewriter.getContext();
      int64_t loops = 2 + 2 * spatial;
      auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
      SmallVector<AffineExpr> xe = {d(0), d(1)}, we, oe = {d(0), d(1)};
      for (int64_t i = 0; i < spatial; ++i) {
        xe.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dils[i]);
        we.push_back(d(2 + spatial + i));
        oe.push_back(d(2 + i));
      }
      Value window = tensor::EmptyOp::create(rewriter, loc, kernel, elem);
      SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xe, ctx),
                                     AffineMap::get(loops, 0, we, ctx),
                                     AffineMap::get(loops, 0, oe, ctx)};
      SmallVector<utils::IteratorType> iters = parallelIterators(loops);
      for (int64_t i = 2 + spatial; i < loops; ++i)
        iters[i] = utils::IteratorType::reduction;
      pooled =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{accType}, ValueRange{x, window},
              ValueRange{init}, maps, iters,
              [isMax](OpBuilder &b, Location l, ValueRange args) {
                Value x = castFloat(b, l, args[0],
                                    cast<FloatType>(args[2].getType()));
                Value r =
                    isMax ? Value(arith::MaximumFOp::create(b, l, x, args[2]))
                          : Value(arith::AddFOp::create(b, l, x, args[2]));
                linalg::YieldOp::create(b, l, ValueRange{r});
              })
              .getResult(0);
    }
    if (!isMax)
      pooled = divideByCount(rewriter, loc, op, pooled);
    rewriter.replaceOp(op, convertFloatElements(rewriter, loc, pooled, elem));
    return success();
  }

  /// Divides window sums by the number of counted elements per window:
  /// input elements, plus declared padding with count_include_pad. The count
  /// factors per spatial dim; a uniform count becomes a scalar, otherwise a
  /// dense constant over the output's spatial dims.
  static Value divideByCount(OpBuilder &b, Location loc, PoolOp op,
                             Value sums) {
    auto type = cast<RankedTensorType>(sums.getType());
    Type elem = type.getElementType();
    int64_t rank = type.getRank();
    SmallVector<int64_t> counts = poolWindowCounts(op);
    MLIRContext *ctx = b.getContext();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    if (llvm::all_equal(counts)) {
      double total = counts.empty() ? 1.0 : static_cast<double>(counts.front());
      return buildParallelGeneric(
          b, loc, ValueRange{sums}, {id}, type,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value cnt = createFloatConstant(nb, l, elem, total);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::DivFOp::create(nb, l, args[0], cnt)});
          });
    }
    ArrayRef<int64_t> spatialShape = type.getShape().drop_front(2);
    SmallVector<Attribute> values;
    for (int64_t count : counts)
      values.push_back(b.getFloatAttr(elem, static_cast<double>(count)));
    auto countType = RankedTensorType::get(spatialShape, elem);
    Value countTensor = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(countType, values));
    return buildParallelGeneric(
        b, loc, ValueRange{sums, countTensor},
        {id, dimRangeMap(ctx, rank, 2, rank)}, type,
        [](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::DivFOp::create(nb, l, args[0], args[1])});
        });
  }
};

//===----------------------------------------------------------------------===//
// loom.attention
//===----------------------------------------------------------------------===//

struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value mask = adaptor.getMask();
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    auto vt = cast<RankedTensorType>(v.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elem = qt.getElementType();
    if (kt.getElementType() != elem || vt.getElementType() != elem) {
      op.emitOpError("lowering needs query, key and value of one element type");
      return rewriter.notifyMatchFailure(op, "mixed element types");
    }
    Type maskElem;
    if (mask) {
      maskElem = cast<RankedTensorType>(mask.getType()).getElementType();
      if (!maskElem.isInteger(1) && !isa<FloatType>(maskElem)) {
        op.emitOpError("mask must be i1 or float, got ") << maskElem;
        return rewriter.notifyMatchFailure(op, "integer mask");
      }
    }
    int64_t B = qt.getDimSize(0), hq = qt.getDimSize(1), sq = qt.getDimSize(2),
            d = qt.getDimSize(3);
    int64_t hkv = kt.getDimSize(1), skv = kt.getDimSize(2),
            dv = vt.getDimSize(3);
    int64_t g = hq / hkv;
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)d);
    // Scores, softmax and output of narrow floats are float32 (the batch
    // matmuls extend q, k and v); the result is rounded once.
    Type narrow = elem;
    elem = computeType(elem);
    Value zero = createZeroConstant(rewriter, loc, elem);

    // q [B, Hq, Sq, D] -> [B, Hkv, G, Sq, D] -> [B * Hkv, G * Sq, D]: query
    // heads h * G .. h * G + G - 1 share kv head h.
    auto toGrouped = [&](Value t, int64_t last) {
      Value e = createExpandShape(rewriter, loc, t, {B, hkv, g, sq, last},
                                  mergePair(1, 5));
      return createCollapseShape(rewriter, loc, e, {{0, 1}, {2, 3}, {4}});
    };
    auto fromGrouped = [&](Value t, int64_t last) {
      Value e = createExpandShape(rewriter, loc, t, {B, hkv, g, sq, last},
                                  {{0, 1}, {2, 3}, {4}});
      return createCollapseShape(rewriter, loc, e, mergePair(1, 5));
    };
    Value q3 = toGrouped(q, d);
    Value kT =
        linalg::TransposeOp::create(
            rewriter, loc, k,
            tensor::EmptyOp::create(rewriter, loc,
                                    ArrayRef<int64_t>{B, hkv, d, skv}, narrow),
            ArrayRef<int64_t>{0, 1, 3, 2})
            .getResult()[0];
    Value k3 = createCollapseShape(rewriter, loc, kT, {{0, 1}, {2}, {3}});
    Value scores3 = createBatchMatmul(
        rewriter, loc, q3, k3,
        RankedTensorType::get({B * hkv, g * sq, skv}, elem), zero);
    Value scores = fromGrouped(scores3, skv);

    // scores * scale, masked, then a stable softmax over the keys.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<int64_t> scoreShape = {B, hq, sq, skv};
    auto scoreType = RankedTensorType::get(scoreShape, elem);
    AffineMap id = rewriter.getMultiDimIdentityMap(4);
    SmallVector<Value> inputs = {scores};
    SmallVector<AffineMap> maps = {id};
    if (mask) {
      inputs.push_back(mask);
      maps.push_back(AffineMap::get(
          4, 0,
          broadcastExprs(ctx, cast<RankedTensorType>(mask.getType()).getShape(),
                         scoreShape),
          ctx));
    }
    bool causal = op.getCausal();
    Value masked = buildParallelGeneric(
        rewriter, loc, inputs, maps, scoreType,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value s = arith::MulFOp::create(
              b, l, args[0], createFloatConstant(b, l, elem, scale));
          Value ninf = createInfinity(b, l, elem, /*negative=*/true);
          if (mask && maskElem.isInteger(1)) {
            s = arith::SelectOp::create(b, l, args[1], s, ninf);
          } else if (mask) {
            Value m = args[1];
            if (maskElem != elem)
              m = maskElem.getIntOrFloatBitWidth() <
                          elem.getIntOrFloatBitWidth()
                      ? Value(arith::ExtFOp::create(b, l, elem, m))
                      : Value(arith::TruncFOp::create(b, l, elem, m));
            s = arith::AddFOp::create(b, l, s, m);
          }
          if (causal) {
            Value i = linalg::IndexOp::create(b, l, 2);
            Value j = linalg::IndexOp::create(b, l, 3);
            Value after =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, j, i);
            s = arith::SelectOp::create(b, l, after, ninf, s);
          }
          linalg::YieldOp::create(b, l, ValueRange{s});
        });

    SmallVector<int64_t> rowShape = {B, hq, sq};
    AffineMap row = dimRangeMap(ctx, 4, 0, 3);
    Value exp = buildRowMaxAndExp(rewriter, loc, masked, /*axis=*/3).second;
    Value sum = buildReduce<arith::AddFOp>(
        rewriter, loc, exp, createFilledTensor(rewriter, loc, rowShape, zero),
        /*dims=*/3);
    Value probs = buildParallelGeneric(
        rewriter, loc, ValueRange{exp, sum}, {id, row}, scoreType,
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l, ValueRange{arith::DivFOp::create(b, l, args[0], args[1])});
        });

    // probs [B * Hkv, G * Sq, Skv] x v [B * Hkv, Skv, Dv].
    Value p3 = toGrouped(probs, skv);
    Value v3 = createCollapseShape(rewriter, loc, v, {{0, 1}, {2}, {3}});
    Value out3 = createBatchMatmul(
        rewriter, loc, p3, v3,
        RankedTensorType::get({B * hkv, g * sq, dv}, elem), zero);
    Value result =
        convertFloatElements(rewriter, loc, fromGrouped(out3, dv), narrow);
    if (result.getType() != resultType)
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void mlir::loom::populateLoomComputeToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, ConvLowering, PoolLowering, AttentionLowering>(
      converter, patterns.getContext());
}
