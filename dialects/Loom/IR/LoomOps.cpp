//===- LoomOps.cpp - loom op verification and type inference --------------===//
//
// Result type inference doubles as verification: InferTypeOpAdaptor checks
// that the declared result types equal the inferred ones, so every shape rule
// lives in exactly one place. Diagnostics name the op, as emitOpError would.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> mlir::loom::broadcastShapes(
    ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    out[i] = l == 1 ? r : l;
  }
  return out;
}

SmallVector<int64_t> mlir::loom::poolWindowCounts(PoolOp op) {
  auto xt = cast<RankedTensorType>(op.getInput().getType());
  auto yt = cast<RankedTensorType>(op.getResult().getType());
  int64_t spatial = xt.getRank() - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dils = op.getDilations(), pads = op.getPadding();
  bool includePad = op.getCountIncludePad();
  SmallVector<SmallVector<int64_t>> counts(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t n = xt.getDimSize(2 + i);
    int64_t lo = includePad ? -pads[i] : 0;
    int64_t hi = includePad ? n + pads[spatial + i] : n;
    for (int64_t o = 0; o < yt.getDimSize(2 + i); ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < kernel[i]; ++k) {
        int64_t t = o * strides[i] + k * dils[i] - pads[i];
        count += t >= lo && t < hi;
      }
      counts[i].push_back(count);
    }
  }
  // A window's count is the product of its dims'.
  ArrayRef<int64_t> out = yt.getShape().drop_front(2);
  SmallVector<int64_t> perWindow;
  for (int64_t flat = 0, e = ShapedType::getNumElements(out); flat < e; ++flat) {
    int64_t rest = flat, count = 1;
    for (int64_t i = spatial - 1; i >= 0; --i) {
      count *= counts[i][rest % out[i]];
      rest /= out[i];
    }
    perWindow.push_back(count);
  }
  return perWindow;
}

