//===- ConvertElementwise.cpp - elementwise ONNX ops -> loom --------------===//
//
// Unary and binary arithmetic, comparisons, Where, Clip, Cast and the
// activation functions. Ops that have a loom.unary/binary/compare kind map
// one-to-one; activations without one (LeakyRelu, Elu, Selu, HardSigmoid with
// non-default slope, ...) are composed exactly from elementwise loom ops.
// When every input is known at import time the op is evaluated on the host
// (foldElementwise) and no loom op is emitted.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

//===----------------------------------------------------------------------===//
// Host evaluation
//===----------------------------------------------------------------------===//

namespace {
enum class Ew {
  Add, Sub, Mul, Div, Pow, Max, Min, Mod, FMod, And, Or, Xor, Eq, Lt, Le, Gt,
  Ge, Where, Not, Neg, Abs, Sqrt, Exp, Log, Reciprocal, Relu, Floor, Ceil,
  Round, Sign, Sigmoid, Tanh, Erf, Sin, Cos, Sum, Mean, Identity, Unknown
};
} // namespace

static Ew classify(NodeContext &c) {
  StringRef op = c.opType();
  if (op == "Mod") {
    FailureOr<int64_t> fmod = c.attrInt("fmod", 0);
    return succeeded(fmod) && *fmod ? Ew::FMod : Ew::Mod;
  }
  return llvm::StringSwitch<Ew>(op)
      .Case("Add", Ew::Add).Case("Sub", Ew::Sub).Case("Mul", Ew::Mul)
      .Case("Div", Ew::Div).Case("Pow", Ew::Pow).Case("Max", Ew::Max)
      .Case("Min", Ew::Min).Case("And", Ew::And).Case("Or", Ew::Or)
      .Case("Xor", Ew::Xor).Case("Equal", Ew::Eq).Case("Less", Ew::Lt)
      .Case("LessOrEqual", Ew::Le).Case("Greater", Ew::Gt)
      .Case("GreaterOrEqual", Ew::Ge).Case("Where", Ew::Where)
      .Case("Not", Ew::Not).Case("Neg", Ew::Neg).Case("Abs", Ew::Abs)
      .Case("Sqrt", Ew::Sqrt).Case("Exp", Ew::Exp).Case("Log", Ew::Log)
      .Case("Reciprocal", Ew::Reciprocal).Case("Relu", Ew::Relu)
      .Case("Floor", Ew::Floor).Case("Ceil", Ew::Ceil).Case("Round", Ew::Round)
      .Case("Sign", Ew::Sign).Case("Sigmoid", Ew::Sigmoid)
      .Case("Tanh", Ew::Tanh).Case("Erf", Ew::Erf).Case("Sin", Ew::Sin)
      .Case("Cos", Ew::Cos).Case("Sum", Ew::Sum).Case("Mean", Ew::Mean)
      .Case("Identity", Ew::Identity)
      .Default(Ew::Unknown);
}

/// Source linear index into a tensor of `in` for every element of `out`,
/// numpy broadcasting.
static std::vector<int64_t> broadcastIndex(ArrayRef<int64_t> out,
                                           ArrayRef<int64_t> in) {
  int64_t n = checkedNumElements(out);
  std::vector<int64_t> idx(n);
  size_t rank = out.size(), off = rank - in.size();
  SmallVector<int64_t> inStrides = stridesOf(in);
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = off; d < rank; ++d)
      if (in[d - off] != 1)
        src += counter[d] * inStrides[d - off];
    idx[i] = src;
    for (int64_t d = int64_t(rank) - 1; d >= 0; --d) {
      if (++counter[d] < out[d])
        break;
      counter[d] = 0;
    }
  }
  return idx;
}

static bool isCompare(Ew op) {
  return op == Ew::Eq || op == Ew::Lt || op == Ew::Le || op == Ew::Gt ||
         op == Ew::Ge;
}

