//===- Normalization.cpp - lower loom reductions, softmax and norms -------===//
//
// Lowers loom.reduce, loom.softmax, loom.layer_norm, loom.rms_norm and
// loom.batch_norm to linalg on tensors. Reductions become `linalg.reduce`
// (or a `linalg.generic` with a reduction loop where the reduced value needs
// a broadcast operand, as for the variance, two results, as for
// argmax/argmin, or a narrow float's elements extended as they are read,
// buildReduction), accumulated in the element type, or in float32 for
// narrower floats (computeType: softmax and the norms compute in float32
// throughout and round their result once); everything elementwise
// around them is a parallel `linalg.generic` that the elementwise fusion pass
// merges afterwards. The order of operations follows the reference
// interpreter (test/Conformance/loom_reference.py): mean is sum / count, l2
// is sqrt(sum(x * x)), softmax subtracts the maximum before exponentiating,
// and the norms divide by sqrt(var + epsilon) rather than multiplying by an
// rsqrt, so results agree with numpy to float32 rounding.
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

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The number of elements of `type` along `dims`.
static int64_t countAlong(RankedTensorType type, ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims)
    count *= type.getDimSize(d);
  return count;
}

/// Sum of `input` (float) over `dims`, in float `acc` (each element extended
/// to it first).
static Value sumOver(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> dims, bool squared, Type acc) {
  auto type = cast<RankedTensorType>(input.getType());
  Value init = createFilledTensor(b, loc, keptShape(type.getShape(), dims),
                                  createFloatConstant(b, loc, acc, 0.0));
  return buildReduction(
      b, loc, input, init, dims,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = castFloat(nb, nl, args[0], cast<FloatType>(acc));
        if (squared)
          x = arith::MulFOp::create(nb, nl, x, x);
        linalg::YieldOp::create(
            nb, nl, ValueRange{arith::AddFOp::create(nb, nl, x, args[1])});
      });
}

/// Re-inserts the reduced `axes` of a rank-`rank` tensor as unit dims.
static SmallVector<ReassociationIndices>
keepDimsReassociation(int64_t rank, ArrayRef<int64_t> axes) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      if (groups.empty())
        leading.push_back(d);
      else
        groups.back().push_back(d);
      continue;
    }
    ReassociationIndices group = leading;
    leading.clear();
    group.push_back(d);
    groups.push_back(group);
  }
  return groups;
}

//===----------------------------------------------------------------------===//
// loom.reduce
//===----------------------------------------------------------------------===//

/// What an element contributes before accumulation: |x| for l1, x * x for l2
/// and sum_square. i1 reductions are logical (any/all) and take x as is.
static Value preReduce(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                       bool isUnsigned) {
  Type t = x.getType();
  if (t.isInteger(1))
    return x;
  bool isFloat = isa<FloatType>(t);
  switch (kind) {
  case ReduceKind::l1:
    if (isFloat)
      return math::AbsFOp::create(b, loc, x);
    return isUnsigned ? x : Value(math::AbsIOp::create(b, loc, x));
  case ReduceKind::l2:
  case ReduceKind::sum_square:
    if (isFloat)
      return arith::MulFOp::create(b, loc, x, x);
    return arith::MulIOp::create(b, loc, x, x);
  default:
    return x;
  }
}

/// The accumulation step. On i1, numpy's sum/mean/l1/l2/max cast back to
/// bool are "any", prod/min are "all".
static Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                     Value acc, bool isUnsigned) {
  Type t = x.getType();
  if (t.isInteger(1)) {
    if (kind == ReduceKind::prod || kind == ReduceKind::min)
      return arith::AndIOp::create(b, loc, x, acc);
    return arith::OrIOp::create(b, loc, x, acc);
  }
  if (isa<FloatType>(t)) {
    switch (kind) {
    case ReduceKind::max:
      return arith::MaximumFOp::create(b, loc, x, acc);
    case ReduceKind::min:
      return arith::MinimumFOp::create(b, loc, x, acc);
    case ReduceKind::prod:
      return arith::MulFOp::create(b, loc, x, acc);
    default:
      return arith::AddFOp::create(b, loc, x, acc);
    }
  }
  switch (kind) {
  case ReduceKind::max:
    return isUnsigned ? Value(arith::MaxUIOp::create(b, loc, x, acc))
                      : Value(arith::MaxSIOp::create(b, loc, x, acc));
  case ReduceKind::min:
    return isUnsigned ? Value(arith::MinUIOp::create(b, loc, x, acc))
                      : Value(arith::MinSIOp::create(b, loc, x, acc));
  case ReduceKind::prod:
    return arith::MulIOp::create(b, loc, x, acc);
  default:
    return arith::AddIOp::create(b, loc, x, acc);
  }
}

