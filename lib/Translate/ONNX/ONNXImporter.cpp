//===- ONNXImporter.cpp - ONNX protobuf -> loom dialect -------------------===//
//
// The entry points importONNXFile/importONNXBytes and the machinery around the
// conversion table: protobuf parsing and opset checks, graph inputs with their
// dynamic dims pinned, initializers as lazily materialized constants or
// `loom.weight` references (by file and byte offset, never read), scopes of
// named values, per-node dispatch with "unsupported op" diagnostics that name
// the nearest supported ops, and the final verification of the module.
//
// Nothing here trusts the input: every index, size and name is checked before
// a builder sees it, since Debian's MLIR has assertions compiled out.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <cstring>
#include <exception>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

//===----------------------------------------------------------------------===//
// Scope
//===----------------------------------------------------------------------===//

const ImportedValue *Scope::lookup(StringRef name) const {
  for (const Scope *s = this; s; s = s->parent) {
    auto it = s->values.find(name);
    if (it != s->values.end())
      return &it->second;
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<int64_t> onnx_import::normalizeAxis(NodeContext &c, int64_t axis,
                                              int64_t rank, bool inclusive) {
  // Negative axes count from the end of [0, rank); `inclusive` also admits
  // `rank` itself (Flatten's axis).
  int64_t limit = inclusive ? rank + 1 : rank;
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= limit) {
    (void)c.error("axis " + Twine(axis) + " is out of range for rank " +
                  Twine(rank));
    return failure();
  }
  return a;
}

FailureOr<SmallVector<int64_t>>
onnx_import::normalizeAxes(NodeContext &c, ArrayRef<int64_t> axes,
                           int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(c, a, rank);
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  llvm::sort(out);
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1]) {
      (void)c.error("axis " + Twine(out[i]) + " appears twice");
      return failure();
    }
  return out;
}

SmallVector<int64_t> onnx_import::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

