//===- ConvertShape.cpp - shape computations and data movement ------------===//
//
// Constant, Shape, Size, ConstantOfShape, Range and friends produce values
// known at import time; Reshape, Squeeze, Unsqueeze, Flatten, Transpose,
// Concat, Slice, Split, Gather, Expand, Tile, Pad evaluate on the host when
// their data input is known and emit a loom op otherwise. Together they fold
// the shape sub-graphs exporters emit (Shape -> Gather -> Unsqueeze -> Concat
// -> Reshape) into static shapes, so the imported graph holds only compute.
// Shape-like inputs (a Reshape target, Slice bounds, Pad amounts) must be
// known; a shape computed from run-time data is reported as unsupported.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "llvm/ADT/StringSwitch.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

/// Validates a shape computed from user data.
static LogicalResult checkShape(NodeContext &c, ArrayRef<int64_t> shape) {
  if (int64_t(shape.size()) > kMaxRank || checkedNumElements(shape) < 0)
    return c.error("invalid result shape " + shapeStr(shape));
  return success();
}

static HostTensor int64Vector(ArrayRef<int64_t> values) {
  HostTensor t;
  t.dtype = onnx::TensorProto::INT64;
  t.shape = {int64_t(values.size())};
  t.ints.assign(values.begin(), values.end());
  return t;
}

/// A host tensor of `shape` filled with element 0 of `scalar`.
static HostTensor filled(const HostTensor &scalar, ArrayRef<int64_t> shape) {
  HostTensor t;
  t.dtype = scalar.dtype;
  t.shape.assign(shape.begin(), shape.end());
  int64_t n = t.numel();
  if (t.isFloat())
    t.floats.assign(n, scalar.floats[0]);
  else
    t.ints.assign(n, scalar.ints[0]);
  return t;
}

/// A splat loom.constant of `shape` holding element 0 of `scalar`.
static Value splat(NodeContext &c, const HostTensor &scalar,
                   ArrayRef<int64_t> shape) {
  HostTensor one = scalar;
  one.shape.clear();
  DenseElementsAttr attr = hostToAttr(one, c.ctx);
  auto type = RankedTensorType::get(shape, attr.getElementType());
  return c.imp.getConstant(
      DenseElementsAttr::get(type, attr.getSplatValue<Attribute>()), c.loc);
}

/// Sets result 0 to input 0 reshaped to `shape` (host or loom.reshape).
static LogicalResult reshapeResult(NodeContext &c, ArrayRef<int64_t> shape) {
  if (failed(checkShape(c, shape)))
    return failure();
  if (HostTensorRef h = c.host(0)) {
    if (checkedNumElements(shape) != h->numel())
      return c.error("cannot reshape " + shapeStr(h->shape) + " to " +
                     shapeStr(shape));
    HostTensor t = *h;
    t.shape.assign(shape.begin(), shape.end());
    c.setHostResult(0, std::move(t));
    return success();
  }
  TRY(x, c.value(0));
  TRY(y, c.reshape(x, shape));
  c.setResult(0, y);
  return success();
}

/// Host transpose.
static HostTensor transposeHost(const HostTensor &h, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> outShape;
  for (int64_t p : perm)
    outShape.push_back(h.shape[p]);
  SmallVector<int64_t> inStrides = stridesOf(h.shape);
  int64_t n = h.numel(), rank = perm.size();
  std::vector<int64_t> src(n);
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    for (int64_t d = 0; d < rank; ++d)
      s += counter[d] * inStrides[perm[d]];
    src[i] = s;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++counter[d] < outShape[d])
        break;
      counter[d] = 0;
    }
  }
  return gatherHost(h, outShape, src);
}

/// Host strided slice (offsets/sizes/strides per dim, as loom.slice).
static HostTensor sliceHost(const HostTensor &h, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides) {
  SmallVector<int64_t> inStrides = stridesOf(h.shape);
  int64_t rank = sizes.size();
  int64_t n = checkedNumElements(sizes);
  std::vector<int64_t> src(n);
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    for (int64_t d = 0; d < rank; ++d)
      s += (offsets[d] + counter[d] * strides[d]) * inStrides[d];
    src[i] = s;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++counter[d] < sizes[d])
        break;
      counter[d] = 0;
    }
  }
  return gatherHost(h, sizes, src);
}

/// Host broadcast of `h` to `shape`.
static HostTensor broadcastHost(const HostTensor &h, ArrayRef<int64_t> shape) {
  int64_t n = checkedNumElements(shape);
  std::vector<int64_t> src(n);
  size_t rank = shape.size(), off = rank - h.shape.size();
  SmallVector<int64_t> inStrides = stridesOf(h.shape);
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    for (size_t d = off; d < rank; ++d)
      if (h.shape[d - off] != 1)
        s += counter[d] * inStrides[d - off];
    src[i] = s;
    for (int64_t d = int64_t(rank) - 1; d >= 0; --d) {
      if (++counter[d] < shape[d])
        break;
      counter[d] = 0;
    }
  }
  return gatherHost(h, shape, src);
}