/// The neutral element of `combine` (also the start of argmax/argmin, which
/// reduce with max/min).
static Value reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind,
                            Type elem, bool isUnsigned) {
  bool isMax = kind == ReduceKind::max || kind == ReduceKind::argmax;
  bool isMin = kind == ReduceKind::min || kind == ReduceKind::argmin;
  if (isa<FloatType>(elem)) {
    if (isMax || isMin)
      return createInfinity(b, loc, elem, /*negative=*/isMax);
    return createFloatConstant(b, loc, elem,
                               kind == ReduceKind::prod ? 1.0 : 0.0);
  }
  unsigned width = elem.getIntOrFloatBitWidth();
  APInt value(width, 0);
  if (elem.isInteger(1)) {
    if (kind == ReduceKind::prod || kind == ReduceKind::min)
      value = APInt::getAllOnes(1);
    if (kind == ReduceKind::argmin)
      value = APInt::getAllOnes(1);
  } else if (isMax) {
    value = isUnsigned ? APInt::getMinValue(width)
                       : APInt::getSignedMinValue(width);
  } else if (isMin) {
    value = isUnsigned ? APInt::getMaxValue(width)
                       : APInt::getSignedMaxValue(width);
  } else if (kind == ReduceKind::prod) {
    value = APInt(width, 1);
  }
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(elem, value));
}

/// After accumulation: mean divides by the count, l2 takes the square root
/// (integers go through f64 and truncate, as numpy's astype does).
static Value postReduce(OpBuilder &b, Location loc, ReduceKind kind, Value acc,
                        int64_t count, bool isUnsigned) {
  Type t = acc.getType();
  if (t.isInteger(1))
    return acc;
  bool isFloat = isa<FloatType>(t);
  if (kind == ReduceKind::mean) {
    if (isFloat)
      return arith::DivFOp::create(
          b, loc, acc, createFloatConstant(b, loc, t, (double)count));
    Value n = arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, count));
    return isUnsigned ? Value(arith::DivUIOp::create(b, loc, acc, n))
                      : Value(arith::DivSIOp::create(b, loc, acc, n));
  }
  if (kind == ReduceKind::l2) {
    if (isFloat)
      return math::SqrtOp::create(b, loc, acc);
    Type f64 = b.getF64Type();
    Value f = isUnsigned ? Value(arith::UIToFPOp::create(b, loc, f64, acc))
                         : Value(arith::SIToFPOp::create(b, loc, f64, acc));
    f = math::SqrtOp::create(b, loc, f);
    return isUnsigned ? Value(arith::FPToUIOp::create(b, loc, t, f))
                      : Value(arith::FPToSIOp::create(b, loc, t, f));
  }
  return acc;
}

namespace {
struct ReduceLowering : RankedResultConversion<ReduceOp> {
  using RankedResultConversion::RankedResultConversion;

