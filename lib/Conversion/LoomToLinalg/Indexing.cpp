//===- Indexing.cpp - lower gather, scatter, embedding, topk, MoE routing -===//
//
// The data-dependent ops: what they read or write depends on index values.
// Reads become out-of-place gathers, a `linalg.generic` over the result whose
// body computes the source position from `linalg.index` and an index operand
// and reads it with `tensor.extract` (gather, embedding, moe_dispatch,
// moe_combine). Writes and sequential decisions become `scf.for` nests that
// carry the tensors as iter_args and update them with `tensor.insert`
// (scatter, top_k, and the token routing of the MoE ops), which upstream
// bufferization turns into in-place stores.
//
// Index values never address memory out of bounds. Gather, embedding and
// scatter wrap a negative index once (ONNX: `i + dim`) and then clamp it
// into `[0, dim - 1]`; ONNX leaves out-of-range indices undefined, so this is
// a safe choice, not a semantic one. MoE expert ids outside
// `[0, num_experts)` (negative ones included) are dropped like assignments
// past the capacity.
//
// top_k orders as the reference's stable argsort: ties go to the lowest
// index, NaN comes after every number (largest or smallest), unsigned and
// boolean inputs compare unsigned. Scatter reductions are add, mul, max and
// min (the ones ONNX has); other binary kinds are rejected.
//
// MoE routing follows the op description: tokens in order, and for each token
// its K choices in order, take the next free slot of their expert; an
// assignment finding the expert full is dropped. The routing loop records, per
// expert slot, which token filled it (dispatch) or, per assignment, which slot
// it got (combine); both ops then read through that map with a gather.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "Utils.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// An integer index value widened for arithmetic against extents: at least
/// i64, sign-extended, except i1, which reads as 0/1.
static Value widenIndex(OpBuilder &b, Location loc, Value v) {
  auto type = cast<IntegerType>(v.getType());
  if (type.getWidth() >= 64)
    return v;
  if (type.getWidth() == 1)
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
}

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `v` (an integer index of any width) as an `index` into an extent of `dim`
/// (> 0): negative values count from the end once, then the result is clamped
/// into `[0, dim - 1]` so that no read or write leaves the tensor.
static Value wrapAndClampIndex(OpBuilder &b, Location loc, Value v,
                               int64_t dim) {
  Value w = widenIndex(b, loc, v);
  Type t = w.getType();
  Value zero = createIntConstant(b, loc, t, 0);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, w, zero);
  Value wrapped =
      arith::AddIOp::create(b, loc, w, createIntConstant(b, loc, t, dim));
  w = arith::SelectOp::create(b, loc, neg, wrapped, w);
  w = arith::MaxSIOp::create(b, loc, w, zero);
  w = arith::MinSIOp::create(b, loc, w, createIntConstant(b, loc, t, dim - 1));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), w);
}

/// `ivs` with `v` inserted at position `axis`.
static SmallVector<Value> withAxis(ValueRange ivs, int64_t axis, Value v) {
  SmallVector<Value> pos(ivs.begin(), ivs.end());
  pos.insert(pos.begin() + axis, v);
  return pos;
}

/// Bounds and steps of a loop nest over `shape`.
static void loopBounds(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       SmallVectorImpl<Value> &lbs, SmallVectorImpl<Value> &ubs,
                       SmallVectorImpl<Value> &steps) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  for (int64_t n : shape) {
    lbs.push_back(zero);
    ubs.push_back(indexConst(b, loc, n));
    steps.push_back(one);
  }
}

