//===- Fold.cpp - repeated blocks of a model graph (TAP folding) ----------===//
//
// Finds runs of consecutive, structurally identical copies in three steps:
//
//  1. A position-independent hash per compute op: its name, attributes and
//     types, and for each operand where it comes from *relative to the op*:
//     how many ops back the value was defined or last read, the type and
//     role of a weight, the number of a block argument. Relative distances
//     make the hash strings of identical layers identical, and "last read"
//     rather than "defined" keeps a value that every layer reads (an encoder
//     output, a mask) periodic too.
//  2. Candidate runs: stretches where the hash sequence repeats with some
//     period p (h[i] == h[i - p]). Periods are seeded by the distances
//     between nearby occurrences of the same hash, so only plausible periods
//     are scanned and the work stays near-linear in the number of ops.
//  3. Largest candidate first: choose the phase whose copy boundaries cut
//     the fewest live values, check every copy exactly against its
//     neighbour (same ops, same wiring, its own weights, inputs either
//     chained from the previous copy or shared by all), keep the maximal
//     agreeing groups, grow them by whole copies where the hash was too
//     strict at the edges, and repeat on what is left.
//
// The hash only proposes; step 3 alone decides, so a hash collision can cost
// time but never a wrong fold.
//
//===----------------------------------------------------------------------===//

#include "loom/Plan/Fold.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <iterator>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Constants up to this many elements (and splats) are told apart by value;
/// larger ones are data like weights and compare by type only.
constexpr int64_t kSmallConstantElements = 64;
/// How many earlier occurrences of the same hash propose a period. A run is
/// found as long as one op of its period occurs at most this often per copy.
constexpr unsigned kPeriodSeeds = 16;

bool isSource(Operation *op) {
  return isa<WeightOp, ConstantOp>(op) || op->hasTrait<OpTrait::ConstantLike>();
}