int64_t mlir::loom::windowOutputSize(int64_t in, int64_t kernel,
                                     int64_t stride, int64_t padBegin,
                                     int64_t padEnd, int64_t dilation,
                                     bool ceilMode) {
  int64_t effective = dilation * (kernel - 1) + 1;
  int64_t span = in + padBegin + padEnd - effective;
  if (span < 0 || stride <= 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // With ceil mode the last window must start inside the (begin-padded) input.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

namespace {
/// Emits "'loom.<op>' op <message>" at `loc` (when given) and fails.
struct OpError {
  std::optional<Location> loc;
  StringRef opName;
  LogicalResult operator()(const Twine &msg) const {
    if (loc)
      mlir::emitError(*loc) << "'" << opName << "' op " << msg;
    return failure();
  }
};
} // namespace

/// The custom-format parsers infer result types before the verifier has
/// checked that required attributes exist; check them here first.
static LogicalResult requireAttrs(DictionaryAttr attrs,
                                  ArrayRef<StringRef> names,
                                  const OpError &err) {
  for (StringRef name : names)
    if (!attrs || !attrs.get(name))
      return err("requires attribute '" + name + "'");
  return success();
}

static RankedTensorType rankedOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

static bool isFloatKind(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::neg:
  case UnaryKind::abs:
  case UnaryKind::sign:
  case UnaryKind::identity:
  case UnaryKind::logical_not:
    return false;
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getOffset() < 0)
    return emitOpError("byte offset must be non-negative, got ") << getOffset();
  // Only optimizer state may start from zeros instead of a file.
  if (getFile().empty() && getRole() != WeightRole::state)
    return emitOpError("names no file for weight '") << getName() << "'";
  auto type = getResult().getType();
  if (!type.getElementType().isIntOrFloat())
    return emitOpError("weight element type must be an integer or float");
  if (std::optional<Type> stored = getFileType()) {
    auto narrow = dyn_cast<FloatType>(*stored);
    auto wide = dyn_cast<FloatType>(type.getElementType());
    if (getFile().empty() || !narrow || !wide ||
        narrow.getWidth() >= wide.getWidth())
      return emitOpError("weight '")
             << getName() << "' reads its file as " << *stored << " into "
             << type.getElementType()
             << "; `as` names a float type narrower than the result's, of "
                "bytes in a file";
  }
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult FetchOp::verify() {
  if (getChunk() < 0)
    return emitOpError("chunk must be non-negative, got ") << getChunk();
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("offset must be non-negative, got ") << *offset;
  return success();
}

LogicalResult SpillOp::verify() {
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("offset must be non-negative, got ") << *offset;
  // (Sharding annotations of the copy are no reads.)
  SmallVector<Value> copies = {getResult()};
  while (!copies.empty())
    for (Operation *user : copies.pop_back_val().getUsers()) {
      if (auto annotation = dyn_cast<shard::ShardOp>(user)) {
        copies.push_back(annotation.getResult());
        continue;
      }
      if (!isa<ReloadOp>(user) && !user->hasAttr(kOnHostAttr))
        return emitOpError("host copy is read by '")
               << user->getName()
               << "'; only loom.reload and host ops (loom.on_host) read a spilled value";
    }
  return success();
}

StringRef mlir::loom::placedTier(Value v) {
  DictionaryAttr attrs;
  if (auto w = v.getDefiningOp<WeightOp>())
    attrs = w->getAttrOfType<DictionaryAttr>(kPlacementAttr);
  else if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      attrs = func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(), "loom.weight");
  auto tier = attrs ? attrs.getAs<StringAttr>("tier") : nullptr;
  return tier ? tier.getValue() : "device";
}

LogicalResult ReloadOp::verify() {
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("offset must be non-negative, got ") << *offset;
  // A spilled value, a host op's result, or a weight placement keeps off
  // the device (the host copy a delayed update brings up as the step found
  // it).
  Value spilled = lookThroughShards(getSpilled());
  Operation *source = spilled.getDefiningOp();
  if (!isa_and_nonnull<SpillOp>(source) && !(source && source->hasAttr(kOnHostAttr)) &&
      placedTier(spilled) == "device")
    return emitOpError("reloads a value that neither a loom.spill nor a host op "
                       "(loom.on_host) produced, nor a weight placed off the device");
  return success();
}

FetchOp ReleaseOp::getFetch() {
  Value v = getFetched();
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v.getDefiningOp<FetchOp>();
}

LogicalResult ReleaseOp::verify() {
  if (!getFetch())
    return emitOpError("releases a value no loom.fetch produced");
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult UnaryOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto type = rankedOf(adaptor.getInput());
  UnaryKind kind = adaptor.getKind();
  Type elem = type.getElementType();
  if (kind == UnaryKind::logical_not && !elem.isInteger(1))
    return err("logical_not needs an i1 tensor, got " + Twine(elem.getAbstractType().getName()));
  if (isFloatKind(kind) && !isa<FloatType>(elem))
    return err(stringifyUnaryKind(kind) + " needs a float tensor");
  results.push_back(type);
  return success();
}

/// Broadcast result type of elementwise ops; all value operands share `elem`.
static LogicalResult inferBroadcast(ArrayRef<Value> operands, Type resultElem,
                                    const OpError &err,
                                    SmallVectorImpl<Type> &results) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    auto s = broadcastShapes(shape, rankedOf(v).getShape());
    if (failed(s))
      return err("operand shapes " + shapeStr(shape) + " and " +
                 shapeStr(rankedOf(v).getShape()) + " do not broadcast");
    shape = *s;
  }
  results.push_back(RankedTensorType::get(shape, resultElem));
  return success();
}

