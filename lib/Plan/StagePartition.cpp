//===- StagePartition.cpp - splitting units into pipeline stages ---------===//
//
// See StagePartition.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Plan/StagePartition.h"

#include <algorithm>

namespace loom::plan {

StageBudget::~StageBudget() = default;

namespace {

/// The greedy pass under a limit, over runs.
class GreedySplit {
public:
  GreedySplit(const std::vector<UnitRun> &runs, int64_t stages,
              const std::vector<int64_t> &unitPins, StageBudget *budget)
      : runs(runs), stages(stages), budget(budget) {
    runStart.push_back(0);
    prefix.push_back(0);
    for (const UnitRun &r : runs) {
      runStart.push_back(runStart.back() + r.count);
      // One product per run, so a run's end time is computed alike
      // wherever it is read (timeTo).
      prefix.push_back(prefix.back() + static_cast<double>(r.count) * r.seconds);
    }
    n = runStart.back();
    // Pinned stages: stage s may not reach a unit pinned later, and must
    // take every unit pinned to s.
    pinnedEnd.assign(stages, 0);
    firstLater.assign(stages, n);
    for (size_t u = 0; u < unitPins.size() && u < n; ++u)
      if (int64_t pin = unitPins[u]; pin >= 0 && pin < stages) {
        pinnedEnd[pin] = u + 1;
        for (int64_t s = 0; s < pin; ++s)
          firstLater[s] = std::min(firstLater[s], u);
      }
  }

  size_t units() const { return n; }
  double total() const { return prefix.back(); }

  /// The time of units [0, x), x in run r (or x == n, r == runs).
  double timeTo(size_t x, size_t r) const {
    return r == runs.size()
               ? prefix.back()
               : prefix[r] + static_cast<double>(x - runStart[r]) * runs[r].seconds;
  }

  /// The most units, at most `most`, of run r from unit b on whose time
  /// after `start` stays within `limit`: a guess by division, corrected
  /// against the exact sums the checks use.
  size_t mostWithin(double limit, double start, size_t b, size_t r, size_t most) const {
    auto ok = [&](size_t k) { return timeTo(b + k, r) - start <= limit; };
    size_t k = most;
    if (runs[r].seconds > 0) {
      double guess = (limit + start - timeTo(b, r)) / runs[r].seconds;
      k = guess <= 0 ? 0 : guess >= static_cast<double>(most) ? most : static_cast<size_t>(guess);
    }
    while (k < most && ok(k + 1))
      ++k;
    while (k > 0 && !ok(k))
      --k;
    return k;
  }

  /// Whether the greedy pass under T covers the program; then `slowest` is
  /// its slowest stage (at most T) and, if given, `assign` its split.
  bool run(double T, std::vector<unsigned> *assign, double &slowest) const {
    slowest = 0;
    size_t a = 0, r = 0; // the stage's first unit and its run
    for (int64_t s = 0; s < stages; ++s) {
      const size_t left = static_cast<size_t>(stages - s - 1);
      const size_t maxEnd = std::min(n - left, firstLater[s]);
      const double start = timeTo(a, r);
      size_t b = a, best = a, rb = r;
      double bestTime = 0; // the stage's time when it ends at `best`
      if (budget)
        budget->begin(s);
      // Units are added while the stage's time and memory allow; it may
      // end after any of them whose send still fits in T.
      while (b < maxEnd) {
        const size_t room = std::min(runStart[rb + 1], maxEnd) - b;
        size_t k = mostWithin(T, start, b, rb, room);
        if (k > 0 && budget && !budget->fits(rb, k)) {
          size_t lo = 1, hi = k - 1;
          k = 0;
          while (lo <= hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (budget->fits(rb, mid)) {
              k = mid;
              lo = mid + 1;
            } else {
              hi = mid - 1;
            }
          }
        }
        if (k == 0)
          break;
        // Ending after copy j sends the run's boundary, except at the end.
        size_t last = k;
        if (b + k == n) {
          if (timeTo(n, rb) - start <= T) {
            best = n;
            bestTime = timeTo(n, rb) - start;
          } else {
            last = k - 1;
          }
        }
        const double send = runs[rb].sendSeconds;
        if (best != n && last >= 1)
          if (size_t j = mostWithin(T - send, start, b, rb, last)) {
            best = b + j;
            bestTime = timeTo(best, rb) - start + send;
          }
        if (budget)
          budget->add(rb, k);
        b += k;
        if (k < room)
          break;
        if (b == runStart[rb + 1])
          ++rb;
      }
      if (s == stages - 1 && best != n)
        return false;
      if (best == a || best < pinnedEnd[s])
        return false;
      if (assign)
        std::fill(assign->begin() + a, assign->begin() + best, static_cast<unsigned>(s));
      slowest = std::max(slowest, bestTime);
      a = best;
      while (r < runs.size() && runStart[r + 1] <= a)
        ++r;
    }
    return a == n;
  }

  /// A limit every split's slowest stage reaches (the average stage, the
  /// slowest unit) and one under which the greedy pass surely has room
  /// (every unit and every send).
  std::pair<double, double> bounds() const {
    double lo = total() / static_cast<double>(stages), hi = total();
    for (size_t r = 0; r < runs.size(); ++r) {
      size_t sends = runs[r].count - (r + 1 == runs.size() ? 1 : 0);
      hi += runs[r].sendSeconds * static_cast<double>(sends);
      lo = std::max(lo, runs[r].seconds);
    }
    return {lo, hi};
  }

private:
  const std::vector<UnitRun> &runs;
  int64_t stages;
  StageBudget *budget;
  std::vector<size_t> runStart;
  std::vector<double> prefix;
  size_t n = 0;
  std::vector<size_t> pinnedEnd, firstLater;
};

} // namespace

bool splitStages(const std::vector<UnitRun> &runs, int64_t stages,
                 const std::vector<int64_t> &unitPins, StageBudget *budget,
                 std::vector<unsigned> &stageOfUnit, double &slowest) {
  // The budget knows runs by their index in `runs`: an empty run is refused,
  // not skipped.
  if (stages < 1 || std::any_of(runs.begin(), runs.end(),
                                [](const UnitRun &r) { return r.count == 0; }))
    return false;
  GreedySplit greedy(runs, stages, unitPins, budget);
  if (greedy.units() < static_cast<size_t>(stages))
    return false;
  auto [lo, hi] = greedy.bounds();
  if (!greedy.run(hi, nullptr, slowest))
    return false;
  // Bisection on the limit. A split found moves the upper bound down to its
  // own slowest stage and is then tried just below that: where that fails
  // the split is the best within the tolerance, without halving the rest
  // of the way.
  const double tolerance = 1e-6;
  double found = hi; // the limit the best split so far was found under
  hi = slowest;
  bool probeBelow = true;
  for (int it = 0; it < 50 && hi - lo > tolerance * hi; ++it) {
    double T = probeBelow ? hi * (1 - tolerance) : (lo + hi) / 2;
    if (greedy.run(T, nullptr, slowest)) {
      found = T;
      hi = slowest;
      probeBelow = !probeBelow;
    } else {
      lo = T;
      probeBelow = false;
    }
  }
  stageOfUnit.assign(greedy.units(), 0);
  return greedy.run(found, &stageOfUnit, slowest);
}

} // namespace loom::plan
