//===- Recompute.cpp - which activations training recomputes -------------===//
//
// Selective recomputation finds its regions from the graph: ops that read no
// parameter are cheap to re-run relative to what they produce (the attention
// scores and probabilities are O(s^2) per head from O(s) inputs; an
// activation function's output is as large as its input, which the function
// itself keeps anyway). Regions are maximal so that a region's inputs are
// always produced by ops that stay kept.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Recompute.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::loom;

std::optional<RecomputeMode> mlir::loom::parseRecomputeMode(StringRef name) {
  if (name == "none")
    return RecomputeMode::None;
  if (name == "selective")
    return RecomputeMode::Selective;
  if (name == "full")
    return RecomputeMode::Full;
  return std::nullopt;
}

StringRef mlir::loom::recomputeModeName(RecomputeMode mode) {
  switch (mode) {
  case RecomputeMode::None:
    return "none";
  case RecomputeMode::Selective:
    return "selective";
  case RecomputeMode::Full:
    return "full";
  }
  return "none";
}

bool RecomputeRegions::keeps(Value v, bool savedByBackward) const {
  if (Operation *def = v.getDefiningOp(); def && recomputes(def))
    return false;
  return savedByBackward || keptInputs.contains(v);
}

/// Bytes of a value by its IR type (the same for every plan and precision,
/// so the regions do not depend on who asks).
static double typeBytes(Value v) {
  auto t = dyn_cast<ShapedType>(v.getType());
  if (!t || !t.hasStaticShape())
    return 0;
  unsigned bits = t.getElementType().isIntOrFloat()
                      ? t.getElementType().getIntOrFloatBitWidth()
                      : 32;
  return static_cast<double>(t.getNumElements()) * std::max(1u, bits / 8);
}

