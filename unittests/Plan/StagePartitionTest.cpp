//===- StagePartitionTest.cpp - splitting units into pipeline stages ------===//
//
// The stage split walks runs of equal units k at a time; these tests check
// it against the same program given unit by unit (runs of one), against
// brute force over every split where the greedy pass is exact (no sends, no
// memory limit), and that every split it returns is valid: contiguous,
// non-empty stages, each within its memory and the reported slowest time,
// pinned units in their stages. Times are small integers, so sums are exact
// and the two walks must agree to the bit.
//
//===----------------------------------------------------------------------===//

#include "loom/Plan/StagePartition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace loom::plan;

namespace {

/// Memory: each unit of run r adds bytes[r]; stage s holds at most cap[s].
class AdditiveBudget : public StageBudget {
public:
  AdditiveBudget(std::vector<double> bytes, std::vector<double> cap)
      : bytes(std::move(bytes)), cap(std::move(cap)) {}
  void begin(int64_t s) override {
    stage = s;
    used = 0;
  }
  bool fits(size_t run, size_t copies) const override {
    return used + static_cast<double>(copies) * bytes[run] <= cap[stage];
  }
  void add(size_t run, size_t copies) override {
    used += static_cast<double>(copies) * bytes[run];
  }
  std::vector<double> bytes, cap;
  int64_t stage = 0;
  double used = 0;
};

struct Program {
  std::vector<UnitRun> runs;
  std::vector<double> bytes; // per run
};

/// The same program as runs of one unit.
Program unitByUnit(const Program &p) {
  Program out;
  for (size_t r = 0; r < p.runs.size(); ++r)
    for (size_t k = 0; k < p.runs[r].count; ++k) {
      out.runs.push_back({1, p.runs[r].seconds, p.runs[r].sendSeconds});
      out.bytes.push_back(p.bytes[r]);
    }
  return out;
}

/// Per unit: its time, send and bytes.
struct Flat {
  std::vector<double> seconds, send, bytes;
};
Flat flatten(const Program &p) {
  Flat f;
  Program u = unitByUnit(p);
  for (size_t i = 0; i < u.runs.size(); ++i) {
    f.seconds.push_back(u.runs[i].seconds);
    f.send.push_back(u.runs[i].sendSeconds);
    f.bytes.push_back(u.bytes[i]);
  }
  return f;
}

/// The slowest stage of a split (sends included), after checking that it
/// is contiguous, has `stages` non-empty stages, fits `cap` and the pins.
double checkSplit(const Flat &f, const std::vector<unsigned> &split, int64_t stages,
                  const std::vector<double> *cap, const std::vector<int64_t> &pins) {
  const size_t n = f.seconds.size();
  EXPECT_EQ(split.size(), n);
  EXPECT_EQ(split.front(), 0u);
  EXPECT_EQ(split.back(), static_cast<unsigned>(stages - 1));
  std::vector<double> time(stages, 0), bytes(stages, 0);
  for (size_t u = 0; u < n; ++u) {
    if (u > 0) {
      EXPECT_TRUE(split[u] == split[u - 1] || split[u] == split[u - 1] + 1) << "unit " << u;
    }
    time[split[u]] += f.seconds[u];
    bytes[split[u]] += f.bytes[u];
    if (u + 1 < n && split[u + 1] != split[u])
      time[split[u]] += f.send[u];
    if (u < pins.size() && pins[u] >= 0) {
      EXPECT_EQ(split[u], static_cast<unsigned>(pins[u])) << "pinned unit " << u;
    }
  }
  if (cap) {
    for (int64_t s = 0; s < stages; ++s) {
      EXPECT_LE(bytes[s], (*cap)[s]) << "stage " << s;
    }
  }
  return *std::max_element(time.begin(), time.end());
}

/// The least slowest stage over every split of the units into `stages`.
double bruteForce(const Flat &f, int64_t stages) {
  const size_t n = f.seconds.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<size_t> cuts; // stage ends, increasing
  std::function<void(size_t, double)> go = [&](size_t from, double worst) {
    int64_t done = static_cast<int64_t>(cuts.size());
    if (done == stages - 1) {
      double t = 0;
      for (size_t u = from; u < n; ++u)
        t += f.seconds[u];
      best = std::min(best, std::max(worst, t));
      return;
    }
    double t = 0;
    for (size_t end = from + 1; end + (stages - done - 1) <= n; ++end) {
      t += f.seconds[end - 1];
      cuts.push_back(end);
      go(end, std::max(worst, t + f.send[end - 1]));
      cuts.pop_back();
    }
  };
  go(0, 0);
  return best;
}

Program randomProgram(std::mt19937 &rng, bool sends) {
  std::uniform_int_distribution<int> runCount(1, 5), count(1, 6), seconds(0, 9),
      send(0, 4), bytes(1, 6);
  Program p;
  int runs = runCount(rng);
  for (int r = 0; r < runs; ++r) {
    p.runs.push_back({static_cast<size_t>(count(rng)), static_cast<double>(seconds(rng)),
                      sends ? static_cast<double>(send(rng)) : 0.0});
    p.bytes.push_back(bytes(rng));
  }
  return p;
}

size_t unitCount(const Program &p) {
  size_t n = 0;
  for (const UnitRun &r : p.runs)
    n += r.count;
  return n;
}

TEST(StagePartition, RunsAgreeWithUnitByUnit) {
  std::mt19937 rng(11);
  int split = 0;
  for (int seed = 0; seed < 600; ++seed) {
    SCOPED_TRACE("case " + std::to_string(seed));
    Program p = randomProgram(rng, /*sends=*/true);
    const size_t n = unitCount(p);
    int64_t stages = std::uniform_int_distribution<int64_t>(1, std::min<size_t>(n, 7))(rng);
    std::vector<double> cap(stages);
    for (double &c : cap)
      c = std::uniform_int_distribution<int>(4, 30)(rng);
    Program flatProgram = unitByUnit(p);
    AdditiveBudget byRuns(p.bytes, cap), byUnits(flatProgram.bytes, cap);
    std::vector<unsigned> a, b;
    double slowA = -1, slowB = -1;
    bool okA = splitStages(p.runs, stages, {}, &byRuns, a, slowA);
    bool okB = splitStages(flatProgram.runs, stages, {}, &byUnits, b, slowB);
    ASSERT_EQ(okA, okB);
    if (!okA)
      continue;
    ++split;
    EXPECT_EQ(slowA, slowB);
    EXPECT_EQ(a, b);
    EXPECT_EQ(checkSplit(flatten(p), a, stages, &cap, {}), slowA);
  }
  EXPECT_GT(split, 200); // most cases have a split: the test exercises it
}

/// Splits random programs without a memory limit and checks each split
/// against brute force: never better, valid; returns how many were optimal.
int compareWithBruteForce(unsigned seed, bool sends, int cases) {
  std::mt19937 rng(seed);
  int exact = 0;
  for (int c = 0; c < cases; ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    Program p = randomProgram(rng, sends);
    const size_t n = unitCount(p);
    int64_t stages = std::uniform_int_distribution<int64_t>(1, std::min<size_t>(n, 6))(rng);
    std::vector<unsigned> split;
    double slowest = -1;
    EXPECT_TRUE(splitStages(p.runs, stages, {}, nullptr, split, slowest));
    if (split.empty())
      continue;
    Flat f = flatten(p);
    double optimum = bruteForce(f, stages);
    EXPECT_GE(slowest, optimum);
    EXPECT_EQ(checkSplit(f, split, stages, nullptr, {}), slowest);
    exact += slowest == optimum;
  }
  return exact;
}

TEST(StagePartition, ExactWithoutSendsOrMemory) {
  EXPECT_EQ(compareWithBruteForce(12, /*sends=*/false, 400), 400);
}

TEST(StagePartition, WithSendsNeverBeatsBruteForceAndIsValid) {
  // The greedy pass is a heuristic once sends bind; it is almost always
  // optimal on these programs.
  EXPECT_GE(compareWithBruteForce(13, /*sends=*/true, 300), 270);
}

TEST(StagePartition, PinsAreHonoured) {
  // 12 equal units, 3 stages; unit 2 pinned to stage 1 and unit 3 to stage 2
  // force stage 0 to take units 0-1 and stage 1 unit 2 alone.
  std::vector<UnitRun> runs = {{12, 1.0, 0.5}};
  std::vector<int64_t> pins(12, -1);
  pins[2] = 1;
  pins[3] = 2;
  std::vector<unsigned> split;
  double slowest = -1;
  ASSERT_TRUE(splitStages(runs, 3, pins, nullptr, split, slowest));
  EXPECT_EQ(split, (std::vector<unsigned>{0, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(slowest, 9.0);
  // Unpinned, the split balances: 4 units each, 4.5 with the send.
  ASSERT_TRUE(splitStages(runs, 3, {}, nullptr, split, slowest));
  EXPECT_EQ(slowest, 4.5);
}

TEST(StagePartition, NoSplit) {
  std::vector<unsigned> split;
  double slowest;
  // More stages than units.
  EXPECT_FALSE(splitStages({{2, 1.0, 0.0}}, 3, {}, nullptr, split, slowest));
  EXPECT_FALSE(splitStages({}, 1, {}, nullptr, split, slowest));
  // A run of no units (a budget would misread the runs after it).
  EXPECT_FALSE(splitStages({{2, 1.0, 0.0}, {0, 1.0, 0.0}, {2, 1.0, 0.0}}, 2, {}, nullptr,
                           split, slowest));
  // A unit larger than its stage's memory.
  AdditiveBudget budget({5.0, 1.0}, {4.0, 4.0});
  EXPECT_FALSE(splitStages({{1, 1.0, 0.0}, {3, 1.0, 0.0}}, 2, {}, &budget, split, slowest));
  // Memory forces an unbalanced split: stage 0 may hold two units only.
  AdditiveBudget tight({1.0}, {2.0, 100.0});
  ASSERT_TRUE(splitStages({{8, 1.0, 0.0}}, 2, {}, &tight, split, slowest));
  EXPECT_EQ(slowest, 6.0);
  EXPECT_EQ(split, (std::vector<unsigned>{0, 0, 1, 1, 1, 1, 1, 1}));
}

} // namespace
