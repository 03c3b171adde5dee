//===- Placement.cpp - where model state lives, planned statically --------===//
//
// Reads the cost model's per-op times, per-weight shards and memory
// breakdown (Estimate's opFacts, weightFacts, deviceMemory), lists for each
// ZeRO stage the placements ZeRO-Offload, ZeRO-Infinity and PatrickStar
// choose between (everything on the device; the optimizer state and its
// step on the host or NVMe; parameters streamed in chunks as well), prices each
// from the cluster's links, CPU Adam rate and NVMe bandwidth, and keeps the
// fastest that fits. For streamed parameters the chunk size is chosen by
// planning and timing each candidate size (ChunkSchedule.h) and the chosen
// schedule is replayed by the simulator before it is accepted.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/Placement.h"

#include "loom/Memory/Movement.h"
#include "loom/Memory/ZeroShards.h"

#include "DeviceProgram.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Cost/Estimate.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

using namespace mlir;
using namespace mlir::loom;
namespace lm = ::loom::memory;

llvm::StringRef mlir::loom::tierName(Tier t) {
  switch (t) {
  case Tier::Device:
    return "device";
  case Tier::Host:
    return "host";
  case Tier::Nvme:
    return "nvme";
  }
  return "?";
}

/// A tier as the shortfalls name it.
static StringRef tierLabel(Tier t) { return t == Tier::Nvme ? "NVMe" : tierName(t); }

using namespace mlir::loom::placement;

/// Whether the backward re-runs `op`, as autodiff reads the plan once it
/// is written: ops marked loom.recompute, and the estimator's recomputed
/// ops with a result it does not keep (full recomputation keeps its cut
/// points), but never one whose results the step returns (it holds them);
/// an annotation of a re-run value is re-run with it.
static bool rerunByBackward(Operation *op, const Estimate &e) {
  if (auto s = dyn_cast<shard::ShardOp>(op)) {
    Operation *def = s.getSrc().getDefiningOp();
    return def && rerunByBackward(def, e);
  }
  if (resultsHeldByStep(op))
    return false;
  if (op->hasAttr(kRecomputeMark))
    return true;
  auto facts = e.opFacts.find(op);
  return facts != e.opFacts.end() && facts->second.recomputed &&
         llvm::any_of(op->getResults(),
                      [&](Value r) { return !e.keptActivations.contains(r); });
}

/// Places the re-run of each recomputed step of `dev` that the backward
/// re-runs (those with a point, recomputePoints): before the backward of
/// the last of `dev`'s steps at or before its point, which is where the
/// backward reaches the point (a point that is no step of its own comes
/// after the backward of the step after it and before the movement of the
/// one before). Re-runs before one backward go in the order the backward
/// reaches their points, then in program order. The others (cut points
/// full recomputation keeps) re-run, as the estimator charges them, within
/// their own backward.
static void chargeRecomputation(Block &body, DeviceProgram &dev,
                                const DenseMap<Operation *, Operation *> &points) {
  DenseMap<Operation *, int64_t> indexOf, programOrder;
  for (auto [i, s] : llvm::enumerate(dev.steps))
    indexOf[s.op] = static_cast<int64_t>(i);
  for (auto [k, op] : llvm::enumerate(body))
    programOrder[&op] = static_cast<int64_t>(k);
  std::map<int64_t, SmallVector<std::pair<std::pair<int64_t, int64_t>, int64_t>>> groups;
  for (auto [i, s] : llvm::enumerate(dev.steps)) {
    if (!s.recomputed)
      continue;
    Operation *point = points.lookup(s.op);
    if (!point) {
      s.backward += s.rerunSeconds;
      continue;
    }
    int64_t group = static_cast<int64_t>(i);
    for (Operation *at = point; at; at = at->getPrevNode())
      if (auto found = indexOf.find(at); found != indexOf.end()) {
        if (dev.steps[found->second].stage == s.stage)
          group = std::max(group, found->second);
        break;
      }
    s.rerunAt = group;
    dev.steps[group].rerunsBefore += s.rerunSeconds;
    groups[group].push_back({{-programOrder.lookup(point), programOrder.lookup(s.op)},
                             static_cast<int64_t>(i)});
  }
  for (auto &[group, reruns] : groups) {
    llvm::sort(reruns);
    for (auto [rank, rerun] : llvm::enumerate(reruns))
      dev.steps[rerun.second].rerunRank = static_cast<int64_t>(rank);
  }
}

static IterationLayout layoutIteration(ArrayRef<OpStep> steps, bool training) {
  IterationLayout layout;
  const size_t n = steps.size();
  layout.forwardAt.assign(n, -1);
  layout.rerunAt.assign(n, -1);
  layout.backwardAt.assign(n, -1);
  auto place = [&](IterationLayout::Kind kind, size_t k) {
    int64_t at = static_cast<int64_t>(layout.positions.size());
    layout.positions.push_back({kind, static_cast<int64_t>(k)});
    return at;
  };
  for (size_t k = 0; k < n; ++k)
    layout.forwardAt[k] = place(IterationLayout::Kind::Forward, k);
  if (!training)
    return layout;
  std::vector<SmallVector<size_t>> before(n);
  for (size_t k = 0; k < n; ++k)
    if (steps[k].rerunAt >= 0)
      before[steps[k].rerunAt].push_back(k);
  for (size_t g = n; g-- > 0;) {
    llvm::sort(before[g], [&](size_t a, size_t b) {
      return steps[a].rerunRank < steps[b].rerunRank;
    });
    for (size_t k : before[g])
      layout.rerunAt[k] = place(IterationLayout::Kind::Rerun, k);
    layout.backwardAt[g] = place(IterationLayout::Kind::Backward, g);
  }
  return layout;
}

/// What a placement's name gains for the policy it was priced under, as
/// the placement table lists it: "params device, optimizer host" +
/// " + selective recompute + 3 of 18 segments recomputed + ZeRO-2".
static std::string policySuffix(RecomputeMode recompute,
                                const ChosenSegments *recomputed,
                                const ChosenSegments *offloaded, Tier activations,
                                int64_t dataParallel, int zero) {
  std::string suffix;
  if (recompute == RecomputeMode::Full)
    suffix += " + recompute";
  else if (recompute == RecomputeMode::Selective)
    suffix += " + selective recompute";
  if (recomputed)
    suffix += llvm::formatv(" + {0} of {1} segments recomputed", recomputed->chosen,
                            recomputed->segments);
  if (offloaded)
    suffix += llvm::formatv(" + activations of {0} of {1} segments on the host",
                            offloaded->chosen, offloaded->segments);
  else if (activations == Tier::Host)
    suffix += " + activations on the host";
  if (dataParallel > 1)
    suffix += llvm::formatv(" + ZeRO-{0}", zero);
  return suffix;
}

/// Whether a refused placement is followed by a smaller one of its kind
/// rather than refused by name: a split of the optimizer (keeping less of
/// it on the device) or streamed parameters (on a smaller budget). Their
/// successors keep the name.
static bool shrinksWhenRefused(const PlacementCandidate &c) {
  return !c.deviceOptimizerWeights.empty() || c.params != Tier::Device;
}

namespace {
/// A placement refused after its static memory plan's replay: the tier it
/// overflowed, by how much, and why in words.
struct Rejection {
  std::string why;
  Tier tier = Tier::Device;
  double shortBytes = 0;
  size_t device = 0; // the pipeline device whose plan overflowed
};
/// The placements refused so far, by full name (with its policySuffix),
/// and, per policy, the most gradient and optimizer state bytes a split of
/// the optimizer may keep on a device: a refused split's, less what its
/// replay found the device short by. The next split under that policy
/// keeps less (at least one tensor fewer) rather than being given up.
struct Rejections {
  std::map<std::string, Rejection> byName;
  std::map<std::string, double> splitCap;
  /// Per policy, the least a refused split kept on its overflowing device.
  std::map<std::string, double> splitKept;
  /// Per policy, how much less device memory streamed parameters' chunk
  /// schedules get after refusals (what the refused ones' replays lacked,
  /// doubled with each refusal: chunks are whole, so a budget a little
  /// smaller often keeps the same chunks where the replay overflowed),
  /// and how many were refused.
  std::map<std::string, double> streamShort;
  std::map<std::string, int> streamRefusals;

  /// What an evaluation under `policy` reads of the above (besides the
  /// refusals of its placements by name).
  double splitCapOf(const std::string &policy) const {
    auto it = splitCap.find(policy);
    return it == splitCap.end() ? INFINITY : it->second;
  }
  double streamShortOf(const std::string &policy) const {
    auto it = streamShort.find(policy);
    return it == streamShort.end() ? 0 : it->second;
  }
};
} // namespace

