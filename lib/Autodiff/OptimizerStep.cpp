//===- OptimizerStep.cpp - the weights' update, in the IR -----------------===//
//
// Implements include/loom/Autodiff/OptimizerStep.h. The formulas are
// PyTorch's (torch.optim.SGD, Adam, AdamW with their defaults otherwise:
// no dampening, no Nesterov, no AMSGrad), written in the order PyTorch
// evaluates them so that float32 steps agree closely:
//
//   SGD     g += wd·w;  b = μ·b + g (μ > 0);  w -= lr·b
//   Adam    g += wd·w (Adam) | w *= 1 − lr·wd (AdamW)
//           m += (1 − β1)·(g − m);  v = β2·v + (1 − β2)·g·g
//           w -= lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/OptimizerStep.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

#include "LoomOpWriter.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::loom;

std::optional<OptimizerKind> mlir::loom::parseOptimizerKind(StringRef kind) {
  if (kind == "sgd")
    return OptimizerKind::sgd;
  if (kind == "adam")
    return OptimizerKind::adam;
  if (kind == "adamw")
    return OptimizerKind::adamw;
  return std::nullopt;
}

StringRef mlir::loom::stringifyOptimizerKind(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::sgd:
    return "sgd";
  case OptimizerKind::adam:
    return "adam";
  case OptimizerKind::adamw:
    return "adamw";
  }
  llvm_unreachable("unknown optimizer kind");
}

std::string mlir::loom::checkOptimizerConfig(const OptimizerConfig &c) {
  auto finite = [](double x) { return std::isfinite(x); };
  if (!finite(c.lr) || c.lr <= 0)
    return "the learning rate must be positive, got " + std::to_string(c.lr);
  if (!finite(c.weightDecay) || c.weightDecay < 0)
    return "the weight decay must be non-negative, got " + std::to_string(c.weightDecay);
  if (c.kind == OptimizerKind::sgd) {
    if (!finite(c.momentum) || c.momentum < 0 || c.momentum >= 1)
      return "the momentum must lie in [0, 1), got " + std::to_string(c.momentum);
    return "";
  }
  if (c.momentum != 0)
    return "momentum is SGD's; Adam's is beta1";
  if (!finite(c.beta1) || c.beta1 < 0 || c.beta1 >= 1)
    return "beta1 must lie in [0, 1), got " + std::to_string(c.beta1);
  if (!finite(c.beta2) || c.beta2 < 0 || c.beta2 >= 1)
    return "beta2 must lie in [0, 1), got " + std::to_string(c.beta2);
  if (!finite(c.eps) || c.eps <= 0)
    return "eps must be positive, got " + std::to_string(c.eps);
  return "";
}

namespace {

/// The type a weight of `type` is updated in: float32 through its master
/// copy (updatesThroughMasterCopy), else its own.
RankedTensorType updateType(RankedTensorType type) {
  if (!updatesThroughMasterCopy(type.getElementType()))
    return type;
  return type.clone(Float32Type::get(type.getContext()));
}

/// The state each weight gets, as suffixes of its name (torch's names).
SmallVector<StringRef, 2> stateSuffixes(const OptimizerConfig &c) {
  if (c.kind != OptimizerKind::sgd)
    return {".exp_avg", ".exp_avg_sq"};
  if (c.momentum > 0)
    return {".momentum_buffer"};
  return {};
}

/// Where memory placement runs a weight's update (its `loom.placement`).
struct UpdatePlace {
  /// The optimizer state's tier off the device ("host" or "nvme"), where
  /// the CPU updates the weight; null where the device does.
  StringAttr tier;
  /// Whether the device holds the parameter between steps (then the CPU
  /// updates a host copy of it and the device's is refreshed from that);
  /// else the CPU updates its home copy, which the next step fetches.
  bool residentParameter = true;
};

UpdatePlace updatePlace(WeightOp w) {
  auto placement = w->getAttrOfType<DictionaryAttr>(kPlacementAttr);
  auto optimizer = placement ? placement.getAs<StringAttr>("optimizer") : nullptr;
  if (!optimizer || optimizer.getValue() == "device")
    return {};
  return {optimizer, placedTier(w) == "device"};
}

/// The device copies of streamed weights still live where the step returns,
/// by what was fetched (fetchedValue), as their readers read them (a ZeRO-3
/// shard's copy annotated in the shard's layout): each source's last
/// loom.fetch that no loom.release ends.
DenseMap<Value, Value> liveDeviceCopies(func::FuncOp func) {
  DenseMap<Value, FetchOp> last;
  DenseSet<Operation *> released;
  func.walk([&](Operation *op) {
    if (auto f = dyn_cast<FetchOp>(op))
      last[f.getSource()] = f;
    else if (auto r = dyn_cast<ReleaseOp>(op))
      released.insert(r.getFetch());
  });
  DenseMap<Value, Value> live;
  for (auto &[source, f] : last) {
    if (released.contains(f))
      continue;
    Value copy = f.getResult();
    for (Operation *user : f->getUsers())
      if (auto s = dyn_cast<shard::ShardOp>(user);
          s && !s.getAnnotateForUsers() && isZeroShard(s))
        copy = s.getResult();
    live[source] = copy;
  }
  return live;
}

/// Writes the update. A step of one micro-batch gets it just before its
/// return. A step the runtime calls once per micro-batch (several of them,
/// or a pipeline's) instead adds each gradient into a state summing it over
/// the step (kAccumulatorSuffix), and the update is a function of its own
/// (updateFunctionName; in a pipeline one per device, updating the weights
/// its stages read) that the runtime calls once the step's micro-batches
/// are done: it reads the sums and writes them back as zeros.
class UpdateWriter : LoomOpWriter {
public:
  UpdateWriter(func::FuncOp func, const OptimizerConfig &config)
      : LoomOpWriter(func.getLoc(), func.getContext()), func(func), config(config) {}