LogicalResult BinaryOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  Type l = rankedOf(adaptor.getLhs()).getElementType();
  Type r = rankedOf(adaptor.getRhs()).getElementType();
  if (l != r)
    return err("operand element types differ");
  BinaryKind kind = adaptor.getKind();
  bool logical = kind == BinaryKind::logical_and ||
                 kind == BinaryKind::logical_or ||
                 kind == BinaryKind::logical_xor;
  if (logical && !l.isInteger(1))
    return err(stringifyBinaryKind(kind) + " needs i1 operands");
  if (kind == BinaryKind::pow && !isa<FloatType>(l))
    return err("pow needs float operands");
  return inferBroadcast({adaptor.getLhs(), adaptor.getRhs()}, l, err, results);
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (rankedOf(adaptor.getLhs()).getElementType() !=
      rankedOf(adaptor.getRhs()).getElementType())
    return err("operand element types differ");
  return inferBroadcast({adaptor.getLhs(), adaptor.getRhs()},
                        IntegerType::get(ctx, 1), err, results);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  Type t = rankedOf(adaptor.getOnTrue()).getElementType();
  if (t != rankedOf(adaptor.getOnFalse()).getElementType())
    return err("on_true and on_false element types differ");
  return inferBroadcast({adaptor.getCondition(), adaptor.getOnTrue(),
                         adaptor.getOnFalse()},
                        t, err, results);
}