HostTensor onnx_import::gatherHost(const HostTensor &t, ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> sourceIndex) {
  HostTensor out;
  out.dtype = t.dtype;
  out.shape.assign(shape.begin(), shape.end());
  if (t.isFloat()) {
    out.floats.reserve(sourceIndex.size());
    for (int64_t i : sourceIndex)
      out.floats.push_back(t.floats[i]);
  } else {
    out.ints.reserve(sourceIndex.size());
    for (int64_t i : sourceIndex)
      out.ints.push_back(t.ints[i]);
  }
  return out;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(Importer &imp, const onnx::NodeProto &node,
                         Scope &scope, Location loc)
    : imp(imp), node(node), scope(scope), loc(loc), b(imp.builder),
      ctx(imp.ctx), opset(imp.opset) {}

StringRef NodeContext::nodeName() const {
  if (!node.name().empty())
    return node.name();
  if (node.output_size() > 0 && !node.output(0).empty())
    return node.output(0);
  return "<unnamed>";
}

LogicalResult NodeContext::error(const Twine &msg) {
  emitError(loc) << opType() << " node '" << nodeName() << "': " << msg;
  return failure();
}

LogicalResult NodeContext::unsupported(const Twine &msg) {
  emitError(loc) << opType() << " node '" << nodeName()
                 << "': unsupported: " << msg;
  return failure();
}

FailureOr<TensorRef> NodeContext::tensor(int64_t i) {
  if (!hasInput(i)) {
    (void)error("missing required input #" + Twine(i));
    return failure();
  }
  const ImportedValue *v = scope.lookup(node.input(i));
  if (!v) {
    (void)error("uses value '" + node.input(i) +
                "', which nothing produces before it");
    return failure();
  }
  if (v->sequence) {
    (void)error("input #" + Twine(i) + " ('" + node.input(i) +
                "') is a sequence where a tensor is expected");
    return failure();
  }
  if (!v->tensor) {
    (void)unsupported("input '" + node.input(i) +
                      "' is an output the importer does not produce");
    return failure();
  }
  return v->tensor;
}

FailureOr<RankedTensorType> NodeContext::type(int64_t i) {
  FailureOr<TensorRef> t = tensor(i);
  if (failed(t))
    return failure();
  return (*t)->type;
}

FailureOr<Value> NodeContext::value(int64_t i) {
  FailureOr<TensorRef> t = tensor(i);
  if (failed(t))
    return failure();
  return imp.materialize(**t, loc);
}

HostTensorRef NodeContext::host(int64_t i) {
  if (!hasInput(i))
    return nullptr;
  const ImportedValue *v = scope.lookup(node.input(i));
  if (!v || !v->tensor)
    return nullptr;
  return imp.hostOf(*v->tensor, loc);
}

HostTensorRef NodeContext::attrHost(int64_t i) {
  if (!hasInput(i))
    return nullptr;
  const ImportedValue *v = scope.lookup(node.input(i));
  if (!v || !v->tensor)
    return nullptr;
  return imp.hostOf(*v->tensor, loc, /*forAttribute=*/true);
}

bool NodeContext::allInputsKnown() {
  for (int64_t i = 0; i < numInputs(); ++i)
    if (hasInput(i) && !host(i))
      return false;
  return true;
}

FailureOr<SmallVector<int64_t>> NodeContext::constInts(int64_t i,
                                                       StringRef what) {
  if (!hasInput(i)) {
    (void)error("missing the " + what + " input (#" + Twine(i) + ")");
    return failure();
  }
  if (failed(tensor(i)))
    return failure();
  HostTensorRef h = attrHost(i);
  if (!h) {
    (void)unsupported("the " + what + " input '" + node.input(i) +
                      "' must be known at import time (a constant or a "
                      "foldable shape computation)");
    return failure();
  }
  if (h->isFloat()) {
    (void)error("the " + what + " input '" + node.input(i) +
                "' must be an integer tensor, not " + dtypeName(h->dtype));
    return failure();
  }
  return SmallVector<int64_t>(h->ints.begin(), h->ints.end());
}

FailureOr<double> NodeContext::constScalar(int64_t i, StringRef what) {
  if (failed(tensor(i)))
    return failure();
  HostTensorRef h = attrHost(i);
  if (!h) {
    (void)unsupported("the " + what + " input '" + node.input(i) +
                      "' must be known at import time");
    return failure();
  }
  if (h->numel() != 1) {
    (void)error("the " + what + " input must hold one element, it has " +
                Twine(h->numel()));
    return failure();
  }
  return h->getDouble(0);
}

FailureOr<SequenceRef> NodeContext::sequence(int64_t i) {
  if (!hasInput(i)) {
    (void)error("missing required input #" + Twine(i));
    return failure();
  }
  const ImportedValue *v = scope.lookup(node.input(i));
  if (!v || !v->sequence) {
    (void)error("input '" + node.input(i) + "' must be a sequence");
    return failure();
  }
  return v->sequence;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

using onnx::AttributeProto;

static bool attrIs(const AttributeProto &a, AttributeProto::AttributeType t,
                   bool hasScalar) {
  return a.type() == t ||
         (a.type() == AttributeProto::UNDEFINED && hasScalar);
}

FailureOr<std::optional<int64_t>> NodeContext::attrIntOpt(StringRef name) {
  const AttributeProto *a = attr(name);
  if (!a)
    return std::optional<int64_t>();
  if (!attrIs(*a, AttributeProto::INT, a->has_i())) {
    (void)error("attribute '" + name + "' must be an int");
    return failure();
  }
  return std::optional<int64_t>(a->i());
}

FailureOr<int64_t> NodeContext::attrInt(StringRef name, int64_t dflt) {
  FailureOr<std::optional<int64_t>> v = attrIntOpt(name);
  if (failed(v))
    return failure();
  return v->value_or(dflt);
}

FailureOr<int64_t> NodeContext::requiredAttrInt(StringRef name) {
  FailureOr<std::optional<int64_t>> v = attrIntOpt(name);
  if (failed(v))
    return failure();
  if (!*v) {
    (void)error("missing required attribute '" + name + "'");
    return failure();
  }
  return **v;
}

FailureOr<double> NodeContext::attrFloat(StringRef name, double dflt) {
  const AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (!attrIs(*a, AttributeProto::FLOAT, a->has_f())) {
    (void)error("attribute '" + name + "' must be a float");
    return failure();
  }
  return double(a->f());
}

FailureOr<std::string> NodeContext::attrString(StringRef name,
                                               StringRef dflt) {
  const AttributeProto *a = attr(name);
  if (!a)
    return dflt.str();
  if (!attrIs(*a, AttributeProto::STRING, a->has_s())) {
    (void)error("attribute '" + name + "' must be a string");
    return failure();
  }
  return a->s();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::attrInts(StringRef name) {
  const AttributeProto *a = attr(name);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (!attrIs(*a, AttributeProto::INTS, a->ints_size() > 0)) {
    (void)error("attribute '" + name + "' must be a list of ints");
    return failure();
  }
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

FailureOr<std::optional<SmallVector<double>>>
NodeContext::attrFloats(StringRef name) {
  const AttributeProto *a = attr(name);
  if (!a)
    return std::optional<SmallVector<double>>();
  if (!attrIs(*a, AttributeProto::FLOATS, a->floats_size() > 0)) {
    (void)error("attribute '" + name + "' must be a list of floats");
    return failure();
  }
  return std::optional<SmallVector<double>>(
      SmallVector<double>(a->floats().begin(), a->floats().end()));
}

void NodeContext::setTensorResult(int64_t i, TensorRef t) {
  if (!outputUsed(i))
    return;
  ImportedValue v;
  v.tensor = std::move(t);
  scope.define(node.output(i), std::move(v));
}

void NodeContext::setResult(int64_t i, Value v) {
  auto t = std::make_shared<TensorValue>();
  t->type = cast<RankedTensorType>(v.getType());
  t->ssa = v;
  setTensorResult(i, std::move(t));
}

void NodeContext::setHostResult(int64_t i, HostTensor h) {
  auto t = std::make_shared<TensorValue>();
  t->type = RankedTensorType::get(h.shape, dtypeToType(ctx, h.dtype));
  t->host = std::make_shared<const HostTensor>(std::move(h));
  setTensorResult(i, std::move(t));
}

void NodeContext::setSequenceResult(int64_t i, SequenceRef s) {
  if (!outputUsed(i))
    return;
  ImportedValue v;
  v.sequence = std::move(s);
  scope.define(node.output(i), std::move(v));
}

void NodeContext::setResult(int64_t i, const ImportedValue &v) {
  if (outputUsed(i))
    scope.define(node.output(i), v);
}

LogicalResult NodeContext::checkResultTypes(ArrayRef<Type> types) {
  for (Type t : types)
    if (auto rt = dyn_cast<RankedTensorType>(t))
      if (checkedNumElements(rt.getShape()) < 0)
        return error("the result shape " + shapeString(rt.getShape()) +
                     " is too large");
  return success();
}

FailureOr<Value> NodeContext::reshape(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  int64_t n = checkedNumElements(shape);
  if (n < 0 || int64_t(shape.size()) > kMaxRank) {
    (void)error("invalid target shape " + shapeString(shape));
    return failure();
  }
  if (n != type.getNumElements()) {
    (void)error("cannot reshape " + shapeString(type.getShape()) + " (" +
                Twine(type.getNumElements()) + " elements) to " +
                shapeString(shape) + " (" + Twine(n) + " elements)");
    return failure();
  }
  return ReshapeOp::create(
             b, loc, RankedTensorType::get(shape, type.getElementType()), v)
      .getResult();
}

FailureOr<Value> NodeContext::transpose(Value v, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == int64_t(i);
  if (identity && perm.size() == shapeOf(v).size())
    return v;
  return create<TransposeOp>(v, b.getDenseI64ArrayAttr(perm));
}

FailureOr<Value> NodeContext::castElem(Value v, Type elemType) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elemType)
    return v;
  return CastOp::create(b, loc,
                        RankedTensorType::get(type.getShape(), elemType), v)
      .getResult();
}

FailureOr<Value> NodeContext::expand(Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto bc = broadcastShapes(type.getShape(), shape);
  if (failed(bc) || ArrayRef<int64_t>(*bc) != shape ||
      checkedNumElements(shape) < 0) {
    (void)error("cannot broadcast " + shapeString(type.getShape()) + " to " +
                shapeString(shape));
    return failure();
  }
  return ExpandOp::create(b, loc,
                          RankedTensorType::get(shape, type.getElementType()),
                          v)
      .getResult();
}

Value NodeContext::constant(const HostTensor &t) {
  return imp.getConstant(hostToAttr(t, ctx), loc);
}

Value NodeContext::scalar(Type elemType, double value) {
  HostTensor t;
  t.dtype = typeToDType(elemType);
  t.allocate();
  storeElement(t, 0, value, 0, /*fromFloat=*/true);
  return constant(t);
}

FailureOr<Value> NodeContext::unary(UnaryKind kind, Value v) {
  return create<UnaryOp>(UnaryKindAttr::get(ctx, kind), v);
}

FailureOr<Value> NodeContext::binary(BinaryKind kind, Value l, Value r) {
  return create<BinaryOp>(BinaryKindAttr::get(ctx, kind), l, r);
}

FailureOr<Value> NodeContext::compare(ComparePredicate p, Value l, Value r) {
  return create<CompareOp>(ComparePredicateAttr::get(ctx, p), l, r);
}

FailureOr<Value> NodeContext::where(Value c, Value t, Value f) {
  return create<WhereOp>(c, t, f);
}

FailureOr<Value> NodeContext::reduce(ReduceKind kind, Value v,
                                     ArrayRef<int64_t> axes, bool keepDims) {
  return create<ReduceOp>(ReduceKindAttr::get(ctx, kind), v,
                          b.getDenseI64ArrayAttr(axes),
                          b.getBoolAttr(keepDims));
}

//===----------------------------------------------------------------------===//
// Importer: values
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext *ctx, StringRef path, StringRef bytes,
                   const ImportOptions &options)
    : ctx(ctx), builder(ctx), options(options), path(path.str()),
      bytes(bytes) {
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  modelDir = dir.empty() ? "." : std::string(dir);
  fileRef = llvm::sys::path::filename(path).str();
}

Location Importer::fileLoc() {
  return FileLineColLoc::get(ctx, path, 0, 0);
}

Location Importer::nodeLoc(const onnx::NodeProto &node, int64_t index) {
  std::string name = node.name();
  if (name.empty())
    name = node.output_size() > 0 && !node.output(0).empty()
               ? node.output(0)
               : node.op_type() + "#" + std::to_string(index);
  return NameLoc::get(StringAttr::get(ctx, name), fileLoc());
}

LogicalResult Importer::fileError(const Twine &msg) {
  emitError(fileLoc()) << msg;
  return failure();
}

Value Importer::getConstant(DenseElementsAttr value, Location loc) {
  auto it = constantCache.find(value);
  if (it != constantCache.end())
    return it->second;
  OpBuilder::InsertionGuard guard(builder);
  if (lastConstant)
    builder.setInsertionPointAfter(lastConstant);
  else
    builder.setInsertionPointToStart(body);
  auto op = ConstantOp::create(builder, loc, value);
  lastConstant = op;
  constantCache[value] = op.getResult();
  return op.getResult();
}

FailureOr<TensorRef>
Importer::makeStored(const onnx::TensorProto &proto, StringRef name,
                     std::optional<EmbeddedData> embeddedData, bool isBuffer,
                     bool isInitializer, Location loc) {
  std::string error;
  FailureOr<RankedTensorType> type = tensorProtoType(proto, ctx, error);
  if (failed(type)) {
    emitError(loc) << "tensor '" << name << "' " << error;
    return failure();
  }
  auto stored = std::make_shared<StoredTensor>();
  stored->proto = &proto;
  stored->name = name.str();
  stored->embedded = embeddedData;
  stored->isBuffer = isBuffer || !isFloatDType(proto.data_type());
  stored->isModelState = isInitializer && isFloatDType(proto.data_type()) &&
                         proto.dims_size() > 0;
  auto t = std::make_shared<TensorValue>();
  t->type = *type;
  t->stored = std::move(stored);
  return t;
}

HostTensorRef Importer::hostOf(TensorValue &t, Location, bool forAttribute) {
  if (t.stored && t.stored->isModelState && !forAttribute)
    return nullptr;
  if (t.host)
    return t.host;
  if (!t.stored || t.stored->decodeFailed)
    return nullptr;
  int64_t n = t.type.getNumElements();
  int32_t dtype = t.stored->proto->data_type();
  bool small = n <= options.maxInlineElements ||
               (isIntegerDType(dtype) && n <= kMaxShapeLikeElements) ||
               (forAttribute && n <= kMaxShapeLikeElements);
  if (!small || n > kMaxFoldElements)
    return nullptr;
  std::string error;
  FailureOr<HostTensor> h =
      decodeTensorProto(*t.stored->proto, modelDir, error);
  if (failed(h)) {
    t.stored->decodeFailed = true;
    return nullptr;
  }
  t.host = std::make_shared<const HostTensor>(std::move(*h));
  return t.host;
}

FailureOr<Value> Importer::materialize(TensorValue &t, Location loc) {
  if (t.ssa)
    return t.ssa;
  if (t.stored) {
    int64_t n = t.type.getNumElements();
    if (n > options.maxInlineElements || t.stored->isModelState)
      return createWeight(t, loc);
    std::string error;
    FailureOr<HostTensor> h =
        decodeTensorProto(*t.stored->proto, modelDir, error);
    if (failed(h)) {
      emitError(loc) << "tensor '" << t.stored->name << "' " << error;
      return failure();
    }
    t.host = std::make_shared<const HostTensor>(std::move(*h));
  }
  if (!t.host) {
    emitError(loc) << "internal error: a value has neither an SSA value nor "
                      "known contents";
    return failure();
  }
  t.ssa = getConstant(hostToAttr(*t.host, ctx), loc);
  return t.ssa;
}

FailureOr<Value> Importer::createWeight(TensorValue &t, Location useLoc) {
  StoredTensor &s = *t.stored;
  const onnx::TensorProto &proto = *s.proto;
  auto cached = weightCache.find(&proto);
  if (cached != weightCache.end()) {
    t.ssa = cached->second;
    return t.ssa;
  }
  Location loc = NameLoc::get(StringAttr::get(ctx, s.name), fileLoc());
  int64_t n = t.type.getNumElements();
  uint64_t nbytes = uint64_t(n) * uint64_t(dtypeSize(proto.data_type()));
  std::string file;
  uint64_t offset = 0;

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string error;
    FailureOr<ExternalDataRef> ref =
        resolveExternalData(proto, modelDir, nbytes, error);
    if (failed(ref)) {
      emitError(useLoc) << "initializer '" << s.name << "' " << error;
      return failure();
    }
    file = ref->location;
    offset = ref->offset;
  } else {
    // Embedded: find the payload in the model file and check that it is
    // the one protobuf parsed.
    bool found = false;
    if (s.embedded && !s.embedded->ambiguous && s.embedded->offset <= this->bytes.size() &&
        this->bytes.size() - s.embedded->offset >= s.embedded->size) {
      const EmbeddedData &e = *s.embedded;
      const char *payload = this->bytes.data() + e.offset;
      if (proto.has_raw_data()) {
        const std::string &raw = proto.raw_data();
        found = e.field == 9 && e.size == raw.size() && e.size == nbytes &&
                std::memcmp(payload, raw.data(),
                            std::min<size_t>(raw.size(), 256)) == 0;
      } else if (proto.data_type() == onnx::TensorProto::FLOAT) {
        found = e.field == 4 && e.size == nbytes &&
                uint64_t(proto.float_data_size()) == uint64_t(n);
      } else if (proto.data_type() == onnx::TensorProto::DOUBLE) {
        found = e.field == 10 && e.size == nbytes &&
                uint64_t(proto.double_data_size()) == uint64_t(n);
      }
    }
    if (found && (path == "<stdin>" || path == "-")) {
      emitError(useLoc) << "initializer '" << s.name
                        << "' is embedded in a model read from standard "
                           "input; pass the model by file name so that "
                           "loom.weight can reference it";
      return failure();
    }
    if (!found) {
      // Stored as varints (int64_data, ...) or not locatable: keep it inline.
      std::string error;
      if (n > kMaxFoldElements * 16) {
        emitError(useLoc) << "initializer '" << s.name << "' (" << n
                          << " elements) stores its data in a form that "
                             "cannot be referenced by file offset; re-save "
                             "the model with raw_data or external data";
        return failure();
      }
      FailureOr<HostTensor> h = decodeTensorProto(proto, modelDir, error);
      if (failed(h)) {
        emitError(useLoc) << "initializer '" << s.name << "' " << error;
        return failure();
      }
      emitWarning(loc) << "initializer '" << s.name << "' (" << n
                       << " elements) cannot be referenced by file offset "
                          "(its data is not stored as raw bytes); it is "
                          "inlined as a constant";
      t.host = std::make_shared<const HostTensor>(std::move(*h));
      t.ssa = getConstant(hostToAttr(*t.host, ctx), loc);
      return t.ssa;
    }
    file = fileRef;
    offset = s.embedded->offset;
  }

  OpBuilder::InsertionGuard guard(builder);
  if (lastConstant)
    builder.setInsertionPointAfter(lastConstant);
  else
    builder.setInsertionPointToStart(body);
  auto op = WeightOp::create(
      builder, loc, t.type,
      WeightRoleAttr::get(ctx, s.isBuffer ? WeightRole::buffer
                                          : WeightRole::parameter),
      builder.getStringAttr(s.name), builder.getStringAttr(file),
      builder.getI64IntegerAttr(int64_t(offset)), TypeAttr());
  lastConstant = op;
  weightCache[&proto] = op.getResult();
  t.ssa = op.getResult();
  return t.ssa;
}