  LogicalResult run();

private:
  struct Updated {
    Value value;
    StringAttr name;
  };
  /// A weight the step returns a gradient of, as result #index.
  struct Gradient {
    unsigned index;
    WeightOp weight;
    /// The layout the update runs in: a ZeRO gradient's shards (the
    /// optimizer state is sharded with it), else the weight's planned one
    /// (replicated where the plan has none).
    Value layout;
    /// The layout a micro-batched step sums the gradient in: `layout`, but
    /// under ZeRO-1 the weight's planned one. ZeRO-1 keeps whole gradients
    /// (as placement prices it), so each micro-batch adds its own
    /// contribution and the update function reduce-scatters the sum once
    /// a step (deferGradientReductions, passes/Lower/Partition.cpp);
    /// ZeRO-2's sums are shards, reduce-scattered every micro-batch. A
    /// kept gradient is reduced in the step anyway: its sum stays a shard.
    Value sumLayout;
    /// In a pipeline, the lowest stage reading the weight, whose backward
    /// completes its gradient (a tied weight's: its part other than the last
    /// device's) and sums it (none where no stage reads it), and that
    /// stage's device (0 without one).
    std::optional<int64_t> stage;
    int64_t device = 0;
    /// Whether the last pipeline device holds a copy of the weight too (one
    /// it shares with `device`, such as a tied embedding, device 0's): each
    /// of the two sums the part of the gradient it computes, and their
    /// update functions exchange the sums once a step and update their
    /// copies alike (Megatron's embedding all-reduce).
    bool lastDeviceCopy = false;
    /// Whether a micro-batched step sums the gradient on the host: a
    /// streamed weight the CPU updates (ZeRO-Offload's accumulation in host
    /// memory, as placement prices it). Each micro-batch's gradient goes
    /// down as the backward completes it, and the host adds it into the
    /// sum, which lives in host memory or on NVMe (sumPlace).
    bool hostSum = false;
  };
  /// A weight gradient's parts by the pipeline device computing them.
  struct DeviceParts {
    /// The contributions the last device computes, and the others (the
    /// device updating the weight computes them).
    SmallVector<Value> last, rest;
    /// The stage whose backward, on the last device, runs after every part
    /// in `last`: the lowest among theirs.
    int64_t lastStage = std::numeric_limits<int64_t>::max();
    /// The annotations and adds looked through, outermost first.
    SmallVector<Operation *> through;
  };
  /// A sent update-function result: `value` to pipeline device `to`.
  struct Sent {
    Value value;
    int64_t to, tag;
  };

  /// `x` converted to `element`.
  Value castTo(Value x, Type element) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == element)
      return x;
    return CastOp::create(b, type.clone(element), x);
  }

  /// Starts writing into `f`: the step itself or an update function.
  void beginTarget(func::FuncOp f) {
    target = f;
    updated.clear();
    sent.clear();
    lastState = nullptr;
    corrections[0].clear();
    corrections[1].clear();
    shardings.clear();
    b.setInsertionPoint(f.getBody().front().getTerminator());
  }
  /// A loom.weight at the top of the target's body, after the ones this
  /// writer made there before (the state weights stay in order).
  WeightOp newWeight(RankedTensorType type, WeightRole role, StringRef name,
                     StringAttr file, IntegerAttr offset,
                     TypeAttr fileType = nullptr);
  /// Where memory placement's static plan puts a state: in `tier` (the
  /// device's where null), at its `slot`-th tensor from the arena offset
  /// the weight's `loom.placement` names `region` (none where it names
  /// none). The slots of one region are tensors of one size, laid end to
  /// end: the runtime puts the state at the region's offset plus `slot`
  /// times its own bytes on the rank (loom-weights-to-arguments passes the
  /// place on as `arena_offset` and `arena_slot`).
  struct StatePlace {
    StringAttr tier;
    WeightOp weight;
    StringRef region;
    int64_t slot; // (0 where an initializer leaves it out)
  };
  /// A state tensor named `name` of the target, stored in `layout`
  /// (annotated just before the return): zero-initialized, or loaded from
  /// `initial`'s bytes (widened where `type` is wider: a master copy).
  /// Placed as `place` says.
  Value state(StringRef name, RankedTensorType type, Value layout,
              WeightOp initial = nullptr, const StatePlace &place = {});
  /// `w`'s planned buffer `region` (a `loom.placement` offset key) as a
  /// place of another weight: `offset`, or, in a pipelined plan,
  /// `pipeline_offsets = [{device, offset}...]` for each pipeline device
  /// whose plan has it (loom-weights-to-arguments takes its function's).
  /// Nothing where the plan gives none.
  void appendPlannedOffset(WeightOp w, StringRef region,
                           SmallVectorImpl<NamedAttribute> &placement) {
    auto planned = w->getAttrOfType<DictionaryAttr>(kPlacementAttr);
    if (!planned)
      return;
    if (Attribute offset = planned.getAs<IntegerAttr>(region)) {
      placement.push_back(b.getNamedAttr("offset", offset));
      return;
    }
    auto onDevices = planned.getAs<ArrayAttr>("pipeline_offsets");
    if (!onDevices)
      return;
    SmallVector<Attribute> places;
    for (auto entry : onDevices.getAsRange<DictionaryAttr>())
      if (Attribute offset = entry.getAs<IntegerAttr>(region))
        places.push_back(
            b.getDictionaryAttr({b.getNamedAttr("device", entry.get("device")),
                                 b.getNamedAttr("offset", offset)}));
    if (!places.empty())
      placement.push_back(
          b.getNamedAttr("pipeline_offsets", b.getArrayAttr(places)));
  }
  /// Has the op computing a device-updated weight's gradient `g` in a
  /// step of one call and one device compute it in the plan's buffer for
  /// it (`gradient_offset`), as --loom-autodiff places the activations'
  /// gradients: loom-arena-buffers then writes it there.
  void placeGradient(const Gradient &gradient, Value g);
  /// `w`'s planned buffer `region` where the target runs: the plan's
  /// offset, or in a pipelined plan that of the target's pipeline device
  /// (an update function's; null for the step, whose stages are split
  /// later).
  IntegerAttr plannedOffsetHere(WeightOp w, StringRef region) {
    auto planned = w->getAttrOfType<DictionaryAttr>(kPlacementAttr);
    if (!planned)
      return {};
    if (auto offset = planned.getAs<IntegerAttr>(region))
      return offset;
    auto device = target->getAttrOfType<IntegerAttr>(kPipelineStageAttr);
    DictionaryAttr here =
        device
            ? offsetsOnDevice({}, planned.getAs<ArrayAttr>("pipeline_offsets"),
                              device.getInt())
            : nullptr;
    return here ? here.getAs<IntegerAttr>(region) : IntegerAttr();
  }
  /// Where a gradient's sum is: for Gradient::hostSum in placement's
  /// `sums` tier (host memory by default, or NVMe, where ZeRO-Infinity
  /// keeps gradients too), else on the device; in either, at the plan's
  /// `sum_offset`.
  StatePlace sumPlace(const Gradient &gradient) {
    StringAttr tier;
    if (gradient.hostSum) {
      auto placement =
          gradient.weight->getAttrOfType<DictionaryAttr>(kPlacementAttr);
      tier = placement ? placement.getAs<StringAttr>("sums") : nullptr;
      if (!tier)
        tier = b.getStringAttr("host");
    }
    return {tier, gradient.weight, "sum_offset"};
  }
  /// `v` as the update reads it: in `layout`, where there is one.
  Value inLayout(Value v, Value layout) {
    if (!layout)
      return v;
    return shard::ShardOp::create(b, v, layout, /*annotate_for_users=*/true).getResult();
  }
  /// The step's sharding `v` as the target has it: cloned at the insertion
  /// point into an update function, once.
  Value here(Value v);
  /// Adam's step count and bias corrections, in the target.
  void writeStepCount();
  /// The optimizer's formula for `w`: the new weight from `weight` and its
  /// gradient `g`, both of `type` (the weight's, or its master copy's) and
  /// in `layout`, with the state (kept in `tier` where not null) updated
  /// alongside.
  Value writeFormula(WeightOp w, RankedTensorType type, Value weight, Value g,
                     Value layout, StringAttr tier);
  /// The update of `gradient`'s weight from `grad`, before the target's
  /// return, where placement puts it (on the host: ZeRO-Offload's CPU
  /// optimizer); `copy` is the target's weight (the step's own, or the
  /// update function's), which the update reads or, where the CPU updates a
  /// host copy, writes.
  void writeWeightUpdate(const Gradient &gradient, Value grad, Value copy);
  /// `g`, the gradient of a weight of `type`, in parts by device: the adds
  /// summing the weight's contributions (--loom-autodiff's accumulation)
  /// are looked through where parts from `last` of the pipeline's
  /// `devices` and from another device both lie beneath.
  static DeviceParts partsByDevice(Value g, RankedTensorType type,
                                   int64_t devices, int64_t last);
  /// Adds `g`, `gradient`'s gradient or a part of it, into `sum` (widened:
  /// a 16-bit weight's sum is float32) in the backward of `stage`, and
  /// records the sum's update.
  void addIntoSum(const Gradient &gradient, Value sum, Value g,
                  std::optional<int64_t> stage, StringAttr name);
  /// The sum of `parts`, one device's parts of `w`'s gradient, made in the
  /// weight's planned layout: partitioning then reduces it over the
  /// replicas as the data-parallel step sums it, and a ZeRO split after it
  /// is a reduce-scatter (as --loom-autodiff makes a contraction's).
  Value sumInPlannedLayout(WeightOp w, ArrayRef<Value> parts);
  /// In an update function: `sum`, the part of `gradient`'s sum this
  /// device computed, sent to pipeline device `peer` and added to the part
  /// received from it (in the update's layout), so that both update from
  /// the whole sum. Sent and received under `tag`.
  Value exchangeSum(const Gradient &gradient, Value sum, int64_t peer,
                    int64_t tag);
  /// The update of a step of one micro-batch, before its return.
  void writeInStep(ArrayRef<Gradient> gradients);
  /// The gradients' sums in the step, and the update function, or with
  /// `pipelineDevices` one per device.
  void writeAccumulated(ArrayRef<Gradient> gradients,
                        std::optional<int64_t> pipelineDevices);
  /// Where `gradient`'s weight is summed and updated in a pipeline of
  /// `devices`: its `stage`, `device` and `lastDeviceCopy`; an error naming
  /// it where other devices read it too.
  LogicalResult placeUpdate(Gradient &gradient, int64_t devices);
  /// The update functions' names: one, or one per pipeline device.
  SmallVector<std::string> updateNames(std::optional<int64_t> pipelineDevices);
  /// Copy `v` of weight `w` (the step's own, or the update function's) as
  /// the step stores it: in ZeRO-3's shards, else in the plan's layout,
  /// said as the weight's own annotation where the update reads it in
  /// another (the step's `layout`: a ZeRO-2 gradient's shards), so that
  /// this is not taken for a second layout the weight arrives in. With
  /// `annotate` the annotation is written even where the plan's layout is
  /// `layout` (an update function's copy that only a reload writes must
  /// still say the layout it arrives in).
  Value asStored(WeightOp w, Value v, Value layout, bool annotate = false);
  /// The step's results: the forward's outputs, the gradients if kept,
  /// then its updates (each weight after its state, the step count first;
  /// a micro-batched step's: the gradients' sums).
  void setStepResults();
  /// The target's results: `outputs`, then its updates.
  void setResults(SmallVector<Value> outputs,
                  SmallVector<DictionaryAttr> attrs);
  DictionaryAttr hyperparameters();

  func::FuncOp func;
  const OptimizerConfig &config;
  std::optional<FlatSymbolRefAttr> grid;
  /// The step's replicated layout on the grid (null without one).
  Value replicated;
  llvm::StringMap<WeightOp> weights;
  /// ZeRO-Offload's delayed parameter update, where the plan chose it.
  bool delayed = false;
  /// A streamed weight the device updates: its device copy (null: none
  /// left, reloaded at updateReloadAt).
  DenseMap<Operation *, Value> deviceCopies;
  IntegerAttr updateReloadAt;

  // What is being written: the target function and its parts so far.
  func::FuncOp target;
  SmallVector<Updated> updated;
  SmallVector<Sent> sent;
  Operation *lastState = nullptr;
  /// Adam's 1 − β1^t and √(1 − β2^t) in float64, and per element type
  /// lr / (1 − β1^t) and √(1 − β2^t), on the device [0] and the host [1].
  Value correction1, correction2Root;
  DenseMap<Type, std::pair<Value, Value>> corrections[2];
  IRMapping shardings;
};