bool isCompute(Operation *op) {
  if (isSource(op) || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  return op->getName().getDialectNamespace() !=
         shard::ShardDialect::getDialectNamespace();
}

/// Dialect-prefixed attributes (loom.name, loom.stage, loom.fold, plan and
/// cost annotations) say something about an op, not what it computes; two
/// layers differ in them and are still the same layer.
bool isAnnotation(const NamedAttribute &attr) {
  return attr.getName().getValue().contains('.');
}

/// The value of a constant when it is small enough to matter structurally
/// (a scale, a shape); null for weights and large constants.
Attribute smallConstantValue(Operation *op) {
  if (isa<WeightOp>(op))
    return {};
  Attribute value;
  if (!matchPattern(op, m_Constant(&value)))
    return {};
  if (auto elements = dyn_cast<ElementsAttr>(value))
    if (!elements.isSplat() && elements.getNumElements() >= kSmallConstantElements)
      return {};
  return value;
}

/// What identifies a weight or constant structurally: kind, type, role and,
/// for small constants, the value. Names, files and offsets are left out.
llvm::hash_code sourceHash(Operation *op) {
  llvm::hash_code hash = llvm::hash_combine(
      op->getName().getAsOpaquePointer(),
      op->getResultTypes().empty() ? nullptr
                                   : op->getResult(0).getType().getAsOpaquePointer());
  if (auto weight = dyn_cast<WeightOp>(op))
    return llvm::hash_combine(hash, static_cast<int>(weight.getRole()));
  return llvm::hash_combine(hash, smallConstantValue(op).getAsOpaquePointer());
}

bool equivalentSources(Operation *a, Operation *b) {
  if (a->getName() != b->getName() || a->getResultTypes() != b->getResultTypes())
    return false;
  if (auto wa = dyn_cast<WeightOp>(a))
    return wa.getRole() == cast<WeightOp>(b).getRole();
  return smallConstantValue(a) == smallConstantValue(b);
}

/// Name, non-annotation attributes, properties and types of an op.
llvm::hash_code opKeyHash(Operation *op) {
  llvm::hash_code hash = llvm::hash_value(op->getName().getAsOpaquePointer());
  for (const NamedAttribute &attr : op->getRawDictionaryAttrs())
    if (!isAnnotation(attr))
      hash = llvm::hash_combine(hash, attr.getName().getAsOpaquePointer(),
                                attr.getValue().getAsOpaquePointer());
  if (op->getPropertiesStorageSize())
    hash = llvm::hash_combine(hash, op->hashProperties());
  for (Type type : op->getOperandTypes())
    hash = llvm::hash_combine(hash, type.getAsOpaquePointer());
  for (Type type : op->getResultTypes())
    hash = llvm::hash_combine(hash, type.getAsOpaquePointer());
  // Region bodies are not compared: an op with regions only matches itself.
  if (op->getNumRegions())
    hash = llvm::hash_combine(hash, op);
  return hash;
}

bool sameAttributes(Operation *a, Operation *b) {
  auto keep = [](const NamedAttribute &attr) { return !isAnnotation(attr); };
  auto attrsA = llvm::make_filter_range(a->getRawDictionaryAttrs().getValue(), keep);
  auto attrsB = llvm::make_filter_range(b->getRawDictionaryAttrs().getValue(), keep);
  return llvm::equal(attrsA, attrsB);
}

/// Where a copy's op reads an operand from.
struct OperandRef {
  enum Kind : uint8_t { Internal, Weight, Input };
  Kind kind;
  unsigned index;  // the op in the copy, or the weight or input number
  unsigned result; // the result number of an Internal ref
  bool operator==(const OperandRef &other) const {
    return kind == other.kind && index == other.index && result == other.result;
  }
};

/// A copy described independently of where it sits: two copies are
/// structurally identical exactly when their forms agree.
struct CopyForm {
  unsigned begin = 0, end = 0;
  SmallVector<OperandRef> refs; // every operand of every op, in order
  SmallVector<Operation *> weights;
  SmallVector<Value> inputs;
  SmallVector<std::pair<unsigned, unsigned>> outputSlots; // (op, result)
  SmallVector<Value> outputs;
};

/// How each input of a copy relates to the previous copy: the index of the
/// previous copy's output that feeds it, or -1 when both read the same value.
using Link = SmallVector<int>;

/// A stretch [begin, end) of compute ops whose hashes repeat with `period`.
struct Candidate {
  unsigned begin, end, period;
  unsigned coverage() const { return (end - begin) / period * period; }
  bool operator==(const Candidate &o) const {
    return begin == o.begin && end == o.end && period == o.period;
  }
};

/// First and last reader of a value by compute-op index; a reader that is
/// not a compute op (the terminator) counts as reading after every op.
struct UseSpan {
  unsigned first = UINT_MAX;
  unsigned last = 0;
};

class Folder {
public:
  Folder(func::FuncOp func, const FoldOptions &options)
      : minCopies(std::max(2u, options.minCopies)),
        minOps(std::max(1u, options.minOpsPerCopy)) {
    result.func = func;
  }

  FoldedFunction run();

private:
  void collect();
  void computeHashes();
  std::vector<Candidate> findCandidates();
  SmallVector<Candidate> uncoveredPieces(const Candidate &cand) const;
  /// Copies that agree with their neighbours, and how they chain.
  struct Group {
    std::vector<CopyForm> copies;
    Link link;
  };
  std::vector<Group> verifiedGroups(const Candidate &cand, unsigned phase) const;
  bool process(const Candidate &cand);
  CopyForm describe(unsigned begin, unsigned end) const;
  bool sameStructure(const CopyForm &a, const CopyForm &b) const;
  static bool linkCopies(const CopyForm &prev, const CopyForm &next, Link &link);
  bool allUncovered(unsigned begin, unsigned end) const;
  void accept(std::vector<CopyForm> copies, const Link &link);
#ifndef NDEBUG
  const char *violatedInvariant(const RepeatedBlock &block) const;
#endif

  unsigned minCopies, minOps;
  FoldedFunction result;
  SmallVectorImpl<Operation *> &ops = result.ops;
  DenseMap<Operation *, unsigned> indexOf;
  DenseMap<Value, UseSpan> spans;
  SmallVector<llvm::hash_code> keyHash; // opKeyHash per compute op
  SmallVector<uint64_t> hash;           // with operand provenance
  SmallVector<unsigned> crossing;       // values live across the cut before op i
  SmallVector<bool> covered;
};

} // namespace

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

