//===- StaticMemoryPlan.cpp - every buffer at a fixed offset, per tier ----===//
//
// Buffer assignment for a placed program on one pipeline device: the device,
// host and NVMe arenas (Arena.h) of every buffer the placement holds, over
// the positions of its schedule, and the offsets written back to the IR so
// that a lowering allocates three arenas once and never calls an allocator
// inside the step. docs/memory-placement.md, "The static memory plan".
//
//===----------------------------------------------------------------------===//

#include "DeviceProgram.h"

#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Memory/Arena.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::placement;
namespace lm = ::loom::memory;

namespace {

/// The device's buffer of the sums over a step's calls (its micro-batches,
/// or a pipeline's) of the gradients of resident weights it does not update.
constexpr llvm::StringLiteral kGradientAccumulation = "gradient_accumulation";

/// What a buffer holds, so that its offset can be written where the IR
/// names it.
struct Owner {
  enum Kind {
    Scratch,       // named in the module's plan
    Parameter,     // a weight's home copy
    ParameterCopy, // the host copy the CPU's update writes
    Gradient,
    GradientSum, // over a step's calls (WeightOffsets::sum)
    OptimizerState,
    ChunkHome,      // `index`: the chunk's copy in its home tier
    ChunkCopy,      // `index`: the fetch (>= 0) or resident chunk (-1 - chunk)
    Forward,        // `op` result `index` as the forward writes it
    HostCopy,       // ... offloaded
    Backward,       // ... fetched back or recomputed for the backward
    ResultGradient, // ... the gradient the backward accumulates for it
    Other,          // later iterations of the period
  } kind;
  Operation *op = nullptr;
  int64_t index = 0;
  /// A pipelined program's: the micro-batch, and whether the value comes
  /// from another stage (`op` computes it there).
  int64_t microBatch = 0;
  bool received = false;
};

/// The WeightOffsets field a weight-owned buffer's offset goes to.
int64_t WeightOffsets::*weightField(Owner::Kind kind) {
  switch (kind) {
  case Owner::ParameterCopy:
    return &WeightOffsets::parameterCopy;
  case Owner::Gradient:
    return &WeightOffsets::gradient;
  case Owner::GradientSum:
    return &WeightOffsets::sum;
  case Owner::OptimizerState:
    return &WeightOffsets::optimizer;
  default:
    return &WeightOffsets::parameter;
  }
}

/// One tier's buffers and what each holds.
struct TierBuffers {
  std::vector<lm::Buffer> buffers;
  std::vector<Owner> owners;
};

} // namespace

