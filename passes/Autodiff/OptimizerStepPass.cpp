//===- OptimizerStepPass.cpp - the --loom-optimizer-step pass
//--------------===//
//
// Reads the options into an OptimizerConfig, checks them, runs
// writeOptimizerStep on the entry function, and checks the host's part of
// the update in the step and its update functions (verifyHostUpdates).
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Autodiff.h"

#include "loom/Autodiff/OptimizerStep.h"
#include "loom/Memory/Movement.h"
#include "loom/Passes/Lower.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMOPTIMIZERSTEP
#include "passes/Autodiff/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomOptimizerStepPass
    : mlir::loom::impl::LoomOptimizerStepBase<LoomOptimizerStepPass> {
  using LoomOptimizerStepBase::LoomOptimizerStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<OptimizerKind> parsed = parseOptimizerKind(kind);
    if (!parsed) {
      module.emitError("loom-optimizer-step: unknown optimizer kind '")
          << kind << "' (one of sgd, adam, adamw)";
      return signalPassFailure();
    }
    OptimizerConfig config;
    config.kind = *parsed;
    config.lr = lr;
    config.beta1 = beta1;
    config.beta2 = beta2;
    config.eps = eps;
    config.weightDecay = weightDecay;
    config.momentum = momentum;
    config.keepGradients = keepGradients;
    if (std::string why = checkOptimizerConfig(config); !why.empty()) {
      module.emitError("loom-optimizer-step: ") << why;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions = entryFunctions(module, entry);
    if (functions.size() != 1 || functions.front().isExternal()) {
      module.emitError("loom-optimizer-step: no single function '")
          << entry << "' with a body to update the weights of";
      return signalPassFailure();
    }
    if (failed(writeOptimizerStep(functions.front(), config)))
      return signalPassFailure();
    // The host's part of the update (placement's CPU optimizer) reads and
    // is read across the copies only, in the step and its update functions.
    for (func::FuncOp f : programFunctions(module, entry))
      if (failed(verifyHostUpdates(f)))
        return signalPassFailure();
  }
};
} // namespace