//===----------------------------------------------------------------------===//
// Values known at import time
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertConstant(NodeContext &c) {
  if (c.node.attribute_size() != 1)
    return c.error("needs exactly one value attribute, has " +
                   Twine(c.node.attribute_size()));
  const onnx::AttributeProto &a = c.node.attribute(0);
  StringRef name = a.name();
  HostTensor t;
  if (name == "value") {
    if (!a.has_t())
      return c.error("attribute 'value' must be a tensor");
    std::optional<EmbeddedData> data;
    if (c.index >= 0) {
      auto it = c.imp.embedded.constantNodes.find(c.index);
      if (it != c.imp.embedded.constantNodes.end())
        data = it->second;
    }
    std::string outName =
        c.outputUsed(0) ? c.node.output(0) : std::string(c.nodeName());
    FailureOr<TensorRef> stored =
        c.imp.makeStored(a.t(), outName, data, /*isBuffer=*/true,
                         /*isInitializer=*/false, c.loc);
    if (failed(stored))
      return failure();
    c.setTensorResult(0, *stored);
    return success();
  }
  if (name == "value_float" || name == "value_floats") {
    t.dtype = onnx::TensorProto::FLOAT;
    if (name == "value_float") {
      t.floats.push_back(double(a.f()));
    } else {
      t.shape = {a.floats_size()};
      for (float f : a.floats())
        t.floats.push_back(double(f));
    }
  } else if (name == "value_int" || name == "value_ints") {
    t.dtype = onnx::TensorProto::INT64;
    if (name == "value_int") {
      t.ints.push_back(a.i());
    } else {
      t.shape = {a.ints_size()};
      t.ints.assign(a.ints().begin(), a.ints().end());
    }
  } else if (name == "sparse_value" || name == "value_string" ||
             name == "value_strings") {
    return c.unsupported("Constant with attribute '" + name + "'");
  } else {
    return c.error("unknown attribute '" + name + "'");
  }
  c.setHostResult(0, std::move(t));
  return success();
}