/// Every placement under one activation policy (`recompute`: none,
/// selective or full, as the estimator models it, plus the segments of
/// `partialRecompute`; kept activations on `activations`, only those of
/// `partialOffload`'s segments when given) and one ZeRO stage, with the
/// chosen one's chunk schedule replayed. Each placement is priced on every pipeline
/// device; it fits when it fits on all of them, and its step is the
/// slowest device's. Nothing is written to the IR.
static FailureOr<MemoryPlacement> evaluate(ModuleOp module, func::FuncOp func,
                                           const PlacementOptions &o,
                                           StringRef recompute, int zero,
                                           Tier activations, const Rejections &rejected,
                                           const ChosenSegments *partialRecompute = nullptr,
                                           const ChosenSegments *partialOffload = nullptr) {
  const bool offloaded = activations == Tier::Host;
  EstimateOptions eo;
  eo.activations = offloaded ? "host" : "device";
  eo.cluster = o.cluster;
  eo.training = o.training;
  eo.globalBatch = o.globalBatch;
  eo.precision = o.precision;
  eo.recompute = recompute.str();
  if (partialRecompute)
    eo.recomputeOps = partialRecompute->ops;
  if (partialOffload)
    for (const auto &entry : partialOffload->ops)
      eo.offloadFrom.insert(entry.first);
  eo.zeroStage = zero;
  eo.schedule = o.schedule;
  eo.kfkbGroup = o.kfkbGroup;
  FailureOr<Estimate> estimate = estimateModule(module, eo);
  if (failed(estimate))
    return failure();
  const Estimate &e = *estimate;
  std::optional<::loom::Precision> forced;
  if (o.precision != "ir")
    forced = ::loom::parsePrecision(o.precision);
  const int64_t P = e.pipelineDevices, m = e.microBatches;
  // Whether the step sums each gradient over the runtime's calls (several
  // micro-batches, or a pipeline's, even of one).
  const bool accumulates = e.accumulatesGradients();
  // The chunk schedule follows one device's pass of forward and backward
  // steps, so parameters are streamed in one-device programs (not over a
  // pipeline); a step of several micro-batches repeats the pass, each
  // micro-batch fetching the chunks again and the host summing their
  // gradients.
  // Movement is written into the IR around the ops that read each weight,
  // so a program whose weights are read through shard annotations (a
  // one-device grid) keeps them resident.
  bool annotated = false;
  func.walk([&](shard::ShardOp) { annotated = true; });
  // Offloaded activations come back over the link the chunks' fetches
  // use: the chunk schedule times both (Step::reloadBytes).
  // With PlacementOptions::streamSharded, a data-parallel program of one
  // micro-batch under ZeRO-3 streams its parameters in shards too
  // (each fetch uploads a device's shard and gathers the chunk). Its
  // offloaded activations take their device's share of the node's host,
  // beside its shards (the optimizer's split below counts them).
  const bool streamedInShards = o.streamSharded && o.training && zero >= 3 &&
                                e.devices > 1 && P == 1 && m == 1;
  const bool streamable = (e.devices == 1 && !annotated) || streamedInShards;

  // Each pipeline device's steps in program order (the ops the estimator
  // costed), with the weights each reads.
  std::vector<DeviceProgram> devices(P);
  for (auto [d, dev] : llvm::enumerate(devices)) {
    dev.device = static_cast<int64_t>(d);
    dev.times = e.deviceTimes[d];
    const MemoryBreakdown &mem = e.deviceMemory[d].memory;
    dev.otherBytes = mem.activations + mem.temporaries + mem.commBuffers;
    dev.commBytes = mem.commBuffers;
    dev.hostActivationBytes = e.deviceMemory[d].hostActivationBytes;
  }
  for (auto [d, dev] : llvm::enumerate(devices))
    if (d < e.deviceOrders.size())
      dev.order = e.deviceOrders[d];
  for (const StageEstimate &st : e.stageEstimates)
    devices[st.device].activationTraffic +=
        static_cast<double>(m) * st.offloadedActivationBytes;
  func.walk([&](Operation *op) {
    auto found = e.opFacts.find(op);
    if (found == e.opFacts.end())
      return;
    const OpFacts &facts = found->second;
    OpStep s{op};
    s.forward = facts.forwardSeconds + facts.forwardStall;
    s.backward = o.training ? facts.backwardSeconds + facts.backwardStall : 0;
    s.backwardStall = o.training ? facts.backwardStall : 0;
    // A recomputed op re-runs its forward in the backward, reading the same
    // weights (full recomputation: the estimator charges its cut points
    // too, slightly pessimistic); chargeRecomputation places that.
    s.hasBackward = o.training && facts.hasBackward;
    // A mark re-runs an op whatever the estimator's policy (one without a
    // backward included: autodiff re-runs it where a backward reads it).
    s.recomputed = o.training && (facts.recomputed || (op->hasAttr(kRecomputeMark) &&
                                                       !resultsHeldByStep(op)));
    if (s.recomputed)
      s.rerunSeconds = facts.forwardSeconds;
    s.resultBytes.assign(facts.resultBytes.begin(), facts.resultBytes.end());
    s.stage = facts.stage;
    DeviceProgram &dev = devices[facts.stage % P];
    // What its stage receives from another device's stages (a value from
    // another stage of this device stays a value, loom-split-stages).
    for (Value v : op->getOperands()) {
      Value source = lookThroughShards(v);
      auto r = dyn_cast<OpResult>(source);
      if (!r)
        continue;
      auto producer = e.opFacts.find(r.getOwner());
      if (producer != e.opFacts.end() &&
          producer->second.stage % P != facts.stage % P &&
          r.getResultNumber() < producer->second.resultBytes.size()) {
        dev.receivedBytes[source] = producer->second.resultBytes[r.getResultNumber()];
        // (Its gradient comes back where this reader's backward makes one.)
        if (o.training && facts.hasBackward &&
            isa<FloatType>(getElementTypeOrSelf(source.getType())))
          devices[producer->second.stage % P].sentValues.insert(source);
      }
    }
    for (Value v : op->getOperands())
      if (auto w = lookThroughShards(v).getDefiningOp<WeightOp>()) {
        if (!llvm::is_contained(s.weights, w))
          s.weights.push_back(w);
        if (dev.weights.count(w))
          continue;
        HeldWeight &h = dev.weights[w];
        h.facts = e.weightFacts.lookup(w);
        h.bytes = h.facts.localBytes;
        h.elementBytes = elementBytes(w.getType().getElementType(), forced);
        h.masterCopy = updatesThroughMasterCopy(w.getType().getElementType());
        h.gradientWidening = gradientBytesPerParameter(
                                 h.elementBytes, e.accumulatesGradients()) /
                             h.elementBytes;
        h.trainable = h.facts.hasGradient;
        // ZeRO shards a weight's optimizer state (stage 1), gradient (2)
        // and the parameter itself (3) over the replicas its gradient is
        // reduced over: the data-parallel axes, not an expert axis that
        // already splits it.
        // ZeRO keeps whole what it cannot divide into even shards
        // (ZeroShards.h), and the program holds it so: its state, gradient
        // and parameters alike.
        double replicas = static_cast<double>(h.facts.replicas);
        ::loom::SplitDims layout;
        bool even = zero >= 1 && replicas > 1 &&
                    zeroShardLayout(w, h.facts, layout).empty();
        h.stateShards = even ? replicas : 1;
        h.gradientShards = even && zero >= 2 ? replicas : 1;
        h.held =
            even && zero >= 3 && h.trainable ? h.bytes / replicas : h.bytes;
      }
    dev.steps.push_back(std::move(s));
  });
  if (o.training) {
    DenseMap<Operation *, Operation *> points =
        recomputePoints(func.getBody().front(),
                        [&](Operation *op) { return rerunByBackward(op, e); });
    for (DeviceProgram &dev : devices)
      chargeRecomputation(func.getBody().front(), dev, points);
  }
  for (DeviceProgram &dev : devices)
    dev.layout = layoutIteration(dev.steps, o.training);

  MemoryPlacement p;
  p.clusterName = e.clusterName;
  p.delayedUpdate = o.delayedUpdate;
  p.streamSharded = o.streamSharded;
  p.training = o.training;
  p.devices = e.devices;
  p.pipelineDevices = P;
  p.dataParallel = e.dataParallel;
  // How this evaluation's placements are named, and the most state a split
  // of the optimizer may keep on a device after refusals under it.
  const std::string suffix =
      policySuffix(*parseRecomputeMode(recompute), partialRecompute, partialOffload,
                   activations, p.dataParallel, zero);
  const double splitCap = rejected.splitCapOf(suffix);
  const double streamRefused = rejected.streamShortOf(suffix);
  p.microBatches = m;
  p.zeroStage = zero;
  const ::loom::ClusterSpec &cluster = e.cluster;
  p.deviceBytes = cluster.device.memoryBytes * o.memoryFraction;
  // Host memory and NVMe are per node; one device's program gets its share.
  double perNode = std::max<int64_t>(1, cluster.devicesPerNode());
  p.hostBytes = cluster.host.memoryBytes / perNode;
  p.nvmeBytes = cluster.nvme.capacityBytes / perNode;
  double maxFinish = 0;
  for (DeviceProgram &dev : devices)
    maxFinish = std::max(maxFinish, dev.times.finish);
  for (DeviceProgram &dev : devices) {
    dev.padding = maxFinish - dev.times.finish;
    double parameters = 0, gradients = 0, state = 0;
    for (auto &[op, w] : dev.weights) {
      dev.parameterBytes += w.held;
      parameters += w.bytes;
      if (w.held < w.bytes) // stored in shards: gathered whole into a slot
        dev.gatherSlotBytes = std::max(dev.gatherSlotBytes, w.bytes);
      if (!w.trainable)
        continue;
      dev.gradientBytes += w.gradient();
      dev.optimizerBytes += w.state();
      gradients += w.bytes * w.gradientWidening;
      state += optimizerStateBytes(w.bytes, w.elementBytes);
    }
    // ZeRO-3 gathers each weight just before each op reading it, into one
    // of its slots in turn: as many as the most weights one op reads (a
    // batch norm reads four), and at least two.
    if (zero >= 3)
      for (const OpStep &step : dev.steps)
        dev.gatherSlots = std::max<int64_t>(
            dev.gatherSlots, llvm::count_if(step.weights, [&](WeightOp w) {
              const HeldWeight &h = dev.weights.find(w)->second;
              return h.held < h.bytes;
            }));
    // The table reports the fullest device, before ZeRO.
    p.parameterBytes = std::max(p.parameterBytes, parameters);
    p.gradientBytes = std::max(p.gradientBytes, gradients);
    p.optimizerBytes = std::max(p.optimizerBytes, state);
    p.otherDeviceBytes = std::max(p.otherDeviceBytes, dev.otherBytes);
  }
  p.unlimitedStepSeconds = e.stepTime;
  p.recomputeSegments = e.recomputeSegments;
  p.modelFlops = e.modelFlops;
  p.globalBatch = static_cast<double>(e.globalBatch);
  p.peakFlopsPerDevice = e.peakFlopsPerDevice;

  const double h2d = cluster.host.copyBandwidth(), d2h = h2d;
  const double adamRate = cluster.host.cpuAdamBandwidth / perNode;
  const double nvmeRead = cluster.nvme.readBandwidth / perNode,
               nvmeWrite = cluster.nvme.writeBandwidth / perNode;

  // The optimizer step away from the device for one tensor: CPU Adam over
  // its state, bounded by reading and writing the state when it lives on
  // NVMe.
  // Parameters streamed from NVMe are also written back there once
  // updated (`paramsWritten` bytes), and read first when they are their own
  // master copy (fp32: the state holds no other; `paramsRead`).
  auto hostUpdateSeconds = [&](double state, Tier tier, double paramsWritten = 0,
                               double paramsRead = 0) -> double {
    double adam = adamRate > 0 ? state / adamRate : INFINITY;
    if (tier == Tier::Nvme)
      adam = std::max(adam, nvmeRead > 0 && nvmeWrite > 0
                                ? (state + paramsRead) / nvmeRead +
                                      (state + paramsWritten) / nvmeWrite
                                : INFINITY);
    return adam;
  };
  auto nvmeParamReads = [](const HeldWeight &h) {
    return h.elementBytes >= 4 ? h.held : 0.0;
  };
  // Streamed over several micro-batches, each micro-batch's gradient goes
  // down and the CPU adds it into the weight's sum, kept in `tier` (host
  // memory, or NVMe, where ZeRO-Infinity keeps gradients too): priced as
  // streaming the sum, as its Adam streams the state, and on NVMe as
  // reading it and writing it back, as the optimizer's state.
  auto hostSumSeconds = [&](const HeldWeight &h, Tier tier) {
    return hostUpdateSeconds(h.gradient(), tier);
  };

  // Gradients leave the device as they are produced; two tensors' worth of
  // staging covers one being written while another is copied out. Over
  // several micro-batches (or a pipeline's calls) resident parameters'
  // gradients accumulate on the device first; streamed ones' (`params` off
  // the device) leave every micro-batch and the host sums them
  // (--loom-optimizer-step).
  auto stagingOf = [&](const DeviceProgram &dev,
                       const llvm::DenseSet<Operation *> &kept,
                       Tier params = Tier::Device) {
    double staging = 0, accumulated = 0;
    for (auto &[op, w] : dev.weights) {
      if (!w.trainable || kept.contains(op))
        continue;
      staging = std::max(staging, 2 * w.offloaded());
      accumulated += w.gradient();
    }
    return accumulates && params == Tier::Device ? accumulated : staging;
  };

  // The offloaded update as a pipeline overlapping a device's steps
  // (UpdatePipeline.h): the trainable weights not in `kept` send their
  // gradients down as the backward completes them (reduced over their
  // replicas first), are updated by the CPU on `away` (each replica its
  // ZeRO shard), and come back up (`uploadOf`: bytes, per weight index;
  // then all-gathered) before their readers in the next forward; or, with
  // `barrier`, before the next iteration starts at all. `stepSeconds` is
  // the device's iteration: with `framed`, an idle lead-in before its first
  // forward, its forward steps, the rest of the pipeline schedule, its
  // backward steps and a tail; otherwise `lead` steps (a streamed step's
  // earlier micro-batches), then forward then backward steps.
  // `params`: where the parameters live (streamed from the host or NVMe,
  // the weights in `kept` send their updated shards down to them; over
  // several micro-batches the CPU adds each gradient into its sum, in
  // `sums`, before the update).
  // `linkBusyThrough`: the step through which the host-to-device link
  // carries other transfers (a chunk schedule's fetches and reloads; -1:
  // none); by default the last step where there are any (`barrier`, or
  // activations offloaded). `deviceReloads`: of `deviceUpdate`, the
  // seconds a split's update spends reloading kept weights over the link
  // (UpdateProblem::deviceReloadSeconds).
  struct PricedUpdate {
    double h2dBytes = 0, d2hBytes = 0;
    std::optional<lm::UpdateTimeline> timeline;
    std::vector<size_t> weightOfTensor; // index into dev.weights
    std::string why;
  };
  // Whether the pipelines priced record an iteration (UpdateProblem::
  // traceIteration): only the chosen placement's, priced again.
  bool traceUpdates = false;
  auto priceUpdate = [&](const DeviceProgram &dev, ArrayRef<double> stepSeconds,
                         bool framed, const llvm::DenseSet<Operation *> &kept,
                         Tier away, double deviceUpdate, bool barrier,
                         llvm::function_ref<double(size_t)> uploadOf,
                         Tier params = Tier::Device,
                         std::optional<int> linkBusyThrough = std::nullopt,
                         double deviceReloads = 0, int lead = 0,
                         Tier sums = Tier::Host) {
    int64_t n = static_cast<int64_t>(dev.steps.size());
    auto forwardIndex = [&](int64_t i) {
      return framed ? 1 + i : lead + dev.layout.forwardAt[i];
    };
    auto backwardIndex = [&](int64_t i) {
      return framed ? 2 + n + (n - 1 - i) : lead + dev.layout.backwardAt[i];
    };
    DenseMap<Operation *, int64_t> firstReader;
    for (auto [i, s] : llvm::enumerate(dev.steps))
      for (WeightOp w : s.weights)
        firstReader.try_emplace(w, static_cast<int64_t>(i));
    PricedUpdate priced;
    lm::UpdateProblem up;
    up.traceIteration = traceUpdates;
    up.stepSeconds.assign(stepSeconds.begin(), stepSeconds.end());
    up.waitsFor.resize(stepSeconds.size());
    up.deviceUpdateSeconds = deviceUpdate;
    up.deviceReloadSeconds = deviceReloads;
    up.deviceToHost = d2h;
    up.hostToDevice = h2d;
    up.linkLatency = cluster.host.linkLatency;
    // A delayed update would let the CPU rewrite host copies that streamed
    // chunks are still being fetched from, so only resident placements
    // take it.
    up.staleness = o.delayedUpdate && !barrier ? 1 : 0;
    // Offloaded activations come back up the link during the backward;
    // the uploads follow them.
    up.uploadsAfterStep =
        linkBusyThrough
            ? *linkBusyThrough
            : (barrier || offloaded ? static_cast<int>(stepSeconds.size()) - 1
                                    : -1);
    // The gradients leave through the staging the device holds for them
    // (stagingOf); over several micro-batches (or a pipeline's calls)
    // resident parameters' gradients accumulate there first.
    if (!accumulates || params != Tier::Device)
      up.stagingBytes = stagingOf(dev, kept, params);
    // An updated shard is all-gathered as far as it is uploaded: whole for
    // resident parameters, not at all for a streamed chunk not left on the
    // device (its next fetch gathers it).
    auto gatherOf = [](const HeldWeight &h, double uploadBytes) {
      return h.offloaded() > 0 ? h.facts.gatherSeconds * uploadBytes / h.offloaded() : 0;
    };
    DenseMap<Operation *, int> tensorOf;
    for (auto [i, entry] : llvm::enumerate(dev.weights)) {
      auto w = cast<WeightOp>(entry.first);
      const HeldWeight &h = entry.second;
      if (!h.trainable)
        continue;
      // A weight in `kept` is updated on the device. Its parameters
      // streamed (`params` off the device, their home copies there), its new
      // shard goes down after its gradient's reduction, taken to leave as
      // the reduction ends, before the device's update: optimistic by that
      // update's time at most. A chunk the schedule carries into the next
      // iteration holds the parameters the device's update wrote, so none
      // go up the link again; sharded (ZeRO-3), the other replicas' shards
      // are all-gathered into it (`uploadOf`'s share of the weight).
      const bool onDevice = kept.contains(entry.first);
      if (onDevice && params == Tier::Device)
        continue;
      double seconds = 0;
      if (!onDevice) {
        bool fromNvme = params == Tier::Nvme;
        seconds = hostUpdateSeconds(h.state(), away, fromNvme ? h.held : 0,
                                    fromNvme ? nvmeParamReads(h) : 0);
        if (m > 1 && params != Tier::Device)
          seconds += hostSumSeconds(h, sums);
        if (!std::isfinite(seconds)) {
          priced.why = "the cluster gives no rate for this tier's CPU optimizer";
          return priced;
        }
        tensorOf[w] = static_cast<int>(up.tensors.size());
      }
      lm::OffloadedTensor t;
      t.name = w.getName().str();
      t.readyAfterStep =
          static_cast<int>(backwardIndex(firstReader.lookup(w)));
      t.gradientBytes = onDevice ? h.held : h.offloaded();
      t.updateSeconds = seconds;
      t.uploadBytes = onDevice ? 0 : uploadOf(i);
      t.reduceSeconds = h.facts.reduceSeconds;
      t.gatherSeconds = gatherOf(h, uploadOf(i));
      up.tensors.push_back(t);
      priced.weightOfTensor.push_back(i);
      priced.d2hBytes += t.gradientBytes;
      priced.h2dBytes += t.uploadBytes;
    }
    for (int x = 0; barrier && x < static_cast<int>(up.tensors.size()); ++x)
      up.waitsFor.front().push_back(x);
    for (auto [i, s] : llvm::enumerate(dev.steps))
      for (WeightOp w : s.weights)
        if (!barrier && tensorOf.count(w))
          up.waitsFor[forwardIndex(i)].push_back(tensorOf.lookup(w));
    llvm::Expected<lm::UpdateTimeline> timeline = lm::simulateUpdates(up);
    if (!timeline)
      priced.why = llvm::toString(timeline.takeError());
    else
      priced.timeline = *timeline;
    return priced;
  };
  auto shortfall = [](StringRef tier, double need, double have) {
    return llvm::formatv("{0} needs {1}, has {2} ({3} short)", tier,
                         bytesText(need), bytesText(have),
                         bytesText(need - have))
        .str();
  };
  // One device's part of a placement: checked against its tiers, then
  // folded into the placement (the slowest step, the fullest tiers).
  auto check = [&](PlacementCandidate &c, const DeviceProgram &dev,
                   PlacementCandidate &part, StringRef whyNoTime = "") {
    part.hostPeak += dev.hostActivationBytes;
    part.activationBytes = dev.activationTraffic;
    std::string where =
        P > 1 ? llvm::formatv("pipeline device {0}: ", dev.device).str() : "";
    // Every tier short is named, so that an input too large for all of
    // them says what each lacks.
    std::string why;
    auto shortIn = [&](Tier t, double need) {
      const double have = p.capacity(t);
      if (need <= have)
        return;
      double &most = c.shortBytes[static_cast<int>(t)];
      most = std::max(most, need - have);
      why += (why.empty() ? "" : "; ") +
             shortfall(tierLabel(t), need, have);
    };
    shortIn(Tier::Device, part.devicePeak);
    shortIn(Tier::Host, part.hostPeak);
    shortIn(Tier::Nvme, part.nvmeUsed);
    if (why.empty() && !std::isfinite(part.stepSeconds))
      why = whyNoTime.empty() ? "the cluster gives no rate for this tier's "
                                "transfers or CPU optimizer"
                              : whyNoTime.str();
    if (!why.empty() && c.why.empty())
      c.why = where + why;
    c.feasible = c.why.empty();
    // The slowest device's update pipeline (and steps) is the one reported.
    if (part.update ? !c.update || part.stepSeconds >= c.stepSeconds
                    : !c.update && part.stepSeconds >= c.stepSeconds) {
      if (part.update)
        c.update = part.update;
      c.reportedDevice = &dev - devices.data();
    }
    c.stepSeconds = std::max(c.stepSeconds, part.stepSeconds);
    c.devicePeak = std::max(c.devicePeak, part.devicePeak);
    c.hostPeak = std::max(c.hostPeak, part.hostPeak);
    c.nvmeUsed = std::max(c.nvmeUsed, part.nvmeUsed);
    c.h2dBytes = std::max(c.h2dBytes, part.h2dBytes);
    c.d2hBytes = std::max(c.d2hBytes, part.d2hBytes);
    c.nvmeBytes = std::max(c.nvmeBytes, part.nvmeBytes);
    c.activationBytes = std::max(c.activationBytes, part.activationBytes);
  };

  // 1. Everything on the device.
  {
    PlacementCandidate c{"everything on the device"};
    for (const DeviceProgram &dev : devices) {
      PlacementCandidate part;
      part.devicePeak = dev.otherBytes + dev.parameterBytes +
                        dev.gatherBuffer() + dev.gradientBytes +
                        dev.optimizerBytes;
      part.stepSeconds = e.stepTime;
      check(c, dev, part);
    }
    p.candidates.push_back(c);
  }
  // 2-4. Parameters resident; the gradients and optimizer state of the
  // weights in `kept` stay on the device and are updated there after the
  // backward, the rest go to `away` (host or NVMe) and are updated by the
  // CPU in a pipeline beside the device.
  auto residentUpdate = [&](const DeviceProgram &dev,
                            const llvm::DenseSet<Operation *> &kept,
                            Tier away) {
    // The share of the device's trainable bytes it updates itself.
    double keptBytes = 0, trainable = 0;
    for (auto &[op, w] : dev.weights)
      if (w.trainable) {
        trainable += w.bytes;
        keptBytes += kept.contains(op) ? w.bytes : 0;
      }
    double share = trainable > 0 ? keptBytes / trainable : 0;
    return priceUpdate(dev, framedSteps(dev, share, o.training),
                       /*framed=*/true, kept, away,
                       share * dev.times.optimizerStep,
                       /*barrier=*/false, [&](size_t i) {
                         return (dev.weights.begin() + i)->second.offloaded();
                       });
  };
  auto residentParameters = [&](Tier away,
                                const llvm::DenseSet<Operation *> &kept) {
    double keptBytes = 0, trainableBytes = 0;
    for (const DeviceProgram &dev : devices)
      for (auto &[op, w] : dev.weights)
        if (w.trainable) {
          trainableBytes += w.bytes;
          keptBytes += kept.contains(op) ? w.bytes : 0;
        }
    double overall = trainableBytes > 0 ? keptBytes / trainableBytes : 0;
    PlacementCandidate c;
    c.name = !kept.empty()
                 ? llvm::formatv("parameters on the device, optimizer "
                                 "{0:F0}% device / {1}",
                                 overall * 100, tierName(away))
                       .str()
                 : ("parameters on the device, optimizer on the " +
                    tierName(away))
                       .str();
    c.optimizer = away;
    c.deviceOptimizerWeights = kept;
    for (const DeviceProgram &dev : devices) {
      double keptState = 0, offState = 0, offGradients = 0, offParameters = 0;
      for (auto &[op, w] : dev.weights) {
        if (!w.trainable)
          continue;
        if (kept.contains(op)) {
          keptState += w.gradient() + w.state();
        } else {
          // The host holds this device's shard: its gradient, its optimizer
          // state and, where that holds no master copy, a parameter copy.
          offState += w.state();
          offGradients += w.offloaded();
          offParameters += w.offloadedParameterCopy();
        }
      }
      PlacementCandidate part;
      part.devicePeak = dev.otherBytes + dev.parameterBytes + dev.gatherBuffer() +
                        stagingOf(dev, kept) + keptState;
      part.hostPeak = offGradients + offParameters +
                      (away == Tier::Host ? offState : 0);
      part.nvmeUsed = away == Tier::Nvme ? offState : 0;
      part.nvmeBytes = away == Tier::Nvme ? 2 * offState : 0;
      PricedUpdate u = residentUpdate(dev, kept, away);
      part.h2dBytes = u.h2dBytes;
      part.d2hBytes = u.d2hBytes;
      part.update = u.timeline;
      part.stepSeconds = u.timeline ? u.timeline->stepSeconds : INFINITY;
      check(c, dev, part, u.why);
    }
    p.candidates.push_back(c);
  };
  if (o.training) {
    residentParameters(Tier::Host, /*kept=*/{});
    residentParameters(Tier::Nvme, /*kept=*/{});
    // The split: on each device, whole tensors in first-use order while
    // their gradients and state fit, so the share priced is the share
    // annotated.
    llvm::DenseSet<Operation *> kept;
    bool partial = false;
    for (const DeviceProgram &dev : devices) {
      // Keeping the first i trainable weights leaves the rest to be staged
      // (stagingOf): the largest two of them, or all of them accumulated.
      SmallVector<std::pair<Operation *, const HeldWeight *>> trainable;
      for (auto &[op, w] : dev.weights)
        if (w.trainable)
          trainable.push_back({op, &w});
      size_t t = trainable.size();
      std::vector<double> stagingFrom(t + 1, 0);
      for (size_t i = t; i-- > 0;) {
        const HeldWeight &w = *trainable[i].second;
        stagingFrom[i] = accumulates
                             ? stagingFrom[i + 1] + w.gradient()
                             : std::max(stagingFrom[i + 1], 2 * w.offloaded());
      }
      double room = p.deviceBytes - dev.otherBytes - dev.parameterBytes -
                    dev.gatherBuffer();
      double cap = splitCap;
      size_t i = 0;
      for (; i < t; ++i) {
        const HeldWeight &w = *trainable[i].second;
        double state = w.gradient() + w.state();
        if (state > room - stagingFrom[i] || state > cap)
          break;
        room -= state;
        cap -= state;
        kept.insert(trainable[i].first);
      }
      partial |= i < t;
    }
    if (!kept.empty() && partial && o.optimizerSplit)
      residentParameters(Tier::Host, kept);
  }

  // 5-6. Parameters streamed in chunks as well (for inference: parameters
  // streamed, nothing else to place), planned for one-device programs
  // (data-parallel ones in ZeRO-3 shards, in steps of one micro-batch).
  // For each optimizer tier the chunk size is the one
  // whose simulated iteration, followed by the update pipeline, is
  // fastest. The pipeline's CPU work overlaps the backward; the next
  // iteration's fetches read the host copies, so it waits for the whole
  // update, and only chunks resident across an iteration boundary are
  // uploaded again (trainable parameters only: frozen ones stay valid).
  struct Streamed {
    int64_t size = 0;
    int split = -1; // into streamSplits; -1: the whole optimizer off the device
    // Where the parameters, the optimizer state and (over several
    // micro-batches) the gradients' sums live.
    Tier from = Tier::Host, optimizer = Tier::Host, sums = Tier::Host;
    std::vector<int> chunkOf;
    lm::ChunkProblem problem;
    lm::ChunkPlan plan;
    double stepSeconds = INFINITY, refreshBytes = 0, d2hBytes = 0;
    std::optional<lm::UpdateTimeline> update;
    std::vector<size_t> tensorWeights; // the update's tensors' weights
  };
  // Where streamed parameters and the optimizer live: parameters on the
  // host with the optimizer there or on NVMe, or (ZeRO-Infinity) both on
  // NVMe, each fetch staged through pinned host memory, and over several
  // micro-batches the gradients' sums too. Indexed by streamVariant.
  std::optional<Streamed> bestStreamed[5];
  // Before the choice of what to carry: per (streamVariant, split), the
  // fastest chunk size.
  std::map<std::pair<int, int>, std::optional<Streamed>> fastestOf;
  auto streamVariant = [](Tier params, Tier optimizer, bool split = false,
                          Tier sums = Tier::Host) {
    return sums == Tier::Nvme        ? 4
           : split                   ? 3
           : params == Tier::Nvme    ? 2
           : optimizer == Tier::Nvme ? 1
                                     : 0;
  };
  std::string streamError;
  double streamShort = INFINITY; // the least the device lacks for streaming
  double smallestStaging = 0;    // the two largest chunks at the smallest size

  const DeviceProgram &dev0 = devices.front();
  // Host memory keeps the gradients for the CPU's step (over several
  // micro-batches each micro-batch's gradients as they land, until the host
  // has added them into their sums: landedGradientPeak; the sums are in
  // host memory too, unless `sums` puts them on NVMe) and either the
  // parameters or, streamed from NVMe, two chunks of staging; NVMe holds
  // the optimizer state placed there and parameters streamed from it.
  // `keptOnDevice`: the gradients and state a split keeps on the device.
  // `sums`: where a step of several micro-batches keeps the gradients'
  // sums (host memory, or with everything else on NVMe, there).
  const double landing = m > 1 ? landedGradientPeak(dev0) : 0;
  auto streamedHostBytes = [&](bool nvmeParams, Tier optimizer, double staging,
                               Tier sums = Tier::Host) {
    return (sums == Tier::Nvme ? 0 : dev0.gradientBytes) + landing +
           (nvmeParams ? staging : dev0.parameterBytes) +
           (optimizer == Tier::Host ? dev0.optimizerBytes : 0);
  };
  auto streamedHoldings = [&](PlacementCandidate &part, bool nvmeParams,
                              Tier optimizer, double staging,
                              double keptOnDevice, Tier sums) {
    part.hostPeak =
        streamedHostBytes(nvmeParams, optimizer, staging, sums) - keptOnDevice;
    part.nvmeUsed = (optimizer == Tier::Nvme ? dev0.optimizerBytes : 0) +
                    (nvmeParams ? dev0.parameterBytes : 0) +
                    (sums == Tier::Nvme ? dev0.gradientBytes : 0);
  };
  double streamStaging =
      o.training ? stagingOf(dev0, /*kept=*/{}, Tier::Host) : 0;
  // Offloaded, each activation comes back before the first step of the
  // backward that reads it (its last reader's backward, or the re-run of a
  // recomputed reader before that), as the static memory plan fetches it:
  // its bytes per position of dev0's layout.
  std::vector<double> reloadBytes(dev0.layout.positions.size(), 0);
  if (offloaded && streamable) {
    DenseMap<Operation *, int64_t> stepIndex;
    for (auto [k, st] : llvm::enumerate(dev0.steps))
      stepIndex[st.op] = static_cast<int64_t>(k);
    for (Value v : e.offloadedActivations) {
      double bytes = 0;
      if (auto arg = dyn_cast<BlockArgument>(v))
        bytes = arg.getArgNumber() < e.argumentBytes.size()
                    ? e.argumentBytes[arg.getArgNumber()]
                    : 0;
      else if (auto it = stepIndex.find(v.getDefiningOp()); it != stepIndex.end()) {
        const SmallVector<double> &results = dev0.steps[it->second].resultBytes;
        unsigned r = cast<OpResult>(v).getResultNumber();
        bytes = r < results.size() ? results[r] : 0;
      }
      int64_t lastReader = -1, first = INT64_MAX;
      forEachReader(v, [&](Operation *user) {
        Operation *u = user;
        while (u && !stepIndex.count(u))
          u = u->getParentOp();
        if (!u)
          return;
        int64_t k = stepIndex.lookup(u);
        lastReader = std::max(lastReader, k);
        if (int64_t rerun = dev0.layout.rerunAt[k]; rerun >= 0)
          first = std::min(first, rerun);
      });
      if (lastReader >= 0 && dev0.layout.backwardAt[lastReader] >= 0)
        first = std::min(first, dev0.layout.backwardAt[lastReader]);
      if (first != INT64_MAX)
        reloadBytes[first] += bytes;
    }
  }
  // The step sequence of streamed parameters: forward ops, then backward
  // ops in reverse, each reading its weights' chunks (and, offloaded, its
  // activations).
  auto chunkProblem = [&](int64_t chunkBytes, std::vector<int> &chunkOf,
                          const llvm::DenseSet<Operation *> *keptWeights) {
    lm::ChunkProblem cp;
    std::vector<int64_t> sizes;
    for (auto &entry : dev0.weights)
      sizes.push_back(static_cast<int64_t>(entry.second.bytes));
    chunkOf = lm::groupIntoChunks(sizes, chunkBytes, cp.chunkBytes);
    // The IR holds one iteration's fetches and releases.
    cp.singleIteration = true;
    // The host updates every trainable parameter between iterations, so
    // their bytes start each iteration stale on the device; those of a
    // split's `keptWeights` the device updates in place instead, in a
    // chunk carried across the boundary (sharded, with a gather over the
    // replicas, off this link).
    if (o.training) {
      cp.fetchWithinIteration = true;
      cp.staleBytes =
          staleChunkBytes(dev0, chunkOf, cp.chunkBytes.size(), keptWeights,
                          [](size_t, const HeldWeight &h) { return h.bytes; });
    }
    auto readsOf = [&](const OpStep &s) {
      std::vector<int> reads;
      for (WeightOp w : s.weights)
        reads.push_back(chunkOf[dev0.weights.find(w) - dev0.weights.begin()]);
      return reads;
    };
    for (auto [position, at] : llvm::enumerate(dev0.layout.positions)) {
      const OpStep &s = dev0.steps[at.step];
      std::string name = s.op->getName().getStringRef().str();
      switch (at.kind) {
      case IterationLayout::Kind::Forward:
        cp.steps.push_back({"forward " + name, s.forward, readsOf(s)});
        break;
      case IterationLayout::Kind::Rerun:
        cp.steps.push_back({"re-run " + name, s.rerunSeconds, readsOf(s)});
        break;
      case IterationLayout::Kind::Backward:
        // The schedule times the reloads on the shared link itself.
        cp.steps.push_back({"backward " + name,
                            s.backward - (offloaded ? s.backwardStall : 0), readsOf(s)});
        break;
      }
      cp.steps.back().reloadBytes = reloadBytes[position];
    }
    cp.hostToDevice = h2d;
    cp.linkLatency = cluster.host.linkLatency;
    return cp;
  };
  // Streamed in ZeRO-3 shards, a chunk's home copy is this device's shard
  // of it (what it uploads), and a fetch uploads that, then all-gathers the
  // chunk from the other replicas into its device copy. The two are
  // charged in sequence on one link, which is pessimistic where the
  // gathers run over NVLink beside the next upload.
  auto shardTransfers = [&](const lm::ChunkProblem &cp, const std::vector<int> &chunkOf) {
    std::vector<double> seconds = chunkHomeBytes(dev0, chunkOf, cp.chunkBytes.size());
    for (double &s : seconds)
      s = lm::linkSeconds(cp, s);
    for (auto [i, entry] : llvm::enumerate(dev0.weights))
      if (entry.second.held < entry.second.bytes)
        seconds[chunkOf[i]] += entry.second.facts.gatherSeconds;
    return seconds;
  };
  // A split of a streamed program's optimizer: the first weights (in
  // first-use order, whose gradients the backward completes last, so that
  // their update on the host would be least overlapped) keep their
  // gradients and state on the device and are updated there; their chunks
  // get that much less of the device.
  struct StreamSplit {
    llvm::DenseSet<Operation *> kept;
    double keptBytes = 0, share = 0; // gradients and state; trainable share
  };
  // Tried: the fewest that cover host memory's excess, where the host
  // cannot hold every streamed weight with its gradient and state beside
  // the offloaded activations (PatrickStar keeps optimizer state on the
  // GPU as its margin allows; 1% of the host covers the arena's
  // alignment), and, as the CPU's update is often the step's bottleneck,
  // at least each eighth of the trainable bytes (Elixir's device optimizer
  // where memory allows). The fastest schedule decides among them. Keeping
  // every weight's state is not streaming with the optimizer on the host.
  std::vector<StreamSplit> streamSplits;
  auto streamedSplitName = [](const StreamSplit &split) {
    return llvm::formatv("parameters streamed, optimizer {0:F0}% device / host",
                         split.share * 100)
        .str();
  };
  if (streamable && o.training && o.optimizerSplit && m == 1) {
    const double excess = streamedHostBytes(/*nvmeParams=*/false, Tier::Host,
                                            /*staging=*/0) +
                          dev0.hostActivationBytes - 0.99 * p.hostBytes;
    double trainable = 0;
    for (auto &entry : dev0.weights)
      if (entry.second.trainable)
        trainable += entry.second.bytes;
    for (double least : {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875}) {
      StreamSplit split;
      double keptTrainable = 0;
      for (auto &[op, w] : dev0.weights) {
        if (!w.trainable)
          continue;
        if (split.keptBytes >= excess && keptTrainable >= least * trainable)
          break;
        split.kept.insert(op);
        split.keptBytes += w.gradient() + w.state();
        keptTrainable += w.bytes;
      }
      split.share = keptTrainable / trainable;
      // (Named by its share in whole percent, so one per name.)
      if (split.kept.empty() || keptTrainable >= trainable ||
          (!streamSplits.empty() &&
           std::lround(streamSplits.back().share * 100) ==
               std::lround(split.share * 100)))
        continue;
      streamSplits.push_back(std::move(split));
    }
  }
  // The device's update of a split's weights reads their parameters on
  // the device after the backward: a 16-bit weight's fp32 master copy is
  // part of its state there, and a 32-bit weight is its own master copy,
  // read from its chunk where the schedule leaves that on the device, else
  // uploaded from its home copy (this device's shard) once the chunks'
  // fetches have left the link (--loom-optimizer-step reads the chunk's
  // copy or writes that loom.reload), each a transfer of its own.
  struct UpdateUploads {
    double bytes = 0, seconds = 0;
  };
  auto splitUpdateUploads =
      [&](const llvm::DenseSet<Operation *> &kept, const lm::ChunkProblem &cp,
          const lm::ChunkPlan &plan, const std::vector<int> &chunkOf) {
        UpdateUploads up;
        for (size_t i : updateReloads(dev0, kept, chunkOf,
                                      lm::onDeviceAtEveryStart(cp, plan))) {
          double held = (dev0.weights.begin() + i)->second.held;
          up.bytes += held;
          up.seconds += lm::linkSeconds(cp, held);
        }
        return up;
      };
  // A plan of `cp` (parameters from `from`, weight i in chunk
  // `chunkOf[i]`, `kept` the split's weights or none) priced for the
  // optimizer in `tier`: its steps with their stalls, then (training) the
  // update pipeline, with the refresh of the chunks it carries across the
  // boundary. Empty, with `why`, where the pipeline cannot be priced.
  auto priceStreamed =
      [&](const lm::ChunkProblem &cp, const std::vector<int> &chunkOf,
          const StreamSplit *kept, Tier from, const lm::ChunkPlan &plan,
          Tier tier, std::string &why,
          Tier sums = Tier::Host) -> std::optional<Streamed> {
    Streamed candidate;
    if (!o.training) {
      candidate.stepSeconds = static_cast<double>(m) * plan.iterationSeconds;
      return candidate;
    }
    // Each step's time with its stalls, averaged over the period.
    const std::vector<double> &ends = plan.stepEnds;
    size_t perIteration = cp.steps.size();
    std::vector<double> stepSeconds(perIteration, 0);
    for (auto [k, end] : llvm::enumerate(ends))
      stepSeconds[k % perIteration] +=
          (end - (k ? ends[k - 1] : 0)) / plan.iterations;
    // Each chunk's share of the period's iteration boundaries at which
    // it is on the device: its trainable bytes are uploaded again there.
    std::vector<double> residentShare(cp.chunkBytes.size(), 0);
    for (const std::vector<int> &on : lm::residentAtIterationStarts(cp, plan))
      for (int chunk : on)
        residentShare[chunk] += 1.0 / plan.iterations;
    // That refresh goes up once the link's last fetch or reload of the
    // iteration has ended (after the step it ends in; a period of
    // several iterations is priced as one, so after the last step).
    int linkBusyThrough = static_cast<int>(perIteration) - 1;
    if (plan.iterations == 1) {
      double lastTransfer = 0;
      for (const lm::Fetch &f : plan.fetches)
        lastTransfer = std::max(lastTransfer, f.end);
      for (const lm::Reload &r : plan.reloads)
        lastTransfer = std::max(lastTransfer, r.end);
      // (Step ends are in order: the first ending at or after it.)
      if (lastTransfer > 0)
        linkBusyThrough =
            std::min<int>(linkBusyThrough,
                          llvm::lower_bound(ends, lastTransfer) - ends.begin());
      else
        linkBusyThrough = -1;
    }
    // Over several micro-batches the plan is the last one's; the earlier
    // ones run the same schedule before it, one step of the pipeline, each
    // as long as the slowest of its schedule, the copies of its gradients
    // down and the CPU's adds of them into the sums (each overlapping the
    // next micro-batch). (No split then: a device update of streamed
    // weights over several micro-batches is not written.)
    const int lead = earlierMicroBatchSteps(m, o.training);
    double earlierDown = 0;
    if (lead) {
      double schedule = 0, down = 0, add = 0;
      for (double seconds : stepSeconds)
        schedule += seconds;
      for (auto &entry : dev0.weights)
        if (entry.second.trainable) {
          earlierDown += entry.second.offloaded();
          down += entry.second.offloaded() / d2h + cluster.host.linkLatency;
          add += hostSumSeconds(entry.second, sums);
        }
      earlierDown *= static_cast<double>(m - 1);
      stepSeconds.insert(stepSeconds.begin(),
                         static_cast<double>(m - 1) *
                             std::max({schedule, down, add}));
      if (linkBusyThrough >= 0)
        linkBusyThrough += lead;
    }
    UpdateUploads updateUploads;
    if (kept)
      updateUploads = splitUpdateUploads(kept->kept, cp, plan, chunkOf);
    const llvm::DenseSet<Operation *> noneKept;
    PricedUpdate u = priceUpdate(
        dev0, stepSeconds, /*framed=*/false, kept ? kept->kept : noneKept, tier,
        /*deviceUpdate=*/
        kept ? kept->share * dev0.times.optimizerStep + updateUploads.seconds
             : 0,
        /*barrier=*/true,
        [&](size_t i) {
          return residentShare[chunkOf[i]] *
                 (dev0.weights.begin() + i)->second.offloaded();
        },
        from, linkBusyThrough, updateUploads.seconds, lead, sums);
    if (!u.timeline) {
      why = u.why;
      return std::nullopt;
    }
    candidate.stepSeconds = u.timeline->stepSeconds;
    candidate.refreshBytes = u.h2dBytes + updateUploads.bytes;
    candidate.d2hBytes = u.d2hBytes + earlierDown;
    candidate.update = u.timeline;
    candidate.tensorWeights = std::move(u.weightOfTensor);
    return candidate;
  };
  // The device's room for chunks (and a split's kept optimizer).
  const double budget = p.deviceBytes - dev0.otherBytes - streamStaging - streamRefused;
  if (streamable) {
    SmallVector<int64_t> sizes;
    if (o.chunkBytes > 0)
      sizes.push_back(o.chunkBytes);
    else
      for (int64_t size = 1 << 20;; size *= 2) {
        sizes.push_back(size);
        if (size >= dev0.parameterBytes)
          break;
      }
    if (budget <= 0) {
      streamError = shortfall("device (activations, temporaries and gradient "
                              "staging alone)",
                              dev0.otherBytes + streamStaging, p.deviceBytes);
      streamShort = dev0.otherBytes + streamStaging - p.deviceBytes;
    }
    for (Tier from : {Tier::Host, Tier::Nvme})
    for (int64_t size : budget > 0 ? sizes : SmallVector<int64_t>()) {
      // From NVMe a chunk is read into a pinned host buffer and copied up,
      // two buffers overlapping consecutive chunks: the slower stage sets
      // the rate.
      if (from == Tier::Nvme && !(nvmeRead > 0 && p.nvmeBytes > 0))
        break;
      if (!llvm::is_contained(o.parameterTiers, tierName(from)))
        break;
      for (int splitIndex = -1;
           splitIndex < static_cast<int>(streamSplits.size()); ++splitIndex) {
        const bool split = splitIndex >= 0;
        if (split && from != Tier::Host)
          break;
        const StreamSplit *kept = split ? &streamSplits[splitIndex] : nullptr;
        // A split refused after its replay (host or device short) leaves
        // the others to choose from.
        if (kept && (budget - kept->keptBytes <= 0 ||
                     rejected.byName.count(streamedSplitName(*kept) + suffix)))
          continue;
        std::vector<int> chunkOf;
        lm::ChunkProblem cp =
            chunkProblem(size, chunkOf, kept ? &kept->kept : nullptr);
        cp.budgetBytes = kept ? budget - kept->keptBytes : budget;
        if (size == sizes.front() && !split) {
          std::vector<int64_t> largest = cp.chunkBytes;
          llvm::sort(largest, std::greater<int64_t>());
          smallestStaging = 0;
          for (size_t k = 0; k < std::min<size_t>(2, largest.size()); ++k)
            smallestStaging += static_cast<double>(largest[k]);
        }
        if (from == Tier::Nvme)
          cp.hostToDevice = std::min(h2d, nvmeRead);
        if (streamedInShards)
          cp.transferSeconds = shardTransfers(cp, chunkOf);
        llvm::Expected<lm::ChunkPlan> plan = lm::planChunks(cp);
        if (!plan) {
          std::string message = llvm::toString(plan.takeError());
          if (streamError.empty())
            streamError = "device: " + message;
          // Short by what the step reading the most parameters at once
          // needs beyond the budget (smaller chunks may need less).
          double atOnce = 0;
          for (const lm::Step &step : cp.steps) {
            double bytes = 0;
            for (int chunk : step.reads)
              bytes += static_cast<double>(cp.chunkBytes[chunk]);
            atOnce = std::max(atOnce, bytes);
          }
          if (atOnce > budget && !split)
            streamShort = std::min(streamShort, atOnce - budget);
          continue;
        }
        // (Over several micro-batches, with parameters and the optimizer
        // on NVMe, the gradients' sums may be there too.)
        for (auto [tier, sums] : {std::pair{Tier::Host, Tier::Host},
                                  std::pair{Tier::Nvme, Tier::Host},
                                  std::pair{Tier::Nvme, Tier::Nvme}}) {
          // Inference has no optimizer; with parameters on NVMe, neither is
          // it kept in host memory.
          if (!o.training && tier == Tier::Nvme)
            break;
          if (o.training && from == Tier::Nvme && tier == Tier::Host)
            continue;
          if (split && tier != Tier::Host)
            break;
          if (sums == Tier::Nvme && !(from == Tier::Nvme && m > 1))
            continue;
          std::string why;
          std::optional<Streamed> candidate =
              priceStreamed(cp, chunkOf, kept, from, *plan, tier, why, sums);
          if (!candidate) {
            if (streamError.empty())
              streamError = why;
            continue;
          }
          // The fastest chunk size of each placement and split.
          std::optional<Streamed> &best =
              fastestOf[{streamVariant(from, o.training ? tier : Tier::Device,
                                       split, sums),
                         splitIndex}];
          if (best && candidate->stepSeconds >= best->stepSeconds)
            continue;
          candidate->size = size;
          candidate->split = splitIndex;
          candidate->chunkOf = chunkOf;
          candidate->problem = cp;
          candidate->from = from;
          candidate->optimizer = tier;
          candidate->sums = sums;
          candidate->plan = *plan; // (the next tier prices it too)
          best = std::move(candidate);
        }
      }
    }
  }
  // Training: which chunks stay on the device across iterations is chosen
  // by the whole step's price, at each split's fastest chunk size, against
  // the fastest of its placement (refreshing a carried chunk waits for the
  // CPU's update of it; fetching it again overlaps the next forward).
  // Carrying fewer moves more bytes, so as across placements it must be
  // faster beyond the model's resolution (kStepTimesEqualWithin): on the
  // TP GPT of place-memory-parallel.test it was 0.08% faster for 11% more
  // bytes.
  double fastest[5] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
  for (auto &[key, s] : fastestOf)
    fastest[key.first] = std::min(fastest[key.first], s->stepSeconds);
  for (auto &[key, s] : fastestOf) {
    if (!o.training)
      break;
    const StreamSplit *kept = s->split >= 0 ? &streamSplits[s->split] : nullptr;
    std::string why;
    auto price = [&](const lm::ChunkPlan &plan) {
      std::optional<Streamed> priced =
          priceStreamed(s->problem, s->chunkOf, kept, s->from, plan,
                        s->optimizer, why, s->sums);
      return priced ? priced->stepSeconds : INFINITY;
    };
    const double toBeat = fastest[key.first] / kStepTimesEqualWithin;
    lm::ChunkPlan fewer = lm::carryFewer(s->problem, s->plan, toBeat, price);
    if (fewer.dropped.empty())
      continue;
    std::optional<Streamed> cheaper =
        priceStreamed(s->problem, s->chunkOf, kept, s->from, fewer,
                      s->optimizer, why, s->sums);
    if (!cheaper || cheaper->stepSeconds >= toBeat)
      continue;
    fastest[key.first] = cheaper->stepSeconds;
    s->stepSeconds = cheaper->stepSeconds;
    s->refreshBytes = cheaper->refreshBytes;
    s->d2hBytes = cheaper->d2hBytes;
    s->update = std::move(cheaper->update);
    s->tensorWeights = std::move(cheaper->tensorWeights);
    s->plan = std::move(fewer);
  }
  // Each placement's fastest, ties to the first split.
  for (auto &[key, s] : fastestOf) {
    std::optional<Streamed> &best = bestStreamed[key.first];
    if (!best || s->stepSeconds < best->stepSeconds)
      best = std::move(s);
  }
  // (Parameters, optimizer, split, and the sums of a step of several
  // micro-batches.)
  const std::tuple<Tier, Tier, bool, Tier> streamedTiers[] = {
      {Tier::Host, Tier::Host, false, Tier::Host},
      {Tier::Host, Tier::Nvme, false, Tier::Host},
      {Tier::Nvme, Tier::Nvme, false, Tier::Host},
      {Tier::Host, Tier::Host, true, Tier::Host},
      {Tier::Nvme, Tier::Nvme, false, Tier::Nvme}};
  for (auto [from, opt, split, sums] : streamedTiers) {
    if (!streamable)
      break;
    if (!o.training && from == Tier::Host && opt == Tier::Nvme)
      continue; // inference: one candidate per parameter tier
    if (split && streamSplits.empty())
      continue;
    if (sums == Tier::Nvme && !(o.training && m > 1))
      continue;
    const std::optional<Streamed> &s = bestStreamed[streamVariant(
        from, o.training ? opt : Tier::Device, split, sums)];
    // The split named and held: the fastest one's, or where none has a
    // schedule, the fewest weights kept.
    const StreamSplit *kept =
        !split ? nullptr : &streamSplits[s ? s->split : 0];
    PlacementCandidate c;
    std::string params = from == Tier::Nvme ? "parameters streamed from NVMe"
                                            : "parameters streamed";
    c.name = !o.training ? params
             : split     ? streamedSplitName(*kept)
             : sums == Tier::Nvme
                 ? params + ", optimizer and gradient sums on the nvme"
                 : params + ", optimizer on the " + tierName(opt).str();
    c.params = from;
    c.optimizer = o.training ? opt : Tier::Device;
    c.sums = sums;
    if (kept)
      c.deviceOptimizerWeights = kept->kept;
    if (!s) {
      // No schedule fits the device; what the other tiers would hold is
      // checked all the same (staging as the smallest chunks tried).
      PlacementCandidate part;
      part.stepSeconds = INFINITY;
      streamedHoldings(part, from == Tier::Nvme, c.optimizer, smallestStaging,
                       kept ? kept->keptBytes : 0, sums);
      std::string why = streamError;
      if (kept && budget > 0 && budget <= kept->keptBytes)
        why = shortfall(
            "device (activations, temporaries, gradient staging and "
            "the kept gradients and optimizer state alone)",
            p.deviceBytes - budget + kept->keptBytes, p.deviceBytes);
      check(c, dev0, part, why);
      if (c.why != why)
        c.why = why + "; " + c.why;
      if (std::isfinite(streamShort))
        c.shortBytes[static_cast<int>(Tier::Device)] = streamShort;
      p.candidates.push_back(c);
      continue;
    }
    c.chunkBytes = s->size;
    PlacementCandidate part;
    part.stepSeconds = s->stepSeconds;
    part.update = s->update;
    // Over the host link: each fetch's home copy (the device's shard,
    // streamed in ZeRO-3 shards), then the refresh of resident chunks.
    // Each micro-batch fetches its chunks again.
    std::vector<double> home = chunkHomeBytes(dev0, s->chunkOf, s->problem.chunkBytes.size());
    double uploaded = 0;
    for (const lm::Fetch &f : s->plan.fetches)
      uploaded += static_cast<double>(m) * home[f.chunk] / s->plan.iterations;
    part.h2dBytes = uploaded + s->refreshBytes;
    part.d2hBytes = s->d2hBytes;
    part.devicePeak = dev0.otherBytes + s->plan.peakBytes + streamStaging;
    // A split's device update after the last step reads some kept weights
    // into a buffer of their largest (StaticMemoryPlan's update_reload),
    // beside the chunks carried and the communication buffers; the
    // activations are gone by then.
    if (kept) {
      double largestReload = 0, carried = 0;
      for (size_t i :
           updateReloads(dev0, kept->kept, s->chunkOf,
                         lm::onDeviceAtEveryStart(s->problem, s->plan)))
        largestReload =
            std::max(largestReload, (dev0.weights.begin() + i)->second.held);
      for (int chunk : s->plan.residentAtStart)
        carried += static_cast<double>(s->problem.chunkBytes[chunk]);
      part.devicePeak =
          std::max(part.devicePeak,
                   dev0.commBytes + carried + largestReload + streamStaging);
    }
    // NVMe is read for every fetch and written with the updated parameters.
    bool nvmeParams = from == Tier::Nvme;
    // Staging: the two largest chunks (a tensor over the chunk size is a
    // chunk of its own). NVMe: trainable parameters written back after
    // their update, and read before it when they are their own master copy.
    std::vector<int64_t> largest = s->problem.chunkBytes;
    llvm::sort(largest, std::greater<int64_t>());
    largest.resize(std::min<size_t>(largest.size(), 2));
    double staging = 0, writtenBack = 0, readBack = 0;
    for (int64_t bytes : largest)
      staging += static_cast<double>(bytes);
    for (const auto &entry : dev0.weights)
      if (entry.second.trainable) {
        writtenBack += entry.second.held;
        readBack += nvmeParamReads(entry.second);
      }
    // Split: the kept gradients and state move from the host to the device.
    streamedHoldings(part, nvmeParams, c.optimizer, staging,
                     kept ? kept->keptBytes : 0, sums);
    if (kept)
      part.devicePeak += kept->keptBytes;
    // (Sums on NVMe are read and written back by each micro-batch's adds.)
    part.nvmeBytes =
        (c.optimizer == Tier::Nvme ? 2 * dev0.optimizerBytes : 0) +
        (nvmeParams ? uploaded + writtenBack + readBack : 0) +
        (c.sums == Tier::Nvme ? 2 * static_cast<double>(m) * dev0.gradientBytes
                              : 0);
    check(c, dev0, part);
    p.candidates.push_back(c);
  }

  // Only the parameter tiers asked for.
  llvm::erase_if(p.candidates, [&](const PlacementCandidate &c) {
    return !llvm::is_contained(o.parameterTiers, tierName(c.params));
  });
  // A placement refused in an earlier round (its static memory plan
  // overflowed a tier, placeMemory) does not fit.
  for (PlacementCandidate &c : p.candidates) {
    c.activations = activations;
    c.policy = suffix;
    c.name += suffix;
    auto refused = rejected.byName.find(c.name);
    if (!c.feasible || refused == rejected.byName.end())
      continue;
    c.feasible = false;
    c.why = refused->second.why;
    c.shortBytes[static_cast<int>(refused->second.tier)] = refused->second.shortBytes;
  }
  // The fastest feasible placement; as across policies, a later (less
  // simple) one must be faster beyond the model's resolution.
  for (auto [i, c] : llvm::enumerate(p.candidates))
    if (c.feasible &&
        (p.chosen < 0 || c.stepSeconds * kStepTimesEqualWithin <
                             p.candidates[p.chosen].stepSeconds))
      p.chosen = static_cast<int>(i);

  std::shared_ptr<PlacedPrograms> programs;
  // The chosen placement's update pipeline, priced again to record an
  // iteration (the refresh replay and the timeline read it).
  traceUpdates = true;
  if (PlacementCandidate *chosen =
          p.chosen >= 0 ? &p.candidates[p.chosen] : nullptr;
      chosen && chosen->update && chosen->params == Tier::Device) {
    for (const DeviceProgram &dev : devices)
      p.deviceUpdates.push_back(
          residentUpdate(dev, chosen->deviceOptimizerWeights, chosen->optimizer)
              .timeline);
    chosen->update = p.deviceUpdates[chosen->reportedDevice];
  }
  if (const PlacementCandidate *c = p.best()) {
    if (c->params != Tier::Device) {
      const Streamed &s = *bestStreamed[streamVariant(
          c->params, c->optimizer, !c->deviceOptimizerWeights.empty(),
          c->sums)];
      std::optional<Streamed> traced;
      if (o.training) {
        std::string why;
        traced = priceStreamed(s.problem, s.chunkOf,
                               s.split >= 0 ? &streamSplits[s.split] : nullptr,
                               s.from, s.plan, s.optimizer, why, s.sums);
        if (!traced || !traced->update)
          return func.emitOpError("the chosen placement's update cannot be "
                                  "priced again: ")
                 << why;
        p.candidates[p.chosen].update = traced->update;
        p.deviceUpdates = {traced->update};
      }
      p.problem = s.problem;
      p.plan = s.plan;
      p.chunkOf = s.chunkOf;
      for (const OpStep &step : dev0.steps)
        p.forwardOps.push_back(step.op);
      for (auto [kind, k] : dev0.layout.positions)
        if (kind != IterationLayout::Kind::Forward)
          p.backwardSteps.push_back(
              {dev0.steps[k].op, kind == IterationLayout::Kind::Rerun});
      if (llvm::Error err = lm::simulateChunks(p.problem, p.plan))
        return func.emitOpError("the chunk schedule failed its replay: ")
               << llvm::toString(std::move(err));
      // Training: the refresh of the chunks carried into the next
      // iteration, replayed beside the schedule's transfers on the
      // iteration as the update pipeline ran it. Each weight's bytes
      // follow its last reader in the schedule's steps.
      if (traced && p.plan.iterations == 1) {
        std::vector<int> lastRead(dev0.weights.size(), -1);
        for (auto [position, at] : llvm::enumerate(dev0.layout.positions))
          for (WeightOp w : dev0.steps[at.step].weights)
            lastRead[dev0.weights.find(w) - dev0.weights.begin()] =
                static_cast<int>(position);
        const lm::IterationTrace &trace = traced->update->trace;
        // (Over several micro-batches, on the last one's clock: the
        // iteration's first step is the earlier ones.)
        const size_t lead = earlierMicroBatchSteps(m, o.training);
        const double from = trace.stepStarts[lead];
        std::vector<double> starts;
        for (double start : ArrayRef<double>(trace.stepStarts).drop_front(lead))
          starts.push_back(start - from);
        std::vector<lm::Refresh> refreshes;
        for (auto [x, i] : llvm::enumerate(traced->tensorWeights)) {
          const lm::Interval &up = trace.tensors[x].up;
          if (!up.empty())
            refreshes.push_back({p.chunkOf[i],
                                 (dev0.weights.begin() + i)->second.bytes,
                                 lastRead[i], up.start - from, up.end - from});
        }
        std::vector<std::pair<double, double>> reloads;
        if (!trace.deviceReloads.empty())
          reloads.push_back({trace.deviceReloads.start - from,
                             trace.deviceReloads.end - from});
        if (llvm::Error err =
                lm::simulateRefresh(p.problem, p.plan, refreshes, starts,
                                    trace.nextStart - from, reloads))
          return func.emitOpError(
                     "the refresh of carried chunks failed its replay: ")
                 << llvm::toString(std::move(err));
        p.refreshesReplayed = static_cast<int64_t>(refreshes.size());
      }
      // Each chunk fetched moves its home copy's share of its bytes over
      // the link (all of them, unless it is streamed in ZeRO-3 shards).
      std::vector<double> shares(p.problem.chunkBytes.size(), 1.0);
      if (streamedInShards) {
        std::vector<double> home = chunkHomeBytes(dev0, p.chunkOf, p.problem.chunkBytes.size());
        for (auto [chunk, bytes] : llvm::enumerate(p.problem.chunkBytes))
          shares[chunk] =
              std::min(1.0, home[chunk] / static_cast<double>(bytes));
      }
      // A split's device update reads its 32-bit weights, uploaded apart
      // where their chunks are not on the device when the iteration ends
      // (splitUpdateUploads): their home bytes, in the chunk's bytes (the
      // bound scales them by its share, as fetches).
      std::vector<double> endReads(p.problem.chunkBytes.size(), 0);
      for (size_t i : updateReloads(dev0, c->deviceOptimizerWeights, p.chunkOf,
                                    std::vector<bool>(endReads.size(), false)))
        if (double share = shares[p.chunkOf[i]]; share > 0)
          endReads[p.chunkOf[i]] +=
              (dev0.weights.begin() + i)->second.held / share;
      // A carried chunk's refresh uploads each weight's part of the update
      // (HeldWeight::offloaded; a weight ZeRO-3 keeps whole is gathered
      // from the other replicas' parts): its stale bytes for the bound are
      // those, in the chunk's bytes, as the end reads.
      lm::ChunkProblem bounded = p.problem;
      if (o.training && !bounded.staleBytes.empty())
        bounded.staleBytes = staleChunkBytes(
            dev0, p.chunkOf, bounded.chunkBytes.size(),
            &c->deviceOptimizerWeights, [&](size_t i, const HeldWeight &h) {
              double share = shares[p.chunkOf[i]];
              return share > 0 ? h.offloaded() / share : 0.0;
            });
      // (Computed once the winner across evaluations is known: it searches.)
      p.lowerBoundInputs =
          std::make_shared<const MemoryPlacement::LowerBoundInputs>(
              MemoryPlacement::LowerBoundInputs{
                  std::move(bounded), std::move(shares), std::move(endReads),
                  p.plan.dropped});
    } else {
      p.lowerBoundH2D = c->h2dBytes;
    }
    // What the static memory plan of the winner across evaluations needs
    // (planned once, in placeMemory).
    programs = std::make_shared<PlacedPrograms>();
    // (A streamed step runs its micro-batches one call after another
    // whatever the schedule: its plan and its IR follow one.)
    programs->sequential =
        P == 1 && (m == 1 || o.schedule == ::loom::PipelineSchedule::OneFOneB ||
                   !o.training || c->params != Tier::Device);
    programs->argumentBytes = e.argumentBytes;
    programs->keptActivations = e.keptActivations;
    programs->offloadedActivations = e.offloadedActivations;
    for (const DeviceProgram &dev : devices)
      programs->gradientStaging.push_back(
          c->optimizer == Tier::Device
              ? 0
              : stagingOf(dev, c->deviceOptimizerWeights, c->params));
  }
  for (const DeviceProgram &dev : devices)
    for (auto &[op, w] : dev.weights) {
      if (p.stateShards.try_emplace(op, w.stateShards).second)
        p.weights.push_back(op);
      if (w.trainable)
        p.trained.insert(op);
    }
  if (programs) {
    programs->devices = std::move(devices);
    p.programs = std::move(programs);
  }
  return p;
}