//===----------------------------------------------------------------------===//
// Importer: nodes
//===----------------------------------------------------------------------===//

static bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Reports an op that has no conversion.
static LogicalResult reportUnsupportedOp(Importer &imp,
                                         const onnx::NodeProto &node,
                                         Location loc) {
  std::string name = node.name().empty() ? (node.output_size() > 0
                                                ? node.output(0)
                                                : std::string("<unnamed>"))
                                         : node.name();
  std::string op = node.op_type();
  if (!isDefaultDomain(node.domain()))
    op = node.domain() + "." + op;
  int64_t version = imp.opset;
  if (!isDefaultDomain(node.domain()))
    for (const onnx::OperatorSetIdProto &id : imp.model.opset_import())
      if (id.domain() == node.domain())
        version = id.version();
  InFlightDiagnostic diag = emitError(loc);
  diag << "unsupported ONNX op '" << op << "' (node '" << name << "', opset "
       << version << ")";
  // The op may exist for other opsets.
  for (const Conversion &c : conversionTable())
    if (c.opType == node.op_type() && isDefaultDomain(node.domain())) {
      diag << "; supported for opsets " << c.minOpset << " to " << c.maxOpset;
      return failure();
    }
  SmallVector<StringRef> near = nearestOps(node.op_type());
  if (!near.empty()) {
    diag << "; nearest supported: ";
    llvm::interleaveComma(near, diag);
  }
  return failure();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, int64_t index,
                                   Scope &scope) {
  Location loc = nodeLoc(node, index);
  if (++importedNodes > kMaxImportedNodes)
    return fileError("the model imports more than " +
                     Twine(kMaxImportedNodes) +
                     " nodes (counting unrolled loops); giving up");
  const Conversion *conv = isDefaultDomain(node.domain())
                               ? findConversion(node.op_type(), opset)
                               : nullptr;
  if (!conv) {
    // A call of a model-local function (ModelProto.functions) is inlined.
    for (const onnx::FunctionProto &fn : model.functions())
      if (fn.name() == node.op_type() && fn.domain() == node.domain())
        return inlineFunction(node, fn, scope, loc);
    return reportUnsupportedOp(*this, node, loc);
  }

  NodeContext c(*this, node, scope, loc);
  c.index = index;
  // Every named input must exist; every output must be new.
  for (int64_t i = 0; i < node.input_size(); ++i) {
    const std::string &in = node.input(i);
    if (in.empty() || scope.lookup(in))
      continue;
    InFlightDiagnostic diag = emitError(loc);
    diag << node.op_type() << " node '" << c.nodeName() << "': input '" << in
         << "' is not produced by any earlier node, graph input or "
            "initializer";
    if (currentGraph)
      for (const onnx::NodeProto &other : currentGraph->node())
        for (const std::string &out : other.output())
          if (out == in) {
            diag << " (node '"
                 << (other.name().empty() ? out : other.name())
                 << "' produces it later: the nodes are not topologically "
                    "sorted, or form a cycle)";
            return failure();
          }
    return failure();
  }
  for (int64_t i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (!out.empty() && scope.definesLocally(out))
      return c.error("output '" + out + "' is already defined (ONNX values "
                                        "must be assigned once)");
    for (int64_t j = 0; j < i; ++j)
      if (!out.empty() && node.output(j) == out)
        return c.error("output '" + out + "' is listed twice");
  }

  if (failed(conv->convert(c)))
    return failure();

  // Outputs the conversion did not produce stay undefined-but-known, so that
  // a consumer gets a clear message.
  for (int64_t i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !scope.definesLocally(node.output(i)))
      scope.define(node.output(i), ImportedValue());
  return success();
}

