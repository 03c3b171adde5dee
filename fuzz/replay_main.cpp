//===- replay_main.cpp - run saved inputs through a fuzz target -----------===//
//
// The main of loom-trace-fuzz-replay and loom-cost-fuzz-replay (linked with
// their fuzz target): runs LLVMFuzzerTestOneInput on every
// file named on the command line and on every file in the directories named
// (not recursively), then prints how many inputs it ran. A crash fails the
// run, so the lit suite replays the corpus and the minimized crashers without
// needing libFuzzer or clang.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool runFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    llvm::errs() << "cannot read '" << path << "': " << buf.getError().message()
                 << "\n";
    return false;
  }
  LLVMFuzzerTestOneInput(
      reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
      (*buf)->getBufferSize());
  return true;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!llvm::sys::fs::is_directory(arg)) {
      files.push_back(arg);
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(arg, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    if (ec) {
      llvm::errs() << "cannot list '" << arg << "': " << ec.message() << "\n";
      return 1;
    }
  }
  llvm::sort(files); // a stable order makes failures reproducible
  unsigned ran = 0;
  for (const std::string &f : files) {
    if (!runFile(f))
      return 1;
    ++ran;
  }
  llvm::outs() << "replayed " << ran << " inputs\n";
  return 0;
}
