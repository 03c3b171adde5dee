//===- SplitStages.cpp - pipeline stages: one program per stage -----------===//
//
// A plan with a pipeline axis assigns every op a `loom.stage`. Stage k runs
// on device k mod P of the P-device pipeline axis; an interleaved schedule
// has several (virtual) stages per device. Two passes turn that into the
// program each device's ranks run:
//
//  * loom-split-stages (before partitioning, on loom ops, after upstream
//    sharding propagation so that every value has a sharding) replaces the
//    entry `@main` by `@main_stage0 ... @main_stage<P-1>`, one per device,
//    holding its stages' ops stage by stage. Weights, constants, sharding
//    values and `annotate_for_users` annotations are cloned into every device
//    that uses them (rematerialized, never sent), just before their first
//    use. A value computed on device s and used on device t leaves s as an
//    extra result `{loom.send_to = [t, ...], loom.tag = k}` and enters t as
//    an extra argument `{loom.recv_from = s, loom.tag = k}` carrying the
//    value's own sharding annotation, so both sides partition to the same
//    local shard. Values passed between stages of one device stay values.
//    Every device takes all of the model's inputs (unused ones cost a
//    buffer, nothing else); the last device, which runs the last stage,
//    returns the model's outputs, and each weight's update (a micro-batched
//    step's gradient sums, --loom-optimizer-step) is returned by the device
//    computing it. A training step's backward ops (`loom.backward`,
//    --loom-autodiff) run on their stage's device after all forward stages,
//    the last stage's backward first: the backward of stage s is at
//    position 2S-1-s of the S forward stages' order, so values still flow
//    only to later positions. A static memory plan's
//    offsets follow the values: each device keeps its own
//    `loom.pipeline_offsets`, and a received value's argument carries the
//    places its producer's `loom.received_offsets` give it there.
//
//  * loom-stage-transfers (after partitioning) turns those extra arguments
//    into `shard.recv` ops just before their first use and the extra results
//    into `shard.send` ops just after the value is computed, over the
//    pipeline axis. The runtime's sends never wait for the receiver, so
//    only receives block, and each waits for an earlier stage of the same
//    micro-batch; with every device running micro-batches in order and its
//    stages in order, the lowest unfinished (micro-batch, stage) can always
//    proceed: no deadlock, whatever the message sizes or the interleaving.
//    The update functions exchange a tied weight's sums the same way
//    (--loom-optimizer-step): both sides of a pair make their exchanges in
//    the same order, each send before its receive, so the first exchange
//    neither side has finished can always proceed.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/OptimizerStep.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMSPLITSTAGES
#define GEN_PASS_DEF_LOOMSTAGETRANSFERS
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

SmallVector<func::FuncOp> mlir::loom::entryFunctions(ModuleOp module,
                                                     StringRef entry) {
  SmallVector<func::FuncOp> functions;
  if (auto f = module.lookupSymbol<func::FuncOp>(entry)) {
    functions.push_back(f);
    return functions;
  }
  for (int64_t s = 0;; ++s) {
    auto f = module.lookupSymbol<func::FuncOp>(stageFunctionName(entry, s));
    if (!f)
      break;
    functions.push_back(f);
  }
  return functions;
}

SmallVector<func::FuncOp> mlir::loom::updateFunctions(ModuleOp module,
                                                      StringRef entry) {
  return entryFunctions(module, updateFunctionName(entry));
}

SmallVector<func::FuncOp> mlir::loom::programFunctions(ModuleOp module,
                                                       StringRef entry) {
  SmallVector<func::FuncOp> functions = entryFunctions(module, entry);
  llvm::append_range(functions, updateFunctions(module, entry));
  return functions;
}

std::optional<int64_t> mlir::loom::pipelineStageOf(func::FuncOp func) {
  if (auto stage = func->getAttrOfType<IntegerAttr>(kPipelineStageAttr))
    return stage.getInt();
  return std::nullopt;
}

