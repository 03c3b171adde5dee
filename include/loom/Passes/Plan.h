//===- Plan.h - folding and strategy-search passes --------------*- C++ -*-===//

#ifndef LOOM_PASSES_PLAN_H
#define LOOM_PASSES_PLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::loom {
#define GEN_PASS_DECL
#include "passes/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom

#endif // LOOM_PASSES_PLAN_H
