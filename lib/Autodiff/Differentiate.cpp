//===- Differentiate.cpp - reverse-mode differentiation of loom functions -===//
//
// Implements include/loom/Autodiff/Differentiate.h. Activity first: a value
// is differentiated when it depends on a trainable parameter (varied) and a
// result depends on it (useful). Every active op must have a rule, which is
// checked before anything is written. Then the ops are visited in reverse,
// each rule turning its result's adjoint into its operands' adjoints, written
// in loom ops just before the return; adjoints of one value are summed.
//
// Rules recompute what they need from the forward's values (a layer norm's
// mean and reciprocal deviation, a softmax's output is its result): the
// forward stays as it was. Which activations are kept or recomputed, and
// when streamed weights move, is memory placement's decision, read from the
// IR: an op the plan recomputes is re-run at the backward turn placement
// charged it to (recomputePoints: its last reader's, so the chunk schedule
// has its streamed weights there; a re-run nothing reads is dropped), each
// backward step reads streamed weights through the fetches the chunk
// schedule issues before it, and an activation the plan offloads is spilled
// after the forward writes it and reloaded before the first backward step
// or re-run that reads it.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Differentiate.h"

#include "LoomOpWriter.h"

#include "dialects/Loom/IR/Gradients.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Cost/Estimate.h"
#include "loom/Cost/Recompute.h"
#include "loom/Memory/Movement.h"
#include "loom/Memory/StaticMemoryPlanIR.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::loom;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Ops whose result is their operand under another name: annotations and
/// fetched copies.
bool isIdentity(Operation *op) { return isa<shard::ShardOp, FetchOp>(op); }

/// Whether `op` has a rule for the operands that need one. An op that
/// produces only integers or booleans is never active.
bool hasRule(Operation *op) {
  if (isIdentity(op))
    return true;
  if (auto u = dyn_cast<UnaryOp>(op))
    return u.getKind() != UnaryKind::hard_sigmoid && u.getKind() != UnaryKind::hard_swish;
  if (auto b = dyn_cast<BinaryOp>(op))
    return b.getKind() == BinaryKind::add || b.getKind() == BinaryKind::sub ||
           b.getKind() == BinaryKind::mul || b.getKind() == BinaryKind::div ||
           b.getKind() == BinaryKind::max || b.getKind() == BinaryKind::min ||
           b.getKind() == BinaryKind::pow;
  if (auto r = dyn_cast<ReduceOp>(op))
    return r.getKind() == ReduceKind::sum || r.getKind() == ReduceKind::mean ||
           r.getKind() == ReduceKind::max || r.getKind() == ReduceKind::min ||
           r.getKind() == ReduceKind::sum_square;
  if (auto s = dyn_cast<SliceOp>(op))
    return llvm::all_of(s.getStrides(), [](int64_t st) { return st >= 1; });
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return !e.getRowOffset();
  if (auto c = dyn_cast<ConvOp>(op))
    return c.getGroups() == 1;
  return isa<WhereOp, ClampOp, CastOp, MatmulOp, LayerNormOp, RmsNormOp, SoftmaxOp,
             ReshapeOp, TransposeOp, ExpandOp, ConcatOp, GatherOp, PadOp, PoolOp,
             BatchNormOp>(op);
}

/// Where a streamed weight lies in its chunk's copies (its loom.placement's
/// `chunk_offset`), if placement planned offsets.
std::optional<int64_t> chunkOffset(WeightOp w) {
  auto placement = w->getAttrOfType<DictionaryAttr>("loom.placement");
  auto offset = placement ? placement.getAs<IntegerAttr>("chunk_offset") : nullptr;
  return offset ? std::optional<int64_t>(offset.getInt()) : std::nullopt;
}

/// Whether `op`'s one result is a ZeRO-3 gathered weight (a reader's
/// annotation of its stored shards), or a view of one alone (a transpose,
/// reshape, cast or broadcast of it).
bool readsGatheredWeightOnly(Operation *op) {
  if (auto s = dyn_cast<shard::ShardOp>(op))
    return s.getAnnotateForUsers() && isZeroShard(s);
  if (!isa<TransposeOp, ReshapeOp, CastOp, ExpandOp>(op) || op->getNumOperands() != 1)
    return false;
  Operation *def = op->getOperand(0).getDefiningOp();
  return def && readsGatheredWeightOnly(def);
}

/// The op as an error names it: with its kind, or what makes it unsupported.
std::string describe(Operation *op) {
  std::string name = "'" + op->getName().getStringRef().str() + "'";
  if (auto u = dyn_cast<UnaryOp>(op))
    return name + " " + stringifyUnaryKind(u.getKind()).str();
  if (auto bin = dyn_cast<BinaryOp>(op))
    return name + " " + stringifyBinaryKind(bin.getKind()).str();
  if (auto r = dyn_cast<ReduceOp>(op))
    return name + " " + stringifyReduceKind(r.getKind()).str();
  if (isa<SliceOp>(op))
    return name + " with negative strides";
  if (isa<ConvOp>(op))
    return name + " with groups";
  if (isa<EmbeddingOp>(op))
    return name + " with a row offset (a partitioned table)";
  return name;
}

class Differentiator : LoomOpWriter {
public:
  Differentiator(func::FuncOp func) : LoomOpWriter(func.getLoc(), func.getContext()), func(func) {}

  LogicalResult run();

private:
  // Activity.
  void findActive();
  bool active(Value v) const { return activeValues.contains(v); }

  // Building blocks, at the builder's location (more in LoomOpWriter).
  Value compare(ComparePredicate p, Value x, Value y) { return CompareOp::create(b, p, x, y); }
  Value select(Value condition, Value onTrue, Value onFalse) {
    return WhereOp::create(b, condition, onTrue, onFalse);
  }
  Value reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes) {
    return ReduceOp::create(b, kind, x, axes, /*keep_dims=*/true);
  }
  Value reshape(Value x, RankedTensorType type) {
    return x.getType() == type ? x : ReshapeOp::create(b, type, x);
  }
  Value transposeLastTwo(Value x);
  /// Sums a broadcast adjoint back to the shape of the operand it came from.
  Value sumTo(Value grad, RankedTensorType type);
  Value broadcastTo(Value x, RankedTensorType type) {
    return x.getType() == type ? x : ExpandOp::create(b, type, x);
  }

  /// Adds `grad` to the adjoint of `v` where `v` is active. `newOwner`:
  /// whether `v` counts as another value the adjoint belongs to (not where
  /// `v` is the source of a sharding annotation, the same value as far as
  /// the static memory plan is concerned).
  void accumulate(Value v, Value grad, bool newOwner = true);
  /// Once the backward is written: the op computing each forward result's
  /// final adjoint writes it where the static memory plan put that result's
  /// gradient (`gradient` of its `loom.offsets`, as that op's `forward`).
  void placeGradients(ArrayRef<Operation *> forwardOrder);
  /// Writes the operands' adjoints of `op` from its result's adjoint `g`.
  void backprop(Operation *op, Value g);
  void backpropUnary(UnaryOp op, Value g);
  void backpropBinary(BinaryOp op, Value g);
  void backpropMatmul(MatmulOp op, Value g);
  /// A layer norm (`centre`) or RMS norm over dims [axis, rank): the
  /// scale's and the input's adjoints.
  void backpropNorm(Value g, Value x, Value scale, int64_t axis, double eps, bool centre);
  void backpropSoftmax(SoftmaxOp op, Value g);
  void backpropReduce(ReduceOp op, Value g);
  void backpropEmbedding(EmbeddingOp op, Value g);
  void backpropGather(GatherOp op, Value g);
  void backpropPad(PadOp op, Value g);
  void backpropConv(ConvOp op, Value g);
  void backpropPool(PoolOp op, Value g);
  void backpropBatchNorm(BatchNormOp op, Value g);
  /// `g` placed in zeros of `shape` at `offsets`, its elements `strides`
  /// apart: result[offsets + i * strides] = g[i] (strides >= 1). The
  /// adjoint of a strided slice, and of each window position of a pool or
  /// convolution.
  Value placeStrided(Value g, ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> shape);
  /// `x` with dims 0 and 1 swapped (batch and channels of a convolution).
  Value swapLeadingDims(Value x);
  /// Scatter-adds `g` along `axis` into zeros of `type`, slice i of `g` at
  /// index `indices[i]` (an i64 vector as long as g's `axis`).
  Value scatterAddAlong(Value g, Value indices, int64_t axis, RankedTensorType type);

  // Memory placement's decisions, carried out as each backward step is
  // written.
  /// Whether the plan recomputes `op`'s results in the backward: it marks
  /// the op `loom.recompute`, or its static memory plan gives a result a
  /// backward buffer with no host copy (`loom.offsets`); never when the
  /// step returns its results (resultsHeldByStep). An annotation of a
  /// recomputed value is recomputed with it.
  bool recomputedByPlan(Operation *op) const;
  /// Writes the movement the chunk schedule issues before `op`'s backward
  /// step (`attr` kBackwardMovementAttr) or before its re-run
  /// (kRerunMovementAttr) at the builder, and drops the attribute.
  LogicalResult writeMovement(Operation *op, StringRef attr);
  /// Re-runs recomputed `op` at the builder, after the movement the chunk
  /// schedule issues before that, on its operands as the backward has them.
  LogicalResult rerun(Operation *op);
  /// Points the forward values read by `written` (one backward step's ops)
  /// at what the backward has of them: a re-run copy, a reload, a streamed
  /// weight's live fetch, or a ZeRO-3 weight gathered again (the reloads and
  /// gathers written before the step's first op).
  LogicalResult readPlannedCopies(ArrayRef<Operation *> written);
  /// `v` as the backward has it now, reloading it at the builder when the
  /// plan spilled it. `recomputing`: the re-run op that reads `v`, if any.
  FailureOr<Value> backwardCopy(Value v, Operation *recomputing = nullptr);
  /// Spills the activations the plan offloads to host memory after the
  /// forward writes them: at its host places in `loom.offsets`, or,
  /// pipelined, one per micro-batch in `loom.pipeline_offsets` (a copy
  /// another device receives, `loom.received_offsets`, is spilled before
  /// that device's first reader); without a static plan, every result of an
  /// op marked `loom.offload`.
  void spillOffloaded(ArrayRef<Operation *> forwardOrder);

  func::FuncOp func;
  DenseSet<Value> activeValues;
  /// Values a result depends on through float values only: a weight among
  /// them has a gradient, zeros where every path passes a rounding op, as
  /// PyTorch's leaf gets a `.grad` exactly then (none through a comparison
  /// or an argmax).
  DenseSet<Value> differentiablyUsed;
  DenseMap<Value, Value> adjoint;
  /// How many values each adjoint has been the adjoint of, final or not: a
  /// rule that passes its gradient on unchanged (an add's or sub's lhs, a
  /// fetch) makes it another value's too, read at that value's turn. A
  /// sharding annotation's source and result count as one.
  DenseMap<Value, int> adjointOwners;
  /// The devices of the plan's pipeline axis (0 without one).
  int64_t pipelineDevices = 0;
  DenseSet<Operation *> forwardOps;
  /// Each forward value the backward re-runs, and its copy; the ops
  /// re-run at each backward turn (recomputePoints), in program order.
  DenseMap<Value, Value> recomputed;
  DenseMap<Operation *, SmallVector<Operation *>> rerunsAt;
  SmallVector<Operation *> reruns;
  /// Each spilled activation's host copy, with its device place for the
  /// backward (the plan's `backward` offset), and its reload once the
  /// backward has read it. In a pipelined plan the spill is its pipeline
  /// device's and its places are one per micro-batch: `backwardPlaces`,
  /// written in the form of `like` (the plan's dictionary they came from:
  /// the value's kPipelineOffsetsAttr, or its kReceivedOffsetsAttr entry).
  /// The first backward turn on that device reading the value reloads it;
  /// another device reads its own copy.
  struct Spill {
    Value host;
    std::optional<int64_t> backwardOffset;
    Value reload;
    DictionaryAttr like;
    DenseI64ArrayAttr backwardPlaces;
  };
  /// By value and the pipeline device spilling it (null: a program without
  /// stages, whose spill every turn reads).
  using SpillKey = std::pair<Value, Attribute>;
  DenseMap<SpillKey, Spill> spills;
  /// The pipeline device running `stage` (none without stages).
  std::optional<int64_t> deviceIndex(Attribute stage) const {
    auto s = dyn_cast_or_null<IntegerAttr>(stage);
    if (!s || pipelineDevices <= 0)
      return std::nullopt;
    return s.getInt() % pipelineDevices;
  }
  /// deviceIndex as a spill's key (null without stages).
  Attribute deviceOf(Attribute stage) const {
    std::optional<int64_t> d = deviceIndex(stage);
    return d ? IntegerAttr::get(cast<IntegerAttr>(stage).getType(), *d)
             : Attribute();
  }
  /// The spill the backward turn being written reads `v` from, if any.
  std::optional<SpillKey> turnSpill(Value v) const;
  /// The pipeline stage of the backward turn being written (null in a
  /// program without stages, and at a sharding annotation's turn, which
  /// carries none).
  Attribute turnStage;
  /// What the backward turn being written has re-made of forward ops, by
  /// the op: ZeRO-3's gathers (and views of them).
  DenseMap<Operation *, Value> turnCopies;
  /// The annotations of reloaded values, re-made on the reload once (per
  /// spill), as the reload serves every later turn: a result annotated twice
  /// crashes upstream partitioning after loom-split-stages' propagation.
  DenseMap<std::pair<Operation *, Attribute>, Value> reloadAnnotations;
  /// Each streamed weight's live device copy, and the weights of each chunk.
  DenseMap<Value, Value> liveCopy;
  DenseMap<int64_t, SmallVector<WeightOp>> chunkWeights;
};

