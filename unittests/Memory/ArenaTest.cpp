//===- ArenaTest.cpp - static buffer offsets and their check --------------===//
//
// Hand-checked cases (buffers never live together share an offset; ones
// live together stack; alignment; a group of intervals at one offset), the
// checker catching an overlap and a split group, and a property test: on
// random lifetimes (some grouped) every plan checks clean and never beats
// the live bound; the mean and worst fragmentation are printed. The
// replay: its peak, the first overflow's position and buffer, and a read
// outside its buffers' lifetimes.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/Arena.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

using namespace loom::memory;

namespace {

void expectClean(const std::vector<Buffer> &buffers, const ArenaPlan &plan) {
  if (llvm::Error e = checkArena(buffers, plan))
    ADD_FAILURE() << llvm::toString(std::move(e));
}

TEST(Arena, DisjointLifetimesShareOneOffset) {
  std::vector<Buffer> buffers = {{"a", 1024, 0, 2}, {"b", 1024, 2, 4},
                                 {"c", 512, 4, 6}};
  ArenaPlan plan = assignOffsets(buffers);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(plan.arenaBytes, 1024);
  EXPECT_EQ(plan.liveBound, 1024);
  EXPECT_DOUBLE_EQ(plan.fragmentation(), 0);
  expectClean(buffers, plan);
}

TEST(Arena, LiveTogetherStackAndAlign) {
  // 100 bytes rounds up to 256. a is live over the whole schedule, so it
  // goes at the bottom; b stacks above it.
  std::vector<Buffer> buffers = {{"a", 100, 0, 3}, {"b", 600, 1, 2}};
  ArenaPlan plan = assignOffsets(buffers);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 256);
  EXPECT_EQ(plan.arenaBytes, 1024);
  EXPECT_EQ(plan.liveBound, 1024);
  expectClean(buffers, plan);
}

TEST(Arena, GapsAreReused) {
  // x and y are live together early, z after y ends: z fits in y's bytes.
  std::vector<Buffer> buffers = {
      {"x", 4096, 0, 10}, {"y", 2048, 0, 4}, {"z", 2048, 5, 10}};
  ArenaPlan plan = assignOffsets(buffers);
  EXPECT_EQ(plan.arenaBytes, 6144);
  EXPECT_EQ(plan.offsets[1], plan.offsets[2]);
  expectClean(buffers, plan);
}

TEST(Arena, CheckerCatchesOverlap) {
  std::vector<Buffer> buffers = {{"a", 256, 0, 2}, {"b", 256, 1, 3}};
  ArenaPlan plan = assignOffsets(buffers);
  plan.offsets = {0, 0};
  llvm::Error e = checkArena(buffers, plan);
  ASSERT_TRUE(!!e);
  EXPECT_EQ(llvm::toString(std::move(e)),
            "buffers 'a' and 'b' are live together and share bytes");
}

TEST(Arena, GroupSharesOneOffsetAcrossTheBoundary) {
  // A repeating schedule of 10 positions: "carried" is one allocation live
  // at both ends ([0, 2) and [8, 10)). "early" fills the low bytes over
  // [0, 4) so that placed alone, "carried"'s start would go above it, and
  // "late" takes the low bytes at the end: the group must find one offset
  // free in both intervals.
  std::vector<Buffer> buffers = {{"early", 4096, 0, 4},
                                 {"carried (start)", 1024, 0, 2, 7},
                                 {"late", 2048, 6, 10},
                                 {"carried (end)", 1024, 8, 10, 7}};
  ArenaPlan plan = assignOffsets(buffers);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
  EXPECT_GE(plan.offsets[1], 4096);
  expectClean(buffers, plan);
  // The check rejects a group split over two offsets.
  plan.offsets[3] = plan.offsets[1] + 1024;
  plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[3] + 1024);
  llvm::Error e = checkArena(buffers, plan);
  ASSERT_TRUE(!!e);
  EXPECT_NE(llvm::toString(std::move(e)).find("one allocation (group 7) at two offsets"),
            std::string::npos);
}

