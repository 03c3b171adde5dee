//===- PipelineTest.cpp - pipeline schedule simulation --------------------===//
//
// Checks the simulator against the closed forms known for uniform stages
// (makespan (m + p - 1)(F + B) for GPipe and 1F1B, the interleaved bubble
// shrinking by v), the memory each schedule holds, and the errors.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Pipeline.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace loom;

namespace {

std::vector<StageCost> uniform(int64_t n, double forward, double backward,
                               double send = 0) {
  return std::vector<StageCost>(n, StageCost{forward, backward, send, send});
}

PipelineOptions options(PipelineSchedule schedule, int64_t microBatches,
                        int64_t devices) {
  PipelineOptions o;
  o.schedule = schedule;
  o.microBatches = microBatches;
  o.devices = devices;
  return o;
}

PipelineResult run(llvm::ArrayRef<StageCost> stages, const PipelineOptions &o) {
  llvm::Expected<PipelineResult> result = simulatePipeline(stages, o);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return std::move(*result);
}

std::string errorOf(llvm::ArrayRef<StageCost> stages,
                    const PipelineOptions &o) {
  llvm::Expected<PipelineResult> result = simulatePipeline(stages, o);
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

} // namespace

TEST(Pipeline, Names) {
  for (PipelineSchedule s :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB,
        PipelineSchedule::Interleaved1F1B, PipelineSchedule::KFKB})
    EXPECT_EQ(parsePipelineSchedule(stringifyPipelineSchedule(s)), s);
  EXPECT_EQ(stringifyPipelineSchedule(PipelineSchedule::OneFOneB), "1f1b");
  EXPECT_FALSE(parsePipelineSchedule("pipedream"));
}