LogicalResult onnx_import::convertShape(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  FailureOr<int64_t> start = c.attrInt("start", 0);
  FailureOr<std::optional<int64_t>> end = c.attrIntOpt("end");
  if (failed(type) || failed(start) || failed(end))
    return failure();
  int64_t rank = type->getRank();
  auto clampAxis = [&](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  int64_t s = clampAxis(*start), e = clampAxis(end->value_or(rank));
  SmallVector<int64_t> dims;
  for (int64_t d = s; d < e; ++d)
    dims.push_back(type->getDimSize(d));
  c.setHostResult(0, int64Vector(dims));
  return success();
}

LogicalResult onnx_import::convertSize(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  HostTensor t;
  t.dtype = onnx::TensorProto::INT64;
  t.ints = {type->getNumElements()};
  c.setHostResult(0, std::move(t));
  return success();
}

LogicalResult onnx_import::convertConstantOfShape(NodeContext &c) {
  FailureOr<SmallVector<int64_t>> shape = c.constInts(0, "shape");
  if (failed(shape) || failed(checkShape(c, *shape)))
    return failure();
  HostTensor value;
  value.dtype = onnx::TensorProto::FLOAT;
  value.floats = {0.0};
  if (const onnx::AttributeProto *a = c.attr("value")) {
    if (!a->has_t())
      return c.error("attribute 'value' must be a tensor");
    std::string error;
    FailureOr<HostTensor> v = decodeTensorProto(a->t(), c.imp.modelDir, error);
    if (failed(v))
      return c.error("attribute 'value' " + error);
    if (v->numel() != 1)
      return c.error("attribute 'value' must hold one element");
    value = std::move(*v);
  }
  if (foldable(*shape)) {
    c.setHostResult(0, filled(value, *shape));
    return success();
  }
  c.setResult(0, splat(c, value, *shape));
  return success();
}

LogicalResult onnx_import::convertRange(NodeContext &c) {
  HostTensorRef start = c.host(0), limit = c.host(1), delta = c.host(2);
  for (int64_t i = 0; i < 3; ++i)
    if (failed(c.tensor(i)))
      return failure();
  if (!start || !limit || !delta)
    return c.unsupported("Range whose inputs are computed at run time (the "
                         "result length would be data-dependent)");
  if (start->numel() != 1 || limit->numel() != 1 || delta->numel() != 1)
    return c.error("start, limit and delta must be scalars");
  if (start->dtype != limit->dtype || start->dtype != delta->dtype)
    return c.error("start, limit and delta must have the same dtype");
  HostTensor out;
  out.dtype = start->dtype;
  int64_t n;
  if (start->isFloat()) {
    double s = start->floats[0], l = limit->floats[0], d = delta->floats[0];
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return c.error("invalid Range bounds");
    double count = std::ceil((l - s) / d);
    if (count > double(kMaxFoldElements))
      return c.unsupported("Range of more than " + Twine(kMaxFoldElements) +
                           " elements");
    n = count <= 0 ? 0 : int64_t(count);
    out.shape = {n};
    out.allocate();
    for (int64_t i = 0; i < n; ++i)
      storeElement(out, i, s + double(i) * d, 0, true);
  } else {
    int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    if (d == 0)
      return c.error("Range delta must be non-zero");
    // ceil((l - s) / d) without overflow, in 128 bits.
    __int128 span = __int128(l) - __int128(s);
    __int128 cnt = span / d + ((span % d != 0 && ((span > 0) == (d > 0))) ? 1 : 0);
    if (cnt > kMaxFoldElements)
      return c.unsupported("Range of more than " + Twine(kMaxFoldElements) +
                           " elements");
    n = cnt < 0 ? 0 : int64_t(cnt);
    out.shape = {n};
    out.allocate();
    for (int64_t i = 0; i < n; ++i)
      storeElement(out, i, 0.0, int64_t(__int128(s) + __int128(i) * d), false);
  }
  c.setHostResult(0, std::move(out));
  return success();
}

LogicalResult onnx_import::convertEyeLike(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  FailureOr<int64_t> k = c.attrInt("k", 0);
  FailureOr<std::optional<int64_t>> dtypeAttr = c.attrIntOpt("dtype");
  if (failed(type) || failed(k) || failed(dtypeAttr))
    return failure();
  if (type->getRank() != 2)
    return c.error("input must be 2-D");
  int32_t dtype = dtypeAttr->has_value()
                      ? int32_t(std::clamp<int64_t>(**dtypeAttr, -1, 1 << 20))
                      : typeToDType(type->getElementType());
  if (!dtypeToType(c.ctx, dtype))
    return c.unsupported("EyeLike of dtype " + dtypeName(dtype));
  if (type->getNumElements() > kMaxFoldElements)
    return c.unsupported("EyeLike larger than " + Twine(kMaxFoldElements) +
                         " elements");
  HostTensor t;
  t.dtype = dtype;
  t.shape.assign(type->getShape().begin(), type->getShape().end());
  t.allocate();
  // Only the rows that hit the diagonal (a dim may be huge when the other
  // is 0).
  int64_t n = t.shape[0], m = t.shape[1];
  int64_t diag = std::clamp<int64_t>(*k, -kMaxDim, kMaxDim);
  for (int64_t i = std::max<int64_t>(0, -diag),
               e = std::min<int64_t>(n, m - diag);
       i < e; ++i)
    storeElement(t, i * m + i + diag, 1.0, 1, false);
  c.setHostResult(0, std::move(t));
  return success();
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertReshape(NodeContext &c) {
  FailureOr<int64_t> allowZero = c.attrInt("allowzero", 0);
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(allowZero) || failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> spec = c.constInts(1, "shape");
  if (failed(spec))
    return failure();
  if (int64_t(spec->size()) > kMaxRank)
    return c.error("target rank " + Twine(spec->size()) + " is too large");
  ArrayRef<int64_t> in = type->getShape();
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < spec->size(); ++i) {
    int64_t d = (*spec)[i];
    if (d == 0 && !*allowZero) {
      if (i >= in.size())
        return c.error("shape entry " + Twine(i) +
                       " is 0 (copy) but the input has rank " +
                       Twine(in.size()));
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return c.error("shape " + shapeStr(*spec) + " has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0 || d > kMaxDim)
      return c.error("invalid shape entry " + Twine(d));
    shape.push_back(d);
    known = d == 0 ? 0 : (known > kMaxElements / d ? -1 : known * d);
    if (known < 0)
      return c.error("target shape " + shapeStr(*spec) + " is too large");
  }
  int64_t total = type->getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return c.error("cannot infer the -1 of shape " + shapeStr(*spec) +
                     " for an input of " + Twine(total) + " elements " +
                     shapeStr(in));
    shape[inferred] = total / known;
  }
  if (checkedNumElements(shape) != total)
    return c.error("cannot reshape " + shapeStr(in) + " (" + Twine(total) +
                   " elements) to " + shapeStr(shape));
  return reshapeResult(c, shape);
}

LogicalResult onnx_import::convertFlatten(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 1);
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(axisAttr) || failed(type))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(c, *axisAttr, type->getRank(), /*inclusive=*/true);
  if (failed(axis))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type->getRank(); ++d)
    (d < *axis ? outer : inner) *= type->getDimSize(d);
  return reshapeResult(c, {outer, inner});
}

LogicalResult onnx_import::convertSqueeze(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> in = type->getShape();
  SmallVector<int64_t> shape;
  if (c.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> axes = c.constInts(1, "axes");
    if (failed(axes))
      return failure();
    FailureOr<SmallVector<int64_t>> norm = normalizeAxes(c, *axes, in.size());
    if (failed(norm))
      return failure();
    for (int64_t a : *norm)
      if (in[a] != 1)
        return c.error("cannot squeeze dim " + Twine(a) + " of size " +
                       Twine(in[a]));
    for (size_t d = 0; d < in.size(); ++d)
      if (!llvm::is_contained(*norm, int64_t(d)))
        shape.push_back(in[d]);
  } else {
    for (int64_t d : in)
      if (d != 1)
        shape.push_back(d);
  }
  return reshapeResult(c, shape);
}

