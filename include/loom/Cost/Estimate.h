//===- Estimate.h - time and memory of a planned loom program ---*- C++ -*-===//
//
// Estimates one training or inference step of a loom function whose plan is
// written in the IR: a `shard.grid` (axis names, pipeline axis and device
// order as `loom.*` attributes on it), `shard.shard` annotations (completed
// by upstream sharding propagation), and `loom.stage` attributes. Unplanned
// IR is a single device. docs/cost-model.md describes the model.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_ESTIMATE_H
#define LOOM_COST_ESTIMATE_H

#include "loom/Cost/Calibration.h"
#include "loom/Cost/Cluster.h"
#include "loom/Cost/Pipeline.h"
#include "loom/Cost/Recompute.h"
#include "loom/Cost/Reshard.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::loom {

/// Step times within this factor of each other are equal within the cost
/// model's resolution: the strategy search and memory placement prefer the
/// simpler plan or placement among such.
constexpr double kStepTimesEqualWithin = 1.005;

/// Adam's state per parameter, in bytes: two moments in the type the
/// update runs in, the parameter's own (fp32 or fp64), plus an fp32 master
/// copy when the parameter is stored in fewer than 4 bytes. The estimator,
/// the search and memory placement all count it this way.
inline double adamStateBytesPerParameter(double elementBytes) {
  return elementBytes < 4 ? 12.0 : 2 * elementBytes;
}

/// A parameter's gradient as a training step holds it, in bytes per
/// parameter: its own element size, but float32's where the step
/// `accumulates` (several micro-batches, or a pipeline's calls) a parameter
/// stored in fewer than 4 bytes: its sum is float32, as mixed-precision
/// training's main_grad is (--loom-optimizer-step), and a sum reduced once
/// a step is reduced in float32 too. Counted this way by the estimator, the
/// search and memory placement.
inline double gradientBytesPerParameter(double elementBytes, bool accumulates) {
  return accumulates && elementBytes < 4 ? 4.0 : elementBytes;
}

/// Marks the ops whose kept results a partial offload sends to the host
/// (written by memory placement, read by the estimator).
constexpr llvm::StringLiteral kOffloadMark = "loom.offload";

struct EstimateOptions {
  std::string cluster = "dgx-a100-80g";
  bool training = true;
  int64_t globalBatch = 0;  // samples per step; 0 = the function's
                            // kMicroBatchesAttr micro-batches, or one
  int64_t microBatch = 0;   // samples per micro-batch per replica; 0 = from IR
  ::loom::PipelineSchedule schedule = ::loom::PipelineSchedule::OneFOneB;
  int64_t kfkbGroup = 2;
  /// "ir": each tensor's own element type; otherwise a precision every
  /// floating-point tensor is computed and stored in (mixed precision).
  std::string precision = "ir";
  /// none | selective (re-run the weight-free regions that free the most,
  /// such as the attention core) | full (keep only the cut points between
  /// segments, recompute the rest); ops carrying `loom.recompute` are
  /// recomputed in any mode (Recompute.h).
  std::string recompute = "none";
  /// Ops recomputed as if marked `loom.recompute = N : i64`, in any mode:
  /// memory placement prices recomputing some segments this way (N: the
  /// segment) before it writes the marks of the chosen ones.
  llvm::DenseMap<Operation *, int64_t> recomputeOps;
  /// Where the activations kept for the backward live between their
  /// forward and backward: "device", or "host" (offloaded as produced and
  /// fetched back before their backward; ActivationOffload.h).
  std::string activations = "device";
  /// With activations=host: offload only the kept results of these ops
  /// (memory placement's partial offload), keeping the rest, the inputs
  /// included, on the device. Empty: the ops marked `loom.offload` (what
  /// placement chose), or every kept activation when none is.
  llvm::DenseSet<Operation *> offloadFrom;
  int zeroStage = 0;
  bool overlapGradSync = true;
  int64_t tokensPerSample = 0; // 0 = from a [batch, seq] integer input
  std::string calibrationFile;
  bool annotateOps = false;    // attach `loom.cost` to every loom op
};

/// Per-device memory, in bytes, by what it holds.
struct MemoryBreakdown {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0,
         temporaries = 0, commBuffers = 0;
  double total() const {
    return weights + gradients + optimizer + activations + temporaries +
           commBuffers;
  }
};