/// `result[..., i, ...] = data[..., wrap(indices[i]), ...]` along `axis`: a
/// generic over the result that reads the index operand through a projected
/// map and the data with `tensor.extract`. The caller guarantees that
/// `data.shape[axis] > 0` whenever the result is non-empty.
static Value buildGather(OpBuilder &b, Location loc, Value data, Value indices,
                         int64_t axis, RankedTensorType resultType) {
  auto dataType = cast<RankedTensorType>(data.getType());
  int64_t rank = resultType.getRank();
  int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
  int64_t dim = dataType.getDimSize(axis);
  MLIRContext *ctx = b.getContext();

  SmallVector<AffineExpr> indexExprs;
  for (int64_t d = 0; d < indexRank; ++d)
    indexExprs.push_back(getAffineDimExpr(axis + d, ctx));
  return buildParallelGeneric(
      b, loc, indices, AffineMap::get(rank, 0, indexExprs, ctx), resultType,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> pos;
        for (int64_t d = 0; d < axis; ++d)
          pos.push_back(linalg::IndexOp::create(nb, nl, d));
        pos.push_back(wrapAndClampIndex(nb, nl, args[0], dim));
        for (int64_t d = axis + 1; d < dataType.getRank(); ++d)
          pos.push_back(linalg::IndexOp::create(nb, nl, d - 1 + indexRank));
        Value v = tensor::ExtractOp::create(nb, nl, data, pos);
        linalg::YieldOp::create(nb, nl, v);
      });
}

//===----------------------------------------------------------------------===//
// gather, embedding
//===----------------------------------------------------------------------===//

namespace {
struct GatherLowering : RankedResultConversion<GatherOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(GatherOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t axis = op.getAxis();
    if (op.getData().getType().getDimSize(axis) == 0 &&
        resultType.getNumElements() != 0) {
      op.emitOpError("gathers from an empty axis");
      return rewriter.notifyMatchFailure(op, "gather from an empty axis");
    }
    rewriter.replaceOp(op, buildGather(rewriter, op.getLoc(), adaptor.getData(),
                                       adaptor.getIndices(), axis, resultType));
    return success();
  }
};

struct EmbeddingLowering : RankedResultConversion<EmbeddingOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(EmbeddingOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    if (op.getTable().getType().getDimSize(0) == 0 &&
        resultType.getNumElements() != 0) {
      op.emitOpError("looks up rows of an empty table");
      return rewriter.notifyMatchFailure(op, "empty table");
    }
    Value rows =
        adaptor.getRowOffset()
            ? buildRowsOfLargerTable(rewriter, op.getLoc(), adaptor.getTable(),
                                     adaptor.getIndices(),
                                     adaptor.getRowOffset(), *op.getRows(),
                                     resultType)
            : buildGather(rewriter, op.getLoc(), adaptor.getTable(),
                          adaptor.getIndices(), /*axis=*/0, resultType);
    rewriter.replaceOp(op, rows);
    return success();
  }

  /// The embedding of a table holding rows [offset, offset + V) of a
  /// `totalRows`-row one: an id is wrapped and clamped against the whole
  /// table, then looks up its row here or a zero row if another device owns
  /// it.
  static Value buildRowsOfLargerTable(OpBuilder &b, Location loc, Value table,
                                      Value indices, Value offset,
                                      int64_t totalRows,
                                      RankedTensorType resultType) {
    int64_t localRows = cast<RankedTensorType>(table.getType()).getDimSize(0);
    int64_t rank = resultType.getRank();
    MLIRContext *ctx = b.getContext();
    AffineMap indexMap =
        AffineMap::getMultiDimIdentityMap(rank, ctx).getMajorSubMap(rank - 1);
    return buildParallelGeneric(
        b, loc, indices, indexMap, resultType,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value global = wrapAndClampIndex(nb, nl, args[0], totalRows);
          Value local = arith::SubIOp::create(nb, nl, global, offset);
          Value zero = indexConst(nb, nl, 0);
          Value notBelow = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sge, local, zero);
          Value below = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                              local, indexConst(nb, nl, localRows));
          Value owned = arith::AndIOp::create(nb, nl, notBelow, below);
          Value row = arith::SelectOp::create(nb, nl, owned, local, zero);
          Value hidden = linalg::IndexOp::create(nb, nl, rank - 1);
          Value v = tensor::ExtractOp::create(nb, nl, table,
                                              ValueRange{row, hidden});
          Value none = arith::ConstantOp::create(
              nb, nl, nb.getZeroAttr(resultType.getElementType()));
          linalg::YieldOp::create(nb, nl,
                                  arith::SelectOp::create(nb, nl, owned, v, none)
                                      .getResult());
        });
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// scatter
//===----------------------------------------------------------------------===//