RecomputeRegions mlir::loom::selectRecomputation(func::FuncOp func,
                                                 RecomputeMode mode,
                                                 const RecomputeFacts &facts) {
  // Ops that may be recomputed, in program order: the marked ones always,
  // and under `selective` every op with a backward that reads no parameter.
  SmallVector<Operation *> ops;
  DenseMap<Operation *, Attribute> marked; // op -> its mark
  DenseSet<Value> saved; // activations some backward reads
  func.walk([&](Operation *op) {
    if (!facts.hasBackward(op))
      return;
    SmallVector<Value> keep;
    if (auto cost = dyn_cast<CostOpInterface>(op))
      cost.getSavedForBackward(keep);
    for (Value v : keep)
      if (facts.isActivation(lookThroughShards(v)))
        saved.insert(lookThroughShards(v));
    bool readsParameter = llvm::any_of(op->getOperands(), [&](Value v) {
      v = lookThroughShards(v);
      return facts.needsGradient(v) && !facts.isActivation(v);
    });
    bool producesActivation =
        op->getNumResults() > 0 &&
        llvm::all_of(op->getResults(), [&](Value r) { return facts.isActivation(r); });
    if (Attribute mark = op->getAttr(kRecomputeMark))
      marked[op] = mark;
    else if (facts.alsoRecomputed && facts.alsoRecomputed->contains(op))
      marked[op] = IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                    facts.alsoRecomputed->lookup(op));
    else if (mode != RecomputeMode::Selective || readsParameter || !producesActivation)
      return;
    ops.push_back(op);
  });

  // A value that both continues into other candidates and leaves to an op
  // that is kept is a skip connection (the residual stream): joining through
  // it would chain every layer into one region that crosses the cut points
  // where pipelines split. Its producer is kept instead.
  DenseSet<Operation *> candidate(ops.begin(), ops.end());
  auto isSkip = [&](Operation *op) {
    for (Value r : op->getResults()) {
      bool toCandidate = false, toKept = false;
      forEachReader(r, [&](Operation *user) {
        (candidate.contains(user) ? toCandidate : toKept) = true;
      });
      if (toCandidate && toKept)
        return true;
    }
    return false;
  };
  SmallVector<Operation *> skips;
  for (Operation *op : ops)
    if (!marked.contains(op) && isSkip(op))
      skips.push_back(op);
  for (Operation *op : skips)
    candidate.erase(op);
  llvm::erase_if(ops, [&](Operation *op) { return !candidate.contains(op); });

  // Regions: connected through the values one candidate passes another,
  // with equal marks (none, for the selective candidates): a marked region
  // re-runs what was marked, from the values it reads, and one segment's
  // region does not run into the next one's.
  llvm::EquivalenceClasses<Operation *> regions;
  for (Operation *op : ops) {
    regions.insert(op);
    for (Value v : op->getOperands())
      if (Operation *def = lookThroughShards(v).getDefiningOp();
          def && candidate.contains(def) && marked.lookup(def) == marked.lookup(op))
        regions.unionSets(def, op);
  }
  // A region pays off when what it stops keeping outweighs the inputs it
  // must keep instead; one holding a marked op is recomputed regardless.
  llvm::MapVector<Operation *, SmallVector<Operation *>> members; // leader -> ops
  for (Operation *op : ops)
    members[regions.getLeaderValue(op)].push_back(op);
  RecomputeRegions result;
  for (auto &[leader, region] : members) {
    DenseSet<Operation *> inside(region.begin(), region.end());
    double dropped = 0, newlyKept = 0;
    DenseSet<Value> inputs;
    bool anyMarked = false;
    for (Operation *op : region) {
      anyMarked |= marked.contains(op);
      for (Value r : op->getResults())
        if (saved.contains(r))
          dropped += typeBytes(r);
      for (Value v : llvm::map_range(op->getOperands(), lookThroughShards)) {
        Operation *def = v.getDefiningOp();
        if (facts.isActivation(v) && !(def && inside.contains(def)))
          inputs.insert(v);
      }
    }
    for (Value v : inputs)
      if (!saved.contains(v))
        newlyKept += typeBytes(v);
    if (!anyMarked && dropped <= newlyKept)
      continue;
    for (Operation *op : region)
      result.regionOf[op] = result.numRegions;
    ++result.numRegions;
    result.keptInputs.insert(inputs.begin(), inputs.end());
  }
  return result;
}

