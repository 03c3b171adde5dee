//===- ONNXImporter.h - internals of the ONNX importer ----------*- C++ -*-===//
//
// Shared by the files of lib/Translate/ONNX: the importer state (scopes of
// named ONNX values, the function being built, weights), the per-node context
// that conversions read their inputs and attributes from, host tensors for
// import-time constant folding, and the conversion table.
//
// Values are imported lazily: an ONNX value whose contents are known at import
// time (a small integer or scalar initializer, a Constant, a folded shape
// computation) is kept as a host tensor and only becomes a `loom.constant` when
// a real compute op uses it. Float initializers of rank >= 1 are model state
// (parameters, or buffers such as batch-norm statistics) and, like every large
// initializer, become `loom.weight` references on first use; they are never
// folded. Constants and weights are inserted at the top of `@main`, compute
// below.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TRANSLATE_ONNX_ONNXIMPORTER_H
#define LOOM_LIB_TRANSLATE_ONNX_ONNXIMPORTER_H

#include "loom/Translate/Import.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <onnx/onnx_pb.h>

#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace mlir::loom::onnx_import {

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

/// Largest tensor the importer evaluates at import time.
constexpr int64_t kMaxFoldElements = int64_t(1) << 18;
/// Integer initializers up to this size count as shape data and are read for
/// folding even when larger than --max-inline-elements.
constexpr int64_t kMaxShapeLikeElements = 4096;
/// Largest rank and dim the importer accepts (guards against absurd inputs).
constexpr int64_t kMaxRank = 32;
constexpr int64_t kMaxDim = int64_t(1) << 40;
constexpr int64_t kMaxElements = int64_t(1) << 60;
/// Most iterations a Loop may unroll to.
constexpr int64_t kMaxLoopIterations = 4096;
/// Most node imports per model, counting unrolled Loop bodies.
constexpr int64_t kMaxImportedNodes = int64_t(1) << 20;
/// Deepest nesting of subgraphs (Loop, If) the importer follows.
constexpr int kMaxSubgraphDepth = 16;

/// Opsets of the default domain this importer understands.
constexpr int kMinOpset = 13;
constexpr int kMaxOpset = 21;

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

/// A tensor whose contents are known at import time. Integer and bool dtypes
/// keep their elements in `ints`, float dtypes in `floats` (as double).
struct HostTensor {
  int32_t dtype = onnx::TensorProto::UNDEFINED;
  SmallVector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const;
  int64_t numel() const;
  double getDouble(int64_t i) const {
    return isFloat() ? floats[i] : double(ints[i]);
  }
  /// Allocates storage for `numel()` zero elements.
  void allocate();
};
using HostTensorRef = std::shared_ptr<const HostTensor>;

bool isFloatDType(int32_t dtype);
bool isIntegerDType(int32_t dtype); // includes bool
/// MLIR element type of an ONNX dtype; null when Loom has no equivalent.
Type dtypeToType(MLIRContext *ctx, int32_t dtype);
/// ONNX dtype of an MLIR element type; UNDEFINED when there is none.
int32_t typeToDType(Type type);
/// Bytes per element in raw_data; 0 for unsupported dtypes.
int64_t dtypeSize(int32_t dtype);
/// Name of an ONNX dtype for diagnostics ("FLOAT", "INT64", ...).
StringRef dtypeName(int32_t dtype);

/// True when `shape` is valid and small enough to evaluate at import time.
inline bool foldable(ArrayRef<int64_t> shape);

/// `v` as an integer clamped to [lo, hi]; NaN gives lo.
inline int64_t clampToInt(double v, int64_t lo, int64_t hi) {
  if (!(v >= double(lo)))
    return lo;
  if (v >= double(hi))
    return hi;
  return int64_t(v);
}

/// Product of `shape`; -1 past kMaxElements or for a dim outside
/// [0, kMaxDim].
int64_t checkedNumElements(ArrayRef<int64_t> shape);

inline bool foldable(ArrayRef<int64_t> shape) {
  int64_t n = checkedNumElements(shape);
  return n >= 0 && n <= kMaxFoldElements;
}

/// Rounds a value to what `dtype` can hold (integer wrap, f16/bf16/f32
/// rounding, bool normalization) and stores it in `t` at `i`.
void storeElement(HostTensor &t, int64_t i, double fv, int64_t iv,
                  bool fromFloat);

/// Converts a host tensor to another dtype (ONNX Cast semantics).
HostTensor castHostTensor(const HostTensor &t, int32_t dtype);