namespace {
/// The evaluations of one placeMemory, kept across its refusal rounds: a
/// refusal changes what only the evaluations under the refused placement's
/// policy depend on, so each round re-runs those alone (at 58 layers ×
/// 6144 on PatrickStar's node, a round is some 30 evaluations of 50 to
/// 300 ms). An evaluation reads `Rejections` through its policy's split
/// cap and streaming shortfall and the refusals by name of its own
/// placements, so its answer is reused only while those are as they were.
class Evaluations {
public:
  FailureOr<MemoryPlacement> evaluate(ModuleOp module, func::FuncOp func,
                                      const PlacementOptions &o, StringRef recompute,
                                      int zero, Tier activations, const Rejections &rejected,
                                      const ChosenSegments *partialRecompute = nullptr,
                                      const ChosenSegments *partialOffload = nullptr) {
    Key key{recompute.str(), zero, activations, segmentsOf(partialRecompute),
            segmentsOf(partialOffload)};
    auto found = llvm::find_if(entries, [&](const Entry &e) { return e.key == key; });
    if (found != entries.end() && found->readBy == readBy(found->placed, rejected))
      return found->placed;
    FailureOr<MemoryPlacement> placed =
        ::evaluate(module, func, o, recompute, zero, activations, rejected,
                   partialRecompute, partialOffload);
    if (failed(placed) || placed->candidates.empty())
      return placed;
    if (found == entries.end())
      found =
          entries.insert(entries.end(), Entry{std::move(key), MemoryPlacement(),
                                              ReadRejections()});
    found->placed = *placed;
    found->readBy = readBy(*placed, rejected);
    return placed;
  }

private:
  /// Chosen segments by their ops and ranks, in a fixed order.
  using Segments = std::vector<std::pair<Operation *, int64_t>>;
  struct Key {
    std::string recompute;
    int zero;
    Tier activations;
    std::optional<Segments> recomputed, offloaded;
    bool operator==(const Key &k) const {
      return std::tie(recompute, zero, activations, recomputed, offloaded) ==
             std::tie(k.recompute, k.zero, k.activations, k.recomputed, k.offloaded);
    }
  };
  /// What of `Rejections` an evaluation read (its placements all share
  /// one policy).
  struct ReadRejections {
    double splitCap = 0, streamShort = 0;
    std::vector<bool> refusedByName; // per placement
    bool operator==(const ReadRejections &r) const {
      return std::tie(splitCap, streamShort, refusedByName) ==
             std::tie(r.splitCap, r.streamShort, r.refusedByName);
    }
  };
  struct Entry {
    Key key;
    MemoryPlacement placed;
    ReadRejections readBy;
  };

