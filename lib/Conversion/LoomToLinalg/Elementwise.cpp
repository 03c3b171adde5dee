//===- Elementwise.cpp - lower loom elementwise ops to linalg.generic -----===//
//
// loom.unary, loom.binary, loom.compare, loom.where, loom.clamp and loom.cast
// become one parallel linalg.generic each, whose body computes one element
// with arith/math ops. Numpy broadcasting lives in the indexing maps: an
// operand of lower rank is aligned to the trailing loop dims, and its dims of
// size 1 that broadcast read index 0, so no broadcast tensor is materialized.
// loom.constant becomes arith.constant with signless element types.
//
// The scalar semantics are numpy's, as test/Conformance/loom_reference.py
// implements them: integer div truncates, mod takes the divisor's sign, max
// and min propagate NaN, float compares are ordered except `ne`, round is
// half to even, float->int casts truncate toward zero and narrow integers
// wrap as numpy's C casts do on x86. Signedness is read from the original op
// because the type converter has already made the operands signless.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "Utils.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

using ScalarBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A parallel linalg.generic over `resultType` that reads `inputs` with numpy
/// broadcasting and computes every element with `body`.
static Value buildElementwise(OpBuilder &b, Location loc,
                              RankedTensorType resultType, ValueRange inputs,
                              ScalarBuilder body) {
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(
        b.getContext(), cast<RankedTensorType>(input.getType()).getShape(),
        shape));
  return buildParallelGeneric(
      b, loc, inputs, maps, resultType,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value value = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, value);
      });
}

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

/// Float kinds need a float element type; the integer ones are listed here.
static bool unaryKindAccepts(UnaryKind kind, Type elem) {
  switch (kind) {
  case UnaryKind::identity:
    return true;
  case UnaryKind::logical_not:
    return elem.isInteger(1);
  case UnaryKind::neg:
  case UnaryKind::abs:
  case UnaryKind::sign:
    return isa<FloatType, IntegerType>(elem);
  default:
    return isa<FloatType>(elem);
  }
}

/// `sign(x)` for floats: -1, 0 or 1, NaN stays NaN, both zeros give +0.
static Value floatSign(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value zero = createFloatConstant(b, loc, t, 0.0);
  Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  Value lt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value r = arith::SelectOp::create(b, loc, gt,
                                    createFloatConstant(b, loc, t, 1.0), zero);
  r = arith::SelectOp::create(b, loc, lt, createFloatConstant(b, loc, t, -1.0),
                              r);
  return arith::SelectOp::create(b, loc, nan, x, r);
}

/// `clip(x / 6 + 0.5, 0, 1)`, which is `relu6(x + 3) / 6` as the reference
/// computes it; NaN propagates.
static Value hardSigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value y =
      arith::DivFOp::create(b, loc, x, createFloatConstant(b, loc, t, 6.0));
  y = arith::AddFOp::create(b, loc, y, createFloatConstant(b, loc, t, 0.5));
  y = arith::MaximumFOp::create(b, loc, y, createFloatConstant(b, loc, t, 0.0));
  return arith::MinimumFOp::create(b, loc, y,
                                   createFloatConstant(b, loc, t, 1.0));
}

/// log1p(x) for x >= 0 from log alone, accurate for tiny x (Goldberg's
/// trick: with u = 1 + x rounded, log1p(x) = log(u) * x / (u - 1)).
/// math.log1p is not used because convert-math-to-llvm expands it to
/// log(1 + x), which is 0 for x below the float's epsilon.
static Value accurateLog1p(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value one = createFloatConstant(b, loc, t, 1.0);
  Value u = arith::AddFOp::create(b, loc, one, x);
  Value d = arith::SubFOp::create(b, loc, u, one);
  Value exact = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, d,
                                      createFloatConstant(b, loc, t, 0.0));
  Value scaled = arith::MulFOp::create(b, loc, math::LogOp::create(b, loc, u),
                                       arith::DivFOp::create(b, loc, x, d));
  return arith::SelectOp::create(b, loc, exact, x, scaled);
}