TEST(Pipeline, UniformStagesGPipeAnd1F1B) {
  const double F = 1.0, B = 2.0;
  for (auto [m, p] : {std::pair{8, 4}, {4, 4}, {2, 4}, {16, 1}, {1, 3}}) {
    for (PipelineSchedule s :
         {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
      PipelineResult r = run(uniform(p, F, B), options(s, m, p));
      EXPECT_DOUBLE_EQ(r.makespan, (m + p - 1) * (F + B))
          << stringifyPipelineSchedule(s).str() << " m=" << m << " p=" << p;
      EXPECT_DOUBLE_EQ(r.bubbleFraction, double(p - 1) / (m + p - 1));
      EXPECT_EQ(r.tasks.size(), size_t(2 * m * p));
      for (double busy : r.busy)
        EXPECT_DOUBLE_EQ(busy, m * (F + B));
    }
  }
}

TEST(Pipeline, TasksAreInStartOrderAndRespectDependencies) {
  PipelineResult r =
      run(uniform(4, 1, 2, 0.5), options(PipelineSchedule::OneFOneB, 8, 4));
  ASSERT_EQ(r.tasks.size(), 64u);
  for (size_t i = 1; i < r.tasks.size(); ++i)
    EXPECT_LE(r.tasks[i - 1].start, r.tasks[i].start);
  for (const PipelineTask &t : r.tasks) {
    EXPECT_EQ(t.device, t.stage % 4);
    EXPECT_DOUBLE_EQ(t.end - t.start, t.backward ? 2 : 1);
  }
  // The first forward of the last stage waits for three forwards and three
  // activation transfers.
  for (const PipelineTask &t : r.tasks) {
    if (t.stage == 3 && t.microBatch == 0 && !t.backward) {
      EXPECT_DOUBLE_EQ(t.start, 3 * 1.5);
    }
  }
}

TEST(Pipeline, PeakInFlight) {
  const int64_t p = 4;
  PipelineResult onefoneb =
      run(uniform(p, 1, 2), options(PipelineSchedule::OneFOneB, 16, p));
  PipelineResult gpipe =
      run(uniform(p, 1, 2), options(PipelineSchedule::GPipe, 16, p));
  for (int64_t d = 0; d < p; ++d) {
    ASSERT_EQ(onefoneb.peakInFlight[d].size(), 1u);
    EXPECT_EQ(onefoneb.peakInFlight[d][0], p - d);
    EXPECT_EQ(gpipe.peakInFlight[d][0], 16);
  }
  // Fewer micro-batches than stages: 1F1B holds at most m.
  PipelineResult few =
      run(uniform(p, 1, 2), options(PipelineSchedule::OneFOneB, 2, p));
  EXPECT_EQ(few.peakInFlight[0][0], 2);
}

TEST(Pipeline, InterleavedShrinksTheBubble) {
  const int64_t p = 4, v = 2, m = 8;
  const double F = 1.0, B = 2.0; // per whole device-model
  PipelineOptions o = options(PipelineSchedule::Interleaved1F1B, m, p);
  PipelineResult inter = run(uniform(p * v, F / v, B / v), o);
  PipelineResult plain =
      run(uniform(p, F, B), options(PipelineSchedule::OneFOneB, m, p));
  double ideal = m * (F + B);
  EXPECT_DOUBLE_EQ(plain.makespan, ideal * (1 + double(p - 1) / m));
  // Narayanan et al.: the bubble is (p - 1) / (v m) of the ideal time.
  EXPECT_NEAR(inter.makespan / ideal - 1, double(p - 1) / (v * m), 1e-9);
  EXPECT_LT(inter.bubbleFraction, plain.bubbleFraction);
  ASSERT_EQ(inter.peakInFlight[0].size(), size_t(v));
  EXPECT_EQ(inter.tasks.size(), size_t(2 * m * p * v));

  // v == 1 with the interleaved schedule is plain 1F1B.
  PipelineResult single =
      run(uniform(p, F, B), options(PipelineSchedule::Interleaved1F1B, 6, p));
  EXPECT_DOUBLE_EQ(single.makespan, (6 + p - 1) * (F + B));
}

TEST(Pipeline, KFKB) {
  const int64_t p = 4, m = 16;
  PipelineOptions o = options(PipelineSchedule::KFKB, m, p);
  o.kfkbGroup = 2;
  PipelineResult r = run(uniform(p, 1, 2), o);
  // Device 0 warms up with p - 1 groups and adds one before its first
  // backward: p groups of k micro-batches held.
  EXPECT_EQ(r.peakInFlight[0][0], p * 2);
  EXPECT_EQ(r.peakInFlight[p - 1][0], 2);
  EXPECT_GE(r.makespan, (m + p - 1) * 3.0);
  // k == 1 is 1F1B; a group that does not divide m leaves a short last group.
  o.kfkbGroup = 1;
  EXPECT_DOUBLE_EQ(run(uniform(p, 1, 2), o).makespan, (m + p - 1) * 3.0);
  o.kfkbGroup = 3;
  EXPECT_EQ(run(uniform(p, 1, 2), o).tasks.size(), size_t(2 * m * p));
}

TEST(Pipeline, SlowestStageDrivesTheMakespan) {
  // The middle stage takes three times as long; in steady state everyone
  // waits on it, so the makespan approaches m * (its F + B).
  std::vector<StageCost> stages = uniform(4, 1, 2);
  stages[2] = {3, 6, 0, 0};
  const int64_t m = 64;
  for (PipelineSchedule s :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
    PipelineResult r = run(stages, options(s, m, 4));
    EXPECT_GE(r.makespan, m * 9.0);
    EXPECT_LE(r.makespan, m * 9.0 + 3 * 9.0 + 1e-9);
    EXPECT_DOUBLE_EQ(r.busy[2], m * 9.0);
  }
  // GPipe with uneven stages: the bottleneck fixes the forward and the
  // backward phases: F0+F1 fill, m F2, F3; then B3, m B2, B1+B0 drain.
  PipelineResult g = run(stages, options(PipelineSchedule::GPipe, m, 4));
  EXPECT_DOUBLE_EQ(g.makespan, 2 + m * 3 + 1 + 2 + m * 6 + 4);
}

TEST(Pipeline, SendsAddLatency) {
  const int64_t p = 4, m = 8;
  const double F = 1, B = 2, send = 0.25;
  PipelineResult r =
      run(uniform(p, F, B, send), options(PipelineSchedule::GPipe, m, p));
  // GPipe: the fill and the drain each cross p - 1 links.
  EXPECT_DOUBLE_EQ(r.makespan, (m + p - 1) * (F + B) + 2 * (p - 1) * send);
  PipelineResult onefoneb =
      run(uniform(p, F, B, send), options(PipelineSchedule::OneFOneB, m, p));
  EXPECT_GT(onefoneb.makespan, (m + p - 1) * (F + B));
}

TEST(Pipeline, GroupsHideSendsThat1F1BExposes) {
  // 1F1B alternates one forward with one backward, so in its steady state
  // each backward waits for the next stage's backward plus the send back;
  // kFkB's groups (and GPipe's one long group) run while those sends fly.
  // p = 4, m = 16, F = 1, B = 2, sends of 1: an independent replay of the
  // same orders gives 85 (1F1B) and 63 (kFkB, k = 2 or 4) = the send-free
  // 57 plus the fill and drain crossing 2 (p - 1) links.
  const int64_t p = 4, m = 16;
  std::vector<StageCost> stages = uniform(p, 1, 2, 1);
  EXPECT_DOUBLE_EQ(run(stages, options(PipelineSchedule::OneFOneB, m, p)).makespan, 85);
  for (int64_t k : {2, 4}) {
    PipelineOptions o = options(PipelineSchedule::KFKB, m, p);
    o.kfkbGroup = k;
    EXPECT_DOUBLE_EQ(run(stages, o).makespan, 57 + 2 * (p - 1)) << "k = " << k;
  }
  EXPECT_DOUBLE_EQ(run(stages, options(PipelineSchedule::GPipe, m, p)).makespan,
                   57 + 2 * (p - 1));
}

TEST(Pipeline, BuiltOrdersReplayAnyCosts) {
  // Orders built once replay different stage costs exactly as a fresh
  // simulation of each would.
  const int64_t p = 4, m = 12;
  PipelineOptions o = options(PipelineSchedule::Interleaved1F1B, m, p);
  o.recordTasks = false;
  llvm::Expected<PipelineOrders> built = buildPipelineOrders(2 * p, o);
  ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
  for (double send : {0.0, 0.5}) {
    std::vector<StageCost> stages = uniform(2 * p, 1, 2, send);
    stages[3].backward = 5;
    llvm::Expected<PipelineResult> replay = simulatePipeline(*built, stages);
    ASSERT_TRUE(bool(replay)) << llvm::toString(replay.takeError());
    PipelineResult fresh = run(stages, o);
    EXPECT_DOUBLE_EQ(replay->makespan, fresh.makespan);
    EXPECT_EQ(replay->finish, fresh.finish);
  }
  EXPECT_NE(llvm::toString(simulatePipeline(*built, uniform(p, 1, 2)).takeError())
                .find("4 stage costs for orders built for 8 stages"),
            std::string::npos);
  std::vector<StageCost> negative = uniform(2 * p, 1, 2);
  negative[1].forward = -1;
  EXPECT_NE(llvm::toString(simulatePipeline(*built, negative).takeError())
                .find("stage 1: costs must be finite and >= 0"),
            std::string::npos);
  // The options' own errors come from the build.
  o.microBatches = 5;
  EXPECT_NE(llvm::toString(buildPipelineOrders(2 * p, o).takeError())
                .find("multiple of devices"),
            std::string::npos);
}

TEST(Pipeline, FinishPerDevice) {
  // 1F1B: device d's last task is micro-batch m-1's backward, which device
  // 0 runs last of all, (p - 1 - d) backwards after device d's.
  const int64_t p = 4, m = 8;
  PipelineOptions o = options(PipelineSchedule::OneFOneB, m, p);
  o.recordTasks = false;
  PipelineResult r = run(uniform(p, 1, 2), o);
  ASSERT_EQ(r.finish.size(), size_t(p));
  for (int64_t d = 0; d < p; ++d)
    EXPECT_DOUBLE_EQ(r.finish[d], r.makespan - 2.0 * d) << "device " << d;
}

TEST(Pipeline, FinishLowerBoundAndInFlightFromOrders) {
  // Uniform stages without sends: the bound is the finish itself under
  // GPipe and 1F1B, (m + p - 1)(F + B) on device 0.
  const int64_t p = 4, m = 8;
  for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
    PipelineOptions o = options(s, m, p);
    std::vector<StageCost> stages = uniform(p, 1, 2);
    std::vector<double> bound = pipelineFinishLowerBound(stages, o);
    EXPECT_DOUBLE_EQ(bound[0], (m + p - 1) * 3.0);
    EXPECT_EQ(bound, run(stages, o).finish) << stringifyPipelineSchedule(s).str();
  }
  // Any costs, every schedule and shape, training and inference: never
  // above the simulated finish of any device.
  uint64_t state = 12345;
  auto draw = [&] { // xorshift, in [0, 1)
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return double(state % 1000) / 1000.0;
  };
  size_t checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t devices = 2 + trial % 4, micro = devices * (1 + trial % 3);
    PipelineSchedule s = PipelineSchedule(trial % 4);
    PipelineOptions o = options(s, micro, devices);
    o.training = trial % 5 != 0;
    o.kfkbGroup = 2;
    int64_t v = s == PipelineSchedule::Interleaved1F1B ? 2 : 1;
    std::vector<StageCost> stages(devices * v);
    for (StageCost &c : stages)
      c = {draw() + 0.01, o.training ? 2 * draw() + 0.01 : 0.0, 0.3 * draw(), 0.3 * draw()};
    std::vector<double> bound = pipelineFinishLowerBound(stages, o);
    PipelineResult r = run(stages, o);
    for (int64_t d = 0; d < devices; ++d)
      EXPECT_LE(bound[d], r.finish[d] * (1 + 1e-12))
          << "trial " << trial << " device " << d;
    // What each chunk holds, read off the orders, is what the run held:
    // replayed from its tasks in start order, a forward's activations are
    // held from its start until its backward's start.
    if (o.training) {
      std::vector<std::vector<int64_t>> held(devices, std::vector<int64_t>(v, 0)),
          most = held;
      for (const PipelineTask &t : r.tasks) {
        int64_t &h = held[t.device][t.stage / devices];
        h += t.backward ? -1 : 1;
        most[t.device][t.stage / devices] = std::max(most[t.device][t.stage / devices], h);
      }
      EXPECT_EQ(r.peakInFlight, most) << "trial " << trial;
      llvm::Expected<PipelineOrders> built = buildPipelineOrders(devices * v, o);
      ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
      EXPECT_EQ(peakInFlight(*built), most) << "trial " << trial;
    }
    ++checked;
  }
  EXPECT_GT(checked, 300u);
}