WeightOp UpdateWriter::newWeight(RankedTensorType type, WeightRole role,
                                 StringRef name, StringAttr file,
                                 IntegerAttr offset, TypeAttr fileType) {
  OpBuilder::InsertionGuard guard(b);
  if (lastState)
    b.setInsertionPointAfter(lastState);
  else
    b.setInsertionPointToStart(&target.getBody().front());
  auto w = WeightOp::create(b, type, WeightRoleAttr::get(b.getContext(), role),
                            b.getStringAttr(name), file, offset, fileType);
  lastState = w;
  return w;
}

Value UpdateWriter::state(StringRef name, RankedTensorType type, Value layout,
                          WeightOp initial, const StatePlace &place) {
  TypeAttr fileType;
  if (initial) {
    fileType = initial.getFileTypeAttr();
    if (Type stored = initial.getType().getElementType();
        !fileType && stored != type.getElementType())
      fileType = TypeAttr::get(stored);
  }
  WeightOp s = newWeight(
      type, WeightRole::state, name,
      initial ? initial.getFileAttr() : b.getStringAttr(""),
      initial ? initial.getOffsetAttr() : b.getI64IntegerAttr(0), fileType);
  SmallVector<NamedAttribute> placement;
  if (place.tier)
    placement.push_back(b.getNamedAttr("tier", place.tier));
  if (place.weight) {
    size_t before = placement.size();
    appendPlannedOffset(place.weight, place.region, placement);
    if (placement.size() > before)
      placement.push_back(
          b.getNamedAttr("slot", b.getI64IntegerAttr(place.slot)));
  }
  if (!placement.empty())
    s->setAttr(kPlacementAttr, b.getDictionaryAttr(placement));
  if (!layout)
    return s;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(target.getBody().front().getTerminator());
  return shard::ShardOp::create(b, s, layout, /*annotate_for_users=*/false).getResult();
}