/// `cur <kind> upd` for scatter's reduction, numpy's meaning per element type
/// (booleans: add/max are `or`, mul/min are `and`); null if unsupported.
static Value combineScatter(OpBuilder &b, Location loc, BinaryKind kind,
                            bool isUnsigned, Value cur, Value upd) {
  Type t = cur.getType();
  if (isa<FloatType>(t)) {
    switch (kind) {
    case BinaryKind::add:
      return arith::AddFOp::create(b, loc, cur, upd);
    case BinaryKind::mul:
      return arith::MulFOp::create(b, loc, cur, upd);
    case BinaryKind::max:
      return arith::MaximumFOp::create(b, loc, cur, upd);
    case BinaryKind::min:
      return arith::MinimumFOp::create(b, loc, cur, upd);
    default:
      return {};
    }
  }
  if (!isa<IntegerType>(t))
    return {};
  if (t.isInteger(1)) {
    switch (kind) {
    case BinaryKind::add:
    case BinaryKind::max:
      return arith::OrIOp::create(b, loc, cur, upd);
    case BinaryKind::mul:
    case BinaryKind::min:
      return arith::AndIOp::create(b, loc, cur, upd);
    default:
      return {};
    }
  }
  switch (kind) {
  case BinaryKind::add:
    return arith::AddIOp::create(b, loc, cur, upd);
  case BinaryKind::mul:
    return arith::MulIOp::create(b, loc, cur, upd);
  case BinaryKind::max:
    return isUnsigned ? Value(arith::MaxUIOp::create(b, loc, cur, upd))
                      : Value(arith::MaxSIOp::create(b, loc, cur, upd));
  case BinaryKind::min:
    return isUnsigned ? Value(arith::MinUIOp::create(b, loc, cur, upd))
                      : Value(arith::MinSIOp::create(b, loc, cur, upd));
  default:
    return {};
  }
}

namespace {
/// ONNX ScatterElements: a loop nest over the indices (row-major, so of two
/// writes to one position the later wins, as in the reference) carrying the
/// result tensor.
struct ScatterLowering : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType dataType = op.getData().getType();
    ArrayRef<int64_t> indexShape = op.getIndices().getType().getShape();
    int64_t axis = op.getAxis();
    for (int64_t d = 0, e = dataType.getRank(); d < e; ++d)
      if (d != axis && indexShape[d] > dataType.getDimSize(d)) {
        op.emitOpError("indices are larger than data in dim ") << d;
        return rewriter.notifyMatchFailure(op, "indices larger than data");
      }
    int64_t dim = dataType.getDimSize(axis);
    if (dim == 0 && op.getIndices().getType().getNumElements() != 0) {
      op.emitOpError("scatters into an empty axis");
      return rewriter.notifyMatchFailure(op, "scatter into an empty axis");
    }
    std::optional<BinaryKind> reduction = op.getReduction();
    bool isUnsigned = dataType.getElementType().isUnsignedInteger();
    if (reduction) {
      // Reject unsupported kinds before creating anything.
      Type elem = getTypeConverter()->convertType(dataType.getElementType());
      bool ok = elem && (isa<FloatType>(elem) || isa<IntegerType>(elem)) &&
                llvm::is_contained({BinaryKind::add, BinaryKind::mul,
                                    BinaryKind::max, BinaryKind::min},
                                   *reduction);
      if (!ok) {
        op.emitOpError("reduction ")
            << stringifyBinaryKind(*reduction) << " on " << elem
            << " is not supported by the CPU lowering";
        return rewriter.notifyMatchFailure(op, "unsupported reduction");
      }
    }

