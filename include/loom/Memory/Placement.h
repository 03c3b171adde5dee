//===- Placement.h - where model state lives, planned statically -*- C++ -*-===//
//
// Decides, for each device of a planned program, where parameters, gradients
// and optimizer state live (device memory, pinned host memory, NVMe), which
// ZeRO stage shards them over the data-parallel replicas, in which chunks
// parameters move and when, and where the optimizer step runs, from the
// cost model's per-op times and memory breakdown; then replays the chunk
// schedule in the simulator (ChunkSchedule.h). docs/memory-placement.md
// describes the choices and what is not done yet.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_PLACEMENT_H
#define LOOM_MEMORY_PLACEMENT_H

#include "loom/Cost/Pipeline.h"
#include "loom/Cost/Recompute.h"
#include "loom/Memory/Arena.h"
#include "loom/Memory/ChunkSchedule.h"
#include "loom/Memory/Movement.h"
#include "loom/Memory/UpdatePipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::loom {

namespace placement {
struct PlacedPrograms; // lib/Memory/DeviceProgram.h
} // namespace placement

struct PlacementOptions {
  std::string cluster = "dgx-a100-80g";
  bool training = true;
  int64_t globalBatch = 0;     // as for the estimator; 0 = the IR's batch
  std::string precision = "ir";
  double memoryFraction = 1.0; // of the device's memory the plan may use
  int64_t chunkBytes = 0;      // 0 = chosen by simulating candidates
  /// ZeRO-Offload's delayed parameter update: the forward reads parameters
  /// one update behind, so the CPU's step overlaps a whole device
  /// iteration. Changes the training semantics; resident parameters only.
  bool delayedUpdate = false;
  /// Also price streamed parameters in data-parallel programs of one
  /// micro-batch under ZeRO-3: each device's shard of a chunk lives on the
  /// host, and a fetch uploads it and all-gathers the chunk (PatrickStar,
  /// ZeRO-Infinity). In the IR, each fetch copies the weight's stored
  /// shard and the readers' annotations gather it.
  bool streamSharded = true;
  /// ZeRO stages to consider over the data-parallel replicas (each one is
  /// priced; only stage 0 without data parallelism).
  std::vector<int> zeroStages = {0, 1, 2, 3};
  /// Activation policies to consider in training (none, selective, full); the
  /// strategy search passes the one its plan was priced with.
  std::vector<std::string> recomputeModes = {"none", "selective", "full"};
  /// Where selective and full recomputation are both considered and full
  /// recomputation's fastest placement does not fit under selective: also
  /// try recomputing just enough segments on top of selective
  /// (ChosenSegments).
  bool partialRecompute = true;
  /// Where offloading every kept activation is what makes a placement
  /// fit: also try offloading only the first segments' (ChosenSegments).
  bool partialOffload = true;
  /// Also price splitting the optimizer between the device and the host:
  /// the first weights (in first-use order) keep their gradients and state
  /// on the device and are updated there, the others' are offloaded
  /// (Elixir), with the parameters resident or streamed.
  bool optimizerSplit = true;
  /// Where training's kept activations may wait for their backward: on the
  /// device, or offloaded to host memory (device, host). Offload is priced
  /// only where keeping them leaves the device short or slower.
  std::vector<std::string> activationTiers = {"device", "host"};
  /// Where parameters may live between their uses: on the device
  /// (resident), or streamed in chunks from host memory or NVMe (device,
  /// host, nvme). Leaving a tier out is what DeepSpeed's offload_param
  /// setting fixes by hand.
  std::vector<std::string> parameterTiers = {"device", "host", "nvme"};
  /// A placement whose static memory plan overflows a tier when replayed
  /// (replayTier) is refused and the choice made again without it (a split
  /// of the optimizer, with less of it on the device); otherwise the
  /// overflow is only reported. The arena's liveness can exceed the
  /// estimator's figures the placement checks (docs/memory-placement.md,
  /// "The static memory plan").
  bool refuseOverflow = true;
  /// The pipeline schedule of a pipelined plan (as for the estimator).
  ::loom::PipelineSchedule schedule = ::loom::PipelineSchedule::OneFOneB;
  int64_t kfkbGroup = 2; // k of kFkB
};

enum class Tier { Device, Host, Nvme };
llvm::StringRef tierName(Tier t);

