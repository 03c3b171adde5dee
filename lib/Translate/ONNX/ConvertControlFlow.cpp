//===- ConvertControlFlow.cpp - Loop, If and sequences, at import time ----===//
//
// Exporters emit control flow for simple repetition (a Loop with a constant
// trip count that stacks its per-iteration results, SplitToSequence /
// ConcatFromSequence pairs) and for shape-dependent branches whose condition
// folds. The loom graph has no control flow, so these are resolved while
// importing: a Loop with a known trip count and condition is unrolled (its
// body imported once per iteration), an If with a known condition imports
// the taken branch, and sequences are tracked element by element. Anything
// that would need run-time control flow is reported as unsupported.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

/// The tensor of an imported value, or failure with a diagnostic.
static FailureOr<TensorRef> asTensor(NodeContext &c, const ImportedValue *v,
                                     StringRef name) {
  if (!v) {
    (void)c.error("value '" + name + "' is not defined");
    return failure();
  }
  if (!v->tensor) {
    (void)c.unsupported("value '" + name + "' is " +
                        (v->sequence ? "a sequence where a tensor is expected"
                                     : "not produced by the importer"));
    return failure();
  }
  return v->tensor;
}

static TensorRef hostTensorRef(MLIRContext *ctx, HostTensor h) {
  auto t = std::make_shared<TensorValue>();
  t->type = RankedTensorType::get(h.shape, dtypeToType(ctx, h.dtype));
  t->host = std::make_shared<const HostTensor>(std::move(h));
  return t;
}

static TensorRef ssaTensorRef(Value v) {
  auto t = std::make_shared<TensorValue>();
  t->type = cast<RankedTensorType>(v.getType());
  t->ssa = v;
  return t;
}

/// Concatenates `parts` along `axis`; with `newAxis` each part first gains a
/// unit dim at `axis` (stacking).
static FailureOr<TensorRef> concatTensors(NodeContext &c,
                                          ArrayRef<TensorRef> parts,
                                          int64_t axisAttr, bool newAxis) {
  if (parts.empty()) {
    (void)c.error("cannot concatenate an empty sequence");
    return failure();
  }
  int64_t rank = parts[0]->type.getRank();
  FailureOr<int64_t> axis =
      normalizeAxis(c, axisAttr, newAxis ? rank + 1 : rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape;
  bool allHost = true;
  for (const TensorRef &p : parts) {
    if (p->type.getRank() != rank ||
        p->type.getElementType() != parts[0]->type.getElementType()) {
      (void)c.error("sequence elements differ in rank or dtype");
      return failure();
    }
    allHost &= bool(c.imp.hostOf(*p, c.loc));
  }
  auto partShape = [&](const TensorRef &p) {
    SmallVector<int64_t> s(p->type.getShape());
    if (newAxis)
      s.insert(s.begin() + *axis, 1);
    return s;
  };
  outShape = partShape(parts[0]);
  outShape[*axis] = 0;
  for (const TensorRef &p : parts) {
    SmallVector<int64_t> s = partShape(p);
    for (size_t d = 0; d < s.size(); ++d)
      if (int64_t(d) != *axis && s[d] != outShape[d]) {
        (void)c.error("sequence elements have incompatible shapes");
        return failure();
      }
    outShape[*axis] += s[*axis];
  }
  if (checkedNumElements(outShape) < 0) {
    (void)c.error("concatenated result is too large");
    return failure();
  }
  if (allHost && foldable(outShape)) {
    HostTensor out;
    out.dtype = c.imp.hostOf(*parts[0], c.loc)->dtype;
    out.shape = outShape;
    int64_t outer = 1;
    for (int64_t d = 0; d < *axis; ++d)
      outer *= outShape[d];
    // Nothing to copy into an empty result (its outer dims may be huge).
    if (checkedNumElements(outShape) == 0)
      outer = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const TensorRef &p : parts) {
        HostTensorRef h = c.imp.hostOf(*p, c.loc);
        int64_t chunk = outer ? h->numel() / outer : 0;
        if (h->isFloat())
          out.floats.insert(out.floats.end(), h->floats.begin() + o * chunk,
                            h->floats.begin() + (o + 1) * chunk);
        else
          out.ints.insert(out.ints.end(), h->ints.begin() + o * chunk,
                          h->ints.begin() + (o + 1) * chunk);
      }
    return hostTensorRef(c.ctx, std::move(out));
  }
  SmallVector<Value> values;
  for (const TensorRef &p : parts) {
    TRY(v, c.imp.materialize(*p, c.loc));
    TRY(r, c.reshape(v, partShape(p)));
    values.push_back(r);
  }
  if (values.size() == 1)
    return ssaTensorRef(values[0]);
  TRY(y, c.create<ConcatOp>(ValueRange(values), c.b.getI64IntegerAttr(*axis)));
  return ssaTensorRef(y);
}

