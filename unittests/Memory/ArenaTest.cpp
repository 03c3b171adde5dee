//===- ArenaTest.cpp - static buffer offsets and their check --------------===//
//
// Hand-checked cases (buffers never live together share an offset; ones
// live together stack; alignment), the checker catching an overlap, and a
// property test: on random lifetimes every plan checks clean and never
// beats the live bound; the mean and worst fragmentation are printed.
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

TEST(Arena, RandomLifetimesCheckCleanAboveTheBound) {
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
    }
    ArenaPlan plan = assignOffsets(buffers);
    if (llvm::Error e = checkArena(buffers, plan))
      FAIL() << "trial " << t << ": " << llvm::toString(std::move(e));
    EXPECT_GE(plan.arenaBytes, plan.liveBound) << "trial " << t;
    worst = std::max(worst, plan.fragmentation());
    sum += plan.fragmentation();
  }
  printf("arena over the live bound on %d random schedules: mean %.1f%%, "
         "worst %.1f%%\n",
         trials, 100 * sum / trials, 100 * worst);
}

} // namespace
