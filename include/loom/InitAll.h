//===- InitAll.h - register every dialect and pass Loom tools use -*- C++ -*-===//
//
// One place that makes a DialectRegistry and the pass registry hold everything
// upstream MLIR ships plus Loom's own dialect and passes. Every tool calls
// these, so loom-opt, loom-translate and embedders see the same world.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALL_H
#define LOOM_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::loom {

/// Upstream dialects and extensions plus the loom dialect.
void registerAllDialects(DialectRegistry &registry);

/// Upstream passes plus Loom's passes and pipelines.
void registerAllPasses();

} // namespace mlir::loom

#endif // LOOM_INITALL_H