static std::optional<double> evalFloat(Ew op, ArrayRef<double> v) {
  double a = v[0], b = v.size() > 1 ? v[1] : 0.0;
  switch (op) {
  case Ew::Add: case Ew::Sum: case Ew::Mean: return a + b;
  case Ew::Sub: return a - b;
  case Ew::Mul: return a * b;
  case Ew::Div: return a / b;
  case Ew::Pow: return std::pow(a, b);
  case Ew::Max: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case Ew::Min: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  case Ew::FMod: return std::fmod(a, b);
  case Ew::Eq: return double(a == b);
  case Ew::Lt: return double(a < b);
  case Ew::Le: return double(a <= b);
  case Ew::Gt: return double(a > b);
  case Ew::Ge: return double(a >= b);
  case Ew::Neg: return -a;
  case Ew::Abs: return std::fabs(a);
  case Ew::Sqrt: return std::sqrt(a);
  case Ew::Exp: return std::exp(a);
  case Ew::Log: return std::log(a);
  case Ew::Reciprocal: return 1.0 / a;
  case Ew::Relu: return a > 0 ? a : 0.0;
  case Ew::Floor: return std::floor(a);
  case Ew::Ceil: return std::ceil(a);
  case Ew::Round: return std::nearbyint(a);
  case Ew::Sign: return double((a > 0) - (a < 0));
  case Ew::Sigmoid: return 1.0 / (1.0 + std::exp(-a));
  case Ew::Tanh: return std::tanh(a);
  case Ew::Erf: return std::erf(a);
  case Ew::Sin: return std::sin(a);
  case Ew::Cos: return std::cos(a);
  case Ew::Identity: return a;
  default: return std::nullopt;
  }
}

static std::optional<int64_t> evalInt(Ew op, ArrayRef<int64_t> v) {
  int64_t a = v[0], b = v.size() > 1 ? v[1] : 0;
  auto u = [](int64_t x) { return uint64_t(x); };
  switch (op) {
  case Ew::Add: case Ew::Sum: return int64_t(u(a) + u(b));
  case Ew::Sub: return int64_t(u(a) - u(b));
  case Ew::Mul: return int64_t(u(a) * u(b));
  case Ew::Div:
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    return a / b;
  case Ew::Mod: {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
      r += b;
    return r;
  }
  case Ew::FMod:
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    return a % b;
  case Ew::Pow: {
    if (b < 0)
      return std::nullopt;
    uint64_t r = 1, base = u(a);
    for (int64_t e = b; e > 0 && r != 0; e >>= 1) {
      if (e & 1)
        r *= base;
      base *= base;
    }
    return int64_t(r);
  }
  case Ew::Max: return std::max(a, b);
  case Ew::Min: return std::min(a, b);
  case Ew::And: return int64_t(a && b);
  case Ew::Or: return int64_t(a || b);
  case Ew::Xor: return int64_t(bool(a) != bool(b));
  case Ew::Not: return int64_t(!a);
  case Ew::Eq: return int64_t(a == b);
  case Ew::Lt: return int64_t(a < b);
  case Ew::Le: return int64_t(a <= b);
  case Ew::Gt: return int64_t(a > b);
  case Ew::Ge: return int64_t(a >= b);
  case Ew::Neg: return int64_t(0 - u(a));
  case Ew::Abs: return a < 0 ? int64_t(0 - u(a)) : a;
  case Ew::Relu: return a > 0 ? a : 0;
  case Ew::Sign: return int64_t((a > 0) - (a < 0));
  case Ew::Identity: return a;
  default: return std::nullopt;
  }
}

