//===- RefreshReplayTest.cpp - carried chunks refreshed beside the schedule
//===//
//
// simulateRefresh replays the uploads that refresh the chunks a plan of one
// iteration carries into the next (the host's update rewrote them) on the
// link beside the plan's fetches. A hand-computed case it accepts, the
// corruptions it refuses, and a property test tying the two simulators
// together: for random training problems, every plan of one iteration and
// the plan carrying the fewest chunks, the update pipeline priced as
// placement prices it (uploads once the plan's last transfer has ended,
// gradients through a small staging buffer that holds steps back) gives a
// refresh the replay accepts.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/ChunkSchedule.h"
#include "loom/Memory/UpdatePipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace loom::memory;

namespace {

constexpr double MB = 1e6;

/// `replay`'s error text, empty where it passes.
std::string refusal(llvm::Error replay) {
  return replay ? llvm::toString(std::move(replay)) : std::string();
}

/// Four 1 MB chunks read forward (steps 0-3) and backward (steps 4-7), 1 ms
/// each, all rewritten by the host between iterations; every chunk fits.
ChunkProblem fourChunks(double budget) {
  ChunkProblem p;
  p.chunkBytes.assign(4, static_cast<int64_t>(MB));
  for (int i = 0; i < 4; ++i)
    p.steps.push_back({"fwd" + std::to_string(i), 1e-3, {i}});
  for (int i = 3; i >= 0; --i)
    p.steps.push_back({"bwd" + std::to_string(i), 1e-3, {i}});
  p.budgetBytes = budget;
  p.hostToDevice = 1e9; // 1 ms per chunk
  p.staleBytes.assign(4, MB);
  p.fetchWithinIteration = true;
  p.singleIteration = true;
  return p;
}

} // namespace

// All four chunks carried: each is refreshed once the backward has read it
// for the last time (chunk 3 after step 4, ..., chunk 0 after step 7), one
// after another on the link, and the next iteration starts at 9 ms.
TEST(RefreshReplay, CarriedChunksRefreshedAfterTheirLastRead) {
  ChunkProblem p = fourChunks(4 * MB);
  llvm::Expected<ChunkPlan> plan = planChunks(p);
  ASSERT_TRUE(!!plan) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->residentAtStart.size(), 4u);
  ASSERT_TRUE(plan->fetches.empty());
  std::vector<double> starts;
  for (int s = 0; s < 8; ++s)
    starts.push_back(s * 1e-3);
  std::vector<Refresh> refresh = {{3, MB, 4, 5e-3, 6e-3},
                                  {2, MB, 5, 6e-3, 7e-3},
                                  {1, MB, 6, 7e-3, 8e-3},
                                  {0, MB, 7, 8e-3, 9e-3}};
  EXPECT_EQ(refusal(simulateRefresh(p, *plan, refresh, starts, 9e-3)), "");
  auto broken = [&](auto edit, std::vector<double> timeline = {},
                    double next = 9e-3) {
    std::vector<Refresh> r = refresh;
    edit(r);
    return refusal(simulateRefresh(p, *plan, r,
                                   timeline.empty() ? starts : timeline, next));
  };
  EXPECT_NE(broken([](auto &r) { r.pop_back(); })
                .find("chunk 0 is carried with 1000000 stale bytes, but 0 are "
                      "refreshed"),
            std::string::npos);
  EXPECT_NE(
      broken([](auto &r) { r[2].start = 6.5e-3, r[2].end = 7.5e-3; })
          .find("the refresh of chunk 1 starts at 6.500 ms, before step 6 "
                "has read it (7.000 ms)"),
      std::string::npos);
  EXPECT_NE(broken([](auto &r) { r[1].start = 6.5e-3, r[1].end = 7.5e-3; })
                .find("the refresh of chunk 1 starts at 7.000 ms, while the "
                      "refresh of chunk 2 holds the link until 7.500 ms"),
            std::string::npos);
  EXPECT_NE(broken([](auto &) {}, {}, 8.5e-3)
                .find("the refresh of chunk 0 ends at 9.000 ms, after the next "
                      "iteration starts (8.500 ms)"),
            std::string::npos);
  EXPECT_NE(broken([](auto &r) {
              r[3].afterStep = 6;
            }).find("follows step 6, which does not read it"),
            std::string::npos);
  // The device update's reloads on the link beside the refresh of chunk 0.
  EXPECT_NE(refusal(simulateRefresh(p, *plan, refresh, starts, 9e-3,
                                    {{8.5e-3, 9e-3}}))
                .find("while the refresh of chunk 0 holds the link"),
            std::string::npos);
  EXPECT_EQ(refusal(simulateRefresh(p, *plan, refresh, starts, 10e-3,
                                    {{9e-3, 10e-3}})),
            "");
  // A step held back 2 ms (gradient staging) moves what follows it.
  std::vector<double> held = starts;
  for (int s = 5; s < 8; ++s)
    held[s] += 2e-3;
  EXPECT_NE(
      broken([](auto &) {}, held, 11e-3).find("before step 5 has read it"),
      std::string::npos);
  EXPECT_EQ(broken(
                [](auto &r) {
                  for (Refresh &x : r)
                    if (x.chunk != 3)
                      x.start += 2e-3, x.end += 2e-3;
                },
                held, 11e-3),
            "");
  std::vector<double> overlapping = starts;
  overlapping[3] = 2.5e-3;
  EXPECT_NE(broken([](auto &) {}, overlapping)
                .find("step 3 starts at 2.500 ms in the timeline"),
            std::string::npos);
}