  static std::optional<Segments> segmentsOf(const ChosenSegments *chosen) {
    if (!chosen)
      return std::nullopt;
    Segments ops(chosen->ops.begin(), chosen->ops.end());
    llvm::sort(ops);
    return ops;
  }
  static ReadRejections readBy(const MemoryPlacement &placed, const Rejections &rejected) {
    const std::string &policy = placed.candidates.front().policy;
    ReadRejections read{rejected.splitCapOf(policy), rejected.streamShortOf(policy), {}};
    for (const PlacementCandidate &c : placed.candidates)
      read.refusedByName.push_back(rejected.byName.count(c.name) > 0);
    return read;
  }

  std::vector<Entry> entries;
};
} // namespace

namespace {
/// A kind of placement, as every evaluation prices it: where parameters
/// and optimizer state live, and whether the optimizer is split between the
/// device and the host.
struct PlacementKind {
  Tier params, optimizer;
  bool split;
  explicit PlacementKind(const PlacementCandidate &c)
      : params(c.params), optimizer(c.optimizer),
        split(!c.deviceOptimizerWeights.empty()) {}
  bool operator==(const PlacementKind &o) const {
    return params == o.params && optimizer == o.optimizer && split == o.split;
  }
};

/// An evaluation under partial recomputation, offload or both: the
/// segments it recomputes and those whose kept activations it offloads
/// (null: none), and its policy and ZeRO stage.
struct PartialEvaluation {
  MemoryPlacement placement;
  std::shared_ptr<const ChosenSegments> recomputed, offloaded;
  RecomputeMode recompute = RecomputeMode::Selective;
  int zero = 0;
};

/// What fewestSegments found: the evaluation with the fewest segments
/// that fits, and those segments.
struct FewestSegments {
  MemoryPlacement placement;
  std::shared_ptr<const ChosenSegments> segments;
};
} // namespace