LogicalResult Importer::inlineFunction(const onnx::NodeProto &node,
                                       const onnx::FunctionProto &fn,
                                       Scope &scope, Location loc) {
  std::string caller = node.name().empty()
                           ? (node.output_size() ? node.output(0) : fn.name())
                           : node.name();
  auto fail = [&](const Twine &msg) {
    emitError(loc) << "call of function '" << fn.name() << "' (node '"
                   << caller << "'): " << msg;
    return failure();
  };
  if (subgraphDepth >= kMaxSubgraphDepth)
    return fail("functions and subgraphs are nested deeper than " +
                Twine(kMaxSubgraphDepth) + " levels");
  if (node.input_size() > fn.input_size() ||
      node.output_size() > fn.output_size())
    return fail("the call has more inputs or outputs than the function");
  // The body sees only the function's inputs.
  Scope body;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      continue;
    const ImportedValue *v = scope.lookup(node.input(i));
    if (!v)
      return fail("input '" + node.input(i) + "' is not defined");
    body.define(fn.input(i), *v);
  }
  ++subgraphDepth;
  const onnx::GraphProto *savedGraph = currentGraph;
  currentGraph = nullptr;
  LogicalResult result = success();
  for (const onnx::NodeProto &inner : fn.node()) {
    // Attribute references take the caller's value (or the op default).
    onnx::NodeProto &copy = inlinedNodes.emplace_back(inner);
    copy.set_name(caller + "/" +
                  (inner.name().empty() ? inner.op_type() : inner.name()));
    copy.clear_attribute();
    for (const onnx::AttributeProto &a : inner.attribute()) {
      if (a.ref_attr_name().empty()) {
        *copy.add_attribute() = a;
        continue;
      }
      for (const onnx::AttributeProto &given : node.attribute())
        if (given.name() == a.ref_attr_name()) {
          onnx::AttributeProto *bound = copy.add_attribute();
          *bound = given;
          bound->set_name(a.name());
        }
    }
    if (failed(importNode(copy, -1, body))) {
      result = failure();
      break;
    }
  }
  currentGraph = savedGraph;
  --subgraphDepth;
  if (failed(result))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    const ImportedValue *v = body.lookup(fn.output(i));
    if (!v)
      return fail("function output '" + fn.output(i) + "' is not produced");
    if (scope.definesLocally(node.output(i)))
      return fail("output '" + node.output(i) + "' is already defined");
    scope.define(node.output(i), *v);
  }
  return success();
}