  LogicalResult lower(ReduceOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    Type elem = inType.getElementType();
    bool isUnsigned =
        op.getInput().getType().getElementType().isUnsignedInteger();
    ArrayRef<int64_t> axes = op.getAxes();
    ReduceKind kind = op.getKind();
    int64_t rank = inType.getRank();
    // Sums and products of narrow floats accumulate in float32, each element
    // extended as the loop reads it (buildReduction); max, min and their
    // indices are exact in any type.
    bool extremum = kind == ReduceKind::max || kind == ReduceKind::min ||
                    kind == ReduceKind::argmax || kind == ReduceKind::argmin;
    bool widen = !extremum && computeType(elem) != elem;
    if (widen)
      elem = computeType(elem);
    SmallVector<int64_t> reducedShape = keptShape(inType.getShape(), axes);

    Value reduced;
    if (kind == ReduceKind::argmax || kind == ReduceKind::argmin) {
      // i1 compares as unsigned (true > false), as numpy's bools do.
      reduced = buildArgReduce(rewriter, loc, input, axes[0], kind,
                               isUnsigned || elem.isInteger(1));
    } else {
      Value init = createFilledTensor(
          rewriter, loc, reducedShape,
          reduceIdentity(rewriter, loc, kind, elem, isUnsigned));
      reduced = buildReduction(
          rewriter, loc, input, init, axes,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value x = args[0];
            if (widen)
              x = castFloat(b, l, x, cast<FloatType>(elem));
            x = preReduce(b, l, kind, x, isUnsigned);
            linalg::YieldOp::create(
                b, l, ValueRange{combine(b, l, kind, x, args[1], isUnsigned)});
          });
      if (kind == ReduceKind::mean || kind == ReduceKind::l2) {
        int64_t count = countAlong(inType, axes);
        auto type = RankedTensorType::get(reducedShape, elem);
        reduced = buildParallelGeneric(
            rewriter, loc, ValueRange{reduced},
            {rewriter.getMultiDimIdentityMap(type.getRank())}, type,
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l,
                  ValueRange{
                      postReduce(b, l, kind, args[0], count, isUnsigned)});
            });
      }
    }
    reduced = convertFloatElements(rewriter, loc, reduced,
                                   resultType.getElementType());
    if (op.getKeepDims() && !axes.empty())
      reduced =
          tensor::ExpandShapeOp::create(rewriter, loc, resultType, reduced,
                                        keepDimsReassociation(rank, axes));
    rewriter.replaceOp(op, reduced);
    return success();
  }

  /// Index of the first maximum (minimum) along `axis`, as i64. Float NaN
  /// counts as the extreme (numpy returns the first NaN).
  static Value buildArgReduce(OpBuilder &b, Location loc, Value input,
                              int64_t axis, ReduceKind kind, bool isUnsigned) {
    auto type = cast<RankedTensorType>(input.getType());
    Type elem = type.getElementType();
    int64_t rank = type.getRank();
    SmallVector<int64_t> shape = keptShape(type.getShape(), axis);
    Value values = createFilledTensor(
        b, loc, shape, reduceIdentity(b, loc, kind, elem, isUnsigned));
    Value indices = createFilledTensor(
        b, loc, shape,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
    MLIRContext *ctx = b.getContext();
    AffineMap outMap = keptDimsMap(ctx, rank, axis);
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), outMap,
                                   outMap};
    SmallVector<utils::IteratorType> iters = parallelIterators(rank);
    iters[axis] = utils::IteratorType::reduction;
    bool isMax = kind == ReduceKind::argmax;
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{values.getType(), indices.getType()},
        ValueRange{input}, ValueRange{values, indices}, maps, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = args[0], cur = args[1], curIdx = args[2];
          Value better;
          if (isa<FloatType>(elem)) {
            better = arith::CmpFOp::create(nb, l,
                                           isMax ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT,
                                           x, cur);
            Value xNan =
                arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, x, x);
            Value curOrdered = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::ORD, cur, cur);
            better = arith::OrIOp::create(
                nb, l, better, arith::AndIOp::create(nb, l, xNan, curOrdered));
          } else {
            arith::CmpIPredicate pred =
                isMax ? (isUnsigned ? arith::CmpIPredicate::ugt
                                    : arith::CmpIPredicate::sgt)
                      : (isUnsigned ? arith::CmpIPredicate::ult
                                    : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(nb, l, pred, x, cur);
          }
          Value idx = arith::IndexCastOp::create(
              nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, axis));
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, better, x, cur),
                         arith::SelectOp::create(nb, l, better, idx, curIdx)});
        });
    return generic.getResult(1);
  }
};

//===----------------------------------------------------------------------===//
// loom.softmax
//===----------------------------------------------------------------------===//

