//===- Movement.cpp - a chunk schedule as fetch and release ops -----------===//

#include "loom/Memory/Movement.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::loom;
namespace lm = ::loom::memory;

void mlir::loom::removeMovement(func::FuncOp func) {
  SmallVector<Operation *> movement;
  func.walk([&](Operation *op) {
    if (isa<FetchOp, ReleaseOp>(op))
      movement.push_back(op);
    op->removeAttr(kBackwardMovementAttr);
    op->removeAttr(kRerunMovementAttr);
  });
  // Releases first: they read the fetches.
  for (Operation *op : movement)
    if (isa<ReleaseOp>(op))
      op->erase();
  for (Operation *op : movement)
    if (auto fetch = dyn_cast<FetchOp>(op)) {
      fetch.getResult().replaceAllUsesWith(fetch.getSource());
      fetch->erase();
    }
  removeZeroShards(func);
}

LogicalResult mlir::loom::writeMovement(func::FuncOp func,
                                        const MovementSchedule &s) {
  const lm::ChunkProblem &problem = *s.problem;
  const lm::ChunkPlan &plan = *s.plan;
  const size_t forward = s.forwardOps.size();
  if (forward == 0)
    return success();
  Block *body = s.forwardOps.front()->getBlock();
  for (Operation *op : s.forwardOps)
    if (op->getBlock() != body)
      return op->emitOpError("is a streamed step outside the function's body "
                             "block; fetches cannot be placed around it");
  std::vector<SmallVector<WeightOp>> weightsOf(problem.chunkBytes.size());
  for (auto [i, op] : llvm::enumerate(s.weights))
    weightsOf[s.chunkOf[i]].push_back(cast<WeightOp>(op));
  DenseSet<Operation *> streamed(s.weights.begin(), s.weights.end());

  // Each weight's live device copy while the forward is walked.
  DenseMap<Operation *, Value> live;
  OpBuilder b(func.getContext());
  // A weight op (a pure source) moves to just before its first fetch,
  // unless something before that reads it, so that the IR shows each weight
  // where it starts to move, and placing again writes the same module. A
  // weight stored in ZeRO-3 shards moves with its stored annotation (and
  // that annotation's sharding), which the fetch copies.
  DenseSet<Operation *> fetchedOnce;
  auto readBefore = [&](Value v, Operation *except, Operation *before) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return user != except &&
             (user->getBlock() != body || user->isBeforeInBlock(before));
    });
  };
  auto hoist = [&](WeightOp w, Operation *before) {
    if (!fetchedOnce.insert(w).second || w->getBlock() != body)
      return;
    shard::ShardOp stored = zeroStoredShard(w);
    Operation *layout = stored ? stored.getSharding().getDefiningOp() : nullptr;
    // The stored layout goes along when only the annotation reads it.
    bool moveLayout = layout && layout->getBlock() == body && layout->hasOneUse();
    if (readBefore(w.getResult(), stored, before) ||
        (stored && (stored->getBlock() != body ||
                    readBefore(stored.getResult(), nullptr, before))) ||
        (layout && !moveLayout && layout->getBlock() == body &&
         !layout->isBeforeInBlock(before)))
      return;
    w->moveBefore(before);
    if (moveLayout)
      layout->moveBefore(before);
    if (stored)
      stored->moveBefore(before);
  };
  DenseMap<Operation *, int64_t> offsetInChunk;
  for (auto [i, op] : llvm::enumerate(s.weights))
    if (i < s.offsetInChunk.size())
      offsetInChunk[op] = s.offsetInChunk[i];
  // `copyAt`: the chunk copy's device offset, -1 when none was planned.
  auto fetchChunk = [&](int chunk, Operation *before, bool carried,
                        int64_t copyAt) {
    for (WeightOp w : weightsOf[chunk]) {
      hoist(w, before);
      b.setInsertionPoint(before);
      IntegerAttr at;
      if (copyAt >= 0)
        at = b.getI64IntegerAttr(copyAt + offsetInChunk.lookup(w));
      live[w] = createFetch(b, w.getLoc(), fetchedValue(w), chunk, carried, at);
    }
  };
  auto planned = [](const std::vector<int64_t> &offsets, size_t i) {
    return i < offsets.size() ? offsets[i] : int64_t(-1);
  };
  auto releaseChunk = [&](int chunk, Operation *before) {
    for (WeightOp w : weightsOf[chunk])
      if (Value fetched = live.lookup(w)) {
        b.setInsertionPoint(before);
        ReleaseOp::create(b, w.getLoc(), fetched);
        live.erase(w);
      }
  };

  // Where a step's operand reads a streamed weight, and which: the operand
  // itself when it is the weight; else the first shard annotation of the
  // chain it reads through (a ZeRO-3 reader's gather, whose source is the
  // weight's stored shard: what a fetch copies). That operand reads the
  // fetched copy instead. Null when the operand reads no streamed weight.
  // `chain` gets the annotations read through, from the operand's up.
  auto streamedRead = [&](OpOperand &operand, SmallVectorImpl<Operation *> &chain)
      -> std::pair<OpOperand *, WeightOp> {
    OpOperand *use = &operand;
    while (true) {
      Value v = use->get();
      auto w = v.getDefiningOp<WeightOp>();
      auto s = v.getDefiningOp<shard::ShardOp>();
      if (FetchOp f = fetchOf(v))
        w = lookThroughShards(f.getSource()).getDefiningOp<WeightOp>();
      else if (s && !s.getAnnotateForUsers() && isZeroShard(s))
        w = s.getSrc().getDefiningOp<WeightOp>();
      if (w)
        return {use, streamed.contains(w) ? w : WeightOp()};
      if (!s)
        return {nullptr, WeightOp()};
      chain.push_back(s);
      use = &s.getSrcMutable();
    }
  };

  // The fetches of the first iteration's steps, in issue order, each issued
  // before step `position`: after the last step that ends before the fetch
  // starts (the copy overlaps the steps from there to its reader). In
  // training the steps are the forward, then the backward in reverse.
  const size_t steps = problem.steps.size();
  if (steps != forward + s.backwardSteps.size())
    return func.emitOpError("has ")
           << forward << " streamed forward steps and " << s.backwardSteps.size()
           << " backward ones, but the chunk schedule has " << steps
           << " steps per iteration";
  // A chunk the plan drops is released before the step after its last
  // read (an event with no fetch).
  struct Event {
    size_t position;
    const lm::Fetch *fetch;
    size_t index; // in the plan's fetches
    int dropped = -1;
  };
  SmallVector<Event> events;
  for (auto [index, f] : llvm::enumerate(plan.fetches)) {
    if (f.forStep < 0 || static_cast<size_t>(f.forStep) >= steps)
      break;
    events.push_back({static_cast<size_t>(lm::issueStep(plan, f)), &f, index});
  }
  for (int chunk : plan.dropped) {
    int last = lm::lastReadStep(problem, chunk);
    if (last < 0 || static_cast<size_t>(last) + 1 >= steps)
      return func.emitOpError("has a chunk schedule that drops chunk ")
             << chunk << ", which no step before the last reads";
    events.push_back({static_cast<size_t>(last) + 1, nullptr, 0, chunk});
  }
  // (Fetches keep their issue order; a drop goes before the fetches at
  // its position: its bytes are free from there.)
  llvm::stable_sort(events, [](const Event &a, const Event &b) {
    return a.position != b.position
               ? a.position < b.position
               : (a.fetch == nullptr) > (b.fetch == nullptr);
  });
  std::vector<int> residentAtStart = plan.residentAtStart;
  llvm::sort(residentAtStart);
  for (int chunk : residentAtStart)
    fetchChunk(chunk, s.forwardOps.front(), /*carried=*/true,
               planned(s.carriedOffsets, chunk));
  size_t next = 0;
  for (auto [step, stepOp] : llvm::enumerate(s.forwardOps)) {
    // Every chunk evicted by a fetch issued here is released before any of
    // those fetches: their last reads are all over, and the static memory
    // plan reuses their bytes from this step on.
    size_t last = next;
    while (last < events.size() && events[last].position == step)
      ++last;
    for (size_t e = next; e < last; ++e) {
      if (!events[e].fetch) {
        releaseChunk(events[e].dropped, stepOp);
        continue;
      }
      for (int victim : events[e].fetch->evicts)
        releaseChunk(victim, stepOp);
    }
    for (; next < last; ++next)
      if (events[next].fetch)
        fetchChunk(events[next].fetch->chunk, stepOp, /*carried=*/false,
                   planned(s.fetchOffsets, events[next].index));
    for (OpOperand &operand : stepOp->getOpOperands()) {
      SmallVector<Operation *> chain;
      auto [read, w] = streamedRead(operand, chain);
      if (!w)
        continue;
      Value fetched = live.lookup(w);
      if (!fetched)
        return stepOp->emitOpError("reads streamed weight '")
               << w.getName() << "', which the chunk schedule has not fetched here";
      if (fetchOf(read->get()) && read->get() != fetched)
        return stepOp->emitOpError("reads streamed weight '")
               << w.getName()
               << "' through annotations an earlier step also reads, which hold "
                  "another fetched copy of it";
      read->set(fetched);
      // The reader's annotations (a ZeRO-3 gather just before it) follow a
      // fetch issued here.
      if (!chain.empty() && chain.back()->isBeforeInBlock(fetched.getDefiningOp()))
        for (Operation *annotation : llvm::reverse(chain))
          annotation->moveBefore(stepOp);
    }
  }
  // What the backward issues waits, on the forward op whose backward step
  // it precedes, for --loom-autodiff to write that step.
  auto anchorOf = [&](size_t position) {
    const BackwardStep &step = s.backwardSteps[position - forward];
    return std::make_pair(step.op, step.rerun ? kRerunMovementAttr : kBackwardMovementAttr);
  };
  for (size_t e = next; e < events.size();) {
    size_t position = events[e].position;
    if (position < forward || anchorOf(position).first->hasAttr(anchorOf(position).second))
      return func.emitOpError("has a chunk schedule whose fetches are not in "
                              "issue order");
    SmallVector<int64_t> release, fetch, at;
    for (; e < events.size() && events[e].position == position; ++e) {
      if (!events[e].fetch) {
        release.push_back(events[e].dropped);
        continue;
      }
      llvm::append_range(release, events[e].fetch->evicts);
      fetch.push_back(events[e].fetch->chunk);
      int64_t offset = planned(s.fetchOffsets, events[e].index);
      if (offset >= 0)
        at.push_back(offset);
    }
    if (!at.empty() && at.size() != fetch.size())
      return func.emitOpError("has a static memory plan without an offset for "
                              "every fetch of the backward");
    auto [stepOp, attr] = anchorOf(position);
    stepOp->setAttr(attr,
                    b.getDictionaryAttr({b.getNamedAttr("release", b.getDenseI64ArrayAttr(release)),
                                         b.getNamedAttr("fetch", b.getDenseI64ArrayAttr(fetch)),
                                         b.getNamedAttr("at", b.getDenseI64ArrayAttr(at))}));
  }
  return success();
}