LogicalResult Importer::importNodes(const onnx::GraphProto &graph,
                                    Scope &scope, bool isMain) {
  const onnx::GraphProto *saved = currentGraph;
  currentGraph = &graph;
  for (int64_t i = 0; i < graph.node_size(); ++i)
    if (failed(importNode(graph.node(i), isMain ? i : -1, scope))) {
      currentGraph = saved;
      return failure();
    }
  currentGraph = saved;
  return success();
}

LogicalResult onnx_import::importSubgraph(Importer &imp,
                                          const onnx::GraphProto &graph,
                                          Scope &scope) {
  if (imp.subgraphDepth >= kMaxSubgraphDepth)
    return imp.fileError("subgraphs are nested deeper than " +
                         Twine(kMaxSubgraphDepth) + " levels");
  ++imp.subgraphDepth;
  LogicalResult result = success();
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.name().empty()) {
      result = imp.fileError("a subgraph initializer has no name");
      break;
    }
    Location loc = NameLoc::get(StringAttr::get(imp.ctx, init.name()),
                                imp.fileLoc());
    FailureOr<TensorRef> t =
        imp.makeStored(init, init.name(), std::nullopt, false,
                       /*isInitializer=*/true, loc);
    if (failed(t)) {
      result = failure();
      break;
    }
    ImportedValue v;
    v.tensor = *t;
    scope.define(init.name(), v);
  }
  if (succeeded(result))
    result = imp.importNodes(graph, scope, /*isMain=*/false);
  --imp.subgraphDepth;
  return result;
}

