//===- Partition.cpp - --loom-partition: planned IR to per-device SPMD ----===//
//
// Wraps upstream's partitioning (`sharding-propagation`, `shard-partition`)
// with what a runnable program needs beyond it:
//  * the entry returns whole outputs: after propagation (forward first, so
//    the plan's input and weight annotations decide the program), each
//    result gets a replicated annotation for its user (the return), so
//    partitioning inserts the gathers that assemble it on every rank; a
//    ZeRO gradient (returned in its weight's stored shards, marked
//    loom.zero_shard by --loom-autodiff) stays in its shards, and a
//    weight's update (loom.updates) is returned in its weight's layout;
//  * a resharding upstream cannot do in one step becomes a chain of steps;
//  * a micro-batched step's gradients are reduced once a step, in the
//    update function, where the step only sums them;
//  * a collective over grid axes of one device each is dropped;
//  * the boundary is recorded: every argument and result of the entry gets
//    `loom.sharding = {grid, shape, split}` (global shape, grid axes per
//    dimension), which the artifact manifest copies so the runtime can cut
//    each rank's slice of inputs and weights.
// A module without a grid is left alone (single-device program). A pipelined
// program is partitioned stage function by stage function; values that go
// to a later stage keep their own sharding (loom-split-stages gave the
// receiving argument the same annotation). A step's update functions are
// partitioned with them, one by one.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "dialects/Loom/IR/ShardValues.h"

#include "loom/Autodiff/OptimizerStep.h"
#include "loom/Cost/Reshard.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMPARTITION
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

/// `[[0], []]`-style record of a sharding's split axes, padded to `rank`.
static ArrayAttr splitRecord(Builder &b, ArrayRef<shard::GridAxesAttr> axes,
                             int64_t rank) {
  SmallVector<Attribute> dims;
  for (int64_t d = 0; d < rank; ++d) {
    SmallVector<Attribute> list;
    if (d < static_cast<int64_t>(axes.size()))
      for (int16_t axis : axes[d].asArrayRef())
        list.push_back(b.getI64IntegerAttr(axis));
    dims.push_back(b.getArrayAttr(list));
  }
  return b.getArrayAttr(dims);
}

static DictionaryAttr shardingRecord(Builder &b, FlatSymbolRefAttr grid,
                                     RankedTensorType type,
                                     ArrayRef<shard::GridAxesAttr> axes) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("grid", grid),
       b.getNamedAttr("shape", b.getDenseI64ArrayAttr(type.getShape())),
       b.getNamedAttr("split", splitRecord(b, axes, type.getRank()))});
}

static ::loom::TensorLayout layoutOf(const shard::Sharding &sharding) {
  ::loom::TensorLayout layout;
  for (shard::GridAxesAttr axes : sharding.getSplitAxes())
    layout.splitAxes.emplace_back(axes.asArrayRef().begin(),
                                  axes.asArrayRef().end());
  return layout;
}

/// Upstream `shard-partition` reshards a value (its own annotation, then the
/// one a user asks for) in one step of three kinds only: move the last axis
/// of a dimension to another, append one axis, drop the last one. Built
/// without assertions it maps anything else to a null value and crashes on
/// the user, e.g. replicating a tensor split [[0, 1]] or [[1], [0]] (the
/// replicated results ask for that after any 2-D data split). Every such
/// resharding becomes a chain of annotations for users, one per layout of
/// reshardPath, each one upstream step from the one before (the strategy
/// search writes its plans so already).
static void splitReshardings(func::FuncOp func) {
  SmallVector<shard::ShardOp> users;
  func.walk([&](shard::ShardOp user) {
    auto producer = user.getSrc().getDefiningOp<shard::ShardOp>();
    if (user.getAnnotateForUsers() && producer &&
        !producer.getAnnotateForUsers())
      users.push_back(user);
  });
  for (shard::ShardOp user : users) {
    auto producer = user.getSrc().getDefiningOp<shard::ShardOp>();
    shard::Sharding from(producer.getSharding()), to(user.getSharding());
    if (!from.getStaticHaloSizes().empty() || !to.getStaticHaloSizes().empty() ||
        !from.getStaticShardedDimsOffsets().empty() ||
        !to.getStaticShardedDimsOffsets().empty())
      continue;
    ::loom::TensorLayout a = layoutOf(from), b = layoutOf(to);
    if (::loom::upstreamOneStep(a, b))
      continue;
    SmallVector<::loom::SplitDims> path = ::loom::reshardPath(
        ::loom::trimmedDims(a.splitAxes), ::loom::trimmedDims(b.splitAxes));
    path.pop_back(); // the last layout is the user's own
    OpBuilder builder(user);
    Value value = producer.getResult();
    for (const ::loom::SplitDims &dims : path) {
      Value sharding = createSharding(builder, user.getLoc(), from.getGridAttr(), dims);
      value = shard::ShardOp::create(builder, user.getLoc(), value, sharding,
                                     /*annotate_for_users=*/true);
    }
    user.getSrcMutable().assign(value);
  }
}