void Folder::collect() {
  Region &body = result.func.getBody();
  for (Block &block : body)
    for (Operation &op : block)
      if (isCompute(&op)) {
        indexOf[&op] = ops.size();
        ops.push_back(&op);
      }
  unsigned n = ops.size();

  // Readers by compute-op index, looking through shard.shard.
  auto readerIndex = [&](Operation *user) -> unsigned {
    Operation *top = body.findAncestorOpInRegion(*user);
    auto it = top ? indexOf.find(top) : indexOf.end();
    return it == indexOf.end() ? n : it->second;
  };
  std::function<void(Value, UseSpan &)> addReaders = [&](Value v, UseSpan &span) {
    for (Operation *user : v.getUsers()) {
      if (auto shardOp = dyn_cast<shard::ShardOp>(user)) {
        addReaders(shardOp.getResult(), span);
        continue;
      }
      unsigned index = readerIndex(user);
      span.first = std::min(span.first, index);
      span.last = std::max(span.last, index);
    }
  };
  for (Block &block : body)
    for (Operation &op : block)
      if (isSource(&op) || indexOf.count(&op))
        for (Value v : op.getResults())
          addReaders(v, spans[v]);

  // Live values across each cut: a value defined by op i and last read by
  // op u crosses the cuts before ops i+1 .. u.
  SmallVector<int> delta(n + 2, 0);
  for (unsigned i = 0; i < n; ++i)
    for (Value v : ops[i]->getResults()) {
      const UseSpan &span = spans[v];
      if (span.first == UINT_MAX || span.last <= i)
        continue;
      ++delta[i + 1];
      --delta[span.last + 1];
    }
  crossing.assign(n + 1, 0);
  int live = 0;
  for (unsigned i = 0; i <= n; ++i) {
    live += delta[i];
    crossing[i] = live;
  }
  covered.assign(n, false);
}

void Folder::computeHashes() {
  unsigned n = ops.size();
  keyHash.reserve(n);
  hash.reserve(n);
  // Where each compute-defined value was last defined or read.
  DenseMap<Value, unsigned> lastTouch;
  for (unsigned i = 0; i < n; ++i) {
    Operation *op = ops[i];
    llvm::hash_code key = opKeyHash(op);
    keyHash.push_back(key);
    llvm::hash_code h = key;
    for (Value operand : op->getOperands()) {
      // Through shard.shard: planned and unplanned IR fold alike.
      Value v = lookThroughShards(operand);
      llvm::hash_code token;
      if (auto blockArg = dyn_cast<BlockArgument>(v)) {
        token = llvm::hash_combine(1, blockArg.getArgNumber());
      } else {
        Operation *def = v.getDefiningOp();
        auto it = indexOf.find(def);
        if (it != indexOf.end()) {
          auto [touch, inserted] = lastTouch.try_emplace(v, it->second);
          token = llvm::hash_combine(2, i - touch->second,
                                     cast<OpResult>(v).getResultNumber());
          touch->second = i;
        } else if (isSource(def)) {
          token = llvm::hash_combine(3, sourceHash(def));
        } else {
          token = llvm::hash_combine(4, v.getType().getAsOpaquePointer());
        }
      }
      h = llvm::hash_combine(h, token);
    }
    hash.push_back(static_cast<uint64_t>(static_cast<size_t>(h)));
  }
}

