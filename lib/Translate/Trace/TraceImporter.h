//===- TraceImporter.h - internals of the loom-trace importer ---*- C++ -*-===//
//
// Shared by the files of lib/Translate/Trace: the per-node context that op
// conversions read operands and attributes from and build loom ops through,
// scalar operands, dtype helpers and the conversion table.
//
// A loom-trace document (docs/trace-format.md) is a flat, statically shaped
// graph whose nodes are in topological order, so the import is one pass: every
// node becomes a few loom ops appended to `@main`, and its declared output
// types are checked against what was built. Conversions never crash on bad
// input: every accessor checks the JSON type it reads, and every op is built
// only after its result types were inferred successfully (the generated
// inferring builders abort on failure), then verified on the spot so that
// errors name the node that caused them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TRANSLATE_TRACE_TRACEIMPORTER_H
#define LOOM_LIB_TRANSLATE_TRACE_TRACEIMPORTER_H

#include "loom/Translate/Import.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mlir::loom::trace_import {

using Json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Limits (guards against absurd or hostile documents)
//===----------------------------------------------------------------------===//

/// Largest rank of any tensor.
constexpr int64_t kMaxRank = 64;
/// Largest extent of one dim, and bound on integer shape-like attributes.
constexpr int64_t kMaxDim = int64_t(1) << 40;
/// Largest element count of one tensor (keeps byte sizes within int64).
constexpr int64_t kMaxElements = int64_t(1) << 52;
/// Largest index table (iota) a conversion materializes inline.
constexpr int64_t kMaxIotaElements = int64_t(1) << 20;
/// Bound on window attributes (kernel, stride, dilation, padding) of conv and
/// pooling, so that the dialect's window arithmetic cannot overflow.
constexpr int64_t kMaxWindow = int64_t(1) << 20;
/// Largest integer exponent that `pow` on integers expands into multiplies.
constexpr int64_t kMaxIntegerPow = 64;

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

/// The element type of a loom-trace dtype string, or null when unknown.
Type parseDType(MLIRContext *ctx, llvm::StringRef dtype);
/// The loom-trace spelling of an element type ("f32", "u8", ...).
std::string dtypeName(Type elem);
/// Bytes per stored element (i1 is stored as one byte).
int64_t dtypeBytes(Type elem);
/// "[2x16x64]" for messages.
std::string shapeString(llvm::ArrayRef<int64_t> shape);
/// "[2x16x64] f32" for messages.
std::string typeString(Type type);
/// Element count with overflow detection; nullopt past kMaxElements.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// Scalars and operands
//===----------------------------------------------------------------------===//

/// A scalar operand or attribute value: JSON true/false, an integer, a float,
/// or one of the strings "inf", "-inf", "nan".
struct Scalar {
  enum class Kind { Bool, Int, Float };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;

  static Scalar ofBool(bool v) { return {Kind::Bool, v, v, double(v)}; }
  static Scalar ofInt(int64_t v) { return {Kind::Int, v != 0, v, double(v)}; }
  static Scalar ofFloat(double v) { return {Kind::Float, v != 0, 0, v}; }
  double asDouble() const {
    return kind == Kind::Float ? f : kind == Kind::Int ? double(i) : double(b);
  }
  std::string str() const;
};

/// Reads a JSON scalar (number, bool, "inf"/"-inf"/"nan"); nullopt otherwise.
std::optional<Scalar> readScalar(const Json &j);

/// One position of a node's `inputs`: a tensor, a scalar, or absent
/// (`null` in the list, or past its end).
struct Operand {
  Value tensor;
  std::optional<Scalar> scalar;
  std::string name; // the tensor's name, for messages
  bool isTensor() const { return bool(tensor); }
  bool isScalar() const { return scalar.has_value(); }
  bool isAbsent() const { return !tensor && !scalar; }
};

/// A declared tensor: an input, a stored tensor, or a node output.
struct TensorDecl {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  Type elem;
  LocationAttr loc; // where it is declared
  RankedTensorType type() const { return RankedTensorType::get(shape, elem); }
};

//===----------------------------------------------------------------------===//
// The per-node conversion context
//===----------------------------------------------------------------------===//