    SmallVector<Value> lbs, ubs, steps;
    loopBounds(rewriter, loc, indexShape, lbs, ubs, steps);
    Value indices = adaptor.getIndices(), updates = adaptor.getUpdates();
    Value data = adaptor.getData();
    // Sums and products into a narrow float (an embedding's gradient) are
    // taken in float32 and rounded once.
    Type elem = cast<RankedTensorType>(data.getType()).getElementType();
    Type wide = elem;
    if (reduction &&
        (*reduction == BinaryKind::add || *reduction == BinaryKind::mul))
      wide = computeType(elem);
    if (wide != elem) {
      data = convertFloatElements(rewriter, loc, data, wide);
      updates = convertFloatElements(rewriter, loc, updates, wide);
    }
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{data},
        [&](OpBuilder &b, Location l, ValueRange ivs,
            ValueRange args) -> scf::ValueVector {
          Value idx = tensor::ExtractOp::create(b, l, indices, ivs);
          Value upd = tensor::ExtractOp::create(b, l, updates, ivs);
          SmallVector<Value> pos(ivs.begin(), ivs.end());
          pos[axis] = wrapAndClampIndex(b, l, idx, dim);
          if (reduction) {
            Value cur = tensor::ExtractOp::create(b, l, args[0], pos);
            upd = combineScatter(b, l, *reduction, isUnsigned, cur, upd);
          }
          return {tensor::InsertOp::create(b, l, upd, args[0], pos)};
        });
    rewriter.replaceOp(
        op, convertFloatElements(rewriter, loc, nest.results.front(), elem));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// top_k
//===----------------------------------------------------------------------===//

namespace {
/// The order top_k sorts by: `better(a, b)` when `a` comes strictly before
/// `b`, `equal(a, b)` when neither does (then the lower index comes first).
/// NaN comes after every number, whether largest or smallest, as in numpy's
/// argsort, which the reference uses.
struct TopKOrder {
  bool largest, isFloat, isUnsigned;

  Value better(OpBuilder &b, Location loc, Value x, Value y) const {
    if (!isFloat) {
      arith::CmpIPredicate p = largest
                                   ? (isUnsigned ? arith::CmpIPredicate::ugt
                                                 : arith::CmpIPredicate::sgt)
                                   : (isUnsigned ? arith::CmpIPredicate::ult
                                                 : arith::CmpIPredicate::slt);
      return arith::CmpIOp::create(b, loc, p, x, y);
    }
    Value cmp = arith::CmpFOp::create(
        b, loc, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        x, y);
    Value xNum = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, x, x);
    Value yNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
    Value numOverNaN = arith::AndIOp::create(b, loc, xNum, yNaN);
    return arith::OrIOp::create(b, loc, cmp, numOverNaN);
  }

  Value equal(OpBuilder &b, Location loc, Value x, Value y) const {
    if (!isFloat)
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
    Value eq = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
    Value xNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value yNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
    return arith::OrIOp::create(b, loc, eq,
                                arith::AndIOp::create(b, loc, xNaN, yNaN));
  }
};