TEST(Pipeline, Inference) {
  const int64_t p = 4, m = 10;
  PipelineOptions o = options(PipelineSchedule::OneFOneB, m, p);
  o.training = false;
  PipelineResult r = run(uniform(p, 1.5, 0), o);
  EXPECT_DOUBLE_EQ(r.makespan, (m + p - 1) * 1.5);
  EXPECT_EQ(r.tasks.size(), size_t(m * p));
  for (const PipelineTask &t : r.tasks)
    EXPECT_FALSE(t.backward);
  EXPECT_EQ(r.peakInFlight[0][0], 0); // nothing is kept for a backward

  o.schedule = PipelineSchedule::Interleaved1F1B;
  o.microBatches = 8;
  PipelineResult inter = run(uniform(2 * p, 0.75, 0), o);
  EXPECT_EQ(inter.tasks.size(), size_t(8 * 2 * p));
  EXPECT_LE(inter.makespan, (8 + p - 1) * 1.5);
}

TEST(Pipeline, RecordTasksOff) {
  PipelineOptions o = options(PipelineSchedule::OneFOneB, 8, 4);
  o.recordTasks = false;
  PipelineResult r = run(uniform(4, 1, 2), o);
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_DOUBLE_EQ(r.makespan, 11 * 3.0);
}

