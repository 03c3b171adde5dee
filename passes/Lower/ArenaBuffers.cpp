//===- ArenaBuffers.cpp - the static memory plan's buffers in one arena ---===//
//
// Memory placement assigns every device buffer an offset in one arena, and
// every offloaded activation's host copy one in a host arena; this pass
// makes the compiled program allocate from them, so that running the
// program checks the plan: two buffers the plan wrongly lets share bytes
// while both are live corrupt the outputs. The arenas are entry arguments
// the runtime allocates once (manifest `arena_bytes`, `host_arena_bytes`),
// so no planned buffer is allocated inside the step. A spill or reload
// becomes the copy into its place (on a CPU both tiers are one memory, but
// the bytes still move between the arenas).
//
// A pipelined program's stage function allocates from its own pipeline
// device's plan, one micro-batch per call: where the micro-batches' places
// differ, the runtime passes the micro-batch the call runs and each place
// is read from a table by it.
//
// Each planned value is redirected into a view of the arena in value
// semantics (materialize_in_destination into to_tensor of a memref.view);
// upstream eliminate-empty-tensors then lets its producer compute in place
// there, and one-shot bufferization copies only where it cannot (views,
// weights fetched into the arena). The materialization also keeps
// elementwise fusion from moving a producer's reads past its position,
// which the plan's lifetimes rely on.
//
// A training step's backward (--loom-autodiff) has planned buffers only
// for the activations' final gradients (the op computing one carries its
// place as a forward offset), not for its other values. Its ops that read
// planned bytes (any unplanned loom op that does, which in practice is the
// backward's) get private buffers the same way, so that their reads stay
// where they are and their results are not views the closure would have to
// follow to the end of the step. Not where the reads may move: a matmul
// computes into a fresh buffer where it stands, a transpose only matmuls
// read is read through them (loom-fold-into-contractions), and bytes
// nothing planned later overwrites (a weight's gradient) keep their value
// to the end of the call.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringSet.h"

#include <array>
#include <map>

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMARENABUFFERS
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The arenas of a static memory plan, in the entry's argument order.
enum class Tier { Device, Host };
StringRef tierName(Tier tier) { return tier == Tier::Device ? "device" : "host"; }

/// One value the plan puts in an arena: an op result, an entry argument, a
/// fetched weight's copy, or a spilled activation's host copy or reload.
struct PlannedBuffer {
  Value value;
  Operation *owner; // names it in diagnostics
  std::string what;
  Tier tier = Tier::Device;
  /// By micro-batch in a pipelined stage function whose micro-batches'
  /// places differ, else one offset for every call.
  SmallVector<int64_t, 1> offsets;
  int64_t bytes = 0;
  /// Positions in the function body (-1: an entry argument, written on
  /// entry): where it is written, and the last op reading it directly or
  /// through a value that may alias it after bufferization.
  int64_t defined = -1, lastRead = -1;
  Operation *lastReader = nullptr;
  /// False when a partitioned program reads an earlier buffer over its
  /// bytes while it lives: it gets a private allocation.
  bool inArena = true;
};

/// A weight kept at its place in an arena (loom-weights-to-arguments'
/// `arena_offset`, and `arena_slot` tensors of its size after it).
struct WeightPlace {
  std::string name;
  Tier tier;
  int64_t begin, end;
  /// False on NVMe, whose arena is a file the runtime maps, not an entry
  /// argument.
  bool inArenaArgument;
};

/// Where a function's values are planned: `loom.offsets` in a program of
/// one device; in a stage function of a pipelined program (after
/// loom-split-stages), `loom.pipeline_offsets` of its own pipeline device,
/// laid out by micro-batch, then by result.
struct OffsetSource {
  std::optional<int64_t> pipelineDevice;
  int64_t microBatches = 1;

  StringRef attrName() const {
    return pipelineDevice ? kPipelineOffsetsAttr : kOffsetsAttr;
  }

