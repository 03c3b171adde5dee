//===- DeviceProgram.h - one device's steps as placement sees them -*- C++ -*-===//
//
// Private to lib/Memory: the per-device program the placement prices
// (Placement.cpp) and lays out in its tiers' arenas (StaticMemoryPlan.cpp),
// read from the estimator's per-op and per-weight facts.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_MEMORY_DEVICEPROGRAM_H
#define LOOM_LIB_MEMORY_DEVICEPROGRAM_H

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Autodiff/OptimizerStep.h"
#include "loom/Cost/Estimate.h"
#include "loom/Memory/Placement.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::loom::placement {

/// Adam's state for `bytes` of a tensor stored `elementBytes` to an element.
inline double optimizerStateBytes(double bytes, double elementBytes) {
  return bytes / elementBytes * adamStateBytesPerParameter(elementBytes);
}

/// What the step reads, in program order.
struct OpStep {
  Operation *op;
  double forward = 0, backward = 0; // per micro-batch
  /// Of `backward`, the estimator's wait for offloaded activations to come
  /// back over a link of their own (a chunk schedule shares the link and
  /// times them itself).
  double backwardStall = 0;
  SmallVector<WeightOp> weights;
  SmallVector<double> resultBytes; // local bytes of each result
  bool hasBackward = false;
  /// The estimator charges a re-run of its forward to the backward
  /// (`rerunSeconds`). Where the backward re-runs it (autodiff does for the
  /// ops whose results it does not keep), that is a step of its own just
  /// before the backward of step `rerunAt` (in its device's `steps`);
  /// otherwise (a cut point full recomputation keeps) `backward` includes
  /// it.
  bool recomputed = false;
  int64_t rerunAt = -1;
  int64_t rerunRank = 0; // its place among the re-runs before that backward
  double rerunSeconds = 0;
  double rerunsBefore = 0; // seconds of the re-runs before its backward
  int64_t stage = 0;       // its pipeline stage
};

/// One iteration of a one-stage device program, as the chunk schedule's
/// steps and the static memory plan's positions number it: the forward
/// steps in program order; in training then, from the last step back, the
/// re-runs before each step's backward (OpStep::rerunAt, in the order the
/// backward runs them) and its backward.
struct IterationLayout {
  enum class Kind { Forward, Rerun, Backward };
  struct Position {
    Kind kind;
    int64_t step; // in the device's steps
  };
  std::vector<Position> positions;
  /// Per step, its positions (-1: none).
  std::vector<int64_t> forwardAt, rerunAt, backwardAt;
};

/// A weight as one device holds it under the plan and a ZeRO stage.
struct HeldWeight {
  double bytes = 0;       // its shard under the plan's sharding (TP, EP)
  double held = 0;        // of those, held on the device (ZeRO-3 shards them)
  double stateShards = 1; // devices dividing its gradient and update (ZeRO)
  double gradientShards = 1;
  double elementBytes = 4;
  /// Bytes of its gradient's sum per byte of the weight: 2 for a 16-bit
  /// weight whose step sums gradients in float32 (several micro-batches,
  /// or a pipeline; gradientBytesPerParameter), else 1.
  double gradientWidening = 1;
  /// Whether the program updates it through a float32 master copy (its IR
  /// type is 16-bit: updatesThroughMasterCopy), whatever precision the
  /// placement prices: what the program holds and reads follows from it.
  bool masterCopy = false;
  /// Whether training updates it (a gradient and optimizer state): the
  /// estimator's WeightFacts::hasGradient.
  bool trainable = false;
  WeightFacts facts;

  /// Its gradient as the device keeps it (ZeRO-2 shards it; a step of
  /// several micro-batches, or a pipeline's, keeps their sum).
  double gradient() const { return bytes / gradientShards * gradientWidening; }
  /// Its Adam state as the device keeps it (ZeRO-1 shards it).
  double state() const {
    return optimizerStateBytes(bytes, elementBytes) / stateShards;
  }
  /// This device's part of the update when it runs off the device: the
  /// gradient copied down and the parameters copied back up.
  double offloaded() const { return bytes / stateShards; }
  /// The copy of a resident parameter that an update off the device
  /// updates, beside the state: a 32-bit weight's own (its master copy); a
  /// 16-bit weight's master copy is part of its state.
  double offloadedParameterCopy() const { return masterCopy ? 0 : offloaded(); }
  /// Updated on the device while streamed (a split of its optimizer), it
  /// needs its parameters there: a 16-bit weight's fp32 master copy is part
  /// of its state, a 32-bit weight is its own master copy.
  bool deviceUpdateReadsParameters() const { return trainable && !masterCopy; }
};