/// For every row along `axis`, k selection passes: pass j scans the row for
/// the best element that comes after pass j-1's pick in the total order
/// (value, then index), so no mask is needed and ties go to the lowest index.
/// O(n * k) per row.
struct TopKLowering : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    Type origElem = inType.getElementType();
    Type elem = getTypeConverter()->convertType(origElem);
    if (!elem || !(isa<FloatType>(elem) || isa<IntegerType>(elem))) {
      op.emitOpError("top_k of ") << origElem << " is not supported";
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    }
    TopKOrder order{op.getLargest(), isa<FloatType>(elem),
                    isUnsignedInt(origElem)};
    int64_t axis = op.getAxis(), k = op.getK();
    int64_t n = inType.getDimSize(axis);
    auto valuesType = getTypeConverter()->convertType<RankedTensorType>(
        op.getValues().getType());
    RankedTensorType indicesType = op.getIndices().getType();
    if (!valuesType)
      return rewriter.notifyMatchFailure(op, "unconvertible result type");

    SmallVector<int64_t> outer(inType.getShape());
    outer.erase(outer.begin() + axis);
    SmallVector<Value> lbs, ubs, steps;
    loopBounds(rewriter, loc, outer, lbs, ubs, steps);
    Value values = createEmptyTensor(rewriter, loc, valuesType);
    Value idxs = createEmptyTensor(rewriter, loc, indicesType);
    Value input = adaptor.getInput();
    Value c0 = indexConst(rewriter, loc, 0), c1 = indexConst(rewriter, loc, 1);
    Value cK = indexConst(rewriter, loc, k), cN = indexConst(rewriter, loc, n);
    Value zero = createZeroConstant(rewriter, loc, elem);
    Value falseV = arith::ConstantIntOp::create(rewriter, loc, 0, 1);

    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{values, idxs},
        [&](OpBuilder &b, Location l, ValueRange ivs,
            ValueRange rowArgs) -> scf::ValueVector {
          auto pass = scf::ForOp::create(
              b, l, c0, cK, c1, ValueRange{rowArgs[0], rowArgs[1], zero, c0},
              [&](OpBuilder &pb, Location pl, Value j, ValueRange passArgs) {
                Value prevV = passArgs[2], prevI = passArgs[3];
                Value first = arith::CmpIOp::create(
                    pb, pl, arith::CmpIPredicate::eq, j, c0);
                auto scan = scf::ForOp::create(
                    pb, pl, c0, cN, c1, ValueRange{zero, c0, falseV},
                    [&](OpBuilder &sb, Location sl, Value i,
                        ValueRange scanArgs) {
                      Value bestV = scanArgs[0], bestI = scanArgs[1],
                            found = scanArgs[2];
                      Value x = tensor::ExtractOp::create(
                          sb, sl, input, withAxis(ivs, axis, i));
                      // After the previous pick in (value, index) order?
                      Value after = arith::OrIOp::create(
                          sb, sl, order.better(sb, sl, prevV, x),
                          arith::AndIOp::create(
                              sb, sl, order.equal(sb, sl, prevV, x),
                              arith::CmpIOp::create(sb, sl,
                                                    arith::CmpIPredicate::ult,
                                                    prevI, i)));
                      Value candidate =
                          arith::OrIOp::create(sb, sl, first, after);
                      // Strictly better than the best so far: ascending i
                      // keeps the first of equal values.
                      Value improves = arith::OrIOp::create(
                          sb, sl,
                          arith::XOrIOp::create(
                              sb, sl, found,
                              arith::ConstantIntOp::create(sb, sl, 1, 1)),
                          order.better(sb, sl, x, bestV));
                      Value take =
                          arith::AndIOp::create(sb, sl, candidate, improves);
                      scf::YieldOp::create(
                          sb, sl,
                          ValueRange{
                              arith::SelectOp::create(sb, sl, take, x, bestV),
                              arith::SelectOp::create(sb, sl, take, i, bestI),
                              arith::OrIOp::create(sb, sl, found, take)});
                    });
                Value bestV = scan.getResult(0), bestI = scan.getResult(1);
                SmallVector<Value> pos = withAxis(ivs, axis, j);
                Value v =
                    tensor::InsertOp::create(pb, pl, bestV, passArgs[0], pos);
                Value bestI64 = arith::IndexCastOp::create(
                    pb, pl, indicesType.getElementType(), bestI);
                Value ix =
                    tensor::InsertOp::create(pb, pl, bestI64, passArgs[1], pos);
                scf::YieldOp::create(pb, pl, ValueRange{v, ix, bestV, bestI});
              });
          return {pass.getResult(0), pass.getResult(1)};
        });
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// moe_dispatch, moe_combine
//===----------------------------------------------------------------------===//

/// What the routing loop records.
enum class RouteMap {
  /// `[G?, E, C]` i64: the token that filled each slot, or -1.
  slotToken,
  /// `[G?, T, K]` i64: the slot each assignment got, or -1 if dropped.
  assignmentSlot,
};