  /// The `kind` offsets ("forward"; "host" for a pipelined spill's host
  /// copy) of result `index` of `results` in `attr` (an op's or argument's
  /// attrName() dictionary): one per micro-batch, one for every
  /// call (a program of one device, or micro-batches sharing it), or none.
  /// Fails on `owner` where a pipelined dictionary is another device's,
  /// holds no whole number of micro-batches, or places a value in some
  /// micro-batches and not others.
  FailureOr<SmallVector<int64_t, 1>> places(Operation *owner, StringRef what,
                                            Attribute attr, unsigned results,
                                            unsigned index,
                                            StringRef kind = "forward") const {
    SmallVector<int64_t, 1> at;
    auto offsets = dyn_cast_or_null<DictionaryAttr>(attr);
    if (attr && (!offsets || (offsets.get(kind) &&
                              !offsets.getAs<DenseI64ArrayAttr>(kind))))
      return owner->emitOpError()
             << what << " has a malformed " << attrName() << " (" << attr
             << "): a dictionary whose `" << kind << "` is an array<i64>";
    if (!pipelineDevice) {
      if (std::optional<int64_t> o = resultOffset(offsets, kind, index))
        at.push_back(*o);
      return at;
    }
    if (!offsets)
      return at;
    auto device = offsets.getAs<IntegerAttr>("device");
    if (!device || device.getInt() != *pipelineDevice)
      return owner->emitOpError()
             << what << " carries " << kPipelineOffsetsAttr
             << " of pipeline device "
             << (device ? std::to_string(device.getInt()) : "(none)")
             << ", but its function runs on pipeline device "
             << *pipelineDevice;
    auto all = offsets.getAs<DenseI64ArrayAttr>(kind);
    if (!all)
      return at;
    if (all.size() != microBatches * static_cast<int64_t>(results))
      return owner->emitOpError()
             << what << " has " << all.size() << " " << kind << " offsets in "
             << kPipelineOffsetsAttr << ", not one per micro-batch ("
             << microBatches << ", the function's " << kMicroBatchesAttr
             << ") and result (" << results
             << "): was it placed for another micro-batch count?";
    llvm::append_range(at, resultPlaces(all.asArrayRef(), results, index));
    auto placed = [](int64_t o) { return o >= 0; };
    if (llvm::none_of(at, placed))
      return SmallVector<int64_t, 1>();
    if (!llvm::all_of(at, placed))
      return owner->emitOpError() << what << " has a " << kind
                                  << " offset in some micro-batches but not "
                                     "in others";
    if (llvm::all_equal(at))
      at.resize(1);
    return at;
  }
};

/// The bytes of a static tensor of integer or float elements (none for any
/// other type).
std::optional<int64_t> staticTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isIntOrFloat())
    return std::nullopt;
  return tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
}

/// The bytes of a planned buffer of `type` at `offset`; fails on `owner` if
/// it leaves the arena or is misaligned for its elements.
FailureOr<int64_t> plannedBytes(Operation *owner, StringRef what, Type type,
                                int64_t offset, Tier tier, int64_t arenaBytes) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return owner->emitOpError() << what << " is planned at offset " << offset
                                << " but has type " << type
                                << "; only static tensors have a place";
  Type element = tensor.getElementType();
  int64_t elementBytes =
      element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8 : 0;
  if (elementBytes == 0)
    return owner->emitOpError()
           << what << " has elements of type " << element
           << "; an arena holds integer and float elements only";
  int64_t bytes = *staticTensorBytes(tensor);
  if (offset < 0 || offset > arenaBytes || bytes > arenaBytes - offset)
    return owner->emitOpError()
           << what << " is planned at bytes [" << offset << ", "
           << offset + bytes << ") but the " << tierName(tier)
           << " arena of the memory plan has " << arenaBytes << " bytes";
  if (offset % elementBytes != 0)
    return owner->emitOpError()
           << what << " is planned at offset " << offset
           << ", not a multiple of its " << elementBytes << "-byte elements";
  return bytes;
}

/// Whether `gather` assembles a weight ZeRO-3 stores in shards (an argument
/// marked `loom.zero_shard` by loom-weights-to-arguments) for its reader:
/// the last of a chain of all-gathers starting there.
bool isGatheredWeight(shard::AllGatherOp gather) {
  if (llvm::any_of(gather->getUsers(), llvm::IsaPred<shard::AllGatherOp>))
    return false;
  auto arg = dyn_cast<BlockArgument>(rootOfGathers(gather.getInput()));
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  return func && func.getArgAttr(arg.getArgNumber(), kZeroShardMark);
}

/// A writable tensor over the arena's bytes from `shift` (an index),
/// built at `b`'s insertion point.
Value arenaTensor(OpBuilder &b, Location loc, Value arena, Type type,
                  Value shift) {
  auto tensor = cast<RankedTensorType>(type);
  auto memref = MemRefType::get(tensor.getShape(), tensor.getElementType());
  Value view = memref::ViewOp::create(b, loc, memref, arena, shift, ValueRange{});
  return bufferization::ToTensorOp::create(b, loc, tensor, view,
                                           /*restrict=*/true, /*writable=*/true);
}

/// Whether `op`'s result is a fresh buffer whose computation no fusion moves
/// past `op`: a contraction or reduction into a filled tensor, which
/// elementwise fusion cannot fold into a later reader.
bool endsReads(Operation *op) { return isa<MatmulOp, ReduceOp>(op); }

/// Whether `op` is a transpose of its operand's last two dims that only
/// matmuls read: loom-fold-into-contractions has them read its operand
/// through their indexing maps, so its operand's bytes are read where the
/// matmuls run (the backward's `X^T dY`), and it needs no buffer of its
/// own. (Where a lowering collapses it with another dim first, it is
/// materialized after all, at its own position: earlier than the reads
/// the closure counts, which is safe.) The caller checks that nothing
/// planned is written before the last matmul.
bool readThroughByContractions(TransposeOp t) {
  return swapsLastTwoDims(t.getPermutation()) && !t->use_empty() &&
         llvm::all_of(t->getUsers(),
                      [](Operation *user) { return isa<MatmulOp>(user); });
}

