//===- Import.h - model importers into the loom dialect ---------*- C++ -*-===//
//
// Entry points of the two importers: ONNX protobuf models and Loom's traced
// PyTorch graph JSON ("loom-trace", docs/trace-format.md). Both build a module
// holding one `func.func @main` of loom ops; weights become `loom.weight`
// references (no weight bytes are read). Errors are emitted as diagnostics
// naming the file and the offending node; the functions then return failure
// and never crash on malformed input.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TRANSLATE_IMPORT_H
#define LOOM_TRANSLATE_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>

namespace mlir::loom {

/// Attached as a note to a diagnostic that reports a bug in an importer
/// rather than a problem with its input. Fuzzers look for it: the message
/// text itself can echo names from the input.
inline constexpr const char *kImporterBugNote =
    "this is a bug in Loom's importer, not a problem with the input";

struct ImportOptions {
  /// Pins input dims: input name -> full static shape (from --input-shape).
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Value used for any remaining symbolic dim (e.g. batch) when not pinned;
  /// a negative value makes unpinned dynamic dims an error.
  int64_t defaultDynamicDim = -1;
  /// Non-parameter data (integer, bool and scalar initializers, small trace
  /// constants) with at most this many elements becomes loom.constant; model
  /// parameters always, and larger data, become loom.weight references.
  int64_t maxInlineElements = 64;
};

/// Imports an ONNX model file (external data resolved relative to its dir).
OwningOpRef<ModuleOp> importONNXFile(llvm::StringRef path, MLIRContext *ctx,
                                     const ImportOptions &options);

/// Imports an ONNX model held in memory; `path` names it in diagnostics and
/// anchors relative external-data locations.
OwningOpRef<ModuleOp> importONNXBytes(llvm::StringRef bytes,
                                      llvm::StringRef path, MLIRContext *ctx,
                                      const ImportOptions &options);

/// Imports a loom-trace JSON file (storage files resolved relative to it).
OwningOpRef<ModuleOp> importTraceFile(llvm::StringRef path, MLIRContext *ctx,
                                      const ImportOptions &options);

/// Imports loom-trace JSON text; `path` names it in diagnostics.
OwningOpRef<ModuleOp> importTraceText(llvm::StringRef text,
                                      llvm::StringRef path, MLIRContext *ctx,
                                      const ImportOptions &options);

/// Parses "name=2x128" into `options.inputShapes`; error text on failure.
bool parseInputShape(llvm::StringRef spec, ImportOptions &options,
                     std::string &error);

/// Registers --import-onnx and --import-trace with mlir-translate's registry.
void registerImportTranslations();

} // namespace mlir::loom

#endif // LOOM_TRANSLATE_IMPORT_H
