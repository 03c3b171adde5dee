//===- Estimate.cpp - time and memory of a planned loom program ----------===//
//
// The model, in the order the code runs (docs/cost-model.md has the detail):
//  1. Resolve the plan: the grid and its mapping onto the cluster, the
//     pipeline axis, stages, micro-batches.
//  2. Complete the shardings with upstream sharding propagation (on a clone)
//     and read back, for every loom op, which grid axes split each of its
//     loops (the ShardingInterface's ShardingOption) and each tensor.
//  3. Per op and per micro-batch: local FLOPs and bytes -> roofline time;
//     collectives: split reductions (all-reduce), resharding of operands,
//     and in training the gradient of every edge (reshardSteps with the
//     partial axes of loops the operand does not index); parameter
//     gradients are synchronised once per step.
//  4. Per stage: forward/backward/recompute time and activations kept per
//     micro-batch; the pipeline simulator gives the makespan and how many
//     micro-batches each device holds; memory per device follows.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Estimate.h"

#include "dialects/Loom/IR/Gradients.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Cost/ActivationOffload.h"
#include "loom/Cost/Recompute.h"
#include "loom/Cost/Reshard.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using ::loom::AxisSpan;
using ::loom::CollectiveKind;
using ::loom::OpClass;
using ::loom::Precision;
using ::loom::TensorLayout;

double Estimate::peakMemory() const {
  double peak = 0;
  for (const DeviceMemory &d : deviceMemory)
    peak = std::max(peak, d.memory.total());
  return peak;
}

// The estimate reads shardings from the propagated clone and treats the
// caller's annotations as transparent (lookThroughShards, forEachReader).

namespace {

/// The grid a plan runs on, resolved against the cluster.
struct PlanGrid {
  shard::GridOp op;
  SmallVector<int64_t> shape; // {1} for an unplanned program
  SmallVector<AxisSpan> spans;
  int pipelineAxis = -1;

  int64_t axisSize(int16_t a) const { return shape[a]; }
  int64_t size(ArrayRef<int16_t> axes) const {
    int64_t n = 1;
    for (int16_t a : axes)
      n *= shape[a];
    return n;
  }
  AxisSpan span(ArrayRef<int16_t> axes) const {
    SmallVector<AxisSpan> parts;
    for (int16_t a : axes)
      parts.push_back(spans[a]);
    return ::loom::combineSpans(parts);
  }
};

/// Everything the model keeps about one loom op.
struct OpInfo {
  Operation *op = nullptr;      // in the caller's module
  Operation *planned = nullptr; // in the propagated clone
  int64_t stage = 0;
  OpClass cls = OpClass::DataMovement;
  // Per device, per micro-batch.
  double fwdFlops = 0, bwdFlops = 0, fwdBytes = 0, fwdTime = 0, bwdTime = 0;
  double fwdComm = 0, bwdComm = 0;
  // Whole program (global shapes): for model FLOPs.
  double globalFwdFlops = 0, globalBwdFlops = 0;
  bool hasBackward = false;
  bool recompute = false; // in a recomputed region (selectRecomputation)
  // Activation offload: waits for the host link before its forward (the
  // stage's last op also holds the drain) and before its backward.
  double offloadForwardStall = 0, offloadBackwardStall = 0;
  double gradSync = 0; // per step: gradients of parameters it reads
  /// Of it, ZeRO-2/3's reduce-scatter of one micro-batch's gradients,
  /// made once a micro-batch.
  double gradReduceEachMicroBatch = 0;
  double footprint = 0; // local bytes of operands + results
};

/// One micro-batch-or-step collective charged to a device.
struct ChargedCollective {
  CollectiveKind kind;
  double bytes, seconds;
  bool perStep; // false: once per micro-batch
  /// Run after the step's last backward (a tied weight's exchange of its
  /// sums), past the device's memory peak: its buffer is not counted there.
  bool afterBackward = false;
};

class Estimator {
public:
  Estimator(ModuleOp module, const EstimateOptions &options, Estimate &result)
      : module(module), options(options), result(result) {}
  LogicalResult run();

private:
  InFlightDiagnostic error(Operation *at) {
    return (at ? at : module.getOperation())->emitError("loom-estimate: ");
  }
  LogicalResult resolveCluster();
  LogicalResult resolveGrid();
  LogicalResult propagate();
  LogicalResult resolveBatch();
  LogicalResult collectOps();
  LogicalResult costOps();
  LogicalResult assemble();

  // Element size under the chosen precision, and the precision an op runs in.
  double elementBytes(Type t) const;
  Precision precisionOf(Type t) const;
  TensorLayout layoutOf(const shard::Sharding &s, int64_t rank) const;
  double localBytes(Value v, const TensorLayout &layout) const;
  double fullBytes(Value v) const;
  double collective(CollectiveKind kind, ArrayRef<int16_t> axes, double bytes,
                    int64_t stage, bool perStep);
  /// One step of a resharding: its collective plus the local copies it needs.
  double reshardStep(const ::loom::CollectiveStep &step, int64_t stage, bool perStep);
  /// Where the one reader of `result` (of `info`'s op), in the same stage,
  /// has a split reduction over `axes` scattered (reductionScatterDim), or -1.
  int scatterDimOfReader(const OpInfo &info, Value result, ArrayRef<int16_t> axes) const;
  double roofline(OpClass cls, double flops, double bytes,
                  Precision p) const;
  bool isActivation(Value v) const { return activations.contains(v); }
  /// The weight a parameter-derived value is computed from through
  /// single-operand ops (a transposed tied embedding), or null.
  Operation *weightBehind(Value v) const;

  ModuleOp module;
  const EstimateOptions &options;
  Estimate &result;
  std::optional<::loom::Calibration> calibration;
  func::FuncOp func;
  OwningOpRef<ModuleOp> planned;
  func::FuncOp plannedFunc;
  PlanGrid grid;
  std::optional<Precision> forcedPrecision;
  std::vector<OpInfo> ops;
  DenseMap<Operation *, size_t> opIndex;
  DenseMap<Value, double> valueLocalBytes; // caller's values
  DenseSet<Value> activations;             // depend on a function argument
  DenseSet<Value> needsGrad;               // carry a gradient (gradientValues)
  DenseSet<Value> paramDerived;            // depend only on parameters
  std::vector<std::vector<ChargedCollective>> charged; // per stage
  /// Weights read on several pipeline devices (a tied embedding: its
  /// first reader's and the LM head's), and those devices.
  llvm::MapVector<Operation *, llvm::SmallSetVector<int64_t, 2>>
      sharedAcrossDevices;
};

} // namespace

//===----------------------------------------------------------------------===//
// Resolving the plan
//===----------------------------------------------------------------------===//

LogicalResult Estimator::resolveCluster() {
  auto cluster = ::loom::loadCluster(options.cluster);
  if (!cluster)
    return error(nullptr) << llvm::toString(cluster.takeError());
  result.cluster = std::move(*cluster);
  result.clusterName = options.cluster;
  if (!options.calibrationFile.empty()) {
    auto cal = ::loom::Calibration::load(options.calibrationFile);
    if (!cal)
      return error(nullptr) << llvm::toString(cal.takeError());
    calibration = std::move(*cal);
  }
  if (options.precision != "ir") {
    forcedPrecision = ::loom::parsePrecision(options.precision);
    if (!forcedPrecision)
      return error(nullptr) << "unknown precision '" << options.precision
                            << "' (ir, fp32, tf32, bf16, fp16, fp8)";
    if (result.cluster.device.peak(*forcedPrecision) <= 0)
      return error(nullptr) << "device " << result.cluster.device.name
                            << " has no " << options.precision << " peak";
  }
  result.precisionName = options.precision;
  if (!parseRecomputeMode(options.recompute))
    return error(nullptr) << "unknown recompute mode '" << options.recompute
                          << "' (none, selective, full)";
  if (options.activations != "device" && options.activations != "host")
    return error(nullptr) << "activations must be 'device' or 'host', not '"
                          << options.activations << "'";
  if (options.activations == "host" && !(result.cluster.host.copyBandwidth() > 0))
    return error(nullptr) << "activations=host: cluster " << result.clusterName
                          << " gives no host link bandwidth";
  if (options.zeroStage < 0 || options.zeroStage > 3)
    return error(nullptr) << "zero must be 0, 1, 2 or 3";
  return success();
}