//===----------------------------------------------------------------------===//
// Importer: the model
//===----------------------------------------------------------------------===//

LogicalResult Importer::parseModel() {
  if (bytes.empty())
    return fileError("'" + path + "' is empty, not an ONNX model");
  if (bytes.size() > size_t(INT_MAX))
    return fileError("'" + path +
                     "' is larger than 2 GiB, which protobuf cannot parse; "
                     "store the weights as external data");
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    return fileError("'" + path +
                     "' is not a valid ONNX model: protobuf parsing failed "
                     "(the file is truncated or corrupt)");
  if (!indexEmbeddedData(bytes, embedded))
    return fileError("'" + path +
                     "' is not a valid ONNX model: malformed protobuf "
                     "(the file is truncated or corrupt)");
  if (!model.has_graph())
    return fileError("'" + path +
                     "' has no graph (is the file truncated, or not an ONNX "
                     "model?)");
  bool found = false;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (!isDefaultDomain(id.domain()))
      continue;
    if (found && id.version() != opset)
      return fileError("'" + path + "' imports the default ONNX domain "
                                    "twice, with opsets " +
                       Twine(opset) + " and " + Twine(id.version()));
    found = true;
    opset = int(std::clamp<int64_t>(id.version(), INT_MIN, INT_MAX));
  }
  if (!found) {
    // Fine for a graph made only of other domains' ops (each is then
    // reported as unsupported); otherwise the opset_import is missing.
    for (const onnx::NodeProto &node : model.graph().node())
      if (isDefaultDomain(node.domain()))
        return fileError("'" + path +
                         "' declares no opset for the default ONNX domain "
                         "(truncated file?)");
    opset = kMaxOpset;
  }
  if (opset < kMinOpset || opset > kMaxOpset)
    return fileError("unsupported ONNX opset " + Twine(opset) + " in '" +
                     path + "' (this importer supports opsets " +
                     Twine(kMinOpset) + " to " + Twine(kMaxOpset) +
                     "; convert the model with onnx.version_converter)");
  return success();
}

