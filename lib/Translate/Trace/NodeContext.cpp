//===- NodeContext.cpp - what a trace op conversion reads and builds ------===//
//
// The checked accessors for a node's operands and attributes, the small op
// builders every conversion shares (each infers, builds and verifies one loom
// op and reports failure as a diagnostic at the node), scalar conversion to
// element types, and the dtype helpers of the loom-trace format.
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

//===----------------------------------------------------------------------===//
// dtypes and shapes
//===----------------------------------------------------------------------===//

Type trace_import::parseDType(MLIRContext *ctx, llvm::StringRef dtype) {
  return llvm::StringSwitch<Type>(dtype)
      .Case("f32", Float32Type::get(ctx))
      .Case("f16", Float16Type::get(ctx))
      .Case("bf16", BFloat16Type::get(ctx))
      .Case("f64", Float64Type::get(ctx))
      .Case("i64", IntegerType::get(ctx, 64))
      .Case("i32", IntegerType::get(ctx, 32))
      .Case("i8", IntegerType::get(ctx, 8))
      .Case("u8", IntegerType::get(ctx, 8, IntegerType::Unsigned))
      .Case("i1", IntegerType::get(ctx, 1))
      .Default(Type());
}

std::string trace_import::dtypeName(Type elem) {
  if (elem.isF32())
    return "f32";
  if (elem.isF16())
    return "f16";
  if (elem.isBF16())
    return "bf16";
  if (elem.isF64())
    return "f64";
  if (auto it = dyn_cast<IntegerType>(elem)) {
    if (it.isUnsigned())
      return "u" + std::to_string(it.getWidth());
    return "i" + std::to_string(it.getWidth());
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << elem;
  return s;
}

int64_t trace_import::dtypeBytes(Type elem) {
  unsigned bits = elem.getIntOrFloatBitWidth();
  return bits <= 8 ? 1 : bits / 8;
}

std::string trace_import::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

std::string trace_import::typeString(Type type) {
  auto t = cast<RankedTensorType>(type);
  return shapeString(t.getShape()) + " " + dtypeName(t.getElementType());
}

std::optional<int64_t>
trace_import::checkedNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim)
      return std::nullopt;
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements)
      return std::nullopt;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

std::string Scalar::str() const {
  switch (kind) {
  case Kind::Bool:
    return b ? "true" : "false";
  case Kind::Int:
    return std::to_string(i);
  case Kind::Float: {
    if (std::isnan(f))
      return "nan";
    if (std::isinf(f))
      return f > 0 ? "inf" : "-inf";
    std::string s;
    llvm::raw_string_ostream os(s);
    os << f;
    return s;
  }
  }
  return "?";
}