Value UpdateWriter::here(Value v) {
  if (!v || target == func)
    return v;
  if (Value made = shardings.lookupOrNull(v))
    return made;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    here(operand);
  b.clone(*def, shardings);
  return shardings.lookup(v);
}

void UpdateWriter::writeStepCount() {
  // In float64: the count is exact, and the corrections are rounded once,
  // to the weight's type, as PyTorch's Python floats are.
  Type f64 = b.getF64Type();
  auto countType = RankedTensorType::get({}, f64);
  // (Unannotated: every rank holds it whole.)
  Value count =
      add(state(kStepCountName, countType, Value()), scalar(1.0, f64));
  updated.push_back({count, b.getStringAttr(kStepCountName)});
  correction1 = sub(scalar(1.0, f64),
                    binary(BinaryKind::pow, scalar(config.beta1, f64), count));
  correction2Root =
      unary(UnaryKind::sqrt,
            sub(scalar(1.0, f64),
                binary(BinaryKind::pow, scalar(config.beta2, f64), count)));
}

Value UpdateWriter::writeFormula(WeightOp w, RankedTensorType type,
                                 Value weight, Value g, Value layout,
                                 StringAttr tier) {
  Type element = type.getElementType();
  bool decoupled = config.kind == OptimizerKind::adamw;
  if (config.weightDecay > 0 && !decoupled)
    g = add(g, mulScalar(weight, config.weightDecay));
  SmallVector<StringAttr, 2> names;
  for (StringRef suffix : stateSuffixes(config))
    names.push_back(b.getStringAttr(w.getName() + suffix));
  // The moments follow a master copy in the planned state (WeightOffsets).
  int64_t firstMoment = type != w.getType() ? 1 : 0;
  auto moment = [&](int64_t k) {
    return StatePlace{tier, w, "optimizer_offset", firstMoment + k};
  };
  if (config.kind == OptimizerKind::sgd) {
    Value step = g;
    if (!names.empty()) { // momentum
      StringAttr name = names[0];
      Value buffer = state(name, type, layout, nullptr, moment(0));
      step = add(mulScalar(buffer, config.momentum), g);
      updated.push_back({step, name});
    }
    return sub(weight, mulScalar(step, config.lr));
  }
  StringAttr mName = names[0], vName = names[1];
  Value m = state(mName, type, layout, nullptr, moment(0)),
        v = state(vName, type, layout, nullptr, moment(1));
  Value m1 = add(m, mulScalar(sub(g, m), 1.0 - config.beta1));
  Value v1 =
      add(mulScalar(v, config.beta2), mulScalar(mul(g, g), 1.0 - config.beta2));
  auto [it, fresh] = corrections[tier ? 1 : 0].try_emplace(element);
  if (fresh)
    it->second = {
        castTo(div(scalar(config.lr, b.getF64Type()), correction1), element),
        castTo(correction2Root, element)};
  auto [stepSize, root2] = it->second;
  Value denom =
      add(div(unary(UnaryKind::sqrt, v1), root2), scalar(config.eps, element));
  Value base = weight;
  if (decoupled && config.weightDecay > 0)
    base = mulScalar(weight, 1.0 - config.lr * config.weightDecay);
  updated.push_back({m1, mName});
  updated.push_back({v1, vName});
  return sub(base, mul(stepSize, div(m1, denom)));
}

void UpdateWriter::writeWeightUpdate(const Gradient &gradient, Value grad,
                                     Value copy) {
  WeightOp w = gradient.weight;
  Value layout = here(gradient.layout);
  Block &body = target.getBody().front();
  Operation *ret = body.getTerminator();
  b.setLoc(w.getLoc());
  RankedTensorType type = w.getType();
  // A 16-bit parameter is updated through its float32 master copy.
  RankedTensorType mathType = updateType(type);
  bool mixed = mathType != type;
  // Placement may put the update on the host (ZeRO-Offload's CPU
  // optimizer): the gradient goes down into its host buffer, the CPU
  // updates the host's copy of the parameter (a streamed parameter's home
  // copy, the weight itself; a 16-bit parameter's master copy) with state
  // kept in the optimizer's tier, and a resident parameter's device copy is
  // refreshed from the result. Everything between the copies is marked
  // kOnHostAttr.
  UpdatePlace place = updatePlace(w);
  // (An update function's sum of a 16-bit parameter's gradients, in
  // float32, goes down rounded to the parameter's type, as placement
  // prices the copy: in the update's layout first, so that ZeRO-1's
  // reduction of a whole sum and the slice to its shard still fuse into a
  // reduce-scatter.)
  if (place.tier && target != func && mixed && !gradient.hostSum)
    grad = castTo(inLayout(grad, layout), type.getElementType());
  Operation *before = ret->getPrevNode();
  // The state the formula updates in place of the weight: the master copy,
  // or the host's copy of a resident parameter.
  StringAttr updatedCopy;
  Value weight;
  if (mixed || (place.tier && place.residentParameter)) {
    updatedCopy = b.getStringAttr(w.getName() +
                                  (mixed ? kMasterSuffix : kHostCopySuffix));
    // (A master copy is part of the optimizer's state, in its tier; a
    // parameter's host copy is in host memory, as placement prices it,
    // even where the state is on NVMe.)
    weight = mixed ? state(updatedCopy, mathType, layout, w,
                           {place.tier, w, "optimizer_offset"})
                   : state(updatedCopy, mathType, layout, w,
                           {b.getStringAttr("host"), w, "copy_offset"});
    // An update function's copy of the weight, which only the update
    // writes, arrives in the step's layout all the same.
    if (target != func)
      asStored(w, copy, gradient.layout, /*annotate=*/true);
  } else if (auto device = deviceCopies.find(w); device != deviceCopies.end()) {
    weight = inLayout(
        device->second
            ? device->second
            : ReloadOp::create(b, fetchedValue(w), updateReloadAt).getResult(),
        layout);
  } else {
    weight = inLayout(asStored(w, copy, gradient.layout), layout);
  }
  Value g;
  if (place.tier && !gradient.hostSum) {
    // Into its planned host buffer: in the step as soon as the backward
    // completes the gradient, as the update pipeline prices it; in an
    // update function, the sum's once a step. (A sum the host keeps is
    // read where it is.)
    OpBuilder::InsertionGuard guard(b);
    if (target == func)
      b.setInsertionPointAfterValue(grad);
    g = SpillOp::create(b, inLayout(grad, layout),
                        plannedOffsetHere(w, "gradient_offset"));
  } else {
    g = inLayout(grad, layout);
  }
  if (mixed)
    g = inLayout(castTo(g, mathType.getElementType()), layout);
  Value updatedValue = writeFormula(w, mathType, weight, g, layout, place.tier);
  // ZeRO-Offload's delayed update refreshes the device from the copy before
  // this update; otherwise from this update's result.
  bool delayedRefresh = place.tier && place.residentParameter && delayed;
  Value next =
      castTo(delayedRefresh ? weight : updatedValue, type.getElementType());
  if (place.tier) {
    Block::iterator first =
        before ? std::next(before->getIterator()) : body.begin();
    for (Operation &op : llvm::make_range(first, ret->getIterator()))
      if (isa<LoomDialect>(op.getDialect()) && !isa<SpillOp, WeightOp>(op))
        op.setAttr(kOnHostAttr, b.getUnitAttr());
    if (delayedRefresh) {
      // The old host copy goes up (written back before the new one
      // replaces it).
      updated.push_back(
          {ReloadOp::create(b, next, IntegerAttr()), w.getNameAttr()});
      updated.push_back({updatedValue, updatedCopy});
      return;
    }
    if (place.residentParameter) {
      updated.push_back({updatedValue, updatedCopy});
      next = ReloadOp::create(b, next, IntegerAttr());
      updated.push_back({next, w.getNameAttr()});
      return;
    }
  }
  if (updatedCopy)
    updated.push_back({updatedValue, updatedCopy});
  updated.push_back({next, w.getNameAttr()});
}

