//===- Utils.cpp - helpers shared by the loom->linalg patterns ------------===//
//
// The small IR-building helpers that every LoomToLinalg pattern file needs
// (constants, filled inits, reshapes, broadcast maps, parallel generics);
// see Utils.h.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::loom;

RankedTensorType mlir::loom::convertedResultType(const TypeConverter *converter,
                                                 Value result) {
  return dyn_cast_or_null<RankedTensorType>(
      converter->convertType(result.getType()));
}

bool mlir::loom::isUnsignedInt(Type type) {
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return integer && (integer.isUnsigned() || integer.getWidth() == 1);
}

Type mlir::loom::computeType(Type elem) {
  auto f = dyn_cast<FloatType>(elem);
  if (f && f.getWidth() < 32)
    return Float32Type::get(elem.getContext());
  return elem;
}

Value mlir::loom::createFloatConstant(OpBuilder &b, Location loc, Type type,
                                      double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value mlir::loom::createIntConstant(OpBuilder &b, Location loc, Type type,
                                    int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value mlir::loom::createZeroConstant(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc,
                                   cast<TypedAttr>(b.getZeroAttr(type)));
}

Value mlir::loom::createInfinity(OpBuilder &b, Location loc, Type type,
                                 bool negative) {
  const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
  return arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, APFloat::getInf(sem, negative)));
}

Value mlir::loom::createEmptyTensor(OpBuilder &b, Location loc,
                                    RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value mlir::loom::createFilledTensor(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> shape, Value scalar) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, scalar.getType());
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

Value mlir::loom::createFilledTensor(OpBuilder &b, Location loc,
                                     RankedTensorType type, TypedAttr value) {
  Value empty = createEmptyTensor(b, loc, type);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

Value mlir::loom::createExpandShape(OpBuilder &b, Location loc, Value v,
                                    ArrayRef<int64_t> shape,
                                    ArrayRef<ReassociationIndices> groups) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, v, groups);
}

Value mlir::loom::createCollapseShape(OpBuilder &b, Location loc, Value v,
                                      ArrayRef<ReassociationIndices> groups) {
  return tensor::CollapseShapeOp::create(b, loc, v, groups);
}

SmallVector<utils::IteratorType> mlir::loom::parallelIterators(int64_t n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

AffineMap mlir::loom::dimRangeMap(MLIRContext *ctx, int64_t rank, int64_t begin,
                                  int64_t end) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = begin; d < end; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<AffineExpr>
mlir::loom::broadcastExprs(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                           ArrayRef<int64_t> loopShape) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = loopShape.size() - operandShape.size();
  for (auto [i, size] : llvm::enumerate(operandShape)) {
    int64_t loop = offset + static_cast<int64_t>(i);
    if (size == 1 && loopShape[loop] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(loop, ctx));
  }
  return exprs;
}

AffineMap mlir::loom::broadcastMap(MLIRContext *ctx,
                                   ArrayRef<int64_t> operandShape,
                                   ArrayRef<int64_t> loopShape) {
  return AffineMap::get(loopShape.size(), 0,
                        broadcastExprs(ctx, operandShape, loopShape), ctx);
}

SmallVector<int64_t> mlir::loom::keptShape(ArrayRef<int64_t> shape,
                                           ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> kept;
  for (auto [d, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(dropped, (int64_t)d))
      kept.push_back(size);
  return kept;
}

AffineMap mlir::loom::keptDimsMap(MLIRContext *ctx, int64_t rank,
                                  ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value mlir::loom::buildParallelGeneric(OpBuilder &b, Location loc,
                                       ValueRange inputs,
                                       ArrayRef<AffineMap> inputMaps,
                                       RankedTensorType outType,
                                       GenericBodyFn body) {
  Value init = createEmptyTensor(b, loc, outType);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(outType.getRank()));
  return linalg::GenericOp::create(b, loc, TypeRange{outType}, inputs,
                                   ValueRange{init}, maps,
                                   parallelIterators(outType.getRank()), body)
      .getResult(0);
}

std::pair<Value, Value> mlir::loom::buildRowMaxAndExp(OpBuilder &b,
                                                      Location loc, Value x,
                                                      int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elem = type.getElementType();
  int64_t rank = type.getRank();
  Value maxInit =
      createFilledTensor(b, loc, keptShape(type.getShape(), axis),
                         createInfinity(b, loc, elem, /*negative=*/true));
  Value max = buildReduce<arith::MaximumFOp>(b, loc, x, maxInit, axis);
  Value exp = buildParallelGeneric(
      b, loc, ValueRange{x, max},
      {b.getMultiDimIdentityMap(rank), keptDimsMap(b.getContext(), rank, axis)},
      type, [](OpBuilder &nb, Location l, ValueRange args) {
        Value diff = arith::SubFOp::create(nb, l, args[0], args[1]);
        linalg::YieldOp::create(nb, l,
                                ValueRange{math::ExpOp::create(nb, l, diff)});
      });
  return {max, exp};
}

Value mlir::loom::castFloat(OpBuilder &b, Location loc, Value v, FloatType to) {
  auto from = cast<FloatType>(v.getType());
  if (from == to)
    return v;
  if (from.getWidth() == to.getWidth()) {
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    from = b.getF32Type();
  }
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value mlir::loom::convertFloatElements(OpBuilder &b, Location loc, Value v,
                                       Type elem) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elem)
    return v;
  return buildParallelGeneric(
      b, loc, ValueRange{v}, {b.getMultiDimIdentityMap(type.getRank())},
      type.clone(elem), [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l,
            ValueRange{castFloat(nb, l, args[0], cast<FloatType>(elem))});
      });
}

Value mlir::loom::buildReduction(OpBuilder &b, Location loc, Value input,
                                 Value init, ArrayRef<int64_t> dims,
                                 GenericBodyFn body) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == getElementTypeOrSelf(init.getType()))
    return linalg::ReduceOp::create(b, loc, ValueRange{input}, ValueRange{init},
                                    dims, body)
        .getResult(0);
  int64_t rank = type.getRank();
  SmallVector<utils::IteratorType> iters = parallelIterators(rank);
  for (int64_t d : dims)
    iters[d] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input},
             ValueRange{init},
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank),
                                    keptDimsMap(b.getContext(), rank, dims)},
             iters, body)
      .getResult(0);
}