TEST(Pipeline, Errors) {
  EXPECT_NE(errorOf(uniform(6, 1, 2), options(PipelineSchedule::OneFOneB, 8, 4))
                .find("6 stages do not divide over 4 devices"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform(8, 1, 2), options(PipelineSchedule::OneFOneB, 8, 4))
                .find("need the interleaved_1f1b schedule, not 1f1b"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform(8, 1, 2),
                    options(PipelineSchedule::Interleaved1F1B, 6, 4))
                .find("needs microBatches (6) to be a multiple of devices (4)"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform(4, 1, 2), options(PipelineSchedule::GPipe, 0, 4))
                .find("microBatches = 0: must be >= 1"),
            std::string::npos);
  EXPECT_NE(errorOf(uniform(4, 1, 2), options(PipelineSchedule::GPipe, 4, 0))
                .find("devices = 0"),
            std::string::npos);
  EXPECT_NE(
      errorOf({}, options(PipelineSchedule::GPipe, 4, 1)).find("no stages"),
      std::string::npos);
  std::vector<StageCost> negative = uniform(2, 1, 2);
  negative[1].backward = -1;
  EXPECT_NE(errorOf(negative, options(PipelineSchedule::GPipe, 4, 2))
                .find("stage 1: costs must be finite and >= 0"),
            std::string::npos);
  PipelineOptions kfkb = options(PipelineSchedule::KFKB, 4, 2);
  kfkb.kfkbGroup = 0;
  EXPECT_NE(errorOf(uniform(2, 1, 2), kfkb).find("kfkbGroup = 0"),
            std::string::npos);
}