/// An all-gather over grid axes A along dimension s followed by a slice
/// over the same axes along t is an all-to-all over A (split t, concat s):
/// either way a device ends with its t-block of every peer's s-block, in
/// axis order. reshardPath spells a move of an axis between dimensions as
/// that pair (upstream moves one only when the two dimensions' other axes
/// agree, e.g. not GShard's [[dp, ep]] -> [[dp], [ep]]); the fused form
/// moves 1/|A| of the bytes the gather does, as the cost model prices it.
/// With s == t the pair is the identity.
static void fuseGatherSlice(func::FuncOp func) {
  SmallVector<shard::AllSliceOp> slices;
  func.walk([&](shard::AllSliceOp slice) { slices.push_back(slice); });
  for (shard::AllSliceOp slice : slices) {
    auto gather = slice.getInput().getDefiningOp<shard::AllGatherOp>();
    if (!gather || !gather->hasOneUse() || gather.getGrid() != slice.getGrid() ||
        gather.getGridAxes() != slice.getGridAxes())
      continue;
    int64_t concatAxis = gather.getGatherAxis().getSExtValue();
    int64_t splitAxis = slice.getSliceAxis().getSExtValue();
    Value fused = gather.getInput();
    if (concatAxis != splitAxis) {
      OpBuilder builder(slice);
      fused = shard::AllToAllOp::create(
          builder, slice.getLoc(), slice.getType(), gather.getGridAttr(),
          gather.getGridAxesAttr(), gather.getInput(),
          slice.getSliceAxisAttr(), gather.getGatherAxisAttr());
    } else if (fused.getType() != slice.getType()) {
      continue;
    }
    slice.replaceAllUsesWith(fused);
    slice.erase();
    gather.erase();
  }
}

/// An all-reduce over grid axes A whose only user slices over A along
/// dimension d (a chain of slices along d whose axes, in order, are A) is a
/// reduce-scatter over A along d: each device keeps its block of the sum.
/// partitionLoomOp all-reduces a split reduction whatever its consumer
/// wants; this is where Megatron's sequence parallelism gets its
/// reduce-scatter after a row-parallel matmul. The cost model prices the
/// same rule (loom::reductionScatterDim).
static void fuseReduceSlice(func::FuncOp func) {
  SmallVector<shard::AllReduceOp> reduces;
  func.walk([&](shard::AllReduceOp reduce) { reduces.push_back(reduce); });
  for (shard::AllReduceOp reduce : reduces) {
    ArrayRef<shard::GridAxis> axes = reduce.getGridAxes();
    SmallVector<shard::GridAxis> sliced;
    shard::AllSliceOp last;
    Value v = reduce.getResult();
    std::optional<int64_t> dim;
    while (sliced.size() < axes.size() && v.hasOneUse()) {
      auto slice = dyn_cast<shard::AllSliceOp>(*v.getUsers().begin());
      if (!slice || slice.getGrid() != reduce.getGrid() ||
          (dim && *dim != slice.getSliceAxis().getSExtValue()))
        break;
      dim = slice.getSliceAxis().getSExtValue();
      llvm::append_range(sliced, slice.getGridAxes());
      last = slice;
      v = slice.getResult();
    }
    if (!last || ArrayRef<shard::GridAxis>(sliced) != axes)
      continue;
    OpBuilder builder(last);
    auto scattered = shard::ReduceScatterOp::create(
        builder, last.getLoc(), last.getType(), reduce.getGridAttr(),
        reduce.getGridAxesAttr(), reduce.getInput(), reduce.getReductionAttr(),
        last.getSliceAxisAttr());
    last.replaceAllUsesWith(scattered.getResult());
    // Erase the chain from its end back to the all-reduce.
    Operation *op = last;
    while (op != reduce.getOperation()) {
      Operation *prev = op->getOperand(0).getDefiningOp();
      op->erase();
      op = prev;
    }
    reduce.erase();
  }
}