/// For each proposed period p, the maximal stretches with h[i] == h[i - p],
/// widened at both ends while the ops themselves (without their operand
/// provenance) still repeat: the first and last copy of a run often read
/// their chained or shared inputs from a different distance.
std::vector<Candidate> Folder::findCandidates() {
  unsigned n = ops.size();
  std::vector<Candidate> candidates;
  if (n < minOps * minCopies)
    return candidates;
  unsigned maxPeriod = n / minCopies;

  DenseMap<uint64_t, unsigned> ids;
  std::vector<SmallVector<unsigned, kPeriodSeeds>> recent;
  DenseMap<unsigned, SmallVector<unsigned>> seedsByPeriod;
  for (unsigned i = 0; i < n; ++i) {
    auto [it, inserted] = ids.try_emplace(hash[i], recent.size());
    if (inserted)
      recent.emplace_back();
    SmallVector<unsigned, kPeriodSeeds> &seen = recent[it->second];
    for (unsigned earlier : seen) {
      unsigned period = i - earlier;
      if (period >= minOps && period <= maxPeriod)
        seedsByPeriod[period].push_back(i);
    }
    if (seen.size() == kPeriodSeeds)
      seen.erase(seen.begin());
    seen.push_back(i);
  }

  SmallVector<unsigned> periods;
  for (auto &entry : seedsByPeriod)
    periods.push_back(entry.first);
  llvm::sort(periods);
  for (unsigned p : periods) {
    unsigned scannedTo = 0;
    for (unsigned seed : seedsByPeriod[p]) {
      if (seed < scannedTo)
        continue;
      unsigned first = seed, last = seed;
      while (first > p && hash[first - 1] == hash[first - 1 - p])
        --first;
      while (last + 1 < n && hash[last + 1] == hash[last + 1 - p])
        ++last;
      scannedTo = last + 1;
      unsigned begin = first - p, end = last + 1;
      while (begin > 0 && begin - 1 + p < n && keyHash[begin - 1] == keyHash[begin - 1 + p])
        --begin;
      while (end < n && keyHash[end] == keyHash[end - p])
        ++end;
      if (end - begin >= p * minCopies)
        candidates.push_back({begin, end, p});
    }
  }
  return candidates;
}

SmallVector<Candidate> Folder::uncoveredPieces(const Candidate &cand) const {
  SmallVector<Candidate> pieces;
  unsigned i = cand.begin;
  while (i < cand.end) {
    while (i < cand.end && covered[i])
      ++i;
    unsigned start = i;
    while (i < cand.end && !covered[i])
      ++i;
    if (i - start >= cand.period * minCopies)
      pieces.push_back({start, i, cand.period});
  }
  return pieces;
}