/// What a conversion sees of one node, and the helpers it builds with. Every
/// builder helper returns a null Value after emitting a diagnostic at the
/// node's location; conversions propagate that as failure().
class NodeContext {
public:
  NodeContext(OpBuilder &builder, Location loc, llvm::StringRef name,
              llvm::StringRef op, const Json &attrs,
              llvm::SmallVector<Operand> operands,
              llvm::SmallVector<TensorDecl> outputs,
              llvm::DenseMap<Attribute, Value> &constantCache,
              llvm::DenseMap<Value, Value> &transposeCache)
      : b(builder), loc(loc), name(name), op(op), attrs(attrs),
        operands(std::move(operands)), outputs(std::move(outputs)),
        constantCache(constantCache), transposeCache(transposeCache) {}

  OpBuilder &b;
  Location loc;
  llvm::StringRef name, op;
  const Json &attrs;
  llvm::SmallVector<Operand> operands;
  llvm::SmallVector<TensorDecl> outputs;
  /// What the conversion produced, one value per declared output.
  llvm::SmallVector<Value> results;

  MLIRContext *getContext() const { return b.getContext(); }

  // ---- diagnostics
  /// Emits "node 'NAME' (OP): MSG" at the node's location.
  InFlightDiagnostic emitError();
  LogicalResult fail(const llvm::Twine &msg);
  /// Same, returning a null Value.
  Value failValue(const llvm::Twine &msg);

  // ---- operands
  /// Fails unless the node has between `min` and `max` inputs.
  LogicalResult expectOperands(unsigned min, unsigned max);
  const Operand &operand(unsigned i) const;
  /// A required tensor operand.
  Value tensor(unsigned i, llvm::StringRef what);
  /// An optional tensor operand: null when absent (not an error); fails when
  /// a scalar is given.
  FailureOr<Value> optionalTensor(unsigned i, llvm::StringRef what);
  /// A tensor operand, or a scalar operand materialized as a rank-0 constant
  /// of element type `elem`.
  Value tensorOrScalar(unsigned i, Type elem, llvm::StringRef what);

  // ---- attributes (every accessor checks presence and JSON type)
  FailureOr<int64_t> intAttr(llvm::StringRef key, int64_t min = -kMaxDim,
                             int64_t max = kMaxDim);
  FailureOr<bool> boolAttr(llvm::StringRef key);
  FailureOr<double> floatAttr(llvm::StringRef key);
  /// A float attribute that may be JSON null (absent bound).
  FailureOr<std::optional<double>> optionalFloatAttr(llvm::StringRef key);
  FailureOr<std::string> stringAttr(llvm::StringRef key);
  FailureOr<Scalar> scalarAttr(llvm::StringRef key);
  /// A list of integers; `size` fixes its length when given.
  FailureOr<llvm::SmallVector<int64_t>>
  intListAttr(llvm::StringRef key, std::optional<size_t> size = std::nullopt,
              int64_t min = -kMaxDim, int64_t max = kMaxDim);
  /// A dim attribute normalized into [0, rank).
  FailureOr<int64_t> dimAttr(llvm::StringRef key, int64_t rank);

  // ---- declared outputs
  Type outElem(unsigned i = 0) const { return outputs[i].elem; }
  RankedTensorType outType(unsigned i = 0) const { return outputs[i].type(); }
  /// Sets the single result.
  LogicalResult result(Value v) {
    if (!v)
      return failure();
    results.push_back(v);
    return success();
  }

  // ---- building (each returns null after a diagnostic)
  /// Builds an op whose result types are inferred; checks inference first.
  template <typename OpTy>
  Operation *buildInferred(ValueRange operands,
                           llvm::ArrayRef<NamedAttribute> attrs = {});
  template <typename OpTy>
  Value inferred(ValueRange operands,
                 llvm::ArrayRef<NamedAttribute> attrs = {}) {
    Operation *op = buildInferred<OpTy>(operands, attrs);
    return op ? op->getResult(0) : Value();
  }
  /// Builds an op with an explicit result type.
  template <typename OpTy>
  Value typed(Type result, ValueRange operands,
              llvm::ArrayRef<NamedAttribute> attrs = {});