/// Marks `op` as computing a planned value at `forward`, in the form of
/// `like` (plannedOffsets of the op it stands for): a pipelined
/// plan's keeps its device, and `forward` holds a place per micro-batch.
static void setPlannedForward(Operation *op, DictionaryAttr like,
                              DenseI64ArrayAttr forward) {
  Builder b(op->getContext());
  SmallVector<NamedAttribute> entries{b.getNamedAttr("forward", forward)};
  Attribute device = like ? like.get("device") : Attribute();
  if (device)
    entries.push_back(b.getNamedAttr("device", device));
  op->setAttr(device ? kPipelineOffsetsAttr : kOffsetsAttr,
              b.getDictionaryAttr(entries));
}

bool Differentiator::recomputedByPlan(Operation *op) const {
  if (!forwardOps.contains(op) || isa<WeightOp, FetchOp, ReleaseOp, func::ReturnOp>(op))
    return false;
  if (auto s = dyn_cast<shard::ShardOp>(op)) {
    Operation *def = s.getSrc().getDefiningOp();
    return def && recomputedByPlan(def);
  }
  if (resultsHeldByStep(op))
    return false;
  if (op->hasAttr(kRecomputeMark))
    return true;
  return recomputedByOffsets(plannedOffsets(op));
}

std::optional<Differentiator::SpillKey>
Differentiator::turnSpill(Value v) const {
  for (SpillKey key :
       {SpillKey{v, deviceOf(turnStage)}, SpillKey{v, Attribute()}})
    if (spills.count(key))
      return key;
  return std::nullopt;
}

FailureOr<Value> Differentiator::backwardCopy(Value v, Operation *recomputing) {
  if (Value copy = recomputed.lookup(v))
    return copy;
  if (std::optional<SpillKey> key = turnSpill(v)) {
    Spill *spill = &spills.find(*key)->second;
    if (!spill->reload) {
      IntegerAttr offset = spill->backwardOffset
                               ? b.getI64IntegerAttr(*spill->backwardOffset)
                               : IntegerAttr();
      spill->reload =
          ReloadOp::create(b, v.getLoc(), v.getType(), spill->host, offset);
      if (spill->backwardPlaces)
        setPlannedForward(spill->reload.getDefiningOp(), spill->like,
                          spill->backwardPlaces);
    }
    return spill->reload;
  }
  Operation *def = v.getDefiningOp();
  if (!def || !forwardOps.contains(def))
    return v;
  // A spilled value read through its sharding annotations (a partitioned
  // program): the annotations again, on the reload.
  std::optional<SpillKey> spilled;
  if (auto annotation = dyn_cast<shard::ShardOp>(def);
      annotation && (spilled = turnSpill(lookThroughShards(v)))) {
    std::pair<Operation *, Attribute> key{annotation.getOperation(),
                                          spilled->second};
    if (Value copy = reloadAnnotations.lookup(key))
      return copy;
    // (The source's copy may add entries: no reference into the map is
    // held across it.)
    FailureOr<Value> source = backwardCopy(annotation.getSrc(), recomputing);
    if (failed(source))
      return failure();
    IRMapping map;
    map.map(annotation.getSrc(), *source);
    Value copy = b.clone(*annotation, map)->getResult(0);
    reloadAnnotations[key] = copy;
    return copy;
  }
  // ZeRO-3 gathers a stored weight again for each backward step reading it
  // (a new reader's annotation, numbered after the forward's), and re-derives
  // what the forward made of the gathered weight alone (a transpose), so the
  // forward's gathered copy dies after its forward reader.
  if (readsGatheredWeightOnly(def)) {
    if (Value copy = turnCopies.lookup(def))
      return copy;
    auto gathered = dyn_cast<shard::ShardOp>(def);
    // A gather reads the stored shard, or (streamed) the forward's fetch
    // of it: the chunk schedule's live copy then. (Its copy may add
    // entries: no reference into the map is held across it.)
    IRMapping map;
    FailureOr<Value> operand = backwardCopy(def->getOperand(0), recomputing);
    if (failed(operand))
      return failure();
    map.map(def->getOperand(0), *operand);
    // The new reader's number: after every reader the shard has so far.
    int64_t readers =
        gathered ? llvm::count_if(operand->getUsers(),
                                  [](Operation *user) {
                                    auto s = dyn_cast<shard::ShardOp>(user);
                                    return s && s.getAnnotateForUsers();
                                  })
                 : 0;
    Operation *again = b.clone(*def, map);
    again->removeAttr(kOffsetsAttr);
    if (gathered)
      again->setAttr(kZeroShardMark, b.getI64IntegerAttr(readers));
    turnCopies[def] = again->getResult(0);
    return again->getResult(0);
  }
  if (FetchOp fetch = fetchOf(v)) {
    Value copy = liveCopy.lookup(fetch.getSource());
    if (!copy) {
      auto w = fetch.getSource().getDefiningOp<WeightOp>();
      InFlightDiagnostic diag =
          emitError(b.getLoc(), "loom-autodiff: the backward reads streamed weight '")
          << (w ? w.getName() : StringRef("?"))
          << "' where the chunk schedule has released it and not fetched it back";
      if (recomputing)
        diag << " (to re-run '" << recomputing->getName() << "' for the backward)";
      return diag;
    }
    return copy;
  }
  if (recomputedByPlan(def))
    return def->emitOpError("loom-autodiff: the backward reads this op's result, which the "
                            "plan recomputes, before the turn that re-runs it");
  return v;
}

LogicalResult Differentiator::rerun(Operation *op) {
  if (failed(writeMovement(op, kRerunMovementAttr)))
    return failure();
  IRMapping map;
  for (Value operand : op->getOperands()) {
    b.setLoc(op->getLoc());
    FailureOr<Value> copy = backwardCopy(operand, op);
    if (failed(copy))
      return failure();
    map.map(operand, *copy);
  }
  Operation *clone = b.clone(*op, map);
  for (StringRef mark :
       {StringRef(kOffsetsAttr), StringRef(kPipelineOffsetsAttr),
        StringRef(kRecomputeMark), StringRef(kOffloadMark),
        StringRef(kBackwardMovementAttr)})
    clone->removeAttr(mark);
  // The re-run writes where the static memory plan put the recomputed
  // value: its `backward` place is the clone's forward one. In a pipelined
  // plan that is a place per micro-batch, taken only where every
  // micro-batch has one; the run loop also drops the place of a re-run
  // written in another stage's backward.
  DictionaryAttr offsets = plannedOffsets(op);
  auto backward =
      offsets ? offsets.getAs<DenseI64ArrayAttr>("backward") : nullptr;
  bool pipelined = offsets && offsets.get("device");
  auto placed = [](int64_t at) { return at >= 0; };
  if (backward && (pipelined ? llvm::all_of(backward.asArrayRef(), placed)
                             : llvm::any_of(backward.asArrayRef(), placed)))
    setPlannedForward(clone, offsets, backward);
  for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
    recomputed[from] = to;
  reruns.push_back(clone);
  return success();
}