/// One pipeline device's part of the program: its ops (of every stage it
/// runs), the weights they read, and its iteration as the schedule runs it.
struct DeviceProgram {
  int64_t device = 0;
  SmallVector<OpStep> steps;
  IterationLayout layout; // of `steps`, once their re-runs are placed
  llvm::MapVector<Operation *, HeldWeight> weights; // first-use order
  double parameterBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  double otherBytes = 0;    // activations, temporaries, comm buffers
  double commBytes = 0;     // of those, the communication buffers
  /// Activation offload: what host memory holds, and what crosses the link
  /// each way per step.
  double hostActivationBytes = 0, activationTraffic = 0;
  /// ZeRO-3: the slots gathered weights take in turn (StaticMemoryPlan's
  /// zero3_gather_<k>), each the size of the largest weight held in shards.
  int64_t gatherSlots = 2;
  double gatherSlotBytes = 0;
  double gatherBuffer() const { return static_cast<double>(gatherSlots) * gatherSlotBytes; }
  /// Its tasks in the pipeline schedule's order (Estimate's deviceOrders).
  std::vector<::loom::PipelineStep> order;
  /// Local bytes of the values its stages receive from another device's
  /// stage (activations crossing a pipeline boundary).
  llvm::DenseMap<Value, double> receivedBytes;
  /// The values its stages send to another device's stage whose gradients
  /// come back in the backward (floating point, read by a step with one).
  llvm::DenseSet<Value> sentValues;
  DeviceTimes times;
  double padding = 0;       // waiting for the pipeline's last device
};

/// A device's iteration as the resident placements run it: idle until its
/// first forward, one micro-batch's forward steps (the first, which waits
/// for the updates), the rest of the schedule, in training the last
/// micro-batch's backward steps in reverse (which complete the gradients),
/// then the exposed gradient synchronisation of what the device still
/// updates itself (`share`) and the wait for the pipeline's last device.
/// Each step's seconds, and with `names` its name.
inline std::vector<double>
framedSteps(const DeviceProgram &dev, double share, bool training,
            std::vector<std::string> *names = nullptr) {
  auto opName = [](const OpStep &s) {
    return s.op->getName().getStringRef().str();
  };
  std::vector<double> seq = {dev.times.firstForwardStart};
  if (names)
    names->push_back("before the first forward");
  double forward = 0, backward = 0;
  for (const OpStep &s : dev.steps) {
    seq.push_back(s.forward);
    forward += s.forward;
    if (names)
      names->push_back("forward " + opName(s));
  }
  for (const OpStep &s : dev.steps)
    backward += s.rerunsBefore + s.backward;
  // (ZeRO-2/3's exposed reduce-scatters of the earlier micro-batches.)
  seq.push_back(std::max(0.0, dev.times.finish - dev.times.firstForwardStart -
                                  forward - backward) +
                dev.times.earlierReducesExposed);
  if (names)
    names->push_back(dev.times.earlierReducesExposed > 0
                         ? "the rest of the schedule, earlier micro-batches' "
                           "exposed reduce-scatters included"
                         : "the rest of the schedule");
  if (training)
    for (const OpStep &s : llvm::reverse(dev.steps)) {
      seq.push_back(s.rerunsBefore + s.backward);
      if (names)
        names->push_back("backward " + opName(s));
    }
  seq.push_back(
      share * (dev.times.gradSyncExposed - dev.times.earlierReducesExposed) +
      dev.padding);
  if (names)
    names->push_back("gradient synchronisation and pipeline wait");
  return seq;
}