/// max, exp(x - max), sum, then e / sum (or x - max - log(sum)).
struct SoftmaxLowering : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Type elem = getElementTypeOrSelf(x.getType());
    x = convertFloatElements(rewriter, loc, x, computeType(elem));
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap row = keptDimsMap(rewriter.getContext(), rank, axis);

    auto [max, exp] = buildRowMaxAndExp(rewriter, loc, x, axis);
    Value sum = sumOver(rewriter, loc, exp, axis, /*squared=*/false,
                        type.getElementType());
    Value result;
    if (op.getLog()) {
      result = buildParallelGeneric(
          rewriter, loc, ValueRange{x, max, sum}, {id, row, row}, type,
          [](OpBuilder &b, Location l, ValueRange args) {
            Value d = arith::SubFOp::create(b, l, args[0], args[1]);
            Value lse = math::LogOp::create(b, l, args[2]);
            linalg::YieldOp::create(
                b, l, ValueRange{arith::SubFOp::create(b, l, d, lse)});
          });
    } else {
      result = buildParallelGeneric(
          rewriter, loc, ValueRange{exp, sum}, {id, row}, type,
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::DivFOp::create(b, l, args[0], args[1])});
          });
    }
    rewriter.replaceOp(op, convertFloatElements(rewriter, loc, result, elem));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// loom.layer_norm, loom.rms_norm
//===----------------------------------------------------------------------===//

/// sqrt(sum / count + epsilon) per row, for the norms.
static Value rowDenominator(OpBuilder &b, Location loc, Value sum,
                            int64_t count, double epsilon) {
  auto type = cast<RankedTensorType>(sum.getType());
  Type elem = type.getElementType();
  return buildParallelGeneric(
      b, loc, ValueRange{sum}, {b.getMultiDimIdentityMap(type.getRank())}, type,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value mean = arith::DivFOp::create(
            nb, l, args[0], createFloatConstant(nb, l, elem, (double)count));
        Value v = arith::AddFOp::create(
            nb, l, mean, createFloatConstant(nb, l, elem, epsilon));
        linalg::YieldOp::create(nb, l,
                                ValueRange{math::SqrtOp::create(nb, l, v)});
      });
}

/// What layer_norm and rms_norm share: the trailing dims [axis, rank) they
/// normalize over, the element count of one row, and the maps that read the
/// input (`identity`), a per-row value (`outer`) and a per-row-element one
/// such as scale and bias (`inner`).
struct TrailingNorm {
  SmallVector<int64_t> dims;
  int64_t count;
  AffineMap identity, outer, inner;
};

static TrailingNorm trailingNorm(OpBuilder &b, RankedTensorType type,
                                 int64_t axis) {
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  int64_t count = countAlong(type, dims);
  return {dims, count, b.getMultiDimIdentityMap(rank),
          dimRangeMap(ctx, rank, 0, axis), dimRangeMap(ctx, rank, axis, rank)};
}

/// Appends `operand` to `inputs`, read through `map`, when it is present;
/// returns whether it was.
static bool appendIfPresent(SmallVectorImpl<Value> &inputs,
                            SmallVectorImpl<AffineMap> &maps, Value operand,
                            AffineMap map) {
  if (!operand)
    return false;
  inputs.push_back(operand);
  maps.push_back(map);
  return true;
}

