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
#include "loom/Memory/ChunkSchedule.h"
#include "loom/Memory/UpdatePipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::loom {

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
  /// ZeRO stages to consider over the data-parallel replicas (each one is
  /// priced; only stage 0 without data parallelism).
  std::vector<int> zeroStages = {0, 1, 2, 3};
  /// Activation policies to consider in training (none, selective, full); the
  /// strategy search passes the one its plan was priced with.
  std::vector<std::string> recomputeModes = {"none", "selective", "full"};
  /// Where training's kept activations may wait for their backward: on the
  /// device, or offloaded to host memory (device, host). Offload is priced
  /// only where keeping them leaves the device short or slower.
  std::vector<std::string> activationTiers = {"device", "host"};
  /// The pipeline schedule of a pipelined plan (as for the estimator).
  ::loom::PipelineSchedule schedule = ::loom::PipelineSchedule::OneFOneB;
};

enum class Tier { Device, Host, Nvme };
llvm::StringRef tierName(Tier t);

/// One way of placing the model state, priced.
struct PlacementCandidate {
  std::string name;      // e.g. "params device, optimizer host"
  Tier params = Tier::Device, optimizer = Tier::Device;
  /// The weights whose gradients and optimizer state stay on the device
  /// when `optimizer` is not the device: whole tensors in first-use order
  /// per device.
  llvm::DenseSet<Operation *> deviceOptimizerWeights;
  RecomputeMode recompute = RecomputeMode::None; // its activation policy
  /// Where its kept activations wait for the backward (Device or Host).
  Tier activations = Tier::Device;

  bool feasible = false;
  std::string why;       // when infeasible: the first tier short, by how much
  int64_t chunkBytes = 0;
  double stepSeconds = 0;
  double h2dBytes = 0, d2hBytes = 0, nvmeBytes = 0; // per step
  double activationBytes = 0; // offloaded activations, each way per step
  double devicePeak = 0, hostPeak = 0, nvmeUsed = 0;
  /// The offloaded update pipeline beside the device's steps (training
  /// with the optimizer off the device).
  std::optional<::loom::memory::UpdateTimeline> update;
};

struct MemoryPlacement {
  std::string clusterName;
  int64_t devices = 1, pipelineDevices = 1, dataParallel = 1, microBatches = 1;
  int zeroStage = 0; // of the chosen placement
  double deviceBytes = 0, hostBytes = 0, nvmeBytes = 0; // capacities, per device
  // Model state of the fullest device, before ZeRO.
  double parameterBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  double otherDeviceBytes = 0; // activations, temporaries, comm buffers
  /// The same with selective / full recomputation (-1: not priced).
  double otherDeviceBytesRecomputed[2] = {-1, -1};
  double unlimitedStepSeconds = 0; // the fastest ZeRO stage, no limits
  /// Per step, as the estimator counts them (placement adds no model
  /// FLOPs), for the placed plan's throughput.
  double modelFlops = 0, globalBatch = 0, peakFlopsPerDevice = 0;
  bool delayedUpdate = false; // as asked; resident placements take it
  std::vector<PlacementCandidate> candidates; // in the order tried
  int chosen = -1;                            // index, -1 = nothing fits
  // The chosen candidate's chunk schedule (parameters streamed only).
  std::vector<Operation *> weights;        // in first-use order
  /// Per trainable weight, the devices sharing its update under the chosen
  /// ZeRO stage (1 without ZeRO).
  llvm::DenseMap<Operation *, double> stateShards;
  std::vector<int> chunkOf;                // per parameter
  std::vector<Operation *> forwardOps;     // the schedule's forward steps
  ::loom::memory::ChunkProblem problem;
  ::loom::memory::ChunkPlan plan;
  double lowerBoundH2D = 0; // bytes per step, for the chosen placement
  // The chosen placement's static device memory plan (Arena.h).
  double arenaBytes = 0, arenaLiveBound = 0;
  int64_t arenaBuffers = 0;

  const PlacementCandidate *best() const {
    return chosen < 0 ? nullptr : &candidates[chosen];
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

} // namespace mlir::loom

#endif // LOOM_MEMORY_PLACEMENT_H
