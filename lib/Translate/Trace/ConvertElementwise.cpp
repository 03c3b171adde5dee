//===- ConvertElementwise.cpp - trace elementwise ops to loom -------------===//
//
// Activations and unary math, arithmetic, comparisons and logical ops, where,
// masked_fill, clamp, cast, full, softmax and the reductions.
//
// Dtype rules follow docs/trace-format.md: arithmetic operands already have
// the output dtype (the exporter inserts casts) and a scalar operand becomes
// a rank-0 `loom.constant` of that dtype; comparisons take operands of one
// dtype, and a scalar compared with a tensor is promoted as PyTorch does (an
// integer tensor against a float scalar compares in f32). Where loom's op has
// no integer or boolean form, the exact equivalent is built (relu of an
// integer is max(x, 0); add/mul/max/min of booleans are or/and; pow with a
// small integer exponent on integers is repeated multiplication).
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

template <UnaryKind Kind> static LogicalResult convertUnary(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (Kind == UnaryKind::relu && isa<IntegerType>(elemOf(x)) &&
      !elemOf(x).isInteger(1))
    return cx.result(cx.binary(BinaryKind::max, x,
                               cx.scalarConstant(Scalar::ofInt(0), elemOf(x))));
  return cx.result(cx.unary(Kind, x));
}