FailureOr<std::pair<shard::GridOp, int64_t>>
mlir::loom::pipelineGrid(ModuleOp module, Operation *where) {
  for (auto grid : module.getOps<shard::GridOp>())
    if (auto axis = grid->getAttrOfType<IntegerAttr>(kPipelineAxisAttr)) {
      if (axis.getInt() < 0 || axis.getInt() >= grid.getRank())
        return grid.emitOpError("loom.pipeline_axis ")
               << axis.getInt() << " is not one of its " << grid.getRank()
               << " axes";
      return std::make_pair(grid, axis.getInt());
    }
  return where->emitOpError("is assigned to a pipeline stage, but no "
                            "shard.grid has a loom.pipeline_axis");
}

namespace {

/// Ops cloned into every stage that uses them instead of being sent: pure,
/// cheap, and computed from arguments and other such ops only.
bool isRematerializable(Operation *op,
                        const DenseSet<Operation *> &rematerialized) {
  auto fromAvailable = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || rematerialized.contains(def);
  };
  if (isa<shard::ShardingOp, WeightOp, ConstantOp, arith::ConstantOp>(op))
    return llvm::all_of(op->getOperands(), fromAvailable);
  if (auto annotation = dyn_cast<shard::ShardOp>(op))
    return annotation.getAnnotateForUsers() ||
           fromAvailable(annotation.getSrc());
  return false;
}

struct Crossing {
  Value value;
  int64_t from;
  SmallVector<int64_t, 2> to; // ascending
  int64_t tag;
};