std::optional<Scalar> trace_import::readScalar(const Json &j) {
  if (j.is_boolean())
    return Scalar::ofBool(j.get<bool>());
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      return Scalar::ofFloat(double(u));
    return Scalar::ofInt(int64_t(u));
  }
  if (j.is_number_integer())
    return Scalar::ofInt(j.get<int64_t>());
  if (j.is_number_float())
    return Scalar::ofFloat(j.get<double>());
  if (j.is_string()) {
    const std::string &s = j.get_ref<const std::string &>();
    if (s == "inf")
      return Scalar::ofFloat(INFINITY);
    if (s == "-inf")
      return Scalar::ofFloat(-INFINITY);
    if (s == "nan")
      return Scalar::ofFloat(NAN);
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeContext::emitError() {
  InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "node '" << name << "' (" << op << "): ";
  return diag;
}

LogicalResult NodeContext::fail(const llvm::Twine &msg) {
  emitError() << msg;
  return failure();
}

Value NodeContext::failValue(const llvm::Twine &msg) {
  emitError() << msg;
  return Value();
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::expectOperands(unsigned min, unsigned max) {
  unsigned n = operands.size();
  if (n >= min && n <= max)
    return success();
  if (min == max)
    return fail("expects " + llvm::Twine(min) + " inputs, got " +
                llvm::Twine(n));
  return fail("expects " + llvm::Twine(min) + " to " + llvm::Twine(max) +
              " inputs, got " + llvm::Twine(n));
}

const Operand &NodeContext::operand(unsigned i) const {
  static const Operand absent;
  return i < operands.size() ? operands[i] : absent;
}

Value NodeContext::tensor(unsigned i, llvm::StringRef what) {
  const Operand &o = operand(i);
  if (o.isTensor())
    return o.tensor;
  if (o.isScalar())
    return failValue("input " + llvm::Twine(i) + " (" + what +
                     ") must be a tensor, got the scalar " + o.scalar->str());
  return failValue("input " + llvm::Twine(i) + " (" + what + ") is missing");
}

FailureOr<Value> NodeContext::optionalTensor(unsigned i, llvm::StringRef what) {
  const Operand &o = operand(i);
  if (o.isScalar())
    return fail("input " + llvm::Twine(i) + " (" + what +
                ") must be a tensor or null, got the scalar " +
                o.scalar->str());
  return o.tensor;
}

Value NodeContext::tensorOrScalar(unsigned i, Type elem, llvm::StringRef what) {
  const Operand &o = operand(i);
  if (o.isScalar())
    return scalarConstant(*o.scalar, elem);
  return tensor(i, what);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const Json *NodeContext::findAttr(llvm::StringRef key) {
  if (!attrs.is_object())
    return nullptr;
  auto it = attrs.find(std::string(key));
  if (it == attrs.end())
    return nullptr;
  return &*it;
}

/// An integer JSON value in [min, max]; nullopt (with `why`) otherwise.
static std::optional<int64_t> readInt(const Json &j, int64_t min, int64_t max,
                                      std::string &why) {
  int64_t v;
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > uint64_t(max)) {
      why = "is out of range";
      return std::nullopt;
    }
    v = int64_t(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else {
    why = std::string("must be an integer, got ") + j.type_name();
    return std::nullopt;
  }
  if (v < min || v > max) {
    why = "= " + std::to_string(v) + " is out of range [" +
          std::to_string(min) + ", " + std::to_string(max) + "]";
    return std::nullopt;
  }
  return v;
}

FailureOr<int64_t> NodeContext::intAttr(llvm::StringRef key, int64_t min,
                                        int64_t max) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  std::string why;
  std::optional<int64_t> v = readInt(*j, min, max, why);
  if (!v)
    return fail("attribute '" + key + "' " + why);
  return *v;
}

FailureOr<bool> NodeContext::boolAttr(llvm::StringRef key) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  if (!j->is_boolean())
    return fail("attribute '" + key + "' must be a bool, got " +
                j->type_name());
  return j->get<bool>();
}

FailureOr<double> NodeContext::floatAttr(llvm::StringRef key) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  std::optional<Scalar> s = readScalar(*j);
  if (!s || s->kind == Scalar::Kind::Bool)
    return fail("attribute '" + key +
                "' must be a number or \"inf\", \"-inf\", \"nan\", got " +
                j->type_name());
  return s->asDouble();
}

FailureOr<std::optional<double>>
NodeContext::optionalFloatAttr(llvm::StringRef key) {
  const Json *j = findAttr(key);
  if (!j || j->is_null())
    return std::optional<double>();
  FailureOr<double> v = floatAttr(key);
  if (failed(v))
    return failure();
  return std::optional<double>(*v);
}

FailureOr<std::string> NodeContext::stringAttr(llvm::StringRef key) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  if (!j->is_string())
    return fail("attribute '" + key + "' must be a string, got " +
                j->type_name());
  return j->get<std::string>();
}

FailureOr<Scalar> NodeContext::scalarAttr(llvm::StringRef key) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  std::optional<Scalar> s = readScalar(*j);
  if (!s)
    return fail("attribute '" + key +
                "' must be a number, a bool or \"inf\", \"-inf\", \"nan\", "
                "got " +
                j->type_name());
  return *s;
}

FailureOr<llvm::SmallVector<int64_t>>
NodeContext::intListAttr(llvm::StringRef key, std::optional<size_t> size,
                         int64_t min, int64_t max) {
  const Json *j = findAttr(key);
  if (!j)
    return fail("missing attribute '" + key + "'");
  if (!j->is_array())
    return fail("attribute '" + key + "' must be a list of integers, got " +
                j->type_name());
  if (size && j->size() != *size)
    return fail("attribute '" + key + "' must have " + llvm::Twine(*size) +
                " entries, got " + llvm::Twine(j->size()));
  if (j->size() > size_t(kMaxRank))
    return fail("attribute '" + key + "' has too many entries (" +
                llvm::Twine(j->size()) + ")");
  llvm::SmallVector<int64_t> out;
  for (const Json &e : *j) {
    std::string why;
    std::optional<int64_t> v = readInt(e, min, max, why);
    if (!v)
      return fail("attribute '" + key + "': entry " + llvm::Twine(out.size()) +
                  " " + why);
    out.push_back(*v);
  }
  return out;
}

