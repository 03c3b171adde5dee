//===- Placement.cpp - where model state lives, planned statically --------===//
//
// Reads the cost model's per-op times (`annotate-ops`) and memory breakdown,
// lists the placements ZeRO-Offload, ZeRO-Infinity and PatrickStar choose
// between (everything on the device; the optimizer state and its step on
// the host or NVMe; parameters streamed in chunks as well), prices each
// from the cluster's links, CPU Adam rate and NVMe bandwidth, and keeps the
// fastest that fits. For streamed parameters the chunk size is chosen by
// planning and timing each candidate size (ChunkSchedule.h) and the chosen
// schedule is replayed by the simulator before it is accepted.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/Placement.h"

#include "loom/Memory/Arena.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Cost/Estimate.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <optional>

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

namespace {

/// Whether training updates `w` (and so keeps a gradient and optimizer
/// state for it).
bool isTrainable(WeightOp w, bool training) {
  return training && w.getRole() == WeightRole::parameter &&
         isa<FloatType>(w.getType().getElementType());
}

/// Adam's two moments in fp32, plus an fp32 master copy of 16-bit weights.
double optimizerStateBytes(WeightOp w, double bytes) {
  double elems = w.getType().getNumElements();
  return elems * (8 + (bytes / elems < 4 ? 4 : 0));
}

double attrSeconds(DictionaryAttr d, StringRef key) {
  auto a = d ? d.getAs<FloatAttr>(key) : FloatAttr();
  return a ? a.getValueAsDouble() * 1e-6 : 0;
}

/// What the step reads, in program order.
struct OpStep {
  Operation *op;
  double forward = 0, backward = 0;
  SmallVector<WeightOp> weights;
};

/// Bytes in the largest binary unit that keeps the number at least 1.
std::string bytesText(double b) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && std::abs(b) >= 1024) {
    b /= 1024;
    ++u;
  }
  return llvm::formatv("{0:F2} {1}", b, units[u]).str();
}

} // namespace