/// Records in `used` every name that a node of `graph` (or of a subgraph)
/// reads, except BatchNormalization statistics, which go to `stats`.
static void collectUses(const onnx::GraphProto &graph,
                        llvm::StringSet<> &stats, llvm::StringSet<> &used,
                        int depth) {
  if (depth > kMaxSubgraphDepth)
    return;
  for (const onnx::NodeProto &node : graph.node()) {
    bool bn = node.op_type() == "BatchNormalization" &&
              isDefaultDomain(node.domain());
    for (int i = 0; i < node.input_size(); ++i) {
      if (bn && (i == 3 || i == 4))
        stats.insert(node.input(i));
      else
        used.insert(node.input(i));
    }
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectUses(a.g(), stats, used, depth + 1);
      for (const onnx::GraphProto &g : a.graphs())
        collectUses(g, stats, used, depth + 1);
    }
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    used.insert(out.name());
}

void Importer::findBufferInitializers(const onnx::GraphProto &graph) {
  llvm::StringSet<> stats, used;
  collectUses(graph, stats, used, 0);
  for (const onnx::TensorProto &init : graph.initializer())
    if (stats.contains(init.name()) && !used.contains(init.name()))
      bufferNames.insert(init.name());
}

LogicalResult Importer::declareInputs(const onnx::GraphProto &graph,
                                      Scope &scope,
                                      SmallVectorImpl<Type> &argTypes,
                                      SmallVectorImpl<std::string> &argNames) {
  // Pins must name real inputs (checked first: a typo would otherwise show
  // up as an unpinned dim).
  SmallVector<std::string> inputNames;
  llvm::StringSet<> declared;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!scope.definesLocally(input.name()) &&
        declared.insert(input.name()).second)
      inputNames.push_back(input.name());
  for (const auto &entry : options.inputShapes)
    if (!declared.contains(entry.getKey()))
      return fileError("--input-shape names '" + entry.getKey() +
                       "', which is not a graph input (inputs: " +
                       llvm::join(inputNames, ", ") + ")");

  llvm::StringSet<> seen;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    const std::string &name = input.name();
    if (name.empty())
      return fileError("a graph input has no name");
    if (scope.definesLocally(name))
      continue; // an initializer: a weight, not an argument
    if (!seen.insert(name).second)
      return fileError("graph input '" + name + "' is declared twice");
    if (!input.has_type() || !input.type().has_tensor_type())
      return fileError("unsupported: graph input '" + name +
                       "' is not a tensor (sequence, map and optional inputs "
                       "are not supported)");
    const onnx::TypeProto::Tensor &tt = input.type().tensor_type();
    Type elem = dtypeToType(ctx, tt.elem_type());
    if (!elem)
      return fileError("unsupported: graph input '" + name + "' has dtype " +
                       dtypeName(tt.elem_type()));
    auto pin = options.inputShapes.find(name);
    bool pinned = pin != options.inputShapes.end();
    SmallVector<int64_t> shape;
    if (!tt.has_shape()) {
      if (!pinned)
        return fileError("graph input '" + name +
                         "' has no shape; pin it with --input-shape=" + name +
                         "=D0xD1x...");
      shape.assign(pin->second.begin(), pin->second.end());
    } else {
      const onnx::TensorShapeProto &sp = tt.shape();
      if (sp.dim_size() > kMaxRank)
        return fileError("graph input '" + name + "' has rank " +
                         Twine(sp.dim_size()) + ", more than the supported " +
                         Twine(kMaxRank));
      if (pinned && int64_t(pin->second.size()) != sp.dim_size())
        return fileError("--input-shape gives '" + name + "' rank " +
                         Twine(pin->second.size()) +
                         " but the model declares rank " +
                         Twine(sp.dim_size()));
      for (int d = 0; d < sp.dim_size(); ++d) {
        const onnx::TensorShapeProto::Dimension &dim = sp.dim(d);
        if (dim.has_dim_value()) {
          int64_t v = dim.dim_value();
          if (v < 0)
            return fileError("graph input '" + name + "' dim " + Twine(d) +
                             " is negative (" + Twine(v) + ")");
          if (pinned && pin->second[d] != v)
            return fileError("--input-shape gives '" + name + "' dim " +
                             Twine(d) + " = " + Twine(pin->second[d]) +
                             " but the model fixes it to " + Twine(v));
          shape.push_back(v);
          continue;
        }
        if (pinned) {
          shape.push_back(pin->second[d]);
          continue;
        }
        if (options.defaultDynamicDim >= 0) {
          shape.push_back(options.defaultDynamicDim);
          continue;
        }
        std::string what = dim.has_dim_param() && !dim.dim_param().empty()
                               ? " ('" + dim.dim_param() + "')"
                               : std::string();
        return fileError("graph input '" + name + "' dim " + Twine(d) + what +
                         " is dynamic; pin it with --input-shape=" + name +
                         "=D0xD1x... or --default-dim=N");
      }
    }
    if (checkedNumElements(shape) < 0 || int64_t(shape.size()) > kMaxRank)
      return fileError("graph input '" + name + "' has an invalid shape " +
                       shapeString(shape));
    argTypes.push_back(RankedTensorType::get(shape, elem));
    argNames.push_back(name);
  }
  return success();
}