/// A collective over grid axes of one device each (a tensor-parallel axis
/// of size 1 in a Megatron plan) is its operand; upstream partitioning
/// emits it all the same, and the runtime would make a call for it.
static void dropOneDeviceCollectives(func::FuncOp func, shard::GridOp grid) {
  ArrayRef<int64_t> shape = grid.getShape();
  func.walk([&](Operation *op) {
    auto drop = [&](auto collective) {
      if (collective.getGrid() != grid.getSymName() ||
          collective.getInput().getType() != collective.getType() ||
          llvm::any_of(collective.getGridAxes(),
                       [&](shard::GridAxis a) { return shape[a] != 1; }))
        return;
      collective.replaceAllUsesWith(collective.getInput());
      collective->erase();
    };
    TypeSwitch<Operation *>(op)
        .Case<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp,
              shard::ReduceScatterOp, shard::AllToAllOp>(drop);
  });
}

/// The op of `body` that first uses `v`, itself or through an op nested in
/// it; null if none does.
static Operation *firstUserIn(Block &body, Value v) {
  Operation *first = nullptr;
  for (Operation *user : v.getUsers()) {
    Operation *inBody = body.findAncestorOpInBlock(*user);
    if (inBody && (!first || inBody->isBeforeInBlock(first)))
      first = inBody;
  }
  return first;
}

/// Whether `cast` converts floats to a wider float type.
static bool isWidening(CastOp cast) {
  if (!cast)
    return false;
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getInput()));
  auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
  return from && to && from.getWidth() < to.getWidth();
}