// Chunks 1-3 released after their last read (the plan carrying only chunk
// 0): only chunk 0 is refreshed, and not while the next fetch holds the
// link; a refresh of a released chunk is refused.
TEST(RefreshReplay, ReleasedChunksAreNotRefreshed) {
  ChunkProblem p = fourChunks(4 * MB);
  llvm::Expected<ChunkPlan> kept = planChunks(p);
  ASSERT_TRUE(!!kept) << llvm::toString(kept.takeError());
  ChunkPlan plan = carryFewer(p, *kept, INFINITY, [](const ChunkPlan &plan) {
    return plan.iterationSeconds + plan.residentAtStart.size();
  });
  ASSERT_EQ(plan.residentAtStart, (std::vector<int>{0}));
  // Chunks 1, 2 and 3 arrive for steps 1-3: the plan's own clock.
  std::vector<double> starts;
  for (size_t s = 0; s < plan.stepEnds.size(); ++s)
    starts.push_back(s ? plan.stepEnds[s - 1] : 0);
  double last = plan.stepEnds.back();
  EXPECT_EQ(refusal(simulateRefresh(p, plan, {{0, MB, 7, last, last + 1e-3}},
                                    starts, last + 1e-3)),
            "");
  EXPECT_NE(refusal(simulateRefresh(p, plan,
                                    {{0, MB, 7, last, last + 1e-3},
                                     {2, MB, 5, last + 1e-3, last + 2e-3}},
                                    starts, last + 2e-3))
                .find("chunk 2 is refreshed, but the plan does not carry it"),
            std::string::npos);
  // Half of chunk 0 refreshed after step 0 (as if that step read those
  // bytes last) lands on the link beside the fetch of chunk 2.
  ASSERT_GE(plan.fetches.size(), 2u);
  EXPECT_EQ(plan.fetches[1].chunk, 2);
  double afterFirst = plan.stepEnds[0];
  ASSERT_LT(afterFirst, plan.fetches[1].end);
  EXPECT_NE(refusal(simulateRefresh(
                        p, plan,
                        {{0, 0.5 * MB, 0, afterFirst, afterFirst + 0.5e-3},
                         {0, 0.5 * MB, 7, last, last + 0.5e-3}},
                        starts, last + 1e-3))
                .find("holds the link"),
            std::string::npos);
}