/// One tier's arena (Arena.h): its size against the most bytes live at one
/// schedule position, which no assignment can beat, and what replaying it
/// against the tier's capacity found (replayTier).
struct TierArena {
  int64_t bytes = 0, liveBound = 0, buffers = 0;
  /// The replay: the most the tier holds at once (the arena's highest byte
  /// in use plus what the tier holds beside it), the reads it served, and
  /// the first position the tier's capacity is exceeded, if any.
  int64_t replayPeak = 0, reads = 0, reserved = 0;
  std::optional<::loom::memory::TierOverflow> overflow;
  /// Buffers no op or weight owns (staging, ZeRO-3's gathered weights), or
  /// several weights share (`gradient_accumulation`: the sums of the
  /// resident weights the device does not update, each at its
  /// WeightOffsets::sum).
  struct Scratch {
    std::string id;
    int64_t offset = 0, bytes = 0;
  };
  std::vector<Scratch> scratch;
  double fragmentation() const {
    return liveBound ? double(bytes) / double(liveBound) - 1 : 0;
  }
};

/// Where a weight's buffers start, each in its tier's arena (-1: none).
/// The parameter's home copy is in its placement tier; the gradient is on
/// the device when the weight's optimizer is, in host memory otherwise
/// (none where its sum takes its place, below); the optimizer state is in
/// the optimizer's tier. A resident parameter whose
/// update runs off the device also has a copy in host memory, which the
/// CPU updates and the device's copy is refreshed from. A step the runtime
/// calls once per micro-batch (several of them, or a pipeline's) sums the
/// gradient over the calls: on the device where the device updates the
/// weight or holds its parameters, else in the `sums` tier (host or NVMe).
/// The optimizer state holds, in order, a 16-bit weight's float32 master
/// copy and the optimizer's moments, each the size of the master copy (of
/// the weight itself where there is none; --loom-optimizer-step places
/// them by slot).
struct WeightOffsets {
  int64_t parameter = -1, parameterCopy = -1, gradient = -1, optimizer = -1,
          sum = -1;
};

/// An op's result buffers, per result (-1: none): the device buffer its
/// forward writes; offloaded, the host copy it waits in; and the device
/// buffer the backward reads when that is another one (fetched back from
/// the host, or recomputed); and the device buffer the backward
/// accumulates its gradient in.
struct ResultOffsets {
  llvm::SmallVector<int64_t> forward, host, backward, gradient;
};

/// Every buffer one device holds over the first iteration of its schedule
/// (the chunk plan's period when parameters stream), at a fixed offset in
/// its tier's arena, checked for overlaps (checkArena).
struct StaticMemoryPlan {
  TierArena arenas[3]; // indexed by Tier
  llvm::DenseMap<Operation *, WeightOffsets> weights;
  llvm::DenseMap<Operation *, ResultOffsets> results;
  /// The function's arguments (the inputs), one slot each.
  std::vector<ResultOffsets> arguments;
  /// Streamed parameters: the device offset of each fetch's chunk copy (by
  /// index in the chunk plan's fetches), and of each chunk resident at the
  /// period's start (-1 for the others); a weight's copy sits at its
  /// chunk's plus `offsetInChunk` (by first-use index).
  std::vector<int64_t> fetchOffsets, carriedOffsets, offsetInChunk;
  /// A pipelined program's values on this pipeline device, every
  /// micro-batch in flight with its own buffers: per micro-batch, what
  /// `results` and `arguments` hold for one; `received`, the values this
  /// device is handed by another stage, by the op that computes them.
  llvm::DenseMap<Operation *, std::vector<ResultOffsets>> microBatchResults,
      receivedResults;
  std::vector<std::vector<ResultOffsets>> microBatchArguments; // [argument]
  const TierArena &arena(Tier t) const { return arenas[static_cast<int>(t)]; }
};

/// The first `chosen` of the program's `segments` segments
/// (Estimate::recomputeSegments), in the order partial recomputation or
/// partial offload takes them.
///  * Partial recomputation: besides selective recomputation's regions,
///    these re-run in the backward, each on its own; when chosen, their ops
///    are marked `loom.recompute = N : i64`, N the segment's rank.
///  * Partial offload: only the kept activations these ops produce go to
///    the host (first segments first, whose copies have the longest to
///    come back); when chosen, the ops are marked `loom.offload`.
struct ChosenSegments {
  llvm::DenseMap<Operation *, int64_t> ops; // op -> its segment's rank
  int64_t chosen = 0, segments = 0;
};