FailureOr<int64_t> NodeContext::dimAttr(llvm::StringRef key, int64_t rank) {
  FailureOr<int64_t> d = intAttr(key, -kMaxRank, kMaxRank);
  if (failed(d))
    return failure();
  int64_t v = *d < 0 ? *d + rank : *d;
  if (v < 0 || v >= rank)
    return fail("attribute '" + key + "' = " + llvm::Twine(*d) +
                " is out of range for rank " + llvm::Twine(rank));
  return v;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

Operation *NodeContext::finish(Operation *op) {
  if (failed(mlir::verify(op))) {
    op->erase();
    return nullptr;
  }
  return op;
}

Value NodeContext::constant(DenseElementsAttr value) {
  if (Value cached = constantCache.lookup(value))
    return cached;
  Value v = typed<ConstantOp>(value.getType(), {}, {namedAttr("value", value)});
  if (v)
    constantCache[value] = v;
  return v;
}

FailureOr<TypedAttr> NodeContext::scalarAttrOf(const Scalar &s, Type elem) {
  if (auto ft = dyn_cast<FloatType>(elem)) {
    llvm::APFloat v(s.asDouble());
    bool lost = false;
    v.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return TypedAttr(FloatAttr::get(ft, v));
  }
  auto it = dyn_cast<IntegerType>(elem);
  if (!it)
    return fail("cannot hold the scalar " + s.str() + " in a " +
                dtypeName(elem) + " tensor");
  unsigned w = it.getWidth();
  int64_t v = 0;
  switch (s.kind) {
  case Scalar::Kind::Bool:
    v = s.b;
    break;
  case Scalar::Kind::Int:
    v = s.i;
    break;
  case Scalar::Kind::Float:
    if (!std::isfinite(s.f) || std::trunc(s.f) != s.f ||
        s.f < -9.2233720368547758e18 || s.f >= 9.2233720368547758e18)
      return fail("the scalar " + s.str() + " cannot be represented as " +
                  dtypeName(elem));
    v = int64_t(s.f);
    break;
  }
  if (w == 1)
    return TypedAttr(IntegerAttr::get(it, llvm::APInt(1, v != 0 ? 1 : 0)));
  if (w < 64) {
    int64_t lo = it.isUnsigned() ? 0 : -(int64_t(1) << (w - 1));
    int64_t hi =
        it.isUnsigned() ? (int64_t(1) << w) - 1 : (int64_t(1) << (w - 1)) - 1;
    if (v < lo || v > hi)
      return fail("the scalar " + s.str() + " is out of range for " +
                  dtypeName(elem));
  }
  return TypedAttr(IntegerAttr::get(
      it, llvm::APInt(w, uint64_t(v), /*isSigned=*/!it.isUnsigned())));
}

Value NodeContext::splatConstant(const Scalar &s, RankedTensorType type) {
  FailureOr<TypedAttr> attr = scalarAttrOf(s, type.getElementType());
  if (failed(attr))
    return Value();
  return constant(DenseElementsAttr::get(type, Attribute(*attr)));
}

Value NodeContext::scalarConstant(const Scalar &s, Type elem) {
  return splatConstant(s, RankedTensorType::get({}, elem));
}

Value NodeContext::iota(int64_t n, int64_t rank, int64_t dim, Type elem,
                        int64_t step) {
  auto it = dyn_cast<IntegerType>(elem);
  if (!it || it.getWidth() < 32)
    return failValue("internal: iota needs an i32 or i64 element type");
  if (n < 0 || n > kMaxIotaElements)
    return failValue("needs an index table of " + llvm::Twine(n) +
                     " elements, more than the " +
                     llvm::Twine(kMaxIotaElements) + " the importer builds");
  int64_t last = n == 0 ? 0 : (n - 1);
  int64_t maxValue;
  if (__builtin_mul_overflow(last, step, &maxValue) ||
      (it.getWidth() == 32 && (maxValue > INT32_MAX || maxValue < INT32_MIN)))
    return failValue("index table values overflow " + dtypeName(elem));
  llvm::SmallVector<int64_t> shape(rank, 1);
  shape[dim] = n;
  std::vector<llvm::APInt> values;
  values.reserve(n);
  for (int64_t k = 0; k < n; ++k)
    values.emplace_back(it.getWidth(), uint64_t(k * step), /*isSigned=*/true);
  return constant(
      DenseElementsAttr::get(RankedTensorType::get(shape, elem), values));
}

Value NodeContext::reshape(Value v, llvm::ArrayRef<int64_t> shape) {
  if (!v)
    return v;
  if (shapeOf(v) == shape)
    return v;
  return typed<ReshapeOp>(RankedTensorType::get(shape, elemOf(v)), {v});
}

Value NodeContext::transpose(Value v, llvm::ArrayRef<int64_t> perm) {
  if (!v)
    return v;
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= int64_t(i) == p;
  if (identity && int64_t(perm.size()) == rankOf(v))
    return v;
  return inferred<TransposeOp>({v}, {arrayAttr("permutation", perm)});
}

Value NodeContext::transposedWeight(Value w) {
  if (Value cached = transposeCache.lookup(w))
    return cached;
  Value t = transpose(w, {1, 0});
  if (t)
    transposeCache[w] = t;
  return t;
}

Value NodeContext::expand(Value v, llvm::ArrayRef<int64_t> shape) {
  if (!v)
    return v;
  if (shapeOf(v) == shape)
    return v;
  return typed<ExpandOp>(RankedTensorType::get(shape, elemOf(v)), {v});
}

Value NodeContext::cast(Value v, Type elem) {
  if (!v)
    return v;
  if (elemOf(v) == elem)
    return v;
  return typed<CastOp>(RankedTensorType::get(shapeOf(v), elem), {v});
}

Value NodeContext::slice(Value v, int64_t dim, int64_t start, int64_t size,
                         int64_t step) {
  if (!v)
    return v;
  llvm::ArrayRef<int64_t> shape = shapeOf(v);
  if (start == 0 && step == 1 && size == shape[dim])
    return v;
  llvm::SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape),
      strides(shape.size(), 1);
  offsets[dim] = start;
  sizes[dim] = size;
  strides[dim] = step;
  return inferred<SliceOp>({v}, {arrayAttr("offsets", offsets),
                                 arrayAttr("sizes", sizes),
                                 arrayAttr("strides", strides)});
}

