//===- UpdatePipelineTest.cpp - the offloaded optimizer step, overlapped --===//
//
// A hand-computed two-layer case, exact, delayed, and with data-parallel
// collectives on the network; the errors; and a property test over random
// problems: the steady step is the device's compute plus its waits, at
// least every resource's busy time, at most everything one after another,
// and never longer with the delayed update than without.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/UpdatePipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace loom::memory;

namespace {

/// Two forward and two backward steps of 1 s; tensor "a" is read by the
/// first forward step (its gradient completes after the last backward
/// step), "b" by the second. Every transfer and update takes 1 s.
UpdateProblem twoLayers() {
  UpdateProblem p;
  p.stepSeconds = {1, 1, 1, 1};
  p.waitsFor = {{0}, {1}, {}, {}};
  p.tensors = {{"a", 3, 1, 1, 1}, {"b", 2, 1, 1, 1}};
  p.deviceToHost = p.hostToDevice = 1;
  return p;
}

UpdateTimeline simulateOrFail(const UpdateProblem &p) {
  llvm::Expected<UpdateTimeline> t = simulateUpdates(p);
  EXPECT_TRUE(!!t) << llvm::toString(t.takeError());
  return t ? *t : UpdateTimeline();
}

/// The error simulating `p` gives (empty, with a failure, if none).
std::string errorOf(const UpdateProblem &p) {
  llvm::Expected<UpdateTimeline> t = simulateUpdates(p);
  EXPECT_FALSE(!!t) << "a bad problem is simulated";
  return t ? std::string() : llvm::toString(t.takeError());
}

} // namespace

TEST(UpdatePipeline, ExactUpdateOverlapsTheBackward) {
  // b goes down at 3-4, is updated 4-5, up 5-6; a follows one second
  // behind and lands at 7, three seconds after the backward ends: the next
  // forward waits 3 s, not the 6 s of doing it all afterwards.
  UpdateTimeline t = simulateOrFail(twoLayers());
  EXPECT_DOUBLE_EQ(t.computeSeconds, 4);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 7);
  EXPECT_DOUBLE_EQ(t.waitSeconds, 3);
  EXPECT_DOUBLE_EQ(t.cpuSeconds, 2);
  EXPECT_DOUBLE_EQ(t.serialSeconds, 10);
}

TEST(UpdatePipeline, DelayedUpdateHidesTheCpuStep) {
  // The CPU's work is hidden, but an upload replaces the version the
  // current iteration reads, so it waits for that iteration's last read:
  // a's upload starts when the backward ends and the next forward waits
  // for it (1 s), not for the whole pipeline (3 s).
  UpdateProblem p = twoLayers();
  p.staleness = 1;
  UpdateTimeline t = simulateOrFail(p);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 5);
  EXPECT_DOUBLE_EQ(t.waitSeconds, 1);
  // Without uploads (nothing to swap in) the device never waits.
  for (OffloadedTensor &x : p.tensors)
    x.uploadBytes = 0;
  EXPECT_DOUBLE_EQ(simulateOrFail(p).stepSeconds, 4);
  // A CPU slower than the device bounds the step even then.
  for (OffloadedTensor &x : p.tensors)
    x.updateSeconds = 3;
  EXPECT_DOUBLE_EQ(simulateOrFail(p).stepSeconds, 6);
}

TEST(UpdatePipeline, UploadsAfterTheLastStepAndTheDeviceUpdate) {
  UpdateProblem p = twoLayers();
  // Uploads wait for the backward to end (4): b lands at 6 as before, a at
  // 7; the device's own update of 2 s ends at 6, so the wait is 1 s.
  p.uploadsAfterStep = 3;
  p.deviceUpdateSeconds = 2;
  UpdateTimeline t = simulateOrFail(p);
  EXPECT_DOUBLE_EQ(t.computeSeconds, 6);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 7);
}