static Value emitUnary(OpBuilder &b, Location loc, UnaryKind kind, Value x,
                       bool isUnsigned) {
  Type t = x.getType();
  bool isFloat = isa<FloatType>(t);
  auto one = [&] { return createFloatConstant(b, loc, t, 1.0); };
  switch (kind) {
  case UnaryKind::identity:
    return x;
  case UnaryKind::neg:
    if (isFloat)
      return arith::NegFOp::create(b, loc, x);
    return arith::SubIOp::create(b, loc, createIntConstant(b, loc, t, 0), x);
  case UnaryKind::abs:
    if (isFloat)
      return math::AbsFOp::create(b, loc, x);
    if (isUnsigned)
      return x;
    return math::AbsIOp::create(b, loc, x);
  case UnaryKind::sign: {
    if (isFloat)
      return floatSign(b, loc, x);
    if (t.isInteger(1))
      return x;
    Value zero = createIntConstant(b, loc, t, 0);
    if (isUnsigned) {
      Value nz =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
      return arith::ExtUIOp::create(b, loc, t, nz);
    }
    Value gt =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    Value lt =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
    return arith::SubIOp::create(b, loc, arith::ExtUIOp::create(b, loc, t, gt),
                                 arith::ExtUIOp::create(b, loc, t, lt));
  }
  case UnaryKind::logical_not:
    return arith::XOrIOp::create(b, loc, x, createIntConstant(b, loc, t, 1));
  case UnaryKind::exp:
    return math::ExpOp::create(b, loc, x);
  case UnaryKind::log:
    return math::LogOp::create(b, loc, x);
  case UnaryKind::sqrt:
    return math::SqrtOp::create(b, loc, x);
  case UnaryKind::rsqrt:
    return math::RsqrtOp::create(b, loc, x);
  case UnaryKind::reciprocal:
    return arith::DivFOp::create(b, loc, one(), x);
  case UnaryKind::relu:
    return arith::MaximumFOp::create(b, loc, x,
                                     createFloatConstant(b, loc, t, 0.0));
  case UnaryKind::gelu: {
    // x * 0.5 * (1 + erf(x / sqrt(2)))
    Value s = arith::DivFOp::create(
        b, loc, x, createFloatConstant(b, loc, t, std::sqrt(2.0)));
    Value e =
        arith::AddFOp::create(b, loc, one(), math::ErfOp::create(b, loc, s));
    Value h =
        arith::MulFOp::create(b, loc, x, createFloatConstant(b, loc, t, 0.5));
    return arith::MulFOp::create(b, loc, h, e);
  }
  case UnaryKind::gelu_tanh: {
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    Value x3 =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
    Value inner = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, createFloatConstant(b, loc, t, 0.044715),
                              x3));
    inner = arith::MulFOp::create(
        b, loc, createFloatConstant(b, loc, t, std::sqrt(2.0 / M_PI)), inner);
    Value e = arith::AddFOp::create(b, loc, one(),
                                    math::TanhOp::create(b, loc, inner));
    Value h =
        arith::MulFOp::create(b, loc, createFloatConstant(b, loc, t, 0.5), x);
    return arith::MulFOp::create(b, loc, h, e);
  }
  case UnaryKind::silu:
  case UnaryKind::sigmoid: {
    // x / (1 + exp(-x)) and 1 / (1 + exp(-x))
    Value d = arith::AddFOp::create(
        b, loc, one(),
        math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x)));
    return arith::DivFOp::create(b, loc, kind == UnaryKind::silu ? x : one(),
                                 d);
  }
  case UnaryKind::tanh:
    return math::TanhOp::create(b, loc, x);
  case UnaryKind::erf:
    return math::ErfOp::create(b, loc, x);
  case UnaryKind::sin:
    return math::SinOp::create(b, loc, x);
  case UnaryKind::cos:
    return math::CosOp::create(b, loc, x);
  case UnaryKind::hard_sigmoid:
    return hardSigmoid(b, loc, x);
  case UnaryKind::hard_swish:
    return arith::MulFOp::create(b, loc, x, hardSigmoid(b, loc, x));
  case UnaryKind::floor:
    return math::FloorOp::create(b, loc, x);
  case UnaryKind::ceil:
    return math::CeilOp::create(b, loc, x);
  case UnaryKind::round:
    return math::RoundEvenOp::create(b, loc, x);
  case UnaryKind::softplus: {
    // log1p(exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
    Value m = arith::MaximumFOp::create(b, loc, x,
                                        createFloatConstant(b, loc, t, 0.0));
    Value e = math::ExpOp::create(
        b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
    return arith::AddFOp::create(b, loc, m, accurateLog1p(b, loc, e));
  }
  }
  return x;
}

