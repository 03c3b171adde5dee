//===- UpdatePipeline.h - the offloaded optimizer step, overlapped -*- C++ -*-===//
//
// When the optimizer state lives off the device (ZeRO-Offload, ZeRO-Infinity,
// PatrickStar), each parameter's update is a pipeline: its gradient is
// complete once the backward has passed its first reader, is copied down the
// device-to-host link, CPU Adam updates it, and the updated parameter goes
// back up the host-to-device link before the next forward reads it. Tensors
// flow through those three resources in the order their gradients complete,
// so the CPU works while the backward is still running and the first layers'
// uploads are all the next forward waits for.
//
// simulateUpdates replays that pipeline over consecutive iterations against
// the device's step sequence and returns the steady-state step time. Under
// data parallelism each gradient is first reduced over the replicas and, with
// ZeRO, each device updates only its shard and all-gathers it after the
// upload: a fourth resource, the network, carries both. With
// `staleness` 1 the forward of iteration k reads the parameters updated from
// iteration k-2's gradients (ZeRO-Offload's delayed parameter update, which
// changes the training semantics and so is opt-in): the CPU step then
// overlaps a whole GPU iteration, and an upload waits until the iteration
// reading the version it replaces has read it for the last time (no second
// copy on the device). Plain C++ on LLVMSupport, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_UPDATEPIPELINE_H
#define LOOM_MEMORY_UPDATEPIPELINE_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace loom::memory {

/// One tensor whose optimizer step runs off the device.
struct OffloadedTensor {
  std::string name;
  /// The step (index into UpdateProblem::stepSeconds) whose end completes
  /// the tensor's gradient: the backward of its first forward reader.
  int readyAfterStep = 0;
  double gradientBytes = 0; // copied device -> host
  double updateSeconds = 0; // the CPU's step for it (Adam, NVMe traffic)
  double uploadBytes = 0;   // updated parameters copied host -> device
  /// Data parallelism: the collective that reduces the gradient over the
  /// replicas before it goes down (an all-reduce, or ZeRO's reduce-scatter
  /// of this device's shard), and the all-gather of the updated shard after
  /// it is back up (ZeRO). Both run on the network, one at a time.
  double reduceSeconds = 0, gatherSeconds = 0;
};

/// One device's iteration: `stepSeconds` in execution order; `waitsFor[s]` lists the tensors (indices
/// into `tensors`) whose update step s must see. The GPU's own optimizer
/// step for the tensors it keeps takes `deviceUpdateSeconds` after the last
/// step.
struct UpdateProblem {
  std::vector<double> stepSeconds;
  std::vector<std::vector<int>> waitsFor;
  std::vector<OffloadedTensor> tensors;
  double deviceUpdateSeconds = 0;
  /// Of `deviceUpdateSeconds`, the first part is uploads on the
  /// host-to-device link (a split's device update reloading kept weights
  /// the chunk schedule did not leave on the device): the link carries them
  /// from the last step's end, and the tensors' uploads queue behind.
  double deviceReloadSeconds = 0;
  double deviceToHost = 0, hostToDevice = 0; // bytes/s, one direction each
  double linkLatency = 0;                    // seconds per transfer
  int staleness = 0; // 0: exact; 1: delayed parameter update
  /// Uploads start no earlier than the end of this step (-1: as soon as
  /// their update is done): the host-to-device link carries other
  /// transfers until then (streamed parameter chunks, offloaded
  /// activations coming back).
  int uploadsAfterStep = -1;
  /// Gradients wait for their copy down in this many bytes of staging
  /// (0: as much as they need, accumulated over micro-batches): a step
  /// completing gradients starts once the copies of earlier ones have left
  /// room for them, so a slow link holds the backward back instead of
  /// filling the device.
  double stagingBytes = 0;
  /// Record one steady-state iteration (UpdateTimeline::trace). Off by
  /// default: placement prices many candidates and traces the one it
  /// chooses.
  bool traceIteration = false;
};

/// When a resource works on something: [start, end) seconds, empty where
/// it does not.
struct Interval {
  double start = 0, end = 0;
  bool empty() const { return !(end > start); }
};

/// A tensor's passage through the pipeline's resources in one iteration.
struct TensorTimes {
  std::string name;
  Interval reduce, down, update, up, gather;
};

/// One iteration of the steady state as the pipeline runs it, in seconds
/// from its first step's start (where its fetches may begin): when each
/// step starts (later than the step before it ends where gradient staging
/// holds it back) and ends, the device's own update, what each resource
/// does for each tensor in it (the uploads of the update `staleness`
/// iterations back), and when the next iteration's first step starts.
/// Where the steady state is periodic over several iterations, the one
/// before the last replayed.
struct IterationTrace {
  std::vector<double> stepStarts, stepEnds;
  Interval deviceUpdate, deviceReloads;
  std::vector<TensorTimes> tensors;
  double nextStart = 0;
};

/// The steady state.
struct UpdateTimeline {
  double stepSeconds = 0;    // one iteration, from one steady state period
  double computeSeconds = 0; // the device's steps and its own update
  double waitSeconds = 0;    // the device idle, waiting for updates
  // Each resource's busy time per iteration.
  double deviceToHostSeconds = 0, cpuSeconds = 0, hostToDeviceSeconds = 0,
         networkSeconds = 0;
  /// The same work done one resource after another, none overlapped (the
  /// serial bound the pipeline improves on).
  double serialSeconds = 0;
  /// With UpdateProblem::traceIteration: for replaying the uploads beside
  /// other transfers (simulateRefresh) and for the timeline.
  IterationTrace trace;
};

/// Errors: a tensor ready after a step that does not exist, uploads after
/// a step that does not exist, a wait for a
/// tensor that does not exist, a non-positive bandwidth while bytes must
/// move, a negative time, size or latency, staleness other than 0 or 1, a
/// negative staging size.
llvm::Expected<UpdateTimeline> simulateUpdates(const UpdateProblem &problem);

} // namespace loom::memory

#endif // LOOM_MEMORY_UPDATEPIPELINE_H
