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
#include "llvm/ADT/StringMap.h"

#include <cmath>

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
  /// The gradient's host buffer in the host arena, where planned.
  IntegerAttr gradientOffset;
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
  return {optimizer, placement.getAs<IntegerAttr>("gradient_offset"),
          placedTier(w) == "device"};
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

/// Writes the update ops just before the function's return.
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

  /// Rank-0 `x` converted to `element`.
  Value castTo(Value x, Type element) {
    if (cast<RankedTensorType>(x.getType()).getElementType() == element)
      return x;
    return CastOp::create(b, RankedTensorType::get({}, element), x);
  }

  /// A state tensor named `name`, made at the top of the body, stored in
  /// `layout` (annotated just before the return): zero-initialized, or
  /// loaded from `initial`'s bytes. Placed in `tier` where not null.
  Value state(StringRef name, RankedTensorType type, Value layout,
              WeightOp initial = nullptr, StringAttr tier = nullptr);
  /// `v` as the update reads it: in `layout`, where there is one.
  Value inLayout(Value v, Value layout) {
    if (!layout)
      return v;
    return shard::ShardOp::create(b, v, layout, /*annotate_for_users=*/true).getResult();
  }

  func::FuncOp func;
  const OptimizerConfig &config;
  std::optional<FlatSymbolRefAttr> grid;
  llvm::StringMap<WeightOp> weights;
  SmallVector<Updated> updated;
  Operation *lastState = nullptr; // the state weights stay in order
  /// Adam's lr / (1 − β1^t) and √(1 − β2^t), per element type, computed
  /// on the device [0] and on the host [1].
  DenseMap<Type, std::pair<Value, Value>> corrections[2];
};

Value UpdateWriter::state(StringRef name, RankedTensorType type, Value layout,
                         WeightOp initial, StringAttr tier) {
  OpBuilder::InsertionGuard guard(b);
  Block &body = func.getBody().front();
  if (lastState)
    b.setInsertionPointAfter(lastState);
  else
    b.setInsertionPointToStart(&body);
  auto s = WeightOp::create(b, type, WeightRoleAttr::get(b.getContext(), WeightRole::state),
                             b.getStringAttr(name),
                             initial ? initial.getFileAttr() : b.getStringAttr(""),
                             initial ? initial.getOffsetAttr() : b.getI64IntegerAttr(0));
  if (tier)
    s->setAttr(kPlacementAttr, b.getDictionaryAttr({b.getNamedAttr("tier", tier)}));
  lastState = s;
  if (!layout)
    return s;
  b.setInsertionPoint(body.getTerminator());
  return shard::ShardOp::create(b, s, layout, /*annotate_for_users=*/false).getResult();
}