/// The arena place a movement op carries, if it has one.
std::optional<int64_t> movementOffset(Operation *op) {
  if (auto fetch = dyn_cast<FetchOp>(op))
    return fetch.getOffset();
  if (auto spill = dyn_cast<SpillOp>(op))
    return spill.getOffset();
  if (auto reload = dyn_cast<ReloadOp>(op))
    return reload.getOffset();
  return std::nullopt;
}

/// Whether byte ranges [a, a + aBytes) and [b, b + bBytes) share a byte.
bool overlaps(int64_t a, int64_t aBytes, int64_t b, int64_t bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

/// `p`'s place in micro-batch `k` (its only one where it has one).
int64_t offsetIn(const PlannedBuffer &p, int64_t k) {
  return p.offsets[std::min<size_t>(k, p.offsets.size() - 1)];
}

/// The first micro-batch in which `x` and `w` share a byte of one tier
/// (a buffer with one offset has it in every micro-batch).
std::optional<int64_t> clashIn(const PlannedBuffer &x, const PlannedBuffer &w) {
  if (x.tier != w.tier)
    return std::nullopt;
  int64_t calls =
      static_cast<int64_t>(std::max(x.offsets.size(), w.offsets.size()));
  for (int64_t k = 0; k < calls; ++k)
    if (overlaps(offsetIn(x, k), x.bytes, offsetIn(w, k), w.bytes))
      return k;
  return std::nullopt;
}

/// Disjoint byte ranges [begin, end), merged as they are added.
class ByteRanges {
public:
  bool overlaps(int64_t begin, int64_t end) const {
    auto next = ranges.upper_bound(begin);
    if (next != ranges.begin() && std::prev(next)->second > begin)
      return true;
    return next != ranges.end() && next->first < end;
  }
  void add(int64_t begin, int64_t end) {
    auto next = ranges.upper_bound(begin);
    if (next != ranges.begin() && std::prev(next)->second >= begin) {
      --next;
      begin = next->first;
      end = std::max(end, next->second);
      next = ranges.erase(next);
    }
    while (next != ranges.end() && next->first <= end) {
      end = std::max(end, next->second);
      next = ranges.erase(next);
    }
    ranges[begin] = end;
  }

private:
  std::map<int64_t, int64_t> ranges; // begin -> end
};

/// The planned values whose bytes no buffer defined at or after them
/// shares (in any micro-batch): they keep their value to the end of the
/// call. A sweep from the last definition back, per tier and micro-batch.
llvm::DenseSet<Value> keptToEndOf(ArrayRef<PlannedBuffer> planned) {
  size_t calls = 1;
  for (const PlannedBuffer &p : planned)
    calls = std::max(calls, p.offsets.size());
  SmallVector<const PlannedBuffer *> byDefinition;
  for (const PlannedBuffer &p : planned)
    byDefinition.push_back(&p);
  llvm::stable_sort(byDefinition,
                    [](const PlannedBuffer *a, const PlannedBuffer *b) {
                      return a->defined > b->defined;
                    });
  std::vector<ByteRanges> later(2 * calls); // by tier, then micro-batch
  auto ranges = [&](const PlannedBuffer &p, size_t k) -> ByteRanges & {
    return later[static_cast<size_t>(p.tier) * calls + k];
  };
  llvm::DenseSet<Value> kept;
  for (size_t i = 0; i < byDefinition.size();) {
    // Buffers defined together (one op's results) count as later for
    // one another.
    size_t j = i;
    while (j < byDefinition.size() &&
           byDefinition[j]->defined == byDefinition[i]->defined)
      ++j;
    for (size_t a = i; a < j; ++a) {
      const PlannedBuffer &p = *byDefinition[a];
      bool shared = false;
      for (size_t k = 0; k < calls && !shared; ++k)
        shared =
            ranges(p, k).overlaps(offsetIn(p, k), offsetIn(p, k) + p.bytes);
      for (size_t b = i; b < j && !shared; ++b)
        shared = b != a && clashIn(p, *byDefinition[b]).has_value();
      if (!shared)
        kept.insert(p.value);
    }
    for (size_t a = i; a < j; ++a)
      for (size_t k = 0; k < calls; ++k)
        ranges(*byDefinition[a], k)
            .add(offsetIn(*byDefinition[a], k),
                 offsetIn(*byDefinition[a], k) + byDefinition[a]->bytes);
    i = j;
  }
  return kept;
}

/// The planned buffers of `func` (their places as `source` reads them,
/// ZeRO-3's gather slots from `arenas`), with the positions they are live
/// over in the program as it is now (partitioning may have rewritten it since
/// the plan was made). A buffer is read until its last reader, or until the
/// last read of a reader's result that is not planned: after bufferization
/// that result may be a view of it (a reshape, a slice, an in-place
/// update). With `privateReaders` (a training step, whose backward has
/// planned buffers only for the activations' gradients), the loom ops that read
/// planned bytes and are neither planned, views nor endsReads get private
/// buffers instead (they are appended there), and the closure stops at them.
/// Fails on a buffer that does not fit its arena (`arenaBytes`, by Tier; host:
/// -1 when the plan has none).
FailureOr<std::vector<PlannedBuffer>>
collectPlanned(func::FuncOp func, const OffsetSource &source,
               DictionaryAttr arenas, std::array<int64_t, 2> arenaBytes,
               SmallVectorImpl<Operation *> *privateReaders = nullptr) {
  std::vector<PlannedBuffer> planned;
  auto add = [&](Value value, Operation *owner, std::string what,
                 ArrayRef<int64_t> offsets, int64_t defined,
                 Tier tier = Tier::Device) -> LogicalResult {
    if (offsets.empty())
      return success();
    int64_t arena = arenaBytes[static_cast<int>(tier)];
    if (arena <= 0)
      return owner->emitOpError()
             << what << " is planned at offset " << offsets.front()
             << " in the " << tierName(tier) << " arena, but the module's "
             << kMemoryPlanAttr << " gives no " << tierName(tier)
             << " arena size"
             << (source.pipelineDevice
                     ? " for pipeline device " +
                           std::to_string(*source.pipelineDevice)
                     : std::string());
    int64_t bytes = 0;
    for (int64_t offset : offsets) {
      FailureOr<int64_t> b =
          plannedBytes(owner, what, value.getType(), offset, tier, arena);
      if (failed(b))
        return failure();
      bytes = *b;
    }
    planned.push_back({value, owner, std::move(what), tier,
                       SmallVector<int64_t, 1>(offsets), bytes, defined,
                       defined});
    return success();
  };
  // The forward offsets of `owner`'s attribute dictionary for one value.
  auto addPlanned = [&](Value value, Operation *owner, std::string what,
                        Attribute offsets, unsigned results, unsigned index,
                        int64_t defined) -> LogicalResult {
    FailureOr<SmallVector<int64_t, 1>> at =
        source.places(owner, what, offsets, results, index);
    if (failed(at))
      return failure();
    return add(value, owner, std::move(what), *at, defined);
  };
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    if (failed(addPlanned(func.getArgument(a), func,
                          "argument #" + std::to_string(a) + " of @" +
                              func.getSymName().str(),
                          func.getArgAttr(a, source.attrName()), 1, 0, -1)))
      return failure();
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  // ZeRO-3's gathered weights take its slots in turn, in program order
  // (one that does not fit a slot is left to the allocator).
  SmallVector<std::pair<int64_t, int64_t>> slots;
  while (auto slot = scratchBuffer(arenas, zeroGatherSlot(slots.size())))
    slots.push_back(*slot);
  int64_t gathered = 0;
  for (Operation &op : body) {
    if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      if (slots.empty() || !isGatheredWeight(gather))
        continue;
      auto [offset, bytes] = slots[gathered++ % slots.size()];
      std::optional<int64_t> need = staticTensorBytes(gather.getType());
      if (need && *need <= bytes &&
          failed(add(gather.getResult(), &op, "the gathered weight", {offset},
                     position[&op])))
        return failure();
      continue;
    }
    if (isa<FetchOp, SpillOp, ReloadOp>(op)) {
      // Its `at`; in a pipelined stage, a place per micro-batch (a spill's
      // host copy at `host`, a reload at `forward`).
      std::string what = isa<FetchOp>(op) ? "the fetched weight"
                         : isa<SpillOp>(op)
                             ? "the spilled activation's host copy"
                             : "the reloaded activation";
      Tier tier = isa<SpillOp>(op) ? Tier::Host : Tier::Device;
      SmallVector<int64_t, 1> at;
      if (std::optional<int64_t> offset = movementOffset(&op)) {
        at.push_back(*offset);
      } else if (source.pipelineDevice) {
        FailureOr<SmallVector<int64_t, 1>> places =
            source.places(&op, what, op.getAttr(source.attrName()), 1, 0,
                          tier == Tier::Host ? "host" : "forward");
        if (failed(places))
          return failure();
        at = *places;
      }
      if (failed(add(op.getResult(0), &op, what, at, position[&op], tier)))
        return failure();
      continue;
    }
    Attribute offsets = op.getAttr(source.attrName());
    for (OpResult result : op.getResults())
      if (failed(addPlanned(
              result, &op,
              "result #" + std::to_string(result.getResultNumber()), offsets,
              op.getNumResults(), result.getResultNumber(), position[&op])))
        return failure();
  }

  llvm::DenseSet<Value> placed;
  for (const PlannedBuffer &p : planned)
    placed.insert(p.value);
  // The closure follows an unplanned result only where it may still hold
  // planned bytes: everywhere, or (privateReaders) through views, and
  // through readers of bytes nothing planned later in the function
  // overwrites (a buffer kept to the end, such as a weight's gradient),
  // whose reads may move as late as fusion likes.
  llvm::DenseSet<Operation *> followed;
  if (privateReaders) {
    llvm::DenseSet<Value> holdsPlanned(placed.begin(), placed.end());
    SmallVector<int64_t> definedAt;
    for (const PlannedBuffer &p : planned)
      definedAt.push_back(p.defined);
    llvm::sort(definedAt);
    llvm::DenseSet<Value> keptToEnd = keptToEndOf(planned);
    for (Operation &op : body) {
      if (op.getNumResults() == 0 || llvm::any_of(op.getResults(), [&](Value r) {
            return placed.contains(r);
          }))
        continue;
      if (llvm::none_of(op.getOperands(), [&](Value v) { return holdsPlanned.contains(v); }))
        continue;
      if (endsReads(&op))
        continue;
      // A transpose read through by its matmuls: where no planned buffer
      // is written from it to the last of them, which would otherwise
      // have to wait for those reads.
      if (auto t = dyn_cast<TransposeOp>(op);
          t && readThroughByContractions(t)) {
        int64_t from = position[&op], to = from;
        for (Operation *user : t->getUsers())
          to = std::max(to, position.lookup(user));
        auto written = llvm::upper_bound(definedAt, from);
        if (written == definedAt.end() || *written >= to) {
          followed.insert(&op);
          holdsPlanned.insert(op.getResult(0));
          continue;
        }
      }
      if (llvm::all_of(op.getOperands(), [&](Value v) {
            return !holdsPlanned.contains(v) || keptToEnd.contains(v);
          })) {
        followed.insert(&op);
        holdsPlanned.insert(op.getResults().begin(), op.getResults().end());
        keptToEnd.insert(op.getResults().begin(), op.getResults().end());
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!mayShareOperandBytes(&op) && op.getNumResults() == 1 && type &&
          type.hasStaticShape()) {
        privateReaders->push_back(&op);
        continue;
      }
      followed.insert(&op);
      holdsPlanned.insert(op.getResults().begin(), op.getResults().end());
    }
  }
  auto follows = [&](Operation *op) { return !privateReaders || followed.contains(op); };
  using Read = std::pair<int64_t, Operation *>;
  llvm::DenseMap<Value, Read> lastRead;
  auto readUntil = [&](Value v, int64_t from) {
    Read last{from, nullptr};
    for (Operation *user : v.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      if (position[top] > last.first)
        last = {position[top], top};
      if (follows(top))
        for (Value r : top->getResults())
          if (!placed.contains(r) && lastRead.lookup(r).first > last.first)
            last = lastRead.lookup(r);
    }
    lastRead[v] = last;
  };
  for (Operation &op : llvm::reverse(body))
    for (Value r : op.getResults())
      readUntil(r, position[&op]);
  for (BlockArgument arg : func.getArguments())
    readUntil(arg, -1);
  for (PlannedBuffer &p : planned)
    std::tie(p.lastRead, p.lastReader) = lastRead.lookup(p.value);
  return planned;
}

