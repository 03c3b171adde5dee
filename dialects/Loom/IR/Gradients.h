//===- Gradients.h - which values of a loom function carry a gradient -----===//
//
// Training differentiates a forward function with respect to its trainable
// parameters. --loom-autodiff, the estimator and the strategy search must
// agree on which values have a gradient: those computed in float from a
// parameter that some result reads through such values alone. A weight
// read only through a comparison or an argmax has none (PyTorch leaves its
// `.grad` None), and training keeps no gradient or optimizer state for it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_LOOM_IR_GRADIENTS_H
#define LOOM_DIALECTS_LOOM_IR_GRADIENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::loom {

/// Whether `t` is a ranked tensor of floats: what can carry a gradient.
bool isFloatTensor(Type t);

/// Whether `op` is a trainable parameter: a float `loom.weight parameter`.
bool isTrainableParameter(Operation *op);

/// The values of `body` computed in float from a trainable parameter
/// (through any op, annotations included).
DenseSet<Value> valuesFromParameters(Block &body);

/// Of `varied`, the values some result of `body` (its terminator's
/// operands) reads through values of `varied` alone.
DenseSet<Value> readByResults(Block &body, const DenseSet<Value> &varied);

/// The values of `func` (one block) that carry a gradient in training:
/// readByResults of valuesFromParameters.
DenseSet<Value> gradientValues(func::FuncOp func);

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_GRADIENTS_H