/// mean, then the sum of squared deviations (a generic reduction reading the
/// broadcast mean), then (x - mean) / sqrt(var + eps) * scale + bias.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    // Every loop reads the operands as they are and extends each element to
    // `elem` (float32 for a narrow float); the result is rounded once.
    auto elem = cast<FloatType>(computeType(type.getElementType()));
    int64_t rank = type.getRank(), axis = op.getAxis();
    TrailingNorm norm = trailingNorm(rewriter, type, axis);
    auto rowType =
        RankedTensorType::get(type.getShape().take_front(axis), elem);

    Value sum = sumOver(rewriter, loc, x, norm.dims, /*squared=*/false, elem);
    Value mean = buildParallelGeneric(
        rewriter, loc, ValueRange{sum}, {rewriter.getMultiDimIdentityMap(axis)},
        rowType, [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::DivFOp::create(
                  b, l, args[0],
                  createFloatConstant(b, l, elem, (double)norm.count))});
        });
    SmallVector<utils::IteratorType> iters = parallelIterators(rank);
    for (int64_t d : norm.dims)
      iters[d] = utils::IteratorType::reduction;
    Value zeros =
        createFilledTensor(rewriter, loc, rowType.getShape(),
                           createFloatConstant(rewriter, loc, elem, 0.0));
    Value sqDev =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{rowType}, ValueRange{x, mean},
            ValueRange{zeros},
            SmallVector<AffineMap>{norm.identity, norm.outer, norm.outer},
            iters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value d = arith::SubFOp::create(
                  b, l, castFloat(b, l, args[0], elem), args[1]);
              Value sq = arith::MulFOp::create(b, l, d, d);
              linalg::YieldOp::create(
                  b, l, ValueRange{arith::AddFOp::create(b, l, sq, args[2])});
            })
            .getResult(0);
    Value denom = rowDenominator(rewriter, loc, sqDev, norm.count,
                                 op.getEpsilon().convertToDouble());

    SmallVector<Value> inputs = {x, mean, denom, adaptor.getScale()};
    SmallVector<AffineMap> maps = {norm.identity, norm.outer, norm.outer,
                                   norm.inner};
    bool hasBias = appendIfPresent(inputs, maps, adaptor.getBias(), norm.inner);
    Value result = buildParallelGeneric(
        rewriter, loc, inputs, maps, type,
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto wide = [&](unsigned i) {
            return castFloat(b, l, args[i], elem);
          };
          Value d = arith::SubFOp::create(b, l, wide(0), args[1]);
          Value y = arith::DivFOp::create(b, l, d, args[2]);
          y = arith::MulFOp::create(b, l, y, wide(3));
          if (hasBias)
            y = arith::AddFOp::create(b, l, y, wide(4));
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  castFloat(b, l, y, cast<FloatType>(type.getElementType()))});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// x / sqrt(mean(x * x) + eps) [* scale].
struct RmsNormLowering : OpConversionPattern<RmsNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RmsNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    // As layer_norm: extended element by element, rounded once.
    auto elem = cast<FloatType>(computeType(type.getElementType()));
    TrailingNorm norm = trailingNorm(rewriter, type, op.getAxis());

    Value sumSq = sumOver(rewriter, loc, x, norm.dims, /*squared=*/true, elem);
    Value denom = rowDenominator(rewriter, loc, sumSq, norm.count,
                                 op.getEpsilon().convertToDouble());
    SmallVector<Value> inputs = {x, denom};
    SmallVector<AffineMap> maps = {norm.identity, norm.outer};
    bool hasScale =
        appendIfPresent(inputs, maps, adaptor.getScale(), norm.inner);
    Value result = buildParallelGeneric(
        rewriter, loc, inputs, maps, type,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value y = arith::DivFOp::create(b, l, castFloat(b, l, args[0], elem),
                                          args[1]);
          if (hasScale)
            y = arith::MulFOp::create(b, l, y, castFloat(b, l, args[2], elem));
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  castFloat(b, l, y, cast<FloatType>(type.getElementType()))});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// loom.batch_norm
//===----------------------------------------------------------------------===//

/// (x - mean) / sqrt(var + eps) * scale + bias, per channel (dim 1).
struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    Type elem = type.getElementType();
    int64_t rank = type.getRank();
    AffineMap channel = dimRangeMap(rewriter.getContext(), rank, 1, 2);
    double epsilon = op.getEpsilon().convertToDouble();
    Value result = buildParallelGeneric(
        rewriter, loc,
        ValueRange{x, adaptor.getMean(), adaptor.getVariance(),
                   adaptor.getScale(), adaptor.getBias()},
        {rewriter.getMultiDimIdentityMap(rank), channel, channel, channel,
         channel},
        type, [&](OpBuilder &b, Location l, ValueRange operands) {
          // In float32 for narrow floats, rounded once.
          auto wide = cast<FloatType>(computeType(elem));
          SmallVector<Value> args;
          for (Value v : operands.drop_back())
            args.push_back(castFloat(b, l, v, wide));
          Value d = arith::SubFOp::create(b, l, args[0], args[1]);
          Value v = arith::AddFOp::create(
              b, l, args[2], createFloatConstant(b, l, wide, epsilon));
          Value y =
              arith::DivFOp::create(b, l, d, math::SqrtOp::create(b, l, v));
          y = arith::MulFOp::create(b, l, y, args[3]);
          y = arith::AddFOp::create(b, l, y, args[4]);
          linalg::YieldOp::create(
              b, l, ValueRange{castFloat(b, l, y, cast<FloatType>(elem))});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void mlir::loom::populateLoomNormalizationToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, SoftmaxLowering, LayerNormLowering,
               RmsNormLowering, BatchNormLowering>(converter,
                                                   patterns.getContext());
}