LogicalResult ClampOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto min = adaptor.getMin(), max = adaptor.getMax();
  if (min && max && min->convertToDouble() > max->convertToDouble())
    return err(llvm::formatv("min {0} exceeds max {1}",
                             min->convertToDouble(), max->convertToDouble())
                   .str());
  results.push_back(rankedOf(adaptor.getInput()));
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("changes the shape ")
           << shapeStr(getInput().getType().getShape()) << " -> "
           << shapeStr(getResult().getType().getShape())
           << "; a cast only changes the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto lt = rankedOf(adaptor.getLhs()), rt = rankedOf(adaptor.getRhs());
  if (lt.getRank() < 2 || rt.getRank() < 2)
    return err("operands must have rank >= 2, got " + Twine(lt.getRank()) +
               " and " + Twine(rt.getRank()));
  if (lt.getElementType() != rt.getElementType())
    return err("operand element types differ");
  ArrayRef<int64_t> l = lt.getShape(), r = rt.getShape();
  int64_t k = l.back(), k2 = r[r.size() - 2];
  if (k != k2)
    return err("contracting dimensions differ: lhs " + shapeStr(l) + " has " +
               Twine(k) + ", rhs " + shapeStr(r) + " has " + Twine(k2));
  auto batch = broadcastShapes(l.drop_back(2), r.drop_back(2));
  if (failed(batch))
    return err("batch dimensions of " + shapeStr(l) + " and " + shapeStr(r) +
               " do not broadcast");
  SmallVector<int64_t> shape = *batch;
  shape.push_back(l[l.size() - 2]);
  shape.push_back(r.back());
  results.push_back(RankedTensorType::get(shape, lt.getElementType()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"strides", "padding", "dilations", "groups"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput()), wt = rankedOf(adaptor.getWeight());
  int64_t rank = it.getRank(), spatial = rank - 2;
  if (rank < 3)
    return err("input must be [N, C, spatial...], got rank " + Twine(rank));
  if (wt.getRank() != rank)
    return err("weight rank " + Twine(wt.getRank()) + " differs from input rank " +
               Twine(rank));
  ArrayRef<int64_t> strides = adaptor.getStrides(), dil = adaptor.getDilations(),
                    pads = adaptor.getPadding();
  if ((int64_t)strides.size() != spatial || (int64_t)dil.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return err("expects " + Twine(spatial) + " strides and dilations and " +
               Twine(2 * spatial) + " pads");
  int64_t groups = adaptor.getGroups();
  int64_t c = it.getDimSize(1), f = wt.getDimSize(0);
  if (groups <= 0 || c % groups != 0 || f % groups != 0)
    return err("groups " + Twine(groups) + " must divide input channels " +
               Twine(c) + " and output channels " + Twine(f));
  if (wt.getDimSize(1) * groups != c)
    return err("weight has " + Twine(wt.getDimSize(1)) +
               " input channels per group, expected " + Twine(c / groups));
  if (Value bias = adaptor.getBias()) {
    auto bt = rankedOf(bias);
    if (bt.getRank() != 1 || bt.getDimSize(0) != f)
      return err("bias must be [" + Twine(f) + "]");
  }
  SmallVector<int64_t> shape = {it.getDimSize(0), f};
  for (int64_t i = 0; i < spatial; ++i) {
    if (strides[i] <= 0 || dil[i] <= 0)
      return err("strides and dilations must be positive");
    int64_t o = windowOutputSize(it.getDimSize(2 + i), wt.getDimSize(2 + i),
                                 strides[i], pads[i], pads[spatial + i], dil[i],
                                 false);
    if (o <= 0)
      return err("kernel does not fit the padded input in spatial dim " +
                 Twine(i));
    shape.push_back(o);
  }
  results.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto q = rankedOf(adaptor.getQuery()), k = rankedOf(adaptor.getKey()),
       v = rankedOf(adaptor.getValue());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return err("query, key and value must be [batch, heads, seq, dim]");
  if (q.getDimSize(0) != k.getDimSize(0) || k.getDimSize(0) != v.getDimSize(0))
    return err("batch sizes differ");
  if (k.getDimSize(1) != v.getDimSize(1) || k.getDimSize(2) != v.getDimSize(2))
    return err("key and value differ in heads or sequence length");
  if (k.getDimSize(1) == 0 || q.getDimSize(1) % k.getDimSize(1) != 0)
    return err("query heads " + Twine(q.getDimSize(1)) +
               " are not a multiple of key/value heads " +
               Twine(k.getDimSize(1)));
  if (q.getDimSize(3) != k.getDimSize(3))
    return err("query and key head dims differ");
  if (Value mask = adaptor.getMask()) {
    SmallVector<int64_t> scores = {q.getDimSize(0), q.getDimSize(1),
                                   q.getDimSize(2), k.getDimSize(2)};
    auto b = broadcastShapes(scores, rankedOf(mask).getShape());
    if (failed(b) || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(scores))
      return err("mask " + shapeStr(rankedOf(mask).getShape()) +
                 " does not broadcast to the scores " + shapeStr(scores));
  }
  results.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling, normalization, softmax, reductions
//===----------------------------------------------------------------------===//

LogicalResult PoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"kernel", "strides", "padding", "dilations"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  int64_t spatial = it.getRank() - 2;
  ArrayRef<int64_t> kernel = adaptor.getKernel(), strides = adaptor.getStrides(),
                    pads = adaptor.getPadding(), dil = adaptor.getDilations();
  if (spatial < 1 || (int64_t)kernel.size() != spatial ||
      (int64_t)strides.size() != spatial || (int64_t)dil.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return err("expects [N, C, spatial...] input with one kernel size, stride "
               "and dilation per spatial dim and two pads per spatial dim");
  SmallVector<int64_t> shape = {it.getDimSize(0), it.getDimSize(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dil[i] <= 0)
      return err("kernel, strides and dilations must be positive");
    if (pads[i] >= kernel[i] || pads[spatial + i] >= kernel[i])
      return err("padding must be smaller than the kernel");
    int64_t o = windowOutputSize(it.getDimSize(2 + i), kernel[i], strides[i],
                                 pads[i], pads[spatial + i], dil[i],
                                 adaptor.getCeilMode());
    if (o <= 0)
      return err("window does not fit the padded input in spatial dim " +
                 Twine(i));
    shape.push_back(o);
  }
  results.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

/// Scale/bias operands of a norm must have the normalized trailing shape.
static LogicalResult checkNormParam(Value param, StringRef what,
                                    ArrayRef<int64_t> normalized,
                                    const OpError &err) {
  if (!param)
    return success();
  ArrayRef<int64_t> shape = rankedOf(param).getShape();
  if (shape != normalized)
    return err(what + " shape " + shapeStr(shape) +
               " must equal the normalized shape " + shapeStr(normalized));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis", "epsilon"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  if (adaptor.getAxis() < 0 || adaptor.getAxis() >= it.getRank())
    return err("axis " + Twine(adaptor.getAxis()) + " out of range");
  if (adaptor.getEpsilon().convertToDouble() < 0)
    return err("epsilon must be non-negative");
  ArrayRef<int64_t> normalized = it.getShape().drop_front(adaptor.getAxis());
  if (failed(checkNormParam(adaptor.getScale(), "scale", normalized, err)) ||
      failed(checkNormParam(adaptor.getBias(), "bias", normalized, err)))
    return failure();
  results.push_back(it);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis", "epsilon"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  if (adaptor.getAxis() < 0 || adaptor.getAxis() >= it.getRank())
    return err("axis " + Twine(adaptor.getAxis()) + " out of range");
  if (adaptor.getEpsilon().convertToDouble() < 0)
    return err("epsilon must be non-negative");
  if (failed(checkNormParam(adaptor.getScale(), "scale",
                            it.getShape().drop_front(adaptor.getAxis()), err)))
    return failure();
  results.push_back(it);
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"epsilon"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  if (it.getRank() < 2)
    return err("input must be [N, C, ...]");
  int64_t c = it.getDimSize(1);
  // Named arrays: a braced ValueRange/ArrayRef temporary inside the range-for
  // initializer would dangle (its backing array dies before the loop runs).
  Value params[] = {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                    adaptor.getVariance()};
  StringRef names[] = {"scale", "bias", "mean", "variance"};
  for (auto [v, name] : llvm::zip(params, names)) {
    auto t = rankedOf(v);
    if (t.getRank() != 1 || t.getDimSize(0) != c)
      return err(name + " must be [" + Twine(c) + "], the channel count");
  }
  results.push_back(it);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  if (adaptor.getAxis() < 0 || adaptor.getAxis() >= it.getRank())
    return err("axis " + Twine(adaptor.getAxis()) + " out of range for rank " +
               Twine(it.getRank()));
  results.push_back(it);
  return success();
}

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axes", "keep_dims"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= it.getRank())
      return err("axis " + Twine(axes[i]) + " out of range for rank " +
                 Twine(it.getRank()));
    if (i > 0 && axes[i] <= axes[i - 1])
      return err("axes must be sorted and unique");
  }
  ReduceKind kind = adaptor.getKind();
  bool arg = kind == ReduceKind::argmax || kind == ReduceKind::argmin;
  if (arg && axes.size() != 1)
    return err(stringifyReduceKind(kind) + " reduces exactly one axis");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < it.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(it.getDimSize(d));
    else if (adaptor.getKeepDims())
      shape.push_back(1);
  }
  Type elem = arg ? IntegerType::get(ctx, 64) : it.getElementType();
  results.push_back(RankedTensorType::get(shape, elem));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("changes the element count: ")
           << shapeStr(in.getShape()) << " has " << in.getNumElements()
           << ", " << shapeStr(out.getShape()) << " has "
           << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getResult().getType());
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"permutation"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if ((int64_t)perm.size() != it.getRank())
    return err("permutation has " + Twine(perm.size()) +
               " entries for rank " + Twine(it.getRank()));
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= it.getRank() || seen[p])
      return err("permutation is not a permutation of [0, rank)");
    seen[p] = true;
    shape.push_back(it.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis"}, err)))
    return failure();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return err("needs at least one input");
  auto first = rankedOf(inputs[0]);
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return err("axis " + Twine(axis) + " out of range");
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : inputs.drop_front()) {
    auto t = rankedOf(v);
    if (t.getElementType() != first.getElementType())
      return err("input element types differ");
    if (t.getRank() != first.getRank())
      return err("input ranks differ");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != shape[d])
        return err("inputs differ in dim " + Twine(d) + " (" +
                   Twine(t.getDimSize(d)) + " vs " + Twine(shape[d]) + ")");
    shape[axis] += t.getDimSize(axis);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"offsets", "sizes", "strides"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  ArrayRef<int64_t> offs = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = it.getRank();
  if ((int64_t)offs.size() != rank || (int64_t)sizes.size() != rank ||
      (int64_t)strides.size() != rank)
    return err("offsets, sizes and strides need one entry per dim (" +
               Twine(rank) + ")");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = it.getDimSize(d);
    if (strides[d] == 0 || sizes[d] < 0)
      return err("dim " + Twine(d) + ": stride must be non-zero and size "
                 "non-negative");
    if (sizes[d] == 0)
      continue;
    int64_t last = offs[d] + (sizes[d] - 1) * strides[d];
    if (offs[d] < 0 || offs[d] >= n || last < 0 || last >= n)
      return err("dim " + Twine(d) + ": slice [" + Twine(offs[d]) + " .. " +
                 Twine(last) + "] leaves the extent " + Twine(n));
  }
  results.push_back(RankedTensorType::get(sizes, it.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis"}, err)))
    return failure();
  auto dt = rankedOf(adaptor.getData());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= dt.getRank())
    return err("axis " + Twine(axis) + " out of range for rank " +
               Twine(dt.getRank()));
  SmallVector<int64_t> shape(dt.getShape().take_front(axis));
  llvm::append_range(shape, rankedOf(adaptor.getIndices()).getShape());
  llvm::append_range(shape, dt.getShape().drop_front(axis + 1));
  results.push_back(RankedTensorType::get(shape, dt.getElementType()));
  return success();
}

