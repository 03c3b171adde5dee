//===- loom.cpp - Loom's friendly driver ----------------------------------===//
//
// `loom summarize MODEL` imports a model (ONNX .onnx, loom-trace .json, or
// loom-dialect .mlir) and prints what it holds: ops by kind, parameters and
// FLOPs per sample. Later phases add planning verbs beside it. Every failure
// is a diagnostic naming the file and exits 1; output files are written only
// on success.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/ModelSummary.h"
#include "loom/InitAll.h"
#include "loom/Translate/Import.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace llvm;

static cl::SubCommand summarizeCmd("summarize",
                                   "Import a model and print its summary");
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|trace.json|.mlir>"),
                                      cl::sub(summarizeCmd));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Pin an input's shape: NAME=D0xD1x... (repeatable)"),
                cl::sub(summarizeCmd));
static cl::opt<int64_t>
    defaultDim("default-dim",
               cl::desc("Value for dynamic dims not pinned by --input-shape"),
               cl::init(-1), cl::sub(summarizeCmd));
static cl::opt<bool> jsonOutput("json", cl::desc("Print the summary as JSON"),
                                cl::sub(summarizeCmd));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::sub(summarizeCmd));
static cl::opt<bool> emitIR("emit-mlir",
                            cl::desc("Also print the imported loom IR"),
                            cl::sub(summarizeCmd));

/// Imports `path` by its extension; diagnostics go to the context's handler.
static OwningOpRef<ModuleOp> importModel(StringRef path, MLIRContext &ctx,
                                         const loom::ImportOptions &options) {
  StringRef ext = sys::path::extension(path);
  if (ext == ".onnx")
    return loom::importONNXFile(path, &ctx, options);
  if (ext == ".json")
    return loom::importTraceFile(path, &ctx, options);
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

static int runSummarize(MLIRContext &ctx) {
  loom::ImportOptions options;
  options.defaultDynamicDim = defaultDim;
  for (const std::string &spec : inputShapes) {
    std::string err;
    if (!loom::parseInputShape(spec, options, err)) {
      errs() << "loom: error: " << err << "\n";
      return 1;
    }
  }
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = importModel(modelPath, ctx, options);
  if (!module || failed(verify(*module)))
    return 1;
  FailureOr<loom::ModelSummary> summary =
      loom::summarizeModel(*module, sys::path::filename(modelPath));
  if (failed(summary))
    return 1;
  std::string err;
  auto out = openOutputFile(outputPath, &err);
  if (!out) {
    errs() << "loom: error: " << err << "\n";
    return 1;
  }
  if (emitIR)
    module->print(out->os());
  if (jsonOutput)
    loom::printSummaryJSON(*summary, out->os());
  else
    loom::printSummaryText(*summary, out->os());
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "Loom: plan and run models on clusters\n");
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  if (summarizeCmd)
    return runSummarize(ctx);
  errs() << "loom: no command given; try 'loom summarize MODEL' or --help\n";
  return 1;
}