LogicalResult Differentiator::readPlannedCopies(ArrayRef<Operation *> written) {
  if (written.empty())
    return success();
  // Reloads go before the step's first op.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(written.front());
  for (Operation *op : written)
    for (OpOperand &operand : op->getOpOperands()) {
      b.setLoc(op->getLoc());
      FailureOr<Value> copy = backwardCopy(operand.get());
      if (failed(copy))
        return failure();
      operand.set(*copy);
    }
  return success();
}

LogicalResult Differentiator::writeMovement(Operation *op, StringRef attr) {
  auto movement = op->getAttrOfType<DictionaryAttr>(attr);
  if (!movement)
    return success();
  auto release = movement.getAs<DenseI64ArrayAttr>("release");
  auto fetch = movement.getAs<DenseI64ArrayAttr>("fetch");
  auto at = movement.getAs<DenseI64ArrayAttr>("at");
  if (!release || !fetch || !at || (!at.empty() && at.size() != fetch.size()))
    return op->emitOpError("loom-autodiff: malformed ")
           << attr
           << " (wants release, fetch and at arrays, `at` empty or one per fetch)";
  for (int64_t chunk : release.asArrayRef())
    for (WeightOp w : chunkWeights.lookup(chunk)) {
      Value copy = liveCopy.lookup(fetchedValue(w));
      if (!copy)
        return op->emitOpError("loom-autodiff: the chunk schedule releases chunk ")
               << chunk << " before this op's backward, but weight '" << w.getName()
               << "' has no live copy there";
      ReleaseOp::create(b, w.getLoc(), copy);
      liveCopy.erase(fetchedValue(w));
    }
  for (auto [i, chunk] : llvm::enumerate(fetch.asArrayRef())) {
    auto found = chunkWeights.find(chunk);
    if (found == chunkWeights.end())
      return op->emitOpError("loom-autodiff: the chunk schedule fetches chunk ")
             << chunk << ", which no weight's loom.placement names";
    for (WeightOp w : found->second) {
      Value source = fetchedValue(w); // its ZeRO-3 shard, when stored so
      if (liveCopy.count(source))
        return op->emitOpError("loom-autodiff: the chunk schedule fetches weight '")
               << w.getName() << "' before this op's backward while its copy is live";
      IntegerAttr offset;
      if (!at.empty()) {
        std::optional<int64_t> inChunk = chunkOffset(w);
        if (!inChunk)
          return w.emitOpError("loom-autodiff: streamed weight has no chunk_offset in its "
                               "loom.placement to place its backward fetch");
        offset = b.getI64IntegerAttr(at[i] + *inChunk);
      }
      liveCopy[source] = createFetch(b, w.getLoc(), source, chunk, /*carried=*/false, offset);
    }
  }
  op->removeAttr(attr);
  return success();
}

void Differentiator::spillOffloaded(ArrayRef<Operation *> forwardOrder) {
  OpBuilder::InsertionGuard guard(b);
  auto placed = [](int64_t at) { return at >= 0; };
  // A pipelined plan's offsets hold a place per micro-batch: the value is
  // spilled into its host places (every micro-batch has one: checked up
  // front) in `stage`, one on the offsets' device, once per device, and
  // reloaded at its `backward` places where every micro-batch has one.
  auto spill = [&](Value v, DictionaryAttr offsets, unsigned index,
                   unsigned results, Attribute stage) {
    b.setLoc(v.getLoc());
    if (!offsets || !offsets.get("device")) {
      std::optional<int64_t> host = resultOffset(offsets, "host", index);
      IntegerAttr at = host ? b.getI64IntegerAttr(*host) : IntegerAttr();
      spills[{v, Attribute()}] = {
          SpillOp::create(b, v.getType(), v, at).getResult(),
          resultOffset(offsets, "backward", index), Value()};
      return;
    }
    // (A value no stage reads on that device is not spilled; nor is one
    // spilled there already.)
    SpillKey key{v, deviceOf(stage)};
    auto host = offsets.getAs<DenseI64ArrayAttr>("host");
    auto backward = offsets.getAs<DenseI64ArrayAttr>("backward");
    if (!key.second || !host || spills.count(key))
      return;
    SmallVector<int64_t> hostPlaces =
        resultPlaces(host.asArrayRef(), results, index);
    SmallVector<int64_t> backwardPlaces =
        backward ? resultPlaces(backward.asArrayRef(), results, index)
                 : SmallVector<int64_t>();
    if (!llvm::all_of(hostPlaces, placed))
      return;
    auto op = SpillOp::create(b, v.getType(), v, IntegerAttr());
    op->setAttr(
        kPipelineOffsetsAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("device", offsets.get("device")),
             b.getNamedAttr("host", b.getDenseI64ArrayAttr(hostPlaces))}));
    op->setAttr(kStageAttr, stage);
    DenseI64ArrayAttr reloadPlaces;
    if (!backwardPlaces.empty() && llvm::all_of(backwardPlaces, placed))
      reloadPlaces = b.getDenseI64ArrayAttr(backwardPlaces);
    spills[key] = {op.getResult(), std::nullopt, Value(), offsets,
                   reloadPlaces};
  };
  // The first forward op (of a stage on pipeline device `device`, where
  // given) reading `v`, directly or through its sharding annotations (which
  // carry no stage).
  std::function<Operation *(Value, std::optional<int64_t>)> firstReader =
      [&](Value v, std::optional<int64_t> device) {
        Operation *first = nullptr;
        for (Operation *user : v.getUsers()) {
          Operation *reader = nullptr;
          if (auto annotation = dyn_cast<shard::ShardOp>(user))
            reader = firstReader(annotation.getResult(), device);
          else if (forwardOps.contains(user) &&
                   (!device ||
                    deviceIndex(user->getAttr(kStageAttr)) == device))
            reader = user;
          if (reader && (!first || reader->isBeforeInBlock(first)))
            first = reader;
        }
        return first;
      };
  // In a pipelined plan a spill goes after its value's own sharding
  // annotation (`shard.shard %v to S`, not for users): loom-split-stages
  // has every later reader read that annotation, since a second one
  // crashes upstream partitioning.
  auto ownAnnotation = [](Value v) -> Operation * {
    for (Operation *user : v.getUsers())
      if (auto a = dyn_cast<shard::ShardOp>(user);
          a && !a.getAnnotateForUsers())
        return a;
    return nullptr;
  };
  // The copies other pipeline devices receive and their plans offload
  // (`loom.received_offsets`), each spilled before the device's first
  // reader, in its stage: loom-split-stages receives the value before the
  // spill, and the host copy never crosses devices.
  auto spillReceived = [&](Value v, ArrayAttr received, unsigned index,
                           unsigned results) {
    for (auto entry : received.getAsRange<DictionaryAttr>()) {
      auto device = entry.getAs<IntegerAttr>("device");
      if (!device || !offloadedByPlan(entry))
        continue;
      if (Operation *reader = firstReader(v, device.getInt())) {
        b.setInsertionPoint(reader);
        spill(v, entry, index, results, reader->getAttr(kStageAttr));
      }
    }
  };
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (auto received =
            func.getArgAttrOfType<ArrayAttr>(i, kReceivedOffsetsAttr))
      spillReceived(arg, received, 0, 1);
    auto offsets = func.getArgAttrOfType<DictionaryAttr>(i, kOffsetsAttr);
    if (!offsets)
      offsets = func.getArgAttrOfType<DictionaryAttr>(i, kPipelineOffsetsAttr);
    if (!offloadedByPlan(offsets))
      continue;
    Operation *own = offsets.get("device") ? ownAnnotation(arg) : nullptr;
    if (own)
      b.setInsertionPointAfter(own);
    else
      b.setInsertionPointToStart(&func.getBody().front());
    // Spilled by the first stage reading it on the plan's device.
    std::optional<int64_t> device;
    if (auto d = offsets.getAs<IntegerAttr>("device"))
      device = d.getInt();
    Operation *reader = firstReader(arg, device);
    spill(arg, offsets, 0, 1,
          reader ? reader->getAttr(kStageAttr) : Attribute());
  }
  for (Operation *op : forwardOrder) {
    DictionaryAttr offsets = plannedOffsets(op);
    unsigned results = op->getNumResults();
    if (auto received = op->getAttrOfType<ArrayAttr>(kReceivedOffsetsAttr))
      for (OpResult r : op->getResults())
        spillReceived(r, received, r.getResultNumber(), results);
    bool planned = offloadedByPlan(offsets);
    // A mark without a plan moves what the backward could read of the
    // op's results: not a weight's, a returned or a recomputed one.
    bool marked = op->hasAttr(kOffloadMark) && !offsets && !isa<WeightOp, ConstantOp>(op) &&
                  !resultsHeldByStep(op) && !recomputedByPlan(op);
    if (!planned && !marked)
      continue;
    Operation *after = op;
    if (offsets && offsets.get("device"))
      for (Value r : op->getResults())
        if (Operation *own = ownAnnotation(r);
            own && after->isBeforeInBlock(own))
          after = own;
    b.setInsertionPointAfter(after);
    for (OpResult r : op->getResults()) {
      unsigned index = r.getResultNumber();
      if (!planned ? isFloatTensor(r.getType())
                   : offloadedResult(offsets, results, index))
        spill(r, offsets, index, results, op->getAttr(kStageAttr));
    }
  }
}