struct SplitStagesPass
    : mlir::loom::impl::LoomSplitStagesBase<SplitStagesPass> {
  using LoomSplitStagesBase::LoomSplitStagesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal())
      return; // already split, or nothing to split; later passes complain
    Operation *firstStaged = nullptr;
    func.walk([&](Operation *op) {
      if (!firstStaged && op->hasAttr(kStageAttr))
        firstStaged = op;
    });
    if (!firstStaged)
      return;
    if (!func.getBody().hasOneBlock()) {
      func.emitOpError("has several blocks; pipeline stages split one block");
      return signalPassFailure();
    }
    auto grid = pipelineGrid(module, firstStaged);
    if (failed(grid))
      return signalPassFailure();
    readThroughOwnAnnotations(func);
    // Propagate first: every value that crosses a stage boundary then has
    // its own sharding annotation, which both sides keep.
    OpPassManager propagate(func::FuncOp::getOperationName());
    propagate.addPass(createForwardFirstShardingPropagation());
    if (failed(runPipeline(propagate, func)))
      return signalPassFailure();
    if (failed(split(func, grid->first, grid->first.getShape()[grid->second])))
      return signalPassFailure();
  }

  /// A training step's backward (--loom-autodiff) reads the forward's
  /// values themselves, beside the plan's annotation of each
  /// (`shard.shard %v to S`): propagation would annotate them a second time,
  /// and upstream shard-partition crashes on a result with two annotations.
  /// Every later reader reads the annotated value instead (the same value).
  static void readThroughOwnAnnotations(func::FuncOp func) {
    func.walk([](Operation *op) {
      for (Value result : op->getResults()) {
        SmallVector<shard::ShardOp, 1> own;
        for (Operation *user : result.getUsers())
          if (auto a = dyn_cast<shard::ShardOp>(user);
              a && !a.getAnnotateForUsers() && a.getSrc() == result)
            own.push_back(a);
        if (own.size() != 1)
          continue;
        shard::ShardOp annotation = own.front();
        result.replaceUsesWithIf(annotation.getResult(), [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return user != annotation && user->getBlock() == annotation->getBlock() &&
                 annotation->isBeforeInBlock(user);
        });
      }
    });
  }

  LogicalResult split(func::FuncOp func, shard::GridOp grid, int64_t devices) {
    Block &body = func.getBody().front();
    Operation *terminator = body.getTerminator();
    DenseSet<Operation *> rematerialized;
    // Stages in the order they run, as positions: the forward's stages
    // 0 ... S-1, then (a training step, --loom-autodiff) their backwards,
    // stage S-1's first, at S ... 2S-1. Values flow only to later
    // positions. stageOf holds an op's position.
    DenseMap<Operation *, int64_t> stageOf;
    DenseMap<Operation *, unsigned> position;
    int64_t lastStage = 0, lastForward = 0;
    bool hasBackward = false;
    for (Operation &op : body.without_terminator())
      if (auto attr = op.getAttrOfType<IntegerAttr>(kStageAttr)) {
        if (op.hasAttr(kBackwardAttr))
          hasBackward = true;
        else
          lastForward = std::max(lastForward, attr.getInt());
      }
    // Whole rounds of P, so that the last forward stage is on the last
    // device.
    int64_t forwardStages = llvm::alignTo(lastForward + 1, devices);

    // The stage a value is available from: arguments everywhere (0); a
    // rematerialized value where its non-rematerialized inputs are.
    std::function<int64_t(Value)> availableAt = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      if (!def)
        return 0;
      if (auto it = stageOf.find(def); it != stageOf.end())
        return it->second;
      int64_t s = 0;
      for (Value operand : def->getOperands())
        s = std::max(s, availableAt(operand));
      return s;
    };

    for (Operation &op : body.without_terminator()) {
      position[&op] = position.size();
      if (isRematerializable(&op, rematerialized)) {
        rematerialized.insert(&op);
        continue;
      }
      SetVector<Value> inputs(op.getOperands().begin(), op.getOperands().end());
      getUsedValuesDefinedAbove(op.getRegions(), inputs);
      int64_t latest = 0;
      for (Value v : inputs)
        latest = std::max(latest, availableAt(v));
      int64_t stage = latest;
      if (auto attr = op.getAttrOfType<IntegerAttr>(kStageAttr)) {
        stage = attr.getInt();
        if (stage < 0)
          return op.emitOpError("is at the negative loom.stage ") << stage;
        if (op.hasAttr(kBackwardAttr)) {
          if (stage > lastForward)
            return op.emitOpError("is in the backward of loom.stage ")
                   << stage << ", but the forward's last stage is "
                   << lastForward;
          // A backward op reading a later position's value (a gradient
          // summed from two stages' contributions) runs where both are; the
          // plan's time for it no longer holds, so it keeps no place.
          stage = 2 * forwardStages - 1 - stage;
          if (latest > stage) {
            stage = latest;
            op.removeAttr(kPipelineOffsetsAttr);
          }
        }
        if (latest > stage) {
          InFlightDiagnostic diag = op.emitOpError("at loom.stage ")
                                    << stage << " reads a value computed ";
          if (latest >= forwardStages)
            diag << "in the backward of stage "
                 << 2 * forwardStages - 1 - latest;
          else
            diag << "at the later stage " << latest;
          return diag;
        }
      }
      stageOf[&op] = stage;
      lastStage = std::max(lastStage, stage);
    }
    // Stage k runs on device k mod P (several per device: an interleaved
    // schedule's virtual stages), and so does its backward. The last device
    // returns the outputs: after everything when there is a backward (the
    // first stage's backward, on device 0, runs last).
    int64_t virtualStages =
        hasBackward ? 2 * forwardStages : llvm::alignTo(lastStage + 1, devices);
    int64_t outputStage = hasBackward ? virtualStages : virtualStages - 1;
    auto deviceOf = [&](int64_t stage) {
      if (stage >= virtualStages)
        return devices - 1;
      if (stage >= forwardStages)
        stage = virtualStages - 1 - stage;
      return stage % devices;
    };

    // What each device needs: arguments, clones, and values from earlier
    // stages on other devices.
    llvm::MapVector<Value, Crossing> crossings;
    SmallVector<SetVector<Operation *>> clones(devices);
    std::function<LogicalResult(Value, int64_t, Operation *)> need =
        [&](Value v, int64_t t, Operation *user) -> LogicalResult {
      Operation *def = v.getDefiningOp();
      if (!def)
        return success();
      if (rematerialized.contains(def)) {
        if (clones[deviceOf(t)].insert(def))
          for (Value operand : def->getOperands())
            if (failed(need(operand, t, user)))
              return failure();
        return success();
      }
      int64_t s = stageOf.lookup(def);
      if (s > t)
        return user->emitOpError("at pipeline stage ")
               << t << " uses a value computed at the later stage " << s;
      if (deviceOf(s) == deviceOf(t))
        return success();
      Crossing &c = crossings[v];
      c.value = v;
      c.from = deviceOf(s);
      if (!llvm::is_contained(c.to, deviceOf(t)))
        c.to.push_back(deviceOf(t));
      // The receiving side re-annotates the value with its own sharding.
      if (auto annotation = dyn_cast<shard::ShardOp>(def))
        return need(annotation.getSharding(), t, user);
      return success();
    };
    for (Operation &op : body.without_terminator()) {
      auto it = stageOf.find(&op);
      if (it == stageOf.end())
        continue;
      SetVector<Value> inputs(op.getOperands().begin(), op.getOperands().end());
      getUsedValuesDefinedAbove(op.getRegions(), inputs);
      for (Value v : inputs)
        if (failed(need(v, it->second, &op)))
          return failure();
    }
    // A weight's update (a micro-batched step's gradient sum,
    // --loom-optimizer-step) is written back on the device computing it;
    // every other result is the model's, returned by the last device.
    SmallVector<int64_t> resultDevice;
    for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
      auto updates = func.getResultAttrOfType<StringAttr>(i, kUpdatesAttr);
      int64_t at = updates ? availableAt(v) : outputStage;
      resultDevice.push_back(deviceOf(at));
      // A gradient's sum stays on its stage's device, whose update
      // function (--loom-optimizer-step) reads it there.
      Operation *def = v.getDefiningOp();
      auto stage = def ? def->getAttrOfType<IntegerAttr>(kStageAttr) : nullptr;
      if (updates && stage && def->hasAttr(kBackwardAttr) &&
          resultDevice.back() != stage.getInt() % devices)
        return def->emitOpError("updates '")
               << updates.getValue() << "' in the backward of loom.stage "
               << stage.getInt() << ", on pipeline device "
               << stage.getInt() % devices
               << ", but reads a value computed later, on device "
               << resultDevice.back();
      if (failed(need(v, at, terminator)))
        return failure();
    }

    // A value sent without a sharding of its own (nothing propagated to
    // it) is made replicated on both sides; upstream shard-partition needs
    // the boundary annotated. Then classify again.
    bool annotated = false;
    OpBuilder annotator(func.getContext());
    for (auto &entry : crossings) {
      Value v = entry.first;
      auto producer = v.getDefiningOp<shard::ShardOp>();
      if (producer && !producer.getAnnotateForUsers())
        continue;
      OpBuilder &b = annotator;
      b.setInsertionPointAfterValue(v);
      Value replicated = createSharding(
          b, v.getLoc(), FlatSymbolRefAttr::get(grid.getSymNameAttr()));
      auto annotation = shard::ShardOp::create(b, v.getLoc(), v, replicated,
                                               /*annotate_for_users=*/false);
      v.replaceAllUsesExcept(annotation.getResult(), annotation);
      annotated = true;
    }
    if (annotated)
      return split(func, grid, devices);

    // Tags in program order of the sent values.
    SmallVector<Crossing *> ordered;
    for (auto &entry : crossings)
      ordered.push_back(&entry.second);
    auto key = [&](Crossing *c) {
      return std::make_pair(position.lookup(c->value.getDefiningOp()),
                            cast<OpResult>(c->value).getResultNumber());
    };
    llvm::sort(ordered, [&](Crossing *a, Crossing *b) { return key(a) < key(b); });
    for (auto [k, c] : llvm::enumerate(ordered)) {
      c->tag = k;
      llvm::sort(c->to);
    }

    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    for (int64_t d = 0; d < devices; ++d) {
      SmallVector<Crossing *> received, sent;
      for (Crossing *c : ordered) {
        if (c->from == d)
          sent.push_back(c);
        if (llvm::is_contained(c->to, d))
          received.push_back(c);
      }
      llvm::stable_sort(received, [](Crossing *a, Crossing *b) {
        return std::make_pair(a->from, a->tag) < std::make_pair(b->from, b->tag);
      });
      // The device's ops, stage by stage (program order within a stage).
      SmallVector<Operation *> own;
      for (Operation &op : body.without_terminator())
        if (auto it = stageOf.find(&op);
            it != stageOf.end() && deviceOf(it->second) == d)
          own.push_back(&op);
      llvm::stable_sort(own, [&](Operation *x, Operation *y) {
        return stageOf.lookup(x) < stageOf.lookup(y);
      });
      SmallVector<int64_t> virtualOnDevice;
      for (int64_t k = d; k < forwardStages; k += devices)
        virtualOnDevice.push_back(k);
      SmallVector<unsigned> returned;
      for (auto [i, device] : llvm::enumerate(resultDevice))
        if (device == d)
          returned.push_back(i);
      buildStage(b, func, d, virtualOnDevice, returned, received, sent, own,
                 clones[d]);
    }
    func.erase();
    return success();
  }

  /// Result `index` of pipelined offsets laid out by micro-batch, then by
  /// `results` results: the same dictionary with one result per micro-batch
  /// (what a value received alone, as a stage's argument, carries); null
  /// where an array holds no whole number of micro-batches.
  static DictionaryAttr resultOffsetsOf(DictionaryAttr offsets,
                                        unsigned results, unsigned index) {
    if (!offsets || index >= results)
      return nullptr;
    Builder b(offsets.getContext());
    SmallVector<NamedAttribute> entries;
    for (NamedAttribute entry : offsets) {
      auto all = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
      if (!all) {
        entries.push_back(entry);
        continue;
      }
      if (all.size() % results != 0)
        return nullptr;
      SmallVector<int64_t> one = resultPlaces(all.asArrayRef(), results, index);
      entries.push_back(
          b.getNamedAttr(entry.getName(), b.getDenseI64ArrayAttr(one)));
    }
    return b.getDictionaryAttr(entries);
  }

  /// The offsets the static memory plan gives the copy of `sent` that
  /// device `t` receives (its producer's kReceivedOffsetsAttr entry for `t`,
  /// reduced to its result), seen through the sharding annotations between.
  static DictionaryAttr receivedOffsets(Value sent, int64_t t) {
    while (auto annotation = sent.getDefiningOp<shard::ShardOp>())
      sent = annotation.getSrc();
    auto result = dyn_cast<OpResult>(sent);
    if (!result)
      return nullptr;
    Operation *producer = result.getOwner();
    return resultOffsetsOf(
        offsetsOnDevice(
            {}, producer->getAttrOfType<ArrayAttr>(kReceivedOffsetsAttr), t),
        producer->getNumResults(), result.getResultNumber());
  }

  /// The program of device `t`: its stages' ops in `own`'s order, each
  /// clone just before its first user, each received value where first
  /// used (loom-stage-transfers receives it there); it returns `func`'s
  /// results `returned`.
  void buildStage(OpBuilder &b, func::FuncOp func, int64_t t,
                  ArrayRef<int64_t> virtualStages, ArrayRef<unsigned> returned,
                  ArrayRef<Crossing *> received, ArrayRef<Crossing *> sent,
                  ArrayRef<Operation *> own,
                  const SetVector<Operation *> &clones) {
    Operation *terminator = func.getBody().front().getTerminator();
    SmallVector<Type> args(func.getArgumentTypes()), results;
    for (Crossing *c : received)
      args.push_back(c->value.getType());
    for (unsigned i : returned)
      results.push_back(func.getResultTypes()[i]);
    for (Crossing *c : sent)
      results.push_back(c->value.getType());

    auto stage = func::FuncOp::create(b, func.getLoc(),
                                      stageFunctionName(func.getSymName(), t),
                                      b.getFunctionType(args, results));
    for (NamedAttribute attr : func->getDiscardableAttrs())
      stage->setAttr(attr.getName(), attr.getValue());
    stage->setAttr(kPipelineStageAttr, b.getI64IntegerAttr(t));
    if (virtualStages.size() > 1)
      stage->setAttr("loom.virtual_stages", b.getDenseI64ArrayAttr(virtualStages));
    // A static memory plan's offsets (loom-place-memory) follow each value
    // to the device that holds it: every stage function keeps only its own
    // device's, as `loom.pipeline_offsets` (loom-arena-buffers reads them).
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      DictionaryAttr attrs = func.getArgAttrDict(i);
      if (!attrs)
        continue;
      NamedAttrList kept(attrs);
      kept.erase(kPipelineOffsetsAttr);
      kept.erase(kReceivedOffsetsAttr);
      if (DictionaryAttr here =
              offsetsOnDevice(attrs.getAs<DictionaryAttr>(kPipelineOffsetsAttr),
                              attrs.getAs<ArrayAttr>(kReceivedOffsetsAttr), t))
        kept.set(kPipelineOffsetsAttr, here);
      stage.setArgAttrs(i, kept.getDictionary(b.getContext()));
    }
    for (auto [k, c] : llvm::enumerate(received)) {
      NamedAttrList attrs;
      attrs.set("loom.recv_from", b.getI64IntegerAttr(c->from));
      attrs.set("loom.tag", b.getI64IntegerAttr(c->tag));
      if (DictionaryAttr here = receivedOffsets(c->value, t))
        attrs.set(kPipelineOffsetsAttr, here);
      stage.setArgAttrs(func.getNumArguments() + k,
                        attrs.getDictionary(b.getContext()));
    }
    for (auto [k, i] : llvm::enumerate(returned))
      if (DictionaryAttr attrs = func.getResultAttrDict(i))
        stage.setResultAttrs(k, attrs);
    unsigned firstSent = returned.size();
    for (auto [k, c] : llvm::enumerate(sent))
      stage.setResultAttrs(
          firstSent + k,
          b.getDictionaryAttr(
              {b.getNamedAttr("loom.send_to", b.getDenseI64ArrayAttr(c->to)),
               b.getNamedAttr("loom.tag", b.getI64IntegerAttr(c->tag))}));

    Block *block = stage.addEntryBlock();
    OpBuilder body = OpBuilder::atBlockEnd(block);
    IRMapping map;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      map.map(func.getArgument(i), block->getArgument(i));
    DenseMap<Value, BlockArgument> receivedArg;
    for (auto [k, c] : llvm::enumerate(received))
      receivedArg[c->value] = block->getArgument(func.getNumArguments() + k);

    // Values become available on demand: a received one from its argument
    // (re-annotated with its own sharding), a clone by cloning it.
    std::function<void(Operation *)> emit;
    std::function<void(Value)> materialize = [&](Value v) {
      if (map.contains(v))
        return;
      if (auto arg = receivedArg.find(v); arg != receivedArg.end()) {
        Value value = arg->second;
        if (auto annotation = v.getDefiningOp<shard::ShardOp>()) {
          materialize(annotation.getSharding());
          value = shard::ShardOp::create(body, annotation.getLoc(), value,
                                         map.lookup(annotation.getSharding()),
                                         /*annotate_for_users=*/false);
        }
        map.map(v, value);
        return;
      }
      if (Operation *def = v.getDefiningOp(); def && clones.contains(def))
        emit(def);
    };
    emit = [&](Operation *op) {
      SetVector<Value> inputs(op->getOperands().begin(),
                              op->getOperands().end());
      getUsedValuesDefinedAbove(op->getRegions(), inputs);
      for (Value v : inputs)
        materialize(v);
      Operation *copy = body.clone(*op, map);
      copy->removeAttr(kStageAttr);
      copy->removeAttr(kBackwardAttr);
      copy->removeAttr(kReceivedOffsetsAttr);
      // A clone (a weight, a constant) keeps its offsets only on their device.
      if (clones.contains(op) &&
          !offsetsOnDevice(
              op->getAttrOfType<DictionaryAttr>(kPipelineOffsetsAttr), {}, t))
        copy->removeAttr(kPipelineOffsetsAttr);
    };
    for (Operation *op : own)
      emit(op);
    SmallVector<Value> values;
    for (unsigned i : returned) {
      Value v = terminator->getOperand(i);
      materialize(v);
      values.push_back(map.lookup(v));
    }
    for (Crossing *c : sent)
      values.push_back(map.lookup(c->value));
    func::ReturnOp::create(body, terminator->getLoc(), values);
  }
};