FailureOr<StaticMemoryPlan> mlir::loom::placement::planStaticMemory(
    func::FuncOp func, const MemoryPlacement &p, const PlacementCandidate &c,
    const PlacedPrograms &programs, size_t d, bool training) {
  const DeviceProgram &dev = programs.devices[d];
  const double gradientStaging = programs.gradientStaging[d];
  const bool sequential = programs.sequential;
  ArrayRef<OpStep> steps = dev.steps;
  const int64_t n = static_cast<int64_t>(steps.size());
  // A sequential program's iteration as the chunk schedule steps through
  // it, re-runs of recomputed ops included.
  const IterationLayout &layout = dev.layout;
  const int64_t perIteration = static_cast<int64_t>(layout.positions.size());
  const int64_t iterations = c.params == Tier::Device ? 1 : p.plan.iterations;

  // The schedule's positions. Each task runs one stage's steps for one
  // micro-batch: its forward in program order, its backward in reverse.
  // Micro-batches run one after another on one pipeline device reuse one
  // micro-batch's buffers, so there the tasks are one iteration `layout`
  // per iteration of the chunk plan's period; a pipelined device
  // follows the schedule's task order (Estimate's deviceOrders), holding
  // several micro-batches at once.
  DenseMap<Operation *, int64_t> stageOf, localIndex;
  DenseMap<Operation *, const OpStep *> stepOf;
  std::map<int64_t, int64_t> stageSize;
  for (const OpStep &s : steps) {
    stepOf[s.op] = &s;
    int64_t stage = sequential ? 0 : s.stage;
    stageOf[s.op] = stage;
    localIndex[s.op] = stageSize[stage]++;
  }
  // (stage, micro-batch or iteration) -> where its forward and backward
  // tasks start (-1: not run).
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> taskAt;
  int64_t total = 0;
  if (sequential) {
    for (int64_t it = 0; it < iterations; ++it) {
      taskAt[{0, it}] = {total, training ? total + n : -1};
      total += perIteration;
    }
  } else {
    for (const ::loom::PipelineStep &t : dev.order) {
      int64_t stage = int64_t(t.chunk) * p.pipelineDevices + dev.device;
      auto &at = taskAt.try_emplace({stage, t.microBatch}, -1, -1).first->second;
      (t.backward ? at.second : at.first) = total;
      total += stageSize[stage];
    }
  }
  // Where a task starting forward at F and backward at B runs local step k
  // forward and backward (a sequential task's iteration starts at F).
  auto forwardAt = [&](int64_t F, int64_t k) {
    return sequential ? F + layout.forwardAt[k] : F + k;
  };
  auto backwardAt = [&](int64_t F, int64_t B, int64_t size, int64_t k) {
    return sequential ? F + layout.backwardAt[k] : B + size - 1 - k;
  };
  TierBuffers tiers[3];
  // Adds a buffer; its index in its tier (-1: no bytes, no buffer).
  auto add = [&](Tier t, Owner owner, std::string name, double bytes,
                 int64_t start, int64_t end, int group = -1) -> int64_t {
    if (bytes <= 0)
      return -1;
    TierBuffers &tb = tiers[static_cast<int>(t)];
    tb.buffers.push_back(
        {std::move(name), static_cast<int64_t>(bytes), start, end, group});
    tb.owners.push_back(owner);
    return static_cast<int64_t>(tb.buffers.size()) - 1;
  };
  // For the replay's reads: each value's device buffers per task (its
  // forward copy, and one fetched back or recomputed), and each streamed
  // chunk's device copies.
  using TaskKey = std::pair<int64_t, int64_t>; // (stage, micro-batch)
  DenseMap<std::pair<Value, TaskKey>, SmallVector<int64_t, 2>> deviceCopiesOf;
  std::vector<std::vector<int64_t>> chunkCopies(p.problem.chunkBytes.size());
  auto whole = [&](Tier t, Owner owner, std::string name, double bytes) {
    add(t, owner, std::move(name), bytes, 0, total);
  };
  auto scratch = [&](Tier t, StringRef id, double bytes) {
    whole(t, {Owner::Scratch}, id.str(), bytes);
  };
  auto weightName = [](Operation *op) {
    return cast<WeightOp>(op).getName().str();
  };

  // Parameters: resident on the device all along, or streamed in chunks
  // whose home copies (host or NVMe) are held all along.
  StaticMemoryPlan plan;
  if (c.params == Tier::Device) {
    for (auto &[op, w] : dev.weights)
      whole(Tier::Device, {Owner::Parameter, op}, weightName(op), w.held);
    // ZeRO-3 gathers a weight just before each op that reads it, into its
    // slots in turn.
    for (int64_t k = 0; k < dev.gatherSlots; ++k)
      scratch(Tier::Device, zeroGatherSlot(k), dev.gatherSlotBytes);
  } else {
    const lm::ChunkProblem &cp = p.problem;
    const int chunks = static_cast<int>(cp.chunkBytes.size());
    std::vector<double> home = chunkHomeBytes(dev, p.chunkOf, chunks);
    for (int chunk = 0; chunk < chunks; ++chunk)
      whole(c.params, {Owner::ChunkHome, nullptr, chunk},
            llvm::formatv("chunk {0} (home)", chunk).str(), home[chunk]);
    // From NVMe each fetch is staged through pinned host memory, two
    // buffers overlapping consecutive chunks.
    if (c.params == Tier::Nvme) {
      std::vector<int64_t> largest = cp.chunkBytes;
      llvm::sort(largest, std::greater<int64_t>());
      for (size_t k = 0; k < std::min<size_t>(2, largest.size()); ++k)
        scratch(Tier::Host, llvm::formatv("nvme_staging_{0}", k).str(),
                static_cast<double>(largest[k]));
    }
    // Device copies: a chunk's from where its fetch is issued (after the
    // last reads of the chunks it evicts, which are released there) until
    // the fetch that evicts it is issued in turn.
    std::vector<std::vector<int>> readsAt(total);
    for (int64_t k = 0; k < total; ++k)
      readsAt[k] = cp.steps[k % perIteration].reads;
    auto lastReadBefore = [&](int chunk, int64_t step) -> int64_t {
      for (int64_t k = step - 1; k >= 0; --k)
        if (llvm::is_contained(readsAt[k], chunk))
          return k;
      return -1;
    };
    std::vector<int64_t> since(chunks, -1), openedBy(chunks, 0);
    for (int chunk : p.plan.residentAtStart) {
      since[chunk] = 0;
      openedBy[chunk] = -1 - chunk;
    }
    // The period repeats: a chunk resident at its start is the copy left
    // at its end, so those two intervals are one allocation.
    auto close = [&](int chunk, int64_t end) {
      bool acrossBoundary = openedBy[chunk] < 0 || end == total;
      int64_t copy = add(Tier::Device, {Owner::ChunkCopy, nullptr, openedBy[chunk]},
                         llvm::formatv("chunk {0}", chunk).str(),
                         static_cast<double>(cp.chunkBytes[chunk]), since[chunk],
                         end, acrossBoundary ? chunk : -1);
      if (copy >= 0)
        chunkCopies[chunk].push_back(copy);
      since[chunk] = -1;
    };
    // Fetches start in issue order, each once its victims' last reads are
    // over, so a chunk's bytes are never claimed before they are free; the
    // victims stay live until then, as their loom.release ops say (a copy
    // freed at its last read could hand its bytes to a fetch issued before
    // that release).
    int64_t previousStart = 0;
    for (auto [index, f] : llvm::enumerate(p.plan.fetches)) {
      int64_t start = std::max<int64_t>(previousStart, lm::issueStep(p.plan, f));
      for (int v : f.evicts)
        start = std::max(start, lastReadBefore(v, f.forStep) + 1);
      start = std::min<int64_t>(start, f.forStep);
      for (int v : f.evicts)
        close(v, std::max(start, since[v]));
      since[f.chunk] = start;
      openedBy[f.chunk] = static_cast<int64_t>(index);
      previousStart = start;
    }
    // A dropped chunk is released before the step after its last read
    // (in the period's last iteration: a plan that drops has one).
    for (int chunk : p.plan.dropped)
      if (since[chunk] >= 0)
        close(chunk, total - perIteration + lm::lastReadStep(cp, chunk) + 1);
    for (auto [chunk, from] : llvm::enumerate(since))
      if (from >= 0)
        close(static_cast<int>(chunk), total);
  }

  // Gradients and optimizer state, per trainable weight: on the device
  // when its optimizer is; otherwise the gradient and (for resident 32-bit
  // parameters; a 16-bit one's master copy is state) a parameter copy in
  // host memory, the state in the optimizer's tier, and the device stages
  // gradients on their way down.
  // The CPU's update overlaps the next iteration, so all live throughout.
  // A step the runtime calls once per micro-batch sums each gradient over
  // the calls (`.grad_sum`, --loom-optimizer-step): on the device where the
  // device updates the weight (its gradient's buffer is the sum) or holds
  // its parameters (the sums go down once a step; they share one buffer,
  // `gradient_accumulation`, end to end in weight order), else in the
  // `sums` tier, where the host adds each call's gradient into it.
  const bool accumulates = p.accumulatesGradients();
  std::vector<std::pair<Operation *, double>> accumulatedOnDevice;
  if (training) {
    for (auto &[op, w] : dev.weights) {
      if (!w.trainable)
        continue;
      std::string name = weightName(op);
      if (c.optimizer == Tier::Device || c.deviceOptimizerWeights.contains(op)) {
        if (accumulates)
          whole(Tier::Device, {Owner::GradientSum, op}, name + " gradient sum",
                w.gradient());
        else
          whole(Tier::Device, {Owner::Gradient, op}, name + " gradient",
                w.gradient());
        whole(Tier::Device, {Owner::OptimizerState, op}, name + " state",
              w.state());
        continue;
      }
      if (c.params == Tier::Device) {
        whole(Tier::Host, {Owner::Gradient, op}, name + " gradient",
              w.offloaded());
        if (w.offloadedParameterCopy() > 0)
          whole(Tier::Host, {Owner::ParameterCopy, op},
                name + " parameter copy", w.offloadedParameterCopy());
        if (accumulates)
          accumulatedOnDevice.push_back({op, w.gradient()});
      } else if (!accumulates) {
        whole(Tier::Host, {Owner::Gradient, op}, name + " gradient",
              w.gradient());
      } else {
        whole(c.sums, {Owner::GradientSum, op}, name + " gradient sum",
              w.gradient());
      }
      whole(c.optimizer, {Owner::OptimizerState, op}, name + " state",
            w.state());
    }
    // Streamed over several micro-batches, each micro-batch's gradient
    // lands where the host adds it into its sum at once: held through the
    // next position only (within the call: the last backward's landing
    // ends with it), so landings share the arena. (The IR holds one
    // iteration: `singleIteration`.)
    if (c.params != Tier::Device && p.microBatches > 1 &&
        c.optimizer != Tier::Device)
      for (const LandedGradient &l : landedGradients(dev)) {
        Operation *op = (dev.weights.begin() + l.weight)->first;
        add(Tier::Host, {Owner::Gradient, op}, weightName(op) + " gradient",
            (dev.weights.begin() + l.weight)->second.offloaded(), l.at,
            std::min(l.at + 2, total));
      }
    // (Resident parameters' gradients over a step's calls leave as their
    // sums, once a step; streamed ones' leave every micro-batch.)
    if (c.optimizer != Tier::Device) {
      if (accumulates && c.params == Tier::Device) {
        scratch(Tier::Device, kGradientAccumulation, gradientStaging);
      } else {
        scratch(Tier::Device, "gradient_staging_0", gradientStaging / 2);
        scratch(Tier::Device, "gradient_staging_1", gradientStaging / 2);
      }
    }
    // A split of a streamed optimizer: the device's update reads some kept
    // weights from copies uploaded after the backward, one at a time
    // (updateReloads, as the IR writes them): the largest such copy, from
    // the iteration's last step on.
    if (c.params != Tier::Device && !c.deviceOptimizerWeights.empty()) {
      double largest = 0;
      for (size_t i :
           updateReloads(dev, c.deviceOptimizerWeights, p.chunkOf,
                         lm::onDeviceAtEveryStart(p.problem, p.plan)))
        largest = std::max(largest, (dev.weights.begin() + i)->second.held);
      add(Tier::Device, Owner{Owner::Scratch}, kUpdateReloadScratch.str(),
          largest, total - 1, total);
    }
  }

  // Activations (op results and the inputs): from their op to their last
  // forward read, and, kept, until the backward of their first reader (of
  // their own op, where that backward reads its result); offloaded, copied
  // down after their op and fetched back a step before the first backward
  // step that reads them (their last reader's backward, or a re-run of a
  // reader before it); recomputed (`step` re-run by the
  // backward), again from their op's re-run (in a pipelined program, the
  // backward step it precedes, or their last reader's if later) through
  // their own op's backward when some backward reads them, else through
  // the last re-run that reads them.
  // What some backward keeps, and which results their own op's backward
  // keeps (a softmax's, an exp's).
  DenseSet<Value> savedForBackward, savedByOwnBackward;
  std::vector<SmallVector<Value>> savedOf(steps.size()); // per step
  for (auto [k, s] : llvm::enumerate(steps)) {
    SmallVector<Value> &saved = savedOf[k];
    if (auto cost = dyn_cast<CostOpInterface>(s.op); cost && s.hasBackward)
      cost.getSavedForBackward(saved);
    for (Value &v : saved) {
      v = lookThroughShards(v);
      savedForBackward.insert(v);
      if (v.getDefiningOp() == s.op)
        savedByOwnBackward.insert(v);
    }
  }
  // Values the program gives no bytes (no buffer to read from).
  DenseSet<Value> noBytes;
  // `v` (result `result` of `op`, or function argument `result` when `op`
  // is null, or `received` from another stage) is written at its stage's
  // local step `def`, or before the stage's first step when it comes from
  // outside (`def` < 0).
  auto placeValue = [&](Value v, Operation *op, int64_t result, double bytes,
                        int64_t def, const OpStep *step = nullptr,
                        bool received = false) {
    if (bytes <= 0) {
      noBytes.insert(v);
      return;
    }
    // Readers through shard annotations and fetches, by the step of this
    // device that contains them, per stage: the first and last local step
    // reading it, and the last whose backward adds to its gradient.
    struct StageReads {
      int64_t first = INT64_MAX, last = -1, lastGradient = -1;
      /// The last whose backward reads it (the first of those to run).
      int64_t lastSaver = -1;
    };
    std::map<int64_t, StageReads> byStage;
    // Sequential: the first and the last re-run reading it.
    int64_t firstRerunRead = INT64_MAX, lastRerunRead = -1;
    bool returned = false;
    forEachReader(v, [&](Operation *user) {
      // A result of the step is handed back when the step ends: after the
      // backward, in training (--loom-autodiff returns it with the
      // gradients).
      returned |= isa<func::ReturnOp>(user);
      Operation *u = user;
      while (u && !localIndex.count(u))
        u = u->getParentOp();
      if (!u)
        return;
      const int64_t k = localIndex.lookup(u);
      StageReads &r = byStage[stageOf.lookup(u)];
      r.first = std::min(r.first, k);
      r.last = std::max(r.last, k);
      const OpStep *step = stepOf.lookup(u);
      if (step->hasBackward)
        r.lastGradient = std::max(r.lastGradient, k);
      if (llvm::is_contained(savedOf[step - steps.data()],
                             lookThroughShards(v)))
        r.lastSaver = std::max(r.lastSaver, k);
      if (int64_t rerun = sequential ? layout.rerunAt[k] : -1; rerun >= 0) {
        firstRerunRead = std::min(firstRerunRead, rerun);
        lastRerunRead = std::max(lastRerunRead, rerun);
      }
    });
    // Its op's stage; an input's or a received value's, the first stage
    // here that reads it.
    if (!op && byStage.empty())
      return; // an input no step here reads
    const int64_t stage = op ? stageOf.lookup(op) : byStage.begin()->first;
    const StageReads own = byStage.count(stage) ? byStage[stage] : StageReads{};
    int64_t lastUse = std::max<int64_t>({def, 0, own.last});
    const int64_t firstUser = own.first, lastGradientReader = own.lastGradient;
    // Later stages of this device reading it (interleaved schedules): the
    // value stays a value there (loom-split-stages), so its buffer lives
    // through their reads of the same micro-batch, and their backward
    // writes its gradient.
    SmallVector<std::pair<int64_t, StageReads>> laterStages;
    for (auto &[s, r] : byStage)
      if (s != stage)
        laterStages.push_back({s, r});
    // Read by a later stage here, or sent to another device's: either way
    // its gradient comes back in the backward.
    const bool sentAway = dev.sentValues.contains(v);
    const bool sentOn = !laterStages.empty() || sentAway;
    // (Added to deviceCopiesOf after the loop below, which holds a
    // reference into it.)
    SmallVector<std::pair<TaskKey, int64_t>> laterCopies;
    def = std::max<int64_t>(def, 0);
    const int64_t size = stageSize[stage];
    // As the estimator decides: kept for the backward, else re-run by it
    // (recomputed ops), else dead after the forward's last read.
    const bool kept =
        training && firstUser < size && programs.keptActivations.contains(v);
    const bool recomputed = training && !kept && step && step->rerunAt >= 0;
    // The last backward step reading it: its first reader's, or its own
    // op's where that backward keeps its result (a softmax's, an exp's).
    const int64_t lastBackwardRead = savedByOwnBackward.contains(v) ? def : firstUser;
    // Its gradient: written by the backward of its last reader that has
    // one (a later stage's reader sends it back when this stage's backward
    // starts), read by its own op's backward, or sent back to the stage a
    // received value came from; the function's inputs need none.
    const bool hasGradient =
        training && (lastGradientReader >= 0 || sentOn) &&
        (step ? step->hasBackward : !sequential && isa<OpResult>(v));
    for (auto [key, at] : taskAt) {
      auto [F, B] = at;
      if (key.first != stage || F < 0 || (training && B < 0))
        continue;
      // (A sequential program's offsets are its first iteration's.)
      auto owner = [&](Owner::Kind kind) {
        if (sequential)
          return key.second == 0 ? Owner{kind, op, result}
                                 : Owner{Owner::Other};
        if (!received)
          return Owner{kind, op, result, key.second};
        auto r = cast<OpResult>(v);
        return Owner{kind, r.getOwner(), r.getResultNumber(), key.second, true};
      };
      auto forward = [&](int64_t k) { return forwardAt(F, k); };
      auto backward = [&](int64_t k) { return backwardAt(F, B, size, k); };
      SmallVector<int64_t, 2> &copies = deviceCopiesOf[{v, key}];
      auto onDevice = [&](Owner::Kind kind, StringRef name, int64_t start,
                          int64_t end) -> int64_t {
        int64_t index =
            add(Tier::Device, owner(kind), name.str(), bytes, start, end);
        if (index >= 0)
          copies.push_back(index);
        return index;
      };
      int64_t end = forward(lastUse) + 1;
      // Through the later stages' reads of this micro-batch: their forward,
      // and, what a backward reads, their backward; the gradient from the
      // first of their backward steps that writes it.
      int64_t gradientFrom =
          lastGradientReader >= 0 ? backward(lastGradientReader) : INT64_MAX;
      SmallVector<TaskKey> laterTasks;
      for (auto &[later, r] : laterStages) {
        auto task = taskAt.find({later, key.second});
        if (task == taskAt.end() || task->second.first < 0)
          continue;
        auto [F2, B2] = task->second;
        const int64_t size2 = stageSize[later];
        laterTasks.push_back(task->first);
        end = std::max(end, F2 + r.last + 1);
        if (!training || B2 < 0)
          continue;
        if (programs.keptActivations.contains(v) ||
            savedForBackward.contains(v))
          end = std::max(end, B2 + size2 - 1 - r.first + 1);
        if (r.lastGradient >= 0)
          gradientFrom =
              std::min(gradientFrom, B2 + size2 - 1 - r.lastGradient);
      }
      // (A later stage on another device sends it back when this stage's
      // backward starts.)
      if (gradientFrom == INT64_MAX || sentAway)
        gradientFrom = std::min(gradientFrom, backward(size - 1));
      if (returned) {
        int64_t handedBack = training
                                 ? (sequential ? F + perIteration : B + size)
                                 : forward(size - 1) + 1;
        // A pipelined training call returns its results when it ends:
        // after the backward of every stage its device runs for this
        // micro-batch (its own stage's alone on a device of one stage;
        // several under an interleaved schedule). taskAt holds this
        // device's tasks, by (stage, micro-batch).
        if (training && !sequential)
          for (auto &[other, otherAt] : taskAt)
            if (other.second == key.second && otherAt.second >= 0)
              handedBack =
                  std::max(handedBack, otherAt.second + stageSize[other.first]);
        end = std::max(end, handedBack);
      }
      if (kept && programs.offloadedActivations.contains(v)) {
        end = std::max(end, forward(def) + 2);
        int64_t firstRead = backward(lastUse);
        if (firstRerunRead != INT64_MAX)
          firstRead = std::min(firstRead, F + firstRerunRead);
        const int64_t back = std::max(end, firstRead - 1);
        // The backward reloads it where a step first reads it
        // (--loom-autodiff), which may be after `back`: the host copy is
        // held until then.
        int64_t reloaded = own.lastSaver >= 0 ? backward(own.lastSaver)
                           : savedByOwnBackward.contains(v) ? backward(def)
                                                            : INT64_MAX;
        if (firstRerunRead != INT64_MAX)
          reloaded = std::min(reloaded, F + firstRerunRead);
        add(Tier::Host, owner(Owner::HostCopy), "offloaded activation", bytes,
            forward(def) + 1,
            std::max(back, reloaded == INT64_MAX ? back : reloaded) + 1);
        onDevice(Owner::Backward, "offloaded activation (fetched back)", back,
                 backward(lastBackwardRead) + 1);
      } else if (kept || (training && !recomputed && lastBackwardRead < size &&
                          savedForBackward.contains(v))) {
        // (What a backward reads that is no activation, a weight's
        // transpose, is kept as well.)
        end = std::max(end, backward(lastBackwardRead) + 1);
      }
      int64_t activation =
          onDevice(Owner::Forward, "activation", forward(def), end);
      for (TaskKey later : laterTasks)
        if (activation >= 0)
          laterCopies.push_back({later, activation});
      if (hasGradient)
        add(Tier::Device, owner(Owner::ResultGradient), "activation gradient",
            bytes, gradientFrom, backward(def) + 1);
      if (recomputed) {
        int64_t rerun;
        if (sequential) {
          rerun = F + layout.rerunAt[step - steps.data()];
        } else {
          Operation *group = steps[step->rerunAt].op;
          rerun = backward(std::max(
              lastUse, localIndex.lookup(stageOf.lookup(group) == stage ? group : op)));
        }
        // Unless a backward reads it, until the last re-run that does.
        const int64_t until =
            std::max(rerun, lastRerunRead >= 0 ? F + lastRerunRead : -1) + 1;
        onDevice(Owner::Backward, "recomputed activation", rerun,
                 savedForBackward.contains(v) ? backward(def) + 1 : until);
      }
    }
    for (auto [task, buffer] : laterCopies)
      deviceCopiesOf[{v, task}].push_back(buffer);
  };
  // The function's inputs arrive before the first step reading them (every
  // pipeline device takes them all, loom-split-stages), and a later
  // stage's values from the device that computes them.
  for (auto [a, arg] : llvm::enumerate(func.getArguments()))
    if (a < programs.argumentBytes.size())
      placeValue(arg, nullptr, static_cast<int64_t>(a),
                 programs.argumentBytes[a], -1);
  if (!sequential) // one pseudo-stage: every value is its own step's
    for (auto [v, bytes] : dev.receivedBytes)
      placeValue(v, nullptr, 0, bytes, -1, nullptr, /*received=*/true);
  for (const OpStep &s : steps)
    for (auto [r, v] : llvm::enumerate(s.op->getResults()))
      placeValue(v, s.op, static_cast<int64_t>(r),
                 r < s.resultBytes.size() ? s.resultBytes[r] : 0,
                 localIndex.lookup(s.op), &s);

  // The replay's reads on the device, from the program rather than from
  // the lifetimes above: each step's forward and re-run read its operands,
  // its backward what it saves for the backward, and each of them its
  // weights' chunks when parameters stream.
  std::vector<lm::BufferRead> deviceReads;
  auto describe = [](Value v) {
    if (auto r = dyn_cast<OpResult>(v))
      return llvm::formatv("result {0} of '{1}'", r.getResultNumber(),
                           r.getOwner()->getName())
          .str();
    return llvm::formatv("argument {0}", cast<BlockArgument>(v).getArgNumber()).str();
  };
  // The program's steps, on every pipeline device.
  DenseSet<Operation *> isStep;
  for (const DeviceProgram &other : programs.devices)
    for (const OpStep &s : other.steps)
      isStep.insert(s.op);
  auto readsOfStep = [&](int64_t k, IterationLayout::Kind kind, int64_t position,
                         TaskKey task) {
    const OpStep &s = steps[k];
    StringRef phase = kind == IterationLayout::Kind::Forward  ? "forward"
                      : kind == IterationLayout::Kind::Rerun ? "re-run"
                                                              : "backward";
    auto read = [&](ArrayRef<int64_t> buffers, const std::string &what) {
      if (!buffers.empty())
        deviceReads.push_back(
            {position, {buffers.begin(), buffers.end()},
             llvm::formatv("the {0} of '{1}' (step {2}) reads {3}", phase,
                           s.op->getName(), k, what)
                 .str()});
    };
    SmallVector<Value> values;
    if (kind == IterationLayout::Kind::Backward)
      values = savedOf[k];
    else
      for (Value operand : s.op->getOperands())
        values.push_back(lookThroughShards(operand));
    for (Value v : values) {
      if (auto found = deviceCopiesOf.find({v, task});
          found != deviceCopiesOf.end()) {
        read(found->second, describe(v));
        continue;
      }
      // The plan buffers the function's arguments and the results of the
      // program's steps (here, or received from another device), those of
      // no bytes aside; a read of one without a buffer is a read the plan
      // missed, which the replay reports ("it has no buffer"). Weights,
      // constants and what other ops make are no steps (the estimator
      // costs neither) and live outside these buffers.
      Operation *def = v.getDefiningOp();
      const bool buffered =
          def ? isStep.contains(def) : v.getParentRegion() == &func.getBody();
      if (buffered && !noBytes.contains(v))
        deviceReads.push_back(
            {position,
             {},
             llvm::formatv("the {0} of '{1}' (step {2}) reads {3}", phase,
                           s.op->getName(), k, describe(v))
                 .str()});
    }
    if (c.params != Tier::Device)
      for (WeightOp w : s.weights)
        if (auto it = dev.weights.find(w); it != dev.weights.end()) {
          int chunk = p.chunkOf[it - dev.weights.begin()];
          read(chunkCopies[chunk], llvm::formatv("'{0}' in chunk {1}", w.getName(), chunk));
        }
  };
  if (sequential) {
    for (int64_t it = 0; it < iterations; ++it)
      for (auto [j, at] : llvm::enumerate(layout.positions))
        readsOfStep(at.step, at.kind, taskAt[{0, it}].first + static_cast<int64_t>(j),
                    {0, it});
  } else {
    for (auto [key, at] : taskAt) {
      auto [F, B] = at;
      for (const OpStep &s : steps) {
        if (stageOf.lookup(s.op) != key.first)
          continue;
        int64_t k = &s - steps.data(), local = localIndex.lookup(s.op);
        if (F >= 0)
          readsOfStep(k, IterationLayout::Kind::Forward, F + local, key);
        if (training && B >= 0 && s.hasBackward)
          readsOfStep(k, IterationLayout::Kind::Backward,
                      B + stageSize[key.first] - 1 - local, key);
      }
    }
  }

  // Offsets per tier, each checked on its own, then replayed against the
  // tier's capacity.
  std::vector<int64_t> chunkHome(p.problem.chunkBytes.size(), -1);
  if (c.params != Tier::Device) {
    plan.fetchOffsets.assign(p.plan.fetches.size(), -1);
    plan.carriedOffsets.assign(p.problem.chunkBytes.size(), -1);
  }
  plan.arguments.resize(func.getNumArguments());
  if (!sequential)
    plan.microBatchArguments.resize(func.getNumArguments());
  // An op result's slot, or a function argument's (one slot each); in a
  // pipelined program, its micro-batch's.
  auto offsetsOf = [&](const Owner &owner) -> ResultOffsets & {
    if (sequential)
      return owner.op ? plan.results[owner.op] : plan.arguments[owner.index];
    std::vector<ResultOffsets> &byMicroBatch =
        owner.received ? plan.receivedResults[owner.op]
        : owner.op     ? plan.microBatchResults[owner.op]
                       : plan.microBatchArguments[owner.index];
    if (byMicroBatch.size() <= static_cast<size_t>(owner.microBatch))
      byMicroBatch.resize(
          std::max<int64_t>(p.microBatches, owner.microBatch + 1));
    return byMicroBatch[owner.microBatch];
  };
  auto resultSlot = [&](Owner owner, Owner::Kind kind) -> int64_t & {
    ResultOffsets &offsets = offsetsOf(owner);
    SmallVector<int64_t> &slots = kind == Owner::Forward    ? offsets.forward
                                  : kind == Owner::HostCopy ? offsets.host
                                  : kind == Owner::ResultGradient
                                      ? offsets.gradient
                                      : offsets.backward;
    if (slots.empty())
      slots.assign(owner.op ? owner.op->getNumResults() : 1, -1);
    return slots[owner.op ? owner.index : 0];
  };
  for (Tier t : {Tier::Device, Tier::Host, Tier::Nvme}) {
    const TierBuffers &tb = tiers[static_cast<int>(t)];
    lm::ArenaPlan arena = lm::assignOffsets(tb.buffers);
    if (llvm::Error err = lm::checkArena(tb.buffers, arena))
      return func.emitOpError("the ")
             << tierName(t) << " arena failed its check: "
             << llvm::toString(std::move(err));
    TierArena &out = plan.arenas[static_cast<int>(t)];
    out.bytes = arena.arenaBytes;
    out.liveBound = arena.liveBound;
    out.buffers = static_cast<int64_t>(tb.buffers.size());
    // Beside the device arena: the communication buffers.
    out.reserved = t == Tier::Device ? static_cast<int64_t>(dev.commBytes) : 0;
    // (Capped below int64_t's range: a preset may give a tier no limit.)
    llvm::Expected<lm::TierReplay> replay = lm::replayTier(
        tb.buffers, arena, t == Tier::Device ? deviceReads : std::vector<lm::BufferRead>{},
        out.reserved, static_cast<int64_t>(std::min(p.capacity(t), 9e18)));
    if (!replay)
      return func.emitOpError("the ")
             << tierName(t) << " arena failed its replay: "
             << llvm::toString(replay.takeError());
    out.replayPeak = replay->peakBytes;
    out.reads = replay->reads;
    out.overflow = replay->overflow;
    for (auto [k, owner] : llvm::enumerate(tb.owners)) {
      int64_t offset = arena.offsets[k];
      switch (owner.kind) {
      case Owner::Scratch:
        out.scratch.push_back({tb.buffers[k].name, offset, tb.buffers[k].bytes});
        break;
      case Owner::Parameter:
      case Owner::ParameterCopy:
      case Owner::Gradient:
      case Owner::GradientSum:
      case Owner::OptimizerState:
        plan.weights[owner.op].*weightField(owner.kind) = offset;
        break;
      case Owner::ChunkHome:
        chunkHome[owner.index] = offset;
        break;
      case Owner::ChunkCopy:
        if (owner.index >= 0)
          plan.fetchOffsets[owner.index] = offset;
        else
          plan.carriedOffsets[-1 - owner.index] = offset;
        break;
      case Owner::Forward:
      case Owner::HostCopy:
      case Owner::Backward:
      case Owner::ResultGradient:
        resultSlot(owner, owner.kind) = offset;
        break;
      case Owner::Other:
        break;
      }
    }
  }
  // The device's sums of the weights it does not update, end to end.
  if (!accumulatedOnDevice.empty()) {
    const std::vector<TierArena::Scratch> &scratch =
        plan.arena(Tier::Device).scratch;
    auto at = llvm::find_if(scratch, [](const TierArena::Scratch &x) {
      return x.id == kGradientAccumulation;
    });
    int64_t offset = at == scratch.end() ? -1 : at->offset;
    for (auto [op, bytes] : accumulatedOnDevice) {
      if (offset < 0)
        break;
      plan.weights[op].sum = offset;
      offset += static_cast<int64_t>(bytes);
    }
  }
  // A streamed weight sits in its chunk, home and device copies alike, in
  // first-use order (groupIntoChunks packs consecutive weights): the device
  // copy holds whole weights, the home copy what this device holds of them
  // (streamed in ZeRO-3 shards, its shard of each, chunkHomeBytes).
  if (c.params != Tier::Device) {
    std::vector<int64_t> filled(chunkHome.size(), 0),
        homeFilled(chunkHome.size(), 0);
    for (auto [i, entry] : llvm::enumerate(dev.weights)) {
      int chunk = p.chunkOf[i];
      plan.offsetInChunk.push_back(filled[chunk]);
      plan.weights[entry.first].parameter =
          chunkHome[chunk] + homeFilled[chunk];
      filled[chunk] += static_cast<int64_t>(entry.second.bytes);
      homeFilled[chunk] += static_cast<int64_t>(entry.second.held);
    }
  }
  return plan;
}