//===----------------------------------------------------------------------===//
// Loop and If
//===----------------------------------------------------------------------===//

static FailureOr<const onnx::GraphProto *> graphAttr(NodeContext &c,
                                                     StringRef name) {
  const onnx::AttributeProto *a = c.attr(name);
  if (!a || !a->has_g()) {
    (void)c.error("missing graph attribute '" + name + "'");
    return failure();
  }
  return &a->g();
}

LogicalResult onnx_import::convertLoop(NodeContext &c) {
  FailureOr<const onnx::GraphProto *> bodyOr = graphAttr(c, "body");
  if (failed(bodyOr))
    return failure();
  const onnx::GraphProto &body = **bodyOr;
  int64_t numCarried = c.numInputs() - 2;
  if (numCarried < 0)
    return c.error("needs the trip count and condition inputs (possibly "
                   "empty)");
  if (body.input_size() != numCarried + 2)
    return c.error("body has " + Twine(body.input_size()) + " inputs, " +
                   "expected " + Twine(numCarried + 2));
  int64_t numScan = body.output_size() - 1 - numCarried;
  if (numScan < 0 || c.numOutputs() != numCarried + numScan)
    return c.error("body outputs do not match the node's outputs");

  std::optional<int64_t> tripCount;
  if (c.hasInput(0)) {
    HostTensorRef m = c.host(0);
    if (failed(c.tensor(0)))
      return failure();
    if (!m || m->numel() != 1)
      return c.unsupported("Loop whose trip count is computed at run time");
    if (m->isFloat())
      return c.error("the trip count must be an integer");
    tripCount = m->ints[0];
  }
  bool condGiven = c.hasInput(1);
  bool cond = true;
  if (condGiven) {
    HostTensorRef h = c.host(1);
    if (failed(c.tensor(1)))
      return failure();
    if (!h || h->numel() != 1)
      return c.unsupported("Loop whose condition is computed at run time");
    cond = h->getDouble(0) != 0;
  }
  if (!tripCount && !condGiven)
    return c.unsupported("Loop without trip count or condition (infinite)");

  SmallVector<ImportedValue> carried;
  for (int64_t j = 0; j < numCarried; ++j) {
    const ImportedValue *v = c.scope.lookup(c.inputName(2 + j));
    if (!v || (!v->tensor && !v->sequence))
      return c.unsupported("loop-carried value '" + c.inputName(2 + j) +
                           "' is not available");
    carried.push_back(*v);
  }
  std::vector<std::vector<TensorRef>> scans(numScan);
  int64_t iter = 0;
  for (;; ++iter) {
    if (tripCount && iter >= *tripCount)
      break;
    if (!cond)
      break;
    if (iter >= kMaxLoopIterations)
      return c.unsupported("Loop of more than " + Twine(kMaxLoopIterations) +
                           " iterations (it is unrolled at import time)");
    Scope s(&c.scope);
    HostTensor iterNum;
    iterNum.dtype = onnx::TensorProto::INT64;
    iterNum.ints = {iter};
    HostTensor condIn;
    condIn.dtype = onnx::TensorProto::BOOL;
    condIn.ints = {cond ? 1 : 0};
    ImportedValue iv, cv;
    iv.tensor = hostTensorRef(c.ctx, iterNum);
    cv.tensor = hostTensorRef(c.ctx, condIn);
    if (!body.input(0).name().empty())
      s.define(body.input(0).name(), iv);
    if (!body.input(1).name().empty())
      s.define(body.input(1).name(), cv);
    for (int64_t j = 0; j < numCarried; ++j)
      s.define(body.input(2 + j).name(), carried[j]);
    if (failed(importSubgraph(c.imp, body, s)))
      return failure();
    if (condGiven) {
      const std::string &name = body.output(0).name();
      FailureOr<TensorRef> t = asTensor(c, s.lookup(name), name);
      if (failed(t))
        return failure();
      HostTensorRef h = c.imp.hostOf(**t, c.loc);
      if (!h || h->numel() != 1)
        return c.unsupported("Loop whose condition is computed at run time "
                             "(body output '" + name + "')");
      cond = h->getDouble(0) != 0;
    }
    for (int64_t j = 0; j < numCarried; ++j) {
      const std::string &name = body.output(1 + j).name();
      const ImportedValue *v = s.lookup(name);
      if (!v || (!v->tensor && !v->sequence))
        return c.error("loop body output '" + name + "' is not produced");
      carried[j] = *v;
    }
    for (int64_t k = 0; k < numScan; ++k) {
      const std::string &name = body.output(1 + numCarried + k).name();
      FailureOr<TensorRef> t = asTensor(c, s.lookup(name), name);
      if (failed(t))
        return failure();
      scans[k].push_back(*t);
    }
  }
  for (int64_t j = 0; j < numCarried; ++j)
    c.setResult(j, carried[j]);
  for (int64_t k = 0; k < numScan; ++k) {
    if (!c.outputUsed(numCarried + k))
      continue;
    if (scans[k].empty())
      return c.unsupported("a Loop that runs zero times but has scan "
                           "outputs");
    FailureOr<TensorRef> stacked = concatTensors(c, scans[k], 0, true);
    if (failed(stacked))
      return failure();
    c.setTensorResult(numCarried + k, *stacked);
  }
  return success();
}

