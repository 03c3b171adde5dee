//===- ActivationOffloadTest.cpp - kept activations in host memory --------===//
//
// Hand-timed cases for a fast and a slow link, the bounds every timeline
// meets (compute, and each link's busy time), and the errors.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/ActivationOffload.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

using namespace loom;

namespace {

std::vector<OffloadStep> steps(std::vector<double> seconds, std::vector<double> bytes) {
  std::vector<OffloadStep> out;
  for (size_t i = 0; i < seconds.size(); ++i)
    out.push_back({seconds[i], bytes[i]});
  return out;
}

TEST(ActivationOffload, FastLinkHidesAllButTheEnds) {
  auto ops = steps({1, 1, 1, 1}, {1, 1, 1, 1});
  auto t = simulateActivationOffload(ops, ops, 100, 100, 0);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  // The last copy drains after the forward; the first fetch waits.
  EXPECT_DOUBLE_EQ(t->forwardSeconds, 4.01);
  EXPECT_DOUBLE_EQ(t->backwardSeconds, 4.01);
  EXPECT_NEAR(t->forwardStall[3], 0.01, 1e-12);
  EXPECT_NEAR(t->backwardStall[3], 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(t->peakBytes, 2);
  EXPECT_DOUBLE_EQ(t->bytes, 4);
}

TEST(ActivationOffload, SlowLinkStallsOnFullBuffers) {
  // Each unit takes 2 s on the link and 1 s to compute.
  auto ops = steps({1, 1, 1, 1}, {2, 2, 2, 2});
  auto t = simulateActivationOffload(ops, ops, 1, 1, 0);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  // Forward: copies 1-3, 3-5, 5-7, 7-9; op 2 waits for the first to end
  // (t = 3), op 3 for the second (t = 5), then the drain to 9.
  EXPECT_DOUBLE_EQ(t->forwardSeconds, 9);
  EXPECT_DOUBLE_EQ(t->forwardStall[0], 0);
  EXPECT_DOUBLE_EQ(t->forwardStall[1], 0);
  EXPECT_DOUBLE_EQ(t->forwardStall[2], 1);
  EXPECT_DOUBLE_EQ(t->forwardStall[3], 1 + 3);
  // Backward: fetches 0-2, 2-4, 4-6, 6-8; each op runs after its fetch.
  EXPECT_DOUBLE_EQ(t->backwardSeconds, 9);
  EXPECT_DOUBLE_EQ(t->backwardStall[3], 2);
  EXPECT_DOUBLE_EQ(t->backwardStall[0], 1);
  EXPECT_DOUBLE_EQ(t->peakBytes, 4);
}

TEST(ActivationOffload, OpsWithoutKeptBytesDoNotWait) {
  auto fwd = steps({1, 1, 1}, {0, 0, 0});
  auto t = simulateActivationOffload(fwd, fwd, 0, 0, 1);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_DOUBLE_EQ(t->forwardSeconds, 3);
  EXPECT_DOUBLE_EQ(t->backwardSeconds, 3);
  EXPECT_DOUBLE_EQ(t->peakBytes, 0);
}

TEST(ActivationOffload, BoundsHoldOnRandomPrograms) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(0, 2), size(0, 3);
  std::bernoulli_distribution keeps(0.6);
  for (int round = 0; round < 200; ++round) {
    size_t n = 1 + rng() % 12;
    std::vector<OffloadStep> fwd, bwd;
    for (size_t i = 0; i < n; ++i) {
      fwd.push_back({time(rng), keeps(rng) ? size(rng) : 0});
      bwd.push_back({time(rng), keeps(rng) ? size(rng) : 0});
    }
    double rate = 0.5 + size(rng), latency = time(rng) / 10;
    auto t = simulateActivationOffload(fwd, bwd, rate, rate, latency);
    ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
    double fc = 0, bc = 0, down = 0, up = 0, largest = 0;
    int downUnits = 0, upUnits = 0;
    for (size_t i = 0; i < n; ++i) {
      fc += fwd[i].seconds;
      bc += bwd[i].seconds;
      down += fwd[i].bytes;
      up += bwd[i].bytes;
      downUnits += fwd[i].bytes > 0;
      upUnits += bwd[i].bytes > 0;
      largest = std::max({largest, fwd[i].bytes, bwd[i].bytes});
    }
    double fs = std::accumulate(t->forwardStall.begin(), t->forwardStall.end(), 0.0);
    double bs = std::accumulate(t->backwardStall.begin(), t->backwardStall.end(), 0.0);
    EXPECT_NEAR(t->forwardSeconds, fc + fs, 1e-9);
    EXPECT_NEAR(t->backwardSeconds, bc + bs, 1e-9);
    EXPECT_GE(t->forwardSeconds + 1e-9, down / rate + downUnits * latency);
    EXPECT_GE(t->backwardSeconds + 1e-9, up / rate + upUnits * latency);
    EXPECT_GE(t->peakBytes + 1e-12, largest);
    EXPECT_LE(t->peakBytes, kActivationOffloadBuffers * largest + 1e-12);
  }
}

TEST(ActivationOffload, Errors) {
  auto one = steps({1}, {1});
  auto two = steps({1, 1}, {1, 1});
  EXPECT_FALSE(static_cast<bool>(simulateActivationOffload(one, two, 1, 1, 0)));
  EXPECT_FALSE(static_cast<bool>(simulateActivationOffload(one, one, 0, 1, 0)));
  EXPECT_FALSE(static_cast<bool>(simulateActivationOffload(one, one, 1, 1, -1)));
  auto negative = steps({-1}, {1});
  auto t = simulateActivationOffload(negative, one, 1, 1, 0);
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("op 0"), std::string::npos);
}

} // namespace