/// Integer division truncating toward zero. A zero divisor gives 0 (numpy's
/// `//` does the same) instead of trapping, and INT_MIN / -1 wraps.
static Value intDiv(OpBuilder &b, Location loc, Value l, Value r,
                    bool isUnsigned) {
  Type t = l.getType();
  Value zero = createIntConstant(b, loc, t, 0);
  Value one = createIntConstant(b, loc, t, 1);
  Value byZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r, zero);
  Value safe = arith::SelectOp::create(b, loc, byZero, one, r);
  Value q;
  if (isUnsigned) {
    q = arith::DivUIOp::create(b, loc, l, safe);
  } else {
    // INT_MIN / -1 overflows (and traps on x86); divide by 1 instead, which
    // gives the wrapped result INT_MIN.
    Value minusOne = createIntConstant(b, loc, t, -1);
    Value isMinusOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, safe, minusOne);
    safe = arith::SelectOp::create(b, loc, isMinusOne, one, safe);
    Value quotient = arith::DivSIOp::create(b, loc, l, safe);
    Value negated = arith::SubIOp::create(b, loc, zero, l);
    q = arith::SelectOp::create(b, loc, isMinusOne, negated, quotient);
  }
  return arith::SelectOp::create(b, loc, byZero, zero, q);
}

/// Python/numpy `%` on integers: the result takes the divisor's sign; a zero
/// divisor gives 0.
static Value intMod(OpBuilder &b, Location loc, Value l, Value r,
                    bool isUnsigned) {
  Type t = l.getType();
  Value zero = createIntConstant(b, loc, t, 0);
  Value byZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r, zero);
  Value safe = arith::SelectOp::create(b, loc, byZero,
                                       createIntConstant(b, loc, t, 1), r);
  if (isUnsigned) {
    Value rem = arith::RemUIOp::create(b, loc, l, safe);
    return arith::SelectOp::create(b, loc, byZero, zero, rem);
  }
  // x % -1 is 0; avoid the INT_MIN % -1 trap by dividing by 1 instead.
  Value isMinusOne = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, safe, createIntConstant(b, loc, t, -1));
  safe = arith::SelectOp::create(b, loc, isMinusOne,
                                 createIntConstant(b, loc, t, 1), safe);
  Value rem = arith::RemSIOp::create(b, loc, l, safe);
  Value remNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
  Value divNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
  Value remNonZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, remNeg, divNeg);
  Value fix = arith::AndIOp::create(b, loc, remNonZero, signsDiffer);
  Value adjusted = arith::SelectOp::create(
      b, loc, fix, arith::AddIOp::create(b, loc, rem, r), rem);
  return arith::SelectOp::create(b, loc, byZero, zero, adjusted);
}

/// numpy.mod on floats: fmod, moved into the divisor's sign; a zero result
/// takes the divisor's sign too; a zero divisor gives NaN (fmod's result).
static Value floatMod(OpBuilder &b, Location loc, Value l, Value r) {
  Type t = l.getType();
  Value zero = createFloatConstant(b, loc, t, 0.0);
  Value rem = arith::RemFOp::create(b, loc, l, r);
  Value remNeg =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, rem, zero);
  Value divNeg =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
  Value remNonZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, rem, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, remNeg, divNeg);
  Value fix = arith::AndIOp::create(b, loc, remNonZero, signsDiffer);
  Value adjusted = arith::SelectOp::create(
      b, loc, fix, arith::AddFOp::create(b, loc, rem, r), rem);
  Value isZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, rem, zero);
  Value signedZero = math::CopySignOp::create(b, loc, zero, r);
  return arith::SelectOp::create(b, loc, isZero, signedZero, adjusted);
}