bool Folder::allUncovered(unsigned begin, unsigned end) const {
  for (unsigned i = begin; i < end; ++i)
    if (covered[i])
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Exact comparison of copies
//===----------------------------------------------------------------------===//

CopyForm Folder::describe(unsigned begin, unsigned end) const {
  CopyForm form;
  form.begin = begin;
  form.end = end;
  DenseMap<Operation *, unsigned> weightIndex;
  DenseMap<Value, unsigned> inputIndex;
  for (unsigned i = begin; i < end; ++i) {
    for (Value operand : ops[i]->getOperands()) {
      Value v = lookThroughShards(operand);
      Operation *def = v.getDefiningOp();
      if (def) {
        auto it = indexOf.find(def);
        if (it != indexOf.end() && it->second >= begin && it->second < end) {
          form.refs.push_back({OperandRef::Internal, it->second - begin,
                               cast<OpResult>(v).getResultNumber()});
          continue;
        }
        // A weight or constant is the copy's own only if nothing else reads it.
        if (isSource(def)) {
          const UseSpan &span = spans.lookup(v);
          if (span.first >= begin && span.last < end) {
            auto [w, inserted] = weightIndex.try_emplace(def, form.weights.size());
            if (inserted)
              form.weights.push_back(def);
            form.refs.push_back({OperandRef::Weight, w->second, 0});
            continue;
          }
        }
      }
      auto [in, inserted] = inputIndex.try_emplace(v, form.inputs.size());
      if (inserted)
        form.inputs.push_back(v);
      form.refs.push_back({OperandRef::Input, in->second, 0});
    }
  }
  for (unsigned i = begin; i < end; ++i)
    for (OpResult v : ops[i]->getResults()) {
      const UseSpan &span = spans.lookup(v);
      if (span.first != UINT_MAX && span.last >= end) {
        form.outputSlots.push_back({i - begin, v.getResultNumber()});
        form.outputs.push_back(v);
      }
    }
  return form;
}

bool Folder::sameStructure(const CopyForm &a, const CopyForm &b) const {
  unsigned size = a.end - a.begin;
  if (b.end - b.begin != size || a.refs.size() != b.refs.size() ||
      a.weights.size() != b.weights.size() || a.inputs.size() != b.inputs.size() ||
      a.outputSlots != b.outputSlots)
    return false;
  for (unsigned j = 0; j < size; ++j) {
    Operation *x = ops[a.begin + j], *y = ops[b.begin + j];
    if (keyHash[a.begin + j] != keyHash[b.begin + j] || x->getName() != y->getName() ||
        x->getNumRegions() || x->getOperandTypes() != y->getOperandTypes() ||
        x->getResultTypes() != y->getResultTypes() || !sameAttributes(x, y))
      return false;
    if (x->getPropertiesStorageSize() &&
        !x->getName().compareOpProperties(x->getPropertiesStorage(),
                                          y->getPropertiesStorage()))
      return false;
  }
  if (a.refs != b.refs)
    return false;
  for (auto [wa, wb] : llvm::zip_equal(a.weights, b.weights))
    if (!equivalentSources(wa, wb))
      return false;
  return true;
}

bool Folder::linkCopies(const CopyForm &prev, const CopyForm &next, Link &link) {
  link.clear();
  for (auto [k, v] : llvm::enumerate(next.inputs)) {
    if (k < prev.inputs.size() && prev.inputs[k] == v) {
      link.push_back(-1);
      continue;
    }
    const auto *it = llvm::find(prev.outputs, v);
    if (it == prev.outputs.end())
      return false;
    link.push_back(static_cast<int>(it - prev.outputs.begin()));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Choosing runs
//===----------------------------------------------------------------------===//

/// The verified runs of a candidate at one phase: maximal groups of
/// neighbouring copies that agree, grown by whole copies past the ends of
/// the candidate where the exact comparison still agrees (the hash is
/// stricter than needed at the edges, where copies read their inputs from
/// other distances).
std::vector<Folder::Group> Folder::verifiedGroups(const Candidate &cand,
                                                  unsigned phase) const {
  unsigned p = cand.period;
  unsigned copies = (cand.end - cand.begin - phase) / p;
  std::vector<CopyForm> forms;
  forms.reserve(copies);
  for (unsigned c = 0; c < copies; ++c) {
    unsigned begin = cand.begin + phase + c * p;
    forms.push_back(describe(begin, begin + p));
  }
  // links[c]: copy c against copy c-1; ok[c] says whether they agree.
  std::vector<Link> links(copies);
  SmallVector<bool> ok(copies, false);
  for (unsigned c = 1; c < copies; ++c)
    ok[c] = sameStructure(forms[c - 1], forms[c]) &&
            linkCopies(forms[c - 1], forms[c], links[c]);

  std::vector<Group> groups;
  unsigned first = 0;
  while (first < copies) {
    unsigned last = first;
    while (last + 1 < copies && ok[last + 1] &&
           (last == first || links[last + 1] == links[first + 1]))
      ++last;
    if (last > first) {
      Group group{std::vector<CopyForm>(forms.begin() + first, forms.begin() + last + 1),
                  links[first + 1]};
      std::vector<CopyForm> &run = group.copies;
      Link probe;
      while (run.front().begin >= p && allUncovered(run.front().begin - p, run.front().begin)) {
        CopyForm before = describe(run.front().begin - p, run.front().begin);
        if (!sameStructure(before, run.front()) ||
            !linkCopies(before, run.front(), probe) || probe != group.link)
          break;
        run.insert(run.begin(), std::move(before));
      }
      while (run.back().end + p <= ops.size() &&
             allUncovered(run.back().end, run.back().end + p)) {
        CopyForm after = describe(run.back().end, run.back().end + p);
        if (!sameStructure(run.back(), after) ||
            !linkCopies(run.back(), after, probe) || probe != group.link)
          break;
        run.push_back(std::move(after));
      }
      if (run.size() >= minCopies)
        groups.push_back(std::move(group));
    }
    first = last + 1;
  }
  return groups;
}

/// Tries one candidate; returns whether it accepted a run.
bool Folder::process(const Candidate &cand) {
  unsigned p = cand.period, length = cand.end - cand.begin;

  // Where copies start. Phases are ranked at the cut between the first two
  // copies:
  //  - the fewest live values crossing it (ideally the residual stream),
  //  - then the most reads of those values by the next copy: a layer starts
  //    where its input fans out (into a branch and the skip), not one op
  //    earlier at the single-use add that produced it,
  //  - then the most copies, then the earliest.
  // The ranking is a guess that can cost a copy at the edges, so the phase
  // with the most copies is verified as well and wins if it covers more.
  unsigned n = ops.size();
  unsigned firstCut = cand.begin + p;
  // reads[b - firstCut]: operands of ops [b, b + p) defined before b.
  SmallVector<int> readsDelta(p + 1, 0);
  for (unsigned i = firstCut, e = std::min(n, firstCut + 2 * p); i < e; ++i)
    for (Value operand : ops[i]->getOperands()) {
      auto it = indexOf.find(lookThroughShards(operand).getDefiningOp());
      if (it == indexOf.end() || it->second >= i)
        continue;
      // Cuts b with def < b <= i < b + p, within [firstCut, firstCut + p).
      unsigned lo = std::max({it->second + 1, i + 1 > p ? i + 1 - p : 0u, firstCut});
      unsigned hi = std::min(i, firstCut + p - 1);
      if (lo <= hi) {
        ++readsDelta[lo - firstCut];
        --readsDelta[hi - firstCut + 1];
      }
    }
  using Rank = std::tuple<unsigned, int, int, unsigned>; // cost, -reads, -copies, phase
  std::optional<Rank> best, mostCopies;
  int reads = 0;
  for (unsigned phase = 0; phase < p; ++phase) {
    reads += readsDelta[phase];
    int copies = static_cast<int>((length - phase) / p);
    if (copies < static_cast<int>(minCopies))
      break;
    Rank rank{crossing[firstCut + phase], -reads, -copies, phase};
    if (!best || rank < *best)
      best = rank;
    // Copies only decrease with the phase: the first phase has the most.
    if (!mostCopies)
      mostCopies = rank;
  }
  if (!best)
    return false;

  std::vector<Group> groups = verifiedGroups(cand, std::get<3>(*best));
  if (std::get<2>(*mostCopies) < std::get<2>(*best)) {
    auto covers = [](const std::vector<Group> &gs) {
      size_t count = 0;
      for (const Group &g : gs)
        count += g.copies.size();
      return count;
    };
    std::vector<Group> alternative = verifiedGroups(cand, std::get<3>(*mostCopies));
    if (covers(alternative) > covers(groups))
      groups = std::move(alternative);
  }
  for (Group &group : groups)
    accept(std::move(group.copies), group.link);
  return !groups.empty();
}

void Folder::accept(std::vector<CopyForm> copies, const Link &link) {
  RepeatedBlock block;
  block.chainedFrom = link;
  for (CopyForm &form : copies) {
    block.ops.emplace_back(ops.begin() + form.begin, ops.begin() + form.end);
    block.weights.push_back(std::move(form.weights));
    block.inputs.push_back(std::move(form.inputs));
    block.outputs.push_back(std::move(form.outputs));
    for (unsigned i = form.begin; i < form.end; ++i)
      covered[i] = true;
  }

  // A hash of copy 0 alone, independent of where the run sits.
  const CopyForm &rep = copies.front();
  llvm::hash_code h = llvm::hash_value(rep.end - rep.begin);
  for (unsigned i = rep.begin; i < rep.end; ++i)
    h = llvm::hash_combine(h, keyHash[i]);
  for (const OperandRef &ref : rep.refs)
    h = llvm::hash_combine(h, static_cast<int>(ref.kind), ref.index, ref.result);
  for (Operation *w : block.weights.front())
    h = llvm::hash_combine(h, sourceHash(w));
  for (auto [op, res] : rep.outputSlots)
    h = llvm::hash_combine(h, op, res);
  block.hash = static_cast<size_t>(h);

  for (Operation *w : block.weights.front())
    if (auto weight = dyn_cast<WeightOp>(w))
      if (weight.getRole() == WeightRole::parameter)
        if (auto type = dyn_cast<ShapedType>(weight.getType()); type && type.hasStaticShape())
          block.parameters += static_cast<double>(type.getNumElements());
  for (Operation *op : block.ops.front())
    if (auto cost = dyn_cast<CostOpInterface>(op))
      block.forwardFlops += cost.getTotalFlops();
  result.blocks.push_back(std::move(block));
}

#ifndef NDEBUG
/// The header's promises about a run, checked in builds with assertions:
/// what the search relies on when it unfolds a plan.
const char *Folder::violatedInvariant(const RepeatedBlock &block) const {
  unsigned copies = block.copies(), size = block.opsPerCopy();
  if (copies < minCopies || size < minOps || block.weights.size() != copies ||
      block.inputs.size() != copies || block.outputs.size() != copies)
    return "copy counts disagree";
  for (unsigned c = 0; c < copies; ++c) {
    if (block.ops[c].size() != size || block.weights[c].size() != block.weights[0].size() ||
        block.inputs[c].size() != block.chainedFrom.size() ||
        block.outputs[c].size() != block.outputs[0].size())
      return "copies differ in size";
    unsigned begin = indexOf.lookup(block.ops[c][0]);
    for (unsigned j = 0; j < size; ++j)
      if (indexOf.lookup(block.ops[c][j]) != begin + j ||
          block.ops[c][j]->getName() != block.ops[0][j]->getName())
        return "copies are not consecutive or do not correspond";
    for (Operation *w : block.weights[c]) {
      const UseSpan &span = spans.lookup(w->getResult(0));
      if (span.first < begin || span.last >= begin + size)
        return "a weight is read outside its copy";
    }
    if (c == 0)
      continue;
    for (auto [k, from] : llvm::enumerate(block.chainedFrom)) {
      Value expected = from < 0 ? block.inputs[0][k] : block.outputs[c - 1][from];
      if (block.inputs[c][k] != expected)
        return "an input is neither chained nor shared";
    }
  }
  return nullptr;
}
#endif

FoldedFunction Folder::run() {
  if (result.func.isExternal())
    return std::move(result);
  collect();
  computeHashes();
  std::vector<Candidate> work = findCandidates();

  // Lazy greedy: the candidate covering the most ops (then the shorter
  // period, then the earlier start) is re-trimmed to what is still
  // uncovered before it is tried; if trimming changed it, its pieces go
  // back into the pool and compete again.
  auto better = [](const Candidate &a, const Candidate &b) {
    if (a.coverage() != b.coverage())
      return a.coverage() > b.coverage();
    if (a.period != b.period)
      return a.period < b.period;
    return a.begin < b.begin;
  };
  while (!work.empty()) {
    auto best = std::min_element(work.begin(), work.end(), better);
    Candidate cand = *best;
    *best = work.back();
    work.pop_back();
    SmallVector<Candidate> pieces = uncoveredPieces(cand);
    if (pieces.size() != 1 || !(pieces.front() == cand)) {
      work.insert(work.end(), pieces.begin(), pieces.end());
      continue;
    }
    // What a run leaves of its candidate may still hold another run.
    if (process(cand))
      for (const Candidate &piece : uncoveredPieces(cand))
        work.push_back(piece);
  }

#ifndef NDEBUG
  for (const RepeatedBlock &block : result.blocks)
    assert(!violatedInvariant(block) && "loom-fold: inconsistent run");
#endif
  llvm::sort(result.blocks, [&](const RepeatedBlock &a, const RepeatedBlock &b) {
    return indexOf.lookup(a.ops[0][0]) < indexOf.lookup(b.ops[0][0]);
  });
  for (auto [b, block] : llvm::enumerate(result.blocks))
    for (auto [c, copy] : llvm::enumerate(block.ops))
      for (auto [j, op] : llvm::enumerate(copy))
        result.position[op] = {static_cast<unsigned>(b), static_cast<unsigned>(c),
                               static_cast<unsigned>(j)};
  return std::move(result);
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

size_t FoldedFunction::foldedOpCount() const {
  size_t count = ops.size();
  for (const RepeatedBlock &block : blocks)
    count -= static_cast<size_t>(block.copies() - 1) * block.opsPerCopy();
  return count;
}

FoldedFunction mlir::loom::foldRepeatedBlocks(func::FuncOp func,
                                              const FoldOptions &options) {
  return Folder(func, options).run();
}

static std::string plural(size_t count, StringRef noun) {
  return std::to_string(count) + " " + noun.str() + (count == 1 ? "" : "s");
}

/// 3 significant digits with a K/M/G/T/P suffix, like the model summary.
static std::string formatCount(double value) {
  static const char *const suffixes[] = {"", " K", " M", " G", " T", " P"};
  unsigned scale = 0;
  while (value >= 999.5 && scale + 1 < std::size(suffixes)) {
    value /= 1000;
    ++scale;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.3g", value) << suffixes[scale];
  return text;
}

void mlir::loom::emitFoldRemarks(const FoldedFunction &folded) {
  if (folded.blocks.empty())
    return;
  DenseMap<Operation *, unsigned> indexOf;
  for (auto [i, op] : llvm::enumerate(folded.ops))
    indexOf[op] = i;

  for (auto [b, block] : llvm::enumerate(folded.blocks)) {
    // Shared inputs that are weights or constants (tied weights, constants
    // an importer deduplicated) are told apart from shared activations.
    unsigned chained = 0, shared = 0, sharedWeights = 0, sharedConstants = 0;
    for (auto [k, from] : llvm::enumerate(block.chainedFrom)) {
      if (from >= 0) {
        ++chained;
        continue;
      }
      ++shared;
      if (Operation *def = block.inputs[0][k].getDefiningOp(); def && isSource(def))
        ++(isa<WeightOp>(def) ? sharedWeights : sharedConstants);
    }

    std::string text;
    llvm::raw_string_ostream os(text);
    os << "loom-fold: block " << b << ": " << block.copies() << " copies of "
       << block.opsPerCopy() << " ops (" << formatCount(block.parameters)
       << " parameters, " << formatCount(block.forwardFlops) << " FLOPs per copy); "
       << plural(chained, "chained input") << ", " << plural(shared, "shared input");
    SmallVector<std::string> sharedSources;
    if (sharedWeights)
      sharedSources.push_back(plural(sharedWeights, "weight"));
    if (sharedConstants)
      sharedSources.push_back(plural(sharedConstants, "constant"));
    if (!sharedSources.empty())
      os << " (" << llvm::join(sharedSources, ", ") << ")";
    os << ", " << plural(block.outputs[0].size(), "output")
       << " per copy; copies start at compute op ";
    // Copy starts by compute-op index; long runs show both ends.
    unsigned copies = block.copies();
    for (unsigned c = 0; c < copies; ++c) {
      if (copies > 6 && c == 3) {
        os << ", ...";
        c = copies - 2;
        continue;
      }
      os << (c ? ", " : "") << indexOf.lookup(block.ops[c][0]);
    }
    mlir::emitRemark(block.ops[0][0]->getLoc(), text);
  }

  // At the location alone: attaching the op would print the whole function.
  func::FuncOp func = folded.func;
  mlir::emitRemark(func.getLoc())
      << "loom-fold: " << plural(folded.blocks.size(), "block") << "; "
      << folded.ops.size() << " compute ops fold to " << folded.foldedOpCount();
}