TEST(RefreshReplay, RandomPipelinesRefreshBesideTheSchedule) {
  std::mt19937 rng(11);
  int replayed = 0, withRefresh = 0, heldBack = 0;
  for (int seed = 0; seed < 300; ++seed) {
    std::uniform_int_distribution<int> chunkCount(1, 10), stepCount(2, 24),
        reads(0, 3);
    std::uniform_real_distribution<double> unit(0, 1), seconds(1e-4, 2e-3);
    int n = chunkCount(rng);
    // Half the problems in round numbers (whole MB and milliseconds, no
    // latency), where transfers end exactly as steps do.
    const bool round = seed % 2 == 1;
    std::uniform_int_distribution<int> whole(1, 8);
    ChunkProblem p;
    for (int c = 0; c < n; ++c)
      p.chunkBytes.push_back(
          static_cast<int64_t>((round ? whole(rng) : 1 + 7 * unit(rng)) * MB));
    int steps = stepCount(rng);
    double largest = 0;
    for (int s = 0; s < steps; ++s) {
      Step step{"s" + std::to_string(s),
                round ? whole(rng) % 3 * 1e-3 : seconds(rng),
                {}};
      std::uniform_int_distribution<int> pick(0, n - 1);
      for (int r = reads(rng); r > 0; --r)
        step.reads.push_back(pick(rng));
      llvm::sort(step.reads);
      step.reads.erase(std::unique(step.reads.begin(), step.reads.end()),
                       step.reads.end());
      double bytes = 0;
      for (int c : step.reads)
        bytes += static_cast<double>(p.chunkBytes[c]);
      largest = std::max(largest, bytes);
      p.steps.push_back(std::move(step));
    }
    p.budgetBytes = std::max(largest, 8 * MB) + unit(rng) * 24 * MB;
    p.hostToDevice = round ? 1e9 : 1e9 + unit(rng) * 20e9;
    p.linkLatency = round ? 0 : 1e-5;
    p.fetchWithinIteration = true;
    p.singleIteration = true;
    for (int64_t bytes : p.chunkBytes)
      p.staleBytes.push_back(unit(rng) < 0.7 ? static_cast<double>(bytes) : 0);
    llvm::Expected<ChunkPlan> belady = planChunks(p);
    if (!belady) {
      llvm::consumeError(belady.takeError());
      continue;
    }
    ChunkPlan fewest =
        carryFewer(p, *belady, INFINITY, [](const ChunkPlan &plan) {
          return plan.iterationSeconds + plan.residentAtStart.size();
        });
    for (const ChunkPlan &plan : {*belady, fewest}) {
      // The update pipeline as placement prices a streamed step: one tensor
      // per chunk, its gradient ready after the chunk's last read, its
      // stale bytes uploaded again where the chunk is carried, every
      // upload before the next iteration, none before the plan's last
      // transfer has ended.
      UpdateProblem up;
      for (size_t s = 0; s < plan.stepEnds.size(); ++s)
        up.stepSeconds.push_back(plan.stepEnds[s] -
                                 (s ? plan.stepEnds[s - 1] : 0));
      up.waitsFor.resize(up.stepSeconds.size());
      up.deviceToHost = up.hostToDevice = p.hostToDevice;
      up.traceIteration = true;
      up.linkLatency = p.linkLatency;
      std::vector<bool> carried = onDeviceAtEveryStart(p, plan);
      std::vector<int> chunkOfTensor;
      for (int c = 0; c < n; ++c) {
        int last = lastReadStep(p, c);
        if (last < 0 || !(p.staleBytes[c] > 0))
          continue;
        OffloadedTensor t;
        t.name = "chunk" + std::to_string(c);
        t.readyAfterStep = last;
        t.gradientBytes = p.staleBytes[c];
        t.updateSeconds = seconds(rng);
        t.uploadBytes = carried[c] ? p.staleBytes[c] : 0;
        up.waitsFor.front().push_back(static_cast<int>(up.tensors.size()));
        up.tensors.push_back(t);
        chunkOfTensor.push_back(c);
      }
      double lastTransfer = 0;
      for (const Fetch &f : plan.fetches)
        lastTransfer = std::max(lastTransfer, f.end);
      up.uploadsAfterStep =
          lastTransfer > 0 ? static_cast<int>(llvm::lower_bound(plan.stepEnds,
                                                                lastTransfer) -
                                              plan.stepEnds.begin())
                           : -1;
      // A third of them stage gradients through 2 MB, holding steps back.
      if (seed % 3 == 0)
        up.stagingBytes = 2 * MB;
      if (round)
        for (OffloadedTensor &t : up.tensors)
          t.updateSeconds = std::round(t.updateSeconds * 1e3) * 1e-3;
      llvm::Expected<UpdateTimeline> timeline = simulateUpdates(up);
      ASSERT_TRUE(!!timeline)
          << "seed " << seed << ": " << llvm::toString(timeline.takeError());
      const IterationTrace &trace = timeline->trace;
      std::vector<Refresh> refresh;
      for (auto [x, c] : llvm::enumerate(chunkOfTensor))
        if (const Interval &up = trace.tensors[x].up; !up.empty())
          refresh.push_back(
              {c, p.staleBytes[c], lastReadStep(p, c), up.start, up.end});
      EXPECT_EQ(refusal(simulateRefresh(p, plan, refresh, trace.stepStarts,
                                        trace.nextStart)),
                "")
          << "seed " << seed;
      ++replayed;
      withRefresh += !refresh.empty();
      for (size_t s = 1; s < trace.stepStarts.size(); ++s)
        if (trace.stepStarts[s] > plan.stepEnds[s - 1] + 1e-12) {
          ++heldBack;
          break;
        }
    }
  }
  printf("refresh replays: %d plans, %d with refreshes, %d with steps held "
         "back by staging\n",
         replayed, withRefresh, heldBack);
  EXPECT_GT(withRefresh, 100);
  EXPECT_GT(heldBack, 10);
}
