//===- Normalization.cpp - lower loom reduce, softmax, layer_norm, rms_norm, batch_norm -===//
//
// TODO(owner): describe the lowering of this op family.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::populateLoomNormalizationToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {}