/// A micro-batched step adds each micro-batch's gradient into its sum
/// (kAccumulatorSuffix) after the data-parallel all-reduce that completes
/// it. The sum of the reduced gradients is the reduction of the summed
/// local ones, so where the all-reduce feeds nothing but the sum (the
/// gradient is not kept; through reshapes and transposes, which commute
/// with it: a bias's gradient; and through the widening of a 16-bit
/// gradient into its float32 sum, which makes the deferred reduction
/// float32's, as Megatron reduces 16-bit gradients) the step adds the
/// device's own contribution, and the update function that reads the sum,
/// on the same device, all-reduces it: once a step instead of once a
/// micro-batch, as
/// the cost model counts it (PyTorch DDP's no_sync, Megatron's gradient
/// accumulation; it runs after the last backward, where the cost model
/// lets that backward hide it). An all-reduce over any axes commutes with
/// the sum; every device of its group runs the same functions, and so
/// defers alike. Under ZeRO-1 the update reads the sum in its shards, and
/// where the shards split it over exactly the all-reduce's axes
/// fuseReduceSlice makes the pair a reduce-scatter. A sum the step reads
/// otherwise, or adds a gradient into that is not so reduced (a kept
/// gradient), is left as it is.
static void deferGradientReductions(ModuleOp module, StringRef entry) {
  // The writer of each sum, by the device its update runs on (one step
  // function a device; a second writer keeps its reductions).
  struct Writer {
    shard::AllReduceOp reduce;
    OpOperand *use; // its one use, by the sum's add or a reshape before it
  };
  struct Sum {
    std::optional<Writer> writer;
    bool deferrable = true;
  };
  std::map<std::pair<int64_t, std::string>, Sum> sums;
  for (func::FuncOp step : entryFunctions(module, entry)) {
    FailureOr<DenseMap<unsigned, BlockArgument>> updated =
        updatedArguments(step);
    if (failed(updated))
      continue; // (replicateResults has reported it)
    Operation *ret = step.getBody().front().getTerminator();
    for (auto [index, sumArg] : *updated) {
      auto name = step.getResultAttrOfType<StringAttr>(index, kUpdatesAttr);
      if (!name.getValue().ends_with(kAccumulatorSuffix))
        continue;
      Sum &sum = sums[{pipelineStageOf(step).value_or(0), name.str()}];
      auto add = ret->getOperand(index).getDefiningOp<BinaryOp>();
      std::optional<Writer> writer;
      if (add && add.getKind() == BinaryKind::add && add->hasOneUse() &&
          sumArg.hasOneUse())
        for (unsigned i = 0; i < 2 && !writer; ++i) {
          if (add->getOperand(1 - i) != sumArg)
            continue;
          OpOperand *use = &add->getOpOperand(i);
          while ((isa_and_present<ReshapeOp, TransposeOp>(
                      use->get().getDefiningOp()) ||
                  isWidening(use->get().getDefiningOp<CastOp>())) &&
                 use->get().hasOneUse())
            use = &use->get().getDefiningOp()->getOpOperand(0);
          auto reduce = use->get().getDefiningOp<shard::AllReduceOp>();
          if (reduce && reduce->hasOneUse() &&
              reduce.getReduction() == shard::ReductionKind::Sum &&
              reduce.getInput().getType() == reduce.getType())
            writer = Writer{reduce, use};
        }
      if (!writer || sum.writer) {
        sum.deferrable = false;
        continue;
      }
      sum.writer = writer;
    }
  }
  for (func::FuncOp update : updateFunctions(module, entry)) {
    int64_t device = pipelineStageOf(update).value_or(0);
    for (BlockArgument arg : update.getArguments()) {
      auto weight = update.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                                            "loom.weight");
      auto name = weight ? weight.getAs<StringAttr>("name") : StringAttr();
      auto it = name ? sums.find({device, name.str()}) : sums.end();
      if (it == sums.end() || !it->second.deferrable || !it->second.writer ||
          arg.use_empty())
        continue;
      Writer w = *it->second.writer;
      OpBuilder builder(firstUserIn(update.getBody().front(), arg));
      auto reduced = shard::AllReduceOp::create(
          builder, w.reduce.getLoc(), arg.getType(), w.reduce.getGridAttr(),
          w.reduce.getGridAxesAttr(), arg, w.reduce.getReductionAttr());
      arg.replaceAllUsesExcept(reduced.getResult(), reduced);
      w.use->set(w.reduce.getInput());
      w.reduce->erase();
      it->second.writer.reset();
    }
  }
}

/// Upstream emits the resharding of an entry argument at the top of the
/// function, and that of a fetched copy just after its fetch. For a weight
/// stored in shards that is every gather at once, holding every whole
/// weight for the whole step (or from its chunk's prefetch on): ZeRO-3
/// (ZeroShards.h) gathers each one just before its first reader, so it lives
/// only until its last. Chains of gathers move together, last first.
static void sinkWeightGathers(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<shard::AllGatherOp> gathers;
  for (auto gather : body.getOps<shard::AllGatherOp>()) {
    Value root = rootOfGathers(gather.getInput());
    if (isa<BlockArgument>(root) || root.getDefiningOp<FetchOp>())
      gathers.push_back(gather);
  }
  for (shard::AllGatherOp gather : llvm::reverse(gathers)) {
    Operation *first = firstUserIn(body, gather.getResult());
    if (first && gather->isBeforeInBlock(first))
      gather->moveBefore(first);
  }
}