namespace {
/// `v` without the shard annotations around it.
Value unannotated(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v;
}

bool isScalar(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 0;
}

/// What `v` is, for an error.
std::string describe(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto w = dyn_cast_or_null<WeightOp>(def))
    return ("weight '" + w.getName() + "'").str();
  if (auto f = dyn_cast_or_null<FetchOp>(def))
    if (auto w = f.getSource().getDefiningOp<WeightOp>())
      return ("the device copy of weight '" + w.getName() + "'").str();
  if (!def)
    return "a function argument";
  return ("the result of '" + def->getName().getStringRef() + "'").str();
}
} // namespace

LogicalResult mlir::loom::verifyMovement(func::FuncOp func,
                                         ArrayRef<int64_t> chunkBytes,
                                         double budgetBytes, int64_t arenaBytes) {
  // Per chunk, how many of its weights have a live fetch, and where its
  // copy starts in the device arena (planned offsets only).
  std::vector<int> liveWeights(chunkBytes.size(), 0);
  std::vector<int64_t> copyAt(chunkBytes.size(), -1);
  std::optional<bool> withOffsets; // as the first fetch says
  double onDevice = 0;
  DenseSet<Value> released;
  DenseMap<Value, Value> liveCopyOf; // fetched source -> its live copy
  // The chunks the step starts with (`carried`) and their copies' offsets.
  std::map<int64_t, int64_t> carriedAt;
  auto nameOf = [](Value v) -> std::string {
    if (auto w = lookThroughShards(v).getDefiningOp<WeightOp>())
      return ("weight '" + w.getName() + "'").str();
    return "a value";
  };
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (auto f = dyn_cast<FetchOp>(op)) {
      int64_t chunk = f.getChunk();
      if (chunk >= static_cast<int64_t>(chunkBytes.size()))
        return f.emitOpError("fetches chunk ")
               << chunk << " of a plan with " << chunkBytes.size() << " chunks";
      auto [copy, fresh] = liveCopyOf.try_emplace(f.getSource(), f.getResult());
      if (!fresh)
        return f.emitOpError("fetches ")
               << nameOf(f.getSource()) << " again while its copy from "
               << copy->second.getLoc() << " is live";
      if (!withOffsets)
        withOffsets = f.getOffset().has_value();
      if (*withOffsets != f.getOffset().has_value())
        return f.emitOpError("fetches ")
               << nameOf(f.getSource())
               << (*withOffsets ? " without" : " with")
               << " an arena offset, unlike the function's first fetch";
      if (std::optional<int64_t> at = f.getOffset()) {
        if (*at > std::numeric_limits<int64_t>::max() - chunkBytes[chunk])
          return f.emitOpError("puts chunk ")
                 << chunk << " at " << *at << ", past any arena";
        if (liveWeights[chunk] == 0) {
          int64_t end = *at + chunkBytes[chunk];
          if (arenaBytes >= 0 && end > arenaBytes)
            return f.emitOpError("puts chunk ")
                   << chunk << " at [" << *at << ", " << end
                   << "), past the device arena's " << arenaBytes << " bytes";
          for (auto [other, start] : llvm::enumerate(copyAt))
            if (liveWeights[other] > 0 && start < end &&
                *at < start + chunkBytes[other])
              return f.emitOpError("puts chunk ")
                     << chunk << " at [" << *at << ", " << end
                     << "), over live chunk " << other << " at [" << start
                     << ", " << start + chunkBytes[other] << ")";
          copyAt[chunk] = *at;
        } else if (*at < copyAt[chunk] ||
                   *at >= copyAt[chunk] + chunkBytes[chunk]) {
          return f.emitOpError("puts ")
                 << nameOf(f.getSource()) << " at " << *at
                 << ", outside its chunk's copy at [" << copyAt[chunk] << ", "
                 << copyAt[chunk] + chunkBytes[chunk] << ")";
        }
      }
      if (f.getCarried())
        carriedAt[chunk] = copyAt[chunk];
      if (liveWeights[chunk]++ == 0)
        onDevice += static_cast<double>(chunkBytes[chunk]);
      if (onDevice > budgetBytes * (1 + 1e-9))
        return f.emitOpError("brings the streamed chunks on the device to ")
               << static_cast<int64_t>(onDevice) << " bytes, over the budget of "
               << static_cast<int64_t>(budgetBytes);
      return WalkResult::advance();
    }
    if (auto r = dyn_cast<ReleaseOp>(op)) {
      FetchOp f = r.getFetch();
      if (liveCopyOf.lookup(f.getSource()) != f.getResult())
        return r.emitOpError("releases ")
               << nameOf(f.getSource()) << ", whose copy is already released";
      liveCopyOf.erase(f.getSource());
      released.insert(f.getResult());
      if (--liveWeights[f.getChunk()] == 0)
        onDevice -= static_cast<double>(chunkBytes[f.getChunk()]);
      return WalkResult::advance();
    }
    for (Value v : op->getOperands()) {
      if (FetchOp f = fetchOf(v)) {
        if (released.contains(f.getResult()))
          return op->emitOpError("reads ")
                 << nameOf(f.getSource()) << " after its device copy was released";
        continue;
      }
      // Compute reads device memory; other readers (a return) may take the
      // master copy where it lives, and so does the host's update
      // (verifyHostUpdates). A ZeRO-3 reader's gather reads it through
      // annotations.
      auto w = unannotated(v).getDefiningOp<WeightOp>();
      if (!w || !isa<CostOpInterface>(op) || op->hasAttr(kOnHostAttr))
        continue;
      if (StringRef tier = placedTier(w); tier != "device")
        return op->emitOpError("reads ")
               << nameOf(v) << ", placed in " << tier << " memory, without a loom.fetch";
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // The step runs again as written, so it must end with the chunks its
  // `carried` fetches say it starts with, where they say. A training
  // forward whose backward's movement is still to be written
  // (--loom-autodiff) is not the whole step yet.
  bool pending = false;
  func.walk([&](Operation *op) {
    pending |= op->hasAttr(kBackwardMovementAttr) || op->hasAttr(kRerunMovementAttr);
  });
  if (pending)
    return success();
  for (auto [chunk, live] : llvm::enumerate(liveWeights)) {
    auto carried = carriedAt.find(static_cast<int64_t>(chunk));
    if (live > 0 && carried == carriedAt.end())
      return func.emitOpError("ends with chunk ")
             << chunk << " on the device, which its next run does not start "
             << "with (no loom.fetch of it is carried), so the step cannot repeat";
    if (live == 0 && carried != carriedAt.end())
      return func.emitOpError("starts with chunk ")
             << chunk << " on the device (carried) but releases it, so the "
             << "next run would find it absent";
    if (live > 0 && carried->second != copyAt[chunk])
      return func.emitOpError("ends with chunk ")
             << chunk << " at offset " << copyAt[chunk]
             << ", but its next run starts with it at " << carried->second;
  }
  return success();
}

LogicalResult mlir::loom::verifyHostUpdates(func::FuncOp func) {
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (isa<shard::ShardOp, shard::ShardingOp, func::ReturnOp, ReloadOp>(op))
      return WalkResult::advance();
    bool host = op->hasAttr(kOnHostAttr);
    for (Value operand : op->getOperands()) {
      Value v = unannotated(operand);
      if (isScalar(v))
        continue;
      Operation *def = v.getDefiningOp();
      auto w = dyn_cast_or_null<WeightOp>(def);
      if (host) {
        // Host values: copies sent down, host results, weights held off
        // the device.
        bool hostValue = isa_and_nonnull<SpillOp>(def) ||
                         (def && def->hasAttr(kOnHostAttr)) ||
                         (w && placedTier(w) != "device");
        if (!hostValue)
          return op->emitOpError("runs on the host (")
                 << kOnHostAttr << ") but reads " << describe(v)
                 << ", which is in device memory";
        continue;
      }
      // The device reads no host result, copy or state but through a
      // reload (a streamed parameter's fetches are verifyMovement's).
      bool hostValue = isa_and_nonnull<SpillOp>(def) || (def && def->hasAttr(kOnHostAttr));
      hostValue |= w && w.getRole() == WeightRole::state && placedTier(w) != "device";
      if (hostValue)
        return op->emitOpError("runs on the device but reads ")
               << describe(v) << ", a host value, without a loom.reload";
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