LogicalResult Estimator::resolveGrid() {
  SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
  if (grids.size() > 1)
    return error(grids[1]) << "a plan uses one grid; found " << grids.size();
  if (grids.empty()) {
    grid.shape = {1};
    result.axisNames = {"single"};
    result.notes.push_back("no shard.grid: estimated as a single device");
  } else {
    grid.op = grids.front();
    for (int64_t d : grid.op.getShape()) {
      if (ShapedType::isDynamic(d) || d < 1)
        return error(grid.op) << "grid axes must have static sizes";
      grid.shape.push_back(d);
    }
    if (auto names = grid.op->getAttrOfType<ArrayAttr>("loom.axis_names")) {
      if (names.size() != grid.shape.size())
        return error(grid.op) << "loom.axis_names has " << names.size()
                              << " names for " << grid.shape.size() << " axes";
      for (Attribute n : names) {
        auto s = dyn_cast<StringAttr>(n);
        if (!s)
          return error(grid.op) << "loom.axis_names must be strings";
        result.axisNames.push_back(s.str());
      }
    } else {
      for (size_t i = 0; i < grid.shape.size(); ++i)
        result.axisNames.push_back("axis" + std::to_string(i));
    }
    if (auto pp = grid.op->getAttrOfType<IntegerAttr>("loom.pipeline_axis")) {
      int64_t a = pp.getInt();
      if (a < 0 || a >= static_cast<int64_t>(grid.shape.size()))
        return error(grid.op) << "loom.pipeline_axis " << a
                              << " is not an axis of the grid";
      grid.pipelineAxis = static_cast<int>(a);
    }
  }
  SmallVector<unsigned> order;
  if (grid.op)
    if (auto o = grid.op->getAttrOfType<ArrayAttr>("loom.device_order"))
      for (Attribute a : o) {
        auto i = dyn_cast<IntegerAttr>(a);
        if (!i)
          return error(grid.op) << "loom.device_order must list axis indices";
        if (i.getInt() < 0 || i.getInt() >= static_cast<int64_t>(grid.shape.size()))
          return error(grid.op) << "loom.device_order names axis " << i.getInt()
                                << " of a " << grid.shape.size() << "-axis grid";
        order.push_back(static_cast<unsigned>(i.getInt()));
      }
  auto spans = ::loom::mapGridOntoCluster(result.cluster, grid.shape, order);
  if (!spans)
    return error(grid.op) << llvm::toString(spans.takeError());
  grid.spans.assign(spans->begin(), spans->end());
  result.gridShape.assign(grid.shape.begin(), grid.shape.end());
  result.axisSpans.assign(grid.spans.begin(), grid.spans.end());
  result.pipelineAxis = grid.pipelineAxis;
  result.devices = grid.size(llvm::to_vector(llvm::seq<int16_t>(
      0, static_cast<int16_t>(grid.shape.size()))));
  result.pipelineDevices =
      grid.pipelineAxis >= 0 ? grid.shape[grid.pipelineAxis] : 1;
  if (result.devices < result.cluster.numDevices())
    result.notes.push_back(llvm::formatv("the grid uses {0} of the cluster's {1} devices",
                                         result.devices,
                                         result.cluster.numDevices()));
  return success();
}

LogicalResult Estimator::propagate() {
  SmallVector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  if (funcs.empty())
    return error(nullptr) << "no function with a body to estimate";
  func = funcs.front();
  if (funcs.size() > 1) {
    auto main = llvm::find_if(funcs, [](func::FuncOp f) { return f.getSymName() == "main"; });
    if (main == funcs.end())
      return error(funcs[1]) << "several functions and none is named 'main'";
    func = *main;
  }
  if (func->hasAttr(kDifferentiatedAttr))
    return error(func) << "'" << func.getSymName() << "' " << kHoldsBackwardMessage;
  planned = cast<ModuleOp>(module->clone());
  // ZeRO-3's sharded weights are placement, not the plan: the estimator
  // prices their gathers from the ZeRO stage.
  removeZeroShards(*planned);
  for (auto f : planned->getOps<func::FuncOp>())
    if (f.getSymName() == func.getSymName())
      plannedFunc = f;
  if (!grid.op)
    return success();
  PassManager pm(module.getContext());
  // As loom-partition propagates: the estimate is of the program that
  // partitioning emits.
  pm.addNestedPass<func::FuncOp>(createForwardFirstShardingPropagation());
  if (failed(pm.run(*planned)))
    return error(func) << "sharding propagation failed on this plan";
  return success();
}

LogicalResult Estimator::resolveBatch() {
  if (func.getNumArguments() == 0)
    return error(func) << "the function has no inputs to take the batch from";
  auto input = dyn_cast<RankedTensorType>(func.getArgument(0).getType());
  if (!input || input.getRank() == 0 || input.isDynamicDim(0))
    return error(func) << "the first input must be a tensor with a static batch "
                          "dimension (re-import with --input-shape)";
  int64_t irBatch = input.getDimSize(0);
  if (irBatch < 1)
    return error(func) << "the first input's batch dimension is " << irBatch
                       << "; nothing to estimate";
  // Data parallelism: the grid axes the first input's batch dimension is split on.
  int64_t dp = 1;
  // A planner may state the data-parallel axes (`loom.data_axes` on the
  // grid) when the first input itself is not split, e.g. token ids read
  // whole by a hidden-split embedding.
  ArrayAttr dataAxes = grid.op ? grid.op->getAttrOfType<ArrayAttr>("loom.data_axes")
                               : ArrayAttr();
  if (dataAxes) {
    for (Attribute a : dataAxes) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i || i.getInt() < 0 || i.getInt() >= static_cast<int64_t>(grid.shape.size()))
        return error(grid.op) << "loom.data_axes must list axes of the grid";
      dp *= grid.shape[i.getInt()];
    }
  } else if (grid.op)
    for (Operation *user : plannedFunc.getArgument(0).getUsers())
      if (auto shardOp = dyn_cast<shard::ShardOp>(user)) {
        shard::Sharding s(shardOp.getSharding());
        if (!s.getSplitAxes().empty())
          dp = grid.size(s.getSplitAxes()[0].asArrayRef());
        break;
      }
  if (irBatch % dp != 0)
    return error(func) << "batch " << irBatch << " does not divide over " << dp
                       << " data-parallel devices";
  result.dataParallel = dp;
  result.microBatch = irBatch / dp;
  if (options.microBatch && options.microBatch != result.microBatch)
    return error(func) << "micro-batch=" << options.microBatch
                       << " but the IR's batch is " << irBatch << " over " << dp
                       << " data-parallel devices, i.e. micro-batch "
                       << result.microBatch << "; re-import with --input-shape";
  // A planned function says how many micro-batches its step runs; a global
  // batch given beside it must agree, since the program runs that many.
  int64_t stepBatch = irBatch;
  if (auto m = func->getAttrOfType<IntegerAttr>(kMicroBatchesAttr)) {
    if (m.getInt() < 1)
      return error(func) << kMicroBatchesAttr << " = " << m.getInt()
                         << "; a step runs at least one micro-batch";
    stepBatch = m.getInt() * irBatch;
    if (options.globalBatch && options.globalBatch != stepBatch)
      return error(func) << "global-batch=" << options.globalBatch
                         << " but the function runs " << m.getInt()
                         << " micro-batches of " << irBatch << " ("
                         << kMicroBatchesAttr << "), a global batch of "
                         << stepBatch;
  }
  result.globalBatch = options.globalBatch ? options.globalBatch : stepBatch;
  if (result.globalBatch % irBatch != 0)
    return error(func) << "global-batch=" << result.globalBatch
                       << " is not a multiple of micro-batch x data-parallel = "
                       << irBatch;
  result.microBatches = result.globalBatch / irBatch;
  result.tokensPerSample = options.tokensPerSample;
  if (!result.tokensPerSample && input.getRank() >= 2 &&
      isa<IntegerType>(input.getElementType()))
    result.tokensPerSample = input.getDimSize(1);
  return success();
}

//===----------------------------------------------------------------------===//
// Sizes, precisions, roofline, collectives
//===----------------------------------------------------------------------===//

double mlir::loom::elementBytes(Type t, std::optional<Precision> forced) {
  if (isa<FloatType>(t) && forced)
    return ::loom::precisionBytes(*forced);
  if (t.isIndex())
    return 8;
  unsigned bits = t.isIntOrFloat() ? t.getIntOrFloatBitWidth() : 32;
  return std::max(1u, bits / 8);
}

Precision mlir::loom::precisionOf(Type t, std::optional<Precision> forced) {
  if (forced)
    return *forced;
  if (!t)
    return Precision::FP32;
  if (t.isBF16())
    return Precision::BF16;
  if (t.isF16())
    return Precision::FP16;
  if (isa<FloatType>(t) && t.getIntOrFloatBitWidth() == 8)
    return Precision::FP8;
  if (t.isInteger(8))
    return Precision::INT8;
  return Precision::FP32;
}

double Estimator::elementBytes(Type t) const {
  return mlir::loom::elementBytes(t, forcedPrecision);
}

Precision Estimator::precisionOf(Type t) const {
  return mlir::loom::precisionOf(t, forcedPrecision);
}

TensorLayout Estimator::layoutOf(const shard::Sharding &s, int64_t rank) const {
  TensorLayout layout;
  layout.splitAxes.resize(rank);
  if (!s)
    return layout;
  for (auto [d, axes] : llvm::enumerate(s.getSplitAxes()))
    if (static_cast<int64_t>(d) < rank)
      layout.splitAxes[d].assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  return layout;
}

double Estimator::fullBytes(Value v) const {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return 0;
  return static_cast<double>(t.getNumElements()) * elementBytes(t.getElementType());
}