void Differentiator::findActive() {
  Block &body = func.getBody().front();
  DenseSet<Value> varied = valuesFromParameters(body);
  // Useful: a result reads it, walking back from the return.
  DenseSet<Value> useful;
  for (Operation &op : llvm::reverse(body))
    if (isa<func::ReturnOp>(op) || llvm::any_of(op.getResults(), [&](Value r) {
          return useful.contains(r);
        }))
      for (Value v : op.getOperands())
        useful.insert(v);
  for (Operation &op : body)
    for (Value r : op.getResults())
      if (varied.contains(r) && useful.contains(r))
        activeValues.insert(r);
  differentiablyUsed = readByResults(body, varied);
}

Value Differentiator::transposeLastTwo(Value x) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 2], perm[rank - 1]);
  return TransposeOp::create(b, x, b.getDenseI64ArrayAttr(perm));
}

Value Differentiator::sumTo(Value grad, RankedTensorType type) {
  RankedTensorType from = tensorType(grad);
  if (from == type)
    return grad;
  int64_t lead = from.getRank() - type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < from.getRank(); ++i)
    if (i < lead || (type.getDimSize(i - lead) == 1 && from.getDimSize(i) != 1))
      axes.push_back(i);
  Value summed = axes.empty() ? grad : reduce(ReduceKind::sum, grad, axes);
  return reshape(summed, type);
}

void Differentiator::accumulate(Value v, Value grad, bool newOwner) {
  if (!active(v))
    return;
  assert(grad.getType() == v.getType() && "an adjoint has its value's type");
  auto [it, fresh] = adjoint.try_emplace(v, grad);
  if (!fresh)
    it->second = add(it->second, grad);
  if (newOwner || !fresh)
    ++adjointOwners[it->second];
}

void Differentiator::placeGradients(ArrayRef<Operation *> forwardOrder) {
  // The plan holds a result's gradient from the backward of its last
  // reader to its own op's backward; the final adjoint is written by the
  // first reader's backward and read by its own op's, within that. Only an
  // adjoint that was never another value's too (an add passes its gradient
  // to both operands; a weight's is returned; a value whose adjoint it was
  // first adds to it at a later turn) and that nothing reads as a view
  // (which would carry its bytes to a later value's backward) is placed.
  // A pipelined plan's `gradient` holds a place per micro-batch (then per
  // result): a gradient is placed where it has one in every micro-batch.
  Builder attrs(func.getContext());
  for (Operation *op : forwardOrder) {
    DictionaryAttr offsets = plannedOffsets(op);
    auto gradient =
        offsets ? offsets.getAs<DenseI64ArrayAttr>("gradient") : nullptr;
    unsigned results = op->getNumResults();
    if (!gradient || results == 0 || gradient.size() % results != 0)
      continue;
    for (OpResult r : op->getResults()) {
      SmallVector<int64_t> at =
          resultPlaces(gradient.asArrayRef(), results, r.getResultNumber());
      Value g = adjoint.lookup(r);
      Operation *def = g ? g.getDefiningOp() : nullptr;
      if (llvm::any_of(at, [](int64_t o) { return o < 0; }) || !def ||
          adjointOwners.lookup(g) != 1 || forwardOps.contains(def) ||
          mayShareOperandBytes(def) || isa<ConstantOp>(def) ||
          def->getNumResults() != 1 || plannedOffsets(def) ||
          llvm::any_of(g.getUsers(), mayShareOperandBytes))
        continue;
      // A pipelined plan holds the gradient on the value's own device: the
      // op must run in the backward of the value's stage.
      if (offsets.get("device") && op->getAttr(kStageAttr) != def->getAttr(kStageAttr))
        continue;
      setPlannedForward(def, offsets, attrs.getDenseI64ArrayAttr(at));
    }
  }
}