void UpdateWriter::writeInStep(ArrayRef<Gradient> gradients) {
  beginTarget(func);
  Operation *ret = func.getBody().front().getTerminator();
  if (config.kind != OptimizerKind::sgd)
    writeStepCount();
  for (const Gradient &gradient : gradients) {
    placeGradient(gradient, ret->getOperand(gradient.index));
    writeWeightUpdate(gradient, ret->getOperand(gradient.index),
                      WeightOp(gradient.weight).getResult());
  }
}

void UpdateWriter::placeGradient(const Gradient &gradient, Value g) {
  // (Partitioned, the op makes a partial or whole gradient that a
  // collective then reduces, or scatters to a ZeRO shard the size of the
  // plan's buffer: only its result would be the planned value. One device
  // holds the weight's gradient whole, in the weight's type: the plan's
  // buffer's size, which loom-arena-buffers does not check. A gradient
  // several uses share, which --loom-autodiff leaves unplanned for an
  // activation, is fine here: the buffer lives through the step.)
  WeightOp w = gradient.weight;
  IntegerAttr offset = plannedOffsetHere(w, "gradient_offset");
  Operation *def = g.getDefiningOp();
  if (grid || updatePlace(w).tier || !offset || !def ||
      g.getType() != w.getType() || !isa<LoomDialect>(def->getDialect()) ||
      def->getNumResults() != 1 || def->hasAttr(kOffsetsAttr) ||
      // (Movement ops carry their own places; a view would only be copied
      // into the buffer, its producer computing elsewhere.)
      isa<WeightOp, FetchOp, SpillOp, ReloadOp>(def) ||
      mayShareOperandBytes(def))
    return;
  def->setAttr(kOffsetsAttr,
               b.getDictionaryAttr({b.getNamedAttr(
                   "forward", b.getDenseI64ArrayAttr({offset.getInt()}))}));
}

UpdateWriter::DeviceParts UpdateWriter::partsByDevice(Value g,
                                                      RankedTensorType type,
                                                      int64_t devices,
                                                      int64_t last) {
  // Where a value is computed, as loom-split-stages runs it: at its op's
  // stage, in the forward or the backward; an op without a stage where
  // its latest operand is (every forward stage comes first, then the
  // backwards, the highest stage's first). None: available everywhere.
  struct Place {
    bool backward;
    int64_t stage;
    bool before(const Place &o) const {
      if (backward != o.backward)
        return o.backward;
      return backward ? stage > o.stage : stage < o.stage;
    }
  };
  DenseMap<Operation *, std::optional<Place>> places;
  std::function<std::optional<Place>(Value)> placeOf =
      [&](Value v) -> std::optional<Place> {
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto stage = def->getAttrOfType<IntegerAttr>(kStageAttr))
      return Place{def->hasAttr(kBackwardAttr), stage.getInt()};
    if (auto it = places.find(def); it != places.end())
      return it->second;
    std::optional<Place> latest;
    for (Value operand : def->getOperands())
      if (std::optional<Place> p = placeOf(operand);
          p && (!latest || latest->before(*p)))
        latest = p;
    return places[def] = latest;
  };
  auto onLast = [&](Value v) {
    std::optional<Place> p = placeOf(v);
    return p && p->stage % devices == last;
  };
  // The adds accumulating the weight's contributions (in the backward, or
  // without a stage where the weight is read through unstaged ops).
  auto isSum = [&](Operation *op) {
    auto add = dyn_cast_or_null<BinaryOp>(op);
    return add && add.getKind() == BinaryKind::add && add->hasOneUse() &&
           (add->hasAttr(kBackwardAttr) || !add->hasAttr(kStageAttr)) &&
           add.getType() == type && add->getOperand(0).getType() == type &&
           add->getOperand(1).getType() == type;
  };
  // Which devices the contributions beneath `v` come from: 1, the last
  // device's; 2, another's.
  std::function<unsigned(Value)> from = [&](Value v) -> unsigned {
    Value inner = lookThroughShards(v);
    if (Operation *def = inner.getDefiningOp(); isSum(def))
      return from(def->getOperand(0)) | from(def->getOperand(1));
    return onLast(inner) ? 1 : 2;
  };
  // Looked through where both devices' contributions lie beneath: a sum
  // of one device's alone stays whole (its own order).
  DeviceParts parts;
  std::function<void(Value)> collect = [&](Value v) {
    SmallVector<Operation *> annotations;
    Value inner = v;
    while (auto s = inner.getDefiningOp<shard::ShardOp>()) {
      annotations.push_back(s);
      inner = s.getSrc();
    }
    unsigned devicesBeneath = from(inner);
    if (Operation *def = inner.getDefiningOp();
        isSum(def) && devicesBeneath == 3) {
      llvm::append_range(parts.through, annotations);
      parts.through.push_back(def);
      collect(def->getOperand(0));
      collect(def->getOperand(1));
      return;
    }
    if (devicesBeneath == 2) {
      parts.rest.push_back(v);
      return;
    }
    parts.last.push_back(v);
    // The last device's add runs in the backward after every such part:
    // that of the lowest stage among them.
    std::optional<Place> p = placeOf(inner);
    parts.lastStage =
        std::min(parts.lastStage, p && p->backward ? p->stage : last);
  };
  collect(g);
  return parts;
}

