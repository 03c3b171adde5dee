//===- Gradients.cpp - which values of a loom function carry a gradient ---===//

#include "dialects/Loom/IR/Gradients.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

bool mlir::loom::isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

bool mlir::loom::isTrainableParameter(Operation *op) {
  auto w = dyn_cast<WeightOp>(op);
  return w && w.getRole() == WeightRole::parameter && isFloatTensor(w.getType());
}

DenseSet<Value> mlir::loom::valuesFromParameters(Block &body) {
  DenseSet<Value> varied;
  for (Operation &op : body) {
    bool fromParameter =
        isTrainableParameter(&op) ||
        llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); });
    if (fromParameter)
      for (Value r : op.getResults())
        if (isFloatTensor(r.getType()))
          varied.insert(r);
  }
  return varied;
}

DenseSet<Value> mlir::loom::readByResults(Block &body,
                                          const DenseSet<Value> &varied) {
  DenseSet<Value> read;
  for (Operation &op : llvm::reverse(body))
    if (op.hasTrait<OpTrait::IsTerminator>() ||
        llvm::any_of(op.getResults(), [&](Value r) { return read.contains(r); }))
      for (Value v : op.getOperands())
        if (varied.contains(v))
          read.insert(v);
  return read;
}

DenseSet<Value> mlir::loom::gradientValues(func::FuncOp func) {
  Block &body = func.getBody().front();
  return readByResults(body, valuesFromParameters(body));
}
