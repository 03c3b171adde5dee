//===- LoomToLinalg.h - lower loom ops to linalg/tensor/arith ---*- C++ -*-===//
//
// Patterns that rewrite every loom op into upstream value-semantic dialects
// (linalg, tensor, arith, math, scf), so that upstream bufferization and the
// LLVM conversions take the program the rest of the way to native code.
// Loom's integer types may be signed or unsigned (`si8`, `ui8`); upstream
// arith wants signless ones, so the patterns run under a type converter that
// drops the signedness, and read it from the original op where it matters
// (division, comparison, casts, min/max).
//
// The patterns are grouped by op family, one file each under
// lib/Conversion/LoomToLinalg/; `populateLoomToLinalgPatterns` adds them all.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_LOOMTOLINALG_H
#define LOOM_CONVERSION_LOOMTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::loom {

/// Identity on everything except integers with signedness, which become
/// signless integers of the same width (also inside ranked tensors).
class LoomToLinalgTypeConverter : public TypeConverter {
public:
  LoomToLinalgTypeConverter();
};

/// unary, binary, compare, where, clamp, cast, constant.
void populateLoomElementwiseToLinalgPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns);
/// reshape, transpose, concat, slice, pad, expand.
void populateLoomShapeToTensorPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns);
/// matmul, conv, pool, attention.
void populateLoomComputeToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);
/// reduce, softmax, layer_norm, rms_norm, batch_norm.
void populateLoomNormalizationToLinalgPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns);
/// gather, scatter, embedding, top_k, moe_dispatch, moe_combine.
void populateLoomIndexingToLinalgPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns);

/// All of the above.
void populateLoomToLinalgPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns);

} // namespace mlir::loom

#endif // LOOM_CONVERSION_LOOMTOLINALG_H