LogicalResult ScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"axis"}, err)))
    return failure();
  auto dt = rankedOf(adaptor.getData()), it = rankedOf(adaptor.getIndices()),
       ut = rankedOf(adaptor.getUpdates());
  if (it.getShape() != ut.getShape())
    return err("indices and updates shapes differ");
  if (it.getRank() != dt.getRank())
    return err("indices rank must equal data rank");
  if (ut.getElementType() != dt.getElementType())
    return err("updates and data element types differ");
  if (adaptor.getAxis() < 0 || adaptor.getAxis() >= dt.getRank())
    return err("axis out of range");
  results.push_back(dt);
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"padding"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  ArrayRef<int64_t> pads = adaptor.getPadding();
  int64_t rank = it.getRank();
  if ((int64_t)pads.size() != 2 * rank)
    return err("padding needs " + Twine(2 * rank) + " entries");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = it.getDimSize(d) + pads[d] + pads[rank + d];
    if (n < 0)
      return err("padding crops dim " + Twine(d) + " below zero");
    if (adaptor.getMode() == PadMode::reflect &&
        (pads[d] >= it.getDimSize(d) || pads[rank + d] >= it.getDimSize(d)))
      return err("reflect padding must be smaller than the dim");
    shape.push_back(n);
  }
  results.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

