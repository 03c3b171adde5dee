//===- Pipeline.h - pipeline schedules, simulated -----------------*- C++ -*-===//
//
// Simulates a pipeline schedule event by event: each device runs its list of
// forward/backward micro-batch tasks in the schedule's order; a forward of
// stage s waits for the forward of stage s-1 plus the activation transfer, a
// backward of stage s waits for the backward of stage s+1 plus the gradient
// transfer. This gives the exact makespan for non-uniform stages and how
// many micro-batches' activations each device holds at its worst moment.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_PIPELINE_H
#define LOOM_COST_PIPELINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace loom {

enum class PipelineSchedule { GPipe, OneFOneB, Interleaved1F1B, KFKB };
llvm::StringRef stringifyPipelineSchedule(PipelineSchedule s);
std::optional<PipelineSchedule> parsePipelineSchedule(llvm::StringRef s);

/// Per micro-batch costs of one (virtual) stage, in seconds.
struct StageCost {
  double forward = 0;
  double backward = 0;      // 0 for inference; includes recomputation
  double sendForward = 0;   // activations to the next stage
  double sendBackward = 0;  // gradients to the previous stage
};

struct PipelineOptions {
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int64_t microBatches = 1;
  /// Physical pipeline devices; stages.size() must be devices * v, stage j
  /// runs on device j % devices (interleaving needs v > 1, others v == 1).
  int64_t devices = 1;
  int64_t kfkbGroup = 2; // k of kFkB
  bool training = true;   // false: forward only
  /// Record every task in PipelineResult::tasks (for timelines); a planner
  /// scoring many candidates turns this off to save time and memory.
  bool recordTasks = true;
};

struct PipelineTask {
  int64_t device, stage, microBatch;
  bool backward;
  double start, end;
};

struct PipelineResult {
  double makespan = 0;
  /// Per device: most micro-batches whose forward activations are held at
  /// once (forward done, backward not yet), counted per virtual stage
  /// chunk, i.e. inFlight[d][chunk].
  std::vector<std::vector<int64_t>> peakInFlight;
  std::vector<double> busy;        // per device, seconds of compute
  std::vector<double> finish;      // per device, when its last task ends
  double bubbleFraction = 0;       // 1 - mean(busy) / makespan
  std::vector<PipelineTask> tasks; // in start order, for timelines
};

/// Fails (naming the problem) on inconsistent options, e.g. interleaving
/// with microBatches not a multiple of devices.
llvm::Expected<PipelineResult> simulatePipeline(llvm::ArrayRef<StageCost> stages,
                                                const PipelineOptions &options);

/// One entry of a device's task order: its `chunk`-th virtual stage (global
/// stage chunk * devices + device). 32-bit fields keep orders of millions of
/// tasks compact.
struct PipelineStep {
  int32_t chunk;
  int32_t microBatch;
  bool backward;
};

/// A built-in schedule's per-device task orders for `numStages` stages: what
/// simulatePipeline replays. Built once, they replay any stage costs of that
/// shape (a planner pricing many candidates of one shape builds them once).
struct PipelineOrders {
  PipelineOptions options;
  int64_t numStages = 0;
  std::vector<std::vector<PipelineStep>> orders; // per device
};

/// Fails like simulatePipeline on inconsistent options.
llvm::Expected<PipelineOrders> buildPipelineOrders(int64_t numStages,
                                                   const PipelineOptions &options);

/// PipelineResult::peakInFlight of any run of these orders in training:
/// a device runs its order strictly in sequence, so the order alone fixes
/// what each chunk holds, whatever the stages cost.
std::vector<std::vector<int64_t>> peakInFlight(const PipelineOrders &orders);

/// Replays built orders with these stage costs (one per stage).
llvm::Expected<PipelineResult> simulatePipeline(const PipelineOrders &orders,
                                                llvm::ArrayRef<StageCost> stages);

/// A lower bound on each device's finish (PipelineResult::finish) under any
/// task order that runs every task once on its stage's device and respects
/// the dependencies: a device starts no earlier than its first stage's
/// forward can reach it and then has its whole compute to do; a training
/// device's last task is a backward whose micro-batch still runs backward on
/// every earlier stage. Exact for uniform stages without sends under GPipe
/// and 1F1B; a planner skips simulating a candidate whose bound already
/// loses. `stages.size()` must be a multiple
/// of `options.devices`.
std::vector<double> pipelineFinishLowerBound(llvm::ArrayRef<StageCost> stages,
                                             const PipelineOptions &options);

/// Simulates explicit per-device orders (`orders[d]` for device d) instead of
/// a built-in schedule's; `options.schedule` and `kfkbGroup` are ignored. Each
/// task of the run (every forward, and every backward when training) must
/// appear exactly once. Fails on a malformed order or a deadlock.
llvm::Expected<PipelineResult>
simulatePipelineOrders(llvm::ArrayRef<StageCost> stages,
                       const PipelineOptions &options,
                       llvm::ArrayRef<std::vector<PipelineStep>> orders);

} // namespace loom

#endif // LOOM_COST_PIPELINE_H
