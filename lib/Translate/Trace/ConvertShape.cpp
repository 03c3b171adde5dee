//===- ConvertShape.cpp - trace shape, indexing and routing ops to loom ---===//
//
// reshape, permute, expand, cat, slice, select, take, embedding, gather,
// scatter, topk and one_hot.
//
// `take` is ONNX Gather (loom.gather). `gather` is torch.gather, which loom
// has no op for: it becomes loom.gather on the flattened input with flat
// indices `index * stride[dim] + Σ_{e != dim} iota_e * stride[e]` (one small
// iota per dim, broadcast). `scatter` is torch.scatter = ONNX
// ScatterElements (loom.scatter), with `src` cut to the index shape.
// `one_hot` compares the indices against an iota of the classes.
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

static LogicalResult convertReshape(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto shape = cx.intListAttr("shape", std::nullopt, -1, kMaxDim);
  if (!x || failed(shape))
    return failure();
  // The format writes the full shape; tolerate one -1 as PyTorch does.
  int64_t numel = cast<RankedTensorType>(x.getType()).getNumElements();
  int64_t known = 1, inferredAt = -1;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (d == -1) {
      if (inferredAt >= 0)
        return cx.fail("attribute 'shape' has more than one -1");
      inferredAt = i;
      continue;
    }
    if (__builtin_mul_overflow(known, d, &known) || known > kMaxElements)
      return cx.fail("attribute 'shape' " + shapeString(*shape) +
                     " has too many elements");
  }
  if (inferredAt >= 0) {
    if (known == 0 || numel % known != 0)
      return cx.fail("cannot infer the -1 of " + shapeString(*shape) + " for " +
                     llvm::Twine(numel) + " elements");
    (*shape)[inferredAt] = numel / known;
    known = numel;
  }
  if (known != numel)
    return cx.fail("cannot reshape " + shapeString(shapeOf(x)) + " (" +
                   llvm::Twine(numel) + " elements) to " + shapeString(*shape));
  return cx.result(cx.reshape(x, *shape));
}

static LogicalResult convertPermute(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  int64_t rank = rankOf(x);
  auto dims = cx.intListAttr("dims", size_t(rank), -kMaxRank, kMaxRank);
  if (failed(dims))
    return failure();
  for (int64_t &d : *dims)
    if (d < 0)
      d += rank;
  return cx.result(cx.transpose(x, *dims));
}

static LogicalResult convertExpand(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto shape = cx.intListAttr("shape", std::nullopt, -1, kMaxDim);
  if (!x || failed(shape))
    return failure();
  llvm::ArrayRef<int64_t> in = shapeOf(x);
  if (shape->size() < in.size())
    return cx.fail("cannot expand " + shapeString(in) + " to fewer dims " +
                   shapeString(*shape));
  size_t lead = shape->size() - in.size();
  for (size_t i = 0; i < shape->size(); ++i) {
    if ((*shape)[i] != -1)
      continue;
    if (i < lead)
      return cx.fail("-1 in attribute 'shape' for a new leading dim");
    (*shape)[i] = in[i - lead]; // -1 keeps the input's size
  }
  if (!checkedNumElements(*shape))
    return cx.fail("attribute 'shape' " + shapeString(*shape) +
                   " has too many elements");
  return cx.result(cx.expand(x, *shape));
}

static LogicalResult convertCat(NodeContext &cx) {
  if (cx.operands.empty())
    return cx.fail("cat needs at least one input");
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < cx.operands.size(); ++i) {
    Value v = cx.tensor(i, "input");
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  int64_t rank = rankOf(inputs[0]);
  if (rank == 0)
    return cx.fail("cannot concatenate 0-d tensors");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rank);
  if (failed(dim))
    return failure();
  return cx.result(cx.concat(inputs, *dim));
}