void Differentiator::backpropUnary(UnaryOp op, Value g) {
  Value input = op.getInput();
  Value x = input, y = op.getResult();
  // A 16-bit float's derivative is computed in float32 and rounded once, as
  // PyTorch's kernels compute it (its several ops in the narrow type would
  // round each). The kinds below whose derivative is one op or exact keep
  // the narrow type: the lowering computes a single op in float32 anyway.
  Type narrow = tensorType(x).getElementType();
  SmallVector<Operation *, 3> widened;
  auto widen = [&](Value &v) {
    v = CastOp::create(b, tensorType(v).clone(b.getF32Type()), v);
    widened.push_back(v.getDefiningOp());
  };
  switch (op.getKind()) {
  case UnaryKind::identity:
  case UnaryKind::neg:
  case UnaryKind::abs:
  case UnaryKind::exp:
  case UnaryKind::log:
  case UnaryKind::relu:
  case UnaryKind::floor:
  case UnaryKind::ceil:
  case UnaryKind::round:
  case UnaryKind::sign:
    break;
  default:
    if (isa<BFloat16Type, Float16Type>(narrow)) {
      widen(x);
      widen(y);
      widen(g);
    }
  }
  Value dx;
  switch (op.getKind()) {
  case UnaryKind::identity:
    dx = g;
    break;
  case UnaryKind::neg:
    dx = unary(UnaryKind::neg, g);
    break;
  case UnaryKind::abs:
    dx = mul(g, unary(UnaryKind::sign, x));
    break;
  case UnaryKind::exp:
    dx = mul(g, y);
    break;
  case UnaryKind::log:
    dx = div(g, x);
    break;
  case UnaryKind::sqrt: // g / (2 sqrt(x))
    dx = div(mulScalar(g, 0.5), y);
    break;
  case UnaryKind::rsqrt: // -g / 2 * x^(-3/2)
    dx = mul(mulScalar(g, -0.5), mul(y, mul(y, y)));
    break;
  case UnaryKind::reciprocal:
    dx = unary(UnaryKind::neg, mul(g, mul(y, y)));
    break;
  case UnaryKind::relu:
    dx = select(compare(ComparePredicate::gt, x, scalar(0.0, x)), g, scalar(0.0, g));
    break;
  case UnaryKind::sigmoid: // y (1 - y)
    dx = mul(g, mul(y, sub(scalar(1.0, y), y)));
    break;
  case UnaryKind::tanh: // 1 - y^2
    dx = mul(g, sub(scalar(1.0, y), mul(y, y)));
    break;
  case UnaryKind::silu: { // s (1 + x (1 - s)), s = sigmoid(x)
    Value s = unary(UnaryKind::sigmoid, x);
    Value one = scalar(1.0, x);
    dx = mul(g, mul(s, add(one, mul(x, sub(one, s)))));
    break;
  }
  case UnaryKind::softplus:
    dx = mul(g, unary(UnaryKind::sigmoid, x));
    break;
  case UnaryKind::gelu: { // Phi(x) + x phi(x)
    Value cdf = mulScalar(add(scalar(1.0, x), unary(UnaryKind::erf, mulScalar(x, M_SQRT1_2))), 0.5);
    Value pdf = mulScalar(unary(UnaryKind::exp, mulScalar(mul(x, x), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
    dx = mul(g, add(cdf, mul(x, pdf)));
    break;
  }
  case UnaryKind::gelu_tanh: { // t = tanh(c (x + a x^3))
    const double c = M_SQRT2 * M_2_SQRTPI * 0.5, a = 0.044715;
    Value x2 = mul(x, x);
    Value inner = mulScalar(add(x, mulScalar(mul(x2, x), a)), c);
    Value t = unary(UnaryKind::tanh, inner);
    Value one = scalar(1.0, x);
    Value left = mulScalar(add(one, t), 0.5);
    Value slope = mulScalar(add(one, mulScalar(x2, 3 * a)), c);
    Value right = mul(mulScalar(x, 0.5), mul(sub(one, mul(t, t)), slope));
    dx = mul(g, add(left, right));
    break;
  }
  case UnaryKind::erf: // 2/sqrt(pi) exp(-x^2)
    dx = mul(g, mulScalar(unary(UnaryKind::exp, unary(UnaryKind::neg, mul(x, x))), M_2_SQRTPI));
    break;
  case UnaryKind::sin:
    dx = mul(g, unary(UnaryKind::cos, x));
    break;
  case UnaryKind::cos:
    dx = unary(UnaryKind::neg, mul(g, unary(UnaryKind::sin, x)));
    break;
  case UnaryKind::floor: // derivative zero almost everywhere
  case UnaryKind::ceil:
  case UnaryKind::round:
  case UnaryKind::sign:
    return;
  default:
    llvm_unreachable("hasRule admits only these kinds");
  }
  if (!widened.empty()) {
    dx = CastOp::create(b, tensorType(input), dx);
    for (Operation *cast : widened)
      if (cast->use_empty())
        cast->erase();
  }
  accumulate(input, dx);
}

void Differentiator::backpropBinary(BinaryOp op, Value g) {
  Value x = op.getLhs(), y = op.getRhs(), out = op.getResult();
  auto both = [&](Value dx, Value dy) {
    if (dx && active(x))
      accumulate(x, sumTo(dx, tensorType(x)));
    if (dy && active(y))
      accumulate(y, sumTo(dy, tensorType(y)));
  };
  switch (op.getKind()) {
  case BinaryKind::add:
    return both(g, g);
  case BinaryKind::sub:
    return both(g, active(y) ? unary(UnaryKind::neg, g) : Value());
  case BinaryKind::mul:
    return both(active(x) ? mul(g, y) : Value(), active(y) ? mul(g, x) : Value());
  case BinaryKind::div: // d/dy (x / y) = -out / y
    return both(active(x) ? div(g, y) : Value(),
                active(y) ? unary(UnaryKind::neg, div(mul(g, out), y)) : Value());
  case BinaryKind::max:
  case BinaryKind::min: { // ties split the adjoint evenly, as PyTorch does
    bool isMax = op.getKind() == BinaryKind::max;
    auto share = [&](Value wins) {
      Value equal = CastOp::create(b, tensorType(g), compare(ComparePredicate::eq, x, y));
      Value won = CastOp::create(b, tensorType(g), wins);
      return mul(g, add(won, mulScalar(equal, 0.5)));
    };
    return both(active(x) ? share(compare(isMax ? ComparePredicate::gt : ComparePredicate::lt, x, y))
                          : Value(),
                active(y) ? share(compare(isMax ? ComparePredicate::lt : ComparePredicate::gt, x, y))
                          : Value());
  }
  case BinaryKind::pow: { // x^y: y x^(y-1) and out log(x)
    Value dx, dy, zero = scalar(0.0, g);
    if (active(x))
      dx = select(compare(ComparePredicate::eq, y, zero), zero,
                  mul(g, mul(y, binary(BinaryKind::pow, x, sub(y, scalar(1.0, y))))));
    if (active(y)) { // 0^y is 0 for y > 0 and 1 at y = 0, flat in y either way
      Value flat = BinaryOp::create(b, BinaryKind::logical_and,
                                    compare(ComparePredicate::eq, x, zero),
                                    compare(ComparePredicate::ge, y, zero));
      dy = select(flat, zero, mul(g, mul(out, unary(UnaryKind::log, x))));
    }
    return both(dx, dy);
  }
  default:
    llvm_unreachable("hasRule admits only these kinds");
  }
}

void Differentiator::backpropMatmul(MatmulOp op, Value g) {
  Value x = op.getLhs(), w = op.getRhs();
  RankedTensorType xt = tensorType(x), wt = tensorType(w);
  if (active(x))
    accumulate(x, sumTo(MatmulOp::create(b, g, transposeLastTwo(w)), xt));
  if (!active(w))
    return;
  if (wt.getRank() == 2 && xt.getRank() > 2) {
    // A linear layer: fold the batch dimensions into the rows, one [K, N]
    // product rather than a batched one summed afterwards.
    int64_t rows = xt.getNumElements() / xt.getDimSize(xt.getRank() - 1);
    Type elt = xt.getElementType();
    Value x2 = reshape(x, RankedTensorType::get({rows, wt.getDimSize(0)}, elt));
    Value g2 = reshape(g, RankedTensorType::get({rows, wt.getDimSize(1)}, elt));
    accumulate(w, MatmulOp::create(b, transposeLastTwo(x2), g2));
    return;
  }
  accumulate(w, sumTo(MatmulOp::create(b, transposeLastTwo(x), g), wt));
}

/// Dims [axis, rank): those a norm normalizes over.
static SmallVector<int64_t> trailingAxes(int64_t axis, int64_t rank) {
  SmallVector<int64_t> axes(rank - axis);
  std::iota(axes.begin(), axes.end(), axis);
  return axes;
}

void Differentiator::backpropNorm(Value g, Value x, Value scale, int64_t axis, double eps,
                                  bool centre) {
  SmallVector<int64_t> axes = trailingAxes(axis, tensorType(x).getRank());
  Value centred = centre ? sub(x, reduce(ReduceKind::mean, x, axes)) : x;
  Value inverse = unary(UnaryKind::rsqrt, add(reduce(ReduceKind::mean, mul(centred, centred), axes),
                                              scalar(eps, x)));
  Value normed = mul(centred, inverse);
  if (scale && active(scale))
    accumulate(scale, sumTo(mul(g, normed), tensorType(scale)));
  if (!active(x))
    return;
  // dx = inverse (gx - normed mean(gx normed) [- mean(gx) when centred]),
  // gx = g scale
  Value gx = scale ? mul(g, scale) : g;
  Value inner = sub(gx, mul(normed, reduce(ReduceKind::mean, mul(gx, normed), axes)));
  if (centre)
    inner = sub(inner, reduce(ReduceKind::mean, gx, axes));
  accumulate(x, mul(inverse, inner));
}

void Differentiator::backpropSoftmax(SoftmaxOp op, Value g) {
  Value y = op.getResult();
  int64_t axis = op.getAxis();
  if (op.getLog()) { // g - softmax(x) sum(g)
    accumulate(op.getInput(),
               sub(g, mul(unary(UnaryKind::exp, y), reduce(ReduceKind::sum, g, {axis}))));
    return;
  }
  // y (g - sum(g y))
  accumulate(op.getInput(), mul(y, sub(g, reduce(ReduceKind::sum, mul(g, y), {axis}))));
}

void Differentiator::backpropReduce(ReduceOp op, Value g) {
  Value x = op.getInput();
  RankedTensorType xt = tensorType(x);
  ArrayRef<int64_t> axes = op.getAxes();
  // The adjoint with the reduced dims kept, then spread over them.
  SmallVector<int64_t> keptShape(xt.getShape());
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= keptShape[a];
    keptShape[a] = 1;
  }
  auto kept = RankedTensorType::get(keptShape, xt.getElementType());
  Value gk = reshape(g, kept);
  Value dx;
  switch (op.getKind()) {
  case ReduceKind::sum:
    dx = broadcastTo(gk, xt);
    break;
  case ReduceKind::mean:
    dx = broadcastTo(mulScalar(gk, 1.0 / double(count)), xt);
    break;
  case ReduceKind::sum_square:
    dx = mul(mulScalar(x, 2.0), gk);
    break;
  case ReduceKind::max:
  case ReduceKind::min: { // the elements equal to the extreme share the adjoint
    Value extreme = compare(ComparePredicate::eq, x, reshape(op.getResult(), kept));
    Value ties = reduce(ReduceKind::sum, CastOp::create(b, xt, extreme), axes);
    dx = select(extreme, broadcastTo(div(gk, ties), xt), scalar(0.0, x));
    break;
  }
  default:
    llvm_unreachable("hasRule admits only these kinds");
  }
  accumulate(x, dx);
}

void Differentiator::backpropEmbedding(EmbeddingOp op, Value g) {
  // Rows add up where they were looked up: a scatter-add of the adjoint's
  // rows into a zero table, each row indexed by its id along dim 0.
  Value table = op.getTable(), ids = op.getIndices();
  RankedTensorType tt = tensorType(table), it = tensorType(ids);
  int64_t n = it.getNumElements(), h = tt.getDimSize(1);
  Value rowIds = reshape(ids, RankedTensorType::get({n}, it.getElementType()));
  Value rows = reshape(g, RankedTensorType::get({n, h}, tt.getElementType()));
  accumulate(table, scatterAddAlong(rows, rowIds, /*axis=*/0, tt));
}

Value Differentiator::scatterAddAlong(Value g, Value indices, int64_t axis,
                                      RankedTensorType type) {
  RankedTensorType gt = tensorType(g), it = tensorType(indices);
  SmallVector<int64_t> column(gt.getRank(), 1);
  column[axis] = gt.getDimSize(axis);
  Value index = broadcastTo(reshape(indices, RankedTensorType::get(column, it.getElementType())),
                            RankedTensorType::get(gt.getShape(), it.getElementType()));
  return ScatterOp::create(b, zeros(type), index, g, axis,
                           BinaryKindAttr::get(b.getContext(), BinaryKind::add));
}

void Differentiator::backpropGather(GatherOp op, Value g) {
  // Slices add up where they were gathered. The index dims of the adjoint
  // are flattened into one (a scalar index gives a dim of 1), and each
  // slice is scatter-added at its index, negative ones wrapped as the
  // gather read them.
  RankedTensorType dt = tensorType(op.getData()), it = tensorType(op.getIndices());
  const int64_t axis = op.getAxis(), k = it.getNumElements();
  SmallVector<int64_t> flat(dt.getShape());
  flat[axis] = k;
  Value slices = reshape(g, RankedTensorType::get(flat, dt.getElementType()));
  Value indices = reshape(op.getIndices(), RankedTensorType::get({k}, it.getElementType()));
  accumulate(op.getData(), scatterAddAlong(slices, indices, axis, dt));
}

/// The input index that padded index `i` reads in a dim of (cropped)
/// length n with `lo` pads in front, as the lowering's padSourceIndex:
/// numpy's reflect (mirror without repeating the edge), edge and wrap.
static int64_t padSource(PadMode mode, int64_t i, int64_t lo, int64_t n) {
  auto positiveMod = [](int64_t x, int64_t period) { return ((x % period) + period) % period; };
  int64_t j = i - lo;
  switch (mode) {
  case PadMode::edge:
    return std::clamp<int64_t>(j, 0, n - 1);
  case PadMode::wrap:
    return positiveMod(j, n);
  case PadMode::reflect: {
    if (n == 1)
      return 0;
    int64_t r = positiveMod(j, 2 * (n - 1));
    return r >= n ? 2 * (n - 1) - r : r;
  }
  case PadMode::constant:
    break;
  }
  return j;
}

void Differentiator::backpropPad(PadOp op, Value g) {
  RankedTensorType in = tensorType(op.getInput());
  const int64_t rank = in.getRank();
  ArrayRef<int64_t> pads = op.getPadding();
  // Constant padding: the adjoint cut back (and zeros where the pad cropped).
  if (op.getMode() == PadMode::constant) {
    SmallVector<int64_t> back;
    for (int64_t p : pads)
      back.push_back(-p);
    return accumulate(op.getInput(),
                      PadOp::create(b, PadMode::constant, g, back, APFloat(0.0)));
  }
  // Reflect, edge, wrap: as lowered, negative pads crop first, then every
  // padded index reads one input index; dim by dim, the adjoint's slices
  // are scatter-added at the indices they read, then zeros fill the crop.
  SmallVector<int64_t> shape(tensorType(g).getShape()), crop(2 * rank, 0);
  bool cropped = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    crop[d] = std::max<int64_t>(0, -begin);
    crop[rank + d] = std::max<int64_t>(0, -end);
    cropped |= begin < 0 || end < 0;
    int64_t n = in.getDimSize(d) - crop[d] - crop[rank + d];
    int64_t lo = std::max<int64_t>(0, begin), hi = std::max<int64_t>(0, end);
    if (lo == 0 && hi == 0)
      continue;
    SmallVector<int64_t> source;
    for (int64_t i = 0; i < n + lo + hi; ++i)
      source.push_back(padSource(op.getMode(), i, lo, n));
    auto indexType = RankedTensorType::get({n + lo + hi}, b.getI64Type());
    Value indices = ConstantOp::create(b, DenseElementsAttr::get(indexType, ArrayRef(source)));
    shape[d] = n;
    g = scatterAddAlong(g, indices, d, RankedTensorType::get(shape, in.getElementType()));
  }
  if (cropped)
    g = PadOp::create(b, PadMode::constant, g, crop, APFloat(0.0));
  accumulate(op.getInput(), g);
}

Value Differentiator::placeStrided(Value g, ArrayRef<int64_t> offsets,
                                   ArrayRef<int64_t> strides, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(g);
  SmallVector<int64_t> dims(t.getShape());
  int64_t rank = t.getRank();
  // Dilate: each element followed by `stride - 1` zeros (a unit dim after
  // it, concatenated with zeros, merged back).
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 1 || dims[d] == 0)
      continue;
    SmallVector<int64_t> split(dims);
    split.insert(split.begin() + d + 1, 1);
    Value unit = reshape(g, RankedTensorType::get(split, t.getElementType()));
    split[d + 1] = strides[d] - 1;
    Value gaps = zeros(RankedTensorType::get(split, t.getElementType()));
    Value interleaved = ConcatOp::create(b, ValueRange{unit, gaps}, b.getI64IntegerAttr(d + 1));
    dims[d] *= strides[d];
    g = reshape(interleaved, RankedTensorType::get(dims, t.getElementType()));
  }
  // Then move it to `offsets`; the end pads crop the last element's
  // trailing zeros where they pass the end.
  SmallVector<int64_t> padding(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    padding[d] = offsets[d];
    padding[rank + d] = shape[d] - offsets[d] - dims[d];
  }
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return g;
  return PadOp::create(b, PadMode::constant, g, padding, APFloat(0.0));
}