Value UpdateWriter::sumInPlannedLayout(WeightOp w, ArrayRef<Value> parts) {
  Value g = parts.front();
  for (Value part : parts.drop_front())
    g = add(g, part);
  Value planned = plannedLayout(w);
  if (!planned)
    planned = replicated;
  // Annotated where it is made: the annotation is the value's own, which
  // every later reader then reads (a kept gradient's sum of the parts too).
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(g);
  // (The replicated layout is made at the return: a copy here.)
  if (Operation *def = planned.getDefiningOp();
      def->getBlock() == b.getInsertionBlock() &&
      !def->isBeforeInBlock(&*b.getInsertionPoint()))
    planned = b.clone(*def)->getResult(0);
  return shard::ShardOp::create(b, g, planned, /*annotate_for_users=*/false)
      .getResult();
}

void UpdateWriter::addIntoSum(const Gradient &gradient, Value sum, Value g,
                              std::optional<int64_t> stage, StringAttr name) {
  g = inLayout(g, gradient.sumLayout);
  // A host's sum: the gradient goes down into its planned host buffer as
  // soon as the backward completes it, and the host adds it in at once, so
  // that the buffer is free again for the next (landedGradients).
  OpBuilder::InsertionGuard guard(b);
  if (gradient.hostSum) {
    b.setInsertionPointAfterValue(g);
    g = SpillOp::create(b, g,
                        plannedOffsetHere(gradient.weight, "gradient_offset"));
  }
  Type element = cast<RankedTensorType>(sum.getType()).getElementType();
  Value wide = castTo(g, element);
  if (wide != g)
    wide = inLayout(wide, gradient.sumLayout);
  Value summed = add(sum, wide);
  if (gradient.hostSum) {
    summed.getDefiningOp()->setAttr(kOnHostAttr, b.getUnitAttr());
    if (Operation *cast = wide.getDefiningOp<CastOp>())
      cast->setAttr(kOnHostAttr, b.getUnitAttr());
  }
  // In the backward of the stage completing the part, on the device
  // updating the weight (loom-split-stages checks that it stays there).
  if (stage) {
    summed.getDefiningOp()->setAttr(kStageAttr, b.getI64IntegerAttr(*stage));
    summed.getDefiningOp()->setAttr(kBackwardAttr, b.getUnitAttr());
  }
  updated.push_back({summed, name});
}

Value UpdateWriter::exchangeSum(const Gradient &gradient, Value sum,
                                int64_t peer, int64_t tag) {
  Value layout = here(gradient.layout);
  Location loc = b.getLoc();
  // Both sides' parts as this update reads them: a ZeRO split's shard (so
  // only the shard crosses), annotated as their own on either side.
  Value mine = shard::ShardOp::create(b, inLayout(sum, layout), layout,
                                      /*annotate_for_users=*/false)
                   .getResult();
  unsigned index = target.getNumArguments();
  NamedAttrList attrs;
  attrs.set("loom.recv_from", b.getI64IntegerAttr(peer));
  attrs.set("loom.tag", b.getI64IntegerAttr(tag));
  if (failed(target.insertArgument(index, sum.getType(),
                                   attrs.getDictionary(b.getContext()), loc)))
    llvm_unreachable("appending an argument cannot fail");
  Value theirs = shard::ShardOp::create(b, target.getArgument(index), layout,
                                        /*annotate_for_users=*/false)
                     .getResult();
  sent.push_back({mine, peer, tag});
  // (Addition commutes exactly: both devices get the same bits.)
  return add(mine, theirs);
}

void UpdateWriter::writeAccumulated(ArrayRef<Gradient> gradients,
                                    std::optional<int64_t> pipelineDevices) {
  // The step: each gradient added into its sum (in `sumLayout`), which the
  // lowering writes back into the sum's buffer. A 16-bit weight's sum is
  // float32 (as Megatron's main_grad is), its gradient widened first.
  beginTarget(func);
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  int64_t lastDevice = pipelineDevices.value_or(1) - 1;
  SmallVector<Operation *> replaced;
  for (const Gradient &gradient : gradients) {
    WeightOp w = gradient.weight;
    b.setLoc(w.getLoc());
    StringAttr name = b.getStringAttr(w.getName() + kAccumulatorSuffix);
    Value sum = state(name, updateType(w.getType()), gradient.sumLayout,
                      WeightOp(), sumPlace(gradient));
    Value g = ret.getOperand(gradient.index);
    // A weight the last device holds a copy of: each device sums the part
    // it computes, with no transfer in the step; the update functions
    // exchange the sums (below).
    if (gradient.lastDeviceCopy) {
      DeviceParts parts =
          partsByDevice(g, w.getType(), *pipelineDevices, lastDevice);
      if (!parts.last.empty()) {
        if (!parts.rest.empty())
          addIntoSum(gradient, sum, sumInPlannedLayout(w, parts.rest),
                     gradient.stage, name);
        addIntoSum(gradient, sum, sumInPlannedLayout(w, parts.last),
                   parts.lastStage, name);
        llvm::append_range(replaced, parts.through);
        continue;
      }
    }
    // A sum kept whole adds the gradient before its ZeRO split.
    if (auto s = g.getDefiningOp<shard::ShardOp>();
        gradient.sumLayout != gradient.layout && s && s.getAnnotateForUsers() &&
        isZeroShard(s))
      g = s.getSrc();
    addIntoSum(gradient, sum, g, gradient.stage, name);
  }
  setStepResults();
  // The whole gradients the parts were summed into, unless returned.
  for (Operation *op : replaced)
    if (op->use_empty())
      op->erase();

  // The update functions, after the step.
  OpBuilder module(func);
  module.setInsertionPointAfter(func);
  for (auto [d, name] : llvm::enumerate(updateNames(pipelineDevices))) {
    b.setLoc(func.getLoc());
    auto update = func::FuncOp::create(module, func.getLoc(), name,
                                       module.getFunctionType({}, {}));
    module.setInsertionPointAfter(update);
    if (pipelineDevices)
      update->setAttr(kPipelineStageAttr, b.getI64IntegerAttr(d));
    OpBuilder end = OpBuilder::atBlockEnd(update.addEntryBlock());
    func::ReturnOp::create(end, func.getLoc());
    beginTarget(update);
    bool isLast = int64_t(d) == lastDevice;
    SmallVector<const Gradient *> updatedHere;
    for (const Gradient &gradient : gradients)
      if (gradient.device == int64_t(d) || (gradient.lastDeviceCopy && isLast))
        updatedHere.push_back(&gradient);
    // (A device updating nothing has no step count either.)
    if (config.kind != OptimizerKind::sgd && !updatedHere.empty())
      writeStepCount();
    // Tags count each pair's exchanges in gradient order, alike on both
    // sides. (They may repeat a step's: each receive here is posted after
    // the step's calls received all they were sent, and MPI keeps one
    // sender's messages in order.)
    DenseMap<int64_t, int64_t> tags; // by peer
    for (const Gradient *gradient : updatedHere) {
      WeightOp w = gradient->weight;
      b.setLoc(w.getLoc());
      WeightOp copy =
          newWeight(w.getType(), w.getRole(), w.getName(), w.getFileAttr(),
                    w.getOffsetAttr(), w.getFileTypeAttr());
      // (It is the step's weight, where the step keeps it: a streamed
      // weight's home copy.)
      if (auto placement = w->getAttrOfType<DictionaryAttr>(kPlacementAttr)) {
        SmallVector<NamedAttribute> where;
        if (Attribute tier = placement.get("tier"))
          where.push_back(b.getNamedAttr("tier", tier));
        appendPlannedOffset(w, "offset", where);
        if (!where.empty())
          copy->setAttr(kPlacementAttr, b.getDictionaryAttr(where));
      }
      StringAttr sumName = b.getStringAttr(w.getName() + kAccumulatorSuffix);
      RankedTensorType sumType = updateType(w.getType());
      Value sum = state(sumName, sumType, here(gradient->sumLayout), WeightOp(),
                        sumPlace(*gradient));
      Value whole = sum;
      if (gradient->lastDeviceCopy) {
        int64_t peer = isLast ? gradient->device : lastDevice;
        whole = exchangeSum(*gradient, sum, peer, tags[peer]++);
      }
      writeWeightUpdate(*gradient, whole, copy);
      Value zero = zeros(sumType);
      if (gradient->hostSum)
        zero.getDefiningOp()->setAttr(kOnHostAttr, b.getUnitAttr());
      updated.push_back({zero, sumName});
    }
    setResults({}, {});
    update->setAttr(kOptimizerAttr, hyperparameters());
  }
}

