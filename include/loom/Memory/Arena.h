//===- Arena.h - static offsets for buffers with known lifetimes -*- C++ -*-===//
//
// Buffer assignment as compilers do it for a straight-line schedule: every
// buffer is live over an interval of schedule positions and gets a fixed
// offset in one arena per memory tier, so that no two buffers live at the
// same time overlap. The arena's size is compared with the bound no
// assignment can beat: the most bytes live at any one position.
// Plain C++ on LLVMSupport, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_ARENA_H
#define LOOM_MEMORY_ARENA_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::memory {

/// Live over schedule positions [start, end). Buffers of one `group`
/// (>= 0) are one allocation live over several disjoint intervals, and get
/// one offset: in a schedule that repeats, a buffer live across the
/// boundary is its end interval and its start interval.
struct Buffer {
  std::string name;
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int group = -1;
};

struct ArenaPlan {
  std::vector<int64_t> offsets; // per buffer, aligned
  int64_t arenaBytes = 0;
  int64_t liveBound = 0; // most aligned bytes live at one position
  double fragmentation() const {
    return liveBound ? double(arenaBytes) / double(liveBound) - 1 : 0;
  }
};

/// Assigns offsets: buffers in decreasing size (longer lifetimes first on
/// ties), each at the lowest offset where it fits between the buffers
/// already placed that overlap it in time; a group at once, at the lowest
/// offset where all its members fit. Sizes round up to `alignment`.
ArenaPlan assignOffsets(const std::vector<Buffer> &buffers,
                        int64_t alignment = 256);

/// Checks a plan independently: every buffer aligned and inside the arena,
/// a group's buffers at one offset, no two buffers live at the same
/// position sharing a byte, and the bound recomputed. The first violation
/// names both buffers.
llvm::Error checkArena(const std::vector<Buffer> &buffers,
                       const ArenaPlan &plan, int64_t alignment = 256);

} // namespace loom::memory

#endif // LOOM_MEMORY_ARENA_H