HostTensorRef onnx_import::foldElementwise(NodeContext &c,
                                           ArrayRef<HostTensorRef> inputs) {
  Ew op = classify(c);
  if (op == Ew::Unknown || inputs.empty())
    return nullptr;
  SmallVector<int64_t> shape;
  for (const HostTensorRef &t : inputs) {
    if (!t)
      return nullptr;
    auto s = broadcastShapes(shape, t->shape);
    if (failed(s))
      return nullptr;
    shape = *s;
  }
  int64_t n = checkedNumElements(shape);
  if (n < 0 || n > kMaxFoldElements)
    return nullptr;

  // Operand dtypes must agree (Where: the two values; its condition is bool).
  ArrayRef<HostTensorRef> values = inputs;
  if (op == Ew::Where) {
    if (inputs.size() != 3 || inputs[0]->dtype != onnx::TensorProto::BOOL)
      return nullptr;
    values = inputs.drop_front();
  }
  int32_t dtype = values[0]->dtype;
  for (const HostTensorRef &t : values)
    if (t->dtype != dtype)
      return nullptr;
  bool isFloat = isFloatDType(dtype);

  HostTensor out;
  out.dtype = isCompare(op) ? int32_t(onnx::TensorProto::BOOL) : dtype;
  out.shape = shape;
  out.allocate();
  std::vector<std::vector<int64_t>> index;
  for (const HostTensorRef &t : inputs)
    index.push_back(broadcastIndex(shape, t->shape));

  for (int64_t i = 0; i < n; ++i) {
    if (op == Ew::Where) {
      const HostTensor &pick =
          inputs[0]->ints[index[0][i]] ? *inputs[1] : *inputs[2];
      int64_t src = inputs[0]->ints[index[0][i]] ? index[1][i] : index[2][i];
      storeElement(out, i, isFloat ? pick.floats[src] : 0.0,
                   isFloat ? 0 : pick.ints[src], isFloat);
      continue;
    }
    if (isFloat) {
      // Fold variadic ops left to right.
      double acc = values[0]->floats[index[0][i]];
      if (values.size() == 1) {
        std::optional<double> r = evalFloat(op, {acc});
        if (!r)
          return nullptr;
        acc = *r;
      }
      for (size_t k = 1; k < values.size(); ++k) {
        std::optional<double> r =
            evalFloat(op, {acc, values[k]->floats[index[k][i]]});
        if (!r)
          return nullptr;
        acc = *r;
      }
      if (op == Ew::Mean)
        acc /= double(values.size());
      storeElement(out, i, acc, 0, true);
    } else {
      if (op == Ew::Mean)
        return nullptr;
      int64_t acc = values[0]->ints[index[0][i]];
      if (values.size() == 1) {
        std::optional<int64_t> r = evalInt(op, {acc});
        if (!r)
          return nullptr;
        acc = *r;
      }
      for (size_t k = 1; k < values.size(); ++k) {
        std::optional<int64_t> r =
            evalInt(op, {acc, values[k]->ints[index[k][i]]});
        if (!r)
          return nullptr;
        acc = *r;
      }
      storeElement(out, i, 0.0, acc, false);
    }
  }
  return std::make_shared<const HostTensor>(std::move(out));
}

/// Folds the node when all inputs are known; true when it did.
static bool tryFold(NodeContext &c) {
  if (!c.allInputsKnown())
    return false;
  SmallVector<HostTensorRef> inputs;
  for (int64_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i))
      inputs.push_back(c.host(i));
  HostTensorRef r = foldElementwise(c, inputs);
  if (!r)
    return false;
  c.setHostResult(0, *r);
  return true;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Requires input `i` to be a float tensor.
static FailureOr<Value> floatInput(NodeContext &c, int64_t i) {
  FailureOr<Value> v = c.value(i);
  if (failed(v))
    return failure();
  if (!isa<FloatType>(elemOf(*v))) {
    (void)c.error("expects a float tensor, got " +
                  dtypeName(typeToDType(elemOf(*v))));
    return failure();
  }
  return v;
}