struct StageTransfersPass
    : mlir::loom::impl::LoomStageTransfersBase<StageTransfersPass> {
  using LoomStageTransfersBase::LoomStageTransfersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // (The update functions too: a tied weight's sums are exchanged there.)
    for (func::FuncOp stage : programFunctions(module, entry)) {
      if (!stage->hasAttr(kPipelineStageAttr))
        return;
      auto grid = pipelineGrid(module, stage);
      if (failed(grid))
        return signalPassFailure();
      rewrite(stage, grid->first, grid->second);
    }
  }

  void rewrite(func::FuncOp stage, shard::GridOp grid, int64_t axis) {
    Block &block = stage.getBody().front();
    OpBuilder b(stage.getContext());
    auto gridRef = FlatSymbolRefAttr::get(grid.getSymNameAttr());
    auto axes = b.getDenseI16ArrayAttr({static_cast<int16_t>(axis)});
    llvm::BitVector receivedArgs(stage.getNumArguments());
    for (BlockArgument arg : stage.getArguments()) {
      auto from = stage.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      "loom.recv_from");
      if (!from)
        continue;
      // Received just before the first op that reads it.
      Operation *firstUser = block.getTerminator();
      for (Operation *user : arg.getUsers()) {
        Operation *inBlock = block.findAncestorOpInBlock(*user);
        if (inBlock && inBlock->isBeforeInBlock(firstUser))
          firstUser = inBlock;
      }
      b.setInsertionPoint(firstUser);
      auto type = cast<RankedTensorType>(arg.getType());
      Value empty = tensor::EmptyOp::create(b, arg.getLoc(), type.getShape(),
                                            type.getElementType());
      auto recv = shard::RecvOp::create(
          b, arg.getLoc(), type, gridRef, axes, empty,
          b.getDenseI64ArrayAttr({from.getInt()}), ValueRange{});
      recv->setAttr("loom.tag", stage.getArgAttr(arg.getArgNumber(), "loom.tag"));
      if (Attribute offsets =
              stage.getArgAttr(arg.getArgNumber(), kPipelineOffsetsAttr))
        recv->setAttr(kPipelineOffsetsAttr, offsets);
      arg.replaceAllUsesWith(recv.getResult());
      receivedArgs.set(arg.getArgNumber());
    }

    auto ret = cast<func::ReturnOp>(stage.getBody().front().getTerminator());
    struct Send {
      int64_t to, tag;
      Value value;
    };
    SmallVector<Send> sends;
    llvm::BitVector sentResults(stage.getNumResults());
    for (unsigned i = 0; i < stage.getNumResults(); ++i) {
      auto to = stage.getResultAttrOfType<DenseI64ArrayAttr>(i, "loom.send_to");
      if (!to)
        continue;
      int64_t tag = stage.getResultAttrOfType<IntegerAttr>(i, "loom.tag").getInt();
      for (int64_t dest : to.asArrayRef())
        sends.push_back({dest, tag, ret.getOperand(i)});
      sentResults.set(i);
    }
    llvm::stable_sort(sends, [](const Send &a, const Send &b) {
      return std::make_pair(a.to, a.tag) < std::make_pair(b.to, b.tag);
    });
    // Sent as soon as computed (sends never wait for their receiver).
    for (const Send &s : llvm::reverse(sends)) {
      b.setInsertionPointAfterValue(s.value);
      auto send = shard::SendOp::create(b, ret.getLoc(), s.value.getType(),
                                        gridRef, axes, s.value,
                                        b.getDenseI64ArrayAttr({s.to}),
                                        ValueRange{});
      send->setAttr("loom.tag", b.getI64IntegerAttr(s.tag));
    }
    ret->eraseOperands(sentResults);
    (void)stage.eraseResults(sentResults);
    (void)stage.eraseArguments(receivedArgs);
  }
};

} // namespace