/// numpy.power on floats, C's pow. math.powf alone is not enough: upstream's
/// math-expand-ops rewrites it to exp(b * log(a)) unless the exponent is a
/// constant by then, which is NaN for every negative base and for 0^0. So the
/// magnitude is |a|^b, negated for a negative base (or -0, -inf) and an odd
/// integer exponent; a finite negative base with a non-integer exponent is
/// NaN; x^0, 1^y and (-1)^(+-inf) are 1 even for NaN operands.
static Value floatPow(OpBuilder &b, Location loc, Value l, Value r) {
  Type t = l.getType();
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  auto both = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(b, loc, x, y);
  };
  Value zero = createFloatConstant(b, loc, t, 0.0);
  Value one = createFloatConstant(b, loc, t, 1.0);
  Value absL = math::AbsFOp::create(b, loc, l);
  Value mag = math::PowFOp::create(b, loc, absL, r);
  Value floorR = math::FloorOp::create(b, loc, r);
  Value isInt = cmp(arith::CmpFPredicate::OEQ, floorR, r);
  Value half = arith::MulFOp::create(b, loc, r, createFloatConstant(b, loc, t, 0.5));
  Value isOdd = both(
      isInt, cmp(arith::CmpFPredicate::ONE, math::FloorOp::create(b, loc, half), half));
  Value signBit = cmp(arith::CmpFPredicate::OLT,
                      math::CopySignOp::create(b, loc, one, l), zero);
  Value result = arith::SelectOp::create(
      b, loc, both(signBit, isOdd), arith::NegFOp::create(b, loc, mag), mag);
  Value finiteNegative =
      both(cmp(arith::CmpFPredicate::OLT, l, zero),
           cmp(arith::CmpFPredicate::OGT, l, createInfinity(b, loc, t, true)));
  Value notInt = cmp(arith::CmpFPredicate::UNE, floorR, r);
  result = arith::SelectOp::create(b, loc, both(finiteNegative, notInt),
                                   createFloatConstant(b, loc, t, NAN), result);
  Value unitBase = both(cmp(arith::CmpFPredicate::OEQ, absL, one),
                        cmp(arith::CmpFPredicate::OEQ,
                            math::AbsFOp::create(b, loc, r),
                            createInfinity(b, loc, t, false)));
  Value isOne = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, r, zero),
                           cmp(arith::CmpFPredicate::OEQ, l, one)),
      unitBase);
  return arith::SelectOp::create(b, loc, isOne, one, result);
}

static Value emitBinary(OpBuilder &b, Location loc, BinaryKind kind, Value l,
                        Value r, bool isUnsigned) {
  Type t = l.getType();
  bool isFloat = isa<FloatType>(t);
  bool isBool = t.isInteger(1);
  switch (kind) {
  case BinaryKind::add:
    if (isFloat)
      return arith::AddFOp::create(b, loc, l, r);
    // numpy adds booleans as logical or.
    if (isBool)
      return arith::OrIOp::create(b, loc, l, r);
    return arith::AddIOp::create(b, loc, l, r);
  case BinaryKind::sub:
    if (isFloat)
      return arith::SubFOp::create(b, loc, l, r);
    return arith::SubIOp::create(b, loc, l, r);
  case BinaryKind::mul:
    if (isFloat)
      return arith::MulFOp::create(b, loc, l, r);
    return arith::MulIOp::create(b, loc, l, r);
  case BinaryKind::div:
    if (isFloat)
      return arith::DivFOp::create(b, loc, l, r);
    return intDiv(b, loc, l, r, isUnsigned);
  case BinaryKind::pow:
    if (isFloat)
      return floatPow(b, loc, l, r);
    return math::IPowIOp::create(b, loc, l, r);
  case BinaryKind::max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, l, r);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, l, r);
    return arith::MaxSIOp::create(b, loc, l, r);
  case BinaryKind::min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, l, r);
    if (isUnsigned)
      return arith::MinUIOp::create(b, loc, l, r);
    return arith::MinSIOp::create(b, loc, l, r);
  case BinaryKind::logical_and:
    return arith::AndIOp::create(b, loc, l, r);
  case BinaryKind::logical_or:
    return arith::OrIOp::create(b, loc, l, r);
  case BinaryKind::logical_xor:
    return arith::XOrIOp::create(b, loc, l, r);
  case BinaryKind::mod:
    if (isFloat)
      return floatMod(b, loc, l, r);
    return intMod(b, loc, l, r, isUnsigned);
  }
  return l;
}

