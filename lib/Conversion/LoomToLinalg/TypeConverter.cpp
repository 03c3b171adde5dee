//===- TypeConverter.cpp - signless integers for the loom lowering --------===//
//
// Loom keeps ONNX's signedness in its integer types; arith and linalg want
// signless integers. The converter maps `ui8`/`si32`/... to `i8`/`i32`/...
// (also as tensor element types) and leaves everything else alone; the
// patterns recover signedness from the op they rewrite.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::loom;

static Type signless(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type); integer && !integer.isSignless())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

LoomToLinalgTypeConverter::LoomToLinalgTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](IntegerType type) { return signless(type); });
  addConversion([](RankedTensorType type) -> Type {
    return type.clone(signless(type.getElementType()));
  });
  addConversion([](UnrankedTensorType type) -> Type {
    return UnrankedTensorType::get(signless(type.getElementType()));
  });
}

void mlir::loom::populateLoomToLinalgPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  populateLoomElementwiseToLinalgPatterns(converter, patterns);
  populateLoomShapeToTensorPatterns(converter, patterns);
  populateLoomComputeToLinalgPatterns(converter, patterns);
  populateLoomNormalizationToLinalgPatterns(converter, patterns);
  populateLoomIndexingToLinalgPatterns(converter, patterns);
}