/// The evaluation's placement of `kind`, where it priced one.
static const PlacementCandidate *placementOf(const MemoryPlacement &p,
                                             const PlacementKind &kind) {
  for (const PlacementCandidate &c : p.candidates)
    if (PlacementKind(c) == kind)
      return &c;
  return nullptr;
}

/// Evaluations fewestSegments may spend on one search.
constexpr int kMaxPartialProbes = 6;

/// The first `k` of `ranked`, each op marked with its segment's rank.
static std::shared_ptr<const ChosenSegments>
chooseSegments(ArrayRef<RecomputeSegment> ranked, int64_t k) {
  auto segments = std::make_shared<ChosenSegments>();
  segments->chosen = k;
  segments->segments = static_cast<int64_t>(ranked.size());
  for (auto [rank, s] : llvm::enumerate(ranked.take_front(k)))
    for (Operation *op : s.ops)
      segments->ops[op] = static_cast<int64_t>(rank);
  // A segment's checkpoint re-runs with it too, unless a chosen segment
  // reads it (the one after it, which re-runs from it, so it is kept).
  SmallVector<std::pair<Operation *, int64_t>> checkpoints;
  for (auto [rank, s] : llvm::enumerate(ranked.take_front(k))) {
    if (!s.checkpoint)
      continue;
    bool readByChosen = false;
    for (Value r : s.checkpoint->getResults())
      forEachReader(r, [&](Operation *user) {
        readByChosen |= segments->ops.count(user) > 0;
      });
    if (!readByChosen)
      checkpoints.push_back({s.checkpoint, static_cast<int64_t>(rank)});
  }
  for (auto [op, rank] : checkpoints)
    segments->ops[op] = rank;
  return segments;
}

