//===- ConversionTable.cpp - ONNX op conversions by (op type, opset) ------===//
//
// The one table that says which ONNX ops import, at which opsets, and with
// which function. An op whose semantics changed between opsets has one row
// per behaviour (the Reduce ops take `axes` as an attribute before opset 18
// and as an input from 18; ReduceSum switched at 13). The table also powers
// the "nearest supported" hint of the unsupported-op diagnostic.
//
// docs/onnx-import.md lists the same rows with the loom ops each produces;
// keep them in sync.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "llvm/ADT/STLExtras.h"
#include "lib/Translate/NearestNames.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

static const Conversion kConversions[] = {
    // Elementwise unary functions -> loom.unary.
    {"Abs", 13, 21, convertUnary},
    {"Ceil", 13, 21, convertUnary},
    {"Cos", 13, 21, convertUnary},
    {"Erf", 13, 21, convertUnary},
    {"Exp", 13, 21, convertUnary},
    {"Floor", 13, 21, convertUnary},
    {"HardSwish", 14, 21, convertUnary},
    {"Log", 13, 21, convertUnary},
    {"Neg", 13, 21, convertUnary},
    {"Reciprocal", 13, 21, convertUnary},
    {"Relu", 13, 21, convertUnary},
    {"Round", 13, 21, convertUnary},
    {"Sigmoid", 13, 21, convertUnary},
    {"Sign", 13, 21, convertUnary},
    {"Sin", 13, 21, convertUnary},
    {"Softplus", 13, 21, convertUnary},
    {"Sqrt", 13, 21, convertUnary},
    {"Tanh", 13, 21, convertUnary},
    {"Not", 13, 21, convertNot},
    {"Tan", 13, 21, convertTrig},
    {"Sinh", 13, 21, convertTrig},
    {"Cosh", 13, 21, convertTrig},
    {"IsNaN", 13, 21, convertIsNaN},
    {"IsInf", 13, 21, convertIsInf},
    // Activations composed of elementwise loom ops.
    {"Celu", 13, 21, convertCelu},
    {"Elu", 13, 21, convertElu},
    {"Gelu", 20, 21, convertGelu},
    {"HardSigmoid", 13, 21, convertHardSigmoid},
    {"LeakyRelu", 13, 21, convertLeakyRelu},
    {"Mish", 18, 21, convertMish},
    {"PRelu", 13, 21, convertPRelu},
    {"Selu", 13, 21, convertSelu},
    {"Shrink", 13, 21, convertShrink},
    {"Softsign", 13, 21, convertSoftsign},
    {"ThresholdedRelu", 13, 21, convertThresholdedRelu},
    // Elementwise binary and variadic -> loom.binary / loom.compare.
    {"Add", 13, 21, convertBinary},
    {"And", 13, 21, convertBinary},
    {"Div", 13, 21, convertBinary},
    {"Mul", 13, 21, convertBinary},
    {"Or", 13, 21, convertBinary},
    {"Sub", 13, 21, convertBinary},
    {"Xor", 13, 21, convertBinary},
    {"Pow", 13, 21, convertPow},
    {"Mod", 13, 21, convertMod},
    {"Max", 13, 21, convertVariadic},
    {"Mean", 13, 21, convertVariadic},
    {"Min", 13, 21, convertVariadic},
    {"Sum", 13, 21, convertVariadic},
    {"Equal", 13, 21, convertCompare},
    {"Greater", 13, 21, convertCompare},
    {"GreaterOrEqual", 13, 21, convertCompare},
    {"Less", 13, 21, convertCompare},
    {"LessOrEqual", 13, 21, convertCompare},
    {"Where", 13, 21, convertWhere},
    {"Clip", 13, 21, convertClip},
    // Type conversion and pass-through.
    {"Cast", 13, 21, convertCast},
    {"CastLike", 15, 21, convertCastLike},
    {"Identity", 13, 21, convertIdentity},
    {"Dropout", 13, 21, convertDropout},
    // Contractions, convolution, pooling, normalization.
    {"MatMul", 13, 21, convertMatMul},
    {"Gemm", 13, 21, convertGemm},
    {"Einsum", 13, 21, convertEinsum},
    {"Conv", 13, 21, convertConv},
    {"MaxPool", 13, 21, convertMaxPool},
    {"AveragePool", 13, 21, convertAveragePool},
    {"GlobalAveragePool", 13, 21, convertGlobalPool},
    {"GlobalMaxPool", 13, 21, convertGlobalPool},
    {"BatchNormalization", 13, 21, convertBatchNormalization},
    {"InstanceNormalization", 13, 21, convertInstanceNormalization},
    {"LayerNormalization", 17, 21, convertLayerNormalization},
    {"Softmax", 13, 21, convertSoftmax},
    {"LogSoftmax", 13, 21, convertSoftmax},
    {"Hardmax", 13, 21, convertHardmax},
    {"LRN", 13, 21, convertLRN},
    {"MeanVarianceNormalization", 13, 21, convertMeanVarianceNormalization},
    {"NegativeLogLikelihoodLoss", 13, 21, convertNegativeLogLikelihoodLoss},
    {"SoftmaxCrossEntropyLoss", 13, 21, convertSoftmaxCrossEntropyLoss},
    // Reductions: `axes` attribute before opset 18 (ReduceSum: 13), input
    // from then on.
    {"ReduceSum", 13, 21, convertReduceAxesInput},
    {"ReduceMean", 13, 17, convertReduceAxesAttr},
    {"ReduceMean", 18, 21, convertReduceAxesInput},
    {"ReduceMax", 13, 17, convertReduceAxesAttr},
    {"ReduceMax", 18, 21, convertReduceAxesInput},
    {"ReduceMin", 13, 17, convertReduceAxesAttr},
    {"ReduceMin", 18, 21, convertReduceAxesInput},
    {"ReduceProd", 13, 17, convertReduceAxesAttr},
    {"ReduceProd", 18, 21, convertReduceAxesInput},
    {"ReduceL1", 13, 17, convertReduceAxesAttr},
    {"ReduceL1", 18, 21, convertReduceAxesInput},
    {"ReduceL2", 13, 17, convertReduceAxesAttr},
    {"ReduceL2", 18, 21, convertReduceAxesInput},
    {"ReduceSumSquare", 13, 17, convertReduceAxesAttr},
    {"ReduceSumSquare", 18, 21, convertReduceAxesInput},
    {"ReduceLogSum", 13, 17, convertReduceAxesAttr},
    {"ReduceLogSum", 18, 21, convertReduceAxesInput},
    {"ReduceLogSumExp", 13, 17, convertReduceAxesAttr},
    {"ReduceLogSumExp", 18, 21, convertReduceAxesInput},
    {"ArgMax", 13, 21, convertArgReduce},
    {"ArgMin", 13, 21, convertArgReduce},
    {"TopK", 13, 21, convertTopK},
    // Shapes and data movement.
    {"Constant", 13, 21, convertConstant},
    {"ConstantOfShape", 13, 21, convertConstantOfShape},
    {"Shape", 13, 21, convertShape},
    {"Size", 13, 21, convertSize},
    {"Range", 13, 21, convertRange},
    {"EyeLike", 13, 21, convertEyeLike},
    {"Reshape", 13, 21, convertReshape},
    {"Flatten", 13, 21, convertFlatten},
    {"Squeeze", 13, 21, convertSqueeze},
    {"Unsqueeze", 13, 21, convertUnsqueeze},
    {"Transpose", 13, 21, convertTranspose},
    {"Concat", 13, 21, convertConcat},
    {"Slice", 13, 21, convertSlice},
    {"Split", 13, 21, convertSplit},
    {"Gather", 13, 21, convertGather},
    {"ScatterElements", 13, 21, convertScatterElements},
    {"Pad", 13, 21, convertPad},
    {"Expand", 13, 21, convertExpand},
    {"Tile", 13, 21, convertTile},
    {"DepthToSpace", 13, 21, convertDepthToSpace},
    {"SpaceToDepth", 13, 21, convertSpaceToDepth},
    {"OneHot", 13, 21, convertOneHot},
    {"Trilu", 14, 21, convertTrilu},
    {"NonZero", 13, 21, convertNonZero},
    {"CumSum", 13, 21, convertCumSum},
    // Control flow and sequences, unrolled or folded at import time.
    {"Loop", 13, 21, convertLoop},
    {"If", 13, 21, convertIf},
    {"SequenceConstruct", 13, 21, convertSequenceConstruct},
    {"SequenceEmpty", 13, 21, convertSequenceEmpty},
    {"SequenceAt", 13, 21, convertSequenceAt},
    {"SequenceInsert", 13, 21, convertSequenceInsert},
    {"SequenceErase", 13, 21, convertSequenceErase},
    {"SequenceLength", 13, 21, convertSequenceLength},
    {"SplitToSequence", 13, 21, convertSplitToSequence},
    {"ConcatFromSequence", 13, 21, convertConcatFromSequence},
};

ArrayRef<Conversion> onnx_import::conversionTable() { return kConversions; }

const Conversion *onnx_import::findConversion(StringRef opType, int opset) {
  for (const Conversion &c : kConversions)
    if (c.opType == opType && c.minOpset <= opset && opset <= c.maxOpset)
      return &c;
  return nullptr;
}

SmallVector<StringRef> onnx_import::nearestOps(StringRef opType, size_t n) {
  return nearestNames(opType,
                      llvm::map_range(kConversions,
                                      [](const Conversion &c) {
                                        return c.opType;
                                      }),
                      n);
}