static LogicalResult convertGelu(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  FailureOr<std::string> approximate = cx.stringAttr("approximate");
  if (!x || failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return cx.fail("attribute 'approximate' must be \"none\" or \"tanh\", "
                   "got \"" +
                   *approximate + "\"");
  return cx.result(cx.unary(
      *approximate == "tanh" ? UnaryKind::gelu_tanh : UnaryKind::gelu, x));
}

template <bool Log> static LogicalResult convertSoftmax(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("softmax of a 0-d tensor is not supported");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  if (failed(dim))
    return failure();
  SmallVector<NamedAttribute> attrs = {cx.i64Attr("axis", *dim)};
  if (Log)
    attrs.push_back(cx.namedAttr("log", cx.b.getUnitAttr()));
  return cx.result(cx.inferred<SoftmaxOp>({x}, attrs));
}

static LogicalResult convertClamp(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto lo = cx.optionalFloatAttr("min");
  auto hi = cx.optionalFloatAttr("max");
  if (!x || failed(lo) || failed(hi))
    return failure();
  // clamp(int, float bound) computes in the promoted (output) dtype.
  x = cx.cast(x, cx.outElem());
  // min(max(x, lo), hi) is hi everywhere when lo > hi.
  if (*lo && *hi && **lo > **hi)
    *lo = *hi;
  SmallVector<NamedAttribute> attrs;
  if (*lo)
    attrs.push_back(cx.f64Attr("min", **lo));
  if (*hi)
    attrs.push_back(cx.f64Attr("max", **hi));
  return cx.result(cx.inferred<ClampOp>({x}, attrs));
}

//===----------------------------------------------------------------------===//
// Binary arithmetic
//===----------------------------------------------------------------------===//

/// Fails unless at least one of two operands is a tensor.
static LogicalResult expectBinary(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  for (unsigned i = 0; i < 2; ++i)
    if (cx.operand(i).isAbsent())
      return cx.fail("input " + llvm::Twine(i) + " is missing");
  if (!cx.operand(0).isTensor() && !cx.operand(1).isTensor())
    return cx.fail("needs at least one tensor operand");
  return success();
}

/// pow on integers: repeated multiplication by a small exponent.
static Value integerPow(NodeContext &cx, Value base) {
  const Operand &e = cx.operand(1);
  if (!e.isScalar() || e.scalar->kind == Scalar::Kind::Float ||
      e.scalar->i < 0 || e.scalar->i > kMaxIntegerPow)
    return cx.failValue("pow on " + dtypeName(elemOf(base)) +
                        " needs a scalar exponent in [0, " +
                        llvm::Twine(kMaxIntegerPow) + "]");
  int64_t n = e.scalar->kind == Scalar::Kind::Bool ? e.scalar->b : e.scalar->i;
  if (n == 0)
    return cx.splatConstant(Scalar::ofInt(1),
                            cast<RankedTensorType>(base.getType()));
  // Square-and-multiply.
  Value result, square = base;
  for (; n > 0; n >>= 1) {
    if (n & 1)
      result = result ? cx.binary(BinaryKind::mul, result, square) : square;
    if (n > 1)
      square = cx.binary(BinaryKind::mul, square, square);
    if (!result || !square)
      return Value();
  }
  return result;
}

template <BinaryKind Kind> static LogicalResult convertArith(NodeContext &cx) {
  if (failed(expectBinary(cx)))
    return failure();
  Type dt = cx.outElem();
  for (unsigned i = 0; i < 2; ++i) {
    const Operand &o = cx.operand(i);
    if (o.isTensor() && elemOf(o.tensor) != dt)
      return cx.fail("input " + llvm::Twine(i) + " ('" + o.name + "') is " +
                     dtypeName(elemOf(o.tensor)) + " but the output is " +
                     dtypeName(dt) +
                     "; arithmetic operands must have the output dtype");
  }
  bool isBool = dt.isInteger(1), isInt = isa<IntegerType>(dt) && !isBool;
  if (Kind == BinaryKind::pow && isInt) {
    Value base = cx.tensor(0, "base");
    return base ? cx.result(integerPow(cx, base)) : failure();
  }
  BinaryKind kind = Kind;
  if (isBool) {
    // PyTorch on booleans: + and max are "or", * and min are "and".
    if (Kind == BinaryKind::add || Kind == BinaryKind::max)
      kind = BinaryKind::logical_or;
    else if (Kind == BinaryKind::mul || Kind == BinaryKind::min)
      kind = BinaryKind::logical_and;
    else
      return cx.fail(llvm::Twine(cx.op) + " is not defined on i1 tensors");
  }
  if (Kind == BinaryKind::div && !isa<FloatType>(dt))
    return cx.fail("div is true division and needs a floating-point output, "
                   "got " +
                   dtypeName(dt));
  Value a = cx.tensorOrScalar(0, dt, "a"), b = cx.tensorOrScalar(1, dt, "b");
  return cx.result(cx.binary(kind, a, b));
}

//===----------------------------------------------------------------------===//
// Comparisons and logical ops
//===----------------------------------------------------------------------===//

template <ComparePredicate Pred>
static LogicalResult convertCompare(NodeContext &cx) {
  if (failed(expectBinary(cx)))
    return failure();
  const Operand &l = cx.operand(0), &r = cx.operand(1);
  Type dt;
  if (l.isTensor() && r.isTensor()) {
    dt = elemOf(l.tensor);
    if (elemOf(r.tensor) != dt)
      return cx.fail("the operands are " + dtypeName(dt) + " and " +
                     dtypeName(elemOf(r.tensor)) +
                     "; comparison operands must have one dtype");
  } else {
    // Tensor against scalar: PyTorch promotes across categories only.
    const Operand &t = l.isTensor() ? l : r, &s = l.isTensor() ? r : l;
    dt = elemOf(t.tensor);
    bool isFloat = isa<FloatType>(dt), isBool = dt.isInteger(1);
    if (!isFloat && s.scalar->kind == Scalar::Kind::Float)
      dt = cx.b.getF32Type();
    else if (isBool && s.scalar->kind == Scalar::Kind::Int)
      dt = cx.b.getI64Type();
  }
  auto side = [&](unsigned i) {
    const Operand &o = cx.operand(i);
    return o.isTensor() ? cx.cast(o.tensor, dt)
                        : cx.scalarConstant(*o.scalar, dt);
  };
  Value a = side(0), b = side(1);
  return cx.result(cx.compare(Pred, a, b));
}

template <BinaryKind Kind>
static LogicalResult convertLogical(NodeContext &cx) {
  if (failed(expectBinary(cx)))
    return failure();
  Type i1 = cx.b.getI1Type();
  for (unsigned i = 0; i < 2; ++i) {
    const Operand &o = cx.operand(i);
    if (o.isTensor() && !elemOf(o.tensor).isInteger(1))
      return cx.fail("input " + llvm::Twine(i) + " ('" + o.name + "') is " +
                     dtypeName(elemOf(o.tensor)) +
                     "; logical operands must be i1");
    if (o.isScalar() && o.scalar->kind != Scalar::Kind::Bool)
      return cx.fail("input " + llvm::Twine(i) + " is the scalar " +
                     o.scalar->str() + "; logical operands must be bools");
  }
  Value a = cx.tensorOrScalar(0, i1, "a"), b = cx.tensorOrScalar(1, i1, "b");
  return cx.result(cx.binary(Kind, a, b));
}

//===----------------------------------------------------------------------===//
// where, masked_fill, cast, full
//===----------------------------------------------------------------------===//

static LogicalResult convertWhere(NodeContext &cx) {
  if (failed(cx.expectOperands(3, 3)))
    return failure();
  Value cond = cx.tensor(0, "condition");
  if (!cond)
    return failure();
  if (!elemOf(cond).isInteger(1))
    return cx.fail("the condition must be i1, got " + dtypeName(elemOf(cond)));
  Type dt = cx.outElem();
  for (unsigned i = 1; i < 3; ++i) {
    const Operand &o = cx.operand(i);
    if (o.isAbsent())
      return cx.fail("input " + llvm::Twine(i) + " is missing");
    if (o.isTensor() && elemOf(o.tensor) != dt)
      return cx.fail("input " + llvm::Twine(i) + " ('" + o.name + "') is " +
                     dtypeName(elemOf(o.tensor)) + " but the output is " +
                     dtypeName(dt));
  }
  Value a = cx.tensorOrScalar(1, dt, "input"),
        b = cx.tensorOrScalar(2, dt, "other");
  return cx.result(cx.where(cond, a, b));
}

static LogicalResult convertMaskedFill(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value x = cx.tensor(0, "input"), mask = cx.tensor(1, "mask");
  FailureOr<Scalar> value = cx.scalarAttr("value");
  if (!x || !mask || failed(value))
    return failure();
  if (!elemOf(mask).isInteger(1))
    return cx.fail("the mask must be i1, got " + dtypeName(elemOf(mask)));
  Value fill = cx.scalarConstant(*value, elemOf(x));
  return cx.result(cx.where(mask, fill, x));
}

static LogicalResult convertCast(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  FailureOr<std::string> dtype = cx.stringAttr("dtype");
  if (!x || failed(dtype))
    return failure();
  Type elem = parseDType(cx.getContext(), *dtype);
  if (!elem)
    return cx.fail("unknown dtype '" + *dtype + "'");
  return cx.result(cx.cast(x, elem));
}

static LogicalResult convertFull(NodeContext &cx) {
  if (failed(cx.expectOperands(0, 0)))
    return failure();
  FailureOr<Scalar> value = cx.scalarAttr("value");
  if (failed(value))
    return failure();
  return cx.result(cx.splatConstant(*value, cx.outType()));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <ReduceKind Kind> static LogicalResult convertReduce(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  int64_t rank = rankOf(x);
  auto dims = cx.intListAttr("dims", std::nullopt, -kMaxRank, kMaxRank);
  FailureOr<bool> keep = cx.boolAttr("keepdim");
  if (failed(dims) || failed(keep))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d : *dims) {
    int64_t a = d < 0 ? d + rank : d;
    if (a < 0 || a >= rank)
      return cx.fail("dim " + llvm::Twine(d) + " is out of range for rank " +
                     llvm::Twine(rank));
    axes.push_back(a);
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return cx.fail("attribute 'dims' repeats a dim");
  if (axes.empty())
    return cx.result(x); // a 0-d input: nothing to reduce
  return cx.result(cx.reduce(Kind, x, axes, *keep));
}

template <ReduceKind Kind>
static LogicalResult convertArgReduce(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  if (!x)
    return failure();
  if (rankOf(x) == 0)
    return cx.fail("needs an input of rank >= 1");
  FailureOr<int64_t> dim = cx.dimAttr("dim", rankOf(x));
  FailureOr<bool> keep = cx.boolAttr("keepdim");
  if (failed(dim) || failed(keep))
    return failure();
  return cx.result(cx.reduce(Kind, x, {*dim}, *keep));
}

void trace_import::addElementwiseConversions(ConvertTable &table) {
  table["relu"] = convertUnary<UnaryKind::relu>;
  table["silu"] = convertUnary<UnaryKind::silu>;
  table["sigmoid"] = convertUnary<UnaryKind::sigmoid>;
  table["tanh"] = convertUnary<UnaryKind::tanh>;
  table["neg"] = convertUnary<UnaryKind::neg>;
  table["exp"] = convertUnary<UnaryKind::exp>;
  table["log"] = convertUnary<UnaryKind::log>;
  table["sqrt"] = convertUnary<UnaryKind::sqrt>;
  table["rsqrt"] = convertUnary<UnaryKind::rsqrt>;
  table["abs"] = convertUnary<UnaryKind::abs>;
  table["erf"] = convertUnary<UnaryKind::erf>;
  table["reciprocal"] = convertUnary<UnaryKind::reciprocal>;
  table["sin"] = convertUnary<UnaryKind::sin>;
  table["cos"] = convertUnary<UnaryKind::cos>;
  table["logical_not"] = convertUnary<UnaryKind::logical_not>;
  table["gelu"] = convertGelu;
  table["softmax"] = convertSoftmax<false>;
  table["log_softmax"] = convertSoftmax<true>;
  table["clamp"] = convertClamp;

  table["add"] = convertArith<BinaryKind::add>;
  table["sub"] = convertArith<BinaryKind::sub>;
  table["mul"] = convertArith<BinaryKind::mul>;
  table["div"] = convertArith<BinaryKind::div>;
  table["pow"] = convertArith<BinaryKind::pow>;
  table["maximum"] = convertArith<BinaryKind::max>;
  table["minimum"] = convertArith<BinaryKind::min>;
  table["eq"] = convertCompare<ComparePredicate::eq>;
  table["ne"] = convertCompare<ComparePredicate::ne>;
  table["lt"] = convertCompare<ComparePredicate::lt>;
  table["le"] = convertCompare<ComparePredicate::le>;
  table["gt"] = convertCompare<ComparePredicate::gt>;
  table["ge"] = convertCompare<ComparePredicate::ge>;
  table["logical_and"] = convertLogical<BinaryKind::logical_and>;
  table["logical_or"] = convertLogical<BinaryKind::logical_or>;

  table["where"] = convertWhere;
  table["masked_fill"] = convertMaskedFill;
  table["cast"] = convertCast;
  table["full"] = convertFull;

  table["sum"] = convertReduce<ReduceKind::sum>;
  table["mean"] = convertReduce<ReduceKind::mean>;
  table["amax"] = convertReduce<ReduceKind::max>;
  table["amin"] = convertReduce<ReduceKind::min>;
  table["argmax"] = convertArgReduce<ReduceKind::argmax>;
  table["argmin"] = convertArgReduce<ReduceKind::argmin>;
}
