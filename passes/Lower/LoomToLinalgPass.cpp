//===- LoomToLinalgPass.cpp - the --loom-to-linalg pass -------------------===//
//
// Drives the patterns of lib/Conversion/LoomToLinalg as a full conversion of
// the loom dialect: after it no loom op is left, and function signatures,
// calls and returns use signless integers. Everything else (shard ops,
// upstream dialects) is legal as long as its types are.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Conversion/LoomToLinalg.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMTOLINALG
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomToLinalgPass : mlir::loom::impl::LoomToLinalgBase<LoomToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    LoomToLinalgTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateLoomToLinalgPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<LoomDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    if (failed(applyFullConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