/// numpy comparisons: ordered for floats except `!=`, which is true on NaN.
static Value emitCompare(OpBuilder &b, Location loc, ComparePredicate pred,
                         Value l, Value r, bool isUnsigned) {
  if (isa<FloatType>(l.getType())) {
    arith::CmpFPredicate p = arith::CmpFPredicate::OEQ;
    switch (pred) {
    case ComparePredicate::eq:
      p = arith::CmpFPredicate::OEQ;
      break;
    case ComparePredicate::ne:
      p = arith::CmpFPredicate::UNE;
      break;
    case ComparePredicate::lt:
      p = arith::CmpFPredicate::OLT;
      break;
    case ComparePredicate::le:
      p = arith::CmpFPredicate::OLE;
      break;
    case ComparePredicate::gt:
      p = arith::CmpFPredicate::OGT;
      break;
    case ComparePredicate::ge:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    return arith::CmpFOp::create(b, loc, p, l, r);
  }
  arith::CmpIPredicate p = arith::CmpIPredicate::eq;
  switch (pred) {
  case ComparePredicate::eq:
    p = arith::CmpIPredicate::eq;
    break;
  case ComparePredicate::ne:
    p = arith::CmpIPredicate::ne;
    break;
  case ComparePredicate::lt:
    p = isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    break;
  case ComparePredicate::le:
    p = isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    break;
  case ComparePredicate::gt:
    p = isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    break;
  case ComparePredicate::ge:
    p = isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    break;
  }
  return arith::CmpIOp::create(b, loc, p, l, r);
}

/// Element conversion `from` -> `to` (both signless, signedness given).
static Value emitCast(OpBuilder &b, Location loc, Value x, Type to,
                      bool fromUnsigned, bool toUnsigned) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  Type f32 = b.getF32Type();
  if (fromFloat && toFloat) {
    // The reference reaches bf16 through f32 (double rounding from f64).
    if (to.isBF16() && fromFloat.getWidth() > 32)
      x = arith::TruncFOp::create(b, loc, f32, x);
    if (cast<FloatType>(x.getType()).getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    if (x.getType() == to)
      return x;
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (fromFloat) {
    // Any nonzero value (NaN included) is true.
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   createFloatConstant(b, loc, from, 0.0));
    unsigned width = to.getIntOrFloatBitWidth();
    if (width == 64)
      return toUnsigned ? Value(arith::FPToUIOp::create(b, loc, to, x))
                        : Value(arith::FPToSIOp::create(b, loc, to, x));
    if (width == 32 && !toUnsigned)
      return arith::FPToSIOp::create(b, loc, to, x);
    // numpy's C cast converts through a wide signed integer and keeps the
    // low bits: -1.0 -> ui8 is 255, 300.0 -> i8 is 44.
    Value wide = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::TruncIOp::create(b, loc, to, wide);
  }
  if (toFloat) {
    Type target = to.isBF16() ? f32 : to;
    Value y = fromUnsigned ? Value(arith::UIToFPOp::create(b, loc, target, x))
                           : Value(arith::SIToFPOp::create(b, loc, target, x));
    if (target != to)
      y = arith::TruncFOp::create(b, loc, to, y);
    return y;
  }
  // Integer to integer.
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 createIntConstant(b, loc, from, 0));
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return fromUnsigned ? Value(arith::ExtUIOp::create(b, loc, to, x))
                        : Value(arith::ExtSIOp::create(b, loc, to, x));
  return arith::TruncIOp::create(b, loc, to, x);
}

//===----------------------------------------------------------------------===//
// Clamp bounds
//===----------------------------------------------------------------------===//

