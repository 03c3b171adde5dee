//===- LoomOpWriter.h - elementwise loom ops at one builder -------*- C++ -*-===//
//
// The building blocks the backward (Differentiate.cpp) and the optimizer
// step (OptimizerStep.cpp) write their loom ops with, at the builder's
// insertion point and location. Private to lib/Autodiff.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_AUTODIFF_LOOMOPWRITER_H
#define LOOM_LIB_AUTODIFF_LOOMOPWRITER_H

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::loom {

class LoomOpWriter {
protected:
  LoomOpWriter(Location loc, MLIRContext *ctx) : b(loc, ctx) {}

  /// A rank-0 constant of float type `element`.
  Value scalar(double value, Type element) {
    auto type = RankedTensorType::get({}, element);
    return ConstantOp::create(b, DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
  }
  /// A constant tensor of `type` holding zeros.
  Value zeros(RankedTensorType type) {
    return ConstantOp::create(
        b, DenseElementsAttr::get(type,
                                  b.getFloatAttr(type.getElementType(), 0.0)));
  }
  /// A rank-0 constant of `like`'s element type.
  Value scalar(double value, Value like) {
    return scalar(value, cast<RankedTensorType>(like.getType()).getElementType());
  }
  Value unary(UnaryKind kind, Value x) { return UnaryOp::create(b, kind, x); }
  Value binary(BinaryKind kind, Value x, Value y) { return BinaryOp::create(b, kind, x, y); }
  Value add(Value x, Value y) { return binary(BinaryKind::add, x, y); }
  Value sub(Value x, Value y) { return binary(BinaryKind::sub, x, y); }
  Value mul(Value x, Value y) { return binary(BinaryKind::mul, x, y); }
  Value div(Value x, Value y) { return binary(BinaryKind::div, x, y); }
  /// `x · c`, `c` in x's element type.
  Value mulScalar(Value x, double c) { return mul(x, scalar(c, x)); }

  ImplicitLocOpBuilder b;
};

} // namespace mlir::loom

#endif // LOOM_LIB_AUTODIFF_LOOMOPWRITER_H