//===----------------------------------------------------------------------===//
// Direct mappings
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertUnary(NodeContext &c) {
  if (tryFold(c))
    return success();
  std::optional<UnaryKind> kind =
      llvm::StringSwitch<std::optional<UnaryKind>>(c.opType())
          .Case("Abs", UnaryKind::abs).Case("Ceil", UnaryKind::ceil)
          .Case("Cos", UnaryKind::cos).Case("Erf", UnaryKind::erf)
          .Case("Exp", UnaryKind::exp).Case("Floor", UnaryKind::floor)
          .Case("HardSwish", UnaryKind::hard_swish).Case("Log", UnaryKind::log)
          .Case("Neg", UnaryKind::neg)
          .Case("Reciprocal", UnaryKind::reciprocal)
          .Case("Relu", UnaryKind::relu).Case("Round", UnaryKind::round)
          .Case("Sigmoid", UnaryKind::sigmoid).Case("Sign", UnaryKind::sign)
          .Case("Sin", UnaryKind::sin).Case("Softplus", UnaryKind::softplus)
          .Case("Sqrt", UnaryKind::sqrt).Case("Tanh", UnaryKind::tanh)
          .Default(std::nullopt);
  if (!kind)
    return c.unsupported("no loom.unary kind");
  TRY(x, c.value(0));
  // Relu of integers is max(x, 0); loom's relu is a float function.
  if (*kind == UnaryKind::relu && !isa<FloatType>(elemOf(x))) {
    TRY(r, c.binary(BinaryKind::max, x, c.scalar(elemOf(x), 0)));
    c.setResult(0, r);
    return success();
  }
  TRY(r, c.unary(*kind, x));
  c.setResult(0, r);
  return success();
}

LogicalResult onnx_import::convertNot(NodeContext &c) {
  if (tryFold(c))
    return success();
  TRY(x, c.value(0));
  TRY(r, c.unary(UnaryKind::logical_not, x));
  c.setResult(0, r);
  return success();
}