LogicalResult onnx_import::convertUnsqueeze(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = c.constInts(1, "axes");
  if (failed(axes))
    return failure();
  int64_t outRank = type->getRank() + int64_t(axes->size());
  if (outRank > kMaxRank)
    return c.error("result rank " + Twine(outRank) + " is too large");
  FailureOr<SmallVector<int64_t>> norm = normalizeAxes(c, *axes, outRank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(llvm::is_contained(*norm, d) ? 1
                                                 : type->getDimSize(next++));
  return reshapeResult(c, shape);
}

LogicalResult onnx_import::convertTranspose(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  FailureOr<std::optional<SmallVector<int64_t>>> permAttr =
      c.attrInts("perm");
  if (failed(type) || failed(permAttr))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> perm;
  if (*permAttr) {
    perm = **permAttr;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<bool> seen(rank, false);
  if (int64_t(perm.size()) != rank)
    return c.error("perm has " + Twine(perm.size()) + " entries for rank " +
                   Twine(rank));
  for (int64_t &p : perm) {
    if (p < 0)
      p += rank;
    if (p < 0 || p >= rank || seen[p])
      return c.error("perm is not a permutation of [0, " + Twine(rank) + ")");
    seen[p] = true;
  }
  if (HostTensorRef h = c.host(0)) {
    c.setHostResult(0, transposeHost(*h, perm));
    return success();
  }
  TRY(x, c.value(0));
  TRY(y, c.transpose(x, perm));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Concat, Slice, Split
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertConcat(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.requiredAttrInt("axis");
  if (failed(axisAttr))
    return failure();
  SmallVector<RankedTensorType> types;
  for (int64_t i = 0; i < c.numInputs(); ++i) {
    FailureOr<RankedTensorType> t = c.type(i);
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  if (types.empty())
    return c.error("needs at least one input");
  int64_t rank = types[0].getRank();
  for (RankedTensorType t : types)
    if (t.getRank() != rank)
      return c.error("inputs have different ranks");
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, rank);
  if (failed(axis))
    return failure();
  if (c.allInputsKnown()) {
    SmallVector<HostTensorRef> hs;
    for (int64_t i = 0; i < c.numInputs(); ++i)
      hs.push_back(c.host(i));
    bool sameDType = llvm::all_of(
        hs, [&](const HostTensorRef &h) { return h->dtype == hs[0]->dtype; });
    SmallVector<int64_t> outShape(hs[0]->shape);
    outShape[*axis] = 0;
    bool ok = sameDType;
    for (const HostTensorRef &h : hs) {
      for (int64_t d = 0; ok && d < rank; ++d)
        ok = d == *axis || h->shape[d] == outShape[d];
      outShape[*axis] += h->shape[*axis];
    }
    if (ok && foldable(outShape)) {
      HostTensor out;
      out.dtype = hs[0]->dtype;
      out.shape = outShape;
      int64_t outer = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= outShape[d];
      // Nothing to copy into an empty result (its outer dims may be huge).
      if (checkedNumElements(outShape) == 0)
        outer = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (const HostTensorRef &h : hs) {
          int64_t chunk = 1;
          for (int64_t d = *axis; d < rank; ++d)
            chunk *= h->shape[d];
          if (h->isFloat())
            out.floats.insert(out.floats.end(),
                              h->floats.begin() + o * chunk,
                              h->floats.begin() + (o + 1) * chunk);
          else
            out.ints.insert(out.ints.end(), h->ints.begin() + o * chunk,
                            h->ints.begin() + (o + 1) * chunk);
        }
      c.setHostResult(0, std::move(out));
      return success();
    }
  }
  SmallVector<Value> values;
  for (int64_t i = 0; i < c.numInputs(); ++i) {
    TRY(v, c.value(i));
    values.push_back(v);
  }
  if (values.size() == 1) {
    c.setResult(0, values[0]);
    return success();
  }
  TRY(y, c.create<ConcatOp>(ValueRange(values), c.b.getI64IntegerAttr(*axis)));
  c.setResult(0, y);
  return success();
}

/// Emits (or folds) a slice of input 0 into result `result`.
static LogicalResult emitSlice(NodeContext &c, int64_t result,
                               ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  bool identity = ArrayRef<int64_t>(sizes) == type->getShape() &&
                  llvm::all_of(offsets, [](int64_t o) { return o == 0; }) &&
                  llvm::all_of(strides, [](int64_t s) { return s == 1; });
  if (identity) {
    FailureOr<TensorRef> t = c.tensor(0);
    if (failed(t))
      return failure();
    c.setTensorResult(result, *t);
    return success();
  }
  if (HostTensorRef h = c.host(0)) {
    c.setHostResult(result, sliceHost(*h, offsets, sizes, strides));
    return success();
  }
  TRY(x, c.value(0));
  TRY(y, c.create<SliceOp>(x, c.b.getDenseI64ArrayAttr(offsets),
                           c.b.getDenseI64ArrayAttr(sizes),
                           c.b.getDenseI64ArrayAttr(strides)));
  c.setResult(result, y);
  return success();
}

LogicalResult onnx_import::convertSlice(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> starts = c.constInts(1, "starts");
  FailureOr<SmallVector<int64_t>> ends =
      succeeded(starts) ? c.constInts(2, "ends")
                        : FailureOr<SmallVector<int64_t>>(failure());
  if (failed(starts) || failed(ends))
    return failure();
  size_t n = starts->size();
  if (ends->size() != n)
    return c.error("starts and ends have different lengths");
  SmallVector<int64_t> axes, steps(n, 1);
  int64_t rank = type->getRank();
  if (c.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = c.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < n; ++i)
      axes.push_back(i);
  }
  if (c.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> s = c.constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  if (axes.size() != n || steps.size() != n)
    return c.error("starts, ends, axes and steps must have the same length");
  SmallVector<int64_t> offsets(rank, 0), sizes(type->getShape()),
      strides(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    FailureOr<int64_t> axis = normalizeAxis(c, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return c.error("axis " + Twine(*axis) + " is sliced twice");
    seen[*axis] = true;
    int64_t dim = type->getDimSize(*axis), step = steps[i];
    if (step == 0)
      return c.error("steps must be non-zero");
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    uint64_t absStep = step < 0 ? uint64_t(0) - uint64_t(step) : uint64_t(step);
    int64_t size = 0;
    if (step > 0 && end > start)
      size = int64_t((uint64_t(end - start) - 1) / absStep + 1);
    else if (step < 0 && start > end)
      size = int64_t((uint64_t(start - end) - 1) / absStep + 1);
    if (dim == 0)
      size = 0;
    offsets[*axis] = size ? start : 0;
    sizes[*axis] = size;
    strides[*axis] = size > 1 ? step : 1;
  }
  return emitSlice(c, 0, offsets, sizes, strides);
}

LogicalResult onnx_import::convertSplit(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 0);
  FailureOr<std::optional<int64_t>> numOutputs = c.attrIntOpt("num_outputs");
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(axisAttr) || failed(numOutputs) || failed(type))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, type->getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type->getDimSize(*axis);
  SmallVector<int64_t> split;
  if (c.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = c.constInts(1, "split");
    if (failed(s))
      return failure();
    split = *s;
    if (int64_t(split.size()) != c.numOutputs())
      return c.error("split has " + Twine(split.size()) + " entries for " +
                     Twine(c.numOutputs()) + " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0 || s > kMaxDim)
        return c.error("split sizes must be non-negative");
      sum += s;
    }
    if (sum != dim)
      return c.error("split sizes sum to " + Twine(sum) + ", not the dim " +
                     Twine(dim));
  } else {
    int64_t parts = numOutputs->value_or(c.numOutputs());
    if (parts <= 0 || parts != c.numOutputs())
      return c.error("cannot split into " + Twine(parts) + " parts for " +
                     Twine(c.numOutputs()) + " outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      split.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
  int64_t rank = type->getRank(), offset = 0;
  for (int64_t i = 0; i < int64_t(split.size()); ++i) {
    SmallVector<int64_t> offs(rank, 0), sizes(type->getShape()),
        strides(rank, 1);
    offs[*axis] = split[i] ? offset : 0;
    sizes[*axis] = split[i];
    offset += split[i];
    if (c.outputUsed(i) && failed(emitSlice(c, i, offs, sizes, strides)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Gather, scatter
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertGather(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 0);
  FailureOr<RankedTensorType> dataType = c.type(0), idxType = c.type(1);
  if (failed(axisAttr) || failed(dataType) || failed(idxType))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, dataType->getRank());
  if (failed(axis))
    return failure();
  if (!isa<IntegerType>(idxType->getElementType()) ||
      !cast<IntegerType>(idxType->getElementType()).isSignless() ||
      idxType->getElementType().isInteger(1))
    return c.error("indices must be int32 or int64");
  int64_t dim = dataType->getDimSize(*axis);
  HostTensorRef idx = c.host(1);
  if (idx)
    for (int64_t v : idx->ints)
      if (v < -dim || v >= dim)
        return c.error("index " + Twine(v) + " is out of range for dim " +
                       Twine(*axis) + " of size " + Twine(dim));
  if (HostTensorRef data = c.host(0); data && idx) {
    SmallVector<int64_t> shape(data->shape.begin(),
                               data->shape.begin() + *axis);
    shape.append(idx->shape.begin(), idx->shape.end());
    shape.append(data->shape.begin() + *axis + 1, data->shape.end());
    int64_t n = checkedNumElements(shape);
    if (n >= 0 && n <= kMaxFoldElements) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= data->shape[d];
      for (size_t d = *axis + 1; d < data->shape.size(); ++d)
        inner *= data->shape[d];
      if (n == 0)
        outer = 0;
      std::vector<int64_t> src;
      src.reserve(n);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k : idx->ints) {
          int64_t j = k < 0 ? k + dim : k;
          for (int64_t i = 0; i < inner; ++i)
            src.push_back((o * dim + j) * inner + i);
        }
      c.setHostResult(0, gatherHost(*data, shape, src));
      return success();
    }
  }
  TRY(data, c.value(0));
  TRY(indices, c.value(1));
  if (data.getDefiningOp<WeightOp>() && *axis == 0 &&
      shapeOf(data).size() == 2 && isa<FloatType>(elemOf(data))) {
    TRY(y, c.create<EmbeddingOp>(data, indices, /*row_offset=*/Value(),
                                 /*rows=*/IntegerAttr()));
    c.setResult(0, y);
    return success();
  }
  TRY(y, c.create<GatherOp>(data, indices, c.b.getI64IntegerAttr(*axis)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertScatterElements(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 0);
  FailureOr<std::string> red = c.attrString("reduction", "none");
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(axisAttr) || failed(red) || failed(type))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, type->getRank());
  if (failed(axis))
    return failure();
  BinaryKindAttr reduction;
  if (*red == "add")
    reduction = BinaryKindAttr::get(c.ctx, BinaryKind::add);
  else if (*red == "mul")
    reduction = BinaryKindAttr::get(c.ctx, BinaryKind::mul);
  else if (*red == "max")
    reduction = BinaryKindAttr::get(c.ctx, BinaryKind::max);
  else if (*red == "min")
    reduction = BinaryKindAttr::get(c.ctx, BinaryKind::min);
  else if (*red != "none")
    return c.error("unknown reduction '" + *red + "'");
  TRY(data, c.value(0));
  TRY(indices, c.value(1));
  TRY(updates, c.value(2));
  TRY(y, c.create<ScatterOp>(data, indices, updates,
                             c.b.getI64IntegerAttr(*axis), reduction));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Pad, Expand, Tile
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertPad(NodeContext &c) {
  FailureOr<std::string> modeAttr = c.attrString("mode", "constant");
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(modeAttr) || failed(type))
    return failure();
  std::optional<PadMode> mode =
      llvm::StringSwitch<std::optional<PadMode>>(*modeAttr)
          .Case("constant", PadMode::constant)
          .Case("reflect", PadMode::reflect)
          .Case("edge", PadMode::edge)
          .Case("wrap", PadMode::wrap)
          .Default(std::nullopt);
  if (!mode)
    return c.error("unknown pad mode '" + *modeAttr + "'");
  FailureOr<SmallVector<int64_t>> pads = c.constInts(1, "pads");
  if (failed(pads))
    return failure();
  double value = 0.0;
  if (c.hasInput(2)) {
    FailureOr<double> v = c.constScalar(2, "constant_value");
    if (failed(v))
      return failure();
    value = *v;
  }
  int64_t rank = type->getRank();
  SmallVector<int64_t> axes;
  if (c.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = c.constInts(3, "axes");
    if (failed(a))
      return failure();
    for (int64_t x : *a) {
      FailureOr<int64_t> n = normalizeAxis(c, x, rank);
      if (failed(n))
        return failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads->size() != 2 * axes.size())
    return c.error("pads has " + Twine(pads->size()) + " entries for " +
                   Twine(axes.size()) + " axes");
  SmallVector<int64_t> full(2 * rank, 0);
  int64_t k = axes.size();
  for (int64_t i = 0; i < k; ++i) {
    int64_t lo = (*pads)[i], hi = (*pads)[k + i];
    if (std::abs(lo) > kMaxDim || std::abs(hi) > kMaxDim)
      return c.error("pads are too large");
    full[axes[i]] = lo;
    full[rank + axes[i]] = hi;
  }
  TRY(x, c.value(0));
  if (llvm::all_of(full, [](int64_t p) { return p == 0; })) {
    c.setResult(0, x);
    return success();
  }
  TRY(y, c.create<PadOp>(PadModeAttr::get(c.ctx, *mode), x,
                         c.b.getDenseI64ArrayAttr(full),
                         c.b.getF64FloatAttr(value)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertExpand(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = c.constInts(1, "shape");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return c.error("invalid shape " + shapeStr(*shape));
  auto out = broadcastShapes(type->getShape(), *shape);
  if (failed(out))
    return c.error("cannot broadcast " + shapeStr(type->getShape()) +
                   " with " + shapeStr(*shape));
  if (failed(checkShape(c, *out)))
    return failure();
  if (HostTensorRef h = c.host(0))
    if (foldable(*out)) {
      c.setHostResult(0, broadcastHost(*h, *out));
      return success();
    }
  TRY(x, c.value(0));
  TRY(y, c.expand(x, *out));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertTile(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = c.constInts(1, "repeats");
  if (failed(repeats))
    return failure();
  int64_t rank = type->getRank();
  if (int64_t(repeats->size()) != rank)
    return c.error("repeats has " + Twine(repeats->size()) +
                   " entries for rank " + Twine(rank));
  // [d0, d1] -> [1, d0, 1, d1] -> expand [r0, d0, r1, d1] -> [r0*d0, r1*d1]
  SmallVector<int64_t> split, expanded, out;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*repeats)[d], n = type->getDimSize(d);
    if (r < 0 || r > kMaxDim)
      return c.error("repeats must be non-negative");
    if (checkedNumElements({r, n}) < 0)
      return c.error("the tiled result is too large");
    split.append({1, n});
    expanded.append({r, n});
    out.push_back(r * n);
  }
  if (failed(checkShape(c, expanded)))
    return failure();
  if (HostTensorRef h = c.host(0))
    if (foldable(out)) {
      HostTensor t = *h;
      t.shape = split;
      HostTensor e = broadcastHost(t, expanded);
      e.shape = out;
      c.setHostResult(0, std::move(e));
      return success();
    }
  TRY(x, c.value(0));
  TRY(r1, c.reshape(x, split));
  TRY(e, c.expand(r1, expanded));
  TRY(y, c.reshape(e, out));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertDepthToSpace(NodeContext &c) {
  FailureOr<int64_t> bs = c.requiredAttrInt("blocksize");
  FailureOr<std::string> mode = c.attrString("mode", "DCR");
  if (failed(bs) || failed(mode))
    return failure();
  TRY(x, c.value(0));
  ArrayRef<int64_t> s = shapeOf(x);
  if (s.size() != 4)
    return c.error("input must be [N, C, H, W]");
  int64_t b = *bs;
  if (b <= 0 || b > (int64_t(1) << 20) || s[1] % (b * b) != 0)
    return c.error("blocksize " + Twine(b) + " does not divide the channels");
  int64_t n = s[0], ch = s[1] / (b * b), h = s[2], w = s[3];
  if (checkedNumElements({h, b}) < 0 || checkedNumElements({w, b}) < 0)
    return c.error("the result is too large");
  SmallVector<int64_t> tmp, perm;
  if (*mode == "DCR") {
    tmp = {n, b, b, ch, h, w};
    perm = {0, 3, 4, 1, 5, 2};
  } else if (*mode == "CRD") {
    tmp = {n, ch, b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    return c.error("mode must be DCR or CRD");
  }
  TRY(r, c.reshape(x, tmp));
  TRY(t, c.transpose(r, perm));
  TRY(y, c.reshape(t, {n, ch, h * b, w * b}));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertSpaceToDepth(NodeContext &c) {
  FailureOr<int64_t> bs = c.requiredAttrInt("blocksize");
  if (failed(bs))
    return failure();
  TRY(x, c.value(0));
  ArrayRef<int64_t> s = shapeOf(x);
  if (s.size() != 4)
    return c.error("input must be [N, C, H, W]");
  int64_t b = *bs;
  if (b <= 0 || b > (int64_t(1) << 20) || s[2] % b != 0 || s[3] % b != 0)
    return c.error("blocksize " + Twine(b) + " does not divide H and W");
  int64_t n = s[0], ch = s[1], h = s[2] / b, w = s[3] / b;
  if (checkedNumElements({ch, b, b}) < 0)
    return c.error("the result is too large");
  TRY(r, c.reshape(x, {n, ch, h, b, w, b}));
  TRY(t, c.transpose(r, {0, 3, 5, 1, 2, 4}));
  TRY(y, c.reshape(t, {n, ch * b * b, h, w}));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// OneHot, Trilu, NonZero, CumSum
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertOneHot(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", -1);
  FailureOr<RankedTensorType> idxType = c.type(0);
  if (failed(axisAttr) || failed(idxType))
    return failure();
  FailureOr<double> depthV = c.constScalar(1, "depth");
  if (failed(depthV))
    return failure();
  HostTensorRef values = c.attrHost(2);
  if (failed(c.tensor(2)))
    return failure();
  if (!values)
    return c.unsupported("the values input must be known at import time");
  if (values->numel() != 2)
    return c.error("values must hold [off, on]");
  if (!(*depthV >= 1) || *depthV > double(kMaxDim))
    return c.error("depth must be positive");
  int64_t depth = int64_t(*depthV);
  int64_t rank = idxType->getRank();
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, rank + 1);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(idxType->getShape());
  outShape.insert(outShape.begin() + *axis, depth);
  if (failed(checkShape(c, outShape)))
    return failure();
  // mask = (unsqueeze(idx normalized) == iota along axis)
  TRY(idx, c.value(0));
  Type ie = elemOf(idx);
  if (!isa<IntegerType>(ie) && !isa<FloatType>(ie))
    return c.error("indices must be numeric");
  TRY(neg, c.compare(ComparePredicate::lt, idx, c.scalar(ie, 0)));
  TRY(wrapped, c.binary(BinaryKind::add, idx, c.scalar(ie, double(depth))));
  TRY(norm, c.where(neg, wrapped, idx));
  SmallVector<int64_t> unsq(idxType->getShape());
  unsq.insert(unsq.begin() + *axis, 1);
  TRY(u, c.reshape(norm, unsq));
  if (depth > kMaxFoldElements)
    return c.unsupported("OneHot depth larger than " +
                         Twine(kMaxFoldElements));
  HostTensor iota;
  iota.dtype = typeToDType(ie);
  iota.shape.assign(rank + 1, 1);
  iota.shape[*axis] = depth;
  iota.allocate();
  for (int64_t i = 0; i < depth; ++i)
    storeElement(iota, i, double(i), i, iota.isFloat());
  TRY(mask, c.compare(ComparePredicate::eq, u, c.constant(iota)));
  HostTensor off = *values, on = *values;
  off.shape.clear();
  on.shape.clear();
  if (off.isFloat()) {
    off.floats = {values->floats[0]};
    on.floats = {values->floats[1]};
  } else {
    off.ints = {values->ints[0]};
    on.ints = {values->ints[1]};
  }
  TRY(y, c.where(mask, c.constant(on), c.constant(off)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertTrilu(NodeContext &c) {
  FailureOr<int64_t> upper = c.attrInt("upper", 1);
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(upper) || failed(type))
    return failure();
  if (type->getRank() < 2)
    return c.error("input must have rank >= 2");
  int64_t n = type->getDimSize(type->getRank() - 2),
          m = type->getDimSize(type->getRank() - 1);
  if (!foldable({n, m}) || n > kMaxFoldElements || m > kMaxFoldElements)
    return c.unsupported("Trilu of matrices larger than " +
                         Twine(kMaxFoldElements) + " elements");
  int64_t k = 0;
  if (c.hasInput(1)) {
    FailureOr<RankedTensorType> kType = c.type(1);
    if (failed(kType))
      return failure();
    if (kType->getNumElements() != 1)
      return c.error("k must hold one element");
    HostTensorRef kv = c.host(1);
    if (!kv) {
      // Run-time k: keep where (j - i) >= k (upper) or <= k (lower).
      HostTensor diff;
      diff.dtype = typeToDType(kType->getElementType());
      if (!isIntegerDType(diff.dtype) || diff.dtype == onnx::TensorProto::BOOL)
        return c.error("k must be an integer");
      diff.shape = {n, m};
      diff.allocate();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
          storeElement(diff, i * m + j, 0.0, j - i, false);
      TRY(x, c.value(0));
      TRY(kValue, c.value(1));
      TRY(k0, c.reshape(kValue, {}));
      TRY(mask, c.compare(*upper ? ComparePredicate::ge : ComparePredicate::le,
                          c.constant(diff), k0));
      TRY(y, c.where(mask, x, c.scalar(elemOf(x), 0)));
      c.setResult(0, y);
      return success();
    }
    k = clampToInt(kv->getDouble(0), -kMaxDim, kMaxDim);
  }
  HostTensor mask;
  mask.dtype = onnx::TensorProto::BOOL;
  mask.shape = {n, m};
  mask.allocate();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      mask.ints[i * m + j] = *upper ? j - i >= k : j - i <= k;
  if (HostTensorRef h = c.host(0)) {
    HostTensor out = *h;
    int64_t batch = h->numel() / std::max<int64_t>(n * m, 1);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n * m; ++i)
        if (!mask.ints[i])
          storeElement(out, b * n * m + i, 0.0, 0, false);
    c.setHostResult(0, std::move(out));
    return success();
  }
  TRY(x, c.value(0));
  TRY(y, c.where(c.constant(mask), x, c.scalar(elemOf(x), 0)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertNonZero(NodeContext &c) {
  if (failed(c.tensor(0)))
    return failure();
  HostTensorRef h = c.host(0);
  if (!h)
    return c.unsupported("NonZero of run-time data (its result shape is "
                         "data-dependent)");
  int64_t rank = h->shape.size();
  SmallVector<int64_t> strides = stridesOf(h->shape);
  std::vector<int64_t> hits;
  for (int64_t i = 0, n = h->numel(); i < n; ++i)
    if (h->getDouble(i) != 0)
      hits.push_back(i);
  HostTensor out;
  out.dtype = onnx::TensorProto::INT64;
  out.shape = {rank, int64_t(hits.size())};
  out.allocate();
  for (int64_t d = 0; d < rank; ++d)
    for (size_t j = 0; j < hits.size(); ++j)
      out.ints[d * hits.size() + j] = (hits[j] / strides[d]) % h->shape[d];
  c.setHostResult(0, std::move(out));
  return success();
}

LogicalResult onnx_import::convertCumSum(NodeContext &c) {
  FailureOr<int64_t> exclusive = c.attrInt("exclusive", 0);
  FailureOr<int64_t> reverse = c.attrInt("reverse", 0);
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(exclusive) || failed(reverse) || failed(type))
    return failure();
  FailureOr<double> axisV = c.constScalar(1, "axis");
  if (failed(axisV))
    return failure();
  int64_t rank = type->getRank();
  FailureOr<int64_t> axis = normalizeAxis(
      c, clampToInt(*axisV, -kMaxDim, kMaxDim), rank);
  if (failed(axis))
    return failure();
  int64_t n = type->getDimSize(*axis);
  // y = x @ T along the axis, T[j][i] = 1 when element j contributes to i.
  if (!foldable({n, n}))
    return c.unsupported("CumSum along a dim larger than 512");
  Type e = type->getElementType();
  if (!isa<FloatType>(e))
    return c.unsupported("CumSum of integer tensors");
  HostTensor tri;
  tri.dtype = typeToDType(e);
  tri.shape = {n, n};
  tri.allocate();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      bool on = *reverse ? (*exclusive ? j > i : j >= i)
                         : (*exclusive ? j < i : j <= i);
      tri.floats[j * n + i] = on ? 1.0 : 0.0;
    }
  TRY(x, c.value(0));
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  TRY(xt, c.transpose(x, perm));
  Value lhs = xt;
  SmallVector<int64_t> tShape(shapeOf(xt));
  if (rank == 1) {
    TRY(r, c.reshape(xt, {1, n}));
    lhs = r;
  }
  TRY(mm, c.create<MatmulOp>(lhs, c.constant(tri)));
  TRY(back, c.reshape(mm, tShape));
  SmallVector<int64_t> inv(rank);
  for (int64_t d = 0; d < rank; ++d)
    inv[perm[d]] = d;
  TRY(y, c.transpose(back, inv));
  c.setResult(0, y);
  return success();
}