TEST(Pipeline, CustomOrdersAndDeadlock) {
  std::vector<StageCost> stages = uniform(2, 1, 2);
  PipelineOptions o = options(PipelineSchedule::OneFOneB, 2, 2);
  using S = PipelineStep;
  // A valid hand-written order: GPipe on device 0, 1F1B on device 1.
  std::vector<std::vector<S>> ok = {
      {{0, 0, false}, {0, 1, false}, {0, 0, true}, {0, 1, true}},
      {{0, 0, false}, {0, 0, true}, {0, 1, false}, {0, 1, true}}};
  llvm::Expected<PipelineResult> r = simulatePipelineOrders(stages, o, ok);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->tasks.size(), 8u);

  // Device 0 wants the backward of micro-batch 0 before sending micro-batch
  // 1 forward, device 1 insists on forward 1 first: neither can proceed.
  std::vector<std::vector<S>> stuck = {
      {{0, 0, false}, {0, 0, true}, {0, 1, false}, {0, 1, true}},
      {{0, 1, false}, {0, 0, false}, {0, 0, true}, {0, 1, true}}};
  r = simulatePipelineOrders(stages, o, stuck);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("deadlock"), std::string::npos);

  std::vector<std::vector<S>> missing = {
      {{0, 0, false}, {0, 1, false}, {0, 0, true}},
      {{0, 0, false}, {0, 0, true}, {0, 1, false}, {0, 1, true}}};
  r = simulatePipelineOrders(stages, o, missing);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("orders hold 7 tasks"),
            std::string::npos);

  std::vector<std::vector<S>> repeated = {
      {{0, 0, false}, {0, 0, false}, {0, 0, true}, {0, 1, true}},
      {{0, 0, false}, {0, 0, true}, {0, 1, false}, {0, 1, true}}};
  r = simulatePipelineOrders(stages, o, repeated);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("repeats the forward"),
            std::string::npos);
}

TEST(Pipeline, LargeScheduleIsFast) {
  // m = 2048, p = 64, v = 4: about a million tasks.
  PipelineOptions o = options(PipelineSchedule::Interleaved1F1B, 2048, 64);
  o.recordTasks = false;
  std::vector<StageCost> stages = uniform(64 * 4, 1e-3, 2e-3, 1e-5);
  auto begin = std::chrono::steady_clock::now();
  PipelineResult r = run(stages, o);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - begin)
                  .count();
  EXPECT_GT(r.makespan, 2048 * 3e-3);
  // Generous bound: the point is to catch quadratic behaviour, not to time.
  EXPECT_LT(ms, 2000.0);
  RecordProperty("milliseconds", std::to_string(ms));
}
