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
// Each planned value is redirected into a view of the arena in value
// semantics (materialize_in_destination into to_tensor of a memref.view);
// upstream eliminate-empty-tensors then lets its producer compute in place
// there, and one-shot bufferization copies only where it cannot (views,
// weights fetched into the arena). The materialization also keeps
// elementwise fusion from moving a producer's reads past its position,
// which the plan's lifetimes rely on.
//
// A training step's backward (--loom-autodiff) has no planned buffers: the
// plan does not model the gradients of activations. Its ops that read
// planned bytes (any unplanned loom op that does, which in practice is the
// backward's) get private buffers the same way, so that their reads stay
// where they are and their results are not views the closure would have to
// follow to the end of the step.
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

#include <array>

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
  int64_t offset = 0, bytes = 0;
  /// Positions in the function body (-1: an entry argument, written on
  /// entry): where it is written, and the last op reading it directly or
  /// through a value that may alias it after bufferization.
  int64_t defined = -1, lastRead = -1;
  Operation *lastReader = nullptr;
  /// False when a partitioned program reads an earlier buffer over its
  /// bytes while it lives: it gets a private allocation.
  bool inArena = true;
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

/// A writable tensor over the arena's bytes at `offset`, built at `b`'s
/// insertion point.
Value arenaTensor(OpBuilder &b, Location loc, Value arena, Type type,
                  int64_t offset) {
  auto tensor = cast<RankedTensorType>(type);
  Value shift = arith::ConstantIndexOp::create(b, loc, offset);
  auto memref = MemRefType::get(tensor.getShape(), tensor.getElementType());
  Value view = memref::ViewOp::create(b, loc, memref, arena, shift, ValueRange{});
  return bufferization::ToTensorOp::create(b, loc, tensor, view,
                                           /*restrict=*/true, /*writable=*/true);
}

/// Whether `op`'s result is a fresh buffer whose computation no fusion moves
/// past `op`: a contraction or reduction into a filled tensor, which
/// elementwise fusion cannot fold into a later reader.
bool endsReads(Operation *op) { return isa<MatmulOp, ReduceOp>(op); }