SmallVector<RecomputeSegment>
mlir::loom::rankRecomputeSegments(func::FuncOp func, const RecomputeFacts &facts,
                                  const RecomputeRegions &base) {
  if (func.isExternal())
    return {};
  // The compute ops in program order, and when each activation dies: after
  // its last reader, or never (SIZE_MAX) when something else reads it (the
  // return).
  SmallVector<Operation *> ops;
  DenseMap<Operation *, size_t> position;
  for (Operation &op : func.getBody().front())
    if (isa<CostOpInterface>(op) && !isa<WeightOp, ConstantOp>(op)) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
  auto lastUse = [&](Value v, size_t from) {
    size_t last = from;
    bool leaves = false;
    forEachReader(v, [&](Operation *user) {
      auto it = position.find(user);
      if (it == position.end())
        leaves = true;
      else
        last = std::max(last, it->second);
    });
    return leaves ? SIZE_MAX : last;
  };
  DenseMap<size_t, SmallVector<Value>> dies; // (SIZE_MAX is DenseMap's empty key)
  DenseSet<Value> live;
  for (BlockArgument arg : func.getArguments())
    if (facts.isActivation(arg) && !arg.use_empty()) {
      live.insert(arg);
      if (size_t last = lastUse(arg, 0); last != SIZE_MAX)
        dies[last].push_back(arg);
    }
  DenseSet<Value> saved; // activations some backward reads
  for (Operation *op : ops)
    if (facts.hasBackward(op))
      if (auto cost = dyn_cast<CostOpInterface>(op)) {
        SmallVector<Value> keep;
        cost.getSavedForBackward(keep);
        for (Value v : llvm::map_range(keep, lookThroughShards))
          if (facts.isActivation(v))
            saved.insert(v);
      }

  SmallVector<RecomputeSegment> segments(1);
  for (auto [i, op] : llvm::enumerate(ops)) {
    RecomputeSegment &segment = segments.back();
    bool producesActivations =
        op->getNumResults() > 0 &&
        llvm::all_of(op->getResults(), [&](Value r) { return facts.isActivation(r); });
    double opFlops = 0, opFreed = 0; // what this op adds to its segment
    if (facts.hasBackward(op) && producesActivations) {
      segment.ops.push_back(op);
      if (auto cost = dyn_cast<CostOpInterface>(op))
        opFlops = cost.getTotalFlops();
      if (!base.recomputes(op) && !resultsHeldByStep(op))
        for (Value r : op->getResults())
          if (saved.contains(r))
            opFreed += typeBytes(r);
      segment.flops += opFlops;
      segment.freedBytes += opFreed;
    }
    for (Value r : op->getResults())
      if (facts.isActivation(r) && !r.use_empty()) {
        live.insert(r);
        if (size_t last = lastUse(r, i); last != SIZE_MAX)
          dies[last].push_back(r);
      }
    for (Value v : dies.lookup(i))
      live.erase(v);
    // A cut: this op's result alone carries the program onward, the next
    // segment's checkpoint (RecomputeSegment::checkpoint). (Recomputed,
    // the static memory plan of 15 of 18 segments of an 8-layer GPT held
    // twice what 6 of them did.)
    if (live.size() == 1 && op->getNumResults() == 1 &&
        live.contains(op->getResult(0)) && i + 1 < ops.size()) {
      if (!segment.ops.empty() && segment.ops.back() == op) {
        segment.ops.pop_back();
        segment.checkpoint = op;
        segment.flops -= opFlops;
        segment.freedBytes -= opFreed;
        segment.checkpointBytes = opFreed;
      }
      segments.emplace_back();
    }
  }
  llvm::erase_if(segments, [](const RecomputeSegment &s) {
    return (s.ops.empty() && !s.checkpoint) || s.freedBytes + s.checkpointBytes <= 0;
  });
  // Ratios equal to a part in a thousand rank as equal, so that repeated
  // layers are taken in program order whatever the rounding.
  auto rank = [](const RecomputeSegment &s) {
    if (s.freedBytes <= 0)
      return std::numeric_limits<int64_t>::min();
    double ratio = s.freedBytes / std::max(s.flops, 1.0);
    return static_cast<int64_t>(std::llround(std::log(ratio) * 1000));
  };
  std::stable_sort(segments.begin(), segments.end(),
                   [&](const RecomputeSegment &a, const RecomputeSegment &b) {
                     return rank(a) > rank(b);
                   });
  return segments;
}

DenseMap<Operation *, Operation *>
mlir::loom::recomputePoints(Block &body, function_ref<bool(Operation *)> recomputed) {
  DenseMap<Operation *, Operation *> points;
  // In reverse, so that a recomputed reader's point is known first.
  for (Operation &op : llvm::reverse(body)) {
    if (!recomputed(&op))
      continue;
    Operation *point = &op;
    for (Operation *user : op.getUsers()) {
      Operation *reader = body.findAncestorOpInBlock(*user);
      if (!reader || reader == &op || reader->hasTrait<OpTrait::IsTerminator>())
        continue;
      Operation *at = points.lookup(reader);
      if (!at)
        at = reader;
      if (point->isBeforeInBlock(at))
        point = at;
    }
    points[&op] = point;
  }
  return points;
}

bool mlir::loom::resultsHeldByStep(Operation *op) {
  std::function<bool(Value)> returned = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      if (isa<func::ReturnOp>(user))
        return true;
      auto s = dyn_cast<shard::ShardOp>(user);
      return s && returned(s.getResult());
    });
  };
  return op->getNumResults() > 0 && llvm::all_of(op->getResults(), returned);
}
