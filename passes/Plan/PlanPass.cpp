//===- PlanPass.cpp - the --loom-plan pass --------------------------------===//
//
// Thin wrapper over planModule(): parses the options, attaches a summary to
// the module, and writes the readable report and the JSON report. Reports
// go through llvm::writeToOutput (a temporary file renamed on success), so a
// failed run never leaves half a report behind.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Plan.h"

#include "loom/Passes/Estimate.h"
#include "loom/Cost/Recompute.h"
#include "loom/Plan/Search.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMPLAN
#include "passes/Plan/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomPlanPass : mlir::loom::impl::LoomPlanBase<LoomPlanPass> {
  using LoomPlanBase::LoomPlanBase;

  LogicalResult parseOptions(ModuleOp module, PlanOptions &opts) {
    auto fail = [&](const Twine &msg) {
      mlir::emitError(module.getLoc(), "loom-plan: ") << msg;
      return failure();
    };
    opts.cluster = cluster;
    if (mode != "train" && mode != "infer")
      return fail("mode must be train or infer, not '" + mode + "'");
    opts.training = mode == "train";
    if (level != "fast" && level != "thorough")
      return fail("level must be fast or thorough, not '" + level + "'");
    opts.thorough = level == "thorough";
    if (globalBatch < 0 || maxTP < 0 || maxPP < 0 || devices < 0)
      return fail("global-batch, max-tp, max-pp and devices must be >= 0");
    if (!(memoryFraction > 0 && memoryFraction <= 1))
      return fail("memory-fraction must be in (0, 1]");
    opts.globalBatch = globalBatch;
    opts.fold = fold;
    opts.splitProjections = splitProjections;
    opts.maxTP = maxTP;
    opts.maxPP = maxPP;
    opts.devices = devices;
    opts.precision = precision;
    opts.memoryFraction = memoryFraction;
    opts.runnersUp = runnersUp;
    opts.verify = verify;
    opts.checkExact = checkExact;
    opts.boundPipelines = boundPipelines;
    opts.placeMemory = placeMemory;
    // Comma-separated lists: each item parsed by `parse`, none may fail.
    auto parseList = [&](StringRef option, StringRef text, StringRef expected,
                         auto parse) -> LogicalResult {
      SmallVector<StringRef> items;
      text.split(items, ',', -1, false);
      if (items.empty())
        return fail(option + "= names nothing (" + expected + ")");
      for (StringRef item : items)
        if (!parse(item.trim()))
          return fail("unknown value '" + item.trim() + "' in " + option + "= (" +
                      expected + ")");
      return success();
    };
    opts.schedules.clear();
    opts.zeroStages.clear();
    opts.recomputeModes.clear();
    opts.activationTiers.clear();
    if (failed(parseList("schedules", schedules, "gpipe, 1f1b, interleaved, kfkb",
                         [&](StringRef item) {
                           auto s = ::loom::parsePipelineSchedule(item);
                           if (s)
                             opts.schedules.push_back(*s);
                           return s.has_value();
                         })) ||
        failed(parseList("zero", zero, "ZeRO stages 0-3", [&](StringRef item) {
          unsigned z;
          if (item.getAsInteger(10, z) || z > 3)
            return false;
          opts.zeroStages.push_back(static_cast<int>(z));
          return true;
        })) ||
        failed(parseList("recompute", recompute, "none, selective, full", [&](StringRef item) {
          if (!parseRecomputeMode(item))
            return false;
          opts.recomputeModes.push_back(item.str());
          return true;
        })) ||
        failed(parseList("activations", activations, "device, host", [&](StringRef item) {
          if (item != "device" && item != "host")
            return false;
          opts.activationTiers.push_back(item.str());
          return true;
        })))
      return failure();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    PlanOptions opts;
    if (failed(parseOptions(module, opts)))
      return signalPassFailure();
    FailureOr<PlanResult> plan = planModule(module, opts);
    if (failed(plan))
      return signalPassFailure();

    Builder b(module.getContext());
    const PlanResult &p = *plan;
    SmallVector<NamedAttribute> summary = {
        b.getNamedAttr("cluster", b.getStringAttr(p.clusterName)),
        b.getNamedAttr("plan", b.getStringAttr(p.best.describe())),
        b.getNamedAttr("step_time_s", b.getF64FloatAttr(p.best.finalStepTime())),
        b.getNamedAttr("peak_memory_bytes", b.getF64FloatAttr(p.best.finalPeakMemory())),
        b.getNamedAttr("fits", b.getBoolAttr(p.feasible)),
        // The step's settings a lowering acts on (the shardings, stages and
        // micro-batches are in the IR already).
        b.getNamedAttr("recompute", b.getStringAttr(p.best.recompute)),
        b.getNamedAttr("zero_stage", b.getI64IntegerAttr(p.best.zeroStage)),
    };
    if (!p.best.placement.empty())
      summary.push_back(b.getNamedAttr("placement", b.getStringAttr(p.best.placement)));
    module->setAttr("loom.plan", b.getDictionaryAttr(summary));

    if (table != "none") {
      if (table == "-") {
        printPlan(p, llvm::errs());
      } else if (llvm::Error err = llvm::writeToOutput(table, [&](llvm::raw_ostream &os) {
                   printPlan(p, os);
                   return llvm::Error::success();
                 })) {
        mlir::emitError(module.getLoc(), "loom-plan: cannot write ")
            << table << ": " << llvm::toString(std::move(err));
        return signalPassFailure();
      }
    }
    std::string reportPath = report.empty() ? reportFileFromCommandLine() : report;
    if (!reportPath.empty())
      if (llvm::Error err = llvm::writeToOutput(reportPath, [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", planToJSON(p)) << "\n";
            return llvm::Error::success();
          })) {
        mlir::emitError(module.getLoc(), "loom-plan: cannot write ")
            << reportPath << ": " << llvm::toString(std::move(err));
        return signalPassFailure();
      }
    if (!p.feasible) {
      mlir::emitError(module.getLoc(), "loom-plan: no plan fits in device memory; the closest "
                       "needs ")
          << bytesText(p.shortfallBytes) << " more per device (" << p.best.describe()
          << (p.best.placedDevicePeak ? ", memory placed" : "") << ")"
          << (!opts.placeMemory ? ""
              : p.placed ? "; no memory placement makes a plan fit"
                         : "; no plan is close enough to place");
      return signalPassFailure();
    }
  }
};
} // namespace