/// A split of a streamed optimizer (`kept` updated on the device): the
/// weights (indices into `dev.weights`) whose device update reads a copy of
/// their parameters uploaded after the backward, those that need them
/// (HeldWeight::deviceUpdateReadsParameters) and whose chunk (`chunkOf`)
/// the chunk plan does not end every iteration with on the device
/// (`onDeviceAtEnd`, per chunk). Placement prices their uploads, and
/// --loom-optimizer-step writes a loom.reload for each of them (it reads
/// the IR's live fetches, which say the same); a 16-bit weight's update
/// reads its master copy instead.
inline std::vector<size_t>
updateReloads(const DeviceProgram &dev, const llvm::DenseSet<Operation *> &kept,
              llvm::ArrayRef<int> chunkOf,
              const std::vector<bool> &onDeviceAtEnd) {
  std::vector<size_t> reloaded;
  for (auto [i, entry] : llvm::enumerate(dev.weights))
    if (kept.contains(entry.first) &&
        entry.second.deviceUpdateReadsParameters() &&
        !onDeviceAtEnd[chunkOf[i]])
      reloaded.push_back(i);
  return reloaded;
}

/// A streamed training step of several micro-batches prices its earlier
/// micro-batches as one step before the last one's (Placement.cpp's
/// priceStreamed): the steps its update pipeline's iteration starts with.
inline int earlierMicroBatchSteps(int64_t microBatches, bool training) {
  return training && microBatches > 1 ? 1 : 0;
}

/// A streamed step of several micro-batches lands each trainable weight's
/// gradient in host memory as the backward completes it, and the host adds
/// it into the weight's sum at once (--loom-optimizer-step): each landed
/// gradient is held from the position of that backward (its first forward
/// reader's, in `dev.layout`) through the next.
struct LandedGradient {
  size_t weight; // into dev.weights
  int64_t at;    // the position it lands at
};
inline std::vector<LandedGradient> landedGradients(const DeviceProgram &dev) {
  std::vector<LandedGradient> landed;
  llvm::DenseSet<Operation *> seen;
  for (auto [k, step] : llvm::enumerate(dev.steps))
    for (WeightOp w : step.weights) {
      auto it = dev.weights.find(w);
      if (it == dev.weights.end() || !it->second.trainable ||
          !seen.insert(w).second || dev.layout.backwardAt[k] < 0)
        continue;
      landed.push_back({static_cast<size_t>(it - dev.weights.begin()),
                        dev.layout.backwardAt[k]});
    }
  return landed;
}
/// The most bytes of landedGradients held at once.
inline double landedGradientPeak(const DeviceProgram &dev) {
  std::map<int64_t, double> change; // by position
  for (const LandedGradient &l : landedGradients(dev)) {
    double bytes = (dev.weights.begin() + l.weight)->second.offloaded();
    change[l.at] += bytes;
    change[l.at + 2] -= bytes;
  }
  double held = 0, peak = 0;
  for (auto &[at, delta] : change)
    peak = std::max(peak, held += delta);
  return peak;
}

/// Per chunk, what its home copy (host or NVMe) holds of `dev`'s weights
/// (`chunkOf[i]` is weight i's chunk): the parameters `dev` holds, which
/// streamed in ZeRO-3 shards is its shard of each.
inline std::vector<double> chunkHomeBytes(const DeviceProgram &dev,
                                          llvm::ArrayRef<int> chunkOf, size_t chunks) {
  std::vector<double> home(chunks, 0);
  for (auto [i, entry] : llvm::enumerate(dev.weights))
    if (i < chunkOf.size())
      home[chunkOf[i]] += entry.second.held;
  return home;
}

/// Per chunk, the bytes its carried copy has stale at an iteration
/// boundary: those of the trainable weights not in `kept` (updated off the
/// device, which rewrites their home copies), each weight i as
/// `bytesOf(i, its HeldWeight)` counts it.
inline std::vector<double> staleChunkBytes(
    const DeviceProgram &dev, llvm::ArrayRef<int> chunkOf, size_t chunks,
    const llvm::DenseSet<Operation *> *kept,
    llvm::function_ref<double(size_t, const HeldWeight &)> bytesOf) {
  std::vector<double> stale(chunks, 0);
  for (auto [i, entry] : llvm::enumerate(dev.weights))
    if (i < chunkOf.size() && entry.second.trainable &&
        !(kept && kept->contains(entry.first)))
      stale[chunkOf[i]] += bytesOf(i, entry.second);
  return stale;
}