/// The device's static memory plan for placement `c`: every buffer it holds
/// over the schedule's positions (forward steps, then backward steps, for
/// each iteration of the chunk plan's period) gets an arena offset.
///  * parameters: resident ones all along; streamed chunks from the
///    position after the last read of the chunks their fetch evicts (when
///    the fetch may start) until their own eviction;
///  * gradients and optimizer state kept on the device, and the gradient
///    staging buffers: all along;
///  * activations (op results): from their op to their last forward read,
///    and without recomputation until the backward of their first reader;
///    with full recomputation, again at their op's backward step only.
static LogicalResult
planDeviceArena(func::FuncOp func, MemoryPlacement &p,
                const PlacementCandidate &c, ArrayRef<OpStep> steps,
                const llvm::MapVector<Operation *, double> &weightBytes,
                bool training, bool recomputed, double staging,
                std::optional<::loom::Precision> forced) {
  int64_t n = static_cast<int64_t>(steps.size());
  int64_t perIteration = training ? 2 * n : n;
  int64_t iterations = c.params == Tier::Device ? 1 : p.plan.iterations;
  int64_t total = perIteration * iterations;
  std::vector<lm::Buffer> buffers;
  auto whole = [&](std::string name, double bytes) {
    if (bytes > 0)
      buffers.push_back({std::move(name), static_cast<int64_t>(bytes), 0, total});
  };
  // Parameters.
  if (c.params == Tier::Device) {
    for (auto &[op, bytes] : weightBytes)
      whole(cast<WeightOp>(op).getName().str(), bytes);
  } else {
    const lm::ChunkProblem &cp = p.problem;
    std::vector<std::vector<int>> readsAt(total);
    for (int64_t k = 0; k < total; ++k)
      readsAt[k] = cp.steps[k % perIteration].reads;
    auto lastReadBefore = [&](int chunk, int64_t step) -> int64_t {
      for (int64_t k = step - 1; k >= 0; --k)
        if (llvm::is_contained(readsAt[k], chunk))
          return k;
      return -1;
    };
    std::vector<int64_t> since(cp.chunkBytes.size(), -1);
    for (int chunk : p.plan.residentAtStart)
      since[chunk] = 0;
    auto close = [&](int chunk, int64_t end) {
      buffers.push_back({llvm::formatv("chunk {0}", chunk).str(),
                         cp.chunkBytes[chunk], since[chunk], end});
      since[chunk] = -1;
    };
    // Fetches start in issue order, each once its victims' last reads are
    // over, so a chunk's bytes are never claimed before they are free.
    int64_t previousStart = 0;
    for (const lm::Fetch &f : p.plan.fetches) {
      int64_t start = previousStart;
      for (int v : f.evicts) {
        int64_t last = lastReadBefore(v, f.forStep);
        close(v, std::max<int64_t>(last + 1, since[v]));
        start = std::max(start, last + 1);
      }
      since[f.chunk] = start = std::min<int64_t>(start, f.forStep);
      previousStart = start;
    }
    for (auto [chunk, from] : llvm::enumerate(since))
      if (from >= 0)
        close(static_cast<int>(chunk), total);
  }
  // Gradients and optimizer state on the device, and gradient staging.
  if (training) {
    double share = c.optimizer == Tier::Device ? 1 : c.deviceOptimizerShare;
    whole("gradients on the device", share * p.gradientBytes);
    whole("optimizer state on the device", share * p.optimizerBytes);
    if (share < 1) {
      whole("gradient staging 0", staging / 2);
      whole("gradient staging 1", staging / 2);
    }
  }
  // Activations.
  DenseMap<Operation *, int64_t> index;
  for (auto [i, s] : llvm::enumerate(steps))
    index[s.op] = static_cast<int64_t>(i);
  for (auto [i, s] : llvm::enumerate(steps)) {
    for (Value v : s.op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        continue;
      double bytes =
          type.getNumElements() * elementBytes(type.getElementType(), forced);
      int64_t lastUse = static_cast<int64_t>(i), firstUser = n;
      for (Operation *user : v.getUsers()) {
        Operation *u = user;
        while (u && !index.count(u))
          u = u->getParentOp();
        if (!u)
          continue;
        lastUse = std::max(lastUse, index.lookup(u));
        firstUser = std::min(firstUser, index.lookup(u));
      }
      for (int64_t it = 0; it < iterations; ++it) {
        int64_t base = it * perIteration, def = static_cast<int64_t>(i);
        int64_t end = lastUse + 1;
        if (training && !recomputed && firstUser < n)
          end = 2 * n - firstUser; // through the backward of its first reader
        buffers.push_back({"activation", static_cast<int64_t>(bytes),
                           base + def, base + end});
        // Recomputed just before its last reader's backward, kept through
        // its own op's backward.
        if (training && recomputed)
          buffers.push_back({"recomputed activation", static_cast<int64_t>(bytes),
                             base + 2 * n - 1 - lastUse, base + 2 * n - def});
      }
    }
  }
  lm::ArenaPlan arena = lm::assignOffsets(buffers);
  if (llvm::Error err = lm::checkArena(buffers, arena))
    return func.emitOpError("the device arena failed its check: ")
           << llvm::toString(std::move(err));
  p.arenaBytes = static_cast<double>(arena.arenaBytes);
  p.arenaLiveBound = static_cast<double>(arena.liveBound);
  p.arenaBuffers = static_cast<int64_t>(buffers.size());
  return success();
}

