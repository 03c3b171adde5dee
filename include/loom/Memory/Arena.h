//===- Arena.h - static offsets for buffers with known lifetimes -*- C++ -*-===//
//
// Buffer assignment as compilers do it for a straight-line schedule: every
// buffer is live over an interval of schedule positions and gets a fixed
// offset in one arena per memory tier, so that no two buffers live at the
// same time overlap. The arena's size is compared with the bound no
// assignment can beat: the most bytes live at any one position. A plan is
// then replayed against its tier's capacity, event by event, with the
// reads the program makes (replayTier).
// Plain C++ on LLVMSupport, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_ARENA_H
#define LOOM_MEMORY_ARENA_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
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

/// A read at schedule position `position` of a value that lives in one of
/// `buffers` (indices into the tier's buffers: its forward copy, a copy
/// fetched back, a re-run's): one of them must be live there.
struct BufferRead {
  int64_t position = 0;
  std::vector<int64_t> buffers;
  std::string what; // "forward of 'loom.matmul' reads result 0 of 'loom.relu'"
};

/// The first position where a tier holds more than its capacity: the
/// highest byte in use there (plus what the tier holds beside the arena)
/// and the buffer allocated up to it.
struct TierOverflow {
  int64_t position = 0, bytes = 0, capacity = 0;
  std::string buffer;
};

/// What replaying one tier's plan found.
struct TierReplay {
  int64_t peakBytes = 0;     // highest byte in use at once, plus `reserved`
  int64_t peakPosition = 0;
  int64_t reads = 0;         // reads checked
  std::optional<TierOverflow> overflow;
};

/// Replays one tier of a static memory plan event by event, as a runtime
/// holding it would: at each schedule position the buffers whose lifetime
/// ended are freed and those starting there take their bytes at their
/// offsets, and the reads at that position are served. A read that finds
/// none of its buffers live is an error naming the read and where its
/// buffers are live (the plan would hand the op bytes that are not there).
/// The tier's use is the highest byte any live buffer reaches plus
/// `reservedBytes` (what the tier holds beside the arena: the device's
/// temporaries and communication buffers); the first position where that
/// exceeds `capacityBytes` is returned as the overflow, not an error, so
/// that the placement can be refused and another chosen.
llvm::Expected<TierReplay> replayTier(const std::vector<Buffer> &buffers,
                                      const ArenaPlan &plan,
                                      const std::vector<BufferRead> &reads,
                                      int64_t reservedBytes,
                                      int64_t capacityBytes,
                                      int64_t alignment = 256);

} // namespace loom::memory

#endif // LOOM_MEMORY_ARENA_H