/// An evaluation's pipeline devices, kept with its chosen placement for
/// the static memory plan.
struct PlacedPrograms {
  std::vector<DeviceProgram> devices;
  /// Per device, the room for gradients on their way to the host under
  /// the chosen placement (accumulated over micro-batches when there are
  /// several).
  std::vector<double> gradientStaging;
  /// One pipeline device whose micro-batches run one after another (1F1B
  /// runs each one's backward before the next forward; inference keeps
  /// nothing): its plan follows one micro-batch and goes into the IR.
  bool sequential = true;
  /// Local bytes of the function's arguments (the inputs), read by the
  /// first pipeline device.
  std::vector<double> argumentBytes;
  /// Training: what the estimator keeps for the backward (Estimate's
  /// keptActivations).
  llvm::DenseSet<Value> keptActivations;
  /// Those of them offloaded to the host (Estimate's offloadedActivations).
  llvm::DenseSet<Value> offloadedActivations;
};

/// The static memory plan of placement `c` on pipeline device `d` of
/// `programs` (`p` holds the chosen chunk schedule of streamed
/// parameters): every buffer over the positions of the schedule, at an
/// offset in its tier's arena. In a sequential program the positions are
/// one micro-batch's forward steps then backward steps, for each iteration
/// of the chunk plan's period, and the first iteration's offsets are the
/// ones to write to the IR; otherwise they follow the device's task order,
/// every micro-batch with its own buffers. Fails, naming the function, if
/// an arena fails its check.
FailureOr<StaticMemoryPlan>
planStaticMemory(func::FuncOp func, const MemoryPlacement &p,
                 const PlacementCandidate &c, const PlacedPrograms &programs,
                 size_t d, bool training);

/// Writes each op's ResultOffsets as `loom.offsets = {backward, forward,
/// host}` (arrays by result; -1 where it has no buffer), and each function
/// argument's as the same argument attribute.
void writeResultOffsets(func::FuncOp func, const StaticMemoryPlan &plan);

/// Writes a pipelined program's plans (`plans[d]`, pipeline device d's):
/// on each op, `loom.pipeline_offsets = {device, backward, forward, host}`
/// for the device its stage runs on, each array by micro-batch then by
/// result (micro-batch k's result r at k * results + r; -1 where it has no
/// buffer), and `loom.received_offsets`, a list of the same for each device
/// another stage hands its results to; each function argument's as
/// `loom.pipeline_offsets` with one slot per micro-batch, on the first
/// device that reads it, and `loom.received_offsets` for the others (every
/// device takes the model's inputs).
void writePipelineOffsets(func::FuncOp func, ArrayRef<StaticMemoryPlan> plans);

/// A pipelined program's `loom.placement` entry `pipeline_offsets` of
/// `weight`: a `{device, <appendWeightOffsets' entries>}` per pipeline
/// device whose plan holds it (null where none does).
ArrayAttr pipelineWeightOffsets(Builder &b, ArrayRef<StaticMemoryPlan> plans,
                                Operation *weight);

/// A weight's buffers as `loom.placement` entries (`offset`, `copy_offset`,
/// `gradient_offset`, `optimizer_offset`, `sum_offset`), those it has.
void appendWeightOffsets(Builder &b, const WeightOffsets &at,
                         SmallVectorImpl<NamedAttribute> &attrs);

/// Removes every `loom.offsets`, `loom.pipeline_offsets` and
/// `loom.received_offsets` (ops and arguments): a plan from an earlier run.
void removeStaticMemoryPlan(func::FuncOp func);

/// The arenas as `{device = {bytes, live_bound, <scratch> = offset...,
/// scratch_bytes = {<scratch> = bytes...}}, host = ..., nvme = ...}`, tiers
/// without buffers left out.
DictionaryAttr arenasAttr(Builder &b, const StaticMemoryPlan &plan);

} // namespace mlir::loom::placement

#endif // LOOM_LIB_MEMORY_DEVICEPROGRAM_H