LogicalResult UpdateWriter::placeUpdate(Gradient &gradient, int64_t devices) {
  WeightOp w = gradient.weight;
  // The stages reading it: through its annotations, copies and the ops
  // without a stage (which run where their operands are) to staged ops.
  llvm::SmallSetVector<int64_t, 2> readers;
  DenseSet<Value> seen;
  SmallVector<Value> values = {w.getResult()};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      auto stage = user->getAttrOfType<IntegerAttr>(kStageAttr);
      if (!stage || isa<shard::ShardOp, FetchOp>(user)) {
        llvm::append_range(values, user->getResults());
        continue;
      }
      gradient.stage =
          std::min(gradient.stage.value_or(stage.getInt()), stage.getInt());
      readers.insert(stage.getInt() % devices);
    }
  }
  // Each stage's backward adds its part of the gradient; the lowest
  // stage's runs last and completes it.
  gradient.device = gradient.stage.value_or(0) % devices;
  readers.remove(gradient.device);
  gradient.lastDeviceCopy = !readers.empty();
  if (readers.empty() ||
      (readers.size() == 1 && readers.front() == devices - 1))
    return success();
  return w.emitOpError("loom-optimizer-step: weight '")
         << w.getName() << "' is read on pipeline devices " << gradient.device
         << " and " << readers.front()
         << "; a weight shared by stages is updated on the device completing "
            "its gradient and, where its only other reader is the last device "
            "(a tied embedding), there too; not elsewhere";
}

SmallVector<std::string>
UpdateWriter::updateNames(std::optional<int64_t> pipelineDevices) {
  std::string name = updateFunctionName(func.getSymName());
  if (!pipelineDevices)
    return {name};
  SmallVector<std::string> names;
  for (int64_t d = 0; d < *pipelineDevices; ++d)
    names.push_back(stageFunctionName(name, d));
  return names;
}

Value UpdateWriter::asStored(WeightOp w, Value v, Value layout, bool annotate) {
  if (shard::ShardOp zero = zeroStoredShard(w)) {
    if (target == func)
      return zero.getResult();
    auto own = shard::ShardOp::create(b, v, here(zero.getSharding()),
                                      /*annotate_for_users=*/false);
    own->setAttr(kZeroShardMark, zero->getAttr(kZeroShardMark));
    return own.getResult();
  }
  Value planned = plannedLayout(w);
  if (!planned)
    planned = replicated;
  if (!planned || (planned == layout && !annotate))
    return v;
  return shard::ShardOp::create(b, v, here(planned),
                                /*annotate_for_users=*/false)
      .getResult();
}

void UpdateWriter::setResults(SmallVector<Value> outputs,
                              SmallVector<DictionaryAttr> attrs) {
  for (const Updated &u : updated) {
    outputs.push_back(u.value);
    attrs.push_back(
        b.getDictionaryAttr({b.getNamedAttr("loom.name", u.name),
                             b.getNamedAttr(kUpdatesAttr, u.name)}));
  }
  // Then the parts sent to other pipeline devices (loom-stage-transfers
  // sends them where computed).
  for (const Sent &part : sent) {
    outputs.push_back(part.value);
    attrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("loom.send_to", b.getDenseI64ArrayAttr({part.to})),
         b.getNamedAttr("loom.tag", b.getI64IntegerAttr(part.tag))}));
  }
  Operation *ret = target.getBody().front().getTerminator();
  ret->setOperands(outputs);
  target.setFunctionType(FunctionType::get(
      b.getContext(), target.getArgumentTypes(), ret->getOperandTypes()));
  target.setAllResultAttrs(attrs);
}

void UpdateWriter::setStepResults() {
  Operation *ret = func.getBody().front().getTerminator();
  SmallVector<Value> outputs;
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (!config.keepGradients && func.getResultAttr(i, kGradientOfAttr))
      continue;
    outputs.push_back(ret->getOperand(i));
    attrs.push_back(func.getResultAttrDict(i));
  }
  setResults(outputs, attrs);
}

DictionaryAttr UpdateWriter::hyperparameters() {
  SmallVector<NamedAttribute> hyper = {
      b.getNamedAttr("kind", b.getStringAttr(stringifyOptimizerKind(config.kind))),
      b.getNamedAttr("lr", b.getF64FloatAttr(config.lr)),
      b.getNamedAttr("weight_decay", b.getF64FloatAttr(config.weightDecay))};
  if (config.kind != OptimizerKind::sgd) {
    hyper.push_back(b.getNamedAttr("beta1", b.getF64FloatAttr(config.beta1)));
    hyper.push_back(b.getNamedAttr("beta2", b.getF64FloatAttr(config.beta2)));
    hyper.push_back(b.getNamedAttr("eps", b.getF64FloatAttr(config.eps)));
  } else {
    hyper.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(config.momentum)));
  }
  return b.getDictionaryAttr(hyper);
}