/// Every placement under one activation policy (`recompute`: none or full,
/// as the estimator models it), with the chosen one's chunk schedule
/// replayed. Nothing is written to the IR.
static FailureOr<MemoryPlacement> evaluate(ModuleOp module, func::FuncOp func,
                                           const PlacementOptions &o,
                                           StringRef recompute) {
  EstimateOptions eo;
  eo.cluster = o.cluster;
  eo.training = o.training;
  eo.globalBatch = o.globalBatch;
  eo.precision = o.precision;
  eo.recompute = recompute.str();
  eo.annotateOps = true;
  FailureOr<Estimate> estimate = estimateModule(module, eo);
  if (failed(estimate))
    return failure();
  const Estimate &e = *estimate;
  if (e.microBatches > 1)
    return module.emitError("loom-place-memory: global-batch ")
           << o.globalBatch << " makes " << e.microBatches
           << " micro-batches; placement plans a step of one (the IR's batch), "
              "so leave global-batch at 0 or the IR's batch";
  std::optional<::loom::Precision> forced;
  if (o.precision != "ir")
    forced = ::loom::parsePrecision(o.precision);

  // Steps in program order, with the weights each reads; the estimator's
  // per-op annotations are read and removed.
  SmallVector<OpStep> steps;
  llvm::MapVector<Operation *, double> weightBytes; // first-use order
  func.walk([&](Operation *op) {
    auto cost = op->getAttrOfType<DictionaryAttr>("loom.cost");
    if (!cost)
      return;
    op->removeAttr("loom.cost");
    if (isa<WeightOp>(op))
      return;
    OpStep s{op};
    s.forward = attrSeconds(cost, "time_us") + attrSeconds(cost, "comm_us");
    s.backward = o.training ? attrSeconds(cost, "bwd_time_us") +
                                  attrSeconds(cost, "bwd_comm_us")
                            : 0;
    // Full recomputation re-runs the op's forward just before its backward,
    // reading the same weights (the estimator keeps a few cut points; this
    // counts every op, slightly pessimistic).
    if (o.training && recompute == "full")
      s.backward += s.forward;
    for (Value v : op->getOperands())
      if (auto w = lookThroughShards(v).getDefiningOp<WeightOp>()) {
        if (!llvm::is_contained(s.weights, w))
          s.weights.push_back(w);
        if (!weightBytes.count(w)) {
          auto type = w.getType();
          weightBytes[w] = type.getNumElements() *
                           elementBytes(type.getElementType(), forced);
        }
      }
    steps.push_back(std::move(s));
  });

  MemoryPlacement p;
  p.clusterName = e.clusterName;
  p.delayedUpdate = o.delayedUpdate;
  const ::loom::ClusterSpec &cluster = e.cluster;
  p.deviceBytes = cluster.device.memoryBytes * o.memoryFraction;
  // Host memory and NVMe are per node; one device's program gets its share.
  double perNode = std::max<int64_t>(1, cluster.devicesPerNode());
  p.hostBytes = cluster.host.memoryBytes / perNode;
  p.nvmeBytes = cluster.nvme.capacityBytes / perNode;
  const DeviceMemory &mem = e.deviceMemory.front();
  p.otherDeviceBytes = mem.memory.activations + mem.memory.temporaries +
                       mem.memory.commBuffers;
  double largestTensor = 0;
  for (auto [op, bytes] : weightBytes) {
    auto w = cast<WeightOp>(op);
    p.parameterBytes += bytes;
    largestTensor = std::max(largestTensor, bytes);
    if (!isTrainable(w, o.training))
      continue;
    p.gradientBytes += bytes;
    p.optimizerBytes += optimizerStateBytes(w, bytes);
  }
  double forwardSeconds = 0, backwardSeconds = 0;
  for (const OpStep &s : steps) {
    forwardSeconds += s.forward;
    backwardSeconds += s.backward;
  }
  p.computeSeconds = forwardSeconds + backwardSeconds;
  p.unlimitedStepSeconds = e.stepTime;

  const double h2d = cluster.host.linkBandwidth, d2h = h2d;
  const double adamRate = cluster.host.cpuAdamBandwidth / perNode;
  const double nvmeRead = cluster.nvme.readBandwidth / perNode,
               nvmeWrite = cluster.nvme.writeBandwidth / perNode;
  // Gradients leave the device as they are produced; two tensors' worth of
  // staging covers one being written while another is copied out.
  double staging = o.training ? 2 * largestTensor : 0;

  // The step sequence of streamed parameters: forward ops, then backward
  // ops in reverse, each reading its weights' chunks.
  auto chunkProblem = [&](int64_t chunkBytes, std::vector<int> &chunkOf) {
    lm::ChunkProblem cp;
    std::vector<int64_t> sizes;
    for (auto &entry : weightBytes)
      sizes.push_back(static_cast<int64_t>(entry.second));
    chunkOf = lm::groupIntoChunks(sizes, chunkBytes, cp.chunkBytes);
    // The host updates every trainable parameter between iterations, so
    // their bytes start each iteration stale on the device.
    if (o.training) {
      cp.fetchWithinIteration = true;
      cp.staleBytes.assign(cp.chunkBytes.size(), 0);
      for (auto [i, entry] : llvm::enumerate(weightBytes))
        if (isTrainable(cast<WeightOp>(entry.first), o.training))
          cp.staleBytes[chunkOf[i]] += entry.second;
    }
    auto readsOf = [&](const OpStep &s) {
      std::vector<int> reads;
      for (WeightOp w : s.weights)
        reads.push_back(chunkOf[weightBytes.find(w) - weightBytes.begin()]);
      return reads;
    };
    for (const OpStep &s : steps)
      cp.steps.push_back({"forward " + s.op->getName().getStringRef().str(),
                          s.forward, readsOf(s)});
    if (o.training)
      for (const OpStep &s : llvm::reverse(steps))
        cp.steps.push_back({"backward " + s.op->getName().getStringRef().str(),
                            s.backward, readsOf(s)});
    cp.hostToDevice = h2d;
    cp.linkLatency = cluster.host.linkLatency;
    return cp;
  };

  // The optimizer step away from the device for one tensor: CPU Adam over
  // its state, bounded by reading and writing the state when it lives on
  // NVMe.
  auto hostUpdateSeconds = [&](double state, Tier tier) -> double {
    double adam = adamRate > 0 ? state / adamRate : INFINITY;
    if (tier == Tier::Nvme)
      adam = std::max(adam, nvmeRead > 0 && nvmeWrite > 0
                                ? state / nvmeRead + state / nvmeWrite
                                : INFINITY);
    return adam;
  };
  // Each weight's first reader, and the device's steps as the resident
  // placements run them: forward in program order, backward in reverse.
  int64_t n = static_cast<int64_t>(steps.size());
  DenseMap<Operation *, int64_t> firstReader;
  for (auto [i, s] : llvm::enumerate(steps))
    for (WeightOp w : s.weights)
      firstReader.try_emplace(w, static_cast<int64_t>(i));
  std::vector<double> residentSteps;
  for (const OpStep &s : steps)
    residentSteps.push_back(s.forward);
  if (o.training)
    for (const OpStep &s : llvm::reverse(steps))
      residentSteps.push_back(s.backward);

  // The offloaded update as a pipeline overlapping the device's steps
  // (UpdatePipeline.h): trainable weights past the first `keptBytes` (whole
  // tensors, first-use order, the rule the annotation follows) send their
  // gradients down as the backward completes them, are updated by the CPU
  // on `away`, and come back up (`uploadOf`: bytes, per weight index) before
  // their readers in the next forward; or, with `barrier`, before the next
  // iteration starts at all.
  struct PricedUpdate {
    double h2dBytes = 0, d2hBytes = 0;
    std::optional<lm::UpdateTimeline> timeline;
    std::string why;
  };
  auto priceUpdate = [&](ArrayRef<double> stepSeconds, Tier away,
                         double keptBytes, double deviceUpdate, bool barrier,
                         llvm::function_ref<double(size_t)> uploadOf) {
    PricedUpdate priced;
    lm::UpdateProblem up;
    up.stepSeconds.assign(stepSeconds.begin(), stepSeconds.end());
    up.forwardSteps = static_cast<int>(n);
    up.waitsFor.resize(stepSeconds.size());
    up.deviceUpdateSeconds = deviceUpdate;
    up.deviceToHost = d2h;
    up.hostToDevice = h2d;
    up.linkLatency = cluster.host.linkLatency;
    // A delayed update would let the CPU rewrite host copies that streamed
    // chunks are still being fetched from, so only resident placements
    // take it.
    up.staleness = o.delayedUpdate && !barrier ? 1 : 0;
    up.uploadsAfterLastStep = barrier;
    DenseMap<Operation *, int> tensorOf;
    double trainableSoFar = 0;
    for (auto [i, entry] : llvm::enumerate(weightBytes)) {
      auto w = cast<WeightOp>(entry.first);
      if (!isTrainable(w, o.training))
        continue;
      trainableSoFar += entry.second;
      if (trainableSoFar <= keptBytes * (1 + 1e-9))
        continue;
      double seconds =
          hostUpdateSeconds(optimizerStateBytes(w, entry.second), away);
      if (!std::isfinite(seconds)) {
        priced.why = "the cluster gives no rate for this tier's CPU optimizer";
        return priced;
      }
      tensorOf[w] = static_cast<int>(up.tensors.size());
      up.tensors.push_back({w.getName().str(),
                            static_cast<int>(2 * n - 1 - firstReader.lookup(w)),
                            entry.second, seconds, uploadOf(i)});
      priced.d2hBytes += entry.second;
      priced.h2dBytes += up.tensors.back().uploadBytes;
    }
    for (int x = 0; barrier && x < static_cast<int>(up.tensors.size()); ++x)
      up.waitsFor.front().push_back(x);
    for (auto [i, s] : llvm::enumerate(steps))
      for (WeightOp w : s.weights)
        if (!barrier && tensorOf.count(w))
          up.waitsFor[i].push_back(tensorOf.lookup(w));
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
  auto check = [&](PlacementCandidate &c, StringRef whyNoTime = "") {
    c.feasible = false;
    if (c.devicePeak > p.deviceBytes)
      c.why = shortfall("device", c.devicePeak, p.deviceBytes);
    else if (c.hostPeak > p.hostBytes)
      c.why = shortfall("host", c.hostPeak, p.hostBytes);
    else if (c.nvmeUsed > p.nvmeBytes)
      c.why = shortfall("NVMe", c.nvmeUsed, p.nvmeBytes);
    else if (!std::isfinite(c.stepSeconds))
      c.why = whyNoTime.empty() ? "the cluster gives no rate for this tier's "
                                  "transfers or CPU optimizer"
                                : whyNoTime.str();
    else
      c.feasible = true;
  };

  // 1. Everything on the device.
  {
    PlacementCandidate c{"everything on the device"};
    c.devicePeak = p.otherDeviceBytes + p.parameterBytes + p.gradientBytes +
                   p.optimizerBytes;
    c.stepSeconds = e.stepTime;
    check(c);
    p.candidates.push_back(c);
  }
  // 2-4. Parameters resident; the gradients and optimizer state of a first
  // `share` of them (whole tensors, in first-use order) stay on the device
  // and are updated there after the backward, the rest go to `away` (host
  // or NVMe) and are updated by the CPU in a pipeline beside the device.
  double gpuUpdate = 0;
  for (const StageEstimate &st : e.stageEstimates)
    gpuUpdate += st.optimizerStep;
  auto residentParameters = [&](Tier away, double share) {
    double off = 1 - share;
    PlacementCandidate c;
    c.name = share > 0 ? llvm::formatv("parameters on the device, optimizer "
                                       "{0:F0}% device / {1}",
                                       share * 100, tierName(away))
                             .str()
                       : ("parameters on the device, optimizer on the " +
                          tierName(away))
                             .str();
    c.optimizer = away;
    c.deviceOptimizerShare = share;
    c.devicePeak = p.otherDeviceBytes + p.parameterBytes + staging +
                   share * (p.gradientBytes + p.optimizerBytes);
    c.hostPeak = off * (p.gradientBytes + p.parameterBytes +
                        (away == Tier::Host ? p.optimizerBytes : 0));
    c.nvmeUsed = away == Tier::Nvme ? off * p.optimizerBytes : 0;
    c.nvmeBytes = away == Tier::Nvme ? 2 * off * p.optimizerBytes : 0;
    PricedUpdate u = priceUpdate(
        residentSteps, away, share * p.gradientBytes, share * gpuUpdate,
        /*barrier=*/false,
        [&](size_t i) { return (weightBytes.begin() + i)->second; });
    c.h2dBytes = u.h2dBytes;
    c.d2hBytes = u.d2hBytes;
    c.update = u.timeline;
    c.stepSeconds = u.timeline ? u.timeline->stepSeconds : INFINITY;
    check(c, u.why);
    p.candidates.push_back(c);
  };
  if (o.training) {
    residentParameters(Tier::Host, 0);
    residentParameters(Tier::Nvme, 0);
    // The split: whole tensors while their gradients and state fit, so the
    // share priced is the share annotated.
    double room = p.deviceBytes - p.otherDeviceBytes - p.parameterBytes - staging;
    double kept = 0;
    for (auto &[op, bytes] : weightBytes) {
      if (!isTrainable(cast<WeightOp>(op), o.training))
        continue;
      double state = bytes * (1 + p.optimizerBytes / p.gradientBytes);
      if (state > room)
        break;
      room -= state;
      kept += bytes;
    }
    if (kept > 0 && kept < p.gradientBytes)
      residentParameters(Tier::Host, kept / p.gradientBytes);
  }

  // 5-6. Parameters streamed in chunks as well (for inference: parameters
  // streamed, nothing else to place). For each optimizer tier the chunk
  // size is the one whose simulated iteration, followed by the update
  // pipeline, is fastest. The pipeline's CPU work overlaps the backward;
  // the next iteration's fetches read the host copies, so it waits for the
  // whole update, and only chunks resident across an iteration boundary
  // are uploaded again (trainable parameters only: frozen ones stay valid).
  struct Streamed {
    int64_t size = 0;
    std::vector<int> chunkOf;
    lm::ChunkProblem problem;
    lm::ChunkPlan plan;
    double stepSeconds = INFINITY, refreshBytes = 0;
    std::optional<lm::UpdateTimeline> update;
  };
  std::optional<Streamed> bestStreamed[2]; // optimizer on the host, on NVMe
  std::string streamError;
  {
    double budget = p.deviceBytes - p.otherDeviceBytes - staging;
    SmallVector<int64_t> sizes;
    if (o.chunkBytes > 0)
      sizes.push_back(o.chunkBytes);
    else
      for (int64_t size = 1 << 20;; size *= 2) {
        sizes.push_back(size);
        if (size >= p.parameterBytes)
          break;
      }
    if (budget <= 0)
      streamError = shortfall("device (activations, temporaries and gradient "
                              "staging alone)",
                              p.otherDeviceBytes + staging, p.deviceBytes);
    for (int64_t size : budget > 0 ? sizes : SmallVector<int64_t>()) {
      std::vector<int> chunkOf;
      lm::ChunkProblem cp = chunkProblem(size, chunkOf);
      cp.budgetBytes = budget;
      llvm::Expected<lm::ChunkPlan> plan = lm::planChunks(cp);
      if (!plan) {
        std::string message = llvm::toString(plan.takeError());
        if (streamError.empty())
          streamError = "device: " + message;
        continue;
      }
      // Each step's time with its stalls, averaged over the plan's period.
      std::vector<double> ends = lm::stepEndTimes(cp, *plan);
      size_t perIteration = cp.steps.size();
      std::vector<double> stepSeconds(perIteration, 0);
      for (auto [k, end] : llvm::enumerate(ends))
        stepSeconds[k % perIteration] +=
            (end - (k ? ends[k - 1] : 0)) / plan->iterations;
      // Each chunk's share of the period's iteration boundaries at which
      // it is on the device: its trainable bytes are uploaded again there.
      std::vector<double> residentShare(cp.chunkBytes.size(), 0);
      for (const std::vector<int> &on : lm::residentAtIterationStarts(cp, *plan))
        for (int chunk : on)
          residentShare[chunk] += 1.0 / plan->iterations;
      for (Tier tier : {Tier::Host, Tier::Nvme}) {
        if (!o.training && tier == Tier::Nvme)
          break;
        Streamed candidate;
        if (o.training) {
          PricedUpdate u = priceUpdate(
              stepSeconds, tier, /*keptBytes=*/0, /*deviceUpdate=*/0,
              /*barrier=*/true, [&](size_t i) {
                return residentShare[chunkOf[i]] *
                       (weightBytes.begin() + i)->second;
              });
          if (!u.timeline) {
            if (streamError.empty())
              streamError = u.why;
            continue;
          }
          candidate.stepSeconds = u.timeline->stepSeconds;
          candidate.refreshBytes = u.h2dBytes;
          candidate.update = u.timeline;
        } else {
          candidate.stepSeconds = plan->iterationSeconds;
        }
        std::optional<Streamed> &best = bestStreamed[tier == Tier::Nvme];
        if (best && candidate.stepSeconds >= best->stepSeconds)
          continue;
        candidate.size = size;
        candidate.chunkOf = chunkOf;
        candidate.problem = cp;
        candidate.plan = *plan;
        best = std::move(candidate);
      }
    }
  }
  for (Tier opt : {Tier::Host, Tier::Nvme}) {
    if (!o.training && opt == Tier::Nvme)
      break;
    PlacementCandidate c;
    c.name = o.training ? ("parameters streamed, optimizer on the " +
                           tierName(opt)).str()
                        : "parameters streamed";
    c.params = Tier::Host;
    c.optimizer = o.training ? opt : Tier::Device;
    c.d2hBytes = p.gradientBytes;
    c.hostPeak = p.gradientBytes + p.parameterBytes +
                 (c.optimizer == Tier::Host ? p.optimizerBytes : 0);
    c.nvmeUsed = c.optimizer == Tier::Nvme ? p.optimizerBytes : 0;
    c.nvmeBytes = c.optimizer == Tier::Nvme ? 2 * p.optimizerBytes : 0;
    const std::optional<Streamed> &s = bestStreamed[opt == Tier::Nvme];
    if (!s) {
      c.why = streamError;
      c.stepSeconds = INFINITY;
      p.candidates.push_back(c);
      continue;
    }
    c.chunkBytes = s->size;
    c.stepSeconds = s->stepSeconds;
    c.update = s->update;
    c.h2dBytes = s->plan.bytesFetched + s->refreshBytes;
    c.devicePeak = p.otherDeviceBytes + s->plan.peakBytes + staging;
    check(c);
    p.candidates.push_back(c);
  }

  // The fastest feasible placement.
  for (auto [i, c] : llvm::enumerate(p.candidates))
    if (c.feasible &&
        (p.chosen < 0 || c.stepSeconds < p.candidates[p.chosen].stepSeconds))
      p.chosen = static_cast<int>(i);

  if (const PlacementCandidate *c = p.best()) {
    if (c->params != Tier::Device) {
      const Streamed &s = *bestStreamed[c->optimizer == Tier::Nvme];
      p.problem = s.problem;
      p.plan = s.plan;
      p.chunkOf = s.chunkOf;
      if (llvm::Error err = lm::simulateChunks(p.problem, p.plan))
        return func.emitOpError("the chunk schedule failed its replay: ")
               << llvm::toString(std::move(err));
      p.lowerBoundH2D = lm::fetchLowerBound(p.problem);
    } else {
      p.lowerBoundH2D = c->h2dBytes;
    }
    if (failed(planDeviceArena(func, p, *c, steps, weightBytes, o.training,
                               recompute == "full", staging, forced)))
      return failure();
  }
  for (auto [op, bytes] : weightBytes) {
    p.weights.push_back(op);
    p.weightBytes.push_back(bytes);
  }
  return p;
}

FailureOr<MemoryPlacement> mlir::loom::placeMemory(ModuleOp module,
                                                   const PlacementOptions &o) {
  for (auto grid : module.getOps<shard::GridOp>()) {
    int64_t devices = 1;
    for (int64_t n : grid.getShape())
      devices *= n;
    if (devices > 1)
      return grid.emitOpError("spans ")
             << devices
             << " devices; memory placement plans one device's program (the "
                "placement of partitioned programs is not implemented yet)";
  }
  if (!(o.memoryFraction > 0 && o.memoryFraction <= 1))
    return module.emitError("loom-place-memory: memory-fraction must be in "
                            "(0, 1], not ")
           << o.memoryFraction;
  if (o.chunkBytes < 0)
    return module.emitError("loom-place-memory: chunk-bytes must be >= 0");
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && (!func || f.getSymName() == "main"))
      func = f;
  if (!func)
    return module.emitError("loom-place-memory: no function with a body");

  // Without recomputation, and (training) with full recomputation, which
  // keeps only the activations between blocks and recomputes the rest in
  // the backward: its placements join the list, and the fastest of all wins.
  FailureOr<MemoryPlacement> placement = evaluate(module, func, o, "none");
  if (failed(placement))
    return failure();
  MemoryPlacement &p = *placement;
  if (o.training) {
    FailureOr<MemoryPlacement> full = evaluate(module, func, o, "full");
    if (failed(full))
      return failure();
    p.otherDeviceBytesRecomputed = full->otherDeviceBytes;
    size_t offset = p.candidates.size();
    for (PlacementCandidate c : full->candidates) {
      c.recompute = true;
      c.name += " + recompute";
      p.candidates.push_back(std::move(c));
    }
    const PlacementCandidate *mine = p.best(), *theirs = full->best();
    if (theirs && (!mine || theirs->stepSeconds < mine->stepSeconds)) {
      p.chosen = static_cast<int>(offset) + full->chosen;
      p.problem = std::move(full->problem);
      p.plan = std::move(full->plan);
      p.chunkOf = std::move(full->chunkOf);
      p.lowerBoundH2D = full->lowerBoundH2D;
      p.arenaBytes = full->arenaBytes;
      p.arenaLiveBound = full->arenaLiveBound;
      p.arenaBuffers = full->arenaBuffers;
    }
  }

  Builder b(module.getContext());
  if (const PlacementCandidate *c = p.best()) {
    double trainableSoFar = 0;
    for (auto [i, op] : llvm::enumerate(p.weights)) {
      auto w = cast<WeightOp>(op);
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("tier", b.getStringAttr(tierName(c->params)))};
      if (c->params != Tier::Device)
        attrs.push_back(b.getNamedAttr("chunk", b.getI64IntegerAttr(p.chunkOf[i])));
      if (isTrainable(w, o.training)) {
        // Under a split, the first parameters keep their state on the device.
        trainableSoFar += p.weightBytes[i];
        Tier tier = trainableSoFar <=
                            c->deviceOptimizerShare * p.gradientBytes * (1 + 1e-9)
                        ? Tier::Device
                        : c->optimizer;
        attrs.push_back(
            b.getNamedAttr("optimizer", b.getStringAttr(tierName(tier))));
      }
      op->setAttr("loom.placement", b.getDictionaryAttr(attrs));
    }
  }
  SmallVector<NamedAttribute> summary = {
      b.getNamedAttr("cluster", b.getStringAttr(p.clusterName)),
      b.getNamedAttr("fits", b.getBoolAttr(p.best() != nullptr))};
  if (const PlacementCandidate *c = p.best()) {
    summary.push_back(b.getNamedAttr("placement", b.getStringAttr(c->name)));
    summary.push_back(b.getNamedAttr("recompute", b.getBoolAttr(c->recompute)));
    if (c->update && c->d2hBytes > 0 && p.delayedUpdate &&
        c->params == Tier::Device)
      summary.push_back(b.getNamedAttr("delayed_update", b.getBoolAttr(true)));
    summary.push_back(b.getNamedAttr("step_time_s", b.getF64FloatAttr(c->stepSeconds)));
    summary.push_back(b.getNamedAttr("h2d_bytes", b.getF64FloatAttr(c->h2dBytes)));
    summary.push_back(b.getNamedAttr("d2h_bytes", b.getF64FloatAttr(c->d2hBytes)));
    summary.push_back(b.getNamedAttr("device_peak_bytes", b.getF64FloatAttr(c->devicePeak)));
    if (c->chunkBytes)
      summary.push_back(b.getNamedAttr("chunk_bytes", b.getI64IntegerAttr(c->chunkBytes)));
  }
  module->setAttr("loom.memory_plan", b.getDictionaryAttr(summary));
  return p;
}