Operation *Estimator::weightBehind(Value v) const {
  for (;;) {
    Operation *def = lookThroughShards(v).getDefiningOp();
    if (!def || isa<WeightOp>(def))
      return def;
    if (def->getNumOperands() != 1)
      return nullptr;
    v = def->getOperand(0);
  }
}

double Estimator::localBytes(Value v, const TensorLayout &layout) const {
  double split = 1;
  for (const auto &axes : layout.splitAxes)
    split *= static_cast<double>(grid.size(axes));
  return fullBytes(v) / split;
}

double Estimator::roofline(OpClass cls, double flops,
                           double bytes, Precision p) const {
  return ::loom::rooflineSeconds(result.cluster.device, cls, flops, bytes, p);
}

double Estimator::collective(CollectiveKind kind, ArrayRef<int16_t> axes,
                             double bytes, int64_t stage, bool perStep) {
  if (axes.empty() || grid.size(axes) == 1 || bytes <= 0)
    return 0;
  ::loom::CollectiveCost c = ::loom::collectiveCost(
      result.cluster, kind, bytes, grid.span(axes),
      ::loom::CollectiveAlgorithm::Auto, calibration ? &*calibration : nullptr);
  charged[stage].push_back({kind, bytes, c.seconds, perStep});
  return c.seconds;
}

double Estimator::reshardStep(const ::loom::CollectiveStep &step, int64_t stage,
                              bool perStep) {
  return collective(step.kind, step.axes, step.bytes, stage, perStep) +
         ::loom::rearrangeSeconds(result.cluster.device, step.rearrangedBytes);
}

//===----------------------------------------------------------------------===//
// Ops: what each one costs
//===----------------------------------------------------------------------===//

LogicalResult Estimator::collectOps() {
  // Pair every loom op with its twin in the propagated clone (same order).
  SmallVector<Operation *> original, twins;
  func.walk([&](Operation *op) {
    if (isa<LoomDialect>(op->getDialect()))
      original.push_back(op);
  });
  plannedFunc.walk([&](Operation *op) {
    if (isa<LoomDialect>(op->getDialect()))
      twins.push_back(op);
  });
  if (original.size() != twins.size())
    return error(func) << "internal: propagation changed the loom ops";

  // Which values are activations (depend on an input), which depend only
  // on parameters, and which need a gradient: those a result reads through
  // float values from a trainable parameter, as --loom-autodiff finds them
  // (a weight read only through a comparison or an argmax has none, and
  // neither gradient nor optimizer state: loom.no_gradient).
  if (options.training)
    needsGrad = gradientValues(func);
  DenseSet<Value> fromParameter; // float, computed from a trainable one
  for (BlockArgument arg : func.getArguments())
    activations.insert(arg);
  for (Operation *op : original) {
    bool act = false, grad = false, param = false;
    if (auto w = dyn_cast<WeightOp>(op)) {
      grad = options.training && isTrainableParameter(w);
      param = grad;
    }
    bool anyOperand = false, allParam = true;
    for (Value v : llvm::map_range(op->getOperands(), lookThroughShards)) {
      anyOperand = true;
      act |= activations.contains(v);
      grad |= fromParameter.contains(v);
      allParam &= paramDerived.contains(v) || !activations.contains(v);
    }
    param |= anyOperand && allParam && grad;
    for (Value r : op->getResults()) {
      bool isFloat = isa<FloatType>(getElementTypeOrSelf(r.getType()));
      if (act)
        activations.insert(r);
      if (grad && isFloat)
        fromParameter.insert(r);
      if (param && !act)
        paramDerived.insert(r);
    }
  }

  // Stages: `loom.stage` where given; otherwise the latest stage among the
  // op's operands (a weight takes its first user's stage below).
  ops.resize(original.size());
  DenseMap<Value, int64_t> stageOf;
  int64_t maxStage = 0;
  for (auto [i, op] : llvm::enumerate(original)) {
    OpInfo &info = ops[i];
    info.op = op;
    info.planned = twins[i];
    opIndex[op] = i;
    int64_t stage = 0;
    if (auto s = op->getAttrOfType<IntegerAttr>(kStageAttr)) {
      if (s.getInt() < 0)
        return error(op) << "loom.stage must be >= 0";
      stage = s.getInt();
      for (Value v : llvm::map_range(op->getOperands(), lookThroughShards))
        if (auto it = stageOf.find(v); it != stageOf.end() && it->second > stage)
          return error(op) << "at loom.stage " << stage
                           << " reads a value computed at the later stage "
                           << it->second;
    } else {
      for (Value v : llvm::map_range(op->getOperands(), lookThroughShards))
        if (auto it = stageOf.find(v); it != stageOf.end())
          stage = std::max(stage, it->second);
    }
    info.stage = stage;
    maxStage = std::max(maxStage, stage);
    for (Value r : op->getResults())
      stageOf[r] = stage;
  }
  // Weights, constants and what is computed from them alone (a transposed
  // tied embedding) belong with their first user: walking backwards, users
  // are placed before their producers.
  for (OpInfo &info : llvm::reverse(ops)) {
    Operation *op = info.op;
    if (op->hasAttr(kStageAttr) || op->getNumResults() == 0 ||
        llvm::any_of(op->getResults(),
                     [&](Value r) { return isActivation(r); }))
      continue;
    int64_t first = -1;
    for (Value r : op->getResults())
      forEachReader(r, [&](Operation *user) {
        if (auto it = opIndex.find(user); it != opIndex.end())
          first = first < 0 ? ops[it->second].stage
                            : std::min(first, ops[it->second].stage);
      });
    if (first >= 0)
      info.stage = first;
  }

  result.stages = maxStage + 1;
  if (result.stages > 1 && grid.pipelineAxis < 0)
    return error(func) << "ops are assigned to " << result.stages
                       << " stages but the grid has no loom.pipeline_axis";
  if (result.stages % result.pipelineDevices != 0)
    return error(func) << result.stages << " stages do not divide evenly over "
                       << result.pipelineDevices << " pipeline devices";
  result.virtualStages = result.stages / result.pipelineDevices;
  charged.assign(result.stages, {});
  return success();
}

/// The sharding the planned op sees on an operand / result (replicated when
/// propagation left it unannotated).
static shard::Sharding shardingOf(OpOperand &operand) {
  auto s = shard::getSharding(operand);
  return succeeded(s) ? s->second : shard::Sharding();
}
static shard::Sharding shardingOf(OpResult result) {
  auto s = shard::getSharding(result);
  return succeeded(s) ? s->second : shard::Sharding();
}

/// Follows shard.shard ops from a planned operand back to the sharding the
/// producer left the value in. Weights and constants are stored the way
/// their users ask for them (that is what annotating a weight means), so an
/// unannotated one takes the user's layout, `asUsed`.
static shard::Sharding producerSharding(Value v, const shard::Sharding &asUsed) {
  while (auto s = v.getDefiningOp<shard::ShardOp>()) {
    if (!s.getAnnotateForUsers())
      return shard::Sharding(s.getSharding());
    v = s.getSrc();
  }
  if (isa_and_nonnull<WeightOp, ConstantOp>(v.getDefiningOp()))
    return asUsed;
  return shard::Sharding();
}

int Estimator::scatterDimOfReader(const OpInfo &info, Value result,
                                  ArrayRef<int16_t> axes) const {
  OpOperand *use = soleReadingUse(result);
  if (!use)
    return -1;
  auto it = opIndex.find(use->getOwner());
  if (it == opIndex.end() || ops[it->second].stage != info.stage)
    return -1;
  OpOperand &planned = ops[it->second].planned->getOpOperand(use->getOperandNumber());
  auto annotation = planned.get().getDefiningOp<shard::ShardOp>();
  if (!annotation || !annotation.getAnnotateForUsers())
    return -1;
  int64_t rank = cast<ShapedType>(result.getType()).getRank();
  shard::Sharding wanted = shardingOf(planned);
  return ::loom::reductionScatterDim(
      layoutOf(producerSharding(planned.get(), wanted), rank),
      layoutOf(wanted, rank), axes);
}