Value Differentiator::swapLeadingDims(Value x) {
  SmallVector<int64_t> perm(tensorType(x).getRank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  return TransposeOp::create(b, x, b.getDenseI64ArrayAttr(perm));
}

// A convolution (groups = 1), per spatial dim with stride s, dilation d,
// kernel K, begin/end pads pb/pe and output size O, on the padded input xp:
//   y[n, f, o] = sum_{c, k} xp[n, c, o*s + k*d] w[f, c, k]  (+ bias[f]).
// The input's adjoint is a full correlation of g, dilated by s, with the
// kernel flipped and its channels swapped, padded d*(K-1) each side (and at
// the end by what the windows never reached), cropped by the pads; the
// weight's is a convolution of x (channels as the batch) with g (likewise)
// as the kernel, with the stride and the dilation exchanged.
void Differentiator::backpropConv(ConvOp op, Value g) {
  Value x = op.getInput(), w = op.getWeight();
  RankedTensorType xt = tensorType(x), wt = tensorType(w), gt = tensorType(g);
  int64_t rank = xt.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPadding(), dils = op.getDilations();
  SmallVector<int64_t> ones(spatial, 1);
  SmallVector<int64_t> allButChannels = {0};
  for (int64_t d = 2; d < rank; ++d)
    allButChannels.push_back(d);
  if (Value bias = op.getBias(); bias && active(bias))
    accumulate(bias, reshape(reduce(ReduceKind::sum, g, allButChannels), tensorType(bias)));
  if (active(x)) {
    SmallVector<int64_t> offsets(rank, 0), dilation(2, 1), dilated(gt.getShape());
    dilation.append(strides.begin(), strides.end());
    SmallVector<int64_t> fullPads(2 * spatial), crop(2 * rank, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t o = gt.getDimSize(2 + i), reach = dils[i] * (wt.getDimSize(2 + i) - 1);
      int64_t padded = xt.getDimSize(2 + i) + pads[i] + pads[spatial + i];
      dilated[2 + i] = (o - 1) * strides[i] + 1;
      fullPads[i] = reach;
      fullPads[spatial + i] = reach + (padded - (dilated[2 + i] + reach));
      crop[2 + i] = -pads[i];
      crop[rank + 2 + i] = -pads[spatial + i];
    }
    Value spread = placeStrided(g, offsets, dilation, dilated);
    // w[f, c, k] -> w'[c, f, K - 1 - k].
    SmallVector<int64_t> flipOffsets(rank, 0), flipStrides(rank, 1);
    SmallVector<int64_t> flipped(tensorType(w).getShape());
    std::swap(flipped[0], flipped[1]);
    for (int64_t i = 0; i < spatial; ++i) {
      flipOffsets[2 + i] = wt.getDimSize(2 + i) - 1;
      flipStrides[2 + i] = -1;
    }
    Value kernel = SliceOp::create(b, swapLeadingDims(w), flipOffsets, flipped, flipStrides);
    Value full = ConvOp::create(b, spread, kernel, Value(), b.getDenseI64ArrayAttr(ones),
                                b.getDenseI64ArrayAttr(fullPads), op.getDilationsAttr(),
                                b.getI64IntegerAttr(1));
    bool cropped = llvm::any_of(crop, [](int64_t c) { return c != 0; });
    accumulate(x, cropped ? PadOp::create(b, PadMode::constant, full, crop, APFloat(0.0)) : full);
  }
  if (active(w)) {
    // [c, f, L] with L >= K (windows the stride skips past), cropped to K.
    Value grid = ConvOp::create(b, swapLeadingDims(x), swapLeadingDims(g), Value(),
                                op.getDilationsAttr(), op.getPaddingAttr(),
                                op.getStridesAttr(), b.getI64IntegerAttr(1));
    RankedTensorType rt = tensorType(grid);
    SmallVector<int64_t> crop(2 * rank, 0);
    for (int64_t i = 0; i < spatial; ++i)
      crop[rank + 2 + i] = wt.getDimSize(2 + i) - rt.getDimSize(2 + i);
    if (llvm::any_of(crop, [](int64_t c) { return c != 0; }))
      grid = PadOp::create(b, PadMode::constant, grid, crop, APFloat(0.0));
    accumulate(w, swapLeadingDims(grid));
  }
}

// A pool, per window position k (row-major over the kernel): the elements
// that position reads, xp[n, c, o*s + k*d], receive g (average: divided by
// the window's count; max: where they are the window's maximum, the first
// one as PyTorch takes it), placed back at o*s + k*d in the padded input
// (extended past its end where ceil mode's last window overhangs) and
// cropped by the pads.
void Differentiator::backpropPool(PoolOp op, Value g) {
  Value x = op.getInput();
  RankedTensorType xt = tensorType(x), gt = tensorType(g);
  Type elem = xt.getElementType();
  int64_t rank = xt.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(), pads = op.getPadding(),
                    dils = op.getDilations();
  bool isMax = op.getKind() == PoolKind::max;
  SmallVector<int64_t> padded(xt.getShape()), padding(2 * rank, 0), crop(2 * rank, 0);
  SmallVector<int64_t> steps(2, 1);
  steps.append(strides.begin(), strides.end());
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t n = xt.getDimSize(2 + i);
    int64_t reach = (gt.getDimSize(2 + i) - 1) * strides[i] + dils[i] * (kernel[i] - 1) + 1;
    int64_t end = std::max(pads[spatial + i], reach - n - pads[i]);
    padded[2 + i] = n + pads[i] + end;
    padding[2 + i] = pads[i];
    padding[rank + 2 + i] = end;
    crop[2 + i] = -pads[i];
    crop[rank + 2 + i] = -end;
  }
  Value share = g, remaining, xp;
  if (isMax) {
    remaining = ConstantOp::create(
        b, DenseElementsAttr::get(cast<RankedTensorType>(gt), b.getFloatAttr(elem, 1.0)));
    xp = PadOp::create(b, PadMode::constant, x, padding,
                       APFloat::getInf(cast<FloatType>(elem).getFloatSemantics(), /*Negative=*/true));
  } else {
    // Divide by each window's count (a scalar where every window has the same).
    SmallVector<int64_t> counts = poolWindowCounts(op);
    SmallVector<int64_t> countShape = {1, 1};
    llvm::append_range(countShape, gt.getShape().drop_front(2));
    SmallVector<Attribute> attrs;
    for (int64_t c : counts)
      attrs.push_back(b.getFloatAttr(elem, static_cast<double>(c)));
    Value count = llvm::all_equal(counts)
                      ? scalar(static_cast<double>(counts.front()), g)
                      : ConstantOp::create(b, DenseElementsAttr::get(
                                                  RankedTensorType::get(countShape, elem), attrs))
                            .getResult();
    share = div(g, count);
  }
  Value sum;
  SmallVector<int64_t> k(spatial, 0);
  for (bool more = true; more;) {
    SmallVector<int64_t> offsets(rank, 0);
    for (int64_t i = 0; i < spatial; ++i)
      offsets[2 + i] = k[i] * dils[i];
    Value part = share;
    if (isMax) {
      Value seen = SliceOp::create(b, xp, offsets, gt.getShape(), steps);
      Value isMaximum = CastOp::create(b, gt, compare(ComparePredicate::eq, seen, op.getResult()));
      Value first = mul(isMaximum, remaining);
      remaining = sub(remaining, first);
      part = mul(g, first);
    }
    Value placed = placeStrided(part, offsets, steps, padded);
    sum = sum ? add(sum, placed) : placed;
    // Next window position, row-major.
    more = false;
    for (int64_t i = spatial - 1; i >= 0 && !more; --i) {
      if (++k[i] < kernel[i])
        more = true;
      else
        k[i] = 0;
    }
  }
  accumulate(x, PadOp::create(b, PadMode::constant, sum, crop, APFloat(0.0)));
}

