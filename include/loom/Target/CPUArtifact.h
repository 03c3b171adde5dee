//===- CPUArtifact.h - compile loom IR into a loom-run artifact -*- C++ -*-===//
//
// The last step of the CPU path: lower a (planned or single-device) loom
// module with the loom-lower-to-cpu pipeline, compile the LLVM dialect
// in-process to a native object, link it into `program.so` with the system
// linker, and write `manifest.json` beside it (docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CPUARTIFACT_H
#define LOOM_TARGET_CPUARTIFACT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::loom {

struct CPUArtifactOptions {
  /// The artifact directory; replaced as a whole on success, untouched on
  /// failure.
  std::string outputDir;
  /// The entry function.
  std::string entry = "main";
  /// loom-fold-into-contractions' allow-excess-precision: a 16-bit
  /// contraction's float32 result is not rounded only to be widened again.
  bool allowExcessPrecision = false;
  /// Relative weight files are resolved against this directory (the model's).
  std::string weightsDir = ".";
  /// LLVM optimization level 0-3.
  unsigned optLevel = 2;
  /// The linker driver used to turn the object into a shared library.
  std::string linker = "cc";
  /// If set, the lowered LLVM-dialect module is also written here.
  std::string dumpLLVMDialect;
};

/// Lowers `module` in place and writes the artifact. Diagnostics go to the
/// module's context; nothing is left behind on failure.
LogicalResult writeCPUArtifact(ModuleOp module, const CPUArtifactOptions &options);

} // namespace mlir::loom

#endif // LOOM_TARGET_CPUARTIFACT_H