void mlir::loom::placement::removeStaticMemoryPlan(func::FuncOp func) {
  func.walk([](Operation *op) {
    for (StringRef name :
         {kOffsetsAttr, kPipelineOffsetsAttr, kReceivedOffsetsAttr})
      op->removeAttr(name);
  });
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    for (StringRef name :
         {kOffsetsAttr, kPipelineOffsetsAttr, kReceivedOffsetsAttr})
      func.removeArgAttr(a, name);
}

/// `{backward, forward, gradient, host}` of a value's offsets, by micro-batch
/// then by result (`results` per micro-batch), those with any buffer, beside
/// `first`; null where it has none.
static DictionaryAttr offsetsAttr(Builder &b,
                                  ArrayRef<ResultOffsets> byMicroBatch,
                                  size_t results,
                                  ArrayRef<NamedAttribute> first = {}) {
  SmallVector<NamedAttribute> entries(first.begin(), first.end());
  auto put = [&](StringRef key, SmallVector<int64_t> ResultOffsets::*field) {
    SmallVector<int64_t> slots(byMicroBatch.size() * results, -1);
    bool any = false;
    for (auto [k, offsets] : llvm::enumerate(byMicroBatch))
      for (auto [r, at] : llvm::enumerate(offsets.*field))
        if (r < results && at >= 0) {
          slots[k * results + r] = at;
          any = true;
        }
    if (any)
      entries.push_back(b.getNamedAttr(key, b.getDenseI64ArrayAttr(slots)));
  };
  put("backward", &ResultOffsets::backward);
  put("forward", &ResultOffsets::forward);
  put("gradient", &ResultOffsets::gradient);
  put("host", &ResultOffsets::host);
  if (entries.size() == first.size())
    return nullptr;
  return b.getDictionaryAttr(entries);
}