/// The fewest of `ranked` segments that, recomputed (or offloaded), make
/// placement `all` fit as it does with every segment's share (full
/// recomputation, or every kept activation offloaded), given that `none`,
/// the same kind of placement without them, does not. The device peak
/// falls about linearly with the segments chosen (repeated layers), so
/// probes alternate between interpolating the peaks against `deviceBytes`
/// and halving the bracket, at most kMaxPartialProbes of them; none if no
/// probe of fewer than all segments fits (all of them is `all` itself).
/// A probe that fits by the estimator and is its evaluation's choice is
/// replayed (`replayedPeak`: the device peak its static memory plan
/// overflows with, or none if it fits); one refused there counts as not
/// fitting, so the bisection moves on within this search.
static FailureOr<std::optional<FewestSegments>> fewestSegments(
    ArrayRef<RecomputeSegment> ranked, const PlacementCandidate &none,
    const PlacementCandidate &all, double deviceBytes,
    function_ref<FailureOr<MemoryPlacement>(const ChosenSegments &)> evaluateWith,
    function_ref<FailureOr<std::optional<double>>(MemoryPlacement &)> replayedPeak) {
  struct Probe {
    int64_t segments;
    double peak;
  };
  const PlacementKind target(all);
  const int64_t n = static_cast<int64_t>(ranked.size());
  // `all` stands for all n segments, and fits.
  Probe lo{0, none.devicePeak}, hi{n, all.devicePeak};
  std::optional<FewestSegments> found;
  for (int probe = 0; probe < kMaxPartialProbes; ++probe) {
    const int64_t top = hi.segments - 1;
    if (top <= lo.segments)
      break;
    int64_t k = (lo.segments + hi.segments + 1) / 2;
    if (probe % 2 == 0 && lo.peak > hi.peak)
      k = lo.segments + static_cast<int64_t>(std::ceil(
                            (lo.peak - deviceBytes) / (lo.peak - hi.peak) *
                            static_cast<double>(hi.segments - lo.segments)));
    k = std::clamp(k, lo.segments + 1, top);
    std::shared_ptr<const ChosenSegments> segments = chooseSegments(ranked, k);
    FailureOr<MemoryPlacement> placed = evaluateWith(*segments);
    if (failed(placed))
      return failure();
    const PlacementCandidate *c = placementOf(*placed, target);
    if (!c)
      break;
    std::optional<double> overflowing;
    if (c->feasible && c == placed->best()) {
      FailureOr<std::optional<double>> replayed = replayedPeak(*placed);
      if (failed(replayed))
        return failure();
      overflowing = *replayed;
    }
    if (c->feasible && !overflowing) {
      hi = {k, c->devicePeak};
      found = FewestSegments{std::move(*placed), std::move(segments)};
    } else {
      lo = {k, overflowing.value_or(c->devicePeak)};
    }
  }
  return found;
}

/// The static memory plan of the chosen placement, on each of its pipeline
/// devices (StaticMemoryPlan.cpp), each tier replayed against its
/// capacity: the first overflow found, which refuses the placement where
/// the options say so (none: it fits as planned).
static FailureOr<std::optional<Rejection>>
planChosenMemory(func::FuncOp func, MemoryPlacement &p, bool training) {
  const PlacementCandidate *c = p.best();
  if (!c || !p.programs)
    return std::optional<Rejection>();
  const PlacedPrograms &programs = *p.programs;
  std::optional<Rejection> first;
  for (size_t d = 0; d < programs.devices.size(); ++d) {
    FailureOr<StaticMemoryPlan> memory =
        planStaticMemory(func, p, *c, programs, d, training);
    if (failed(memory))
      return failure();
    for (Tier t : {Tier::Device, Tier::Host, Tier::Nvme}) {
      const std::optional<lm::TierOverflow> &over = memory->arena(t).overflow;
      if (!over || first)
        continue;
      std::string device =
          programs.sequential ? "" : llvm::formatv(" on pipeline device {0}", d).str();
      first = Rejection{
          llvm::formatv("its static memory plan{0} needs {1} of {2} at schedule "
                        "position {3} ('{4}' allocated), over the tier's {5}",
                        device, bytesText(static_cast<double>(over->bytes)),
                        tierLabel(t), over->position, over->buffer,
                        bytesText(static_cast<double>(over->capacity))),
          t, static_cast<double>(over->bytes - over->capacity), d};
    }
    if (programs.sequential)
      p.memoryPlan = std::move(*memory);
    else
      p.pipelineMemoryPlans.push_back(std::move(*memory));
  }
  return first;
}

/// Replays a partial search's probe (its evaluation's choice) where
/// placeMemory would refuse it by name: the device peak its static memory
/// plan overflows with (the tier's capacity where another tier
/// overflowed), the refusal recorded as placeMemory records its own; none
/// if it fits. Splits of the optimizer and streamed schedules are left to
/// placeMemory, which shrinks them instead.
static FailureOr<std::optional<double>> replayProbe(func::FuncOp func,
                                                    const PlacementOptions &o,
                                                    MemoryPlacement &placed,
                                                    Rejections &rejected,
                                                    std::vector<std::string> &refusals) {
  const PlacementCandidate *c = placed.best();
  if (!o.refuseOverflow || !c || shrinksWhenRefused(*c))
    return std::optional<double>();
  FailureOr<std::optional<Rejection>> overflow = planChosenMemory(func, placed, o.training);
  // The plans were made for this check only (placeMemory plans the winner).
  placed.memoryPlan.reset();
  placed.pipelineMemoryPlans.clear();
  if (failed(overflow))
    return failure();
  if (!*overflow)
    return std::optional<double>();
  refusals.push_back(c->name + ": " + (*overflow)->why);
  double peak = (*overflow)->tier == Tier::Device ? placed.deviceBytes + (*overflow)->shortBytes
                                                  : placed.deviceBytes;
  rejected.byName[c->name] = std::move(**overflow);
  return std::optional<double>(peak);
}

/// Every placement of the module under each ZeRO stage and activation
/// policy asked for, the fastest that fits chosen (none of `rejected`).
static FailureOr<MemoryPlacement> placeAll(ModuleOp module, func::FuncOp func,
                                           const PlacementOptions &o,
                                           Evaluations &evaluations,
                                           Rejections &rejected,
                                           std::vector<std::string> &refusals) {
  // Every ZeRO stage asked for (only 0 without data parallelism), each
  // without recomputation and (training) with selective recomputation (the
  // weight-free regions re-run) and full recomputation (only the activations
  // between blocks kept): all their placements join one list, and the
  // fastest wins.
  MemoryPlacement p;
  bool first = true;
  // Whether, under the policy being tried, keeping the activations on the
  // device fits with everything else there too.
  bool keptFitsAsIs = false;
  SmallVector<Tier, 2> tiers; // the device first
  for (Tier t : {Tier::Device, Tier::Host})
    if (llvm::is_contained(o.activationTiers, tierName(t)))
      tiers.push_back(t);
  SmallVector<int> stages(o.zeroStages.begin(), o.zeroStages.end());
  llvm::sort(stages);
  stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
  // Every placement of an evaluation joins the list (named for its policy
  // by evaluate). Placements are tried simplest first (lower ZeRO stage,
  // less recomputation): a later one must be faster beyond the model's
  // resolution to replace an earlier one.
  auto join = [&](MemoryPlacement &part, RecomputeMode recompute, int zero,
                  std::shared_ptr<const ChosenSegments> recomputed = nullptr,
                  std::shared_ptr<const ChosenSegments> offloaded = nullptr) {
    size_t offset = p.candidates.size();
    for (PlacementCandidate c : part.candidates) {
      c.recompute = recompute;
      c.recomputedSegments = recomputed;
      c.offloadedSegments = offloaded;
      p.candidates.push_back(std::move(c));
    }
    const PlacementCandidate *mine = p.best(), *theirs = part.best();
    if (theirs && (!mine || theirs->stepSeconds * kStepTimesEqualWithin < mine->stepSeconds)) {
      p.chosen = static_cast<int>(offset) + part.chosen;
      p.zeroStage = zero;
      p.problem = std::move(part.problem);
      p.plan = std::move(part.plan);
      p.chunkOf = std::move(part.chunkOf);
      p.forwardOps = std::move(part.forwardOps);
      p.backwardSteps = std::move(part.backwardSteps);
      p.lowerBoundH2D = part.lowerBoundH2D;
      p.lowerBoundInputs = std::move(part.lowerBoundInputs);
      p.refreshesReplayed = part.refreshesReplayed;
      p.deviceUpdates = std::move(part.deviceUpdates);
      p.programs = std::move(part.programs);
      p.weights = std::move(part.weights);
      p.stateShards = std::move(part.stateShards);
      p.trained = std::move(part.trained);
    }
  };
  // The placements an evaluation priced (its candidates and choice only).
  auto pricedOf = [](const MemoryPlacement &part) {
    MemoryPlacement priced;
    priced.candidates = part.candidates;
    priced.chosen = part.chosen;
    return priced;
  };
  // `all`'s placement (every segment's share: full recomputation, or every
  // kept activation offloaded) where `none`'s placement of the same kind
  // does not fit: the fewest segments that fit it too, if any.
  std::vector<PartialEvaluation> partials;
  auto tryPartial = [&](ArrayRef<RecomputeSegment> ranked, const MemoryPlacement &none,
                        const MemoryPlacement &all, RecomputeMode recompute,
                        Tier activations, int zero, bool offload) -> LogicalResult {
    const PlacementCandidate *fits = all.best();
    if (!fits)
      return success();
    const PlacementCandidate *shortOf = placementOf(none, PlacementKind(*fits));
    if (!shortOf || shortOf->feasible)
      return success();
    StringRef policy = recomputeModeName(recompute);
    FailureOr<std::optional<FewestSegments>> fewest = fewestSegments(
        ranked, *shortOf, *fits, p.deviceBytes,
        [&](const ChosenSegments &segments) {
          return offload ? evaluations.evaluate(module, func, o, policy, zero,
                                                activations, rejected, nullptr, &segments)
                         : evaluations.evaluate(module, func, o, policy, zero,
                                                activations, rejected, &segments);
        },
        [&](MemoryPlacement &placed) { return replayProbe(func, o, placed, rejected, refusals); });
    if (failed(fewest))
      return failure();
    if (*fewest) {
      PartialEvaluation partial{std::move((*fewest)->placement), nullptr, nullptr,
                                recompute, zero};
      (offload ? partial.offloaded : partial.recomputed) = std::move((*fewest)->segments);
      partials.push_back(std::move(partial));
    }
    return success();
  };
  // Where partial recomputation and partial offload under selective
  // recomputation both fit one placement (of ZeRO stage `zero`), fewer
  // segments recomputed with the first of the others offloaded may beat
  // both: offload is free while the link has room, recomputation costs
  // compute. For r of partial recomputation's k segments, the fewest
  // segments in program order (`inOrder`, less the recomputed ones) whose
  // kept activations, offloaded, make it fit. r is tried at k/4, k/2 and
  // 3k/4, then at half the spacing on each side of the fastest so far,
  // and at the fastest's neighbours until it has no faster one (the price
  // need not be unimodal in r, so this finds a local best in about
  // 2 log2(k) more counts, where every count would cost k).
  auto tryMixed = [&](ArrayRef<RecomputeSegment> ranked,
                      ArrayRef<RecomputeSegment> inOrder, int zero) -> LogicalResult {
    const PartialEvaluation *recomputes = nullptr, *offloads = nullptr;
    for (const PartialEvaluation &e : partials)
      if (e.zero == zero && e.recompute == RecomputeMode::Selective)
        (e.offloaded ? offloads : recomputes) = &e;
    if (!recomputes || !offloads || !recomputes->recomputed)
      return success();
    const PlacementCandidate *a = recomputes->placement.best(),
                             *b = offloads->placement.best();
    if (!a || !b || !(PlacementKind(*a) == PlacementKind(*b)))
      return success();
    const PlacementKind kind(*a);
    const int64_t k = recomputes->recomputed->chosen;
    StringRef policy = recomputeModeName(RecomputeMode::Selective);
    std::vector<PartialEvaluation> mixed;
    // Each count's step time where a mix of `kind` fits (infinity where r
    // segments fit alone, or where no offload makes them fit).
    std::map<int64_t, double> tried;
    auto tryCount = [&](int64_t r) -> LogicalResult {
      if (r < 1 || r >= k || tried.count(r))
        return success();
      tried[r] = std::numeric_limits<double>::infinity();
      std::shared_ptr<const ChosenSegments> recomputed = chooseSegments(ranked, r);
      FailureOr<MemoryPlacement> kept = evaluations.evaluate(
          module, func, o, policy, zero, Tier::Device, rejected, recomputed.get());
      if (failed(kept))
        return failure();
      // (Where r segments fit alone, partial recomputation's bracket
      // covers it.)
      const PlacementCandidate *shortOf = placementOf(*kept, kind);
      if (!shortOf || shortOf->feasible)
        return success();
      FailureOr<MemoryPlacement> all = evaluations.evaluate(
          module, func, o, policy, zero, Tier::Host, rejected, recomputed.get());
      if (failed(all))
        return failure();
      const PlacementCandidate *fits = placementOf(*all, kind);
      if (!fits || !fits->feasible)
        return success();
      SmallVector<RecomputeSegment> rest;
      for (const RecomputeSegment &s : inOrder)
        if (!recomputed->ops.count(s.ops.front()))
          rest.push_back(s);
      FailureOr<std::optional<FewestSegments>> fewest = fewestSegments(
          rest, *shortOf, *fits, p.deviceBytes,
          [&](const ChosenSegments &segments) {
            return evaluations.evaluate(module, func, o, policy, zero, Tier::Host,
                                        rejected, recomputed.get(), &segments);
          },
          [&](MemoryPlacement &placed) {
            return replayProbe(func, o, placed, rejected, refusals);
          });
      if (failed(fewest))
        return failure();
      if (!*fewest)
        return success();
      if (const PlacementCandidate *mix =
              placementOf((*fewest)->placement, kind))
        tried[r] = mix->stepSeconds;
      mixed.push_back(PartialEvaluation{
          std::move((*fewest)->placement), recomputed,
          std::move((*fewest)->segments), RecomputeMode::Selective, zero});
      return success();
    };
    for (int64_t r : {k / 4, k / 2, 3 * k / 4})
      if (failed(tryCount(r)))
        return failure();
    auto fastest = [&] {
      auto best = llvm::min_element(
          tried, [](auto &x, auto &y) { return x.second < y.second; });
      return best == tried.end() || std::isinf(best->second) ? int64_t(-1)
                                                             : best->first;
    };
    for (int64_t step = std::max<int64_t>(k / 8, 1), at = fastest(); at >= 0;
         step = std::max<int64_t>(step / 2, 1)) {
      if (failed(tryCount(at - step)) || failed(tryCount(at + step)))
        return failure();
      const int64_t next = fastest();
      if (step == 1 && next == at)
        break;
      at = next;
    }
    for (PartialEvaluation &e : mixed)
      partials.push_back(std::move(e));
    return success();
  };
  for (int zero : stages) {
    if (!first && p.dataParallel == 1)
      break; // ZeRO has no replicas to shard over
    // The placements priced under selective and under full recomputation,
    // activations on the device (partial recomputation lies between the
    // two), and the segments partial recomputation takes, in order.
    std::optional<SmallVector<RecomputeSegment>> ranked;
    // Selective recomputation's segments in program order, as partial
    // offload takes them.
    std::optional<SmallVector<RecomputeSegment>> selectiveInOrder;
    std::optional<MemoryPlacement> priced[2]; // selective, full
    for (StringRef name : o.recomputeModes) {
      RecomputeMode recompute = *parseRecomputeMode(name);
      // Under this policy: the placements keeping the activations on the
      // device, and its segments.
      std::optional<MemoryPlacement> kept;
      SmallVector<RecomputeSegment> segments;
      for (Tier activations : tiers) {
        if (recompute != RecomputeMode::None && !o.training)
          continue;
        if (activations == tiers.front())
          keptFitsAsIs = false;
        if (activations == Tier::Host && !o.training)
          continue; // inference keeps nothing for a backward
        // Offload only adds transfers: priced when keeping the activations
        // on the device (under the same policy and ZeRO stage) does not fit
        // as it is, or was not priced.
        if (activations == Tier::Host && keptFitsAsIs)
          continue;
        FailureOr<MemoryPlacement> part =
            evaluations.evaluate(module, func, o, name, zero, activations, rejected);
        if (failed(part))
          return failure();
        if (const PlacementCandidate *c = part->best(); c && activations == Tier::Device)
          keptFitsAsIs = c->params == Tier::Device && c->optimizer == Tier::Device;
        if (first) {
          p = *part;
          p.candidates.clear();
          p.chosen = -1;
          first = false;
        }
        if (activations == Tier::Device) {
          kept = pricedOf(*part);
          // Offload takes each segment's kept activations, its checkpoint's
          // too; recomputation the segments whose re-run frees something.
          segments.clear();
          for (RecomputeSegment s : part->recomputeSegments) {
            if (s.checkpoint)
              s.ops.push_back(std::exchange(s.checkpoint, nullptr));
            segments.push_back(std::move(s));
          }
          if (recompute == RecomputeMode::Selective) {
            ranked.emplace();
            for (const RecomputeSegment &s : part->recomputeSegments)
              if (!s.ops.empty() && s.freedBytes > 0)
                ranked->push_back(s);
          }
          if (recompute != RecomputeMode::None)
            priced[recompute == RecomputeMode::Full] = pricedOf(*part);
        }
        // The summary line's figures keep the activations on the device.
        if (recompute != RecomputeMode::None && zero == stages.front() &&
            activations == Tier::Device)
          p.otherDeviceBytesRecomputed[recompute == RecomputeMode::Full] =
              part->otherDeviceBytes;
        if (recompute == RecomputeMode::None && activations == Tier::Device)
          p.unlimitedStepSeconds =
              std::min(p.unlimitedStepSeconds, part->unlimitedStepSeconds);
        // Where offloading every kept activation is what fits a placement,
        // offload only as many segments' as it takes, the first ones first.
        if (activations == Tier::Host && kept && o.partialOffload) {
          llvm::sort(segments, [](const RecomputeSegment &a, const RecomputeSegment &b) {
            return a.ops.front()->isBeforeInBlock(b.ops.front());
          });
          if (recompute == RecomputeMode::Selective)
            selectiveInOrder = segments;
          if (failed(tryPartial(segments, *kept, *part, recompute, Tier::Host, zero,
                                /*offload=*/true)))
            return failure();
        }
        join(*part, recompute, zero);
      }
    }
    // Where full recomputation's fastest placement does not fit under
    // selective recomputation, recompute only as many segments as it takes.
    if (o.partialRecompute && ranked && priced[0] && priced[1] &&
        failed(tryPartial(*ranked, *priced[0], *priced[1], RecomputeMode::Selective,
                          Tier::Device, zero, /*offload=*/false)))
      return failure();
    if (ranked && selectiveInOrder && failed(tryMixed(*ranked, *selectiveInOrder, zero)))
      return failure();
  }
  // Partial recomputation and offload join last, the least simple of all:
  // they must be faster than every whole-program policy under every ZeRO
  // stage to win.
  for (PartialEvaluation &partial : partials)
    join(partial.placement, partial.recompute, partial.zero, partial.recomputed,
         partial.offloaded);
  return p;
}