  Value constant(DenseElementsAttr value);
  /// A rank-0 constant of `elem` holding `s`; fails when `s` does not fit.
  Value scalarConstant(const Scalar &s, Type elem);
  /// A splat constant of `type` holding `s`.
  Value splatConstant(const Scalar &s, RankedTensorType type);
  /// Converts `s` to an attribute of element type `elem` (exact or error).
  FailureOr<TypedAttr> scalarAttrOf(const Scalar &s, Type elem);
  /// A rank-`rank` i64 constant holding 0..n-1 * step along dim `dim` and
  /// size 1 elsewhere.
  Value iota(int64_t n, int64_t rank, int64_t dim, Type elem, int64_t step = 1);

  Value reshape(Value v, llvm::ArrayRef<int64_t> shape);
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm);
  /// Transpose of a rank-2 weight, built once per weight value.
  Value transposedWeight(Value w);
  Value expand(Value v, llvm::ArrayRef<int64_t> shape);
  Value cast(Value v, Type elem);
  Value slice(Value v, int64_t dim, int64_t start, int64_t size,
              int64_t step = 1);
  Value reduce(ReduceKind kind, Value v, llvm::ArrayRef<int64_t> axes,
               bool keepDims);
  Value unary(UnaryKind kind, Value v);
  Value binary(BinaryKind kind, Value lhs, Value rhs);
  Value compare(ComparePredicate pred, Value lhs, Value rhs);
  Value where(Value cond, Value onTrue, Value onFalse);
  Value matmul(Value lhs, Value rhs);
  Value concat(ValueRange inputs, int64_t axis);

  NamedAttribute namedAttr(llvm::StringRef name, Attribute value) {
    return b.getNamedAttr(name, value);
  }
  NamedAttribute i64Attr(llvm::StringRef name, int64_t v) {
    return b.getNamedAttr(name, b.getI64IntegerAttr(v));
  }
  NamedAttribute f64Attr(llvm::StringRef name, double v) {
    return b.getNamedAttr(name, b.getF64FloatAttr(v));
  }
  NamedAttribute arrayAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> v) {
    return b.getNamedAttr(name, b.getDenseI64ArrayAttr(v));
  }

private:
  const Json *findAttr(llvm::StringRef key);
  Operation *finish(Operation *op);

  llvm::DenseMap<Attribute, Value> &constantCache;
  llvm::DenseMap<Value, Value> &transposeCache;
};

/// Shape of `v` (a ranked tensor).
inline llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
inline Type elemOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
inline int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

template <typename OpTy>
Operation *NodeContext::buildInferred(ValueRange operands,
                                      llvm::ArrayRef<NamedAttribute> attrs) {
  llvm::SmallVector<Type> types;
  DictionaryAttr dict = DictionaryAttr::get(getContext(), attrs);
  // The generated inferring builders abort when inference fails; infer first
  // so a bad node becomes a diagnostic (emitted by inference at `loc`).
  if (failed(OpTy::inferReturnTypes(getContext(), loc, operands, dict,
                                    OpaqueProperties(nullptr), RegionRange(),
                                    types)))
    return nullptr;
  return finish(OpTy::create(b, loc, types, operands, attrs).getOperation());
}

template <typename OpTy>
Value NodeContext::typed(Type result, ValueRange operands,
                         llvm::ArrayRef<NamedAttribute> attrs) {
  Operation *op = finish(
      OpTy::create(b, loc, TypeRange{result}, operands, attrs).getOperation());
  return op ? op->getResult(0) : Value();
}

//===----------------------------------------------------------------------===//
// The conversion table
//===----------------------------------------------------------------------===//

/// Converts one node: reads `cx.operands`/`cx.attrs`, builds loom ops and
/// appends one value per declared output to `cx.results`.
using ConvertFn = LogicalResult (*)(NodeContext &cx);
using ConvertTable = llvm::StringMap<ConvertFn>;

void addContractionConversions(ConvertTable &table);
void addElementwiseConversions(ConvertTable &table);
void addShapeConversions(ConvertTable &table);
void addNormPoolConversions(ConvertTable &table);

/// Every vocabulary op and its conversion (built once).
const ConvertTable &getConvertTable();

} // namespace mlir::loom::trace_import

#endif // LOOM_LIB_TRANSLATE_TRACE_TRACEIMPORTER_H
