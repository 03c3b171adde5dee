//===- PlaceMemoryPass.cpp - the --loom-place-memory pass -----------------===//
//
// Thin wrapper over placeMemory(): parses the options, writes the table.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Memory.h"

#include "loom/Memory/Placement.h"

#include "llvm/Support/ToolOutputFile.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMPLACEMEMORY
#include "passes/Memory/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The items of a comma-separated option, trimmed (empty ones skipped).
std::vector<std::string> commaList(StringRef option) {
  SmallVector<StringRef> items;
  option.split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> list;
  for (StringRef item : items)
    list.push_back(item.trim().str());
  return list;
}
struct LoomPlaceMemoryPass
    : mlir::loom::impl::LoomPlaceMemoryBase<LoomPlaceMemoryPass> {
  using LoomPlaceMemoryBase::LoomPlaceMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "train" && mode != "infer") {
      emitError(module.getLoc(),
                "loom-place-memory: mode must be train or infer, not '")
          << mode << "'";
      return signalPassFailure();
    }
    PlacementOptions o;
    o.cluster = cluster;
    o.training = mode == "train";
    o.globalBatch = globalBatch;
    o.precision = precision;
    o.memoryFraction = memoryFraction;
    o.chunkBytes = chunkBytes;
    o.delayedUpdate = delayedUpdate;
    o.streamSharded = streamSharded;
    o.partialRecompute = partialRecompute;
    o.partialOffload = partialOffload;
    o.optimizerSplit = optimizerSplit;
    o.refuseOverflow = refuseOverflow;
    auto sched = ::loom::parsePipelineSchedule(schedule);
    if (!sched) {
      emitError(module.getLoc(), "loom-place-memory: unknown schedule '")
          << schedule << "' (gpipe, 1f1b, interleaved, kfkb)";
      return signalPassFailure();
    }
    o.schedule = *sched;
    if (kfkbGroup < 1) {
      emitError(module.getLoc(),
                "loom-place-memory: kfkb-group must be >= 1, not ")
          << static_cast<int64_t>(kfkbGroup);
      return signalPassFailure();
    }
    o.kfkbGroup = kfkbGroup;
    o.zeroStages.clear();
    SmallVector<StringRef> items;
    StringRef(zero).split(items, ',', -1, false);
    for (StringRef item : items) {
      unsigned z;
      if (item.trim().getAsInteger(10, z) || z > 3) {
        emitError(module.getLoc(), "loom-place-memory: unknown value '")
            << item.trim() << "' in zero= (ZeRO stages 0-3)";
        return signalPassFailure();
      }
      o.zeroStages.push_back(static_cast<int>(z));
    }
    o.activationTiers = commaList(activations);
    o.parameterTiers = commaList(parameters);
    o.recomputeModes = commaList(recompute);
    FailureOr<MemoryPlacement> placement = placeMemory(module, o);
    if (failed(placement))
      return signalPassFailure();
    if (!timeline.empty())
      if (llvm::Error err = writeTimeline(*placement, timeline)) {
        emitError(module.getLoc(),
                  "loom-place-memory: cannot write the timeline ")
            << timeline << ": " << llvm::toString(std::move(err));
        return signalPassFailure();
      }
    if (table == "none")
      return;
    if (table == "-") {
      printPlacement(*placement, llvm::errs());
      return;
    }
    if (llvm::Error err = llvm::writeToOutput(table, [&](llvm::raw_ostream &os) {
          printPlacement(*placement, os);
          return llvm::Error::success();
        })) {
      emitError(module.getLoc(), "loom-place-memory: cannot write ")
          << table << ": " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
  }
};
} // namespace
