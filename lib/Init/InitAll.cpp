//===- InitAll.cpp - register every dialect and pass ----------------------===//
//
// Implements include/loom/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAll.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Passes/Autodiff.h"
#include "loom/Passes/Estimate.h"
#include "loom/Passes/Memory.h"
#include "loom/Passes/Lower.h"
#include "loom/Passes/Plan.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void mlir::loom::registerAllDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<LoomDialect>();
}

void mlir::loom::registerAllPasses() {
  mlir::registerAllPasses();
  registerLoomAutodiffPasses();
  registerLoomEstimatePasses();
  registerLoomPlanPasses();
  registerLoomLowerPasses();
  registerLoomMemoryPasses();
  registerLoomLowerPipelines();
}
