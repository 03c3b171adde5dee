//===- Indexing.cpp - lower loom gather, scatter, embedding, top_k, moe_dispatch, moe_combine -===//
//
// TODO(owner): describe the lowering of this op family.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::populateLoomIndexingToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {}