/// An option listing tiers (`option`, whose tiers it says `what`): one at
/// least, each of `allowed`.
static LogicalResult checkTierList(ModuleOp module, ArrayRef<std::string> tiers,
                                   StringRef option, StringRef what,
                                   ArrayRef<StringRef> allowed) {
  if (tiers.empty())
    return emitError(module.getLoc(), "loom-place-memory: ")
           << option << " lists no tier";
  for (const std::string &t : tiers) {
    if (llvm::is_contained(allowed, t))
      continue;
    InFlightDiagnostic diag = emitError(module.getLoc(), "loom-place-memory: ")
                              << option << " " << what << " ";
    for (auto [i, a] : llvm::enumerate(allowed))
      diag << (i == 0                    ? ""
               : i + 1 == allowed.size() ? " or "
                                         : ", ")
           << "'" << a << "'";
    return diag << ", not '" << t << "'";
  }
  return success();
}

FailureOr<MemoryPlacement> mlir::loom::placeMemory(ModuleOp module,
                                                   const PlacementOptions &o) {
  if (!(o.memoryFraction > 0 && o.memoryFraction <= 1))
    return emitError(module.getLoc(),
                     "loom-place-memory: memory-fraction must be in "
                     "(0, 1], not ")
           << o.memoryFraction;
  if (o.chunkBytes < 0)
    return emitError(module.getLoc(),
                     "loom-place-memory: chunk-bytes must be >= 0");
  if (o.zeroStages.empty())
    return emitError(module.getLoc(),
                     "loom-place-memory: zero lists no ZeRO stage");
  for (int z : o.zeroStages)
    if (z < 0 || z > 3)
      return emitError(module.getLoc(), "loom-place-memory: ZeRO stage ")
             << z << " does not exist (0, 1, 2 or 3)";
  if (failed(checkTierList(module, o.activationTiers, "activations", "go to",
                           {"device", "host"})) ||
      failed(checkTierList(module, o.parameterTiers, "parameters", "live on",
                           {"device", "host", "nvme"})))
    return failure();
  if (!llvm::is_contained(o.activationTiers, "device") && !o.training)
    return emitError(module.getLoc(),
                     "loom-place-memory: inference keeps no activations "
                     "for a backward: activations=host has nothing to place");
  for (const std::string &r : o.recomputeModes)
    if (!parseRecomputeMode(r))
      return emitError(module.getLoc(),
                       "loom-place-memory: unknown activation policy '")
             << r << "' (none, selective or full)";
  if (llvm::none_of(o.recomputeModes, [&](const std::string &r) {
        return r == "none" || o.training;
      }))
    return emitError(module.getLoc(),
                     "loom-place-memory: no activation policy to place "
                     "(inference keeps activations: recompute none)");
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && (!func || f.getSymName() == "main"))
      func = f;
  if (!func)
    return emitError(module.getLoc(),
                     "loom-place-memory: no function with a body");
  removePlacement(module);

  // Placements whose static memory plan overflowed a tier in its replay
  // are refused, and the choice is made again without them: each round
  // refuses one more, so this ends when one fits or none is left.
  Evaluations evaluations;
  Rejections rejected;
  std::vector<std::string> refusals;
  MemoryPlacement p;
  for (;;) {
    FailureOr<MemoryPlacement> placed =
        placeAll(module, func, o, evaluations, rejected, refusals);
    if (failed(placed))
      return failure();
    p = std::move(*placed);
    FailureOr<std::optional<Rejection>> overflow = planChosenMemory(func, p, o.training);
    if (failed(overflow))
      return failure();
    if (!*overflow || !o.refuseOverflow)
      break;
    const PlacementCandidate &refused = *p.best();
    // Streamed parameters are planned again on a smaller budget (by at
    // least a megabyte, so that the schedule changes); a split of their
    // optimizer keeps what host memory needs it to. A split of resident
    // parameters' optimizer is tried again with that much less of its
    // state on the device.
    const bool streamed = refused.params != Tier::Device;
    bool splitShrinks = true;
    if (!streamed && !refused.deviceOptimizerWeights.empty() &&
        (*overflow)->tier == Tier::Device) {
      // What the split kept on the device that overflowed. A weight held
      // by two devices (a tied embedding) is kept on both when the first
      // keeps it, so the cap may not lower what the second keeps: a split
      // keeping no less there than one refused before is refused by name.
      double kept = 0;
      for (auto &[op, w] : p.programs->devices[(*overflow)->device].weights)
        if (refused.deviceOptimizerWeights.contains(op))
          kept += w.gradient() + w.state();
      double &cap = rejected.splitCap.try_emplace(refused.policy, INFINITY).first->second;
      cap = std::min(cap, kept - (*overflow)->shortBytes);
      auto [least, fresh] = rejected.splitKept.try_emplace(refused.policy, kept);
      splitShrinks = fresh || kept < least->second;
      least->second = std::min(least->second, kept);
    }
    if (streamed && (*overflow)->tier == Tier::Device) {
      int &refusedBefore = rejected.streamRefusals[refused.policy];
      rejected.streamShort[refused.policy] +=
          std::ldexp(std::max((*overflow)->shortBytes, double(1 << 20)), refusedBefore++);
    }
    refusals.push_back(refused.name + ": " + (*overflow)->why);
    // (The successor of a split or a streamed schedule keeps its name, so
    // those are refused by their cap and budget, not by name.)
    if (!shrinksWhenRefused(refused) || (*overflow)->tier != Tier::Device ||
        !splitShrinks)
      rejected.byName[refused.name] = std::move(**overflow);
  }
  p.refusals = std::move(refusals);
  if (const MemoryPlacement::LowerBoundInputs *in = p.lowerBoundInputs.get()) {
    // A step of several micro-batches runs the iteration that many times;
    // only the first starts with its carried chunks stale (the update ran
    // before it), the others with them as the one before left them.
    lm::ChunkProblem fresh = in->problem;
    fresh.staleBytes.clear();
    auto perStep = [&](const std::vector<int> &released) {
      double bound = lm::sharedFetchLowerBound(in->problem, in->shares,
                                               in->endReads, released);
      if (p.microBatches > 1)
        bound += static_cast<double>(p.microBatches - 1) *
                 lm::sharedFetchLowerBound(fresh, in->shares, in->endReads,
                                           released);
      return bound;
    };
    p.lowerBoundH2D = perStep({});
    // Where the plan releases chunks after their last read (faster than
    // carrying them, for more bytes), what plans releasing them move.
    if (!in->released.empty())
      p.lowerBoundH2DReleasing = perStep(in->released);
  }
  Builder b(module.getContext());
  if (const PlacementCandidate *c = p.best()) {
    if (c->recomputedSegments)
      for (auto [op, segment] : c->recomputedSegments->ops)
        if (!op->hasAttr(kRecomputeMark))
          op->setAttr(kRecomputeMark, b.getI64IntegerAttr(segment));
    if (c->offloadedSegments)
      for (const auto &entry : c->offloadedSegments->ops)
        entry.first->setAttr(kOffloadMark, b.getUnitAttr());
    for (auto [i, op] : llvm::enumerate(p.weights)) {
      auto w = cast<WeightOp>(op);
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("tier", b.getStringAttr(tierName(c->params)))};
      if (c->params != Tier::Device) {
        attrs.push_back(b.getNamedAttr("chunk", b.getI64IntegerAttr(p.chunkOf[i])));
        // Where it lies in its chunk's copies (the backward's fetches,
        // written by --loom-autodiff, place it by this).
        if (p.memoryPlan && i < p.memoryPlan->offsetInChunk.size())
          attrs.push_back(b.getNamedAttr(
              "chunk_offset", b.getI64IntegerAttr(p.memoryPlan->offsetInChunk[i])));
      }
      if (p.trained.contains(op)) {
        // Under a split, the first parameters keep their state on the device.
        Tier tier = c->deviceOptimizerWeights.contains(op)
                        ? Tier::Device
                        : c->optimizer;
        attrs.push_back(
            b.getNamedAttr("optimizer", b.getStringAttr(tierName(tier))));
        // Streamed over several micro-batches: where the host keeps the
        // gradient's sum (--loom-optimizer-step).
        if (c->params != Tier::Device && p.microBatches > 1 &&
            tier != Tier::Device)
          attrs.push_back(
              b.getNamedAttr("sums", b.getStringAttr(tierName(c->sums))));
        // ZeRO: the replicas this weight's state is divided over.
        if (double shards = p.stateShards.lookup(op); shards > 1)
          attrs.push_back(b.getNamedAttr(
              "zero_shards", b.getI64IntegerAttr(static_cast<int64_t>(shards))));
      }
      // Its buffers in the static memory plan, each in its tier's arena;
      // pipelined, on each pipeline device that holds it (a tied weight
      // lives on two).
      if (p.memoryPlan)
        appendWeightOffsets(b, p.memoryPlan->weights.lookup(op), attrs);
      if (ArrayAttr onDevices =
              pipelineWeightOffsets(b, p.pipelineMemoryPlans, op))
        attrs.push_back(b.getNamedAttr("pipeline_offsets", onDevices));
      op->setAttr("loom.placement", b.getDictionaryAttr(attrs));
    }
    if (p.memoryPlan)
      writeResultOffsets(func, *p.memoryPlan);
    if (!p.pipelineMemoryPlans.empty())
      writePipelineOffsets(func, p.pipelineMemoryPlans);
    // ZeRO-3 stores the weights in shards; ZeRO-2 only their gradients,
    // which the backward returns in the same layout (and the optimizer
    // step updates in, its state stored there). ZeRO-1 is the same program
    // for a step of one micro-batch: its whole gradient outlives the
    // backward only to accumulate over micro-batches, and the
    // reduce-scatter it then ends in is what the cost model prices.
    if (p.zeroStage >= 1 && p.programs && (p.zeroStage >= 3 || o.training)) {
      DenseMap<Operation *, const WeightFacts *> factsOf;
      for (const DeviceProgram &dev : p.programs->devices)
        for (const auto &[op, w] : dev.weights)
          factsOf.try_emplace(op, &w.facts);
      // (Those it keeps whole are named in the report.)
      SmallVector<Operation *> sharded;
      for (Operation *op : p.weights)
        if (const WeightFacts *f = factsOf.lookup(op); f && f->replicas > 1)
          sharded.push_back(op);
      auto facts = [&](Operation *op) { return factsOf.lookup(op); };
      ZeroShardsWritten z = p.zeroStage >= 3 ? writeZeroShards(func, sharded, facts)
                                             : writeZeroGradients(func, sharded, facts);
      p.zeroShardedWeights = z.weights;
      p.zeroKeptWhole = std::move(z.kept);
    }
    // Streamed in ZeRO-3 shards (written above), each fetch copies the
    // weight's stored shard and the readers' annotations gather it.
    if (c->params != Tier::Device) {
      MovementSchedule schedule{p.weights,  p.chunkOf,  p.forwardOps,
                                p.backwardSteps, &p.problem, &p.plan};
      if (p.memoryPlan) {
        schedule.fetchOffsets = p.memoryPlan->fetchOffsets;
        schedule.carriedOffsets = p.memoryPlan->carriedOffsets;
        schedule.offsetInChunk = p.memoryPlan->offsetInChunk;
      }
      if (failed(writeMovement(func, schedule)) ||
          failed(verifyMovement(func, p.problem.chunkBytes, p.problem.budgetBytes,
                                p.memoryPlan ? p.memoryPlan->arena(Tier::Device).bytes
                                             : -1)))
        return failure();
    }
  }
  SmallVector<NamedAttribute> summary = {
      b.getNamedAttr("cluster", b.getStringAttr(p.clusterName)),
      b.getNamedAttr("fits", b.getBoolAttr(p.best() != nullptr))};
  if (const PlacementCandidate *c = p.best()) {
    summary.push_back(b.getNamedAttr("placement", b.getStringAttr(c->name)));
    summary.push_back(
        b.getNamedAttr("recompute", b.getStringAttr(recomputeModeName(c->recompute))));
    if (const ChosenSegments *r = c->recomputedSegments.get())
      summary.push_back(b.getNamedAttr("recomputed_segments",
                                       b.getDenseI64ArrayAttr({r->chosen, r->segments})));
    if (const ChosenSegments *f = c->offloadedSegments.get())
      summary.push_back(b.getNamedAttr("offloaded_segments",
                                       b.getDenseI64ArrayAttr({f->chosen, f->segments})));
    summary.push_back(
        b.getNamedAttr("activations", b.getStringAttr(tierName(c->activations))));
    if (c->activationBytes > 0)
      summary.push_back(b.getNamedAttr("activation_bytes",
                                       b.getF64FloatAttr(c->activationBytes)));
    if (p.memoryPlan)
      summary.push_back(b.getNamedAttr("arenas", arenasAttr(b, *p.memoryPlan)));
    if (!p.pipelineMemoryPlans.empty()) {
      SmallVector<Attribute> perDevice;
      for (const StaticMemoryPlan &plan : p.pipelineMemoryPlans)
        perDevice.push_back(arenasAttr(b, plan));
      summary.push_back(
          b.getNamedAttr(kPipelineArenasKey, b.getArrayAttr(perDevice)));
    }
    if (p.dataParallel > 1)
      summary.push_back(b.getNamedAttr("zero_stage", b.getI64IntegerAttr(p.zeroStage)));
    if (c->update && c->d2hBytes > 0 && p.delayedUpdate &&
        c->params == Tier::Device)
      summary.push_back(b.getNamedAttr("delayed_update", b.getBoolAttr(true)));
    summary.push_back(b.getNamedAttr("step_time_s", b.getF64FloatAttr(c->stepSeconds)));
    summary.push_back(b.getNamedAttr("h2d_bytes", b.getF64FloatAttr(c->h2dBytes)));
    summary.push_back(b.getNamedAttr("d2h_bytes", b.getF64FloatAttr(c->d2hBytes)));
    summary.push_back(b.getNamedAttr("device_peak_bytes", b.getF64FloatAttr(c->devicePeak)));
    if (c->chunkBytes) {
      summary.push_back(b.getNamedAttr("chunk_bytes", b.getI64IntegerAttr(c->chunkBytes)));
      // What verifyMovement needs to replay the IR's fetches on its own.
      summary.push_back(b.getNamedAttr("chunk_sizes",
                                       b.getDenseI64ArrayAttr(p.problem.chunkBytes)));
      summary.push_back(b.getNamedAttr("chunk_budget_bytes",
                                       b.getF64FloatAttr(p.problem.budgetBytes)));
    }
  }
  module->setAttr(kMemoryPlanAttr, b.getDictionaryAttr(summary));
  return p;
}

