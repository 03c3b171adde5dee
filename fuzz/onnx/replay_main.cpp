//===- replay_main.cpp - run the ONNX fuzz target over files --------------===//
//
// loom-onnx-fuzz-replay FILE|DIR...: calls LLVMFuzzerTestOneInput on every
// file given (directories are walked recursively), as libFuzzer would, but
// without libFuzzer, so CI can replay the committed corpus with any compiler.
// Prints each file before running it, so a crash names its input.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool runFile(const std::string &path, bool verbose) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    llvm::errs() << "loom-onnx-fuzz-replay: cannot read '" << path
                 << "': " << buf.getError().message() << "\n";
    return false;
  }
  if (verbose)
    llvm::errs() << "running " << path << "\n";
  LLVMFuzzerTestOneInput(
      reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
      (*buf)->getBufferSize());
  return true;
}

int main(int argc, char **argv) {
  bool verbose = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-v") {
      verbose = true;
      continue;
    }
    if (llvm::sys::fs::is_directory(arg)) {
      std::error_code ec;
      for (llvm::sys::fs::recursive_directory_iterator it(arg, ec), end;
           it != end && !ec; it.increment(ec))
        if (llvm::sys::fs::is_regular_file(it->path()))
          files.push_back(it->path());
      if (ec) {
        llvm::errs() << "loom-onnx-fuzz-replay: cannot walk '" << arg
                     << "': " << ec.message() << "\n";
        return 1;
      }
      continue;
    }
    files.push_back(arg);
  }
  if (files.empty()) {
    llvm::errs() << "usage: loom-onnx-fuzz-replay [-v] FILE|DIR...\n";
    return 1;
  }
  bool ok = true;
  for (const std::string &f : files)
    ok &= runFile(f, verbose);
  llvm::outs() << "replayed " << files.size() << " inputs\n";
  return ok ? 0 : 1;
}