/// Builds the DenseElementsAttr of a host tensor.
DenseElementsAttr hostToAttr(const HostTensor &t, MLIRContext *ctx);

/// Decodes the elements of a TensorProto that holds its data inline; the
/// error text says what is wrong. External data is read from `baseDir`.
FailureOr<HostTensor> decodeTensorProto(const onnx::TensorProto &proto,
                                        StringRef baseDir, std::string &error);

/// Where the bytes of an external-data tensor live.
struct ExternalDataRef {
  std::string location; // as written in the model (relative to its dir)
  std::string fullPath; // resolved against the model directory
  uint64_t offset = 0;
  uint64_t size = 0;    // bytes of the tensor's elements
};

/// Reads the external_data keys of `proto` and checks, by file size only,
/// that the file holds `bytes` bytes at the offset. The error text names the
/// tensor and the file.
FailureOr<ExternalDataRef> resolveExternalData(const onnx::TensorProto &proto,
                                               StringRef baseDir,
                                               uint64_t bytes,
                                               std::string &error);

/// Checks dims and dtype of a TensorProto and returns its type.
FailureOr<RankedTensorType> tensorProtoType(const onnx::TensorProto &proto,
                                            MLIRContext *ctx,
                                            std::string &error);

//===----------------------------------------------------------------------===//
// Locating embedded tensor data in the model file (WireFormat.cpp)
//===----------------------------------------------------------------------===//

/// Where the payload of one TensorProto's data field sits in the model file.
struct EmbeddedData {
  uint64_t offset = 0;
  uint64_t size = 0;
  int field = 0; // 9 raw_data, 4 float_data (packed), 10 double_data (packed)
  bool ambiguous = false; // several candidate chunks: not usable
};

/// Byte positions of the tensor payloads of the main graph.
struct EmbeddedDataIndex {
  /// Main-graph initializer name -> its payload.
  llvm::StringMap<EmbeddedData> initializers;
  /// Main-graph node index -> payload of its `value` tensor attribute.
  llvm::DenseMap<int64_t, EmbeddedData> constantNodes;
};

/// Walks the protobuf wire format of a serialized ModelProto (graph field 7,
/// initializer field 5, node field 1) and records payload offsets. Bounds
/// checked; returns false when the buffer is not well-formed.
bool indexEmbeddedData(StringRef bytes, EmbeddedDataIndex &index);

//===----------------------------------------------------------------------===//
// Imported values
//===----------------------------------------------------------------------===//

/// A stored tensor (initializer or Constant attribute) not yet materialized.
struct StoredTensor {
  const onnx::TensorProto *proto = nullptr;
  std::string name;             // initializer name, or Constant output name
  std::optional<EmbeddedData> embedded; // payload position in the model file
  /// Not a trainable parameter: BatchNormalization statistics, a Constant's
  /// value, or integer/bool data.
  bool isBuffer = false;
  /// A float initializer of rank >= 1: model state (a trainable parameter or
  /// a buffer) that stays a loom.weight whatever its size and is never
  /// folded into other constants.
  bool isModelState = false;
  bool decodeFailed = false;
};

/// One ONNX tensor value: its type, and any of: an SSA value, known contents,
/// a stored tensor to materialize on first use.
struct TensorValue {
  RankedTensorType type;
  Value ssa;
  HostTensorRef host;
  std::shared_ptr<StoredTensor> stored;
};
using TensorRef = std::shared_ptr<TensorValue>;

/// An ONNX sequence whose elements are known at import time.
struct SequenceValue {
  std::vector<TensorRef> elements;
  int32_t elemDType = onnx::TensorProto::UNDEFINED;
};
using SequenceRef = std::shared_ptr<SequenceValue>;

/// A named ONNX value: a tensor or a sequence (exactly one is set).
struct ImportedValue {
  TensorRef tensor;
  SequenceRef sequence;
};

/// Names visible in a graph; subgraphs see their parents' names.
class Scope {
public:
  explicit Scope(Scope *parent = nullptr) : parent(parent) {}
  const ImportedValue *lookup(StringRef name) const;
  bool definesLocally(StringRef name) const { return values.count(name); }
  void define(StringRef name, ImportedValue value) {
    values[name] = std::move(value);
  }

private:
  Scope *parent;
  llvm::StringMap<ImportedValue> values;
};

class Importer;

//===----------------------------------------------------------------------===//
// Per-node conversion context
//===----------------------------------------------------------------------===//