TEST(UpdatePipeline, UploadsAfterAnEarlierStep) {
  // A 3 s last step and uploads of 2 s: b ends its backward at 3, goes down
  // 3-4, is updated 4-5 and goes up 5-7; a ends at 6, goes down 6-7, needs
  // no CPU time and goes up 7-9, when the next forward may start.
  UpdateProblem p = twoLayers();
  p.stepSeconds = {1, 1, 1, 3};
  p.tensors[0].updateSeconds = 0;
  p.hostToDevice = 0.5;
  p.traceIteration = true;
  UpdateTimeline t = simulateOrFail(p);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 9);
  // The trace of an iteration says so, from its first step's start.
  const IterationTrace &trace = t.trace;
  EXPECT_EQ(trace.stepStarts, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(trace.stepEnds, (std::vector<double>{1, 2, 3, 6}));
  ASSERT_EQ(trace.tensors.size(), 2u);
  const TensorTimes &a = trace.tensors[0], &b = trace.tensors[1];
  EXPECT_EQ(b.name, "b");
  auto is = [](const Interval &i, double start, double end) {
    return i.start == start && i.end == end;
  };
  EXPECT_TRUE(is(b.down, 3, 4) && is(b.update, 4, 5) && is(b.up, 5, 7));
  EXPECT_TRUE(is(a.down, 6, 7) && a.update.empty() && is(a.up, 7, 9));
  EXPECT_TRUE(a.reduce.empty() && a.gather.empty() &&
              trace.deviceUpdate.empty());
  EXPECT_DOUBLE_EQ(trace.nextStart, 9);
  // The link busy with other transfers through step 2 (ends at 3) delays
  // nothing; through the last step (ends at 6), b goes up 6-8 and a 8-10.
  p.uploadsAfterStep = 2;
  EXPECT_DOUBLE_EQ(simulateOrFail(p).stepSeconds, 9);
  p.uploadsAfterStep = 3;
  EXPECT_DOUBLE_EQ(simulateOrFail(p).stepSeconds, 10);
  // A step beyond the last is an error.
  p.uploadsAfterStep = 4;
  EXPECT_NE(errorOf(p).find("uploads wait for step 4"), std::string::npos);
}

TEST(UpdatePipeline, DeviceReloadsTakeTheLinkFirst) {
  // A 3 s device update after the last step (ends at 4) whose first 2 s
  // reload kept weights over the link: b's upload, ready at 5, waits for
  // them (6-7), a's follows (7-8), and the next forward waits for a until
  // 8. Without the reloads on the link, a lands at 7 as the update ends.
  UpdateProblem p = twoLayers();
  p.deviceUpdateSeconds = 3;
  EXPECT_DOUBLE_EQ(simulateOrFail(p).stepSeconds, 7);
  p.deviceReloadSeconds = 2;
  p.traceIteration = true;
  UpdateTimeline t = simulateOrFail(p);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 8);
  EXPECT_DOUBLE_EQ(t.trace.deviceReloads.start, 4);
  EXPECT_DOUBLE_EQ(t.trace.deviceReloads.end, 6);
  EXPECT_DOUBLE_EQ(t.trace.tensors[1].up.start, 6);
  EXPECT_DOUBLE_EQ(t.trace.tensors[0].up.end, 8);
  // More reload than update is an error.
  p.deviceReloadSeconds = 4;
  EXPECT_NE(errorOf(p).find("reloads for 4"), std::string::npos);
}

TEST(UpdatePipeline, DataParallelReduceAndGatherOnTheNetwork) {
  // Each gradient is reduced over the replicas (1 s on the network) before
  // it goes down, and each updated shard all-gathered (1 s) after it is back
  // up: b reduced 3-4, a 4-5; down 4-5 and 5-6; CPU 5-6 and 6-7; up 6-7
  // and 7-8; gathered 7-8 and 8-9. The next forward waits for a until 9.
  UpdateProblem p = twoLayers();
  for (OffloadedTensor &x : p.tensors)
    x.reduceSeconds = x.gatherSeconds = 1;
  UpdateTimeline t = simulateOrFail(p);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 9);
  EXPECT_DOUBLE_EQ(t.waitSeconds, 5);
  EXPECT_DOUBLE_EQ(t.networkSeconds, 4);
  EXPECT_DOUBLE_EQ(t.serialSeconds, 14);
  p.tensors[1].gatherSeconds = -1;
  llvm::Expected<UpdateTimeline> bad = simulateUpdates(p);
  ASSERT_FALSE(!!bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("tensor 'b' has a negative"),
            std::string::npos);
}