// Batch normalization with running statistics, per channel c (dim 1):
//   y = (x - mean[c]) * r[c] * scale[c] + bias[c],  r = 1 / sqrt(var + eps).
void Differentiator::backpropBatchNorm(BatchNormOp op, Value g) {
  Value x = op.getInput();
  RankedTensorType xt = tensorType(x);
  int64_t rank = xt.getRank();
  // Per-channel vectors as [C, 1, ...] to broadcast against x.
  SmallVector<int64_t> channelShape = {xt.getDimSize(1)};
  channelShape.append(rank - 2, 1);
  auto perChannel = [&](Value v) {
    return reshape(v, RankedTensorType::get(channelShape, tensorType(v).getElementType()));
  };
  SmallVector<int64_t> allButChannels = {0};
  for (int64_t d = 2; d < rank; ++d)
    allButChannels.push_back(d);
  auto toChannels = [&](Value v, Value like) {
    return reshape(reduce(ReduceKind::sum, v, allButChannels), tensorType(like));
  };
  Value scale = perChannel(op.getScale()), mean = perChannel(op.getMean());
  Value inverse = unary(UnaryKind::rsqrt,
                        add(perChannel(op.getVariance()),
                            scalar(op.getEpsilon().convertToDouble(), op.getVariance())));
  Value centred = sub(x, mean);
  if (active(x))
    accumulate(x, mul(g, mul(scale, inverse)));
  if (active(op.getScale()))
    accumulate(op.getScale(), toChannels(mul(g, mul(centred, inverse)), op.getScale()));
  if (active(op.getBias()))
    accumulate(op.getBias(), toChannels(g, op.getBias()));
  if (active(op.getMean()))
    accumulate(op.getMean(), toChannels(mul(g, mulScalar(mul(scale, inverse), -1.0)), op.getMean()));
  if (active(op.getVariance())) {
    // d r / d var = -r^3 / 2.
    Value dInverse = mulScalar(mul(inverse, mul(inverse, inverse)), -0.5);
    accumulate(op.getVariance(),
               toChannels(mul(g, mul(centred, mul(scale, dInverse))), op.getVariance()));
  }
}

void Differentiator::backprop(Operation *op, Value g) {
  b.setLoc(op->getLoc());
  if (isIdentity(op))
    return accumulate(op->getOperand(0), g,
                      /*newOwner=*/!isa<shard::ShardOp>(op));
  if (auto u = dyn_cast<UnaryOp>(op))
    return backpropUnary(u, g);
  if (auto bin = dyn_cast<BinaryOp>(op))
    return backpropBinary(bin, g);
  if (auto m = dyn_cast<MatmulOp>(op))
    return backpropMatmul(m, g);
  if (auto ln = dyn_cast<LayerNormOp>(op)) {
    if (Value bias = ln.getBias(); bias && active(bias))
      accumulate(bias, sumTo(g, tensorType(bias)));
    return backpropNorm(g, ln.getInput(), ln.getScale(), ln.getAxis(),
                        ln.getEpsilon().convertToDouble(), /*centre=*/true);
  }
  if (auto rn = dyn_cast<RmsNormOp>(op))
    return backpropNorm(g, rn.getInput(), rn.getScale(), rn.getAxis(),
                        rn.getEpsilon().convertToDouble(), /*centre=*/false);
  if (auto sm = dyn_cast<SoftmaxOp>(op))
    return backpropSoftmax(sm, g);
  if (auto r = dyn_cast<ReduceOp>(op))
    return backpropReduce(r, g);
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return backpropEmbedding(e, g);
  if (auto ga = dyn_cast<GatherOp>(op))
    return backpropGather(ga, g);
  if (auto p = dyn_cast<PadOp>(op))
    return backpropPad(p, g);
  if (auto c = dyn_cast<ConvOp>(op))
    return backpropConv(c, g);
  if (auto p = dyn_cast<PoolOp>(op))
    return backpropPool(p, g);
  if (auto bn = dyn_cast<BatchNormOp>(op))
    return backpropBatchNorm(bn, g);
  if (auto w = dyn_cast<WhereOp>(op)) {
    Value zero = scalar(0.0, g);
    if (active(w.getOnTrue()))
      accumulate(w.getOnTrue(), sumTo(select(w.getCondition(), g, zero), tensorType(w.getOnTrue())));
    if (active(w.getOnFalse()))
      accumulate(w.getOnFalse(),
                 sumTo(select(w.getCondition(), zero, g), tensorType(w.getOnFalse())));
    return;
  }
  if (auto c = dyn_cast<ClampOp>(op)) {
    // The adjoint passes where the input lies within the bounds.
    Value x = c.getInput(), pass = g, zero = scalar(0.0, g);
    if (auto lo = c.getMin())
      pass = select(compare(ComparePredicate::ge, x, scalar(lo->convertToDouble(), x)), pass, zero);
    if (auto hi = c.getMax())
      pass = select(compare(ComparePredicate::le, x, scalar(hi->convertToDouble(), x)), pass, zero);
    return accumulate(x, pass);
  }
  if (auto c = dyn_cast<CastOp>(op)) {
    if (isFloatTensor(c.getInput().getType()))
      accumulate(c.getInput(), CastOp::create(b, c.getInput().getType(), g));
    return;
  }
  if (auto r = dyn_cast<ReshapeOp>(op))
    return accumulate(r.getInput(), reshape(g, tensorType(r.getInput())));
  if (auto e = dyn_cast<ExpandOp>(op))
    return accumulate(e.getInput(), sumTo(g, tensorType(e.getInput())));
  if (auto t = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    return accumulate(t.getInput(), TransposeOp::create(b, g, b.getDenseI64ArrayAttr(inverse)));
  }
  if (auto s = dyn_cast<SliceOp>(op))
    return accumulate(s.getInput(), placeStrided(g, s.getOffsets(), s.getStrides(),
                                                 tensorType(s.getInput()).getShape()));
  if (auto c = dyn_cast<ConcatOp>(op)) {
    int64_t axis = c.getAxis(), offset = 0;
    RankedTensorType gt = tensorType(g);
    for (Value in : c.getInputs()) {
      RankedTensorType it = tensorType(in);
      if (active(in)) {
        SmallVector<int64_t> offsets(gt.getRank(), 0), strides(gt.getRank(), 1);
        offsets[axis] = offset;
        accumulate(in, SliceOp::create(b, g, offsets, it.getShape(), strides));
      }
      offset += it.getDimSize(axis);
    }
    return;
  }
  llvm_unreachable("hasRule admits only the ops above");
}