LogicalResult ExpandOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type");
  auto b = broadcastShapes(in.getShape(), out.getShape());
  if (failed(b) || ArrayRef<int64_t>(*b) != out.getShape())
    return emitOpError("cannot broadcast ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings, top-k and MoE routing
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto tt = rankedOf(adaptor.getTable());
  if (tt.getRank() != 2)
    return err("table must be [vocab, hidden]");
  SmallVector<int64_t> shape(rankedOf(adaptor.getIndices()).getShape());
  shape.push_back(tt.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, tt.getElementType()));
  return success();
}

LogicalResult EmbeddingOp::verify() {
  if (!getRowOffset() != !getRows())
    return emitOpError("takes a row offset and `rows` together");
  if (getRows() && *getRows() < getTable().getType().getDimSize(0))
    return emitOpError("holds ")
           << getTable().getType().getDimSize(0)
           << " rows of a table said to have only " << *getRows();
  return success();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"k", "axis"}, err)))
    return failure();
  auto it = rankedOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  if (axis < 0 || axis >= it.getRank())
    return err("axis " + Twine(axis) + " out of range");
  if (k < 0 || k > it.getDimSize(axis))
    return err("k = " + Twine(k) + " exceeds the axis extent " +
               Twine(it.getDimSize(axis)));
  SmallVector<int64_t> shape(it.getShape());
  shape[axis] = k;
  results.push_back(RankedTensorType::get(shape, it.getElementType()));
  results.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult MoeDispatchOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  if (failed(requireAttrs(adaptor.getAttributes(), {"num_experts", "capacity"}, err)))
    return failure();
  auto tt = rankedOf(adaptor.getTokens()), et = rankedOf(adaptor.getExperts());
  // Ungrouped [T, H] or grouped [G, S, H]: each of G groups routes its own S
  // tokens into its own capacity slots, so groups are independent.
  if (!((tt.getRank() == 2 && et.getRank() == 2) ||
        (tt.getRank() == 3 && et.getRank() == 3)))
    return err("tokens must be [T, H] with experts [T, K], or grouped "
               "[G, S, H] with experts [G, S, K]");
  int64_t grouped = tt.getRank() - 2;
  for (int64_t d = 0; d <= grouped; ++d)
    if (tt.getDimSize(d) != et.getDimSize(d))
      return err(Twine("tokens and experts differ in ") +
                 (d < grouped ? "group" : "token") + " count");
  if (adaptor.getNumExperts() <= 0 || adaptor.getCapacity() <= 0)
    return err("num_experts and capacity must be positive");
  SmallVector<int64_t> shape;
  if (grouped)
    shape.push_back(tt.getDimSize(0));
  llvm::append_values(shape, adaptor.getNumExperts(), adaptor.getCapacity(),
                      tt.getShape().back());
  results.push_back(RankedTensorType::get(shape, tt.getElementType()));
  return success();
}