/// Routes `experts[G?, T, K]` into `numExperts` x `capacity` slots per group:
/// tokens in order, each token's choices in order, the next free slot of the
/// chosen expert; ids outside `[0, numExperts)` and assignments to a full
/// expert are dropped. Returns the map named by `kind`.
static Value buildRouting(OpBuilder &b, Location loc, Value experts,
                          bool grouped, int64_t numExperts, int64_t capacity,
                          RouteMap kind) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(experts.getType()).getShape();
  Type i64 = b.getI64Type();
  SmallVector<int64_t> countShape;
  if (grouped)
    countShape.push_back(shape[0]);
  countShape.push_back(numExperts);
  Value counts = createFilledTensor(
      b, loc, RankedTensorType::get(countShape, i64), b.getI64IntegerAttr(0));
  SmallVector<int64_t> mapShape(shape);
  if (kind == RouteMap::slotToken) {
    mapShape = countShape;
    mapShape.push_back(capacity);
  }
  Value map = createFilledTensor(b, loc, RankedTensorType::get(mapShape, i64),
                                 b.getI64IntegerAttr(-1));

  SmallVector<Value> lbs, ubs, steps;
  loopBounds(b, loc, shape, lbs, ubs, steps);
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{counts, map},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange args) -> scf::ValueVector {
        Value e =
            widenIndex(nb, l, tensor::ExtractOp::create(nb, l, experts, ivs));
        Type et = e.getType();
        Value valid = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, e,
                                  createIntConstant(nb, l, et, 0)),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, e,
                                  createIntConstant(nb, l, et, numExperts)));
        Value eSafe = arith::IndexCastOp::create(
            nb, l, nb.getIndexType(),
            arith::SelectOp::create(nb, l, valid, e,
                                    createIntConstant(nb, l, et, 0)));
        SmallVector<Value> countPos;
        if (grouped)
          countPos.push_back(ivs[0]);
        countPos.push_back(eSafe);
        Value count = tensor::ExtractOp::create(nb, l, args[0], countPos);
        Value next = arith::AddIOp::create(
            nb, l, count, arith::ExtUIOp::create(nb, l, i64, valid));
        Value newCounts =
            tensor::InsertOp::create(nb, l, next, args[0], countPos);
        Value ok = arith::AndIOp::create(
            nb, l, valid,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, count,
                                  createIntConstant(nb, l, i64, capacity)));
        Value newMap;
        if (kind == RouteMap::assignmentSlot) {
          Value slot = arith::SelectOp::create(
              nb, l, ok, count, createIntConstant(nb, l, i64, -1));
          newMap = tensor::InsertOp::create(nb, l, slot, args[1], ivs);
        } else {
          // Write unconditionally at an in-bounds position, the old value
          // when the assignment is dropped.
          Value slot = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              arith::SelectOp::create(nb, l, ok, count,
                                      createIntConstant(nb, l, i64, 0)));
          SmallVector<Value> pos = countPos;
          pos.push_back(slot);
          Value old = tensor::ExtractOp::create(nb, l, args[1], pos);
          Value token =
              arith::IndexCastOp::create(nb, l, i64, ivs[grouped ? 1 : 0]);
          Value v = arith::SelectOp::create(nb, l, ok, token, old);
          newMap = tensor::InsertOp::create(nb, l, v, args[1], pos);
        }
        return {newCounts, newMap};
      });
  return nest.results[1];
}