LogicalResult Estimator::costOps() {
  const bool training = options.training;
  for (OpInfo &info : ops) {
    Operation *op = info.op;
    auto cost = dyn_cast<CostOpInterface>(op);
    if (!cost)
      continue;
    info.cls = cost.getCostClass();
    Operation *twin = info.planned;

    // Layouts of operands and results, and the loops' grid axes.
    SmallVector<shard::Sharding, 4> operandShardings, resultShardings;
    for (OpOperand &o : twin->getOpOperands())
      operandShardings.push_back(shardingOf(o));
    for (OpResult r : twin->getResults())
      resultShardings.push_back(shardingOf(r));
    if (grid.pipelineAxis >= 0)
      for (const shard::Sharding &sh : llvm::concat<const shard::Sharding>(
               operandShardings, resultShardings))
        if (sh)
          for (auto axes : sh.getSplitAxes())
            if (llvm::is_contained(axes.asArrayRef(), grid.pipelineAxis))
              return error(op) << "a tensor is split on the pipeline axis "
                               << grid.pipelineAxis
                               << " (stages are laid along it; use another axis)";
    std::vector<TensorLayout> operandLayouts, resultLayouts;
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      operandLayouts.push_back(layoutOf(
          operandShardings[i], cast<ShapedType>(v.getType()).getRank()));
    for (auto [i, v] : llvm::enumerate(op->getResults()))
      resultLayouts.push_back(layoutOf(
          resultShardings[i], cast<ShapedType>(v.getType()).getRank()));

    shard::ShardingArray loops;
    SmallVector<AffineMap> maps;
    SmallVector<utils::IteratorType> iterators;
    if (auto si = dyn_cast<shard::ShardingInterface>(twin)) {
      maps = si.getIndexingMaps();
      iterators = si.getLoopIteratorTypes();
      if (grid.op) {
        auto option = si.getShardingOption(operandShardings, resultShardings);
        if (succeeded(option) && !option->empty)
          loops = option->shardingArray;
      }
    }
    loops.resize(iterators.size());
    double split = 1;
    ::loom::GridAxes reductionAxes;
    for (auto [l, axes] : llvm::enumerate(loops)) {
      split *= static_cast<double>(grid.size(axes));
      if (l < iterators.size() && iterators[l] == utils::IteratorType::reduction)
        reductionAxes.append(axes.begin(), axes.end());
    }

    // Local sizes.
    DenseMap<Value, double> local;
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      local[v] = localBytes(v, operandLayouts[i]);
    for (auto [i, v] : llvm::enumerate(op->getResults())) {
      local[v] = localBytes(v, resultLayouts[i]);
      valueLocalBytes[v] = local[v];
    }
    for (auto &[v, b] : local)
      info.footprint += b;

    // Forward compute.
    Type elemTy = op->getNumResults()
                      ? getElementTypeOrSelf(op->getResult(0).getType())
                      : Type();
    Precision p = elemTy ? precisionOf(elemTy) : Precision::FP32;
    if (isa<CastOp>(op))
      p = precisionOf(getElementTypeOrSelf(op->getOperand(0).getType()));
    double contraction = cost.getContractionFlops();
    double total = cost.getTotalFlops();
    info.globalFwdFlops = total;
    info.fwdFlops = total / split;
    info.fwdBytes = cost.getBytesAccessed([&](Value v) { return local.lookup(v); });
    info.fwdTime = roofline(info.cls, info.fwdFlops, info.fwdBytes, p);
    if (calibration && info.fwdTime > 0) {
      SmallVector<SmallVector<int64_t>> shapes;
      auto addShape = [&](Value v, const TensorLayout &layout) {
        SmallVector<int64_t> s(cast<ShapedType>(v.getType()).getShape());
        for (auto [d, axes] : llvm::enumerate(layout.splitAxes))
          s[d] = (s[d] + grid.size(axes) - 1) / grid.size(axes);
        shapes.push_back(s);
      };
      for (auto [i, v] : llvm::enumerate(op->getOperands()))
        addShape(v, operandLayouts[i]);
      for (auto [i, v] : llvm::enumerate(op->getResults()))
        addShape(v, resultLayouts[i]);
      std::string key = ::loom::Calibration::kernelKey(
          op->getName().getStringRef(), p, shapes);
      if (auto t = calibration->kernelSeconds(key))
        info.fwdTime = *t;
    }

    // Forward collectives: a split reduction ends in an all-reduce of the
    // local result, or a reduce-scatter where its one reader only slices the
    // sum over the same axes; operands the plan wants in another layout are
    // resharded.
    if (!reductionAxes.empty() && op->getNumResults()) {
      llvm::sort(reductionAxes); // as loom-partition emits them
      int scatterDim = op->getNumResults() == 1
                           ? scatterDimOfReader(info, op->getResult(0), reductionAxes)
                           : -1;
      info.fwdComm += reshardStep(
          ::loom::reductionStep(reductionAxes, local.lookup(op->getResult(0)), scatterDim),
          info.stage, false);
    }
    for (auto [i, operand] : llvm::enumerate(twin->getOpOperands())) {
      Value v = operand.get();
      auto shardOp = v.getDefiningOp<shard::ShardOp>();
      if (!shardOp || !shardOp.getAnnotateForUsers())
        continue;
      int64_t rank = operandLayouts[i].splitAxes.size();
      TensorLayout from = layoutOf(producerSharding(v, operandShardings[i]), rank);
      for (const ::loom::CollectiveStep &step :
           ::loom::reshardSteps(fullBytes(op->getOperand(i)), from,
                                operandLayouts[i],
                                [&](int16_t a) { return grid.axisSize(a); }))
        info.fwdComm += reshardStep(step, info.stage, /*perStep=*/false);
    }

    if (!training)
      continue;
    // Backward: ops whose result carries a gradient, to the operands that
    // need one (a comparison reading such a value has none).
    SmallVector<unsigned> gradOperands;
    if (llvm::any_of(op->getResults(),
                     [&](Value r) { return needsGrad.contains(r); }))
      for (auto [i, v] : llvm::enumerate(op->getOperands()))
        if (needsGrad.contains(lookThroughShards(v)))
          gradOperands.push_back(i);
    if (gradOperands.empty())
      continue;
    info.hasBackward = true;
    // Each operand gradient of a contraction is a contraction of the same
    // size; everything else costs about twice its forward (read the output
    // gradient and saved inputs, write input gradients).
    // Attention (flash-style): dQ, dK, dV, dP plus the recomputed scores.
    double nContractionGrads =
        isa<AttentionOp>(op)
            ? 2.5
            : static_cast<double>(llvm::count_if(
                  gradOperands, [](unsigned i) { return i < 2; }));
    info.globalBwdFlops = contraction * nContractionGrads + (total - contraction) * 2;
    info.bwdFlops = info.globalBwdFlops / split;
    info.bwdTime = roofline(info.cls, info.bwdFlops, 2 * info.fwdBytes, p);

    // Gradient of each operand: partial over the axes of split loops the
    // operand does not index; resharded back to the producer's layout.
    for (unsigned i : gradOperands) {
      ::loom::GridAxes partial;
      if (i < maps.size())
        for (auto [l, axes] : llvm::enumerate(loops)) {
          if (axes.empty() || maps[i].isFunctionOfDim(l))
            continue;
          partial.append(axes.begin(), axes.end());
        }
      TensorLayout from = operandLayouts[i];
      from.partialAxes = partial;
      Value plannedOperand = twin->getOperand(i);
      TensorLayout to = layoutOf(producerSharding(plannedOperand, operandShardings[i]),
                                 operandLayouts[i].splitAxes.size());
      if (!plannedOperand.getDefiningOp<shard::ShardOp>())
        to = operandLayouts[i];
      Value v = op->getOperand(i);
      bool isParameter = paramDerived.contains(lookThroughShards(v));
      WeightFacts *facts = nullptr;
      if (isParameter)
        if (Operation *w = weightBehind(v)) {
          facts = &result.weightFacts[w];
          if (lookThroughShards(v).getDefiningOp() == w) {
            ::loom::SplitDims stored = ::loom::trimmedDims(to.splitAxes);
            if (!facts->storedLayout)
              facts->storedLayout = stored;
            else if (*facts->storedLayout != stored)
              facts->uniformLayout = false;
          }
        }
      // A weight read on another pipeline device than its first reader's
      // (a tied embedding's LM head on the last device): each device sums
      // and reduces its own part of the gradient like any other, and the
      // two exchange their sums once a step (OptimizerStep.cpp), priced
      // with the pipeline's transfers below.
      if (isParameter && result.pipelineDevices > 1)
        if (Operation *w = weightBehind(v))
          if (auto it = opIndex.find(w); it != opIndex.end()) {
            int64_t first = ops[it->second].stage % result.pipelineDevices,
                    here = info.stage % result.pipelineDevices;
            if (first != here) {
              sharedAcrossDevices[w].insert(first);
              sharedAcrossDevices[w].insert(here);
            }
          }
      for (const ::loom::CollectiveStep &step : ::loom::reshardSteps(
               fullBytes(v), from, to, [&](int16_t a) { return grid.axisSize(a); })) {
        if (!isParameter) {
          info.bwdComm += reshardStep(step, info.stage, /*perStep=*/false);
          continue;
        }
        // Parameter gradients accumulate over micro-batches and are
        // synchronised once per step; ZeRO turns the all-reduce into a
        // reduce-scatter of gradients plus an all-gather of parameters.
        // ZeRO-2/3 keep only their shard of a gradient, so a step of
        // several micro-batches reduce-scatters each micro-batch's (the
        // program sums shards, OptimizerStep.cpp); whole gradients (no ZeRO,
        // ZeRO-1) are summed locally and reduced once a step.
        SmallVector<::loom::CollectiveStep, 2> sync =
            ::loom::gradientSyncSteps(step, options.zeroStage >= 1);
        bool eachMicroBatch = sync.size() > 1 && options.zeroStage >= 2 &&
                              result.microBatches > 1;
        // Reduced once a step where the step sums them whole (no ZeRO,
        // ZeRO-1: loom-partition defers the reduction into the update), a
        // 16-bit parameter's gradients are reduced in their float32 sum;
        // ZeRO-2/3 reduce each call's in the parameter's type.
        if (!eachMicroBatch && options.zeroStage <= 1) {
          double element = elementBytes(getElementTypeOrSelf(v.getType()));
          double widening = gradientBytesPerParameter(
                                element, result.accumulatesGradients()) /
                            element;
          sync[0].bytes *= widening;
          sync[0].rearrangedBytes *= widening;
        }
        double reduce =
            reshardStep(sync[0], info.stage, /*perStep=*/!eachMicroBatch);
        double gather =
            sync.size() > 1 ? reshardStep(sync[1], info.stage, /*perStep=*/true) : 0;
        info.gradSync +=
            (eachMicroBatch ? result.microBatches : 1) * reduce + gather;
        if (eachMicroBatch)
          info.gradReduceEachMicroBatch += reduce;
        if (facts) {
          facts->reduceSeconds += reduce;
          facts->gatherSeconds += gather;
          if (step.kind == CollectiveKind::AllReduce &&
              grid.size(step.axes) > facts->replicas) {
            facts->replicas = grid.size(step.axes);
            facts->replicaAxes = step.axes;
          }
        }
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Stages, pipeline, memory, totals
//===----------------------------------------------------------------------===//

namespace {
/// Activation liveness inside one stage for one micro-batch.
struct StageLiveness {
  double savedBytes = 0;     // kept for backward (no recompute)
  double checkpointBytes = 0; // kept under full recomputation
  double recomputeWorkingSet = 0; // largest segment's saved bytes
  double regionWorkingSet = 0;    // largest recomputed region's results
  double forwardTemporaries = 0;  // peak live bytes not kept for backward
  double forwardLive = 0;         // peak live bytes, kept ones included
  double offloadBuffers = 0;      // activation offload's staging, at most
  std::string peakTemporaryAt;
};
} // namespace

/// The ops that run as steps of their own: weights and constants are
/// loaded, not computed.
static bool isCostedOp(Operation *op) {
  return isa<CostOpInterface>(op) && !isa<WeightOp, ConstantOp>(op);
}

static std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << llvm::sys::path::filename(loc.getFilename().getValue())
       << ":" << loc.getLine();
  else if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    os << " '" << name.getName().getValue() << "'";
  return s;
}

LogicalResult Estimator::assemble() {
  const bool training = options.training;
  const int64_t S = result.stages, P = result.pipelineDevices;
  const int64_t m = result.microBatches;
  const RecomputeMode recomputeMode =
      training ? *parseRecomputeMode(options.recompute) : RecomputeMode::None;
  const bool fullRecompute = recomputeMode == RecomputeMode::Full;
  // The regions re-run in the backward: selective recomputation's, and ops
  // marked `loom.recompute` under any policy.
  RecomputeRegions regions;
  if (training) {
    auto infoOf = [&](Operation *op) -> const OpInfo * {
      auto it = opIndex.find(op);
      return it == opIndex.end() ? nullptr : &ops[it->second];
    };
    auto hasBackward = [&](Operation *op) {
      const OpInfo *info = infoOf(op);
      return info && info->hasBackward && isCostedOp(op);
    };
    auto activation = [&](Value v) { return isActivation(v); };
    auto gradient = [&](Value v) { return needsGrad.contains(v); };
    RecomputeFacts facts{hasBackward, activation, gradient, &options.recomputeOps};
    regions = selectRecomputation(func, recomputeMode, facts);
    result.recomputeSegments = rankRecomputeSegments(func, facts, regions);
  }
  // What the step returns it holds, so the backward never re-runs it.
  for (OpInfo &info : ops)
    info.recompute = regions.recomputes(info.op) && !resultsHeldByStep(info.op);
  // The stage computing a value (-1: a function input).
  auto stageOfValue = [&](Value v) -> int64_t {
    Operation *def = v.getDefiningOp();
    auto it = def ? opIndex.find(def) : opIndex.end();
    return it == opIndex.end() ? -1 : ops[it->second].stage;
  };
  auto bytesOf = [&](Value v) -> double {
    if (auto it = valueLocalBytes.find(v); it != valueLocalBytes.end())
      return it->second;
    // Function inputs: the layout the plan gives them.
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Value twin = plannedFunc.getArgument(arg.getArgNumber());
      for (Operation *user : twin.getUsers())
        if (auto s = dyn_cast<shard::ShardOp>(user))
          return localBytes(v, layoutOf(shard::Sharding(s.getSharding()),
                                        cast<ShapedType>(v.getType()).getRank()));
    }
    return fullBytes(v);
  };

  // A step's results are handed back when it ends: in training, after the
  // backward (--loom-autodiff returns them with the gradients), so each
  // micro-batch's stay on the device until its backward ends, as kept
  // activations do (they are not offloaded or recomputed).
  DenseSet<Value> returned;
  if (training)
    for (Value v : func.getBody().front().getTerminator()->getOperands())
      if (isActivation(lookThroughShards(v)))
        returned.insert(lookThroughShards(v));

  // Per stage: ops in program order.
  std::vector<std::vector<size_t>> stageOps(S);
  for (auto [i, info] : llvm::enumerate(ops))
    stageOps[info.stage].push_back(i);

  result.stageEstimates.assign(S, {});
  std::vector<StageLiveness> live(S);

  // Activation offload (ActivationOffload.h): each kept activation goes to
  // the host after its producer's forward (a stage input, before the first
  // op) and comes back before the backward of its last reader in the stage,
  // where its segment or region re-runs from it under recomputation.
  const bool offload = training && options.activations == "host";
  // Partial offload: the ops whose kept results go, as placement prices
  // them, or as its `loom.offload` marks say in placed IR.
  DenseSet<Operation *> offloadFrom = options.offloadFrom;
  if (offload && offloadFrom.empty())
    func.walk([&](Operation *op) {
      if (op->hasAttr(kOffloadMark))
        offloadFrom.insert(op);
    });
  auto offloadActivations = [&](int64_t s, ArrayRef<Value> kept) -> LogicalResult {
    StageEstimate &st = result.stageEstimates[s];
    double keptOnDevice = 0; // not offloaded (EstimateOptions::offloadFrom)
    SmallVector<size_t> costed;           // indices into ops, program order
    DenseMap<Operation *, size_t> stepOf; // op -> its index in costed
    for (size_t idx : stageOps[s])
      if (!isa<WeightOp, ConstantOp>(ops[idx].op)) {
        stepOf[ops[idx].op] = costed.size();
        costed.push_back(idx);
      }
    if (costed.empty())
      return success();
    std::vector<::loom::OffloadStep> forward(costed.size()), backward(costed.size());
    for (auto [k, idx] : llvm::enumerate(costed)) {
      const OpInfo &info = ops[idx];
      forward[k].seconds = info.fwdTime + info.fwdComm;
      if (info.hasBackward)
        backward[k].seconds = info.bwdTime + info.bwdComm +
                              (fullRecompute || info.recompute ? forward[k].seconds : 0);
    }
    for (Value v : kept) {
      // What the step returns stays; partial offload moves only the
      // results of the chosen ops.
      Operation *def = v.getDefiningOp();
      if (returned.contains(v) ||
          (!offloadFrom.empty() && !(def && offloadFrom.contains(def)))) {
        keptOnDevice += bytesOf(v);
        continue;
      }
      result.offloadedActivations.insert(v);
      size_t producer = 0;
      if (def && stepOf.count(def))
        producer = stepOf.lookup(def);
      size_t consumer = producer;
      forEachReader(v, [&](Operation *user) {
        if (auto it = stepOf.find(user); it != stepOf.end())
          consumer = std::max(consumer, it->second);
      });
      forward[producer].bytes += bytesOf(v);
      backward[consumer].bytes += bytesOf(v);
      st.offloadedActivationBytes += bytesOf(v);
    }
    const ::loom::HostSpec &host = result.cluster.host;
    auto timeline = ::loom::simulateActivationOffload(
        forward, backward, host.copyBandwidth(), host.copyBandwidth(), host.linkLatency);
    if (!timeline)
      return error(func) << "stage " << s << ": " << llvm::toString(timeline.takeError());
    for (auto [k, idx] : llvm::enumerate(costed)) {
      ops[idx].offloadForwardStall = timeline->forwardStall[k];
      ops[idx].offloadBackwardStall = timeline->backwardStall[k];
      st.offloadForwardStall += timeline->forwardStall[k];
      st.offloadBackwardStall += timeline->backwardStall[k];
    }
    st.forward += st.offloadForwardStall;
    st.backward += st.offloadBackwardStall;
    live[s].offloadBuffers = timeline->peakBytes;
    // On the device: the staging buffers, and what is not offloaded.
    st.savedActivationBytes = keptOnDevice;
    return success();
  };
  std::vector<double> stageWeights(S, 0), stageParams(S, 0), stageParamBytes(S, 0);
  // What ZeRO leaves per device: each parameter over its own replicas (the
  // devices its gradient is all-reduced over; WeightFacts), so an expert
  // weight split over an expert axis is not divided by that axis, and a
  // weight replicated over a sequence axis is.
  std::vector<double> stageShardedParams(S, 0), stageShardedParamBytes(S, 0);
  std::vector<double> boundaryBytes(S, 0); // sent from stage s to s+1

  for (int64_t s = 0; s < S; ++s) {
    StageEstimate &st = result.stageEstimates[s];
    st.stage = s;
    st.device = s % P;
    DenseSet<Operation *> weightsHere;
    DenseMap<Value, size_t> lastUse; // position in stageOps[s]; SIZE_MAX = later stage
    DenseSet<Value> saved;
    for (auto [pos, idx] : llvm::enumerate(stageOps[s])) {
      OpInfo &info = ops[idx];
      if (isa<WeightOp, ConstantOp>(info.op))
        continue;
      ++st.ops;
      st.forward += info.fwdTime + info.fwdComm;
      st.forwardComm += info.fwdComm;
      if (info.hasBackward) {
        st.backward += info.bwdTime + info.bwdComm;
        st.backwardComm += info.bwdComm;
        if (fullRecompute || info.recompute)
          st.recompute += info.fwdTime + info.fwdComm;
        SmallVector<Value> keep;
        if (auto cost = dyn_cast<CostOpInterface>(info.op))
          cost.getSavedForBackward(keep);
        for (Value v : llvm::map_range(keep, lookThroughShards))
          if (isActivation(v))
            saved.insert(v);
      }
      // A recomputed region re-runs from inputs it keeps; a stage re-runs
      // its own part of a region from what it received.
      if (info.recompute)
        for (Value v : llvm::map_range(info.op->getOperands(), lookThroughShards))
          if (isActivation(v) && (regions.keptInputs.contains(v) || stageOfValue(v) < s))
            saved.insert(v);
      st.gradSync += info.gradSync;
      st.gradReduceEachMicroBatch += info.gradReduceEachMicroBatch;
      for (Value v : llvm::map_range(info.op->getOperands(), lookThroughShards)) {
        if (auto w = v.getDefiningOp<WeightOp>())
          weightsHere.insert(w);
        if (isActivation(v))
          lastUse[v] = pos;
      }
    }
    st.backward += st.recompute;
    // Values crossing to later stages, and weights used here.
    for (size_t idx : stageOps[s])
      for (Value r : ops[idx].op->getResults()) {
        if (!isActivation(r))
          continue;
        int64_t lastStage = s;
        forEachReader(r, [&](Operation *user) {
          if (auto it = opIndex.find(user); it != opIndex.end())
            lastStage = std::max(lastStage, ops[it->second].stage);
        });
        if (lastStage == s)
          continue;
        lastUse[r] = SIZE_MAX;
        for (int64_t b = s; b < lastStage; ++b)
          boundaryBytes[b] += bytesOf(r);
      }
    for (Operation *w : weightsHere) {
      double b = bytesOf(w->getResult(0));
      stageWeights[s] += b;
      auto t = cast<RankedTensorType>(w->getResult(0).getType());
      double full = fullBytes(w->getResult(0));
      if (needsGrad.contains(w->getResult(0)) && full > 0) {
        double params = static_cast<double>(t.getNumElements()) * (b / full);
        auto facts = result.weightFacts.find(w);
        double replicas =
            facts == result.weightFacts.end() ? 1.0 : static_cast<double>(facts->second.replicas);
        stageParams[s] += params;
        stageParamBytes[s] += b;
        stageShardedParams[s] += params / replicas;
        stageShardedParamBytes[s] += b / replicas;
      }
    }
    st.parameters = stageParams[s];
    // What a recomputed region produces is re-run in the backward, not kept;
    // one region's results are live at once while its backward runs.
    DenseMap<unsigned, double> regionBytes;
    SmallVector<Value> rerun;
    for (Value v : saved)
      if (Operation *def = v.getDefiningOp();
          def && opIndex.count(def) && ops[opIndex.lookup(def)].recompute &&
          stageOfValue(v) == s) {
        rerun.push_back(v);
        regionBytes[regions.regionOf.lookup(def)] += bytesOf(v);
      }
    for (Value v : rerun)
      saved.erase(v);
    SmallVector<Value> returnedHere;
    for (size_t idx : stageOps[s])
      for (Value r : ops[idx].op->getResults())
        if (returned.contains(r)) {
          returnedHere.push_back(r);
          saved.insert(r);
        }
    for (auto &[region, bytes] : regionBytes)
      live[s].regionWorkingSet = std::max(live[s].regionWorkingSet, bytes);
    for (Value v : saved)
      live[s].savedBytes += bytesOf(v);

    // Forward liveness: temporaries, and the cut points full recomputation
    // checkpoints (positions where a single activation is live).
    double liveBytes = 0, liveNotSaved = 0, segmentSaved = 0;
    int64_t liveCount = 0;
    SmallVector<Value> checkpoints; // what full recomputation keeps
    DenseMap<size_t, SmallVector<Value>> dies;
    for (auto &[v, pos] : lastUse)
      if (pos != SIZE_MAX)
        dies[pos].push_back(v);
    // Stage inputs are live from the start.
    DenseSet<Value> counted;
    for (auto &[v, pos] : lastUse) {
      Operation *def = v.getDefiningOp();
      bool fromEarlier = !def || (opIndex.count(def) && ops[opIndex[def]].stage < s);
      if (fromEarlier) {
        counted.insert(v);
        liveBytes += bytesOf(v);
        ++liveCount;
        live[s].checkpointBytes += bytesOf(v);
        checkpoints.push_back(v);
        if (!saved.contains(v))
          liveNotSaved += bytesOf(v);
      }
    }
    for (auto [pos, idx] : llvm::enumerate(stageOps[s])) {
      OpInfo &info = ops[idx];
      for (Value r : info.op->getResults())
        if (isActivation(r) && lastUse.count(r) && !counted.contains(r)) {
          counted.insert(r);
          liveBytes += bytesOf(r);
          ++liveCount;
          if (!saved.contains(r))
            liveNotSaved += bytesOf(r);
        }
      if (info.hasBackward)
        for (Value r : info.op->getResults())
          if (saved.contains(r) && !returned.contains(r))
            segmentSaved += bytesOf(r);
      if (liveNotSaved > live[s].forwardTemporaries) {
        live[s].forwardTemporaries = liveNotSaved;
        live[s].peakTemporaryAt = describe(info.op);
      }
      live[s].forwardLive = std::max(live[s].forwardLive, liveBytes);
      for (Value v : dies.lookup(pos)) {
        liveBytes -= bytesOf(v);
        --liveCount;
        if (!saved.contains(v))
          liveNotSaved -= bytesOf(v);
      }
      // A cut: one activation (this op's result) carries everything onward.
      // (A value leaving the stage is the next stage's input, kept there.)
      if (liveCount == 1 && info.op->getNumResults() == 1 &&
          lastUse.count(info.op->getResult(0)) &&
          lastUse.lookup(info.op->getResult(0)) != pos &&
          lastUse.lookup(info.op->getResult(0)) != SIZE_MAX) {
        live[s].checkpointBytes += bytesOf(info.op->getResult(0));
        checkpoints.push_back(info.op->getResult(0));
        live[s].recomputeWorkingSet =
            std::max(live[s].recomputeWorkingSet, segmentSaved);
        segmentSaved = 0;
      }
    }
    live[s].recomputeWorkingSet = std::max(live[s].recomputeWorkingSet, segmentSaved);
    for (Value r : returnedHere)
      if (!llvm::is_contained(checkpoints, r)) {
        live[s].checkpointBytes += bytesOf(r);
        checkpoints.push_back(r);
      }
    const bool keepCheckpoints =
        fullRecompute && live[s].checkpointBytes < live[s].savedBytes;
    st.savedActivationBytes =
        keepCheckpoints ? live[s].checkpointBytes : live[s].savedBytes;
    SmallVector<Value> kept = keepCheckpoints
                                  ? checkpoints
                                  : SmallVector<Value>(saved.begin(), saved.end());
    if (training)
      result.keptActivations.insert(kept.begin(), kept.end());
    if (offload && failed(offloadActivations(s, kept)))
      return failure();
  }

  // Bytes re-run in the backward and live at once: the largest segment under
  // full recomputation (which re-runs marked regions inside its segments).
  auto recomputeWorkingSet = [&](const StageLiveness &l) {
    return fullRecompute ? l.recomputeWorkingSet : l.regionWorkingSet;
  };

  // Point-to-point transfers between consecutive stages along the pipeline
  // axis (the span of two neighbours on that axis), and, once a step, the
  // exchange of a weight's gradient sums between the pipeline devices
  // reading it (a tied embedding).
  SmallVector<double> exchangeSeconds(P, 0);
  if (grid.pipelineAxis >= 0 && S > 1) {
    AxisSpan neighbours = grid.spans[grid.pipelineAxis];
    for (auto &m : neighbours.membersPerLevel)
      m = 1;
    int outer = grid.spans[grid.pipelineAxis].outermostLevel();
    if (outer >= 0)
      neighbours.membersPerLevel[outer] = 2;
    for (int64_t s = 0; s + 1 < S; ++s) {
      double t = ::loom::collectiveCost(result.cluster, CollectiveKind::SendRecv,
                                        boundaryBytes[s], neighbours,
                                        ::loom::CollectiveAlgorithm::Auto,
                                        calibration ? &*calibration : nullptr)
                     .seconds;
      result.stageEstimates[s].sendForward = t;
      if (t > 0)
        charged[s].push_back({CollectiveKind::SendRecv, boundaryBytes[s], t, false});
      if (training) {
        result.stageEstimates[s + 1].sendBackward = t;
        if (t > 0)
          charged[s + 1].push_back(
              {CollectiveKind::SendRecv, boundaryBytes[s], t, false});
      }
    }
    // Each sends its sum in the update's layout (a ZeRO shard of it) and
    // receives the other's: float32 for a 16-bit weight summed over
    // micro-batches.
    for (auto &[w, devices] : sharedAcrossDevices) {
      if (!training || !needsGrad.contains(w->getResult(0)))
        continue;
      double bytes = bytesOf(w->getResult(0));
      if (auto facts = result.weightFacts.find(w);
          options.zeroStage >= 1 && facts != result.weightFacts.end())
        bytes /= static_cast<double>(facts->second.replicas);
      double element =
          elementBytes(getElementTypeOrSelf(w->getResult(0).getType()));
      bytes *=
          gradientBytesPerParameter(element, result.accumulatesGradients()) /
          element;
      double t = ::loom::collectiveCost(
                     result.cluster, CollectiveKind::SendRecv, bytes,
                     neighbours, ::loom::CollectiveAlgorithm::Auto,
                     calibration ? &*calibration : nullptr)
                     .seconds;
      for (int64_t d : devices) {
        exchangeSeconds[d] += t;
        if (t > 0 && d < S) // (its send, with the device's first stage)
          charged[d].push_back({CollectiveKind::SendRecv, bytes, t,
                                /*perStep=*/true, /*afterBackward=*/true});
      }
    }
  }

  // ZeRO-3 gathers every parameter before its forward and its backward, per
  // micro-batch; prefetching hides it behind the stage's compute.
  if (training && options.zeroStage == 3)
    for (int64_t s = 0; s < S; ++s) {
      StageEstimate &st = result.stageEstimates[s];
      // Two all-gathers of the stage's parameters, each half an all-reduce's
      // traffic: about one micro-batch's synchronisation time.
      double gather = st.gradSync - (m - 1) * st.gradReduceEachMicroBatch;
      double exposed = std::max(0.0, gather - (st.forward + st.backward));
      st.forward += exposed / 2;
      st.backward += exposed / 2;
      st.forwardComm += exposed / 2;
      st.backwardComm += exposed / 2;
    }

  // The pipeline.
  SmallVector<::loom::StageCost> stageCosts;
  for (const StageEstimate &st : result.stageEstimates)
    stageCosts.push_back({st.forward, training ? st.backward : 0.0,
                          st.sendForward, st.sendBackward});
  ::loom::PipelineOptions popts;
  // One device runs gradient accumulation; the schedule still decides how
  // many micro-batches it holds (GPipe all of them, 1F1B one).
  popts.schedule = options.schedule;
  if (result.virtualStages > 1 &&
      options.schedule != ::loom::PipelineSchedule::Interleaved1F1B)
    return error(func) << result.stages << " stages on " << P
                       << " pipeline devices need schedule=interleaved";
  popts.microBatches = m;
  popts.devices = P;
  popts.kfkbGroup = options.kfkbGroup;
  popts.training = training;
  auto pipe = ::loom::simulatePipeline(stageCosts, popts);
  if (!pipe)
    return error(func) << llvm::toString(pipe.takeError());
  result.pipelineTime = pipe->makespan;
  result.bubbleFraction = pipe->bubbleFraction;

  // Per pipeline device: its stages' static memory, the end of its last task,
  // gradient synchronisation and the optimizer step.
  const ::loom::DeviceSpec &dev = result.cluster.device;
  const std::vector<double> &finish = pipe->finish;
  result.deviceTimes.assign(P, {});
  for (DeviceTimes &times : result.deviceTimes)
    times.firstForwardStart = INFINITY;
  result.deviceOrders.assign(P, {});
  for (const ::loom::PipelineTask &t : pipe->tasks) {
    result.deviceOrders[t.device].push_back(
        {static_cast<int32_t>(t.stage / P), static_cast<int32_t>(t.microBatch),
         t.backward});
    if (!t.backward) {
      DeviceTimes &times = result.deviceTimes[t.device];
      times.firstForwardStart = std::min(times.firstForwardStart, t.start);
    }
  }
  for (auto [d, times] : llvm::enumerate(result.deviceTimes)) {
    times.finish = finish[d];
    if (!std::isfinite(times.firstForwardStart))
      times.firstForwardStart = 0;
  }
  result.deviceMemory.assign(P, {});
  double step = 0;
  for (int64_t d = 0; d < P; ++d) {
    DeviceMemory &mem = result.deviceMemory[d];
    mem.device = d;
    double sync = 0, eachMicroBatch = 0, lastBackward = 0, params = 0,
           paramBytes = 0, shardedParams = 0, shardedParamBytes = 0,
           weights = 0, temp = 0, comm = 0;
    std::string tempAt;
    for (int64_t s = d; s < S; s += P) {
      StageEstimate &st = result.stageEstimates[s];
      sync += st.gradSync;
      eachMicroBatch += st.gradReduceEachMicroBatch;
      lastBackward += st.backward - st.backwardComm;
      params += stageParams[s];
      paramBytes += stageParamBytes[s];
      shardedParams += stageShardedParams[s];
      shardedParamBytes += stageShardedParamBytes[s];
      weights += stageWeights[s];
      // Offloaded, the kept activations are temporaries of the forward too.
      double work = offload ? live[s].forwardLive : live[s].forwardTemporaries;
      if (training)
        work = std::max(work, recomputeWorkingSet(live[s]));
      if (work > temp) {
        temp = work;
        tempAt = live[s].peakTemporaryAt;
      }
      comm = std::max(comm, 2 * boundaryBytes[s]);
      for (const ChargedCollective &c : charged[s])
        if (!c.afterBackward)
          comm = std::max(comm, c.bytes);
    }
    // Largest per-op gradient working set in backward.
    if (training)
      for (int64_t s = d; s < S; s += P)
        for (size_t idx : stageOps[s])
          if (ops[idx].hasBackward)
            temp = std::max(temp, ops[idx].footprint + recomputeWorkingSet(live[s]));
    // The last micro-batch's backward hides what is synchronised once a
    // step and its own reduce-scatter; each earlier one its own.
    double lastSync = sync - (m - 1) * eachMicroBatch;
    double earlier =
        (m - 1) * (options.overlapGradSync
                       ? std::max(0.0, eachMicroBatch - lastBackward)
                       : eachMicroBatch);
    // (The exchange of shared weights' sums waits for both devices' last
    // backward: nothing hides it.)
    double exposed =
        earlier +
        (options.overlapGradSync ? std::max(0.0, lastSync - lastBackward)
                                 : lastSync) +
        exchangeSeconds[d];
    // Adam streams 28 bytes per parameter (fp32 master, two moments, the
    // gradient and the low-precision copy), bandwidth-bound.
    // With ZeRO each device updates its own shard of every parameter.
    double updated = options.zeroStage >= 1 ? shardedParams : params;
    double optimizer =
        training ? updated * 28.0 /
                       (dev.memoryBandwidth * dev.eff(OpClass::Elementwise).memory)
                 : 0.0;
    for (int64_t s = d; s < S; s += P) {
      result.stageEstimates[s].gradSyncExposed = exposed;
      result.stageEstimates[s].optimizerStep = optimizer;
    }
    step = std::max(step, finish[d] + exposed + optimizer);
    result.deviceTimes[d].gradSyncExposed = exposed;
    result.deviceTimes[d].earlierReducesExposed = earlier;
    result.deviceTimes[d].optimizerStep = optimizer;

    // Memory: parameters in their element type; in training, gradients of
    // the same size (float32 sums of 16-bit ones where the step accumulates
    // them) and Adam state (fp32 master copy when the parameters are
    // 16-bit, and two fp32 moments), each parameter's divided by ZeRO over
    // its replicas. Only trainable parameters have gradients and optimizer
    // state (and ZeRO-3 shards); buffers are held whole but not trained.
    double bytesPerParam = params > 0 ? paramBytes / params : 4;
    mem.memory.weights = weights;
    if (training) {
      mem.memory.gradients =
          (options.zeroStage >= 2 ? shardedParamBytes : paramBytes) *
          gradientBytesPerParameter(bytesPerParam,
                                    result.accumulatesGradients()) /
          bytesPerParam;
      mem.memory.optimizer = (options.zeroStage >= 1 ? shardedParams : params) *
                             adamStateBytesPerParameter(bytesPerParam);
      if (options.zeroStage >= 3)
        mem.memory.weights = weights - paramBytes + shardedParamBytes;
    }
    int64_t inFlight = 0;
    double actBytes = 0;
    if (training) {
      for (auto [chunk, n] : llvm::enumerate(pipe->peakInFlight[d])) {
        int64_t s = d + static_cast<int64_t>(chunk) * P;
        inFlight += n;
        if (s < S) {
          actBytes += n * result.stageEstimates[s].savedActivationBytes;
          mem.hostActivationBytes += n * result.stageEstimates[s].offloadedActivationBytes;
        }
      }
    }
    // Offloaded, the device holds one task's staging buffers at a time,
    // besides what each micro-batch keeps there.
    double staging = 0;
    if (offload)
      for (int64_t s = d; s < S; s += P)
        staging = std::max(staging, live[s].offloadBuffers);
    actBytes += staging;
    mem.microBatchesInFlight = inFlight;
    mem.memory.activations = actBytes;
    mem.memory.temporaries = temp;
    mem.memory.commBuffers = comm;
    if (training)
      mem.peakAt = llvm::formatv("backward with {0} micro-batch(es) in flight; "
                                 "largest working set at {1}",
                                 inFlight, tempAt.empty() ? "-" : tempAt);
    else
      mem.peakAt = "forward; largest working set at " + (tempAt.empty() ? "-" : tempAt);

    // Timeline: static memory plus activations held, at each task boundary.
    double base = mem.memory.weights + mem.memory.gradients +
                  mem.memory.optimizer + mem.memory.commBuffers +
                  staging;
    double held = 0;
    mem.timeline.push_back({0.0, base});
    for (const ::loom::PipelineTask &t : pipe->tasks) {
      if (t.device != d || !training)
        continue;
      double a = result.stageEstimates[t.stage].savedActivationBytes;
      held += t.backward ? -a : a;
      mem.timeline.push_back({t.end, base + held});
    }
    // Keep reports small: at most kTimelinePoints, evenly thinned.
    constexpr size_t kTimelinePoints = 2048;
    if (mem.timeline.size() > kTimelinePoints) {
      std::vector<std::pair<double, double>> thinned;
      double stride = double(mem.timeline.size()) / kTimelinePoints;
      for (size_t k = 0; k < kTimelinePoints; ++k)
        thinned.push_back(mem.timeline[size_t(k * stride)]);
      thinned.push_back(mem.timeline.back());
      mem.timeline = std::move(thinned);
    }
  }
  result.stepTime = step;

  // What memory placement reads: each weight's shard, and each costed op's
  // stage, times and local results.
  for (const OpInfo &info : ops) {
    if (isa<WeightOp>(info.op)) {
      WeightFacts &facts = result.weightFacts[info.op];
      facts.localBytes = bytesOf(info.op->getResult(0));
      facts.hasGradient = needsGrad.contains(info.op->getResult(0));
      continue;
    }
    if (!isCostedOp(info.op))
      continue;
    OpFacts &facts = result.opFacts[info.op];
    facts.stage = info.stage;
    facts.forwardSeconds = info.fwdTime + info.fwdComm;
    facts.forwardStall = info.offloadForwardStall;
    facts.backwardStall = info.offloadBackwardStall;
    facts.hasBackward = info.hasBackward;
    if (info.hasBackward) {
      facts.backwardSeconds = info.bwdTime + info.bwdComm;
      facts.recomputed = fullRecompute || info.recompute;
    }
    for (Value r : info.op->getResults())
      facts.resultBytes.push_back(bytesOf(r));
  }
  for (BlockArgument arg : func.getArguments())
    result.argumentBytes.push_back(bytesOf(arg));

  // FLOPs: model FLOPs count forward and backward once; hardware FLOPs add
  // the recomputed forward.
  double fwd = 0, bwd = 0, recomputed = 0;
  for (const OpInfo &info : ops) {
    fwd += info.globalFwdFlops;
    if (training && info.hasBackward) {
      bwd += info.globalBwdFlops;
      if (fullRecompute || info.recompute)
        recomputed += info.globalFwdFlops;
    }
  }
  // The IR holds one micro-batch for every data-parallel replica; ops the
  // plan replicates are still counted once.
  result.modelFlops = m * (fwd + bwd);
  result.hardwareFlops = m * (fwd + bwd + recomputed);

  // The peak the device quotes for the precision carrying most FLOPs.
  DenseMap<unsigned, double> flopsByPrecision;
  for (const OpInfo &info : ops)
    if (info.op->getNumResults())
      flopsByPrecision[unsigned(precisionOf(
          getElementTypeOrSelf(info.op->getResult(0).getType())))] +=
          info.globalFwdFlops;
  Precision dominant = Precision::FP32;
  double most = -1;
  for (auto &[p, f] : flopsByPrecision)
    if (f > most) {
      most = f;
      dominant = static_cast<Precision>(p);
    }
  result.peakFlopsPerDevice =
      dev.peak(dominant) > 0 ? dev.peak(dominant) : dev.peak(Precision::FP32);

  // Per op class and per collective kind (busiest pipeline device).
  for (const OpInfo &info : ops) {
    if (!isa<CostOpInterface>(info.op) || isa<WeightOp, ConstantOp>(info.op))
      continue;
    OpClassTotals &c = result.opClasses[::loom::stringifyOpClass(info.cls).str()];
    ++c.count;
    c.flops += info.fwdFlops;
    c.bytes += info.fwdBytes;
    c.forward += info.fwdTime;
    c.backward += info.bwdTime +
                  (info.hasBackward && (fullRecompute || info.recompute) ? info.fwdTime : 0);
    c.comm += info.fwdComm + info.bwdComm;
  }
  std::vector<std::map<std::string, CollectiveTotals>> perDevice(P);
  std::vector<double> commPerDevice(P, 0);
  for (int64_t s = 0; s < S; ++s)
    for (const ChargedCollective &c : charged[s]) {
      double times = c.perStep ? 1 : static_cast<double>(m);
      CollectiveTotals &t =
          perDevice[s % P][::loom::stringifyCollectiveKind(c.kind).str()];
      t.count += static_cast<int64_t>(times);
      t.bytes += times * c.bytes;
      t.seconds += times * c.seconds;
      commPerDevice[s % P] += times * c.seconds;
    }
  int64_t busiest = std::max_element(commPerDevice.begin(), commPerDevice.end()) -
                    commPerDevice.begin();
  result.collectives = perDevice[busiest];
  result.commSeconds = commPerDevice[busiest];
  double exposedComm = 0;
  for (const StageEstimate &st : result.stageEstimates)
    if (st.device == busiest)
      exposedComm += m * (st.forwardComm + st.backwardComm) + st.gradSyncExposed / result.virtualStages;
  result.exposedCommSeconds = exposedComm;

  double peak = result.peakMemory();
  if (peak > dev.memoryBytes)
    result.notes.push_back(llvm::formatv(
        "does not fit: peak {0:F2} GiB per device exceeds the {1:F2} GiB of a {2}",
        peak / (1ull << 30), dev.memoryBytes / (1ull << 30), dev.name));
  return success();
}

LogicalResult Estimator::run() {
  auto start = std::chrono::steady_clock::now();
  result.options = options;
  if (failed(resolveCluster()) || failed(resolveGrid()) || failed(propagate()) ||
      failed(resolveBatch()) || failed(collectOps()) || failed(costOps()) ||
      failed(assemble()))
    return failure();
  if (options.annotateOps) {
    Builder b(module.getContext());
    for (const OpInfo &info : ops) {
      if (!isCostedOp(info.op))
        continue;
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("class", b.getStringAttr(::loom::stringifyOpClass(info.cls))),
          b.getNamedAttr("flops", b.getF64FloatAttr(info.fwdFlops)),
          b.getNamedAttr("bytes", b.getF64FloatAttr(info.fwdBytes)),
          b.getNamedAttr("time_us", b.getF64FloatAttr(info.fwdTime * 1e6)),
          b.getNamedAttr("comm_us", b.getF64FloatAttr(info.fwdComm * 1e6))};
      if (info.hasBackward) {
        attrs.push_back(b.getNamedAttr("bwd_flops", b.getF64FloatAttr(info.bwdFlops)));
        attrs.push_back(b.getNamedAttr("bwd_time_us", b.getF64FloatAttr(info.bwdTime * 1e6)));
        attrs.push_back(b.getNamedAttr("bwd_comm_us", b.getF64FloatAttr(info.bwdComm * 1e6)));
      }
      if (info.gradSync > 0)
        attrs.push_back(b.getNamedAttr("grad_sync_us", b.getF64FloatAttr(info.gradSync * 1e6)));
      info.op->setAttr("loom.cost", b.getDictionaryAttr(attrs));
    }
  }
  result.estimateSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return success();
}

FailureOr<Estimate> mlir::loom::estimateModule(ModuleOp module,
                                               const EstimateOptions &options) {
  Estimate result;
  Estimator estimator(module, options, result);
  if (failed(estimator.run()))
    return failure();
  return result;
}