TEST(UpdatePipeline, StagingHoldsTheBackwardBack) {
  // Backward steps of 1 s each complete a 3-byte gradient apiece, and each
  // takes 3 s to go down; the next iteration waits for every update. With
  // as much staging as they need the backward runs on and the copies queue
  // behind it; with room for two, the third gradient's step waits for the
  // first copy to leave.
  UpdateProblem p;
  p.stepSeconds = {1, 1, 1, 1};
  p.waitsFor = {{0, 1, 2, 3}, {}, {}, {}};
  p.tensors = {{"d", 0, 3, 0, 0}, {"c", 1, 3, 0, 0}, {"b", 2, 3, 0, 0}, {"a", 3, 3, 0, 0}};
  p.deviceToHost = p.hostToDevice = 1;
  UpdateProblem once = p;
  // Three gradients and a long last step: unlimited, the steps end at 1,
  // 2, 3 and 9 s and the copies at 4, 7 and 10 s; with room for two the
  // third step waits until 4 s, and the last ends at 11 s.
  once.tensors.resize(3);
  once.waitsFor[0] = {0, 1, 2};
  once.stepSeconds = {1, 1, 1, 6};
  UpdateTimeline free = simulateOrFail(once);
  once.stagingBytes = 6;
  UpdateTimeline staged = simulateOrFail(once);
  EXPECT_DOUBLE_EQ(free.stepSeconds, 10);
  EXPECT_DOUBLE_EQ(staged.stepSeconds, 11);
  EXPECT_GT(staged.waitSeconds, free.waitSeconds);
  // Room for all of them: nothing waits for staging.
  once.stagingBytes = 9;
  EXPECT_DOUBLE_EQ(simulateOrFail(once).stepSeconds, free.stepSeconds);
  // Small gradients share the room a large one leaves: four 1-byte
  // gradients and a 3-byte one fit in 6 bytes without waiting.
  UpdateProblem small = p;
  small.stepSeconds.push_back(1);
  small.waitsFor = {{0, 1, 2, 3, 4}, {}, {}, {}, {}};
  small.tensors = {{"w", 0, 3, 0, 0}, {"b1", 1, 1, 0, 0}, {"b2", 2, 1, 0, 0},
                   {"b3", 3, 1, 0, 0}, {"b4", 4, 0.5, 0, 0}};
  UpdateTimeline smallFree = simulateOrFail(small);
  small.stagingBytes = 6;
  EXPECT_DOUBLE_EQ(simulateOrFail(small).stepSeconds, smallFree.stepSeconds);
  // A negative size is refused.
  p.stagingBytes = -1;
  llvm::Expected<UpdateTimeline> refused = simulateUpdates(p);
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("bytes of gradient staging"),
            std::string::npos);
}

TEST(UpdatePipeline, BadProblemsAreErrors) {
  UpdateProblem p = twoLayers();
  p.tensors[0].readyAfterStep = 4;
  EXPECT_NE(errorOf(p).find("tensor 'a' is ready after step 4, but there are "
                            "4 steps"),
            std::string::npos);
  p = twoLayers();
  p.deviceToHost = 0;
  EXPECT_NE(errorOf(p).find("device-to-host bandwidth"), std::string::npos);
  p = twoLayers();
  p.waitsFor[1] = {2};
  EXPECT_NE(errorOf(p).find("waits for tensor 2"), std::string::npos);
  p = twoLayers();
  p.staleness = 2;
  EXPECT_NE(errorOf(p).find("staleness 2"), std::string::npos);
}

