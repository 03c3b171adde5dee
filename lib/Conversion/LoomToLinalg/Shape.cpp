//===- Shape.cpp - lower loom reshape, transpose, concat, slice, pad, expand -===//
//
// TODO(owner): describe the lowering of this op family.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::populateLoomShapeToTensorPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {}