/// One way of placing the model state, priced.
struct PlacementCandidate {
  std::string name;      // e.g. "params device, optimizer host"
  std::string policy;    // the part of `name` naming its policy (policySuffix)
  Tier params = Tier::Device, optimizer = Tier::Device;
  /// Streamed parameters over several micro-batches: where the gradients'
  /// sums are kept (Host, or Nvme with everything else there).
  Tier sums = Tier::Host;
  /// The weights whose gradients and optimizer state stay on the device
  /// when `optimizer` is not the device: whole tensors in first-use order
  /// per device.
  llvm::DenseSet<Operation *> deviceOptimizerWeights;
  RecomputeMode recompute = RecomputeMode::None; // its activation policy
  /// Partial recomputation: the segments it re-runs besides selective
  /// recomputation's regions (null for the whole-program policies).
  std::shared_ptr<const ChosenSegments> recomputedSegments;
  /// Partial offload (activations on the host): the segments whose kept
  /// activations are offloaded (null: all of them, or none).
  std::shared_ptr<const ChosenSegments> offloadedSegments;
  /// Where its kept activations wait for the backward (Device or Host).
  Tier activations = Tier::Device;

  bool feasible = false;
  std::string why;       // when infeasible: every tier short, by how much
  /// Per tier (device, host, NVMe): the bytes it needs beyond the tier's
  /// capacity on its fullest device (0: not short there, or not known).
  double shortBytes[3] = {0, 0, 0};
  int64_t chunkBytes = 0;
  double stepSeconds = 0;
  double h2dBytes = 0, d2hBytes = 0, nvmeBytes = 0; // per step
  double activationBytes = 0; // offloaded activations, each way per step
  double devicePeak = 0, hostPeak = 0, nvmeUsed = 0;
  /// The offloaded update pipeline beside the device's steps (training
  /// with the optimizer off the device).
  std::optional<::loom::memory::UpdateTimeline> update;
  /// The device whose iteration is reported (the slowest; an index into
  /// the evaluation's pipeline devices), for the timeline.
  int64_t reportedDevice = 0;
};

struct MemoryPlacement {
  std::string clusterName;
  int64_t devices = 1, pipelineDevices = 1, dataParallel = 1, microBatches = 1;
  /// Whether a training step sums each gradient over the runtime's calls
  /// (Estimate::accumulatesGradients).
  bool accumulatesGradients() const {
    return microBatches > 1 || pipelineDevices > 1;
  }
  int zeroStage = 0; // of the chosen placement
  double deviceBytes = 0, hostBytes = 0, nvmeBytes = 0; // capacities, per device
  // Model state of the fullest device, before ZeRO.
  double parameterBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  double otherDeviceBytes = 0; // activations, temporaries, comm buffers
  /// The same with selective / full recomputation (-1: not priced).
  double otherDeviceBytesRecomputed[2] = {-1, -1};
  double unlimitedStepSeconds = 0; // the fastest ZeRO stage, no limits
  /// The segments partial recomputation takes, in order
  /// (Estimate::recomputeSegments, under the evaluation's policy).
  llvm::SmallVector<RecomputeSegment> recomputeSegments;
  /// Per step, as the estimator counts them (placement adds no model
  /// FLOPs), for the placed plan's throughput.
  double modelFlops = 0, globalBatch = 0, peakFlopsPerDevice = 0;
  bool training = true;
  bool delayedUpdate = false; // as asked; resident placements take it
  bool streamSharded = false; // as asked (PlacementOptions::streamSharded)
  std::vector<PlacementCandidate> candidates; // in the order tried
  int chosen = -1;                            // index, -1 = nothing fits
  // The chosen candidate's chunk schedule (parameters streamed only).
  std::vector<Operation *> weights;        // in first-use order
  /// Per trainable weight, the devices sharing its update under the chosen
  /// ZeRO stage (1 without ZeRO).
  llvm::DenseMap<Operation *, double> stateShards;
  /// The weights training updates (a gradient and optimizer state placed
  /// for each): not one without a gradient (WeightFacts::hasGradient).
  llvm::DenseSet<Operation *> trained;
  std::vector<int> chunkOf;                // per parameter
  std::vector<Operation *> forwardOps;     // the schedule's forward steps
  std::vector<BackwardStep> backwardSteps; // and the rest, in training
  ::loom::memory::ChunkProblem problem;
  ::loom::memory::ChunkPlan plan;
  double lowerBoundH2D = 0; // bytes per step, for the chosen placement
  /// The same for plans that release what the chosen one releases after
  /// its last read (0: it releases nothing).
  double lowerBoundH2DReleasing = 0;
  /// What a streamed placement's bound is computed from
  /// (sharedFetchLowerBound): its chunk problem as the bound reads it, each
  /// chunk's share of a fetch and the device update's end reads. The bound
  /// searches, so placeMemory computes it for the winner alone.
  struct LowerBoundInputs {
    ::loom::memory::ChunkProblem problem;
    std::vector<double> shares, endReads;
    /// The chunks the chosen plan releases after their last read.
    std::vector<int> released;
  };
  std::shared_ptr<const LowerBoundInputs> lowerBoundInputs;
  /// Training: the refresh uploads of carried chunks replayed beside the
  /// chunk schedule (simulateRefresh).
  int64_t refreshesReplayed = 0;
  /// The chosen placement's update pipeline on each pipeline device, with
  /// an iteration traced (training with the optimizer off the device;
  /// streamed parameters have one device), for the timeline.
  std::vector<std::optional<::loom::memory::UpdateTimeline>> deviceUpdates;
  /// The chosen placement's buffers at fixed offsets in each tier, for a
  /// program on one pipeline device whose micro-batches run one after
  /// another (written to the IR).
  std::optional<StaticMemoryPlan> memoryPlan;
  /// A pipelined program's static memory plans, one per pipeline device
  /// (every micro-batch in flight with its own buffers), written to the IR
  /// as `loom.pipeline_offsets` (writePipelineOffsets).
  std::vector<StaticMemoryPlan> pipelineMemoryPlans;
  /// The chosen placement's per-device programs, from which its static
  /// memory plans are made once the winner across evaluations is known.
  std::shared_ptr<const placement::PlacedPrograms> programs;
  /// ZeRO-3 as written to the IR (ZeroShards.h): weights stored split over
  /// their replicas, and those kept whole ("name: why").
  int zeroShardedWeights = 0;
  std::vector<std::string> zeroKeptWhole;
  /// The placements refused after their static memory plans' replays, in
  /// the order refused ("name: why"); a refused split of the optimizer is
  /// followed by one keeping less of it on the device.
  std::vector<std::string> refusals;