struct OpClassTotals {
  int64_t count = 0;
  double flops = 0;       // per device, forward, one micro-batch
  double bytes = 0;       // per device, forward, one micro-batch
  double forward = 0;     // seconds per micro-batch on its device
  double backward = 0;
  double comm = 0;        // collectives charged to ops of this class
};

struct CollectiveTotals {
  int64_t count = 0;     // per step, per device
  double bytes = 0;      // message bytes per step
  double seconds = 0;    // per step
};

struct StageEstimate {
  int64_t stage = 0;
  int64_t device = 0;          // position along the pipeline axis
  int64_t ops = 0;
  double forward = 0, backward = 0; // seconds per micro-batch (comm included)
  double forwardComm = 0, backwardComm = 0;
  double recompute = 0;
  double sendForward = 0, sendBackward = 0;
  double savedActivationBytes = 0;   // per micro-batch, on the device
  /// Activation offload: the kept bytes per micro-batch in host memory, and
  /// the forward and backward stalls waiting for the link (included in
  /// `forward` and `backward`).
  double offloadedActivationBytes = 0;
  double offloadForwardStall = 0, offloadBackwardStall = 0;
  double gradSync = 0, gradSyncExposed = 0, optimizerStep = 0; // per step
  /// Of gradSync, ZeRO-2/3's reduce-scatter of one micro-batch's gradients,
  /// made once a micro-batch (and hidden by that micro-batch's backward).
  double gradReduceEachMicroBatch = 0;
  double parameters = 0;             // parameters held per device
};

struct DeviceMemory {
  int64_t device = 0; // position along the pipeline axis
  MemoryBreakdown memory;
  int64_t microBatchesInFlight = 0;
  /// Activation offload: the kept activations of the micro-batches in
  /// flight, held in (pinned) host memory instead.
  double hostActivationBytes = 0;
  std::string peakAt; // what is running when the peak occurs
  std::vector<std::pair<double, double>> timeline; // (seconds, bytes)
};

/// One pipeline device's iteration as the schedule runs it, for memory
/// placement: when it starts its first forward, when its last task ends,
/// and what follows (exposed gradient synchronisation, the optimizer step
/// on the device).
struct DeviceTimes {
  double firstForwardStart = 0, finish = 0;
  double gradSyncExposed = 0, optimizerStep = 0;
  /// Of gradSyncExposed, what ZeRO-2/3's reduce-scatters of the micro-batches
  /// before the last leave exposed: it delays the device's schedule
  /// whatever updates the weights.
  double earlierReducesExposed = 0;
};

/// One weight as a device holds it under the plan, for memory placement.
struct WeightFacts {
  double localBytes = 0; // its shard's bytes under the plan's sharding
  /// Whether training gives it a gradient (and optimizer state): a
  /// trainable parameter some result depends on through float values, as
  /// --loom-autodiff finds it; not one read only through a comparison.
  bool hasGradient = false;
  /// The devices holding the same shard: the product of the axes its
  /// gradient is all-reduced over (what ZeRO may shard its state over).
  int64_t replicas = 1;
  /// The grid axes whose product is `replicas`, and the layout the weight
  /// is stored in (what every op reading it directly asks for;
  /// `uniformLayout` is false when two readers ask for different ones).
  /// ZeRO-3 shards the stored layout further over the replica axes
  /// (Memory/ZeroShards.h).
  ::loom::GridAxes replicaAxes;
  std::optional<::loom::SplitDims> storedLayout;
  bool uniformLayout = true;
  /// Per step: reducing its gradient over those replicas (all-reduce, or
  /// with ZeRO a reduce-scatter; under ZeRO-2/3 with several micro-batches,
  /// the last micro-batch's, the others being in
  /// DeviceTimes::earlierReducesExposed) and, with ZeRO, all-gathering the
  /// updated shards.
  double reduceSeconds = 0, gatherSeconds = 0;
};

/// One op as its device runs it, for memory placement (the ops
/// `annotate-ops` annotates: every loom op but weights and constants).
struct OpFacts {
  int64_t stage = 0;
  /// Per micro-batch, collectives included; backward 0 without one.
  double forwardSeconds = 0, backwardSeconds = 0;
  /// Activation offload's waits for the host link before the op's forward
  /// and backward (not in the seconds above).
  double forwardStall = 0, backwardStall = 0;
  std::vector<double> resultBytes; // local bytes of each result
  /// Re-runs its forward in the backward (full recomputation, or a region
  /// of selective recomputation) instead of keeping its results.
  bool recomputed = false;
  bool hasBackward = false; // an operand needs a gradient
};