LogicalResult onnx_import::convertBinary(NodeContext &c) {
  if (tryFold(c))
    return success();
  BinaryKind kind = llvm::StringSwitch<BinaryKind>(c.opType())
                        .Case("Add", BinaryKind::add)
                        .Case("Sub", BinaryKind::sub)
                        .Case("Mul", BinaryKind::mul)
                        .Case("Div", BinaryKind::div)
                        .Case("And", BinaryKind::logical_and)
                        .Case("Or", BinaryKind::logical_or)
                        .Default(BinaryKind::logical_xor);
  TRY(l, c.value(0));
  TRY(r, c.value(1));
  TRY(y, c.binary(kind, l, r));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertVariadic(NodeContext &c) {
  if (c.numInputs() < 1 || !c.hasInput(0))
    return c.error("needs at least one input");
  if (tryFold(c))
    return success();
  BinaryKind kind = llvm::StringSwitch<BinaryKind>(c.opType())
                        .Case("Max", BinaryKind::max)
                        .Case("Min", BinaryKind::min)
                        .Default(BinaryKind::add);
  TRY(acc0, c.value(0));
  Value acc = acc0;
  for (int64_t i = 1; i < c.numInputs(); ++i) {
    TRY(v, c.value(i));
    TRY(next, c.binary(kind, acc, v));
    acc = next;
  }
  if (c.opType() == "Mean" && c.numInputs() > 1) {
    if (!isa<FloatType>(elemOf(acc)))
      return c.unsupported("Mean of integer tensors");
    TRY(m, c.binary(BinaryKind::div, acc,
                    c.scalar(elemOf(acc), double(c.numInputs()))));
    acc = m;
  }
  c.setResult(0, acc);
  return success();
}

LogicalResult onnx_import::convertCompare(NodeContext &c) {
  if (tryFold(c))
    return success();
  ComparePredicate p =
      llvm::StringSwitch<ComparePredicate>(c.opType())
          .Case("Equal", ComparePredicate::eq)
          .Case("Less", ComparePredicate::lt)
          .Case("LessOrEqual", ComparePredicate::le)
          .Case("Greater", ComparePredicate::gt)
          .Default(ComparePredicate::ge);
  TRY(l, c.value(0));
  TRY(r, c.value(1));
  TRY(y, c.compare(p, l, r));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertWhere(NodeContext &c) {
  if (tryFold(c))
    return success();
  TRY(cond, c.value(0));
  TRY(t, c.value(1));
  TRY(f, c.value(2));
  TRY(y, c.where(cond, t, f));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertClip(NodeContext &c) {
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  Type elem = type->getElementType();
  // Known bounds become attributes; unknown ones become max/min ops.
  std::optional<double> lo, hi;
  for (int64_t i : {1, 2}) {
    if (!c.hasInput(i))
      continue;
    FailureOr<TensorRef> t = c.tensor(i);
    if (failed(t))
      return failure();
    if ((*t)->type.getNumElements() != 1)
      return c.error("min and max must be scalars");
    if (HostTensorRef h = c.attrHost(i))
      (i == 1 ? lo : hi) = h->getDouble(0);
  }
  if (HostTensorRef x = c.host(0)) {
    bool bothKnown = (!c.hasInput(1) || lo) && (!c.hasInput(2) || hi);
    if (bothKnown && x->numel() <= kMaxFoldElements) {
      HostTensor out = *x;
      for (int64_t i = 0, e = out.numel(); i < e; ++i) {
        double v = out.getDouble(i);
        if (lo && v < *lo)
          v = *lo;
        if (hi && v > *hi)
          v = *hi;
        storeElement(out, i, v, 0, /*fromFloat=*/true);
      }
      c.setHostResult(0, std::move(out));
      return success();
    }
  }
  TRY(x, c.value(0));
  if (lo && hi && *lo > *hi) {
    // ONNX: every element becomes max.
    TRY(y, c.expand(c.scalar(elem, *hi), type->getShape()));
    c.setResult(0, y);
    return success();
  }
  Value y = x;
  if ((c.hasInput(1) && !lo) || (c.hasInput(2) && !hi)) {
    for (int64_t i : {1, 2}) {
      if (!c.hasInput(i))
        continue;
      TRY(bound, c.value(i));
      TRY(r, c.binary(i == 1 ? BinaryKind::max : BinaryKind::min, y, bound));
      y = r;
    }
    c.setResult(0, y);
    return success();
  }
  if (!lo && !hi) {
    c.setResult(0, x);
    return success();
  }
  auto f64 = [&](std::optional<double> v) -> FloatAttr {
    return v ? c.b.getF64FloatAttr(*v) : FloatAttr();
  };
  TRY(r, c.create<ClampOp>(x, f64(lo), f64(hi)));
  c.setResult(0, r);
  return success();
}

/// Cast of input 0 to `dtype`.
static LogicalResult castTo(NodeContext &c, int32_t dtype) {
  Type elem = dtypeToType(c.ctx, dtype);
  if (!elem)
    return c.unsupported("cast to " + dtypeName(dtype));
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  if (HostTensorRef h = c.host(0)) {
    c.setHostResult(0, castHostTensor(*h, dtype));
    return success();
  }
  TRY(x, c.value(0));
  TRY(y, c.castElem(x, elem));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertCast(NodeContext &c) {
  FailureOr<int64_t> to = c.requiredAttrInt("to");
  if (failed(to))
    return failure();
  return castTo(c, int32_t(std::clamp<int64_t>(*to, -1, 1 << 20)));
}

LogicalResult onnx_import::convertCastLike(NodeContext &c) {
  FailureOr<RankedTensorType> target = c.type(1);
  if (failed(target))
    return failure();
  return castTo(c, typeToDType(target->getElementType()));
}

LogicalResult onnx_import::convertIdentity(NodeContext &c) {
  if (!c.hasInput(0))
    return c.error("missing required input #0");
  const ImportedValue *v = c.scope.lookup(c.inputName(0));
  if (!v || (!v->tensor && !v->sequence))
    return c.unsupported("input '" + c.inputName(0) +
                         "' is an output the importer does not produce");
  c.setResult(0, *v);
  return success();
}

LogicalResult onnx_import::convertDropout(NodeContext &c) {
  if (c.hasInput(2)) {
    FailureOr<double> training = c.constScalar(2, "training_mode");
    if (failed(training))
      return failure();
    if (*training != 0)
      return c.unsupported("training_mode = true (only inference Dropout "
                           "imports, as identity)");
  }
  FailureOr<TensorRef> x = c.tensor(0);
  if (failed(x))
    return failure();
  c.setTensorResult(0, *x);
  if (c.outputUsed(1)) {
    // The mask of an inference Dropout keeps everything.
    auto maskType =
        RankedTensorType::get((*x)->type.getShape(), c.b.getI1Type());
    int64_t n = maskType.getNumElements();
    if (n <= kMaxFoldElements) {
      HostTensor m;
      m.dtype = onnx::TensorProto::BOOL;
      m.shape.assign(maskType.getShape().begin(), maskType.getShape().end());
      m.ints.assign(n, 1);
      c.setHostResult(1, std::move(m));
    } else {
      c.setResult(1, c.imp.getConstant(DenseElementsAttr::get(maskType, true),
                                       c.loc));
    }
  }
  return success();
}

LogicalResult onnx_import::convertPow(NodeContext &c) {
  FailureOr<RankedTensorType> bt = c.type(0), et = c.type(1);
  if (failed(bt) || failed(et))
    return failure();
  Type elem = bt->getElementType();
  // Same-dtype known operands fold; a known exponent takes the base dtype.
  HostTensorRef hb = c.host(0), he = c.host(1);
  if (he && he->dtype != typeToDType(elem))
    he = std::make_shared<const HostTensor>(
        castHostTensor(*he, typeToDType(elem)));
  if (hb && he) {
    if (HostTensorRef r = foldElementwise(c, {hb, he})) {
      c.setHostResult(0, *r);
      return success();
    }
  }
  if (!isa<FloatType>(elem))
    return c.unsupported("Pow of " + dtypeName(typeToDType(elem)) +
                         " tensors (loom's pow is a float function)");
  TRY(base, c.value(0));
  Value exponent;
  if (he) {
    exponent = c.constant(*he);
  } else {
    TRY(e, c.value(1));
    TRY(ec, c.castElem(e, elem));
    exponent = ec;
  }
  TRY(y, c.binary(BinaryKind::pow, base, exponent));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertMod(NodeContext &c) {
  FailureOr<int64_t> fmod = c.attrInt("fmod", 0);
  if (failed(fmod))
    return failure();
  if (tryFold(c))
    return success();
  TRY(a, c.value(0));
  TRY(b, c.value(1));
  Type elem = elemOf(a);
  if (!*fmod) {
    if (isa<FloatType>(elem))
      return c.error("fmod = 0 is only defined for integer tensors");
    TRY(y, c.binary(BinaryKind::mod, a, b));
    c.setResult(0, y);
    return success();
  }
  if (!isa<FloatType>(elem))
    return c.unsupported("Mod with fmod = 1 on integer tensors");
  // fmod(a, b) = a - b * trunc(a / b), trunc(z) = sign(z) * floor(|z|).
  TRY(q, c.binary(BinaryKind::div, a, b));
  TRY(aq, c.unary(UnaryKind::abs, q));
  TRY(fq, c.unary(UnaryKind::floor, aq));
  TRY(sq, c.unary(UnaryKind::sign, q));
  TRY(tq, c.binary(BinaryKind::mul, sq, fq));
  TRY(bt, c.binary(BinaryKind::mul, b, tq));
  TRY(y, c.binary(BinaryKind::sub, a, bt));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Composed activations
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertLeakyRelu(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 0.01);
  if (failed(alpha))
    return failure();
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  TRY(neg, c.compare(ComparePredicate::lt, x, c.scalar(e, 0)));
  TRY(scaled, c.binary(BinaryKind::mul, x, c.scalar(e, *alpha)));
  TRY(y, c.where(neg, scaled, x));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertPRelu(NodeContext &c) {
  TRY(x, floatInput(c, 0));
  TRY(slope, c.value(1));
  TRY(neg, c.compare(ComparePredicate::lt, x, c.scalar(elemOf(x), 0)));
  TRY(scaled, c.binary(BinaryKind::mul, x, slope));
  TRY(y, c.where(neg, scaled, x));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertElu(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1.0);
  if (failed(alpha))
    return failure();
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  TRY(ex, c.unary(UnaryKind::exp, x));
  TRY(em1, c.binary(BinaryKind::sub, ex, c.scalar(e, 1)));
  TRY(neg, c.binary(BinaryKind::mul, em1, c.scalar(e, *alpha)));
  TRY(isNeg, c.compare(ComparePredicate::lt, x, c.scalar(e, 0)));
  TRY(y, c.where(isNeg, neg, x));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertSelu(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1.67326319217681884765625);
  FailureOr<double> gamma = c.attrFloat("gamma", 1.05070102214813232421875);
  if (failed(alpha) || failed(gamma))
    return failure();
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  TRY(ex, c.unary(UnaryKind::exp, x));
  TRY(aex, c.binary(BinaryKind::mul, ex, c.scalar(e, *alpha)));
  TRY(neg, c.binary(BinaryKind::sub, aex, c.scalar(e, *alpha)));
  TRY(isNeg, c.compare(ComparePredicate::le, x, c.scalar(e, 0)));
  TRY(sel, c.where(isNeg, neg, x));
  TRY(y, c.binary(BinaryKind::mul, sel, c.scalar(e, *gamma)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertCelu(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1.0);
  if (failed(alpha))
    return failure();
  if (*alpha == 0)
    return c.error("alpha must be non-zero");
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  TRY(xa, c.binary(BinaryKind::div, x, c.scalar(e, *alpha)));
  TRY(ex, c.unary(UnaryKind::exp, xa));
  TRY(em1, c.binary(BinaryKind::sub, ex, c.scalar(e, 1)));
  TRY(neg, c.binary(BinaryKind::mul, em1, c.scalar(e, *alpha)));
  TRY(lo, c.binary(BinaryKind::min, neg, c.scalar(e, 0)));
  TRY(hi, c.binary(BinaryKind::max, x, c.scalar(e, 0)));
  TRY(y, c.binary(BinaryKind::add, hi, lo));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertThresholdedRelu(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1.0);
  if (failed(alpha))
    return failure();
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  TRY(keep, c.compare(ComparePredicate::gt, x, c.scalar(e, *alpha)));
  TRY(y, c.where(keep, x, c.scalar(e, 0)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertHardSigmoid(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 0.2);
  FailureOr<double> beta = c.attrFloat("beta", 0.5);
  if (failed(alpha) || failed(beta))
    return failure();
  TRY(x, floatInput(c, 0));
  // loom's hard_sigmoid is PyTorch's: relu6(x + 3) / 6.
  if (std::fabs(*alpha - 1.0 / 6.0) < 1e-7 && *beta == 0.5) {
    TRY(y, c.unary(UnaryKind::hard_sigmoid, x));
    c.setResult(0, y);
    return success();
  }
  Type e = elemOf(x);
  TRY(ax, c.binary(BinaryKind::mul, x, c.scalar(e, *alpha)));
  TRY(axb, c.binary(BinaryKind::add, ax, c.scalar(e, *beta)));
  TRY(y, c.create<ClampOp>(axb, c.b.getF64FloatAttr(0.0),
                           c.b.getF64FloatAttr(1.0)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertSoftsign(NodeContext &c) {
  TRY(x, floatInput(c, 0));
  TRY(ax, c.unary(UnaryKind::abs, x));
  TRY(den, c.binary(BinaryKind::add, ax, c.scalar(elemOf(x), 1)));
  TRY(y, c.binary(BinaryKind::div, x, den));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertMish(NodeContext &c) {
  TRY(x, floatInput(c, 0));
  TRY(sp, c.unary(UnaryKind::softplus, x));
  TRY(t, c.unary(UnaryKind::tanh, sp));
  TRY(y, c.binary(BinaryKind::mul, x, t));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertShrink(NodeContext &c) {
  FailureOr<double> bias = c.attrFloat("bias", 0.0);
  FailureOr<double> lambd = c.attrFloat("lambd", 0.5);
  if (failed(bias) || failed(lambd))
    return failure();
  TRY(x, c.value(0));
  Type e = elemOf(x);
  TRY(lo, c.compare(ComparePredicate::lt, x, c.scalar(e, -*lambd)));
  TRY(hi, c.compare(ComparePredicate::gt, x, c.scalar(e, *lambd)));
  TRY(xpb, c.binary(BinaryKind::add, x, c.scalar(e, *bias)));
  TRY(xmb, c.binary(BinaryKind::sub, x, c.scalar(e, *bias)));
  TRY(inner, c.where(hi, xmb, c.scalar(e, 0)));
  TRY(y, c.where(lo, xpb, inner));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertGelu(NodeContext &c) {
  FailureOr<std::string> approx = c.attrString("approximate", "none");
  if (failed(approx))
    return failure();
  UnaryKind kind;
  if (*approx == "none")
    kind = UnaryKind::gelu;
  else if (*approx == "tanh")
    kind = UnaryKind::gelu_tanh;
  else
    return c.error("approximate must be 'none' or 'tanh', got '" + *approx +
                   "'");
  TRY(x, c.value(0));
  TRY(y, c.unary(kind, x));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertTrig(NodeContext &c) {
  TRY(x, floatInput(c, 0));
  if (c.opType() == "Tan") {
    TRY(s, c.unary(UnaryKind::sin, x));
    TRY(co, c.unary(UnaryKind::cos, x));
    TRY(y, c.binary(BinaryKind::div, s, co));
    c.setResult(0, y);
    return success();
  }
  // Sinh / Cosh = (exp(x) -/+ exp(-x)) / 2
  TRY(ep, c.unary(UnaryKind::exp, x));
  TRY(nx, c.unary(UnaryKind::neg, x));
  TRY(en, c.unary(UnaryKind::exp, nx));
  TRY(sum, c.binary(c.opType() == "Sinh" ? BinaryKind::sub : BinaryKind::add,
                    ep, en));
  TRY(y, c.binary(BinaryKind::mul, sum, c.scalar(elemOf(x), 0.5)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertIsNaN(NodeContext &c) {
  TRY(x, floatInput(c, 0));
  TRY(y, c.compare(ComparePredicate::ne, x, x));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertIsInf(NodeContext &c) {
  FailureOr<int64_t> neg = c.attrInt("detect_negative", 1);
  FailureOr<int64_t> pos = c.attrInt("detect_positive", 1);
  if (failed(neg) || failed(pos))
    return failure();
  TRY(x, floatInput(c, 0));
  Type e = elemOf(x);
  double inf = std::numeric_limits<double>::infinity();
  Value result;
  if (*pos) {
    TRY(p, c.compare(ComparePredicate::eq, x, c.scalar(e, inf)));
    result = p;
  }
  if (*neg) {
    TRY(n, c.compare(ComparePredicate::eq, x, c.scalar(e, -inf)));
    if (result) {
      TRY(both, c.binary(BinaryKind::logical_or, result, n));
      result = both;
    } else {
      result = n;
    }
  }
  if (!result) {
    // Detects nothing: all false.
    TRY(f, c.compare(ComparePredicate::ne, x, x));
    TRY(nf, c.compare(ComparePredicate::eq, x, x));
    TRY(none, c.binary(BinaryKind::logical_and, f, nf));
    result = none;
  }
  c.setResult(0, result);
  return success();
}