static LogicalResult convertSlice(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("cannot slice a 0-d tensor");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  auto start = cx.intAttr("start");
  auto end = cx.intAttr("end");
  auto step = cx.intAttr("step", 1);
  if (failed(dim) || failed(start) || failed(end) || failed(step))
    return failure();
  // Python slice semantics (the format guarantees 0 <= start <= end <= size).
  int64_t size = shapeOf(x)[*dim];
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  int64_t s = clampIndex(*start), e = std::max(clampIndex(*end), s);
  int64_t n = (e - s + *step - 1) / *step;
  return cx.result(cx.slice(x, *dim, n == 0 ? 0 : s, n, *step));
}

static LogicalResult convertSelect(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("cannot select from a 0-d tensor");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  auto index = cx.intAttr("index");
  if (failed(dim) || failed(index))
    return failure();
  int64_t size = shapeOf(x)[*dim];
  int64_t i = *index < 0 ? *index + size : *index;
  if (i < 0 || i >= size)
    return cx.fail("index " + llvm::Twine(*index) +
                   " is out of range for size " + llvm::Twine(size));
  SmallVector<int64_t> shape(shapeOf(x));
  shape.erase(shape.begin() + *dim);
  return cx.result(cx.reshape(cx.slice(x, *dim, i, 1), shape));
}

/// An index operand: a tensor of signless i64 or i32.
static Value indexTensor(NodeContext &cx, unsigned i, llvm::StringRef what) {
  Value v = cx.tensor(i, what);
  if (!v)
    return v;
  Type elem = elemOf(v);
  if (!elem.isSignlessInteger(64) && !elem.isSignlessInteger(32))
    return cx.failValue(what + " must be i64 or i32, got " + dtypeName(elem));
  return v;
}

static LogicalResult convertTake(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value x = cx.tensor(0, "input"), idx = indexTensor(cx, 1, "indices");
  if (!x || !idx)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("cannot take from a 0-d tensor");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  if (failed(dim))
    return failure();
  return cx.result(cx.inferred<GatherOp>({x, idx}, {cx.i64Attr("axis", *dim)}));
}

