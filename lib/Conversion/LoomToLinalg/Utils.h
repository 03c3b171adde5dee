//===- Utils.h - helpers shared by the loom->linalg patterns ----*- C++ -*-===//
//
// The pattern files of the LoomToLinalg conversion (Elementwise, Shape,
// Compute, Normalization, Indexing) build the same small pieces of IR again
// and again: scalar constants, `tensor.empty` and `linalg.fill` inits,
// identity and broadcast indexing maps, parallel `linalg.generic`s, and
// expand/collapse reshapes; and most patterns start by converting their
// single ranked result type. Those pieces live here, once, so that every
// pattern builds them the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H
#define LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::loom {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// The converted (signless) ranked tensor type of `result`, or null when the
/// converter does not turn it into a ranked tensor.
RankedTensorType convertedResultType(const TypeConverter *converter,
                                     Value result);

/// True for integer element types read as unsigned: `ui*` and `i1` (numpy's
/// bool orders false < true and never sign-extends). Looks through shaped
/// types to their element type.
bool isUnsignedInt(Type type);

/// The element type that an op on `elem` accumulates and computes in:
/// float32 for floats narrower than 32 bits (bf16, f16, the 8-bit floats),
/// so that a sum of K products rounds once rather than K times, as cuBLAS,
/// cuDNN and PyTorch's kernels compute 16-bit floats; `elem` otherwise.
Type computeType(Type elem);

//===----------------------------------------------------------------------===//
// Constants and inits
//===----------------------------------------------------------------------===//

/// `arith.constant` of float type `type` holding `value`.
Value createFloatConstant(OpBuilder &b, Location loc, Type type, double value);

/// `arith.constant` of integer (or index) type `type` holding `value`.
Value createIntConstant(OpBuilder &b, Location loc, Type type, int64_t value);

/// `arith.constant` holding the zero of `type`.
Value createZeroConstant(OpBuilder &b, Location loc, Type type);

/// `arith.constant` holding +inf (or -inf with `negative`) of float `type`.
Value createInfinity(OpBuilder &b, Location loc, Type type, bool negative);

/// `tensor.empty` of the shape and element type of `type`.
Value createEmptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// A `tensor.empty` of `shape` (and the type of `scalar`) filled with
/// `scalar` by `linalg.fill`.
Value createFilledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Value scalar);

/// A `tensor.empty` of `type` filled with the constant `value`; the empty
/// tensor is created before the constant.
Value createFilledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                         TypedAttr value);

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// `tensor.expand_shape` of `v` to `shape` (same element type) by `groups`.
Value createExpandShape(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> shape,
                        ArrayRef<ReassociationIndices> groups);

/// `tensor.collapse_shape` of `v` by `groups` (result type inferred).
Value createCollapseShape(OpBuilder &b, Location loc, Value v,
                          ArrayRef<ReassociationIndices> groups);

//===----------------------------------------------------------------------===//
// Indexing maps and linalg.generic
//===----------------------------------------------------------------------===//

/// `n` parallel iterators.
SmallVector<utils::IteratorType> parallelIterators(int64_t n);

/// (d0, ..., d{rank-1}) -> the dims of [begin, end).
AffineMap dimRangeMap(MLIRContext *ctx, int64_t rank, int64_t begin,
                      int64_t end);

/// The results of a map that reads an operand of shape `operandShape` inside
/// the loops of `loopShape` with numpy broadcasting: the operand's dims align
/// with the trailing loop dims, and its size-1 dims that broadcast read
/// index 0.
SmallVector<AffineExpr> broadcastExprs(MLIRContext *ctx,
                                       ArrayRef<int64_t> operandShape,
                                       ArrayRef<int64_t> loopShape);

/// The same as a map over exactly the loops of `loopShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> loopShape);

/// `shape` without the dims in `dropped`.
SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> dropped);

/// (d0, ..., d{rank-1}) -> every dim not in `dropped`.
AffineMap keptDimsMap(MLIRContext *ctx, int64_t rank,
                      ArrayRef<int64_t> dropped);

/// The body of a `linalg.generic`: block arguments in, `linalg.yield` out.
using GenericBodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;

/// An all-parallel `linalg.generic` over `outType` that reads `inputs`
/// through `inputMaps` and writes a fresh `tensor.empty` through the identity
/// map; `body` must end with `linalg.yield`.
Value buildParallelGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps,
                           RankedTensorType outType, GenericBodyFn body);

/// The float scalar `v` converted to `to` (f16 <-> bf16, of one width, go
/// through float32).
Value castFloat(OpBuilder &b, Location loc, Value v, FloatType to);

/// `v`, a float tensor, with its elements extended or rounded to the float
/// `elem` by a parallel `linalg.generic`; `v` itself when they already are.
Value convertFloatElements(OpBuilder &b, Location loc, Value v, Type elem);

/// `linalg.reduce` of `input` over `dims` into `init`, combining with the
/// binary op `CombineOp` (the element first, the accumulator second).
template <typename CombineOp>
Value buildReduce(OpBuilder &b, Location loc, Value input, Value init,
                  ArrayRef<int64_t> dims) {
  return linalg::ReduceOp::create(
             b, loc, ValueRange{input}, ValueRange{init}, dims,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{CombineOp::create(nb, l, args[0], args[1])});
             })
      .getResult(0);
}

/// A reduction of `input` over `dims` into `init` by `body` (the element
/// and the accumulator in, `linalg.yield` out): `linalg.reduce` where their
/// element types agree, else a `linalg.generic` with reduction loops (a
/// narrow float summed in float32, each element extended in `body`), which
/// the elementwise fusion pass can also fuse an extension into.
Value buildReduction(OpBuilder &b, Location loc, Value input, Value init,
                     ArrayRef<int64_t> dims, GenericBodyFn body);

/// The first steps of a softmax that cannot overflow, over dim `axis` of the
/// float tensor `x`: the row maximum (a `linalg.reduce` from -inf), then
/// `exp(x - max)` with the maximum read back along the rows. Returns
/// {max, exp}.
std::pair<Value, Value> buildRowMaxAndExp(OpBuilder &b, Location loc, Value x,
                                          int64_t axis);

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Base for patterns of single-result ops whose result converts to a ranked
/// tensor: converts the result type, fails the match when it does not
/// convert, and otherwise calls `lower` with the converted type.
template <typename OpTy>
class RankedResultConversion : public OpConversionPattern<OpTy> {
public:
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    RankedTensorType resultType =
        convertedResultType(this->getTypeConverter(), op->getResult(0));
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "unconvertible result type");
    return lower(op, adaptor, resultType, rewriter);
  }

  /// Rewrites `op`, whose converted result type is `resultType`.
  virtual LogicalResult lower(OpTy op, OpAdaptor adaptor,
                              RankedTensorType resultType,
                              ConversionPatternRewriter &rewriter) const = 0;
};

} // namespace mlir::loom

#endif // LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H