LogicalResult onnx_import::convertIf(NodeContext &c) {
  FailureOr<TensorRef> condT = c.tensor(0);
  if (failed(condT))
    return failure();
  HostTensorRef h = c.host(0);
  if (!h || h->numel() != 1)
    return c.unsupported("If whose condition is computed at run time");
  bool cond = h->getDouble(0) != 0;
  FailureOr<const onnx::GraphProto *> branch =
      graphAttr(c, cond ? "then_branch" : "else_branch");
  if (failed(branch))
    return failure();
  if ((*branch)->output_size() != c.numOutputs())
    return c.error("the branch has " + Twine((*branch)->output_size()) +
                   " outputs for " + Twine(c.numOutputs()) + " node outputs");
  Scope s(&c.scope);
  if (failed(importSubgraph(c.imp, **branch, s)))
    return failure();
  for (int64_t i = 0; i < c.numOutputs(); ++i) {
    const std::string &name = (*branch)->output(i).name();
    const ImportedValue *v = s.lookup(name);
    if (!v || (!v->tensor && !v->sequence))
      return c.error("branch output '" + name + "' is not produced");
    c.setResult(i, *v);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Sequences
//===----------------------------------------------------------------------===//

/// A position input (known scalar) normalized into [0, size + extra).
static FailureOr<int64_t> position(NodeContext &c, int64_t input, int64_t size,
                                   int64_t extra, int64_t dflt) {
  if (!c.hasInput(input))
    return dflt;
  FailureOr<double> p = c.constScalar(input, "position");
  if (failed(p))
    return failure();
  int64_t given = clampToInt(*p, -kMaxDim, kMaxDim);
  int64_t pos = given < 0 ? given + size : given;
  if (pos < 0 || pos >= size + extra) {
    (void)c.error("position " + Twine(given) +
                  " is out of range for a sequence of " + Twine(size));
    return failure();
  }
  return pos;
}

LogicalResult onnx_import::convertSequenceConstruct(NodeContext &c) {
  auto seq = std::make_shared<SequenceValue>();
  for (int64_t i = 0; i < c.numInputs(); ++i) {
    FailureOr<TensorRef> t = c.tensor(i);
    if (failed(t))
      return failure();
    seq->elements.push_back(*t);
  }
  if (!seq->elements.empty())
    seq->elemDType = typeToDType(seq->elements[0]->type.getElementType());
  c.setSequenceResult(0, seq);
  return success();
}

LogicalResult onnx_import::convertSequenceEmpty(NodeContext &c) {
  FailureOr<int64_t> dtype = c.attrInt("dtype", onnx::TensorProto::FLOAT);
  if (failed(dtype))
    return failure();
  auto seq = std::make_shared<SequenceValue>();
  seq->elemDType = int32_t(std::clamp<int64_t>(*dtype, -1, 1 << 20));
  c.setSequenceResult(0, seq);
  return success();
}

LogicalResult onnx_import::convertSequenceAt(NodeContext &c) {
  FailureOr<SequenceRef> seq = c.sequence(0);
  if (failed(seq))
    return failure();
  int64_t size = (*seq)->elements.size();
  FailureOr<int64_t> pos = position(c, 1, size, 0, 0);
  if (failed(pos))
    return failure();
  if (!c.hasInput(1))
    return c.error("missing the position input");
  c.setTensorResult(0, (*seq)->elements[*pos]);
  return success();
}

LogicalResult onnx_import::convertSequenceInsert(NodeContext &c) {
  FailureOr<SequenceRef> seq = c.sequence(0);
  FailureOr<TensorRef> t =
      succeeded(seq) ? c.tensor(1) : FailureOr<TensorRef>(failure());
  if (failed(seq) || failed(t))
    return failure();
  int64_t size = (*seq)->elements.size();
  FailureOr<int64_t> pos = position(c, 2, size, 1, size);
  if (failed(pos))
    return failure();
  auto out = std::make_shared<SequenceValue>(**seq);
  out->elements.insert(out->elements.begin() + *pos, *t);
  c.setSequenceResult(0, out);
  return success();
}

LogicalResult onnx_import::convertSequenceErase(NodeContext &c) {
  FailureOr<SequenceRef> seq = c.sequence(0);
  if (failed(seq))
    return failure();
  int64_t size = (*seq)->elements.size();
  if (size == 0)
    return c.error("cannot erase from an empty sequence");
  FailureOr<int64_t> pos = position(c, 1, size, 0, size - 1);
  if (failed(pos))
    return failure();
  auto out = std::make_shared<SequenceValue>(**seq);
  out->elements.erase(out->elements.begin() + *pos);
  c.setSequenceResult(0, out);
  return success();
}

LogicalResult onnx_import::convertSequenceLength(NodeContext &c) {
  FailureOr<SequenceRef> seq = c.sequence(0);
  if (failed(seq))
    return failure();
  HostTensor t;
  t.dtype = onnx::TensorProto::INT64;
  t.ints = {int64_t((*seq)->elements.size())};
  c.setHostResult(0, std::move(t));
  return success();
}

LogicalResult onnx_import::convertSplitToSequence(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 0);
  FailureOr<int64_t> keep = c.attrInt("keepdims", 1);
  FailureOr<TensorRef> in = c.tensor(0);
  if (failed(axisAttr) || failed(keep) || failed(in))
    return failure();
  RankedTensorType type = (*in)->type;
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (c.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> split = c.constInts(1, "split");
    FailureOr<RankedTensorType> st = c.type(1);
    if (failed(split) || failed(st))
      return failure();
    if (st->getRank() == 0) {
      int64_t chunk = (*split)[0];
      if (chunk <= 0)
        return c.error("split must be positive");
      if (dim / chunk > kMaxLoopIterations)
        return c.unsupported("SplitToSequence into more than " +
                             Twine(kMaxLoopIterations) + " parts");
      for (int64_t o = 0; o < dim; o += chunk)
        sizes.push_back(std::min(chunk, dim - o));
    } else {
      int64_t sum = 0;
      for (int64_t s : *split) {
        if (s < 0 || s > kMaxDim)
          return c.error("split sizes must be non-negative");
        sum += s;
      }
      if (sum != dim)
        return c.error("split sizes sum to " + Twine(sum) + ", not " +
                       Twine(dim));
      sizes = *split;
    }
  } else {
    if (dim > kMaxLoopIterations)
      return c.unsupported("SplitToSequence into more than " +
                           Twine(kMaxLoopIterations) + " parts");
    sizes.assign(dim, 1);
    squeeze = !*keep;
  }
  if (int64_t(sizes.size()) > kMaxLoopIterations)
    return c.unsupported("SplitToSequence into more than " +
                         Twine(kMaxLoopIterations) + " parts");
  auto seq = std::make_shared<SequenceValue>();
  seq->elemDType = typeToDType(type.getElementType());
  int64_t rank = type.getRank(), offset = 0;
  HostTensorRef h = c.imp.hostOf(**in, c.loc);
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = size;
    SmallVector<int64_t> outShape(shape);
    if (squeeze)
      outShape.erase(outShape.begin() + *axis);
    if (h) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= shape[d];
      for (int64_t d = *axis + 1; d < rank; ++d)
        inner *= shape[d];
      if (checkedNumElements(shape) == 0)
        outer = 0;
      std::vector<int64_t> src;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < size; ++k)
          for (int64_t i = 0; i < inner; ++i)
            src.push_back((o * dim + offset + k) * inner + i);
      seq->elements.push_back(
          hostTensorRef(c.ctx, gatherHost(*h, outShape, src)));
    } else {
      TRY(x, c.imp.materialize(**in, c.loc));
      SmallVector<int64_t> offs(rank, 0), strides(rank, 1);
      offs[*axis] = size ? offset : 0;
      Value part = x;
      if (shape != ArrayRef<int64_t>(type.getShape())) {
        TRY(sl, c.create<SliceOp>(x, c.b.getDenseI64ArrayAttr(offs),
                                  c.b.getDenseI64ArrayAttr(shape),
                                  c.b.getDenseI64ArrayAttr(strides)));
        part = sl;
      }
      TRY(r, c.reshape(part, outShape));
      seq->elements.push_back(ssaTensorRef(r));
    }
    offset += size;
  }
  c.setSequenceResult(0, seq);
  return success();
}

LogicalResult onnx_import::convertConcatFromSequence(NodeContext &c) {
  FailureOr<int64_t> axis = c.requiredAttrInt("axis");
  FailureOr<int64_t> newAxis = c.attrInt("new_axis", 0);
  FailureOr<SequenceRef> seq = c.sequence(0);
  if (failed(axis) || failed(newAxis) || failed(seq))
    return failure();
  FailureOr<TensorRef> t =
      concatTensors(c, (*seq)->elements, *axis, *newAxis != 0);
  if (failed(t))
    return failure();
  c.setTensorResult(0, *t);
  return success();
}
