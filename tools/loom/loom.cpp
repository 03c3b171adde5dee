//===- loom.cpp - Loom's friendly driver ----------------------------------===//
//
// `loom summarize MODEL` imports a model (ONNX .onnx, loom-trace .json, or
// loom-dialect .mlir) and prints what it holds: ops by kind, parameters and
// FLOPs per sample. `loom cluster list` and `loom cluster show NAME|FILE`
// list the cluster presets and print a spec (docs/cluster-spec.md).
// `loom estimate MODEL --cluster NAME` prices one step of the model's plan (a
// single device until it carries one) with the cost model
// (docs/cost-model.md). `loom compile MODEL -o DIR` lowers the model (and
// its plan, if it carries one or `--plan` asks for one) to a loom-run
// artifact (docs/artifact.md). Every failure is a diagnostic naming
// the file (or the field of a spec) and exits 1; output files are written
// only on success.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/ModelSummary.h"
#include "loom/Cost/Cluster.h"
#include "loom/Cost/Estimate.h"
#include "loom/InitAll.h"
#include "loom/Target/CPUArtifact.h"
#include "loom/Translate/Import.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace llvm;

/// The cost model's types live in ::loom (no MLIR dependency).
namespace cost = ::loom;

static cl::SubCommand summarizeCmd("summarize",
                                   "Import a model and print its summary");
static cl::SubCommand
    estimateCmd("estimate", "Import a model and estimate the time and memory "
                            "of one step of its plan on a cluster");
static cl::SubCommand
    compileCmd("compile", "Import a model, partition it by its plan, and "
                          "compile it into a loom-run artifact directory");
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|trace.json|.mlir>"),
                                      cl::sub(summarizeCmd), cl::sub(estimateCmd),
                                      cl::sub(compileCmd));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Pin an input's shape: NAME=D0xD1x... (repeatable)"),
                cl::sub(summarizeCmd), cl::sub(estimateCmd), cl::sub(compileCmd));
static cl::opt<int64_t>
    defaultDim("default-dim",
               cl::desc("Value for dynamic dims not pinned by --input-shape"),
               cl::init(-1), cl::sub(summarizeCmd), cl::sub(estimateCmd),
               cl::sub(compileCmd));
static cl::opt<bool> jsonOutput("json", cl::desc("Print the summary as JSON"),
                                cl::sub(summarizeCmd), cl::sub(estimateCmd));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::sub(summarizeCmd), cl::sub(estimateCmd),
                                       cl::sub(compileCmd));
static cl::opt<bool> emitIR("emit-mlir",
                            cl::desc("Also print the imported loom IR"),
                            cl::sub(summarizeCmd));

static cl::opt<std::string>
    estimateCluster("cluster", cl::desc("Cluster preset or spec file"),
                    cl::init("dgx-a100-80g"), cl::sub(estimateCmd));
static cl::opt<std::string> estimateMode("mode", cl::desc("train or infer"),
                                         cl::init("train"),
                                         cl::sub(estimateCmd));
static cl::opt<int64_t>
    estimateGlobalBatch("global-batch",
                        cl::desc("Samples per step (default: the IR's batch)"),
                        cl::init(0), cl::sub(estimateCmd));

static cl::opt<std::string>
    compilePlan("plan",
                cl::desc("Plan first with --loom-plan and these options, e.g. "
                         "'cluster=NAME mode=infer global-batch=8'"),
                cl::sub(compileCmd));
static cl::opt<std::string> compileEntry("entry", cl::desc("Entry function"),
                                         cl::init("main"), cl::sub(compileCmd));
static cl::opt<bool> compileExcessPrecision(
    "allow-excess-precision",
    cl::desc("Read a 16-bit contraction's float32 accumulator where its "
             "rounded result is only widened again (a 16-bit gradient "
             "into its float32 sum): one rounding fewer, other results"),
    cl::sub(compileCmd));
static cl::opt<unsigned> compileOptLevel("O", cl::desc("LLVM optimization level"),
                                         cl::init(2), cl::Prefix,
                                         cl::sub(compileCmd));
static cl::opt<std::string>
    compileDumpLLVM("dump-llvm-dialect",
                    cl::desc("Also write the lowered LLVM-dialect module here"),
                    cl::sub(compileCmd));

static cl::SubCommand
    clusterCmd("cluster", "Cluster specs: 'cluster list' prints the presets, "
                          "'cluster show NAME|FILE[:nodes=N]' one spec");
static cl::list<std::string> clusterArgs(cl::Positional, cl::OneOrMore,
                                         cl::desc("list | show NAME_OR_FILE"),
                                         cl::sub(clusterCmd));
static cl::opt<bool> clusterJSON("json",
                                 cl::desc("show: print the spec as JSON"),
                                 cl::sub(clusterCmd));

