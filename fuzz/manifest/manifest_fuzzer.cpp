//===- manifest_fuzzer.cpp - libFuzzer target for artifact manifests -----===//
//
// An artifact's manifest.json is what `loom-run` trusts to lay out every
// buffer it passes the program: shapes and splits, the arenas, where the
// static memory plan keeps each weight (`arena_offset`), the update's
// weights and a pipeline's stages. It is written by `loom compile`, but a
// user can edit or truncate it, so the runtime must refuse a bad one with
// an error rather than crash. Every input is written as the manifest of a
// scratch artifact directory and opened (loomrt_artifact_open, which
// parses and validates it without MPI or the program library); what it
// accepts is then read back through the C API as `loom-run` would:
//
//  * every tensor's info answers, with a local shape of non-negative
//    extents no larger than the global one, a tier among LOOMRT_TIER_*, and
//    an arena offset of -1 or more;
//  * an index past the end is refused.
//
// A crash, sanitizer report or hang is a bug; so is a broken promise above,
// which is turned into a trap.
//
// Built as loom-manifest-fuzzer (libFuzzer, LOOM_BUILD_FUZZERS with clang)
// and as loom-manifest-fuzz-replay (replay_main.cpp), which runs saved
// inputs.
//
//===----------------------------------------------------------------------===//

#include "loomrt.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {
/// The scratch artifact directory each input becomes the manifest of.
std::string &scratchDir() {
  static std::string dir;
  return dir;
}

void check(bool promise) {
  if (!promise)
    __builtin_trap();
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                        "/loom-manifest-fuzz-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    std::perror("loom-manifest-fuzz: mkdtemp");
    std::exit(1);
  }
  scratchDir() = pattern;
  // (Removed at exit, so that runs leave nothing behind.)
  std::atexit([] {
    std::remove((scratchDir() + "/manifest.json").c_str());
    rmdir(scratchDir().c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = scratchDir() + "/manifest.json";
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  loomrt_artifact *a = nullptr;
  if (loomrt_artifact_open(scratchDir().c_str(), &a) != LOOMRT_OK) {
    check(a == nullptr);
    return 0;
  }
  check(a != nullptr);
  check(loomrt_artifact_ranks(a) >= 1);
  check(loomrt_artifact_micro_batches(a) >= 1);
  for (int32_t kind : {LOOMRT_INPUT, LOOMRT_WEIGHT, LOOMRT_OUTPUT}) {
    int64_t count = loomrt_artifact_count(a, kind);
    check(count >= 0);
    for (int64_t i = 0; i < count; ++i) {
      loomrt_tensor_info info;
      check(loomrt_artifact_info(a, kind, i, &info) == LOOMRT_OK);
      check(info.name != nullptr && info.rank >= 0);
      for (int64_t d = 0; d < info.rank; ++d)
        check(info.local_shape[d] >= 0 && info.local_shape[d] <= info.shape[d]);
      check(info.tier >= LOOMRT_TIER_DEVICE && info.tier <= LOOMRT_TIER_NVME);
      check(info.arena_offset >= -1);
    }
    loomrt_tensor_info past;
    check(loomrt_artifact_info(a, kind, count, &past) != LOOMRT_OK);
  }
  loomrt_artifact_close(a);
  return 0;
}