TEST(ArenaReplay, PeakAndReadsOnAPlanThatFits) {
  // a [0, 4) and b [1, 3) stack; c [3, 5) reuses b's bytes.
  std::vector<Buffer> buffers = {
      {"a", 1024, 0, 4}, {"b", 512, 1, 3}, {"c", 512, 3, 5}};
  ArenaPlan plan = assignOffsets(buffers);
  std::vector<BufferRead> reads = {{1, {1}, "r1"}, {2, {0, 1}, "r2"},
                                   {4, {1, 2}, "r4"}};
  llvm::Expected<TierReplay> r =
      replayTier(buffers, plan, reads, /*reserved=*/256, /*capacity=*/2048);
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  EXPECT_EQ(r->peakBytes, 1024 + 512 + 256);
  EXPECT_EQ(r->peakPosition, 1);
  EXPECT_EQ(r->reads, 3);
  EXPECT_FALSE(r->overflow);
}

TEST(ArenaReplay, OverflowNamesThePositionAndTheBuffer) {
  std::vector<Buffer> buffers = {
      {"a", 1024, 0, 4}, {"b", 512, 1, 3}, {"c", 512, 3, 5}};
  ArenaPlan plan = assignOffsets(buffers);
  llvm::Expected<TierReplay> r = replayTier(buffers, plan, {}, 256, 1536);
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->overflow.has_value());
  EXPECT_EQ(r->overflow->position, 1);
  EXPECT_EQ(r->overflow->bytes, 1792);
  EXPECT_EQ(r->overflow->buffer, "b");
  // What the tier holds beside the arena counts from the start.
  r = replayTier(buffers, plan, {}, 4096, 1536);
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->overflow.has_value());
  EXPECT_EQ(r->overflow->position, 0);
}

TEST(ArenaReplay, AReadOutsideItsBuffersLifetimeFails) {
  // A buffer is live over [start, end): a read at its end finds it gone.
  std::vector<Buffer> buffers = {{"a", 1024, 0, 2}, {"a again", 1024, 4, 6}};
  ArenaPlan plan = assignOffsets(buffers);
  llvm::Expected<TierReplay> r =
      replayTier(buffers, plan, {{2, {0, 1}, "backward of 'x' reads 'a'"}},
                 0, 1 << 20);
  ASSERT_FALSE(!!r);
  EXPECT_EQ(llvm::toString(r.takeError()),
            "backward of 'x' reads 'a' at position 2, but 'a' live over [0, "
            "2), 'a again' live over [4, 6)");
  r = replayTier(buffers, plan, {{1, {5}, "r"}}, 0, 1 << 20);
  ASSERT_FALSE(!!r);
  EXPECT_EQ(llvm::toString(r.takeError()), "r names buffer 5, but the tier has 2");
}

/// Random schedules: up to 60 buffers over 100 positions; with `grouped`,
/// every fifth one is also live at the schedule's start (one allocation
/// across the boundary of a repeating schedule).
void randomSchedules(bool grouped) {
  std::mt19937 rng(3);
  double worst = 0, sum = 0;
  const int trials = 300;
  for (int t = 0; t < trials; ++t) {
    std::uniform_int_distribution<int> count(1, 60), pos(0, 100),
        len(1, 30), size(1, 1 << 16);
    std::vector<Buffer> buffers;
    for (int i = 0, n = count(rng); i < n; ++i) {
      int start = pos(rng);
      buffers.push_back({"b" + std::to_string(i), size(rng), start,
                         start + len(rng)});
      if (grouped && i % 5 == 0 && start > 1) {
        buffers.back().group = i;
        buffers.push_back({"b" + std::to_string(i) + " (start)",
                           buffers.back().bytes, 0,
                           std::min(start, 1 + len(rng) / 4), i});
      }
    }
    ArenaPlan plan = assignOffsets(buffers);
    if (llvm::Error e = checkArena(buffers, plan))
      FAIL() << "trial " << t << ": " << llvm::toString(std::move(e));
    EXPECT_GE(plan.arenaBytes, plan.liveBound) << "trial " << t;
    worst = std::max(worst, plan.fragmentation());
    sum += plan.fragmentation();
  }
  printf("arena over the live bound on %d random schedules%s: mean %.1f%%, "
         "worst %.1f%%\n",
         trials, grouped ? " (a fifth of the buffers grouped)" : "",
         100 * sum / trials, 100 * worst);
}

TEST(Arena, RandomLifetimesCheckCleanAboveTheBound) { randomSchedules(false); }

TEST(Arena, RandomGroupsCheckCleanAboveTheBound) { randomSchedules(true); }

} // namespace
