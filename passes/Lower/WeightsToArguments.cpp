//===- WeightsToArguments.cpp - loom.weight ops become entry arguments ----===//
//
// The compiled program never opens a file; the runtime passes every weight
// in, already cut to the rank's shard. This pass appends one argument per
// distinct weight (same name, file and offset) to the entry function (and
// to each of a step's update functions), in first-use order, replaces the ops
// with it, and records where the bytes live in a `loom.weight` argument
// attribute for the manifest.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Memory/StaticMemoryPlanIR.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMWEIGHTSTOARGUMENTS
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct WeightsToArgumentsPass
    : mlir::loom::impl::LoomWeightsToArgumentsBase<WeightsToArgumentsPass> {
  using LoomWeightsToArgumentsBase::LoomWeightsToArgumentsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions = programFunctions(module, entry);
    if (functions.empty() || functions.front().isExternal()) {
      mlir::emitError(module.getLoc(), "loom-weights-to-arguments: no entry function '")
          << entry << "' with a body";
      return signalPassFailure();
    }
    // Weights outside the entry function would need the runtime to pass
    // them through every call; the importers never produce that.
    WalkResult stray = module.walk([&](WeightOp op) {
      if (llvm::is_contained(functions, op->getParentOfType<func::FuncOp>()))
        return WalkResult::advance();
      op.emitOpError("is outside the entry function '")
          << entry
          << "'; only the entry function (and its update) may load weights";
      return WalkResult::interrupt();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();
    for (func::FuncOp func : functions)
      if (failed(convert(func)))
        return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp func) {
    using Key = std::tuple<StringRef, StringRef, int64_t>;
    llvm::MapVector<Key, SmallVector<WeightOp>> weights;
    func.walk([&](WeightOp op) {
      weights[{op.getName(), op.getFile(), op.getOffset()}].push_back(op);
    });
    for (auto &[key, ops] : weights)
      if (failed(checkReadAlike(ops, pipelineStageOf(func))))
        return failure();
    Builder builder(&getContext());
    // The runtime owns every buffer it passes in (inputs are reused across
    // steps, weights across everything): bufferization must copy before
    // writing into one.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.setArgAttr(i, "bufferization.writable",
                      BoolAttr::get(&getContext(), false));
    for (auto &[key, ops] : weights) {
      WeightOp first = ops.front();
      unsigned index = func.getNumArguments();
      SmallVector<NamedAttribute> fields = {
          builder.getNamedAttr("role", builder.getStringAttr(
                                           stringifyWeightRole(first.getRole()))),
          builder.getNamedAttr("name", first.getNameAttr()),
          builder.getNamedAttr("file", first.getFileAttr()),
          builder.getNamedAttr("offset", builder.getI64IntegerAttr(first.getOffset()))};
      // A master copy's file holds the parameter's narrower elements.
      if (TypeAttr fileType = first.getFileTypeAttr())
        fields.push_back(builder.getNamedAttr("file_type", fileType));
      // Memory placement's tier off the device, for the runtime (which
      // keeps NVMe's in a file).
      if (StringRef tier = placedTier(first); tier != "device")
        fields.push_back(builder.getNamedAttr("tier", builder.getStringAttr(tier)));
      // Its place in that tier's arena, where the static memory plan gives
      // one: the runtime keeps it there rather than in a buffer of its own.
      if (auto [offset, slot] = arenaPlace(first, pipelineStageOf(func));
          offset) {
        fields.push_back(builder.getNamedAttr("arena_offset", offset));
        if (slot)
          fields.push_back(builder.getNamedAttr("arena_slot", slot));
      }
      SmallVector<NamedAttribute> argAttrs = {
          builder.getNamedAttr("loom.weight", builder.getDictionaryAttr(fields)),
          builder.getNamedAttr("bufferization.writable", builder.getBoolAttr(false))};
      // ZeRO-3 stores it in shards (ZeroShards.h): loom-arena-buffers puts
      // its gathers in the plan's slots.
      if (llvm::any_of(ops, [](WeightOp op) {
            return llvm::any_of(op->getUsers(), [](Operation *user) {
              auto s = dyn_cast<shard::ShardOp>(user);
              return s && !s.getAnnotateForUsers() && isZeroShard(s);
            });
          }))
        argAttrs.push_back(builder.getNamedAttr(kZeroShardMark, builder.getUnitAttr()));
      DictionaryAttr attrs = builder.getDictionaryAttr(argAttrs);
      if (failed(func.insertArgument(index, first.getType(), attrs, first.getLoc())))
        return failure();
      for (WeightOp op : ops) {
        op.replaceAllUsesWith(func.getArgument(index));
        op.erase();
      }
    }
    return success();
  }

  /// A weight's place in its tier's arena (`loom.placement`'s `offset`,
  /// or in a pipeline stage function of pipeline device `device` that
  /// device's entry of its `pipeline_offsets`; and for optimizer state its
  /// `slot` there, --loom-optimizer-step).
  static std::pair<IntegerAttr, IntegerAttr>
  arenaPlace(WeightOp op, std::optional<int64_t> device) {
    auto placement = op->getAttrOfType<DictionaryAttr>(kPlacementAttr);
    if (!placement)
      return {};
    auto slot = placement.getAs<IntegerAttr>("slot");
    if (auto offset = placement.getAs<IntegerAttr>("offset"))
      return {offset, slot};
    DictionaryAttr here =
        device ? offsetsOnDevice({},
                                 placement.getAs<ArrayAttr>("pipeline_offsets"),
                                 *device)
               : nullptr;
    if (!here)
      return {};
    return {here.getAs<IntegerAttr>("offset"), slot};
  }

  /// Uses of one weight become one argument, loaded once: each must read it
  /// as the first does, in its type and its file's element type, and hold
  /// it as the first does, in its role and placement's tier and place.
  static LogicalResult checkReadAlike(ArrayRef<WeightOp> ops,
                                      std::optional<int64_t> device) {
    WeightOp first = ops.front();
    auto fileType = [](WeightOp w) {
      TypeAttr t = w.getFileTypeAttr();
      return t ? t.getValue() : w.getType().getElementType();
    };
    for (WeightOp op : ops.drop_front()) {
      if (op.getType() != first.getType())
        return op.emitOpError("reads weight '")
               << op.getName() << "' as " << op.getType()
               << " but another use reads it as " << first.getType();
      if (fileType(op) != fileType(first))
        return op.emitOpError("reads weight '")
               << op.getName() << "' from its file as " << fileType(op)
               << " but another use reads it as " << fileType(first);
      if (op.getRole() != first.getRole())
        return op.emitOpError("reads weight '")
               << op.getName() << "' as a " << stringifyWeightRole(op.getRole())
               << " but another use reads it as a "
               << stringifyWeightRole(first.getRole());
      if (placedTier(op) != placedTier(first))
        return op.emitOpError("reads weight '")
               << op.getName() << "' placed in " << placedTier(op)
               << " memory but another use reads it placed in "
               << placedTier(first) << " memory";
      if (arenaPlace(op, device) != arenaPlace(first, device))
        return op.emitOpError("reads weight '")
               << op.getName()
               << "' at another place in its arena than another use";
    }
    return success();
  }
};
} // namespace