/// Whether `op`'s result may share its operands' bytes after bufferization:
/// views (reshape, slice), movement without a place (its source), and any
/// op of another dialect, which is not looked into.
bool mayView(Operation *op) {
  return isa<ReshapeOp, SliceOp, FetchOp, SpillOp, ReloadOp>(op) ||
         !isa<LoomDialect>(op->getDialect());
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

/// The planned buffers of `func`, with the positions they are live over in
/// the program as it is now (partitioning may have rewritten it since the
/// plan was made). A buffer is read until its last reader, or until the
/// last read of a reader's result that is not planned: after bufferization
/// that result may be a view of it (a reshape, a slice, an in-place
/// update). With `privateReaders` (a training step, whose backward has no
/// planned buffers), the loom ops that read planned bytes and are neither
/// planned, views nor endsReads get private buffers instead (they are
/// appended there), and the closure stops at them. Fails on a buffer that
/// does not fit its arena (`arenaBytes`, by Tier; host: -1 when the plan
/// has none).
FailureOr<std::vector<PlannedBuffer>>
collectPlanned(func::FuncOp func, std::array<int64_t, 2> arenaBytes,
               SmallVectorImpl<Operation *> *privateReaders = nullptr) {
  std::vector<PlannedBuffer> planned;
  auto add = [&](Value value, Operation *owner, std::string what, int64_t offset,
                 int64_t defined, Tier tier = Tier::Device) -> LogicalResult {
    int64_t arena = arenaBytes[static_cast<int>(tier)];
    if (arena <= 0)
      return owner->emitOpError()
             << what << " is planned at offset " << offset << " in the " << tierName(tier)
             << " arena, but the module's " << kMemoryPlanAttr << " gives no "
             << tierName(tier) << " arena size";
    FailureOr<int64_t> bytes = plannedBytes(owner, what, value.getType(), offset, tier, arena);
    if (failed(bytes))
      return failure();
    planned.push_back({value, owner, std::move(what), tier, offset, *bytes, defined, defined});
    return success();
  };
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    if (std::optional<int64_t> offset = forwardOffset(
            func.getArgAttrOfType<DictionaryAttr>(a, kOffsetsAttr), 0))
      if (failed(add(func.getArgument(a), func, "argument #" + std::to_string(a),
                     *offset, -1)))
        return failure();
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  // ZeRO-3's gathered weights take its slots in turn, in program order
  // (one that does not fit a slot is left to the allocator).
  auto module = func->getParentOfType<ModuleOp>();
  SmallVector<std::pair<int64_t, int64_t>> slots;
  while (auto slot = scratchBuffer(module, zeroGatherSlot(slots.size())))
    slots.push_back(*slot);
  int64_t gathered = 0;
  for (Operation &op : body) {
    if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      if (slots.empty() || !isGatheredWeight(gather))
        continue;
      auto [offset, bytes] = slots[gathered++ % slots.size()];
      std::optional<int64_t> need = staticTensorBytes(gather.getType());
      if (need && *need <= bytes &&
          failed(add(gather.getResult(), &op, "the gathered weight", offset,
                     position[&op])))
        return failure();
      continue;
    }
    if (isa<FetchOp, SpillOp, ReloadOp>(op)) {
      if (std::optional<int64_t> offset = movementOffset(&op))
        if (failed(add(op.getResult(0), &op,
                       isa<FetchOp>(op)   ? "the fetched weight"
                       : isa<SpillOp>(op) ? "the spilled activation's host copy"
                                          : "the reloaded activation",
                       *offset, position[&op], isa<SpillOp>(op) ? Tier::Host : Tier::Device)))
          return failure();
      continue;
    }
    auto offsets = op.getAttrOfType<DictionaryAttr>(kOffsetsAttr);
    for (OpResult result : op.getResults())
      if (std::optional<int64_t> offset =
              forwardOffset(offsets, result.getResultNumber()))
        if (failed(add(result, &op,
                       "result #" + std::to_string(result.getResultNumber()),
                       *offset, position[&op])))
          return failure();
  }

  llvm::DenseSet<Value> placed;
  for (const PlannedBuffer &p : planned)
    placed.insert(p.value);
  // The closure follows an unplanned result only where it may still hold
  // planned bytes: everywhere, or (privateReaders) through views.
  llvm::DenseSet<Operation *> followed;
  if (privateReaders) {
    llvm::DenseSet<Value> holdsPlanned(placed.begin(), placed.end());
    for (Operation &op : body) {
      if (op.getNumResults() == 0 || llvm::any_of(op.getResults(), [&](Value r) {
            return placed.contains(r);
          }))
        continue;
      if (llvm::none_of(op.getOperands(), [&](Value v) { return holdsPlanned.contains(v); }))
        continue;
      if (endsReads(&op))
        continue;
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!mayView(&op) && op.getNumResults() == 1 && type && type.hasStaticShape()) {
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
bool hasPlacedBuffers(func::FuncOp func) {
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    if (func.getArgAttr(a, kOffsetsAttr))
      return true;
  WalkResult found = func.walk([](Operation *op) {
    return op->hasAttr(kOffsetsAttr) || movementOffset(op) ? WalkResult::interrupt()
                                                             : WalkResult::advance();
  });
  return found.wasInterrupted();
}

struct ArenaBuffersPass
    : mlir::loom::impl::LoomArenaBuffersBase<ArenaBuffersPass> {
  using LoomArenaBuffersBase::LoomArenaBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp func : entryFunctions(module, entry)) {
      if (func.isExternal() || !hasPlacedBuffers(func))
        continue;
      std::optional<int64_t> bytes = arenaBytes(module);
      if (!bytes || *bytes <= 0) {
        func.emitOpError("has buffers placed by a static memory plan (")
            << kOffsetsAttr << " or loom.fetch ... at) but the module's "
            << kMemoryPlanAttr << " gives no device arena size";
        return signalPassFailure();
      }
      std::array<int64_t, 2> arenas = {*bytes, arenaBytes(module, "host").value_or(-1)};
      if (failed(convert(func, arenas, !module.getOps<shard::GridOp>().empty())))
        return signalPassFailure();
    }
  }

  LogicalResult convert(func::FuncOp func, std::array<int64_t, 2> bytes, bool partitioned) {
    SmallVector<Operation *> privateReaders;
    bool trainingStep = func->hasAttr(kDifferentiatedAttr);
    FailureOr<std::vector<PlannedBuffer>> planned =
        collectPlanned(func, bytes, trainingStep ? &privateReaders : nullptr);
    if (failed(planned))
      return failure();

    // Two buffers sharing a byte must not be live together. In the program
    // the plan was made for that is the plan's own check, and a failure
    // here is a wrong plan. A partitioned program may read a value later
    // than planned (the partitioner's canonicalization composes ops): the
    // later-written buffer then gets a private buffer instead, which is as
    // un-aliased as its arena place would have been, so nothing else moves.
    std::vector<const PlannedBuffer *> live;
    int64_t privateBuffers = 0;
    for (PlannedBuffer &w : *planned) {
      llvm::erase_if(live, [&](const PlannedBuffer *x) { return x->lastRead < w.defined; });
      const PlannedBuffer *clash = nullptr;
      for (const PlannedBuffer *x : live)
        if (x->tier == w.tier && x->offset < w.offset + w.bytes &&
            w.offset < x->offset + x->bytes)
          clash = x;
      if (clash && !partitioned) {
        InFlightDiagnostic diag = w.owner->emitOpError()
                                  << w.what << " is planned at bytes [" << w.offset
                                  << ", " << w.offset + w.bytes << "), which "
                                  << clash->what << " of the op below still holds";
        diag.attachNote(clash->owner->getLoc())
            << "planned at [" << clash->offset << ", " << clash->offset + clash->bytes << ")";
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
          << privateBuffers << " of " << planned->size()
          << " planned buffers get private ones: the partitioned program "
             "reads the arena bytes they were planned at later than the plan "
             "expects";

    // The arenas follow the other arguments, the device's first; the host's
    // only where something is spilled into it.
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    Value arenas[2];
    for (Tier tier : {Tier::Device, Tier::Host}) {
      if (tier == Tier::Host && llvm::none_of(*planned, [](const PlannedBuffer &p) {
            return p.tier == Tier::Host;
          }))
        continue;
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
    for (const PlannedBuffer &p : *planned) {
      Operation *op = p.value.getDefiningOp();
      Location loc = p.owner->getLoc();
      Value arena = arenas[static_cast<int>(p.tier)];
      bool movement = isa_and_nonnull<FetchOp, SpillOp, ReloadOp>(op);
      if (movement && !p.inArena)
        continue; // its operand, where it is (the lowering's identity)
      if (movement) {
        // The copy lands where the plan put it; its readers read the copy.
        b.setInsertionPoint(op);
        Value dest = arenaTensor(b, loc, arena, p.value.getType(), p.offset);
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
        b.setInsertionPointToStart(&body);
      Value dest =
          p.inArena ? arenaTensor(b, loc, arena, p.value.getType(), p.offset)
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