LogicalResult MoeCombineOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  OpError err{loc, getOperationName()};
  // Attribute kinds first: inference reads them as their declared types.
  if (loc && failed(adaptor.verify(*loc)))
    return failure();
  auto ot = rankedOf(adaptor.getExpertOutputs()),
       et = rankedOf(adaptor.getExperts()), gt = rankedOf(adaptor.getGates());
  if (!((ot.getRank() == 3 && et.getRank() == 2) ||
        (ot.getRank() == 4 && et.getRank() == 3)))
    return err("expert_outputs must be [E, C, H] with experts [T, K], or "
               "grouped [G, E, C, H] with experts [G, S, K]");
  if (gt.getShape() != et.getShape())
    return err("gates and experts shapes differ");
  bool grouped = ot.getRank() == 4;
  if (grouped && ot.getDimSize(0) != et.getDimSize(0))
    return err("expert_outputs and experts differ in group count");
  SmallVector<int64_t> shape(et.getShape().drop_back());
  shape.push_back(ot.getShape().back());
  results.push_back(RankedTensorType::get(shape, ot.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Folders and canonicalization
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return {};
  return getInput();
}

namespace {
/// Whether composing `op` with its producer `inner` (op reading inner's
/// input instead) keeps a static memory plan's buffers: none of the three
/// values is placed (hasPlannedBuffer).
bool composesUnplanned(Operation *op, Operation *inner) {
  return !hasPlannedBuffer(op->getResult(0)) &&
         !hasPlannedBuffer(inner->getResult(0)) &&
         !hasPlannedBuffer(inner->getOperand(0));
}

/// transpose(transpose(x, p), q) -> transpose(x, p o q).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner || !composesUnplanned(op, inner))
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPermutation())
      perm.push_back(inner.getPermutation()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, inner.getInput(), perm);
    return success();
  }
};

/// reshape(reshape(x)) -> reshape(x).
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner || !composesUnplanned(op, inner))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *ctx) {
  patterns.add<ComposeTransposes>(ctx);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *ctx) {
  patterns.add<ComposeReshapes>(ctx);
}

#define GET_OP_CLASSES
#include "dialects/Loom/IR/LoomOps.cpp.inc"

DictionaryAttr mlir::loom::plannedOffsets(Operation *op) {
  if (auto offsets = op->getAttrOfType<DictionaryAttr>(kOffsetsAttr))
    return offsets;
  return op->getAttrOfType<DictionaryAttr>(kPipelineOffsetsAttr);
}

bool mlir::loom::hasPlannedBuffer(Value v) {
  if (Operation *op = v.getDefiningOp())
    return static_cast<bool>(plannedOffsets(op));
  auto arg = cast<BlockArgument>(v);
  auto func =
      dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         (func.getArgAttr(arg.getArgNumber(), kOffsetsAttr) ||
          func.getArgAttr(arg.getArgNumber(), kPipelineOffsetsAttr));
}

bool mlir::loom::mayShareOperandBytes(Operation *op) {
  return isa<ReshapeOp, SliceOp, FetchOp, SpillOp, ReloadOp>(op) ||
         !isa_and_nonnull<LoomDialect>(op->getDialect());
}