/// What a conversion sees of one node: typed access to inputs and
/// attributes, result setters, and op creation that reports shape errors as
/// diagnostics at the node instead of aborting.
class NodeContext {
public:
  NodeContext(Importer &imp, const onnx::NodeProto &node, Scope &scope,
              Location loc);

  Importer &imp;
  const onnx::NodeProto &node;
  Scope &scope;
  Location loc;
  OpBuilder &b;
  MLIRContext *ctx;
  int opset;
  /// Index of the node in the main graph (-1 inside subgraphs).
  int64_t index = -1;

  StringRef opType() const { return node.op_type(); }
  StringRef nodeName() const;

  //--- Diagnostics --------------------------------------------------------//
  /// Emits "<OpType> node '<name>': <msg>" and fails.
  LogicalResult error(const Twine &msg);
  /// Emits "<OpType> node '<name>': unsupported: <msg>" and fails.
  LogicalResult unsupported(const Twine &msg);

  //--- Inputs --------------------------------------------------------------//
  int64_t numInputs() const { return node.input_size(); }
  bool hasInput(int64_t i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  StringRef inputName(int64_t i) const { return node.input(i); }
  /// Requires input `i` (a tensor) and returns it.
  FailureOr<TensorRef> tensor(int64_t i);
  /// Requires input `i`; returns its type.
  FailureOr<RankedTensorType> type(int64_t i);
  /// Requires input `i` and materializes it as an SSA value.
  FailureOr<Value> value(int64_t i);
  /// The contents of input `i` when known at import time and foldable, else
  /// null. Model-state initializers (parameters) are never folded.
  HostTensorRef host(int64_t i);
  /// Like host(), but also reads small parameters: for inputs that act as
  /// attributes (a bound, a pad value), where reading does not fold them.
  HostTensorRef attrHost(int64_t i);
  /// Requires input `i` to be a known integer tensor; `what` names it.
  FailureOr<SmallVector<int64_t>> constInts(int64_t i, StringRef what);
  /// Requires input `i` to be a known scalar (or 1-element) tensor.
  FailureOr<double> constScalar(int64_t i, StringRef what);
  /// Requires input `i` to be a sequence.
  FailureOr<SequenceRef> sequence(int64_t i);
  /// True when every present input has known contents.
  bool allInputsKnown();

  //--- Attributes ----------------------------------------------------------//
  const onnx::AttributeProto *attr(StringRef name) const;
  bool hasAttr(StringRef name) const { return attr(name) != nullptr; }
  FailureOr<int64_t> attrInt(StringRef name, int64_t dflt);
  FailureOr<std::optional<int64_t>> attrIntOpt(StringRef name);
  FailureOr<double> attrFloat(StringRef name, double dflt);
  FailureOr<std::string> attrString(StringRef name, StringRef dflt);
  FailureOr<std::optional<SmallVector<int64_t>>> attrInts(StringRef name);
  FailureOr<std::optional<SmallVector<double>>> attrFloats(StringRef name);
  /// A required int attribute.
  FailureOr<int64_t> requiredAttrInt(StringRef name);

  //--- Results -------------------------------------------------------------//
  int64_t numOutputs() const { return node.output_size(); }
  bool outputUsed(int64_t i) const {
    return i < node.output_size() && !node.output(i).empty();
  }
  void setResult(int64_t i, Value v);
  void setHostResult(int64_t i, HostTensor t);
  void setTensorResult(int64_t i, TensorRef t);
  void setSequenceResult(int64_t i, SequenceRef s);
  void setResult(int64_t i, const ImportedValue &v);

  //--- Building ------------------------------------------------------------//
  /// Creates an op whose result types are inferred; reports an inference
  /// failure at the node's location instead of aborting.
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> createOp(Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    OpTy::build(b, state, TypeRange{}, std::forward<Args>(args)...);
    SmallVector<Type> types;
    if (failed(OpTy::inferReturnTypes(
            ctx, loc, state.operands,
            state.attributes.getDictionary(ctx), state.getRawProperties(),
            state.regions, types)))
      return failure();
    if (failed(checkResultTypes(types)))
      return failure();
    state.types.assign(types.begin(), types.end());
    return llvm::cast<OpTy>(b.create(state));
  }
  /// Like createOp, for single-result ops; returns the result.
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(Args &&...args) {
    FailureOr<OpTy> op = createOp<OpTy>(std::forward<Args>(args)...);
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  }

  /// Fails (with a diagnostic) when an inferred result is absurdly large.
  LogicalResult checkResultTypes(ArrayRef<Type> types);

  /// Shape-changing helpers that validate before building.
  FailureOr<Value> reshape(Value v, ArrayRef<int64_t> shape);
  FailureOr<Value> transpose(Value v, ArrayRef<int64_t> perm);
  FailureOr<Value> castElem(Value v, Type elemType);
  FailureOr<Value> expand(Value v, ArrayRef<int64_t> shape);
  /// A rank-0 constant of `elemType` (float or integer).
  Value scalar(Type elemType, double value);
  /// A constant from host data, placed with the other constants.
  Value constant(const HostTensor &t);
  FailureOr<Value> unary(UnaryKind kind, Value v);
  FailureOr<Value> binary(BinaryKind kind, Value l, Value r);
  FailureOr<Value> compare(ComparePredicate p, Value l, Value r);
  FailureOr<Value> where(Value c, Value t, Value f);
  /// loom.reduce over sorted unique `axes`.
  FailureOr<Value> reduce(ReduceKind kind, Value v, ArrayRef<int64_t> axes,
                          bool keepDims);
};

/// Declares `Value var` from a FailureOr<Value> expression, returning
/// failure from the enclosing function when it failed (the diagnostic has
/// been emitted).
#define TRY(var, expr)                                                         \
  FailureOr<Value> var##OrErr = (expr);                                        \
  if (failed(var##OrErr))                                                      \
    return failure();                                                          \
  Value var = *var##OrErr;

/// The ONNX-side shape of a value of `type`.
inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
inline Type elemOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// The conversion table
//===----------------------------------------------------------------------===//

using ConvertFn = LogicalResult (*)(NodeContext &);

/// One row: `opType` in opsets [minOpset, maxOpset] converts with `convert`.
struct Conversion {
  StringRef opType;
  int minOpset, maxOpset;
  ConvertFn convert;
};

/// Every row, grouped by op type.
ArrayRef<Conversion> conversionTable();
/// The row for `opType` at `opset`, or null.
const Conversion *findConversion(StringRef opType, int opset);
/// Up to `n` supported op names closest to `opType` by edit distance.
SmallVector<StringRef> nearestOps(StringRef opType, size_t n = 3);

// Conversions, by file. Each returns failure after emitting a diagnostic.
#define LOOM_ONNX_CONVERSIONS(X)                                               \
  /* ConvertElementwise.cpp */                                                 \
  X(Unary) X(Binary) X(Variadic) X(Compare) X(Where) X(Not) X(Clip) X(Cast)    \
  X(CastLike) X(Identity) X(Dropout) X(Pow) X(Mod) X(LeakyRelu) X(PRelu)       \
  X(Elu) X(Selu) X(Celu) X(ThresholdedRelu) X(HardSigmoid) X(Softsign)         \
  X(Mish) X(Shrink) X(Gelu) X(Trig) X(IsNaN) X(IsInf)                          \
  /* ConvertNN.cpp */                                                          \
  X(MatMul) X(Gemm) X(Conv) X(MaxPool) X(AveragePool) X(GlobalPool)            \
  X(BatchNormalization) X(InstanceNormalization) X(LayerNormalization)         \
  X(Softmax) X(ReduceAxesAttr) X(ReduceAxesInput) X(ArgReduce) X(TopK) X(Einsum)   \
  X(Hardmax) X(LRN) X(MeanVarianceNormalization)                              \
  X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss)                          \
  /* ConvertShape.cpp */                                                       \
  X(Constant) X(Shape) X(Size) X(ConstantOfShape) X(Range) X(Reshape)          \
  X(Flatten) X(Squeeze) X(Unsqueeze) X(Transpose) X(Concat) X(Slice) X(Split)  \
  X(Gather) X(ScatterElements) X(Pad) X(Expand) X(Tile) X(DepthToSpace)        \
  X(SpaceToDepth) X(Trilu) X(NonZero) X(OneHot) X(EyeLike) X(CumSum)          \
  /* ConvertControlFlow.cpp */                                                 \
  X(Loop) X(If) X(SequenceConstruct) X(SequenceEmpty) X(SequenceAt)            \
  X(SequenceInsert) X(SequenceErase) X(SequenceLength) X(SplitToSequence)      \
  X(ConcatFromSequence)

#define LOOM_DECLARE_CONVERSION(name) LogicalResult convert##name(NodeContext &);
LOOM_ONNX_CONVERSIONS(LOOM_DECLARE_CONVERSION)
#undef LOOM_DECLARE_CONVERSION

//===----------------------------------------------------------------------===//
// Shared helpers of the conversions
//===----------------------------------------------------------------------===//

/// Normalizes `axis` (negative counts from `rank`) into [0, rank), or
/// [0, rank] with `inclusive`.
FailureOr<int64_t> normalizeAxis(NodeContext &c, int64_t axis, int64_t rank,
                                 bool inclusive = false);
/// Normalizes, sorts and de-duplicates-checks a list of axes.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &c,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank);
/// Evaluates an elementwise op over host tensors with broadcasting; returns
/// null when it does not apply (unknown op, too large, division by zero).
HostTensorRef foldElementwise(NodeContext &c, ArrayRef<HostTensorRef> inputs);
/// Makes a host tensor of `shape` with values copied from `t` by index.
HostTensor gatherHost(const HostTensor &t, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> sourceIndex);
/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);
/// Imports the nodes of `graph` into `scope` (used for Loop and If bodies).
LogicalResult importSubgraph(Importer &imp, const onnx::GraphProto &graph,
                             Scope &scope);

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef path, StringRef bytes,
           const ImportOptions &options);

  /// Parses the bytes and builds the module; null after an error.
  OwningOpRef<ModuleOp> run();

  MLIRContext *ctx;
  OpBuilder builder;
  const ImportOptions &options;
  std::string path;     // the model file as named by the caller
  std::string modelDir; // its directory (external data base)
  std::string fileRef;  // how loom.weight names the model file itself
  StringRef bytes;
  onnx::ModelProto model;
  int opset = 0;
  int subgraphDepth = 0;
  int64_t importedNodes = 0;
  /// The graph whose nodes are being imported (for diagnostics).
  const onnx::GraphProto *currentGraph = nullptr;
  EmbeddedDataIndex embedded;
  Block *body = nullptr;
  /// Constants and weights are inserted after this op (at the top of the
  /// block while there is none); compute ops are appended at the end.
  Operation *lastConstant = nullptr;
  /// Constants already created, by value, so each is created once.
  llvm::DenseMap<Attribute, Value> constantCache;
  /// Weights already created, by stored tensor.
  llvm::DenseMap<const onnx::TensorProto *, Value> weightCache;
  /// Initializers used only as BatchNormalization mean/variance.
  llvm::DenseSet<StringRef> bufferNames;
  int64_t anonymousCounter = 0;

  Location fileLoc();
  Location nodeLoc(const onnx::NodeProto &node, int64_t index);

  /// Emits an error at the file location and fails.
  LogicalResult fileError(const Twine &msg);

  /// Imports one node into `scope`.
  LogicalResult importNode(const onnx::NodeProto &node, int64_t index,
                           Scope &scope);
  /// Inlines a call of a model-local function.
  LogicalResult inlineFunction(const onnx::NodeProto &node,
                               const onnx::FunctionProto &fn, Scope &scope,
                               Location loc);
  /// Node copies made while inlining functions (kept alive: stored tensors
  /// point into them).
  std::deque<onnx::NodeProto> inlinedNodes;
  /// Imports every node of `graph` in order.
  LogicalResult importNodes(const onnx::GraphProto &graph, Scope &scope,
                            bool isMain);

  /// Registers a stored tensor (initializer, Constant) as a lazy value.
  FailureOr<TensorRef> makeStored(const onnx::TensorProto &proto,
                                  StringRef name,
                                  std::optional<EmbeddedData> embeddedData,
                                  bool isBuffer, bool isInitializer,
                                  Location loc);
  /// The SSA value of a tensor, creating its constant or weight if needed.
  FailureOr<Value> materialize(TensorValue &t, Location loc);
  /// Known contents of a tensor (decoding a small stored tensor); with
  /// `forAttribute`, small model-state tensors are read too.
  HostTensorRef hostOf(TensorValue &t, Location loc, bool forAttribute = false);

  /// A `loom.constant` of `value`, created once, among the constants.
  Value getConstant(DenseElementsAttr value, Location loc);

private:
  LogicalResult parseModel();
  LogicalResult importMainGraph(ModuleOp module);
  LogicalResult declareInputs(const onnx::GraphProto &graph, Scope &scope,
                              SmallVectorImpl<Type> &argTypes,
                              SmallVectorImpl<std::string> &argNames);
  void findBufferInitializers(const onnx::GraphProto &graph);
  FailureOr<Value> createWeight(TensorValue &t, Location loc);
};

} // namespace mlir::loom::onnx_import

#endif // LOOM_LIB_TRANSLATE_ONNX_ONNXIMPORTER_H