/// Imports `path` by its extension; diagnostics go to the context's handler.
static OwningOpRef<ModuleOp>
importModel(StringRef path, MLIRContext &ctx,
            const mlir::loom::ImportOptions &options) {
  StringRef ext = sys::path::extension(path);
  if (ext == ".onnx")
    return mlir::loom::importONNXFile(path, &ctx, options);
  if (ext == ".json")
    return mlir::loom::importTraceFile(path, &ctx, options);
  if (ext == ".mlir") {
    auto sourceMgr = std::make_shared<SourceMgr>();
    std::string err;
    auto file = openInputFile(path, &err);
    if (!file) {
      emitError(UnknownLoc::get(&ctx)) << err;
      return nullptr;
    }
    sourceMgr->AddNewSourceBuffer(std::move(file), SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  }
  emitError(UnknownLoc::get(&ctx))
      << "'" << path << "': unknown model format '" << ext
      << "' (expected .onnx, .json or .mlir)";
  return nullptr;
}

/// Imports `modelPath` with the --input-shape/--default-dim options.
static OwningOpRef<ModuleOp> importFromOptions(MLIRContext &ctx) {
  mlir::loom::ImportOptions options;
  options.defaultDynamicDim = defaultDim;
  for (const std::string &spec : inputShapes) {
    std::string err;
    if (!mlir::loom::parseInputShape(spec, options, err)) {
      errs() << "loom: error: " << err << "\n";
      return nullptr;
    }
  }
  OwningOpRef<ModuleOp> module = importModel(modelPath, ctx, options);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

/// Writes `-o` (stdout by default) only once `print` has produced all of it.
static int writeOutput(llvm::function_ref<void(raw_ostream &)> print) {
  std::string err;
  auto out = openOutputFile(outputPath, &err);
  if (!out) {
    errs() << "loom: error: " << err << "\n";
    return 1;
  }
  print(out->os());
  out->keep();
  return 0;
}

static int runSummarize(MLIRContext &ctx) {
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = importFromOptions(ctx);
  if (!module)
    return 1;
  FailureOr<mlir::loom::ModelSummary> summary =
      mlir::loom::summarizeModel(*module, sys::path::filename(modelPath));
  if (failed(summary))
    return 1;
  return writeOutput([&](raw_ostream &os) {
    if (emitIR)
      module->print(os);
    if (jsonOutput)
      mlir::loom::printSummaryJSON(*summary, os);
    else
      mlir::loom::printSummaryText(*summary, os);
  });
}

static int runEstimate(MLIRContext &ctx) {
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = importFromOptions(ctx);
  if (!module)
    return 1;
  if (estimateMode != "train" && estimateMode != "infer") {
    errs() << "loom: error: --mode must be train or infer, not '"
           << estimateMode << "'\n";
    return 1;
  }
  mlir::loom::EstimateOptions options;
  options.cluster = estimateCluster;
  options.training = estimateMode == "train";
  options.globalBatch = estimateGlobalBatch;
  FailureOr<mlir::loom::Estimate> estimate =
      mlir::loom::estimateModule(*module, options);
  if (failed(estimate))
    return 1;
  return writeOutput([&](raw_ostream &os) {
    if (jsonOutput)
      os << formatv("{0:2}", mlir::loom::estimateToJSON(*estimate)) << "\n";
    else
      mlir::loom::printEstimate(*estimate, os);
  });
}

static int runCompile(MLIRContext &ctx) {
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  if (outputPath == "-") {
    errs() << "loom: error: compile needs -o ARTIFACT_DIR\n";
    return 1;
  }
  OwningOpRef<ModuleOp> module = importFromOptions(ctx);
  if (!module)
    return 1;
  if (!compilePlan.empty()) {
    PassManager pm(&ctx);
    if (failed(parsePassPipeline("loom-plan{" + compilePlan + "}", pm, errs())))
      return 1;
    if (failed(pm.run(*module)))
      return 1;
  }
  mlir::loom::CPUArtifactOptions options;
  options.outputDir = outputPath;
  options.entry = compileEntry;
  options.optLevel = compileOptLevel;
  options.allowExcessPrecision = compileExcessPrecision;
  options.dumpLLVMDialect = compileDumpLLVM;
  SmallString<256> dir(modelPath.getValue());
  sys::path::remove_filename(dir);
  options.weightsDir = dir.empty() ? "." : dir.str().str();
  return failed(mlir::loom::writeCPUArtifact(*module, options)) ? 1 : 0;
}

/// A number with up to 4 significant digits after unit scaling.
static std::string num(double v) {
  std::string s;
  raw_string_ostream(s) << format("%.4g", v);
  return s;
}

static void printClusterText(const cost::ClusterSpec &c, raw_ostream &os) {
  using cost::OpClass;
  using cost::Precision;
  int64_t perNode = c.devicesPerNode();
  os << "cluster " << c.name << ": " << c.numDevices() << " devices";
  if (perNode != c.numDevices())
    os << " (" << c.numDevices() / perNode << " nodes x " << perNode << ")";
  os << "\n";
  if (!c.description.empty())
    os << "  " << c.description << "\n";
  const cost::DeviceSpec &d = c.device;
  os << "device " << d.name << "\n";
  os << "  memory: " << num(d.memoryBytes / (1ull << 30)) << " GiB at "
     << num(d.memoryBandwidth / 1e9) << " GB/s\n";
  os << "  peak TFLOP/s:";
  for (unsigned i = 0; i < cost::kNumPrecisions; ++i)
    os << " " << cost::stringifyPrecision(Precision(i)) << " "
       << num(d.peakFlops[i] / 1e12);
  os << "\n  kernel overhead: " << num(d.kernelOverhead * 1e6) << " us\n";
  os << "  efficiency (compute/memory):";
  for (unsigned i = 0; i < cost::kNumOpClasses; ++i)
    os << " " << cost::stringifyOpClass(OpClass(i)) << " "
       << num(d.efficiency[i].compute) << "/" << num(d.efficiency[i].memory);
  os << "\nlevels (innermost first):\n";
  int64_t below = 1;
  for (auto [i, l] : llvm::enumerate(c.levels)) {
    os << "  " << i << " " << l.name << ": " << l.kind << ", fanout "
       << l.fanout << ", " << num(l.bandwidth / 1e9)
       << " GB/s per device per direction";
    if (l.nics > 0)
      os << " (" << l.nics << " NICs x "
         << num(l.bandwidth * below * 8 / l.nics / 1e9) << " Gb/s per node)";
    os << ", latency " << num(l.latency * 1e6) << " us, bus efficiency "
       << num(l.busEfficiency) << "\n";
    below *= l.fanout;
  }
  const cost::HostSpec &h = c.host;
  os << "host: " << num(h.memoryBytes / (1ull << 30)) << " GiB, ";
  if (h.linkKind == "pcie")
    os << "PCIe gen" << h.pcieGen << " x" << h.pcieWidth;
  else
    os << h.linkKind;
  os << " " << num(h.linkBandwidth / 1e9) << " GB/s per device (copies "
     << num(h.copyBandwidth() / 1e9) << ")";
  if (h.cpuCores > 0)
    os << ", " << h.cpuCores << " cores";
  if (h.cpuAdamBandwidth > 0)
    os << ", CPU Adam " << num(h.cpuAdamBandwidth / 1e9) << " GB/s";
  os << "\n";
  if (c.nvme.capacityBytes > 0)
    os << "nvme: " << num(c.nvme.capacityBytes / (1ull << 40)) << " TiB, read "
       << num(c.nvme.readBandwidth / 1e9) << " GB/s, write "
       << num(c.nvme.writeBandwidth / 1e9) << " GB/s\n";
  else
    os << "nvme: none\n";
}

static int runCluster() {
  StringRef verb = clusterArgs.front();
  if (verb == "list" && clusterArgs.size() == 1) {
    for (const std::string &name : cost::clusterPresetNames()) {
      Expected<cost::ClusterSpec> spec = cost::loadCluster(name);
      if (!spec) {
        errs() << "loom: error: " << toString(spec.takeError()) << "\n";
        return 1;
      }
      outs() << left_justify(name, 18) << " "
             << right_justify(std::to_string(spec->numDevices()), 4)
             << " devices  " << spec->description << "\n";
    }
    return 0;
  }
  if (verb == "show" && clusterArgs.size() == 2) {
    Expected<cost::ClusterSpec> spec = cost::loadCluster(clusterArgs[1]);
    if (!spec) {
      errs() << "loom: error: " << toString(spec.takeError()) << "\n";
      return 1;
    }
    if (clusterJSON)
      outs() << cost::clusterSpecToJSON(*spec);
    else
      printClusterText(*spec, outs());
    return 0;
  }
  errs() << "loom: error: usage: loom cluster list | loom cluster show "
            "NAME_OR_FILE [--json]\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "Loom: plan and run models on clusters\n");
  if (clusterCmd)
    return runCluster();
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  if (estimateCmd)
    return runEstimate(ctx);
  if (summarizeCmd)
    return runSummarize(ctx);
  if (compileCmd) {
    mlir::loom::registerAllPasses();
    return runCompile(ctx);
  }
  errs() << "loom: no command given; try 'loom summarize MODEL', "
            "'loom estimate MODEL --cluster NAME', 'loom compile MODEL -o DIR', "
            "'loom cluster list' or --help\n";
  return 1;
}