/// Whether `func` holds anything the static memory plan placed (a gathered
/// weight's slot comes with the plan's other buffers).
bool hasPlacedBuffers(func::FuncOp func, const OffsetSource &source) {
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    if (func.getArgAttr(a, source.attrName()))
      return true;
  WalkResult found = func.walk([&](Operation *op) {
    return op->hasAttr(source.attrName()) || movementOffset(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// The places of the buffers whose micro-batches' places differ, as one
/// constant table (a row per buffer, a column per micro-batch), and the
/// micro-batch index argument that picks the column.
class MicroBatchOffsets {
public:
  /// Adds the table and the index argument to `func` where some buffer of
  /// `planned` in the arena has a place per micro-batch.
  LogicalResult build(func::FuncOp func, ArrayRef<PlannedBuffer> planned,
                      int64_t microBatches) {
    SmallVector<int64_t> table;
    for (const PlannedBuffer &p : planned)
      if (p.inArena && p.offsets.size() > 1) {
        row[&p] = static_cast<int64_t>(row.size());
        llvm::append_range(table, p.offsets);
      }
    if (row.empty())
      return success();
    MLIRContext *ctx = func.getContext();
    OpBuilder b(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    unsigned index = func.getNumArguments();
    // (The argument says how many micro-batches the table holds: the
    // runtime refuses to run another count through it.)
    if (failed(func.insertArgument(
            index, MemRefType::get({1}, i64),
            b.getDictionaryAttr({b.getNamedAttr(
                kMicroBatchPlacesAttr, b.getI64IntegerAttr(microBatches))}),
            func.getLoc())))
      return failure();
    auto tableType =
        MemRefType::get({static_cast<int64_t>(row.size()), microBatches}, i64);
    auto module = func->getParentOfType<ModuleOp>();
    // Built detached, then inserted: renamed if the name is taken.
    auto global = memref::GlobalOp::create(
        b, func.getLoc(), (func.getSymName() + "_micro_batch_offsets").str(),
        b.getStringAttr("private"), tableType,
        DenseElementsAttr::get(RankedTensorType::get(tableType.getShape(), i64),
                               ArrayRef<int64_t>(table)),
        /*constant=*/true, /*alignment=*/nullptr);
    SymbolTable(module).insert(global, module.getBody()->begin());
    Location loc = func.getLoc();
    b.setInsertionPointToStart(&func.getBody().front());
    offsets =
        memref::GetGlobalOp::create(b, loc, tableType, global.getSymName());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value k = memref::LoadOp::create(b, loc, func.getArgument(index),
                                     ValueRange{zero});
    microBatch = arith::IndexCastOp::create(b, loc, b.getIndexType(), k);
    return success();
  }

  /// Sets `b` at the start of `body`, after the micro-batch index's load.
  void setInsertionPointAfterPrologue(OpBuilder &b, Block &body) const {
    if (microBatch)
      b.setInsertionPointAfterValue(microBatch);
    else
      b.setInsertionPointToStart(&body);
  }

  /// `p`'s place in the micro-batch this call runs, built at `b`'s
  /// insertion point.
  Value shift(OpBuilder &b, Location loc, const PlannedBuffer &p) const {
    auto at = row.find(&p);
    if (at == row.end())
      return arith::ConstantIndexOp::create(b, loc, p.offsets.front());
    Value r = arith::ConstantIndexOp::create(b, loc, at->second);
    Value o =
        memref::LoadOp::create(b, loc, offsets, ValueRange{r, microBatch});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), o);
  }

private:
  llvm::DenseMap<const PlannedBuffer *, int64_t> row;
  Value offsets, microBatch;
};

struct ArenaBuffersPass
    : mlir::loom::impl::LoomArenaBuffersBase<ArenaBuffersPass> {
  using LoomArenaBuffersBase::LoomArenaBuffersBase;

  /// The weights at places in the arenas of `func`'s device: the weight
  /// arguments with an `arena_offset` (loom-weights-to-arguments) of every
  /// function that runs there (itself, its update; the runtime gives them
  /// the same arenas). They live throughout.
  static SmallVector<WeightPlace> weightPlaces(ModuleOp module,
                                               func::FuncOp func) {
    // (A one-device pipeline's stage function is stage 0, its update has
    // no stage.)
    SmallVector<WeightPlace> places;
    llvm::StringSet<> seen;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (pipelineStageOf(f).value_or(0) != pipelineStageOf(func).value_or(0))
        continue;
      for (unsigned i = 0; i < f.getNumArguments(); ++i) {
        auto weight = f.getArgAttrOfType<DictionaryAttr>(i, "loom.weight");
        auto name = weight ? weight.getAs<StringAttr>("name") : nullptr;
        auto place = weightArenaBytes(weight, f.getArgumentTypes()[i]);
        if (!place || !name || !seen.insert(name.getValue()).second)
          continue;
        auto tier = weight.getAs<StringAttr>("tier");
        places.push_back(
            {name.getValue().str(),
             tier && tier.getValue() == "host" ? Tier::Host : Tier::Device,
             place->first, place->second,
             !tier || tier.getValue() == "device" ||
                 tier.getValue() == "host"});
      }
    }
    return places;
  }

  /// Whether some weight in `places` lives in `tier`'s arena.
  static bool holdsWeights(ArrayRef<WeightPlace> places, Tier tier) {
    return llvm::any_of(places, [&](const WeightPlace &w) {
      return w.inArenaArgument && w.tier == tier;
    });
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> updates = updateFunctions(module, entry);
    for (func::FuncOp func : programFunctions(module, entry)) {
      // A plan of several pipeline devices has their arenas; a stage
      // function of a one-device pipeline reads the program's plan.
      OffsetSource source;
      std::optional<int64_t> stage = pipelineStageOf(func);
      auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
      if (stage && plan && plan.get(kPipelineArenasKey)) {
        source.pipelineDevice = *stage;
        if (Attribute m = func->getAttr(kMicroBatchesAttr)) {
          auto count = dyn_cast<IntegerAttr>(m);
          if (!count || count.getInt() < 1) {
            func.emitOpError() << kMicroBatchesAttr
                               << " must be a positive integer, not " << m;
            return signalPassFailure();
          }
          source.microBatches = count.getInt();
        }
      }
      if (func.isExternal())
        continue;
      // An update function takes the step's arenas only where it moves
      // something to a place in them (a host-updated sum spilled at its
      // gradient_offset); its weights at their places come in as their
      // own pointers into the arenas.
      SmallVector<WeightPlace> weights = weightPlaces(module, func);
      bool placed = hasPlacedBuffers(func, source);
      if (!placed && (llvm::is_contained(updates, func) ||
                      (!holdsWeights(weights, Tier::Device) &&
                       !holdsWeights(weights, Tier::Host))))
        continue;
      DictionaryAttr arenas = planArenas(module, source.pipelineDevice);
      std::optional<int64_t> bytes = arenaBytes(arenas);
      if (!bytes || *bytes <= 0) {
        InFlightDiagnostic diag =
            func.emitOpError("has buffers placed by a static memory plan (")
            << source.attrName() << " or loom.fetch ... at) but the module's "
            << kMemoryPlanAttr << " gives no device arena size";
        if (source.pipelineDevice)
          diag << " for its pipeline device " << *source.pipelineDevice
               << " (its " << kPipelineArenasKey << " entry)";
        return signalPassFailure();
      }
      std::array<int64_t, 2> sizes = {*bytes,
                                      arenaBytes(arenas, "host").value_or(-1)};
      if (failed(convert(func, source, arenas, sizes, weights,
                         !module.getOps<shard::GridOp>().empty())))
        return signalPassFailure();
    }
  }

  LogicalResult convert(func::FuncOp func, const OffsetSource &source,
                        DictionaryAttr arenaAttrs, std::array<int64_t, 2> bytes,
                        ArrayRef<WeightPlace> weights, bool partitioned) {
    SmallVector<Operation *> privateReaders;
    bool trainingStep = func->hasAttr(kDifferentiatedAttr);
    FailureOr<std::vector<PlannedBuffer>> planned =
        collectPlanned(func, source, arenaAttrs, bytes,
                       trainingStep ? &privateReaders : nullptr);
    if (failed(planned))
      return failure();

    // Weights at their places live throughout: nothing planned in the
    // function may share a byte with one, partitioned or not (unlike two
    // buffers' lifetimes, this does not depend on where the program reads).
    for (const PlannedBuffer &p : *planned)
      for (auto [k, offset] : llvm::enumerate(p.offsets))
        for (const WeightPlace &w : weights)
          if (w.inArenaArgument && w.tier == p.tier &&
              overlaps(offset, p.bytes, w.begin, w.end - w.begin)) {
            std::string inMicroBatch =
                p.offsets.size() > 1 ? " in micro-batch " + std::to_string(k)
                                     : "";
            return p.owner->emitOpError()
                   << p.what << " is planned at bytes [" << offset << ", "
                   << offset + p.bytes << ") of the " << tierName(p.tier)
                   << " arena" << inMicroBatch << ", where weight '" << w.name
                   << "' lives throughout, at [" << w.begin << ", " << w.end
                   << ")";
          }

    // Two buffers sharing a byte must not be live together. In the program
    // the plan was made for that is the plan's own check, and a failure
    // here is a wrong plan. A partitioned program may read a value later
    // than planned (the partitioner's canonicalization composes ops): the
    // later-written buffer then gets a private buffer instead, which is as
    // un-aliased as its arena place would have been, so nothing else moves.
    // A pipelined stage function runs one micro-batch per call, with that
    // micro-batch's places: each call is checked.
    std::vector<const PlannedBuffer *> live;
    int64_t privateBuffers = 0;
    for (PlannedBuffer &w : *planned) {
      llvm::erase_if(live, [&](const PlannedBuffer *x) { return x->lastRead < w.defined; });
      const PlannedBuffer *clash = nullptr;
      int64_t k = 0;
      for (const PlannedBuffer *x : live)
        if (std::optional<int64_t> in = clashIn(*x, w)) {
          clash = x;
          k = *in;
        }
      if (clash && !partitioned) {
        std::string inMicroBatch = source.microBatches > 1
                                       ? " in micro-batch " + std::to_string(k)
                                       : "";
        InFlightDiagnostic diag =
            w.owner->emitOpError()
            << w.what << " is planned at bytes [" << offsetIn(w, k) << ", "
            << offsetIn(w, k) + w.bytes << ")" << inMicroBatch << ", which "
            << clash->what << " of the op below still holds";
        diag.attachNote(clash->owner->getLoc())
            << "planned at [" << offsetIn(*clash, k) << ", "
            << offsetIn(*clash, k) + clash->bytes << ")";
        if (clash->lastReader)
          diag.attachNote(clash->lastReader->getLoc())
              << "whose bytes are read until here (directly or through a value that "
                 "may share them), after the write";
        return failure();
      }
      if (clash) {
        w.inArena = false;
        ++privateBuffers;
      } else {
        live.push_back(&w);
      }
    }
    if (privateBuffers)
      mlir::emitRemark(func.getLoc())
          << "@" << func.getSymName() << ": " << privateBuffers << " of "
          << planned->size()
          << " planned buffers get private ones: the partitioned program "
             "reads the arena bytes they were planned at later than the plan "
             "expects";

    // The arenas follow the other arguments, the device's first; the host's
    // only where something is spilled into it or a weight (of the step or
    // its update, which the runtime gives the step's arenas) lives there.
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    Value arenas[2];
    for (Tier tier : {Tier::Device, Tier::Host}) {
      if (tier == Tier::Host &&
          llvm::none_of(
              *planned,
              [](const PlannedBuffer &p) { return p.tier == Tier::Host; }) &&
          !holdsWeights(weights, Tier::Host))
        continue;
      if (bytes[static_cast<int>(tier)] < 0)
        return func.emitOpError("places buffers or weights in the ")
               << tierName(tier) << " arena, but the module's "
               << kMemoryPlanAttr << " gives no " << tierName(tier)
               << " arena size";
      unsigned index = func.getNumArguments();
      auto arenaType =
          MemRefType::get({bytes[static_cast<int>(tier)]}, IntegerType::get(ctx, 8));
      if (failed(func.insertArgument(
              index, arenaType,
              attrs.getDictionaryAttr({attrs.getNamedAttr(
                  kArenaArgAttr, attrs.getStringAttr(tierName(tier)))}),
              func.getLoc())))
        return failure();
      arenas[static_cast<int>(tier)] = func.getArgument(index);
    }
    Block &body = func.getBody().front();
    OpBuilder b(ctx);
    // Where the micro-batches' places differ, the runtime passes the
    // micro-batch it runs (a trailing `memref<1xi64>` after the arenas) and
    // each such buffer's offset is read from a table by it.
    MicroBatchOffsets byMicroBatch;
    if (failed(byMicroBatch.build(func, *planned, source.microBatches)))
      return failure();
    for (const PlannedBuffer &p : *planned) {
      Operation *op = p.value.getDefiningOp();
      Location loc = p.owner->getLoc();
      Value arena = arenas[static_cast<int>(p.tier)];
      bool movement = isa_and_nonnull<FetchOp, SpillOp, ReloadOp>(op);
      if (movement && !p.inArena)
        continue; // its operand, where it is (the lowering's identity)
      if (movement) {
        // The copy lands where the plan put it; its readers read the copy.
        // A value made just before its spill and read only there, with no
        // place of its own (a sum rounded to go down, not an activation
        // the plan holds on the device too), is made in the spill's place:
        // its view comes before it, which adds no bytes' lifetime (the op
        // between writes only its own result, and reads nothing of the
        // host arena, whose bytes only spills write), and elimination of
        // the empty tensor then computes it there rather than in a buffer
        // copied over.
        Operation *source = op->getOperand(0).getDefiningOp();
        bool madeInPlace =
            isa<SpillOp>(op) && source && source->getNextNode() == op &&
            !isa<bufferization::MaterializeInDestinationOp>(source) &&
            op->getOperand(0).hasOneUse() &&
            llvm::none_of(source->getOperands(), [](Value v) {
              return isa_and_nonnull<SpillOp>(v.getDefiningOp());
            });
        b.setInsertionPoint(madeInPlace ? source : op);
        Value dest = arenaTensor(b, loc, arena, p.value.getType(),
                                 byMicroBatch.shift(b, loc, p));
        b.setInsertionPoint(op);
        auto copy = bufferization::MaterializeInDestinationOp::create(
            b, loc, op->getOperand(0), dest);
        op->getResult(0).replaceAllUsesWith(copy.getResult());
        op->erase();
        continue;
      }
      // Inputs are written into their places on entry; an op's result is
      // written after it, into a view made before it so that the op itself
      // can compute there.
      if (op)
        b.setInsertionPoint(op);
      else
        byMicroBatch.setInsertionPointAfterPrologue(b, body);
      Value dest = p.inArena
                       ? arenaTensor(b, loc, arena, p.value.getType(),
                                     byMicroBatch.shift(b, loc, p))
                       : bufferization::AllocTensorOp::create(
                             b, loc, cast<RankedTensorType>(p.value.getType()),
                             ValueRange{})
                             .getResult();
      if (op)
        b.setInsertionPointAfter(op);
      auto placed = bufferization::MaterializeInDestinationOp::create(
          b, loc, p.value, dest);
      Value value = p.value;
      value.replaceAllUsesExcept(placed.getResult(), placed);
    }
    // A spill or reload with no arena place (or whose place a partitioned
    // program moved to a private buffer) is its operand, here rather than
    // in the lowering, so that no placed one is left reading an unplaced
    // partner.
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<SpillOp, ReloadOp>(op)) {
        op.getResult(0).replaceAllUsesWith(op.getOperand(0));
        op.erase();
      }
    // The backward's readers of planned bytes compute into buffers of their
    // own, so no fusion carries those reads further.
    for (Operation *op : privateReaders) {
      Value result = op->getResult(0);
      auto type = cast<RankedTensorType>(result.getType());
      b.setInsertionPoint(op);
      Value dest = bufferization::AllocTensorOp::create(b, op->getLoc(), type, ValueRange{});
      b.setInsertionPointAfter(op);
      auto own = bufferization::MaterializeInDestinationOp::create(b, op->getLoc(), result, dest);
      result.replaceAllUsesExcept(own.getResult(), own);
    }
    // A release frees nothing on a CPU; a copy in the arena is not a
    // loom.fetch result any more.
    for (auto release : llvm::make_early_inc_range(body.getOps<ReleaseOp>()))
      release.erase();
    return success();
  }
};

} // namespace