/// `value` (already integral) saturated into the range of an integer type.
static APInt saturate(double value, unsigned width, bool isUnsigned) {
  if (isUnsigned) {
    if (value <= 0)
      return APInt::getZero(width);
    if (value >= std::ldexp(1.0, width))
      return APInt::getMaxValue(width);
    return APInt(width, static_cast<uint64_t>(value));
  }
  if (value < -std::ldexp(1.0, width - 1))
    return APInt::getSignedMinValue(width);
  if (value >= std::ldexp(1.0, width - 1))
    return APInt::getSignedMaxValue(width);
  return APInt(width, static_cast<int64_t>(value), /*isSigned=*/true);
}

/// One integer clamp bound as numpy applies it: np.maximum(x, lo) (or
/// np.minimum(x, hi)) computed in float, then cast back, i.e. elements past
/// the bound become trunc(bound). `isLower` selects maximum vs minimum.
static Value intBound(OpBuilder &b, Location loc, Value x, double bound,
                      bool isLower, bool isUnsigned) {
  auto type = cast<IntegerType>(x.getType());
  unsigned width = type.getWidth();
  // x < lo <=> x < ceil(lo) for integers, and x > hi <=> x > floor(hi).
  double edge = isLower ? std::ceil(bound) : std::floor(bound);
  APInt edgeInt = saturate(edge, width, isUnsigned);
  APInt replacement = saturate(std::trunc(bound), width, isUnsigned);
  auto constant = [&](const APInt &v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  double lowest = isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
  double highest =
      isUnsigned ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  if (isLower) {
    if (edge <= lowest)
      return x; // no element is below the bound
    if (edge > highest)
      return constant(replacement); // every element is
  } else {
    if (edge >= highest)
      return x;
    if (edge < lowest)
      return constant(replacement);
  }
  arith::CmpIPredicate pred =
      isLower
          ? (isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
          : (isUnsigned ? arith::CmpIPredicate::ugt
                        : arith::CmpIPredicate::sgt);
  Value past = arith::CmpIOp::create(b, loc, pred, x, constant(edgeInt));
  return arith::SelectOp::create(b, loc, past, constant(replacement), x);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

struct UnaryLowering : RankedResultConversion<UnaryOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(UnaryOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    UnaryKind kind = op.getKind();
    Type elem = resultType.getElementType();
    if (!unaryKindAccepts(kind, elem))
      return rewriter.notifyMatchFailure(op, "kind does not take this type");
    if (kind == UnaryKind::identity) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    bool isUnsigned = isUnsignedInt(op.getInput().getType());
    // A narrow float's function (gelu, tanh, ...) is computed in float32 and
    // rounded once, not rounded after every step of its expansion.
    Type wide = computeType(elem);
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (wide == elem)
            return emitUnary(b, loc, kind, args[0], isUnsigned);
          Value x = castFloat(b, loc, args[0], cast<FloatType>(wide));
          return castFloat(b, loc, emitUnary(b, loc, kind, x, isUnsigned),
                           cast<FloatType>(elem));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BinaryLowering : RankedResultConversion<BinaryOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(BinaryOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Type elem = resultType.getElementType();
    BinaryKind kind = op.getKind();
    if (!isa<FloatType, IntegerType>(elem))
      return rewriter.notifyMatchFailure(op, "needs int or float elements");
    bool logical = kind == BinaryKind::logical_and ||
                   kind == BinaryKind::logical_or ||
                   kind == BinaryKind::logical_xor;
    if (logical && !elem.isInteger(1))
      return rewriter.notifyMatchFailure(op, "logical kinds need i1");
    bool isUnsigned = isUnsignedInt(op.getLhs().getType());
    // In float32 for a narrow float, rounded once: the same for add, sub,
    // mul and div (float32 has more than twice bf16's and f16's bits), and
    // pow, which the lowering expands into exp and log, is not rounded
    // between them.
    Type wide = computeType(elem);
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (wide == elem)
            return emitBinary(b, loc, kind, args[0], args[1], isUnsigned);
          auto wideType = cast<FloatType>(wide);
          Value lhs = castFloat(b, loc, args[0], wideType);
          Value rhs = castFloat(b, loc, args[1], wideType);
          return castFloat(b, loc,
                           emitBinary(b, loc, kind, lhs, rhs, isUnsigned),
                           cast<FloatType>(elem));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CompareLowering : RankedResultConversion<CompareOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(CompareOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Type elem = getElementTypeOrSelf(adaptor.getLhs().getType());
    if (!isa<FloatType, IntegerType>(elem))
      return rewriter.notifyMatchFailure(op, "needs int or float operands");
    bool isUnsigned = isUnsignedInt(op.getLhs().getType());
    ComparePredicate pred = op.getPredicate();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return emitCompare(b, loc, pred, args[0], args[1], isUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct WhereLowering : RankedResultConversion<WhereOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(WhereOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType,
        ValueRange{adaptor.getCondition(), adaptor.getOnTrue(),
                   adaptor.getOnFalse()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ClampLowering : RankedResultConversion<ClampOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(ClampOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    std::optional<double> lo, hi;
    if (auto min = op.getMinAttr())
      lo = min.getValueAsDouble();
    if (auto max = op.getMaxAttr())
      hi = max.getValueAsDouble();
    if (!lo && !hi) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Type elem = resultType.getElementType();
    bool isFloat = isa<FloatType>(elem);
    if (!isFloat && !isa<IntegerType>(elem))
      return rewriter.notifyMatchFailure(op, "needs int or float elements");
    if (!isFloat && ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi)))) {
      op.emitOpError("cannot clamp integers to a NaN bound");
      return rewriter.notifyMatchFailure(op, "NaN bound on integers");
    }
    bool isUnsigned = isUnsignedInt(op.getInput().getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value x = args[0];
          // numpy: np.minimum(np.maximum(x, min), max); NaN propagates.
          if (isFloat) {
            if (lo)
              x = arith::MaximumFOp::create(
                  b, loc, x, createFloatConstant(b, loc, elem, *lo));
            if (hi)
              x = arith::MinimumFOp::create(
                  b, loc, x, createFloatConstant(b, loc, elem, *hi));
            return x;
          }
          if (lo)
            x = intBound(b, loc, x, *lo, /*isLower=*/true, isUnsigned);
          if (hi)
            x = intBound(b, loc, x, *hi, /*isLower=*/false, isUnsigned);
          return x;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CastLowering : RankedResultConversion<CastOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(CastOp op, OpAdaptor adaptor, RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    Type from = getElementTypeOrSelf(input.getType());
    Type to = resultType.getElementType();
    if (!isa<FloatType, IntegerType>(from) || !isa<FloatType, IntegerType>(to))
      return rewriter.notifyMatchFailure(op, "needs int or float elements");
    // ui8 -> i8 and the like keep every bit.
    if (input.getType() == resultType) {
      rewriter.replaceOp(op, input);
      return success();
    }
    bool fromUnsigned = isUnsignedInt(op.getInput().getType());
    bool toUnsigned = isUnsignedInt(op.getResult().getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, input,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return emitCast(b, loc, args[0], to, fromUnsigned, toUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConstantLowering : RankedResultConversion<ConstantOp> {
  using RankedResultConversion::RankedResultConversion;
  LogicalResult lower(ConstantOp op, OpAdaptor adaptor,
                      RankedTensorType resultType,
                      ConversionPatternRewriter &rewriter) const override {
    ElementsAttr value = op.getValue();
    TypedAttr retyped;
    if (value.getType() == resultType) {
      retyped = cast<TypedAttr>(value);
    } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      // Same bits, signless element type.
      retyped = dense.bitcast(resultType.getElementType());
    } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
      retyped =
          DenseResourceElementsAttr::get(resultType, resource.getRawHandle());
    } else {
      op.emitOpError("cannot lower a constant of this attribute kind with a "
                     "signed or unsigned element type");
      return rewriter.notifyMatchFailure(op, "unsupported constant attribute");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, resultType, retyped);
    return success();
  }
};

} // namespace

void mlir::loom::populateLoomElementwiseToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<UnaryLowering, BinaryLowering, CompareLowering, WhereLowering,
               ClampLowering, CastLowering, ConstantLowering>(
      converter, patterns.getContext());
}
