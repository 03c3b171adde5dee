//===- Memory.h - memory placement passes -----------------------*- C++ -*-===//

#ifndef LOOM_PASSES_MEMORY_H
#define LOOM_PASSES_MEMORY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::loom {
#define GEN_PASS_DECL
#include "passes/Memory/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Memory/Passes.h.inc"
} // namespace mlir::loom

#endif // LOOM_PASSES_MEMORY_H