void mlir::loom::removePlacement(ModuleOp module) {
  module->removeAttr(kMemoryPlanAttr);
  module.walk([](WeightOp w) { w->removeAttr("loom.placement"); });
  module.walk([](Operation *op) {
    // Partial recomputation's marks are the integer ones (Recompute.h).
    if (isa_and_nonnull<IntegerAttr>(op->getAttr(kRecomputeMark)))
      op->removeAttr(kRecomputeMark);
    op->removeAttr(kOffloadMark);
  });
  for (auto func : module.getOps<func::FuncOp>()) {
    removeMovement(func);
    removeStaticMemoryPlan(func);
  }
}


/// What an infeasible input lacks, per tier: the least any placement short
/// there is short by, and the placement closest to fitting overall.
static void printShortfalls(llvm::raw_ostream &os, const MemoryPlacement &p) {
  if (p.candidates.empty()) {
    os << "  nothing fits: no placement keeps the parameters on the tiers "
          "parameters= lists\n";
    return;
  }
  os << "  nothing fits; the least each tier is short by:\n";
  const PlacementCandidate *closest = nullptr;
  double closestTotal = INFINITY;
  for (Tier t : {Tier::Device, Tier::Host, Tier::Nvme}) {
    const PlacementCandidate *least = nullptr;
    for (const PlacementCandidate &c : p.candidates) {
      double bytes = c.shortBytes[static_cast<int>(t)];
      if (bytes > 0 && (!least || bytes < least->shortBytes[static_cast<int>(t)]))
        least = &c;
    }
    StringRef name = tierLabel(t);
    if (least)
      os << llvm::formatv("    {0}: {1} ({2})\n", name,
                          bytesText(least->shortBytes[static_cast<int>(t)]), least->name);
    else
      os << llvm::formatv("    {0}: not short in any placement\n", name);
  }
  for (const PlacementCandidate &c : p.candidates) {
    double total = c.shortBytes[0] + c.shortBytes[1] + c.shortBytes[2];
    if (total > 0 && total < closestTotal) {
      closestTotal = total;
      closest = &c;
    }
  }
  if (closest)
    os << llvm::formatv("  closest to fitting: {0} ({1} short over all tiers)\n",
                        closest->name, bytesText(closestTotal));
}

void mlir::loom::printPlacement(const MemoryPlacement &p, llvm::raw_ostream &os) {
  if (p.devices == 1)
    os << llvm::formatv("loom-place-memory: {0}, one device", p.clusterName);
  else
    os << llvm::formatv("loom-place-memory: {0}, {1} devices ({2} data-parallel, "
                        "{3} pipeline, {4} micro-batches), each",
                        p.clusterName, p.devices, p.dataParallel,
                        p.pipelineDevices, p.microBatches);
  os << llvm::formatv(": {0} device, {1} host, {2} NVMe\n",
                      bytesText(p.deviceBytes), bytesText(p.hostBytes),
                      bytesText(p.nvmeBytes));
  os << llvm::formatv("  model state{0}: parameters {1}, gradients {2}, "
                      "optimizer {3}; activations and temporaries {4}",
                      p.devices > 1 ? " on the fullest device, before ZeRO" : "",
                      bytesText(p.parameterBytes), bytesText(p.gradientBytes),
                      bytesText(p.optimizerBytes),
                      bytesText(p.otherDeviceBytes));
  SmallVector<std::string, 2> recomputed;
  const char *policies[2] = {"selective", "full"};
  for (int k = 0; k < 2; ++k)
    if (p.otherDeviceBytesRecomputed[k] >= 0)
      recomputed.push_back(llvm::formatv("{0} with {1} recomputation",
                                         bytesText(p.otherDeviceBytesRecomputed[k]),
                                         policies[k]));
  if (!recomputed.empty())
    os << " (" << llvm::join(recomputed, ", ") << ")";
  os << "\n";
  os << llvm::formatv("  unlimited: {0:F3} ms per step\n",
                      p.unlimitedStepSeconds * 1e3);
  os << "  placements:\n";
  for (auto [i, c] : llvm::enumerate(p.candidates)) {
    os << llvm::formatv("    {0} {1,-62} ", (int)i == p.chosen ? "*" : " ",
                        c.name);
    if (!c.feasible) {
      os << "does not fit: " << c.why << "\n";
      continue;
    }
    os << llvm::formatv("{0:F3} ms, device {1}, host {2}, h2d {3} per step",
                        c.stepSeconds * 1e3, bytesText(c.devicePeak),
                        bytesText(c.hostPeak), bytesText(c.h2dBytes));
    if (c.chunkBytes)
      os << ", chunks of " << bytesText(c.chunkBytes);
    os << "\n";
  }
  if (p.streamSharded &&
      (p.pipelineDevices > 1 || (p.devices > 1 && p.microBatches > 1)))
    os << "  (parameters are streamed in chunks only in programs of one "
          "pipeline "
          "device, over data parallelism in steps of one micro-batch)\n";
  else if (!p.streamSharded && p.devices > 1)
    os << "  (parameters are streamed in chunks only in one-device programs; "
          "stream-sharded=false leaves out ZeRO-3 shards streamed over data "
          "parallelism)\n";
  for (const std::string &refusal : p.refusals)
    os << "  refused after its replay: " << refusal << "\n";
  const PlacementCandidate *c = p.best();
  if (!c) {
    printShortfalls(os, p);
    return;
  }
  os << llvm::formatv("  chosen: {0}: {1:F3} ms per step, {2:P1} of the "
                      "unlimited throughput\n",
                      c->name, c->stepSeconds * 1e3,
                      c->stepSeconds > 0 ? p.unlimitedStepSeconds / c->stepSeconds
                                         : 1.0);
  auto againstBound = [&](double bound) {
    return llvm::formatv("{0}, {1:F2}x", bytesText(bound),
                         bound > 0 ? c->h2dBytes / bound : 1.0)
        .str();
  };
  std::string releasing;
  if (p.lowerBoundH2DReleasing > 0 && std::isfinite(p.lowerBoundH2DReleasing))
    releasing = llvm::formatv("; {0} releasing the {1} chunks it releases",
                              againstBound(p.lowerBoundH2DReleasing),
                              p.lowerBoundInputs->released.size())
                    .str();
  os << llvm::formatv("  moved per step: host->device {0} (lower bound "
                      "{1}{2}), device->host {3}, NVMe {4}\n",
                      bytesText(c->h2dBytes), againstBound(p.lowerBoundH2D),
                      releasing, bytesText(c->d2hBytes),
                      bytesText(c->nvmeBytes));
  if (c->activations == Tier::Host)
    os << llvm::formatv("  activations offloaded: {0} down and back up per step "
                        "(beside the model state above)\n",
                        bytesText(c->activationBytes));
  // One pipeline device's plan, or a pipelined program's per device (every
  // micro-batch in flight with its own buffers).
  SmallVector<const StaticMemoryPlan *> plans;
  if (p.memoryPlan)
    plans.push_back(&*p.memoryPlan);
  for (const StaticMemoryPlan &plan : p.pipelineMemoryPlans)
    plans.push_back(&plan);
  if (!p.pipelineMemoryPlans.empty())
    os << "  static memory plans per pipeline device (every micro-batch in "
          "flight with its own buffers):\n";
  for (auto [d, plan] : llvm::enumerate(plans)) {
    for (Tier t : {Tier::Device, Tier::Host, Tier::Nvme}) {
      const TierArena &a = plan->arena(t);
      if (a.buffers == 0)
        continue;
      std::string device =
          p.pipelineMemoryPlans.empty() ? "" : llvm::formatv("pipeline device {0}: ", d).str();
      os << llvm::formatv("  {0}{1} arena: {2} buffers in {3}, {4:P1} over the "
                          "{5} most live at once",
                          device, t == Tier::Nvme ? "NVMe" : tierName(t), a.buffers,
                          bytesText(a.bytes), a.fragmentation(),
                          bytesText(a.liveBound));
      // What the replay found (with refuse-overflow, a plan that
      // overflowed was refused).
      os << llvm::formatv("; replayed: at most {0} held", bytesText(a.replayPeak));
      if (a.reserved > 0)
        os << llvm::formatv(" ({0} beside the arena)", bytesText(a.reserved));
      os << llvm::formatv(" of the tier's {0}", bytesText(p.capacity(t)));
      if (a.overflow)
        os << llvm::formatv(", OVER it from schedule position {0} ('{1}' allocated)",
                            a.overflow->position, a.overflow->buffer);
      if (a.reads > 0)
        os << llvm::formatv(", {0} reads all present", a.reads);
      os << "\n";
    }
  }
  if (p.zeroShardedWeights > 0 || !p.zeroKeptWhole.empty()) {
    if (p.zeroStage >= 3)
      os << llvm::formatv("  ZeRO-3 in the IR: {0} weights stored split over their "
                          "replicas and gathered for their readers",
                          p.zeroShardedWeights);
    else
      os << llvm::formatv("  ZeRO-{0} in the IR: {1} weights' gradients returned split "
                          "over their replicas",
                          p.zeroStage, p.zeroShardedWeights);
    if (!p.zeroKeptWhole.empty())
      os << llvm::formatv("; {0} kept whole ({1}): {2}", p.zeroKeptWhole.size(),
                          p.zeroStage >= 3 ? "their gathers are priced"
                                           : "their gradients are all-reduced",
                          llvm::join(p.zeroKeptWhole, ", "));
    os << "\n";
  }
  if (c->update)
    os << llvm::formatv(
        "  optimizer step off the device{0}: gradients down {1:F3} ms, CPU "
        "{2:F3} ms, parameters up {3:F3} ms per step, overlapped with the "
        "device's {4:F3} ms; the device waits {5:F3} ms (one after another: "
        "{6:F3} ms)\n",
        p.delayedUpdate && c->params == Tier::Device
            ? " (delayed parameter update)"
            : "",
        c->update->deviceToHostSeconds * 1e3, c->update->cpuSeconds * 1e3,
        c->update->hostToDeviceSeconds * 1e3, c->update->computeSeconds * 1e3,
        c->update->waitSeconds * 1e3, c->update->serialSeconds * 1e3);
  if (c->params != Tier::Device)
    os << llvm::formatv(
        "  chunks: {0} of up to {1}, {2} resident{6}, {3} "
        "fetches per step ({4} iteration period), stalls "
        "{5:F3} ms{8}; replayed by the simulator: ok{7}\n",
        p.problem.chunkBytes.size(), bytesText(c->chunkBytes),
        p.plan.residentAtStart.size(),
        double(p.plan.fetches.size() * p.microBatches) / p.plan.iterations,
        p.plan.iterations, p.plan.stallSeconds * 1e3,
        p.plan.dropped.empty()
            ? std::string()
            : llvm::formatv(" ({0} more released after their "
                            "last read, not carried)",
                            p.plan.dropped.size())
                  .str(),
        p.refreshesReplayed > 0
            ? llvm::formatv(", with {0} refresh uploads", p.refreshesReplayed)
                  .str()
            : std::string(),
        p.microBatches > 1 ? " a micro-batch" : "");
}
