//===- Elementwise.cpp - lower loom unary, binary, compare, where, clamp, cast, constant -===//
//
// TODO(owner): describe the lowering of this op family.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::populateLoomElementwiseToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {}