static LogicalResult convertEmbedding(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value w = cx.tensor(0, "weight"), idx = indexTensor(cx, 1, "indices");
  if (!w || !idx)
    return failure();
  if (rankOf(w) == 0)
    return cx.fail("the embedding table must have rank >= 1");
  // loom.embedding is the [V, D] float table a planner can shard by vocab;
  // other tables are a plain gather along dim 0.
  if (rankOf(w) == 2 && isa<FloatType>(elemOf(w)))
    return cx.result(cx.inferred<EmbeddingOp>({w, idx}));
  return cx.result(cx.inferred<GatherOp>({w, idx}, {cx.i64Attr("axis", 0)}));
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Checks torch.gather/scatter's index: same rank as `x`, and no larger than
/// `bound` (x, or src) in every dim but `dim` when `exceptDim`.
static LogicalResult checkIndexShape(NodeContext &cx, Value x, Value idx,
                                     int64_t dim) {
  if (rankOf(idx) != rankOf(x))
    return cx.fail("the index " + shapeString(shapeOf(idx)) +
                   " must have the input's rank " + llvm::Twine(rankOf(x)));
  for (int64_t e = 0; e < rankOf(x); ++e)
    if (e != dim && shapeOf(idx)[e] > shapeOf(x)[e])
      return cx.fail("the index " + shapeString(shapeOf(idx)) +
                     " is larger than the input " + shapeString(shapeOf(x)) +
                     " in dim " + llvm::Twine(e));
  return success();
}

static LogicalResult convertGather(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value x = cx.tensor(0, "input"), idx = indexTensor(cx, 1, "index");
  if (!x || !idx)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("cannot gather from a 0-d tensor");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  if (failed(dim) || failed(checkIndexShape(cx, x, idx, *dim)))
    return failure();
  Type i64 = cx.b.getI64Type();
  int64_t rank = rankOf(x);
  llvm::ArrayRef<int64_t> ishape = shapeOf(idx);
  SmallVector<int64_t> strides = stridesOf(shapeOf(x));
  Value flat = cx.cast(idx, i64);
  if (strides[*dim] != 1)
    flat = cx.binary(BinaryKind::mul, flat,
                     cx.scalarConstant(Scalar::ofInt(strides[*dim]), i64));
  for (int64_t e = 0; e < rank; ++e)
    if (e != *dim && ishape[e] > 1)
      flat = cx.binary(BinaryKind::add, flat,
                       cx.iota(ishape[e], rank, e, i64, strides[e]));
  int64_t numel = cast<RankedTensorType>(x.getType()).getNumElements();
  Value data = cx.reshape(x, {numel});
  if (!flat || !data)
    return failure();
  return cx.result(
      cx.inferred<GatherOp>({data, flat}, {cx.i64Attr("axis", 0)}));
}

static LogicalResult convertScatter(NodeContext &cx) {
  if (failed(cx.expectOperands(3, 3)))
    return failure();
  Value x = cx.tensor(0, "input"), idx = indexTensor(cx, 1, "index");
  if (!x || !idx)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("cannot scatter into a 0-d tensor");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  if (failed(dim) || failed(checkIndexShape(cx, x, idx, *dim)))
    return failure();
  auto indexType = RankedTensorType::get(shapeOf(idx), elemOf(x));
  Value src;
  const Operand &s = cx.operand(2);
  if (s.isScalar()) {
    src = cx.splatConstant(*s.scalar, indexType);
  } else {
    src = cx.tensor(2, "src");
    if (!src)
      return failure();
    if (elemOf(src) != elemOf(x))
      return cx.fail("src is " + dtypeName(elemOf(src)) + " but the input is " +
                     dtypeName(elemOf(x)));
    if (rankOf(src) != rankOf(idx))
      return cx.fail("src " + shapeString(shapeOf(src)) +
                     " must have the index's rank");
    // Only the index-shaped corner of src is used.
    for (int64_t e = 0; e < rankOf(idx); ++e) {
      int64_t want = shapeOf(idx)[e];
      if (shapeOf(src)[e] < want)
        return cx.fail("src " + shapeString(shapeOf(src)) +
                       " is smaller than the index " +
                       shapeString(shapeOf(idx)));
      src = cx.slice(src, e, 0, want);
      if (!src)
        return failure();
    }
  }
  if (!src)
    return failure();
  return cx.result(
      cx.inferred<ScatterOp>({x, idx, src}, {cx.i64Attr("axis", *dim)}));
}

static LogicalResult convertTopK(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("topk of a 0-d tensor is not supported");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  auto k = cx.intAttr("k", 0);
  auto largest = cx.boolAttr("largest");
  auto sorted = cx.boolAttr("sorted"); // loom.topk's order is sorted
  if (failed(dim) || failed(k) || failed(largest) || failed(sorted))
    return failure();
  Operation *op = cx.buildInferred<TopKOp>(
      {x}, {cx.i64Attr("k", *k), cx.i64Attr("axis", *dim),
            cx.namedAttr("largest", cx.b.getBoolAttr(*largest))});
  if (!op)
    return failure();
  cx.results.append(op->result_begin(), op->result_end());
  return success();
}

static LogicalResult convertOneHot(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value idx = indexTensor(cx, 0, "indices");
  auto classes = cx.intAttr("num_classes", 0, kMaxIotaElements);
  if (!idx || failed(classes))
    return failure();
  int64_t rank = rankOf(idx);
  SmallVector<int64_t> shape(shapeOf(idx));
  shape.push_back(1);
  Value hot = cx.compare(ComparePredicate::eq, cx.reshape(idx, shape),
                         cx.iota(*classes, rank + 1, rank, elemOf(idx)));
  return cx.result(cx.cast(hot, cx.outElem()));
}

void trace_import::addShapeConversions(ConvertTable &table) {
  table["reshape"] = convertReshape;
  table["permute"] = convertPermute;
  table["expand"] = convertExpand;
  table["cat"] = convertCat;
  table["slice"] = convertSlice;
  table["select"] = convertSelect;
  table["take"] = convertTake;
  table["embedding"] = convertEmbedding;
  table["gather"] = convertGather;
  table["scatter"] = convertScatter;
  table["topk"] = convertTopK;
  table["one_hot"] = convertOneHot;
}
