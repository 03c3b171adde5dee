//===- trace_import_fuzzer.cpp - libFuzzer target for the trace importer --===//
//
// Feeds arbitrary bytes to importTraceText with a fresh MLIRContext per input
// and swallows the diagnostics. Any crash, sanitizer report or hang is a bug;
// so is an internal-error diagnostic (an exception caught at the importer's
// boundary, marked with loom::kImporterBugNote) and a module that fails to verify or print, which are turned into
// traps here. Storage files named relative to the trace resolve in a scratch
// directory holding `w.bin` (64 KiB of known bytes, then zeros up to 64 MiB,
// sparse), so inputs can reach the weight and inline-constant paths.
//
// Built as loom-trace-fuzzer (libFuzzer, LOOM_BUILD_FUZZERS with clang) and
// as loom-trace-fuzz-replay (replay_main.cpp), which runs saved inputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Translate/Import.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

/// Where fuzz inputs pretend to live ("<dir>/fuzz.json").
static std::string &tracePath() {
  static std::string path;
  return path;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  llvm::sys::path::append(dir, "loom-trace-fuzz");
  if (llvm::sys::fs::create_directories(dir))
    std::abort();
  llvm::SmallString<128> weights(dir);
  llvm::sys::path::append(weights, "w.bin");
  int fd;
  if (llvm::sys::fs::openFileForWrite(weights, fd))
    std::abort();
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/false);
    for (unsigned i = 0; i < 65536; ++i)
      os << char(i * 37 + (i >> 8));
  }
  if (llvm::sys::fs::resize_file(fd, uint64_t(64) << 20))
    std::abort();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::path::append(dir, "fuzz.json");
  tracePath() = dir.str().str();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  registry.insert<loom::LoomDialect, func::FuncDialect>();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  bool internalError = false;
  ctx.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    // The importer marks its own bugs with a note; the message text alone
    // could be an input's name echoed back.
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      for (const Diagnostic &note : diag.getNotes())
        if (note.str() == loom::kImporterBugNote)
          internalError = true;
    return success();
  });

  loom::ImportOptions options;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      loom::importTraceText(text, tracePath(), &ctx, options);
  if (internalError)
    __builtin_trap();
  if (module) {
    if (failed(verify(*module)))
      __builtin_trap();
    module->print(llvm::nulls());
  }
  return 0;
}