LogicalResult UpdateWriter::run() {
  if (!func->hasAttr(kDifferentiatedAttr))
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName()
           << "' returns no gradients; run --loom-autodiff first";
  if (func->hasAttr(kOptimizerAttr))
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName() << "' already updates its weights";
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (WeightOp w : body.getOps<WeightOp>())
    weights.try_emplace(w.getName(), w);
  auto module = func->getParentOfType<ModuleOp>();
  // A pipelined step (ops in stages, on a pipeline axis of several
  // devices, which loom-split-stages splits it over): its devices. One
  // device runs it whole, with its update, as a step without stages.
  std::optional<int64_t> pipelineDevices;
  bool staged = func.walk([](Operation *op) {
                      return op->hasAttr(kStageAttr) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
                    })
                    .wasInterrupted();
  if (auto grids = module.getOps<shard::GridOp>(); !grids.empty())
    grid = FlatSymbolRefAttr::get((*grids.begin()).getSymNameAttr());
  if (std::optional<int64_t> devices = pipelineAxisDevices(module);
      staged && devices && *devices > 1)
    pipelineDevices = devices;
  // The runtime calls a micro-batched or pipelined step once per
  // micro-batch (and sums the gradients it returns): the update is then a
  // function of its own, called once a step.
  auto micro = func->getAttrOfType<IntegerAttr>(kMicroBatchesAttr);
  bool accumulated = pipelineDevices || (micro && micro.getInt() > 1);

  int64_t zeroStage = 0;
  if (auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr)) {
    if (auto d = plan.getAs<BoolAttr>("delayed_update"))
      delayed = d.getValue();
    if (auto zero = plan.getAs<IntegerAttr>("zero_stage"))
      zeroStage = zero.getInt();
  }
  // Check everything before writing anything.
  SmallVector<Gradient> gradients;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto of = func.getResultAttrOfType<StringAttr>(i, kGradientOfAttr);
    // A weight no result depends on keeps its value and has no state.
    if (!of || func.getResultAttr(i, kNoGradientAttr))
      continue;
    WeightOp w = weights.lookup(of.getValue());
    if (!w)
      return func.emitOpError("loom-optimizer-step: result #")
             << i << " is the gradient of '" << of.getValue()
             << "', which no loom.weight in the function is";
    Value layout = plannedLayout(w);
    if (auto s = ret.getOperand(i).getDefiningOp<shard::ShardOp>();
        s && s.getAnnotateForUsers() && isZeroShard(s))
      layout = s.getSharding();
    Gradient gradient{i, w, layout, layout};
    if (zeroStage == 1 && !config.keepGradients)
      gradient.sumLayout = plannedLayout(w);
    gradient.hostSum =
        accumulated && placedTier(w) != "device" && updatePlace(w).tier;
    if (pipelineDevices && failed(placeUpdate(gradient, *pipelineDevices)))
      return failure();
    gradients.push_back(gradient);
  }
  SmallVector<std::string> stateNames;
  if (config.kind != OptimizerKind::sgd)
    stateNames.push_back(kStepCountName.str());
  for (const Gradient &gradient : gradients) {
    WeightOp w = gradient.weight;
    for (StringRef suffix : stateSuffixes(config))
      stateNames.push_back((w.getName() + suffix).str());
    UpdatePlace place = updatePlace(w);
    // In a step of several micro-batches the sums of resident parameters'
    // gradients stay on the device (placement prices them there) and go
    // down once, for the CPU's update (its state in host memory or on
    // NVMe); a streamed weight's sum is the host's (Gradient::hostSum).
    // Placement streams parameters over several micro-batches only in
    // one-device programs without a grid, updated by the CPU.
    if (accumulated && placedTier(w) != "device" &&
        (pipelineDevices || grid || !place.tier))
      return w.emitOpError("loom-optimizer-step: weight '")
             << w.getName() << "' is streamed from the " << placedTier(w)
             << (pipelineDevices ? " in a pipeline"
                 : grid          ? " over a device grid"
                                 : " and updated on the device")
             << "; the update of a step of several micro-batches is written "
                "for weights the device holds or for streamed weights the "
                "CPU updates on one device";
    if (accumulated)
      stateNames.push_back((w.getName() + kAccumulatorSuffix).str());
    if (updateType(w.getType()) != w.getType())
      stateNames.push_back((w.getName() + kMasterSuffix).str());
    else if (place.tier && place.residentParameter)
      stateNames.push_back((w.getName() + kHostCopySuffix).str());
  }
  for (const std::string &name : stateNames)
    if (WeightOp clash = weights.lookup(name))
      return clash.emitOpError("loom-optimizer-step: weight '")
             << name << "' has the name of the optimizer state it would add";
  // (updateFunctions finds `@<entry>_update` or its `_stage<d>` functions,
  // so a function of either name would be taken for the update.)
  if (accumulated)
    for (const std::string &name : llvm::concat<const std::string>(
             updateNames(std::nullopt), updateNames(pipelineDevices)))
      if (Operation *clash = module.lookupSymbol(name))
        return clash->emitOpError("loom-optimizer-step: '")
               << name << "' has the name of the update function it would add";

  b.setInsertionPoint(ret);
  if (grid) {
    replicated = createSharding(b, b.getLoc(), *grid).getResult();
    for (Gradient &gradient : gradients) {
      if (!gradient.layout)
        gradient.layout = replicated;
      if (!gradient.sumLayout)
        gradient.sumLayout = replicated;
    }
  }
  if (accumulated) {
    writeAccumulated(gradients, pipelineDevices);
  } else {
    // A streamed weight that placement has the device update (a split of
    // its optimizer) is read on the device: the copy the chunk schedule
    // leaves there, else its home copy (ZeRO-3: this device's shard) brought
    // up by a loom.reload, as placement prices it. Such a reload goes where
    // the static memory plan put the buffer the update reads it into, the
    // weights one after another. (A 16-bit weight's update reads its master
    // copy, which is state on the device, instead.)
    DenseMap<Value, Value> live = liveDeviceCopies(func);
    if (auto buffer = scratchBuffer(planArenas(module), kUpdateReloadScratch))
      updateReloadAt = b.getI64IntegerAttr(buffer->first);
    for (Gradient &gradient : gradients)
      if (!updatePlace(gradient.weight).tier &&
          placedTier(gradient.weight) != "device" &&
          updateType(gradient.weight.getType()) == gradient.weight.getType())
        deviceCopies[gradient.weight] =
            live.lookup(fetchedValue(gradient.weight));
    writeInStep(gradients);
    setStepResults();
  }
  func->setAttr(kOptimizerAttr, hyperparameters());
  return success();
}

} // namespace

LogicalResult mlir::loom::writeOptimizerStep(func::FuncOp func, const OptimizerConfig &config) {
  return UpdateWriter(func, config).run();
}