LogicalResult Importer::importMainGraph(ModuleOp module) {
  const onnx::GraphProto &graph = model.graph();
  findBufferInitializers(graph);
  Scope scope;

  // Initializers: stored tensors, materialized on first use.
  for (const onnx::TensorProto &init : graph.initializer()) {
    const std::string &name = init.name();
    if (name.empty())
      return fileError("an initializer has no name");
    if (scope.definesLocally(name))
      return fileError("initializer '" + name + "' is declared twice");
    Location loc = NameLoc::get(StringAttr::get(ctx, name), fileLoc());
    std::optional<EmbeddedData> data;
    auto it = embedded.initializers.find(name);
    if (it != embedded.initializers.end())
      data = it->second;
    FailureOr<TensorRef> t =
        makeStored(init, name, data, bufferNames.contains(name),
                   /*isInitializer=*/true, loc);
    if (failed(t))
      return failure();
    ImportedValue v;
    v.tensor = *t;
    scope.define(name, v);
  }
  if (graph.sparse_initializer_size() > 0)
    return fileError("unsupported: the graph has sparse initializers");

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  if (failed(declareInputs(graph, scope, argTypes, argNames)))
    return failure();
  if (graph.output_size() == 0)
    return fileError("the graph has no outputs");

  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(builder, fileLoc(), "main",
                                   builder.getFunctionType(argTypes, {}));
  SmallVector<Location> argLocs;
  for (const std::string &name : argNames)
    argLocs.push_back(NameLoc::get(StringAttr::get(ctx, name), fileLoc()));
  body = builder.createBlock(&func.getBody(), {}, argTypes, argLocs);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "loom.name", builder.getStringAttr(name));
    auto t = std::make_shared<TensorValue>();
    t->type = cast<RankedTensorType>(argTypes[i]);
    t->ssa = body->getArgument(i);
    ImportedValue v;
    v.tensor = t;
    scope.define(name, v);
  }
  builder.setInsertionPointToEnd(body);

  if (failed(importNodes(graph, scope, /*isMain=*/true)))
    return failure();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    const std::string &name = out.name();
    Location loc = NameLoc::get(StringAttr::get(ctx, name), fileLoc());
    const ImportedValue *v = scope.lookup(name);
    if (!v)
      return fileError("graph output '" + name +
                       "' is not produced by any node, input or initializer");
    if (v->sequence)
      return fileError("unsupported: graph output '" + name +
                       "' is a sequence");
    if (!v->tensor)
      return fileError("unsupported: graph output '" + name +
                       "' is an output the importer does not produce");
    FailureOr<Value> value = materialize(*v->tensor, loc);
    if (failed(value))
      return failure();
    auto type = cast<RankedTensorType>(value->getType());
    // The declared type, where given, must agree with what was built.
    if (out.has_type() && out.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &tt = out.type().tensor_type();
      Type declared = dtypeToType(ctx, tt.elem_type());
      if (tt.elem_type() != onnx::TensorProto::UNDEFINED && declared &&
          declared != type.getElementType())
        return fileError("graph output '" + name + "' is declared as " +
                         dtypeName(tt.elem_type()) + " but computes " +
                         dtypeName(typeToDType(type.getElementType())));
      if (tt.has_shape()) {
        const onnx::TensorShapeProto &sp = tt.shape();
        bool mismatch = sp.dim_size() != type.getRank();
        for (int d = 0; !mismatch && d < sp.dim_size(); ++d)
          mismatch = sp.dim(d).has_dim_value() &&
                     sp.dim(d).dim_value() != type.getDimSize(d);
        if (mismatch) {
          SmallVector<std::string> dims;
          for (const auto &dim : sp.dim())
            dims.push_back(dim.has_dim_value()
                               ? std::to_string(dim.dim_value())
                               : (dim.dim_param().empty() ? "?"
                                                          : dim.dim_param()));
          return fileError("graph output '" + name + "' is declared with "
                           "shape [" + llvm::join(dims, "x") +
                           "] but computes " +
                           shapeString(type.getShape()));
        }
      }
    }
    results.push_back(*value);
    resultTypes.push_back(type);
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  func.setType(builder.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "loom.name", builder.getStringAttr(out.name()));
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(parseModel()))
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  if (failed(importMainGraph(*module)))
    return nullptr;
  if (failed(verify(*module))) {
    emitError(fileLoc()) << "the module imported from '" << path
                         << "' does not verify (an importer bug; please "
                            "report it with the model)";
    return nullptr;
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> mlir::loom::importONNXBytes(llvm::StringRef bytes,
                                                  llvm::StringRef path,
                                                  MLIRContext *ctx,
                                                  const ImportOptions &options) {
  ctx->loadDialect<LoomDialect, func::FuncDialect>();
  try {
    Importer importer(ctx, path, bytes, options);
    return importer.run();
  } catch (const std::exception &e) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "internal error while importing '" << path << "': " << e.what();
  } catch (...) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "internal error while importing '" << path << "'";
  }
  return nullptr;
}

OwningOpRef<ModuleOp> mlir::loom::importONNXFile(llvm::StringRef path,
                                                 MLIRContext *ctx,
                                                 const ImportOptions &options) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
  if (!buf) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read '" << path << "': " << buf.getError().message();
    return nullptr;
  }
  return importONNXBytes((*buf)->getBuffer(), path, ctx, options);
}
