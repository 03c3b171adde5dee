//===- Autodiff.h - differentiation passes ----------------------*- C++ -*-===//

#ifndef LOOM_PASSES_AUTODIFF_H
#define LOOM_PASSES_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::loom {
#define GEN_PASS_DECL
#include "passes/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Autodiff/Passes.h.inc"
} // namespace mlir::loom

#endif // LOOM_PASSES_AUTODIFF_H
