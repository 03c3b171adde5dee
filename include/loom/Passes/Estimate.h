//===- Estimate.h - cost estimation passes ----------------------*- C++ -*-===//

#ifndef LOOM_PASSES_ESTIMATE_H
#define LOOM_PASSES_ESTIMATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::loom {
#define GEN_PASS_DECL
#include "passes/Estimate/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Estimate/Passes.h.inc"

/// The tool-level `--loom-report=FILE` (empty when not given): where report
/// writing passes put their JSON unless their own `report=` says otherwise.
std::string reportFileFromCommandLine();
} // namespace mlir::loom

#endif // LOOM_PASSES_ESTIMATE_H