void mlir::loom::printPlacement(const MemoryPlacement &p, llvm::raw_ostream &os) {
  os << llvm::formatv("loom-place-memory: {0}, one device: {1} device, {2} "
                      "host, {3} NVMe\n",
                      p.clusterName, bytesText(p.deviceBytes),
                      bytesText(p.hostBytes), bytesText(p.nvmeBytes));
  os << llvm::formatv("  model state: parameters {0}, gradients {1}, "
                      "optimizer {2}; activations and temporaries {3}",
                      bytesText(p.parameterBytes), bytesText(p.gradientBytes),
                      bytesText(p.optimizerBytes),
                      bytesText(p.otherDeviceBytes));
  if (p.otherDeviceBytesRecomputed >= 0)
    os << llvm::formatv(" ({0} with recomputation)",
                        bytesText(p.otherDeviceBytesRecomputed));
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
  const PlacementCandidate *c = p.best();
  if (!c) {
    os << "  nothing fits\n";
    return;
  }
  os << llvm::formatv("  chosen: {0}: {1:F3} ms per step, {2:P1} of the "
                      "unlimited throughput\n",
                      c->name, c->stepSeconds * 1e3,
                      c->stepSeconds > 0 ? p.unlimitedStepSeconds / c->stepSeconds
                                         : 1.0);
  os << llvm::formatv("  moved per step: host->device {0} (lower bound {1}, "
                      "{2:F2}x), device->host {3}, NVMe {4}\n",
                      bytesText(c->h2dBytes), bytesText(p.lowerBoundH2D),
                      p.lowerBoundH2D > 0 ? c->h2dBytes / p.lowerBoundH2D : 1.0,
                      bytesText(c->d2hBytes), bytesText(c->nvmeBytes));
  os << llvm::formatv("  device arena: {0} buffers in {1}, {2:P1} over the "
                      "{3} most live at once\n",
                      p.arenaBuffers, bytesText(p.arenaBytes),
                      p.arenaLiveBound > 0 ? p.arenaBytes / p.arenaLiveBound - 1
                                           : 0.0,
                      bytesText(p.arenaLiveBound));
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
    os << llvm::formatv("  chunks: {0} of up to {1}, {2} resident, {3} "
                        "fetches per step ({4} iteration period), stalls "
                        "{5:F3} ms; replayed by the simulator: ok\n",
                        p.problem.chunkBytes.size(), bytesText(c->chunkBytes),
                        p.plan.residentAtStart.size(),
                        double(p.plan.fetches.size()) / p.plan.iterations,
                        p.plan.iterations, p.plan.stallSeconds * 1e3);
}