struct Estimate {
  // Inputs as resolved.
  std::string clusterName;
  ::loom::ClusterSpec cluster;
  std::vector<int64_t> gridShape;
  std::vector<std::string> axisNames;
  std::vector<::loom::AxisSpan> axisSpans;
  int pipelineAxis = -1;
  int64_t devices = 1, pipelineDevices = 1, stages = 1, virtualStages = 1;
  int64_t globalBatch = 1, microBatch = 1, dataParallel = 1, microBatches = 1,
          tokensPerSample = 0;
  /// Whether the step sums its gradients over several calls (micro-batches,
  /// or a pipeline's), in `<w>.grad_sum` states (gradientBytesPerParameter).
  bool accumulatesGradients() const {
    return microBatches > 1 || pipelineDevices > 1;
  }
  EstimateOptions options;
  std::string precisionName;

  // Results.
  double stepTime = 0;
  double pipelineTime = 0;
  double bubbleFraction = 0;
  double modelFlops = 0;    // per step, whole cluster: forward + backward
  double hardwareFlops = 0; // model flops plus recomputation
  double peakFlopsPerDevice = 0;
  double commSeconds = 0;   // per step, busiest device, all collectives
  double exposedCommSeconds = 0;
  std::vector<StageEstimate> stageEstimates;
  std::vector<DeviceMemory> deviceMemory; // one per pipeline position
  std::vector<DeviceTimes> deviceTimes;   // one per pipeline position
  /// Per pipeline position, its tasks in the schedule's order (virtual
  /// stage chunk: stage = chunk * pipelineDevices + position).
  std::vector<std::vector<::loom::PipelineStep>> deviceOrders;
  llvm::DenseMap<Operation *, WeightFacts> weightFacts; // the caller's weights
  llvm::DenseMap<Operation *, OpFacts> opFacts;         // the caller's ops
  std::vector<double> argumentBytes; // local bytes of each function argument
  /// Training: the activations (op results, function arguments) kept from
  /// the forward for the backward under the activation policy: what the
  /// backward reads, less recomputed regions' results, or full
  /// recomputation's checkpoints. Offloaded under activations=host.
  llvm::DenseSet<Value> keptActivations;
  /// Those of them offloaded to the host (activations=host).
  llvm::DenseSet<Value> offloadedActivations;
  /// Training: the segments full recomputation would re-run, in the order
  /// partial recomputation takes them (rankRecomputeSegments, with the
  /// regions this estimate recomputes as its base).
  llvm::SmallVector<RecomputeSegment> recomputeSegments;
  std::map<std::string, OpClassTotals> opClasses;
  std::map<std::string, CollectiveTotals> collectives;
  std::vector<std::string> notes;
  double estimateSeconds = 0; // wall time of the estimate itself

  // Rates are 0 when there is no time to divide by (nothing to run).
  double samplesPerSecond() const { return per(globalBatch, stepTime); }
  double modelTflopsPerDevice() const {
    return per(modelFlops, stepTime * devices) / 1e12;
  }
  double hardwareTflopsPerDevice() const {
    return per(hardwareFlops, stepTime * devices) / 1e12;
  }
  double mfu() const { return per(modelTflopsPerDevice() * 1e12, peakFlopsPerDevice); }
  double peakMemory() const;

private:
  static double per(double a, double b) { return b > 0 ? a / b : 0; }
};

/// Estimates the single function with a body in `module` (or the one named
/// `main`). Diagnostics go to the module's context.
FailureOr<Estimate> estimateModule(ModuleOp module, const EstimateOptions &options);

/// Bytes per element of type `t` as the cost model counts them: a forced
/// precision overrides floats, index is 8 bytes. Shared with the search.
double elementBytes(Type t, std::optional<::loom::Precision> forced);
/// The precision an op whose values have element type `t` computes in.
::loom::Precision precisionOf(Type t, std::optional<::loom::Precision> forced);

/// Bytes in the largest binary unit that keeps the number at least 1
/// ("512.00 KiB", "1.50 GiB"): a shortfall of a few kilobytes reads as such.
std::string bytesText(double bytes);

/// The readable table and the JSON document (keys in docs/cost-model.md).
void printEstimate(const Estimate &estimate, llvm::raw_ostream &os);
llvm::json::Value estimateToJSON(const Estimate &estimate);

} // namespace mlir::loom

#endif // LOOM_COST_ESTIMATE_H