LogicalResult Differentiator::run() {
  if (func->hasAttr(kDifferentiatedAttr))
    return func.emitError("loom-autodiff: '")
           << func.getSymName() << "' already returns its gradients";
  if (!func.getBody().hasOneBlock())
    return func.emitError("loom-autodiff: '")
           << func.getSymName() << "' has more than one block";
  findActive();
  Block &body = func.getBody().front();
  if (auto module = func->getParentOfType<ModuleOp>())
    pipelineDevices = pipelineAxisDevices(module).value_or(0);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // The forward as placement left it: each streamed weight's copy live at
  // its end, and the weights of each chunk.
  SmallVector<Operation *> forwardOrder;
  for (Operation &op : body) {
    if (&op == ret)
      continue;
    forwardOrder.push_back(&op);
    forwardOps.insert(&op);
    // A fetch's copy, or its annotation where createFetch wrote one.
    if (FetchOp fetched = op.getNumResults() == 1 ? fetchOf(op.getResult(0)) : FetchOp())
      liveCopy[fetched.getSource()] = op.getResult(0);
    else if (auto release = dyn_cast<ReleaseOp>(op))
      liveCopy.erase(release.getFetch().getSource());
    else if (auto w = dyn_cast<WeightOp>(op))
      if (auto placement = w->getAttrOfType<DictionaryAttr>("loom.placement"))
        if (auto chunk = placement.getAs<IntegerAttr>("chunk"))
          chunkWeights[chunk.getInt()].push_back(w);
  }
  // A chunk's weights are fetched in their order in it, as the forward
  // fetches them: the copy starts at the first one's offset.
  for (auto &entry : chunkWeights)
    llvm::stable_sort(entry.second, [](WeightOp x, WeightOp y) {
      return chunkOffset(x).value_or(0) < chunkOffset(y).value_or(0);
    });
  SmallVector<Operation *> activeOps;
  for (Operation &op : body) {
    if (llvm::none_of(op.getResults(), [&](Value r) { return active(r); }))
      continue;
    if (isa<WeightOp>(op))
      continue;
    if (op.getNumResults() != 1 || !hasRule(&op))
      return op.emitError("loom-autodiff: no gradient rule for ")
             << describe(&op) << ", which lies between a trainable parameter and a result"
             << (op.getNumResults() == 1 ? "" : " (it has several results)");
    activeOps.push_back(&op);
  }
  // ZeRO-2's gradient layouts are split axes on the module's grid.
  std::optional<FlatSymbolRefAttr> grid;
  if (auto module = func->getParentOfType<ModuleOp>()) {
    auto grids = module.getOps<shard::GridOp>();
    if (!grids.empty())
      grid = FlatSymbolRefAttr::get((*grids.begin()).getSymNameAttr());
  }
  for (Operation *op : forwardOrder)
    if (Attribute layout = op->getAttr(kZeroGradientAttr)) {
      auto dims = dyn_cast<ArrayAttr>(layout);
      if (!dims || !llvm::all_of(dims, llvm::IsaPred<DenseI16ArrayAttr>) || !grid)
        return op->emitOpError("loom-autodiff: ")
               << kZeroGradientAttr
               << (grid ? " must be an array of i16 arrays (split axes per dimension)"
                        : " gives a gradient layout, but the module has no shard.grid");
    }
  // Placement offloads only what the backward could read, and moves weights
  // for a re-run only where the backward makes it; checked before anything
  // is written.
  // A pipelined plan offloads a value in every micro-batch or none.
  auto partlyOffloaded = [&](DictionaryAttr offsets, unsigned results, Value v,
                             StringRef attr) -> LogicalResult {
    auto host = offsets ? offsets.getAs<DenseI64ArrayAttr>("host") : nullptr;
    if (!host || !offsets.get("device") || results == 0)
      return success();
    unsigned index = isa<OpResult>(v) ? cast<OpResult>(v).getResultNumber() : 0;
    SmallVector<int64_t> places =
        resultPlaces(host.asArrayRef(), results, index);
    auto placed = [](int64_t at) { return at >= 0; };
    if (llvm::none_of(places, placed) || llvm::all_of(places, placed))
      return success();
    InFlightDiagnostic diag = emitError(
        v.getLoc(), "loom-autodiff: the static memory plan offloads ");
    if (auto r = dyn_cast<OpResult>(v))
      diag << "result #" << r.getResultNumber() << " of '"
           << r.getOwner()->getName() << "'";
    else
      diag << "argument #" << cast<BlockArgument>(v).getArgNumber() << " of '"
           << func.getSymName() << "'";
    return diag << " in some micro-batches but not in others (" << attr
                << " `host`: " << host << ")";
  };
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (failed(partlyOffloaded(
            func.getArgAttrOfType<DictionaryAttr>(i, kPipelineOffsetsAttr), 1,
            arg, kPipelineOffsetsAttr)))
      return failure();
    if (auto received =
            func.getArgAttrOfType<ArrayAttr>(i, kReceivedOffsetsAttr))
      for (auto entry : received.getAsRange<DictionaryAttr>())
        if (failed(partlyOffloaded(entry, 1, arg, kReceivedOffsetsAttr)))
          return failure();
  }
  for (Operation *op : forwardOrder)
    for (OpResult r : op->getResults()) {
      unsigned results = op->getNumResults();
      if (failed(partlyOffloaded(
              op->getAttrOfType<DictionaryAttr>(kPipelineOffsetsAttr), results,
              r, kPipelineOffsetsAttr)))
        return failure();
      if (auto received = op->getAttrOfType<ArrayAttr>(kReceivedOffsetsAttr))
        for (auto entry : received.getAsRange<DictionaryAttr>())
          if (failed(partlyOffloaded(entry, results, r, kReceivedOffsetsAttr)))
            return failure();
    }
  for (Operation *op : forwardOrder) {
    bool returned = resultsHeldByStep(op);
    if (offloadedByPlan(plannedOffsets(op)) &&
        (returned || recomputedByPlan(op)))
      return op->emitOpError("loom-autodiff: the static memory plan offloads a result of this "
                             "op to host memory, but the step ")
             << (returned ? "returns it" : "recomputes it");
    if (op->hasAttr(kRerunMovementAttr) && !recomputedByPlan(op))
      return op->emitOpError("loom-autodiff: the chunk schedule moves weights for this op's "
                             "re-run (")
             << kRerunMovementAttr << "), but the plan does not recompute it";
  }

  spillOffloaded(forwardOrder);

  // The signature: a cotangent per float result after the inputs.
  MLIRContext *ctx = func.getContext();
  unsigned numInputs = func.getNumArguments();
  SmallVector<Value> cotangents;
  SmallVector<DictionaryAttr> cotangentAttrs;
  for (auto [i, result] : llvm::enumerate(ret.getOperands())) {
    if (!isFloatTensor(result.getType()))
      continue;
    cotangents.push_back(body.addArgument(result.getType(), func.getLoc()));
    std::string name = "result" + std::to_string(i);
    if (auto n = func.getResultAttrOfType<StringAttr>(i, "loom.name"))
      name = n.str();
    NamedAttrList attrs;
    attrs.set("loom.name", StringAttr::get(ctx, name + ".grad"));
    attrs.set(kCotangentOfAttr, IntegerAttr::get(IntegerType::get(ctx, 64), i));
    // A step of several micro-batches takes each one's cotangent with its
    // result's micro-batch.
    if (Attribute batchDim = func.getResultAttr(i, "loom.batch_dim"))
      attrs.set("loom.batch_dim", batchDim);
    cotangentAttrs.push_back(attrs.getDictionary(ctx));
  }

  b.setInsertionPoint(ret);
  for (auto [result, cotangent] : llvm::zip(
           llvm::make_filter_range(ret.getOperands(),
                                   [](Value r) { return isFloatTensor(r.getType()); }),
           cotangents))
    accumulate(result, cotangent);
  // Each forward op's backward step, last first: the movement the chunk
  // schedule issues before it, then its rule, reading recomputed values,
  // reloads, live fetches and ZeRO-3 gathers where the plan has them.
  DenseSet<Operation *> activeSet(activeOps.begin(), activeOps.end());
  // Re-runs go where placement charged them: at the backward turn of their
  // point, before that op's backward movement and step, in program order.
  for (auto [op, point] :
       recomputePoints(body, [&](Operation *op) { return recomputedByPlan(op); }))
    rerunsAt[point].push_back(op);
  for (auto &[point, ops] : rerunsAt)
    llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : llvm::reverse(forwardOrder)) {
    b.setInsertionPoint(ret);
    turnCopies.clear();
    turnStage = op->getAttr(kStageAttr);
    Operation *turnStart = ret->getPrevNode();
    for (Operation *re : rerunsAt.lookup(op))
      if (failed(rerun(re)))
        return failure();
    if (failed(writeMovement(op, kBackwardMovementAttr)))
      return failure();
    if (Value g = activeSet.contains(op) ? adjoint.lookup(op->getResult(0))
                                         : Value()) {
      Operation *before = ret->getPrevNode();
      backprop(op, g);
      SmallVector<Operation *> written;
      for (Operation *w = before->getNextNode(); w != ret; w = w->getNextNode())
        written.push_back(w);
      if (failed(readPlannedCopies(written)))
        return failure();
    }
    // This turn's ops (re-runs, movement, the rule) are the backward of op's
    // pipeline stage: a pipelined plan runs it on that stage's devices, after
    // every forward stage (loom-split-stages orders the stages' backwards
    // last first).
    if (Attribute stage = op->getAttr(kStageAttr))
      for (Operation *w = turnStart->getNextNode(); w != ret;
           w = w->getNextNode()) {
        // A re-run of another stage's op: its planned place is that stage's.
        if (Attribute own = w->getAttr(kStageAttr); own && own != stage)
          w->removeAttr(kPipelineOffsetsAttr);
        w->setAttr(kStageAttr, stage);
        w->setAttr(kBackwardAttr, UnitAttr::get(func.getContext()));
      }
  }
  // A re-run no backward step read (its results' rules read no result),
  // and a spill nothing reloads.
  for (Operation *clone : llvm::reverse(reruns))
    if (clone->use_empty())
      clone->erase();
  for (auto &[key, spill] : spills)
    if (!spill.reload)
      spill.host.getDefiningOp()->erase();
  placeGradients(forwardOrder);
  b.setInsertionPoint(ret);

  // Gradients of the trainable parameters, in program order.
  SmallVector<Value> outputs(ret.getOperands());
  SmallVector<DictionaryAttr> outputAttrs;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    outputAttrs.push_back(func.getResultAttrDict(i));
  for (Operation &op : body) {
    if (!isTrainableParameter(&op))
      continue;
    auto w = cast<WeightOp>(op);
    b.setLoc(w.getLoc());
    Value grad = adjoint.lookup(w.getResult());
    if (!grad)
      grad = zeros(w.getType());
    bool unused = !differentiablyUsed.contains(w.getResult());
    // ZeRO: a weight stored in shards over its replicas (ZeRO-3,
    // ZeroShards.h) has its gradient returned in that layout, and so has one
    // whose gradient alone is sharded (ZeRO-2, loom.zero_gradient), so
    // partitioning reduce-scatters it and each replica keeps the shard its
    // optimizer step updates.
    Value layout;
    auto markedSharding = [&](ArrayRef<shard::GridAxesAttr> axes) {
      shard::ShardingOp sharding =
          createSharding(b, b.getLoc(), *grid, SmallVector<shard::GridAxesAttr>(axes));
      sharding->setAttr(kZeroShardMark, UnitAttr::get(ctx));
      return sharding.getResult();
    };
    if (shard::ShardOp stored = zeroStoredShard(w))
      layout = stored.getSharding();
    else if (auto dims = w->getAttrOfType<ArrayAttr>(kZeroGradientAttr))
      layout = markedSharding(splitAxesOf(dims));
    if (layout) {
      // A weight-gradient contraction (over the tokens, split over the
      // replicas) first makes the gradient in the weight's planned layout,
      // summed as the data-parallel step sums it, so the ZeRO split after
      // it is a reduce-scatter, as the cost model prices it. Left free,
      // propagation works back from the split, and the matmul computes its
      // shard directly from activations moved by an all-to-all. (A reduce
      // gives its partial sum to the split itself.)
      if (isa_and_present<MatmulOp>(lookThroughShards(grad).getDefiningOp())) {
        Value planned = plannedLayout(w);
        auto whole = shard::ShardOp::create(b, grad, planned ? planned : markedSharding({}),
                                            /*annotate_for_users=*/false);
        whole->setAttr(kZeroShardMark, UnitAttr::get(ctx));
        grad = whole.getResult();
      }
      auto scattered = shard::ShardOp::create(b, grad, layout, /*annotate_for_users=*/true);
      scattered->setAttr(kZeroShardMark, UnitAttr::get(ctx));
      grad = scattered.getResult();
    }
    outputs.push_back(grad);
    SmallVector<NamedAttribute, 3> attrs = {
        {StringAttr::get(ctx, "loom.name"),
         StringAttr::get(ctx, w.getName() + ".grad")},
        {StringAttr::get(ctx, kGradientOfAttr), w.getNameAttr()}};
    if (unused)
      attrs.push_back(
          {StringAttr::get(ctx, kNoGradientAttr), UnitAttr::get(ctx)});
    outputAttrs.push_back(DictionaryAttr::get(ctx, attrs));
  }
  SmallVector<DictionaryAttr> argAttrs;
  for (unsigned i = 0; i < numInputs; ++i)
    argAttrs.push_back(func.getArgAttrDict(i));
  argAttrs.append(cotangentAttrs);
  ret->setOperands(outputs);
  func.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(), ret.getOperandTypes()));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(outputAttrs);
  func->setAttr(kDifferentiatedAttr, UnitAttr::get(ctx));
  return success();
}

} // namespace

LogicalResult mlir::loom::differentiate(func::FuncOp func) {
  return Differentiator(func).run();
}
