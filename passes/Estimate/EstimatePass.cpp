//===- EstimatePass.cpp - the --loom-estimate pass ------------------------===//
//
// Thin wrapper over estimateModule(): parses the options, attaches the
// summary to the module and writes the table and the JSON report. Reports
// are written through a temporary file and renamed, so a failed run never
// leaves half a report behind.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Estimate.h"

#include "loom/Cost/Estimate.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMESTIMATE
#include "passes/Estimate/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

// The tool-level flag the issue and the docs name; a pass's own report=
// option takes precedence.
static llvm::cl::opt<std::string>
    clReportFile("loom-report",
                 llvm::cl::desc("Write the JSON report of --loom-estimate (and "
                                "later planning passes) to this file"),
                 llvm::cl::value_desc("file"), llvm::cl::init(""));

std::string mlir::loom::reportFileFromCommandLine() { return clReportFile; }

namespace {
struct LoomEstimatePass : mlir::loom::impl::LoomEstimateBase<LoomEstimatePass> {
  using LoomEstimateBase::LoomEstimateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    EstimateOptions opts;
    opts.cluster = cluster;
    if (mode != "train" && mode != "infer") {
      mlir::emitError(module.getLoc(), "loom-estimate: mode must be train or infer, not '")
          << mode << "'";
      return signalPassFailure();
    }
    opts.training = mode == "train";
    opts.globalBatch = globalBatch;
    opts.microBatch = microBatch;
    auto sched = ::loom::parsePipelineSchedule(schedule);
    if (!sched) {
      mlir::emitError(module.getLoc(), "loom-estimate: unknown schedule '")
          << schedule << "' (gpipe, 1f1b, interleaved, kfkb)";
      return signalPassFailure();
    }
    if (globalBatch < 0 || microBatch < 0 || kfkbGroup < 1 || tokensPerSample < 0) {
      mlir::emitError(module.getLoc(), "loom-estimate: global-batch, micro-batch and "
                       "tokens-per-sample must be >= 0 and kfkb-group >= 1");
      return signalPassFailure();
    }
    opts.schedule = *sched;
    opts.kfkbGroup = kfkbGroup;
    opts.precision = precision;
    opts.recompute = recompute;
    opts.activations = activations;
    opts.zeroStage = zero;
    opts.overlapGradSync = overlapGradSync;
    opts.tokensPerSample = tokensPerSample;
    opts.calibrationFile = calibration;
    opts.annotateOps = annotateOps;

    FailureOr<Estimate> estimate = estimateModule(module, opts);
    if (failed(estimate))
      return signalPassFailure();

    Builder b(module.getContext());
    const Estimate &e = *estimate;
    module->setAttr(
        "loom.estimate",
        b.getDictionaryAttr({
            b.getNamedAttr("cluster", b.getStringAttr(e.clusterName)),
            b.getNamedAttr("devices", b.getI64IntegerAttr(e.devices)),
            b.getNamedAttr("step_time_s", b.getF64FloatAttr(e.stepTime)),
            b.getNamedAttr("samples_per_s", b.getF64FloatAttr(e.samplesPerSecond())),
            b.getNamedAttr("model_tflops_per_device",
                           b.getF64FloatAttr(e.modelTflopsPerDevice())),
            b.getNamedAttr("peak_memory_bytes", b.getF64FloatAttr(e.peakMemory())),
            b.getNamedAttr("fits", b.getBoolAttr(e.peakMemory() <=
                                                 e.cluster.device.memoryBytes)),
        }));

    if (table != "none") {
      if (table == "-") {
        printEstimate(e, llvm::errs());
      } else if (llvm::Error err = llvm::writeToOutput(
                     table, [&](llvm::raw_ostream &os) {
                       printEstimate(e, os);
                       return llvm::Error::success();
                     })) {
        mlir::emitError(module.getLoc(), "loom-estimate: cannot write ")
            << table << ": " << llvm::toString(std::move(err));
        return signalPassFailure();
      }
    }
    std::string reportPath = report.empty() ? std::string(clReportFile) : report;
    if (!reportPath.empty()) {
      if (llvm::Error err = llvm::writeToOutput(
              reportPath, [&](llvm::raw_ostream &os) {
                os << llvm::formatv("{0:2}", estimateToJSON(e)) << "\n";
                return llvm::Error::success();
              })) {
        mlir::emitError(module.getLoc(), "loom-estimate: cannot write ")
            << reportPath << ": " << llvm::toString(std::move(err));
        return signalPassFailure();
      }
    }
  }
};
} // namespace