void mlir::loom::placement::writeResultOffsets(func::FuncOp func,
                                               const StaticMemoryPlan &plan) {
  Builder b(func.getContext());
  for (auto [a, offsets] : llvm::enumerate(plan.arguments))
    if (DictionaryAttr d = offsetsAttr(b, offsets, 1);
        d && a < func.getNumArguments())
      func.setArgAttr(static_cast<unsigned>(a), kOffsetsAttr, d);
  for (auto &[op, offsets] : plan.results)
    if (DictionaryAttr d = offsetsAttr(b, offsets, op->getNumResults()))
      op->setAttr(kOffsetsAttr, d);
}

/// The `device = d` entry of a pipelined program's offsets.
static NamedAttribute onDevice(Builder &b, size_t d) {
  return b.getNamedAttr("device", b.getI64IntegerAttr(static_cast<int64_t>(d)));
}

void mlir::loom::placement::writePipelineOffsets(
    func::FuncOp func, ArrayRef<StaticMemoryPlan> plans) {
  Builder b(func.getContext());
  // Each op's (or argument's) offsets on the device that computes it (the
  // first that reads an argument), then on the devices that receive it
  // (each device takes every argument).
  llvm::MapVector<Operation *, SmallVector<Attribute>> received;
  std::vector<SmallVector<Attribute>> arguments(func.getNumArguments());
  for (auto [d, plan] : llvm::enumerate(plans)) {
    for (auto [a, offsets] : llvm::enumerate(plan.microBatchArguments))
      if (DictionaryAttr at = offsetsAttr(b, offsets, 1, onDevice(b, d));
          at && a < arguments.size())
        arguments[a].push_back(at);
    for (auto &[op, offsets] : plan.microBatchResults)
      if (DictionaryAttr at =
              offsetsAttr(b, offsets, op->getNumResults(), onDevice(b, d)))
        op->setAttr(kPipelineOffsetsAttr, at);
    for (auto &[op, offsets] : plan.receivedResults)
      if (DictionaryAttr at =
              offsetsAttr(b, offsets, op->getNumResults(), onDevice(b, d)))
        received[op].push_back(at);
  }
  for (auto &[op, list] : received)
    op->setAttr(kReceivedOffsetsAttr, b.getArrayAttr(list));
  for (auto [a, list] : llvm::enumerate(arguments)) {
    if (list.empty())
      continue;
    func.setArgAttr(static_cast<unsigned>(a), kPipelineOffsetsAttr,
                    list.front());
    if (list.size() > 1)
      func.setArgAttr(static_cast<unsigned>(a), kReceivedOffsetsAttr,
                      b.getArrayAttr(ArrayRef(list).drop_front()));
  }
}