TEST(UpdatePipeline, RandomProblemsStayBetweenTheBounds) {
  std::mt19937 rng(11);
  for (int seed = 0; seed < 300; ++seed) {
    std::uniform_int_distribution<int> layerCount(1, 20), tensorCount(0, 30);
    std::uniform_real_distribution<double> seconds(1e-4, 5e-3), bytes(0, 8e6);
    int layers = layerCount(rng);
    UpdateProblem p;
    for (int s = 0; s < 2 * layers; ++s)
      p.stepSeconds.push_back(seconds(rng));
    p.waitsFor.resize(2 * layers);
    std::uniform_int_distribution<int> reader(0, layers - 1);
    for (int x = tensorCount(rng); x > 0; --x) {
      int first = reader(rng);
      int id = static_cast<int>(p.tensors.size());
      p.tensors.push_back({"t" + std::to_string(id), 2 * layers - 1 - first,
                           bytes(rng), seconds(rng) * (seed % 3), bytes(rng)});
      if (seed % 2) { // data parallel: reduced before, gathered after
        p.tensors.back().reduceSeconds = seconds(rng);
        p.tensors.back().gatherSeconds = seconds(rng) * (seed % 3 == 1);
      }
      p.waitsFor[first].push_back(id);
    }
    p.deviceUpdateSeconds = seed % 4 == 0 ? seconds(rng) : 0;
    p.deviceToHost = std::uniform_real_distribution<double>(1e9, 30e9)(rng);
    p.hostToDevice = std::uniform_real_distribution<double>(1e9, 30e9)(rng);
    p.linkLatency = 1e-5;
    p.uploadsAfterStep = seed % 5 == 0 ? 2 * layers - 1 : -1;
    // No staging limit, or room for one to three of the largest gradients.
    double largest = 0;
    for (const OffloadedTensor &x : p.tensors)
      largest = std::max(largest, x.gradientBytes);
    p.stagingBytes = seed % 7 < 3 ? 0 : (1 + seed % 3) * largest;
    UpdateTimeline exact = simulateOrFail(p);
    const double eps = 1e-9;
    EXPECT_NEAR(exact.stepSeconds, exact.computeSeconds + exact.waitSeconds,
                eps)
        << "seed " << seed;
    for (double busy : {exact.computeSeconds, exact.deviceToHostSeconds,
                        exact.cpuSeconds, exact.hostToDeviceSeconds,
                        exact.networkSeconds})
      EXPECT_GE(exact.stepSeconds + eps, busy) << "seed " << seed;
    EXPECT_LE(exact.stepSeconds, exact.serialSeconds + eps) << "seed " << seed;
    // Less staging never makes the step faster.
    if (p.stagingBytes > 0) {
      UpdateProblem unlimited = p;
      unlimited.stagingBytes = 0;
      EXPECT_LE(simulateOrFail(unlimited).stepSeconds, exact.stepSeconds + eps)
          << "seed " << seed;
    }
    if (p.uploadsAfterStep >= 0) {
      // A link free earlier never makes the step slower.
      UpdateProblem earlier = p;
      earlier.uploadsAfterStep =
          std::uniform_int_distribution<int>(-1, 2 * layers - 1)(rng);
      EXPECT_LE(simulateOrFail(earlier).stepSeconds, exact.stepSeconds + eps)
          << "seed " << seed;
      continue;
    }
    p.staleness = 1;
    UpdateTimeline delayed = simulateOrFail(p);
    EXPECT_LE(delayed.stepSeconds, exact.stepSeconds + eps) << "seed " << seed;
    EXPECT_GE(delayed.stepSeconds + eps,
              std::max({delayed.computeSeconds, delayed.deviceToHostSeconds,
                        delayed.cpuSeconds, delayed.hostToDeviceSeconds,
                        delayed.networkSeconds}))
        << "seed " << seed;
  }
}