Value NodeContext::reduce(ReduceKind kind, Value v,
                          llvm::ArrayRef<int64_t> axes, bool keepDims) {
  if (!v)
    return v;
  return inferred<ReduceOp>(
      {v}, {namedAttr("kind", ReduceKindAttr::get(getContext(), kind)),
            arrayAttr("axes", axes),
            namedAttr("keep_dims", b.getBoolAttr(keepDims))});
}

Value NodeContext::unary(UnaryKind kind, Value v) {
  if (!v)
    return v;
  return inferred<UnaryOp>(
      {v}, {namedAttr("kind", UnaryKindAttr::get(getContext(), kind))});
}

Value NodeContext::binary(BinaryKind kind, Value lhs, Value rhs) {
  if (!lhs || !rhs)
    return Value();
  return inferred<BinaryOp>(
      {lhs, rhs}, {namedAttr("kind", BinaryKindAttr::get(getContext(), kind))});
}

Value NodeContext::compare(ComparePredicate pred, Value lhs, Value rhs) {
  if (!lhs || !rhs)
    return Value();
  return inferred<CompareOp>(
      {lhs, rhs},
      {namedAttr("predicate", ComparePredicateAttr::get(getContext(), pred))});
}

Value NodeContext::where(Value cond, Value onTrue, Value onFalse) {
  if (!cond || !onTrue || !onFalse)
    return Value();
  return inferred<WhereOp>({cond, onTrue, onFalse});
}

Value NodeContext::matmul(Value lhs, Value rhs) {
  if (!lhs || !rhs)
    return Value();
  return inferred<MatmulOp>({lhs, rhs});
}

Value NodeContext::concat(ValueRange inputs, int64_t axis) {
  for (Value v : inputs)
    if (!v)
      return Value();
  if (inputs.size() == 1)
    return inputs[0];
  return inferred<ConcatOp>(inputs, {i64Attr("axis", axis)});
}