namespace {
struct LoomPartitionPass
    : mlir::loom::impl::LoomPartitionBase<LoomPartitionPass> {
  using LoomPartitionBase::LoomPartitionBase;

  LogicalResult runUpstream(StringRef pipeline) {
    OpPassManager pm(ModuleOp::getOperationName());
    if (failed(parsePassPipeline(pipeline, pm)))
      return failure();
    return runPipeline(pm, getOperation());
  }

  /// The annotation that says which sharding an argument arrives in: its
  /// own (`shard.shard %arg to %s`) if it has one, else the first
  /// `annotate_for_users` one (upstream partitions the argument by it);
  /// null = replicated.
  static FailureOr<shard::ShardOp> argumentAnnotation(BlockArgument arg) {
    shard::ShardOp own, forUsers;
    for (Operation *user : arg.getUsers()) {
      auto annotation = dyn_cast<shard::ShardOp>(user);
      if (!annotation)
        continue;
      shard::ShardOp &slot = annotation.getAnnotateForUsers() ? forUsers : own;
      if (slot && !(shard::Sharding(slot.getSharding()) ==
                    shard::Sharding(annotation.getSharding())))
        return annotation.emitOpError(
                   "is one of two different annotations of entry argument #")
               << arg.getArgNumber()
               << "; the runtime can give a rank only one slice of it";
      if (!slot)
        slot = annotation;
    }
    return own ? own : forUsers;
  }

  static FailureOr<shard::Sharding> argumentSharding(BlockArgument arg) {
    FailureOr<shard::ShardOp> annotation = argumentAnnotation(arg);
    if (failed(annotation))
      return failure();
    return *annotation ? shard::Sharding((*annotation).getSharding()) : shard::Sharding();
  }

  /// Upstream shard-partition (22.1) takes a tensor argument's first user
  /// as its arrival annotation and crashes where that is not a shard.shard:
  /// an argument nothing reads (an input a pipeline stage does not read), or
  /// one propagation left unannotated because nothing it reaches has a
  /// sharding (a one-device pipeline axis; a replicated buffer read only by
  /// loom.fetch, whose copy propagation does not look through). Such an
  /// argument is replicated: it gets that annotation, read by all its users.
  /// An argument read both through annotations and directly is an error.
  /// Returns whether an argument with users was annotated (propagation then
  /// runs again from it).
  FailureOr<bool> annotateUnannotatedArguments(func::FuncOp func,
                                               FlatSymbolRefAttr grid) {
    OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
    Value replicated;
    bool annotatedUsed = false;
    for (BlockArgument arg : func.getArguments()) {
      if (!isa<RankedTensorType>(arg.getType()))
        continue;
      auto isAnnotation = [](OpOperand &use) {
        return isa<shard::ShardOp>(use.getOwner());
      };
      if (!arg.use_empty() && llvm::all_of(arg.getUses(), isAnnotation))
        continue;
      if (llvm::any_of(arg.getUses(), isAnnotation)) {
        Operation *direct =
            llvm::find_if_not(arg.getUses(), isAnnotation)->getOwner();
        return direct->emitOpError("reads argument #")
               << arg.getArgNumber() << " of @" << func.getSymName()
               << " directly while other readers read it through a sharding "
                  "annotation; loom-partition cannot give it one layout";
      }
      annotatedUsed |= !arg.use_empty();
      if (!replicated)
        replicated = createSharding(builder, func.getLoc(), grid);
      auto annotation =
          shard::ShardOp::create(builder, arg.getLoc(), arg, replicated,
                                 /*annotate_for_users=*/false);
      arg.replaceAllUsesExcept(annotation.getResult(), annotation);
    }
    return annotatedUsed;
  }

  /// The stored shards a ZeRO gradient is returned in (its annotation by
  /// --loom-autodiff), if `result` is one.
  static shard::ShardOp zeroGradient(Value result) {
    auto s = result.getDefiningOp<shard::ShardOp>();
    return s && s.getAnnotateForUsers() && isZeroShard(s) ? s : nullptr;
  }

  /// Model outputs are returned whole: each gets a replicated annotation
  /// for its user (the return), so partitioning inserts the gathers. Values
  /// sent to a later pipeline stage keep their own sharding, and ZeRO
  /// gradients their shards.
  /// A weight's update (loom.updates) is returned in the layout its
  /// weight arrives in, so that it can be written back into the same slice.
  LogicalResult replicateResults(func::FuncOp func, FlatSymbolRefAttr grid) {
    FailureOr<DenseMap<unsigned, BlockArgument>> updated = updatedArguments(func);
    if (failed(updated))
      return failure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder builder(ret);
    Value replicated = createSharding(builder, ret.getLoc(), grid);
    DenseMap<std::pair<Value, Value>, Value> made;
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      if (!isa<RankedTensorType>(operand.get().getType()) ||
          func.getResultAttr(index, "loom.send_to") || zeroGradient(operand.get()))
        continue;
      Value layout = replicated;
      if (BlockArgument weight = updated->lookup(index)) {
        FailureOr<shard::ShardOp> annotation = argumentAnnotation(weight);
        if (failed(annotation))
          return failure();
        if (*annotation)
          layout = (*annotation).getSharding();
      }
      // (A value returned twice in one layout gets one annotation: upstream
      // partitioning crashes on a result with two.)
      Value &annotated = made[{operand.get(), layout}];
      if (!annotated)
        annotated = shard::ShardOp::create(builder, ret.getLoc(), operand.get(),
                                           layout, /*annotate_for_users=*/true);
      operand.set(annotated);
    }
    return success();
  }