LogicalResult UpdateWriter::run() {
  MLIRContext *ctx = func.getContext();
  if (!func->hasAttr(kDifferentiatedAttr))
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName() << "' returns no gradients; run --loom-autodiff first";
  if (func->hasAttr(kOptimizerAttr))
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName() << "' already updates its weights";
  // A pipelined step returns every output from its last device, which
  // holds only its own stages' weights.
  std::optional<Attribute> firstStage;
  WalkResult staged = func.walk([&](Operation *op) {
    Attribute stage = op->getAttr(kStageAttr);
    if (!stage)
      return WalkResult::advance();
    if (!firstStage)
      firstStage = stage;
    return stage == *firstStage ? WalkResult::advance()
                                : WalkResult::interrupt();
  });
  if (staged.wasInterrupted())
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName()
           << "' is split into several pipeline stages (loom.stage); the "
              "update of a pipelined step is not written (each stage would "
              "update its own weights)";
  // The IR computes one micro-batch's gradients; the runtime sums a step's.
  // An update inside would run once per micro-batch, on a part of them.
  if (auto m = func->getAttrOfType<IntegerAttr>(kMicroBatchesAttr);
      m && m.getInt() > 1)
    return func.emitOpError("loom-optimizer-step: '")
           << func.getSymName() << "' runs " << m.getInt() << " micro-batches ("
           << kMicroBatchesAttr
           << "), whose gradients the runtime sums after the step; an update "
              "in the IR would run once per micro-batch (gradient "
              "accumulation in the IR is not written)";
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (WeightOp w : body.getOps<WeightOp>())
    weights.try_emplace(w.getName(), w);
  auto module = func->getParentOfType<ModuleOp>();
  if (auto grids = module.getOps<shard::GridOp>(); !grids.empty())
    grid = FlatSymbolRefAttr::get((*grids.begin()).getSymNameAttr());

  // ZeRO-Offload's delayed parameter update, where the plan chose it: the
  // device's copy of a host-updated parameter is refreshed with the host
  // copy as this step found it, so the next step's forward reads the
  // parameters one update behind while the CPU's update of this step
  // overlaps it.
  bool delayed = false;
  if (auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr))
    if (auto d = plan.getAs<BoolAttr>("delayed_update"))
      delayed = d.getValue();
  // Check everything before writing anything.
  SmallVector<std::pair<unsigned, WeightOp>> gradients;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto of = func.getResultAttrOfType<StringAttr>(i, kGradientOfAttr);
    if (!of)
      continue;
    WeightOp w = weights.lookup(of.getValue());
    if (!w)
      return func.emitOpError("loom-optimizer-step: result #")
             << i << " is the gradient of '" << of.getValue()
             << "', which no loom.weight in the function is";
    gradients.push_back({i, w});
  }
  bool adam = config.kind != OptimizerKind::sgd;
  SmallVector<StringRef, 2> suffixes = stateSuffixes(config);
  SmallVector<std::string> stateNames;
  if (adam)
    stateNames.push_back(kStepCountName.str());
  // A streamed weight that placement has the device update (a split of
  // its optimizer) is read on the device: the copy the chunk schedule
  // leaves there, else its home copy (ZeRO-3: this device's shard) brought
  // up by a loom.reload, as placement prices it.
  DenseMap<Operation *, Value> deviceCopies;
  DenseMap<Value, Value> live = liveDeviceCopies(func);
  // Such a reload goes where the static memory plan put the buffer the
  // update reads it into, the weights one after another.
  IntegerAttr updateReloadAt;
  if (auto buffer = scratchBuffer(planArenas(module), kUpdateReloadScratch))
    updateReloadAt = b.getI64IntegerAttr(buffer->first);
  for (auto &[i, w] : gradients)
    if (!updatePlace(w).tier && placedTier(w) != "device")
      deviceCopies[w] = live.lookup(fetchedValue(w));
  for (auto &[i, w] : gradients) {
    for (StringRef suffix : suffixes)
      stateNames.push_back((w.getName() + suffix).str());
    if (UpdatePlace place = updatePlace(w); place.tier && place.residentParameter)
      stateNames.push_back((w.getName() + kHostCopySuffix).str());
  }
  for (const std::string &name : stateNames)
    if (WeightOp clash = weights.lookup(name))
      return clash.emitOpError("loom-optimizer-step: weight '")
             << name << "' has the name of the optimizer state it would add";

  b.setInsertionPoint(ret);
  // Adam's bias corrections, from the step count this step makes: t + 1.
  Value correction1, correction2Root;
  if (adam) {
    // In float64: the count is exact, and the corrections are rounded once,
    // to the weight's type, as PyTorch's Python floats are.
    Type f64 = b.getF64Type();
    auto countType = RankedTensorType::get({}, f64);
    // (Unannotated: every rank holds it whole.)
    Value count = add(state(kStepCountName, countType, Value()), scalar(1.0, f64));
    updated.push_back({count, b.getStringAttr(kStepCountName)});
    correction1 = sub(scalar(1.0, f64), binary(BinaryKind::pow, scalar(config.beta1, f64), count));
    correction2Root = unary(
        UnaryKind::sqrt,
        sub(scalar(1.0, f64), binary(BinaryKind::pow, scalar(config.beta2, f64), count)));
  }

  for (auto &[i, w] : gradients) {
    b.setLoc(w.getLoc());
    Value grad = ret.getOperand(i);
    RankedTensorType type = w.getType();
    Type element = type.getElementType();
    // The layout the update runs in: a ZeRO gradient's shards (the
    // optimizer state is sharded with it), else the weight's planned one.
    Value planned = plannedLayout(w);
    if (!planned && grid)
      planned = createSharding(b, b.getLoc(), *grid).getResult();
    Value layout = planned;
    if (auto s = grad.getDefiningOp<shard::ShardOp>();
        s && s.getAnnotateForUsers() && isZeroShard(s))
      layout = s.getSharding();
    // Placement may put the update on the host (ZeRO-Offload's CPU
    // optimizer): the gradient goes down into its host buffer, the CPU
    // updates the host's copy of the parameter (a streamed parameter's home
    // copy, the weight itself) with state kept in the optimizer's tier, and
    // a resident parameter's device copy is refreshed from the result.
    // Everything between the copies is marked kOnHostAttr.
    UpdatePlace place = updatePlace(w);
    Operation *before = ret->getPrevNode();
    StringAttr hostCopy;
    Value weight;
    if (place.tier && place.residentParameter) {
      hostCopy = b.getStringAttr(w.getName() + kHostCopySuffix);
      weight = state(hostCopy, type, layout, w, place.tier);
    } else {
      // The weight as stored: ZeRO-3's shards, else the plan's layout, said
      // as the weight's own annotation so that the update's reading it in
      // another layout (a ZeRO-2 gradient's shards) is not taken for a
      // second layout the weight arrives in.
      Value stored = w.getResult();
      if (auto copy = deviceCopies.find(w); copy != deviceCopies.end())
        stored = copy->second
                     ? copy->second
                     : ReloadOp::create(b, fetchedValue(w), updateReloadAt)
                           .getResult();
      else if (shard::ShardOp zero = zeroStoredShard(w))
        stored = zero.getResult();
      else if (planned != layout)
        stored = shard::ShardOp::create(b, stored, planned, /*annotate_for_users=*/false);
      weight = inLayout(stored, layout);
    }
    Value g;
    if (place.tier) {
      // The copy down is issued as soon as the backward completes the
      // gradient, as the update pipeline prices it.
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(grad);
      g = SpillOp::create(b, inLayout(grad, layout), place.gradientOffset);
    } else {
      g = inLayout(grad, layout);
    }
    bool decoupled = config.kind == OptimizerKind::adamw;
    if (config.weightDecay > 0 && !decoupled)
      g = add(g, mulScalar(weight, config.weightDecay));
    SmallVector<StringAttr, 2> names;
    for (StringRef suffix : suffixes)
      names.push_back(b.getStringAttr(w.getName() + suffix));
    Value next;
    if (!adam) {
      Value step = g;
      if (!names.empty()) { // momentum
        StringAttr name = names[0];
        Value buffer = state(name, type, layout, nullptr, place.tier);
        step = add(mulScalar(buffer, config.momentum), g);
        updated.push_back({step, name});
      }
      next = sub(weight, mulScalar(step, config.lr));
    } else {
      StringAttr mName = names[0], vName = names[1];
      Value m = state(mName, type, layout, nullptr, place.tier),
            v = state(vName, type, layout, nullptr, place.tier);
      Value m1 = add(m, mulScalar(sub(g, m), 1.0 - config.beta1));
      Value v1 = add(mulScalar(v, config.beta2), mulScalar(mul(g, g), 1.0 - config.beta2));
      auto [it, fresh] = corrections[place.tier ? 1 : 0].try_emplace(element);
      if (fresh)
        it->second = {castTo(div(scalar(config.lr, b.getF64Type()), correction1), element),
                      castTo(correction2Root, element)};
      auto [stepSize, root2] = it->second;
      Value denom = add(div(unary(UnaryKind::sqrt, v1), root2),
                        scalar(config.eps, element));
      Value base = weight;
      if (decoupled && config.weightDecay > 0)
        base = mulScalar(weight, 1.0 - config.lr * config.weightDecay);
      next = sub(base, mul(stepSize, div(m1, denom)));
      updated.push_back({m1, mName});
      updated.push_back({v1, vName});
    }
    if (place.tier) {
      Block::iterator first = before ? std::next(before->getIterator()) : body.begin();
      for (Operation &op : llvm::make_range(first, ret->getIterator()))
        if (isa<LoomDialect>(op.getDialect()) && !isa<SpillOp, WeightOp>(op))
          op.setAttr(kOnHostAttr, b.getUnitAttr());
      if (hostCopy && delayed) {
        // The old host copy goes up (written back before the new one
        // replaces it).
        updated.push_back({ReloadOp::create(b, weight, IntegerAttr()), w.getNameAttr()});
        updated.push_back({next, hostCopy});
        continue;
      }
      if (hostCopy) {
        updated.push_back({next, hostCopy});
        next = ReloadOp::create(b, next, IntegerAttr());
      }
    }
    updated.push_back({next, w.getNameAttr()});
  }

  // The results: the forward's outputs, the gradients if kept, then the
  // updates (each weight after its state, the step count first).
  SmallVector<Value> outputs;
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (!config.keepGradients && func.getResultAttr(i, kGradientOfAttr))
      continue;
    outputs.push_back(ret.getOperand(i));
    attrs.push_back(func.getResultAttrDict(i));
  }
  for (const Updated &u : updated) {
    outputs.push_back(u.value);
    attrs.push_back(DictionaryAttr::get(ctx, {b.getNamedAttr("loom.name", u.name),
                                              b.getNamedAttr(kUpdatesAttr, u.name)}));
  }
  ret->setOperands(outputs);
  func.setFunctionType(FunctionType::get(ctx, func.getArgumentTypes(), ret.getOperandTypes()));
  func.setAllResultAttrs(attrs);
  SmallVector<NamedAttribute> hyper = {
      b.getNamedAttr("kind", b.getStringAttr(stringifyOptimizerKind(config.kind))),
      b.getNamedAttr("lr", b.getF64FloatAttr(config.lr)),
      b.getNamedAttr("weight_decay", b.getF64FloatAttr(config.weightDecay))};
  if (adam) {
    hyper.push_back(b.getNamedAttr("beta1", b.getF64FloatAttr(config.beta1)));
    hyper.push_back(b.getNamedAttr("beta2", b.getF64FloatAttr(config.beta2)));
    hyper.push_back(b.getNamedAttr("eps", b.getF64FloatAttr(config.eps)));
  } else {
    hyper.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(config.momentum)));
  }
  func->setAttr(kOptimizerAttr, b.getDictionaryAttr(hyper));
  return success();
}

} // namespace

LogicalResult mlir::loom::writeOptimizerStep(func::FuncOp func, const OptimizerConfig &config) {
  return UpdateWriter(func, config).run();
}
