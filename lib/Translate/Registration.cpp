//===- Registration.cpp - loom-translate importer registration ------------===//
//
// Hooks the ONNX and trace importers into mlir-translate's registry and
// parses the options they share (--input-shape, --default-dim).
//
//===----------------------------------------------------------------------===//

#include "loom/Translate/Import.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::loom;

bool mlir::loom::parseInputShape(llvm::StringRef spec, ImportOptions &options,
                                 std::string &error) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || name == spec) {
    error = "--input-shape expects NAME=D0xD1x..., got '" + spec.str() + "'";
    return false;
  }
  SmallVector<int64_t> shape;
  if (dims != "scalar") {
    SmallVector<llvm::StringRef> parts;
    dims.split(parts, 'x');
    for (llvm::StringRef p : parts) {
      int64_t d;
      if (p.getAsInteger(10, d) || d < 0) {
        error = "--input-shape '" + spec.str() + "': '" + p.str() +
                "' is not a non-negative integer";
        return false;
      }
      shape.push_back(d);
    }
  }
  options.inputShapes[name] = shape;
  return true;
}

namespace {
struct ImportCLOptions {
  llvm::cl::list<std::string> inputShapes{
      "input-shape",
      llvm::cl::desc("Pin a graph input's shape: NAME=D0xD1x... "
                     "(repeatable; 'scalar' for rank 0)")};
  llvm::cl::opt<int64_t> defaultDim{
      "default-dim",
      llvm::cl::desc("Value for dynamic dims not pinned by --input-shape "
                     "(default: unpinned dynamic dims are an error)"),
      llvm::cl::init(-1)};
  llvm::cl::opt<int64_t> maxInline{
      "max-inline-elements",
      llvm::cl::desc("Non-parameter data (integer, bool, scalar) up to this "
                     "many elements stays an inline constant; parameters and "
                     "larger data become loom.weight references"),
      llvm::cl::init(64)};
};
} // namespace

static llvm::ManagedStatic<ImportCLOptions> clOptions;

/// Builds ImportOptions from the command line; reports a bad spec.
static std::optional<ImportOptions> optionsFromCommandLine(MLIRContext *ctx) {
  ImportOptions options;
  options.defaultDynamicDim = clOptions->defaultDim;
  options.maxInlineElements = clOptions->maxInline;
  for (const std::string &spec : clOptions->inputShapes) {
    std::string error;
    if (!parseInputShape(spec, options, error)) {
      emitError(UnknownLoc::get(ctx)) << error;
      return std::nullopt;
    }
  }
  return options;
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<LoomDialect, func::FuncDialect>();
}

void mlir::loom::registerImportTranslations() {
  *clOptions; // construct the options before command-line parsing
  static TranslateToMLIRRegistration onnx(
      "import-onnx", "Import an ONNX model into the loom dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        auto options = optionsFromCommandLine(ctx);
        if (!options)
          return nullptr;
        const llvm::MemoryBuffer *buf =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importONNXBytes(buf->getBuffer(), buf->getBufferIdentifier(),
                               ctx, *options);
      },
      registerDialects);
  static TranslateToMLIRRegistration trace(
      "import-trace", "Import a loom-trace JSON graph into the loom dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        auto options = optionsFromCommandLine(ctx);
        if (!options)
          return nullptr;
        const llvm::MemoryBuffer *buf =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importTraceText(buf->getBuffer(), buf->getBufferIdentifier(),
                               ctx, *options);
      },
      registerDialects);
}