namespace {
/// Routing, then a gather over `[G?, E, C, H]` that reads each slot's token
/// row, or zero for an empty slot.
struct MoeDispatchLowering : RankedResultConversion<MoeDispatchOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(MoeDispatchOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType tokensType = op.getTokens().getType();
    bool grouped = tokensType.getRank() == 3;
    Type elem = resultType.getElementType();
    auto zeroAttr = cast<TypedAttr>(rewriter.getZeroAttr(elem));
    // No tokens: every slot is empty (and there is no row to clamp to).
    if (tokensType.getNumElements() == 0) {
      rewriter.replaceOp(
          op, createFilledTensor(rewriter, loc, resultType, zeroAttr));
      return success();
    }
    Value src =
        buildRouting(rewriter, loc, adaptor.getExperts(), grouped,
                     op.getNumExperts(), op.getCapacity(), RouteMap::slotToken);

    int64_t rank = resultType.getRank();
    Value tokens = adaptor.getTokens();
    Value result = buildParallelGeneric(
        rewriter, loc, src,
        rewriter.getMultiDimIdentityMap(rank).getMajorSubMap(rank - 1),
        resultType, [&](OpBuilder &b, Location l, ValueRange args) {
          Value tok = args[0];
          Value i64Zero = createIntConstant(b, l, tok.getType(), 0);
          Value has = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                            tok, i64Zero);
          Value t = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              arith::SelectOp::create(b, l, has, tok, i64Zero));
          SmallVector<Value> pos;
          if (grouped)
            pos.push_back(linalg::IndexOp::create(b, l, 0));
          pos.push_back(t);
          pos.push_back(linalg::IndexOp::create(b, l, rank - 1));
          Value x = tensor::ExtractOp::create(b, l, tokens, pos);
          Value zero = arith::ConstantOp::create(b, l, zeroAttr);
          linalg::YieldOp::create(
              b, l, Value(arith::SelectOp::create(b, l, has, x, zero)));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Routing (the same as dispatch's, with E and C from `expert_outputs`),
/// then a generic over `[G?, T, H]` reducing over K in order:
/// `acc += gates[t, k] * expert_outputs[e, slot, h]` for kept assignments.
struct MoeCombineLowering : RankedResultConversion<MoeCombineOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(MoeCombineOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outputsType = op.getExpertOutputs().getType();
    bool grouped = outputsType.getRank() == 4;
    int64_t g = grouped ? 1 : 0;
    int64_t numExperts = outputsType.getDimSize(g);
    int64_t capacity = outputsType.getDimSize(g + 1);
    Type elem = resultType.getElementType();
    // No expert slots: nothing to combine (and no slot to clamp to).
    if (outputsType.getNumElements() == 0) {
      rewriter.replaceOp(op, createFilledTensor(rewriter, loc, resultType,
                                                rewriter.getZeroAttr(elem)));
      return success();
    }
    // A narrow float's K products are summed in float32, rounded once.
    auto acc = cast<FloatType>(computeType(elem));
    RankedTensorType accType = resultType.clone(acc);
    Value zeros =
        createFilledTensor(rewriter, loc, accType, rewriter.getZeroAttr(acc));
    Value slots = buildRouting(rewriter, loc, adaptor.getExperts(), grouped,
                               numExperts, capacity, RouteMap::assignmentSlot);

    // Loops (g?, t, h, k): k innermost, so the sum runs over K in order.
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = g + 3;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> tk, th;
    if (grouped)
      tk.push_back(d(0)), th.push_back(d(0));
    tk.append({d(g), d(g + 2)});
    th.append({d(g), d(g + 1)});
    AffineMap tkMap = AffineMap::get(rank, 0, tk, ctx);
    AffineMap thMap = AffineMap::get(rank, 0, th, ctx);
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators.back() = utils::IteratorType::reduction;
    Value outputs = adaptor.getExpertOutputs();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{accType},
        ValueRange{adaptor.getExperts(), adaptor.getGates(), slots},
        ValueRange{zeros}, SmallVector<AffineMap>{tkMap, tkMap, tkMap, thMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value e = widenIndex(b, l, args[0]), gate = args[1], slot = args[2],
                sumSoFar = args[3];
          Value kept =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, slot,
                                    createIntConstant(b, l, slot.getType(), 0));
          // A kept assignment has a valid expert id and slot.
          Value eSafe = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              arith::SelectOp::create(b, l, kept, e,
                                      createIntConstant(b, l, e.getType(), 0)));
          Value sSafe = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              arith::SelectOp::create(
                  b, l, kept, slot,
                  createIntConstant(b, l, slot.getType(), 0)));
          SmallVector<Value> pos;
          if (grouped)
            pos.push_back(linalg::IndexOp::create(b, l, 0));
          pos.append({eSafe, sSafe, linalg::IndexOp::create(b, l, g + 1)});
          Value x = castFloat(
              b, l, tensor::ExtractOp::create(b, l, outputs, pos), acc);
          Value sum = arith::AddFOp::create(
              b, l, sumSoFar,
              arith::MulFOp::create(b, l, castFloat(b, l, gate, acc), x));
          linalg::YieldOp::create(
              b, l, Value(arith::SelectOp::create(b, l, kept, sum, sumSoFar)));
        });
    rewriter.replaceOp(
        op, convertFloatElements(rewriter, loc, generic.getResult(0), elem));
    return success();
  }
};
} // namespace

void mlir::loom::populateLoomIndexingToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<GatherLowering, EmbeddingLowering, ScatterLowering, TopKLowering,
               MoeDispatchLowering, MoeCombineLowering>(converter,
                                                        patterns.getContext());
}
