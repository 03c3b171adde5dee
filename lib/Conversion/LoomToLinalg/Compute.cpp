//===- Compute.cpp - lower loom matmul, conv, pool, attention -===//
//
// TODO(owner): describe the lowering of this op family.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::populateLoomComputeToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {}