ArrayAttr mlir::loom::placement::pipelineWeightOffsets(
    Builder &b, ArrayRef<StaticMemoryPlan> plans, Operation *weight) {
  SmallVector<Attribute> onDevices;
  for (auto [d, plan] : llvm::enumerate(plans))
    if (auto at = plan.weights.find(weight); at != plan.weights.end()) {
      SmallVector<NamedAttribute> entries = {onDevice(b, d)};
      appendWeightOffsets(b, at->second, entries);
      onDevices.push_back(b.getDictionaryAttr(entries));
    }
  return onDevices.empty() ? ArrayAttr() : b.getArrayAttr(onDevices);
}

void mlir::loom::placement::appendWeightOffsets(
    Builder &b, const WeightOffsets &at,
    SmallVectorImpl<NamedAttribute> &attrs) {
  auto offset = [&](StringRef key, int64_t value) {
    if (value >= 0)
      attrs.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(value)));
  };
  offset("offset", at.parameter);
  offset("copy_offset", at.parameterCopy);
  offset("gradient_offset", at.gradient);
  offset("optimizer_offset", at.optimizer);
  offset("sum_offset", at.sum);
}

DictionaryAttr mlir::loom::placement::arenasAttr(Builder &b,
                                                 const StaticMemoryPlan &plan) {
  SmallVector<NamedAttribute> tiers;
  for (Tier t : {Tier::Device, Tier::Host, Tier::Nvme}) {
    const TierArena &a = plan.arena(t);
    if (a.buffers == 0)
      continue;
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("bytes", b.getI64IntegerAttr(a.bytes)),
        b.getNamedAttr("live_bound", b.getI64IntegerAttr(a.liveBound))};
    SmallVector<NamedAttribute> sizes;
    for (const TierArena::Scratch &x : a.scratch) {
      entries.push_back(b.getNamedAttr(x.id, b.getI64IntegerAttr(x.offset)));
      sizes.push_back(b.getNamedAttr(x.id, b.getI64IntegerAttr(x.bytes)));
    }
    if (!sizes.empty())
      entries.push_back(b.getNamedAttr(kScratchBytesKey, b.getDictionaryAttr(sizes)));
    tiers.push_back(b.getNamedAttr(tierName(t), b.getDictionaryAttr(entries)));
  }
  return b.getDictionaryAttr(tiers);
}