  /// `loom.sharding` on every tensor argument and model output.
  LogicalResult recordBoundary(func::FuncOp func, FlatSymbolRefAttr grid) {
    Builder b(&getContext());
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      FailureOr<shard::Sharding> sharding = argumentSharding(arg);
      if (failed(sharding))
        return failure();
      if (!sharding->getStaticHaloSizes().empty() ||
          !sharding->getStaticShardedDimsOffsets().empty())
        return func.emitOpError("argument #")
               << arg.getArgNumber()
               << " is sharded with halos or uneven offsets, which the "
                  "runtime cannot slice";
      func.setArgAttr(arg.getArgNumber(), "loom.sharding",
                      shardingRecord(b, grid, type, sharding->getSplitAxes()));
    }
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || func.getResultAttr(index, "loom.send_to"))
        continue;
      ArrayRef<shard::GridAxesAttr> split;
      shard::Sharding sharding;
      if (shard::ShardOp s = zeroGradient(ret->getOperand(index));
          s || func.getResultAttr(index, kUpdatesAttr)) {
        if (!s)
          s = ret->getOperand(index).getDefiningOp<shard::ShardOp>();
        sharding = shard::Sharding(s.getSharding());
        split = sharding.getSplitAxes();
      }
      func.setResultAttr(index, "loom.sharding", shardingRecord(b, grid, tensor, split));
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
    if (grids.empty())
      return;
    if (grids.size() > 1) {
      grids[1].emitOpError("is a second grid; a runnable program has one");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions = programFunctions(module, entry);
    if (functions.empty() || functions.front().isExternal()) {
      mlir::emitError(module.getLoc(), "loom-partition: no entry function '")
          << entry << "' with a body";
      return signalPassFailure();
    }
    auto grid = FlatSymbolRefAttr::get(grids.front().getSymNameAttr());
    // Propagate forward first, from the inputs' and weights' annotations
    // (ShardValues.h says why). The results are annotated replicated only
    // afterwards, for the same reason.
    OpPassManager propagate(ModuleOp::getOperationName());
    propagate.addNestedPass<func::FuncOp>(createForwardFirstShardingPropagation());
    if (failed(runPipeline(propagate, module)))
      return signalPassFailure();
    bool annotatedUsed = false;
    for (func::FuncOp func : functions) {
      FailureOr<bool> annotated = annotateUnannotatedArguments(func, grid);
      if (failed(annotated))
        return signalPassFailure();
      annotatedUsed |= *annotated;
    }
    if (annotatedUsed && failed(runPipeline(propagate, module)))
      return signalPassFailure();
    for (func::FuncOp func : functions)
      if (failed(replicateResults(func, grid)))
        return signalPassFailure();
    for (func::FuncOp func : functions)
      if (failed(recordBoundary(func, grid)))
        return signalPassFailure();
    for (auto f : module.getOps<func::FuncOp>())
      splitReshardings(f);
    // The canonicalization keeps the ops a static memory plan placed
    // (hasPlannedBuffer).
    if (failed(runUpstream("func.func(shard-partition,canonicalize)")))
      return signalPassFailure();
    for (auto f : module.getOps<func::FuncOp>())
      dropOneDeviceCollectives(f, grids.front());
    deferGradientReductions(module, entry);
    for (auto f : module.getOps<func::FuncOp>()) {
      fuseGatherSlice(f);
      fuseReduceSlice(f);
      sinkWeightGathers(f);
    }
  }
};
} // namespace