  const PlacementCandidate *best() const {
    return chosen < 0 ? nullptr : &candidates[chosen];
  }
  /// A tier's capacity per device.
  double capacity(Tier t) const {
    return t == Tier::Device ? deviceBytes : t == Tier::Host ? hostBytes : nvmeBytes;
  }
  /// The chosen placement's rates (0 when nothing fits).
  double samplesPerSecond() const { return perStep(globalBatch); }
  double modelTflopsPerDevice() const {
    return perStep(modelFlops) / static_cast<double>(devices) / 1e12;
  }
  double mfu() const {
    return peakFlopsPerDevice > 0 ? modelTflopsPerDevice() * 1e12 / peakFlopsPerDevice : 0;
  }

private:
  double perStep(double amount) const {
    return best() && best()->stepSeconds > 0 ? amount / best()->stepSeconds : 0;
  }
};

/// Places the model state of the module's function on each device of its
/// plan (trying each placement under each ZeRO stage and, in training,
/// activation policy) and annotates each weight with `loom.placement` and
/// the module with `loom.memory_plan`; streamed parameters also get the
/// forward's loom.fetch / loom.release ops (Movement.h), checked by
/// verifyMovement. A placement from an earlier run is replaced. Errors name
/// the function or weight at fault.
FailureOr<MemoryPlacement> placeMemory(ModuleOp module,
                                       const PlacementOptions &options);

void printPlacement(const MemoryPlacement &placement, llvm::raw_ostream &os);

/// Writes the chosen placement's steady-state iteration on each pipeline
/// device (a process each) to `path` as a Chrome trace (trace-event JSON,
/// microseconds, for chrome://tracing or Perfetto), one lane per resource:
/// the device's steps
/// and its own optimizer step; the host-to-device link (chunk fetches,
/// activations coming back, updated parameters going up); the
/// device-to-host link (gradients going down); the CPU optimizer; the
/// network (the update's reductions and gathers). From the first step's
/// start to the next iteration's, as placement priced them. Written whole
/// or not at all. Errors: nothing fits; the file cannot be written.
llvm::Error writeTimeline(const MemoryPlacement &placement,
                          llvm::StringRef path);

/// Removes everything an earlier placeMemory wrote: `loom.memory_plan`,
/// each weight's `loom.placement`, the static memory plan's `loom.offsets`
/// and the movement ops.
void removePlacement(ModuleOp module);

} // namespace mlir::loom

#endif // LOOM_MEMORY_PLACEMENT_H
