//===- ChunkSchedule.cpp - static movement of parameter chunks ------------===//
//
// planChunks runs Belady's rule over the cyclic step sequence until the
// chunks resident at an iteration's start repeat (the steady state), then
// times that iteration: fetches in issue order on one host-to-device link,
// each starting once the link is free and the chunks it evicts have been
// read for the last time before it; a step starts when the previous one has
// ended and its fetches have arrived. simulateChunks replays a plan from
// its fetch list alone. carryFewer trades chunks carried across the
// iteration boundary for fetches in the next iteration where the caller's
// price (a training step's, which refreshes carried chunks after the
// update) prefers it. fetchLowerBound is Belady's rule on bytes instead
// of chunks: any chunk plan is also a byte plan, and for bytes (equal
// pages) the rule is optimal, so its traffic bounds every chunk plan's;
// for plans of one iteration, a branch and bound over which chunks are
// kept whole where (wholeChunkLowerBound) raises it to what they move.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/ChunkSchedule.h"

#include "Sweep.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

using namespace loom::memory;

namespace {

/// Longest steady-state period searched for.
constexpr int kMaxPeriod = 64;

/// carryFewer tries every count of chunks kept throughout up to this many
/// (each is one plan priced); past it, a grid refined by halving.
constexpr size_t kEveryPinnedCount = 64;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A transfer on the host-to-device link: [start, end) seconds, named.
using LinkTransfer = std::tuple<double, double, std::string>;

/// The first two `transfers` on the link at once (beyond `eps` seconds),
/// as an error; the link carries one at a time.
llvm::Error oneAtATime(std::vector<LinkTransfer> transfers, double eps) {
  llvm::sort(transfers);
  for (size_t k = 1; k < transfers.size(); ++k) {
    const auto &[start, end, name] = transfers[k];
    const auto &[busyFrom, busyUntil, busy] = transfers[k - 1];
    if (start + eps < busyUntil)
      return fail(llvm::formatv("{0} starts at {1:F3} ms, while {2} holds the "
                                "link until {3:F3} ms",
                                name, start * 1e3, busy, busyUntil * 1e3));
  }
  return llvm::Error::success();
}

/// Distinct chunk ids each step reads.
std::vector<std::vector<int>> distinctReads(const ChunkProblem &p) {
  std::vector<std::vector<int>> reads;
  for (const Step &s : p.steps) {
    std::vector<int> r = s.reads;
    llvm::sort(r);
    r.erase(std::unique(r.begin(), r.end()), r.end());
    reads.push_back(std::move(r));
  }
  return reads;
}

llvm::Error validate(const ChunkProblem &p,
                     const std::vector<std::vector<int>> &reads) {
  if (!p.transferSeconds.empty() && p.transferSeconds.size() != p.chunkBytes.size())
    return fail(llvm::formatv("{0} chunks but {1} transfer times",
                              p.chunkBytes.size(), p.transferSeconds.size()));
  for (auto [i, seconds] : llvm::enumerate(p.transferSeconds))
    if (!(seconds >= 0) || !std::isfinite(seconds))
      return fail(llvm::formatv("chunk {0}'s fetch takes {1} s", i, seconds));
  for (auto [i, bytes] : llvm::enumerate(p.chunkBytes))
    if (bytes <= 0)
      return fail(llvm::formatv("chunk {0} has {1} bytes", i, bytes));
  for (auto [i, r] : llvm::enumerate(reads)) {
    double bytes = 0;
    for (int c : r) {
      if (c < 0 || c >= static_cast<int>(p.chunkBytes.size()))
        return fail(llvm::formatv("step {0} ('{1}') reads chunk {2}, but there "
                                  "are {3} chunks",
                                  i, p.steps[i].name, c, p.chunkBytes.size()));
      bytes += p.chunkBytes[c];
    }
    const double reload = p.steps[i].reloadBytes;
    if (!(reload >= 0) || !std::isfinite(reload))
      return fail(llvm::formatv("step {0} ('{1}') fetches back {2:F0} bytes of "
                                "activations",
                                i, p.steps[i].name, reload));
    if (reload > 0 && !(p.hostToDevice > 0))
      return fail(llvm::formatv("step {0} ('{1}') fetches back activations but "
                                "the host-to-device bandwidth is not positive",
                                i, p.steps[i].name));
    if (bytes > p.budgetBytes)
      return fail(llvm::formatv(
          "step {0} ('{1}') reads {2:F0} bytes of parameters at once, {3:F0} "
          "bytes more than the device budget of {4:F0} bytes",
          i, p.steps[i].name, bytes, bytes - p.budgetBytes, p.budgetBytes));
  }
  return llvm::Error::success();
}

/// Chunk c's bytes the host rewrites at an iteration boundary.
double staleBytesOf(const ChunkProblem &p, size_t c) {
  return c < p.staleBytes.size()
             ? std::clamp(p.staleBytes[c], 0.0, static_cast<double>(p.chunkBytes[c]))
             : 0.0;
}

/// Steps until chunk c is next read after step i, cyclically (1..n), or
/// infinity if never.
class NextUse {
public:
  NextUse(const std::vector<std::vector<int>> &reads, size_t chunks)
      : n(reads.size()), at(chunks) {
    for (auto [i, r] : llvm::enumerate(reads))
      for (int c : r)
        at[c].push_back(static_cast<int>(i));
  }
  double after(int c, int i) const {
    const std::vector<int> &uses = at[c];
    if (uses.empty())
      return std::numeric_limits<double>::infinity();
    auto it = std::upper_bound(uses.begin(), uses.end(), i);
    if (it != uses.end())
      return *it - i;
    return uses.front() + static_cast<double>(n) - i;
  }
  /// The last step at or before `i` reading c in this iteration, or -1.
  int lastUpTo(int c, int i) const {
    const std::vector<int> &uses = at[c];
    auto it = std::upper_bound(uses.begin(), uses.end(), i);
    return it == uses.begin() ? -1 : *(it - 1);
  }

private:
  size_t n;
  std::vector<std::vector<int>> at;
};

/// One iteration of Belady's rule from `resident`; returns the fetches and
/// leaves the end state in `resident`.
/// An iteration is `perIteration` steps of `reads` (which may hold several
/// iterations laid end to end).
/// With `pinned`, those chunks are never evicted, and every other chunk is
/// dead once its next use is past the iteration's end (a one-iteration
/// plan holds nothing but the pinned chunks for the next iteration's
/// sake).
std::vector<Fetch> beladyIteration(const ChunkProblem &p,
                                   const std::vector<std::vector<int>> &reads,
                                   const NextUse &next, int perIteration,
                                   std::set<int> &resident,
                                   const std::set<int> *pinned = nullptr) {
  // The victim is the first of the resident chunks (less the step's own
  // and the pinned ones) in this order: dead ones (wholly rewritten before
  // their next use, not carried over by a one-iteration plan, or never read
  // again) before live ones; among dead ones, with `pinned`, the one read
  // longest ago (one carried in and not read yet first, so that the plan
  // ends with the last chunks read whatever it started with), then the
  // lowest id, else the highest id; among live ones the one next read
  // furthest ahead, then the highest id. A chunk's place changes only when
  // it is read and, for its deadness, at an iteration boundary, so the
  // chunks wait in a heap keyed when they are read (stale entries skipped),
  // rebuilt at each boundary.
  using Key = std::tuple<int, double, double>; // dead, then tie-breaks
  std::vector<int> lastRead(p.chunkBytes.size(), -1),
      version(p.chunkBytes.size(), 0);
  std::priority_queue<std::pair<Key, std::pair<int, int>>>
      queue; // (key, (chunk, version))
  int step = 0;
  auto keyOf = [&](int v) -> Key {
    double d = next.after(v, lastRead[v]);
    double at = lastRead[v] + d; // its next read, in steps
    bool crosses = std::floor(at / perIteration) > step / perIteration;
    bool dead =
        std::isinf(d) ||
        (crosses && (pinned || staleBytesOf(p, v) >=
                                   static_cast<double>(p.chunkBytes[v])));
    if (!dead)
      return {0, at, v};
    if (pinned)
      return {1, -lastRead[v], -v};
    return {1, 0, v};
  };
  auto push = [&](int v) {
    if (pinned && pinned->count(v))
      return;
    queue.push({keyOf(v), {v, ++version[v]}});
  };
  auto rebuild = [&] {
    queue = {};
    for (int v : resident)
      push(v);
  };
  std::vector<Fetch> fetches;
  double used = 0;
  for (int c : resident)
    used += p.chunkBytes[c];
  rebuild();
  for (auto [i, r] : llvm::enumerate(reads)) {
    step = static_cast<int>(i);
    if (step > 0 && step % perIteration == 0)
      rebuild();
    // The step's own chunks are read here: not victims, and keyed anew.
    for (int c : r)
      lastRead[c] = step;
    for (int c : r)
      if (resident.count(c))
        push(c);
    std::vector<std::pair<Key, std::pair<int, int>>> ownEntries;
    for (int c : r) {
      if (resident.count(c))
        continue;
      Fetch f;
      f.chunk = c;
      f.forStep = step;
      while (used + p.chunkBytes[c] > p.budgetBytes) {
        int victim = -1;
        while (!queue.empty()) {
          auto entry = queue.top();
          auto [v, stamp] = entry.second;
          queue.pop();
          if (stamp != version[v] || !resident.count(v))
            continue;
          if (llvm::is_contained(r, v)) {
            ownEntries.push_back(entry);
            continue;
          }
          victim = v;
          break;
        }
        // validate() guarantees the step's own chunks fit; a budget the
        // step fills to within rounding leaves nothing to evict.
        if (victim < 0)
          break;
        resident.erase(victim);
        used -= p.chunkBytes[victim];
        f.evicts.push_back(victim);
      }
      resident.insert(c);
      used += p.chunkBytes[c];
      push(c);
      fetches.push_back(std::move(f));
    }
    for (auto &entry : ownEntries)
      queue.push(entry);
  }
  return fetches;
}

/// Times fetches and steps; fills the plan's timeline fields.
void timeIteration(const ChunkProblem &p, const NextUse &next,
                   int perIteration, ChunkPlan &plan) {
  size_t n = p.steps.size();
  // Fetch i may start once the link is free and its victims' last reads
  // before its step have ended; step ends depend on fetch ends, so walk
  // steps and fetches together in order.
  std::vector<double> stepEnd(n, 0);
  double linkFree = 0, clock = 0, iterationStart = 0, previousStart = 0;
  size_t f = 0;
  plan.reloads.clear();
  for (size_t s = 0; s < n; ++s) {
    double ready = clock;
    if (s % perIteration == 0)
      iterationStart = clock;
    for (; f < plan.fetches.size() && plan.fetches[f].forStep == (int)s; ++f) {
      Fetch &fetch = plan.fetches[f];
      double start = linkFree;
      if (p.fetchWithinIteration)
        start = std::max(start, iterationStart);
      for (int v : fetch.evicts) {
        int last = next.lastUpTo(v, static_cast<int>(s) - 1);
        if (last >= 0)
          start = std::max(start, stepEnd[last]);
      }
      fetch.start = start;
      fetch.end = start + fetchSeconds(p, fetch.chunk);
      linkFree = fetch.end;
      ready = std::max(ready, fetch.end);
    }
    if (double bytes = p.steps[s].reloadBytes; bytes > 0) {
      Reload reload{static_cast<int>(s), std::max(linkFree, previousStart), 0};
      reload.end = reload.start + linkSeconds(p, bytes);
      linkFree = reload.end;
      ready = std::max(ready, reload.end);
      plan.reloads.push_back(reload);
    }
    previousStart = ready;
    plan.stallSeconds += ready - clock;
    stepEnd[s] = ready + p.steps[s].seconds;
    clock = stepEnd[s];
    plan.computeSeconds += p.steps[s].seconds;
  }
  plan.iterationSeconds = clock;
  plan.stepEnds = std::move(stepEnd);
}

} // namespace

double loom::memory::linkSeconds(const ChunkProblem &p, double bytes) {
  return p.linkLatency + bytes / p.hostToDevice;
}

double loom::memory::fetchSeconds(const ChunkProblem &p, int chunk) {
  if (!p.transferSeconds.empty())
    return p.transferSeconds[chunk];
  return linkSeconds(p, static_cast<double>(p.chunkBytes[chunk]));
}

ChunkProblem loom::memory::unrolled(const ChunkProblem &p, int iterations) {
  ChunkProblem u = p;
  u.steps.clear();
  for (int k = 0; k < iterations; ++k)
    llvm::append_range(u.steps, p.steps);
  return u;
}

namespace {

/// The most bytes of chunks `plan` holds: reserved from each fetch's start,
/// its evictions freed first; a dropped chunk's bytes free from the end of
/// its last read (before a fetch starting then, as the replay counts
/// them). `reads` are the distinct reads of `p`'s steps.
double heldPeak(const ChunkProblem &p,
                const std::vector<std::vector<int>> &reads,
                const ChunkPlan &plan) {
  std::vector<std::pair<double, int>> drops;
  if (!plan.dropped.empty()) {
    std::vector<int> lastRead(p.chunkBytes.size(), -1);
    for (auto [k, r] : llvm::enumerate(reads))
      for (int c : r)
        lastRead[c] = static_cast<int>(k);
    for (int c : plan.dropped)
      drops.emplace_back(plan.stepEnds[lastRead[c]], c);
    llvm::sort(drops);
  }
  double used = 0;
  for (int c : plan.residentAtStart)
    used += static_cast<double>(p.chunkBytes[c]);
  double peak = used;
  size_t d = 0;
  for (const Fetch &f : plan.fetches) {
    for (; d < drops.size() && drops[d].first <= f.start; ++d)
      used -= static_cast<double>(p.chunkBytes[drops[d].second]);
    for (int v : f.evicts)
      used -= static_cast<double>(p.chunkBytes[v]);
    used += static_cast<double>(p.chunkBytes[f.chunk]);
    peak = std::max(peak, used);
  }
  return peak;
}

/// The plan of Belady's rule over `iterations` iterations from `resident`
/// (a steady state: they end with what they start with), its fetches timed
/// and its peak counted; per-iteration figures averaged over the period.
ChunkPlan periodPlan(const ChunkProblem &problem, int iterations,
                     std::set<int> resident, const std::set<int> *pinned = nullptr) {
  std::optional<ChunkProblem> copies;
  if (iterations > 1)
    copies = unrolled(problem, iterations);
  const ChunkProblem &p = copies ? *copies : problem;
  std::vector<std::vector<int>> reads = distinctReads(p);
  NextUse next(reads, p.chunkBytes.size());
  ChunkPlan plan;
  plan.iterations = iterations;
  plan.residentAtStart.assign(resident.begin(), resident.end());
  const int perIteration = static_cast<int>(problem.steps.size());
  plan.fetches = beladyIteration(p, reads, next, perIteration, resident, pinned);
  for (const Fetch &f : plan.fetches)
    plan.bytesFetched += p.chunkBytes[f.chunk];
  timeIteration(p, next, perIteration, plan);
  plan.bytesFetched /= iterations;
  plan.iterationSeconds /= iterations;
  plan.computeSeconds /= iterations;
  plan.stallSeconds /= iterations;
  plan.peakBytes = heldPeak(p, reads, plan);
  return plan;
}

/// A plan of one iteration keeping `pinned` on the device throughout and
/// streaming the other chunks through the rest of the budget. It starts
/// with the pinned chunks and those the iteration ends with (the last
/// fetched, carried until the next iteration evicts them for others), so
/// Belady's rule is repeated until that set settles. None where it does
/// not, or the streamed chunks do not fit beside the pinned ones.
std::optional<ChunkPlan> pinnedPlan(const ChunkProblem &problem,
                                    const std::vector<std::vector<int>> &reads,
                                    const std::set<int> &pinned) {
  NextUse next(reads, problem.chunkBytes.size());
  const int perIteration = static_cast<int>(problem.steps.size());
  std::set<int> start = pinned;
  constexpr int kRounds = 8;
  for (int round = 0; round < kRounds; ++round) {
    std::set<int> resident = start;
    beladyIteration(problem, reads, next, perIteration, resident, &pinned);
    if (resident != start) {
      start = std::move(resident);
      continue;
    }
    ChunkPlan plan = periodPlan(problem, 1, start, &pinned);
    if (plan.peakBytes > problem.budgetBytes * (1 + 1e-12))
      return std::nullopt; // a step's streamed chunks did not fit
    return plan;
  }
  return std::nullopt;
}

/// Whether the host rewrites any of `p`'s chunks at iteration boundaries.
bool anyStale(const ChunkProblem &p) {
  for (size_t c = 0; c < p.chunkBytes.size(); ++c)
    if (staleBytesOf(p, c) > 0)
      return true;
  return false;
}

/// A plan of one iteration keeping `pinned` on the device throughout and
/// the chunks its last step reads (needed at the end, and released by no
/// later step) across the boundary, and releasing every other chunk after
/// its last read. None where the streamed chunks do not fit beside them or
/// nothing would be released (then it is pinnedPlan's).
std::optional<ChunkPlan>
droppingPlan(const ChunkProblem &problem,
             const std::vector<std::vector<int>> &reads,
             const std::set<int> &pinned) {
  std::set<int> start = pinned;
  start.insert(reads.back().begin(), reads.back().end());
  double held = 0;
  for (int c : start)
    held += static_cast<double>(problem.chunkBytes[c]);
  if (held > problem.budgetBytes)
    return std::nullopt;
  ChunkPlan plan = periodPlan(problem, 1, start, &pinned);
  std::set<int> end = start;
  for (const Fetch &f : plan.fetches) {
    for (int v : f.evicts)
      end.erase(v);
    end.insert(f.chunk);
  }
  for (int c : end)
    if (!start.count(c))
      plan.dropped.push_back(c);
  if (plan.dropped.empty() ||
      !llvm::all_of(start, [&](int c) { return end.count(c); }))
    return std::nullopt;
  // Dropped, their bytes are free earlier.
  plan.peakBytes = heldPeak(problem, reads, plan);
  if (plan.peakBytes > problem.budgetBytes * (1 + 1e-12))
    return std::nullopt;
  return plan;
}

/// The order in which plans of one iteration keep chunks on the device
/// throughout: those read by more steps first, then those read earlier
/// (they would stall the iteration's start otherwise); and in `most`, how
/// many of them the budget holds.
std::vector<int> pinningOrder(const ChunkProblem &problem,
                              const std::vector<std::vector<int>> &reads,
                              size_t &most) {
  const size_t chunks = problem.chunkBytes.size();
  std::vector<int> readers(chunks, 0), firstRead(chunks, INT32_MAX);
  for (auto [k, r] : llvm::enumerate(reads))
    for (int c : r) {
      ++readers[c];
      firstRead[c] = std::min(firstRead[c], static_cast<int>(k));
    }
  std::vector<int> order;
  for (size_t c = 0; c < chunks; ++c)
    if (readers[c])
      order.push_back(static_cast<int>(c));
  llvm::stable_sort(order, [&](int a, int b) {
    return readers[a] != readers[b] ? readers[a] > readers[b]
                                    : firstRead[a] < firstRead[b];
  });
  most = 0;
  for (double bytes = 0; most < order.size(); ++most) {
    bytes += static_cast<double>(problem.chunkBytes[order[most]]);
    if (bytes > problem.budgetBytes)
      break;
  }
  return order;
}

/// The best of the plans for pinned counts j in [0, most], on a grid of
/// about `points` values, then around the best: every j within a grid
/// step of it, or (`halving`) j at half the step either side, then a
/// quarter, down to one. `attempt(j)`: whether there is a plan for j;
/// `better(a, b)`: a's plan beats b's.
template <typename Attempt, typename Better>
std::optional<size_t> bestPinnedCount(size_t most, size_t points, bool halving,
                                      Attempt attempt, Better better) {
  std::optional<size_t> best;
  auto consider = [&](size_t j) {
    if (j <= most && attempt(j) && (!best || better(j, *best)))
      best = j;
  };
  const size_t stride = std::max<size_t>(1, (most + 1) / points);
  for (size_t j = 0; j <= most; j += stride)
    consider(j);
  if (!best || stride == 1)
    return best;
  if (halving) {
    for (size_t step = stride / 2; step >= 1; step /= 2) {
      size_t around = *best;
      if (around >= step)
        consider(around - step);
      consider(around + step);
    }
    return best;
  }
  size_t around = *best;
  for (size_t j = around > stride ? around - stride : 0; j <= around + stride;
       ++j)
    consider(j);
  return best;
}

/// The fastest plan of period one (fewer bytes on ties): Belady's rule
/// with the first `j` chunks of pinningOrder pinned, for every `j` that
/// leaves room to stream the rest (on a grid of about 32, refined around
/// the best, when there are many).
std::optional<ChunkPlan>
bestPinnedPlan(const ChunkProblem &problem,
               const std::vector<std::vector<int>> &reads) {
  size_t most = 0;
  std::vector<int> order = pinningOrder(problem, reads, most);
  std::map<size_t, std::optional<ChunkPlan>> tried;
  auto attempt = [&](size_t j) {
    auto [it, fresh] = tried.try_emplace(j);
    if (fresh)
      it->second = pinnedPlan(problem, reads,
                              std::set<int>(order.begin(), order.begin() + j));
    return it->second.has_value();
  };
  auto faster = [&](size_t a, size_t b) {
    const ChunkPlan &x = *tried[a], &y = *tried[b];
    return x.iterationSeconds != y.iterationSeconds
               ? x.iterationSeconds < y.iterationSeconds
               : x.bytesFetched < y.bytesFetched;
  };
  std::optional<size_t> best =
      bestPinnedCount(most, 32, /*halving=*/false, attempt, faster);
  if (!best)
    return std::nullopt;
  return tried[*best];
}

} // namespace

int loom::memory::lastReadStep(const ChunkProblem &problem, int chunk) {
  for (int k = static_cast<int>(problem.steps.size()) - 1; k >= 0; --k)
    if (llvm::is_contained(problem.steps[k].reads, chunk))
      return k;
  return -1;
}

llvm::Expected<ChunkPlan> loom::memory::planChunks(const ChunkProblem &problem) {
  std::vector<std::vector<int>> reads = distinctReads(problem);
  if (llvm::Error e = validate(problem, reads))
    return std::move(e);
  // Iterate Belady's rule (deterministic) until the resident set at an
  // iteration's start repeats: from there the plan is periodic, usually
  // with period 1, sometimes 2 or more.
  std::set<int> resident;
  std::map<std::set<int>, int> seen;
  int iterations = 1;
  {
    NextUse next(reads, problem.chunkBytes.size());
    for (int round = 0;; ++round) {
      auto [it, fresh] = seen.emplace(resident, round);
      if (!fresh) {
        iterations = round - it->second;
        break;
      }
      if (round == kMaxPeriod)
        return fail(llvm::formatv("the chunk schedule has no steady state "
                                  "within {0} iterations",
                                  kMaxPeriod));
      beladyIteration(problem, reads, next,
                      static_cast<int>(problem.steps.size()), resident);
    }
  }
  ChunkPlan plan = periodPlan(problem, iterations, resident);
  if (iterations > 1 && problem.singleIteration) {
    std::optional<ChunkPlan> pinned = bestPinnedPlan(problem, reads);
    if (!pinned)
      return fail(llvm::formatv(
          "Belady's rule cycles through {0} iterations, and no plan of one "
          "iteration (some chunks kept on the device, the rest streamed) fits "
          "the device budget of {1:F0} bytes",
          iterations, problem.budgetBytes));
    plan = std::move(*pinned);
  }
  if (!plan.fetches.empty() && problem.hostToDevice <= 0 &&
      problem.transferSeconds.empty())
    return fail("chunks must move but the host-to-device bandwidth is not "
                "positive");
  return plan;
}

ChunkPlan loom::memory::carryFewer(const ChunkProblem &problem, ChunkPlan plan,
                                   double toBeat, PlanPrice price) {
  std::vector<std::vector<int>> reads = distinctReads(problem);
  // (Without a link, nothing dropped could come back.)
  if (!problem.singleIteration || plan.iterations != 1 || !anyStale(problem) ||
      reads.empty() ||
      (!(problem.hostToDevice > 0) && problem.transferSeconds.empty()))
    return plan;
  // Nothing to drop: it carries only the last step's chunks.
  if (llvm::all_of(plan.residentAtStart,
                   [&](int c) { return llvm::is_contained(reads.back(), c); }))
    return plan;
  // The cheapest so far; a plan whose iteration alone takes as long (a
  // bound on its price) is not priced.
  double least = toBeat;
  size_t most = 0;
  std::vector<int> order = pinningOrder(problem, reads, most);
  std::map<size_t, std::optional<ChunkPlan>> tried;
  std::map<size_t, double> priced;
  auto attempt = [&](size_t j) {
    auto [it, fresh] = tried.try_emplace(j);
    if (fresh) {
      it->second = droppingPlan(
          problem, reads, std::set<int>(order.begin(), order.begin() + j));
      if (it->second) {
        const ChunkPlan &p = *it->second;
        priced[j] = p.iterationSeconds >= least
                        ? std::numeric_limits<double>::infinity()
                        : std::max(price(p), p.iterationSeconds);
        least = std::min(least, priced[j]);
      }
    }
    return it->second.has_value();
  };
  auto cheaper = [&](size_t a, size_t b) {
    return priced[a] != priced[b]
               ? priced[a] < priced[b]
               : tried[a]->bytesFetched < tried[b]->bytesFetched;
  };
  // The price is not unimodal in j: a grid with halving around its best
  // can miss the cheapest, and then more memory prices slower. Every j is
  // tried where there are few.
  const size_t points = most + 1 <= kEveryPinnedCount ? most + 1 : 4;
  std::optional<size_t> best =
      bestPinnedCount(most, points, /*halving=*/true, attempt, cheaper);
  if (!best || !(priced[*best] < toBeat))
    return plan;
  return *tried[*best];
}

llvm::Error loom::memory::simulateChunks(const ChunkProblem &problem,
                                         const ChunkPlan &plan) {
  if (plan.iterations < 1 || plan.iterations > kMaxPeriod)
    return fail(llvm::formatv("the plan covers {0} iterations", plan.iterations));
  ChunkProblem p = unrolled(problem, plan.iterations);
  std::vector<std::vector<int>> reads = distinctReads(p);
  if (llvm::Error e = validate(p, reads))
    return e;
  size_t chunks = p.chunkBytes.size();
  // Presence intervals: [arrive, leave) per chunk, reservations for memory.
  struct Interval {
    double reserve, arrive, leave;
  };
  std::vector<std::vector<Interval>> present(chunks);
  const double inf = std::numeric_limits<double>::infinity();
  for (int c : plan.residentAtStart) {
    if (c < 0 || c >= static_cast<int>(chunks))
      return fail(llvm::formatv("resident chunk {0} does not exist", c));
    present[c].push_back({0, 0, inf});
  }
  // The link's transfers, checked apart below.
  std::vector<LinkTransfer> transfers;
  for (auto [k, f] : llvm::enumerate(plan.fetches)) {
    if (f.chunk < 0 || f.chunk >= static_cast<int>(chunks))
      return fail(llvm::formatv("fetch {0} moves chunk {1}, which does not exist",
                                k, f.chunk));
    if (f.forStep < 0 || f.forStep >= static_cast<int>(reads.size()) ||
        !llvm::is_contained(reads[f.forStep], f.chunk))
      return fail(llvm::formatv("fetch {0} brings chunk {1} for step {2}, "
                                "which does not read it",
                                k, f.chunk, f.forStep));
    double expectedEnd = f.start + fetchSeconds(p, f.chunk);
    if (std::abs(f.end - expectedEnd) > 1e-9)
      return fail(llvm::formatv("fetch {0} (chunk {1}) does not take its "
                                "bytes' time",
                                k, f.chunk));
    transfers.emplace_back(
        f.start, f.end,
        llvm::formatv("fetch {0} (chunk {1})", k, f.chunk).str());
    for (int v : f.evicts) {
      if (v < 0 || v >= static_cast<int>(chunks) || present[v].empty() ||
          present[v].back().leave != inf)
        return fail(llvm::formatv("fetch {0} evicts chunk {1}, which is not on "
                                  "the device",
                                  k, v));
      present[v].back().leave = f.start;
    }
    if (!present[f.chunk].empty() && present[f.chunk].back().leave == inf)
      return fail(llvm::formatv("fetch {0} brings chunk {1}, which is already "
                                "on the device",
                                k, f.chunk));
    present[f.chunk].push_back({f.start, f.end, inf});
  }
  // Each step fetching activations back has one reload, of its bytes.
  std::vector<const Reload *> reloadOf(reads.size(), nullptr);
  for (const Reload &r : plan.reloads) {
    if (r.forStep < 0 || r.forStep >= static_cast<int>(reads.size()) ||
        !(p.steps[r.forStep].reloadBytes > 0) || reloadOf[r.forStep])
      return fail(llvm::formatv("a reload for step {0}, which fetches no "
                                "activations back or has its reload already",
                                r.forStep));
    if (std::abs(r.end - r.start - linkSeconds(p, p.steps[r.forStep].reloadBytes)) > 1e-9)
      return fail(llvm::formatv("the reload for step {0} does not take its "
                                "bytes' time",
                                r.forStep));
    reloadOf[r.forStep] = &r;
    transfers.emplace_back(
        r.start, r.end,
        llvm::formatv("the reload for step {0}", r.forStep).str());
  }
  if (llvm::Error e = oneAtATime(std::move(transfers), 1e-12))
    return e;
  // Steps: start when the previous has ended, every read is present and
  // its activations are back.
  double clock = 0, previousStart = 0;
  size_t perIteration = problem.steps.size();
  std::vector<double> replayedEnds(reads.size());
  for (auto [s, r] : llvm::enumerate(reads)) {
    double start = clock;
    if (p.steps[s].reloadBytes > 0) {
      const Reload *reload = reloadOf[s];
      if (!reload)
        return fail(llvm::formatv("step {0} ('{1}') reads offloaded activations "
                                  "that no reload brings back",
                                  s, p.steps[s].name));
      if (reload->start + 1e-12 < previousStart)
        return fail(llvm::formatv("the reload for step {0} starts at {1} s, "
                                  "before the previous step does ({2} s), "
                                  "while its staging buffer is in use",
                                  s, reload->start, previousStart));
      start = std::max(start, reload->end);
    }
    for (const Fetch &f : plan.fetches)
      if (f.forStep == static_cast<int>(s)) {
        start = std::max(start, f.end);
        // An iteration starts when its previous one's last step ends.
        size_t first = s - s % perIteration;
        if (p.fetchWithinIteration && first > 0 &&
            f.start + 1e-12 < replayedEnds[first - 1])
          return fail(llvm::formatv("fetch of chunk {0} for step {1} starts at "
                                    "{2} s, before its iteration does ({3} s), "
                                    "while the host rewrites its copy",
                                    f.chunk, s, f.start,
                                    replayedEnds[first - 1]));
      }
    previousStart = start;
    double end = start + p.steps[s].seconds;
    for (int c : r) {
      bool covered = llvm::any_of(present[c], [&](const Interval &i) {
        return i.arrive <= start + 1e-12 && end <= i.leave + 1e-12;
      });
      if (!covered)
        return fail(llvm::formatv("step {0} ('{1}') reads chunk {2}, which is "
                                  "not on the device for all of [{3}, {4}] s",
                                  s, p.steps[s].name, c, start, end));
    }
    clock = replayedEnds[s] = end;
  }
  // Dropped chunks leave after their last read, so that the next
  // iteration starts without them.
  if (!plan.dropped.empty() && plan.iterations != 1)
    return fail(llvm::formatv("a plan of {0} iterations drops chunks",
                              plan.iterations));
  for (int c : plan.dropped) {
    if (c < 0 || c >= static_cast<int>(chunks) || present[c].empty() ||
        present[c].back().leave != inf)
      return fail(llvm::formatv("chunk {0} is dropped, but it is not on the "
                                "device at the end",
                                c));
    if (llvm::is_contained(plan.residentAtStart, c))
      return fail(llvm::formatv("chunk {0} is both dropped and carried", c));
    int last = lastReadStep(p, c);
    if (last < 0 || last + 1 == static_cast<int>(reads.size()))
      return fail(llvm::formatv("chunk {0} is dropped, but {1}", c,
                                last < 0 ? "no step reads it"
                                         : "the last step reads it"));
    present[c].back().leave = replayedEnds[last];
  }
  clock /= plan.iterations;
  if (std::abs(clock - plan.iterationSeconds) > 1e-9 * std::max(1.0, clock))
    return fail(llvm::formatv("the replayed iteration takes {0} s, the plan "
                              "says {1} s",
                              clock, plan.iterationSeconds));
  // Periodic: the iterations end with the chunks they started with.
  std::set<int> end;
  for (size_t c = 0; c < chunks; ++c)
    if (!present[c].empty() && present[c].back().leave == inf)
      end.insert(static_cast<int>(c));
  if (end != std::set<int>(plan.residentAtStart.begin(),
                           plan.residentAtStart.end()))
    return fail("the plan does not end with the chunks it starts with, so it "
                "cannot repeat");
  // Memory: reservations start at a fetch's start and end at the eviction.
  std::vector<std::pair<double, double>> events; // (time, +-bytes)
  for (size_t c = 0; c < chunks; ++c)
    for (const Interval &i : present[c]) {
      events.push_back({i.reserve, static_cast<double>(p.chunkBytes[c])});
      if (i.leave != inf)
        events.push_back({i.leave, -static_cast<double>(p.chunkBytes[c])});
    }
  // At equal times releases count first: an eviction makes room for the
  // fetch that starts at that moment.
  auto [peak, at] = peakHeld(std::move(events));
  if (peak > p.budgetBytes * (1 + 1e-12))
    return fail(llvm::formatv("the device holds {0} bytes of chunks at {1} "
                              "s, over the budget of {2}",
                              peak, at, p.budgetBytes));
  if (std::abs(peak - plan.peakBytes) > 1e-6 * std::max(1.0, peak))
    return fail(llvm::formatv("the replay peaks at {0} bytes, the plan says {1}",
                              peak, plan.peakBytes));
  return llvm::Error::success();
}

// Step s covers [planStart(s), stepEnds[s]] of the plan's clock and starts
// at stepStarts[s] on the timeline.
double loom::memory::PlanOnTimeline::planStart(size_t s) const {
  return s ? plan.stepEnds[s - 1] : 0.0;
}

double loom::memory::PlanOnTimeline::stepEnd(size_t s) const {
  return stepStarts[s] + plan.stepEnds[s] - planStart(s);
}

double loom::memory::PlanOnTimeline::at(double t) const {
  // The first step whose interval holds t: a time at a step's end belongs
  // to that step (as placement finds the step a transfer ends in), not to
  // the next, which may be held back.
  const std::vector<double> &ends = plan.stepEnds;
  size_t s = std::min<size_t>(llvm::lower_bound(ends, t) - ends.begin(),
                              ends.size() - 1);
  return stepStarts[s] + t - planStart(s);
}

llvm::Error loom::memory::simulateRefresh(
    const ChunkProblem &problem, const ChunkPlan &plan,
    const std::vector<Refresh> &refreshes,
    const std::vector<double> &stepStarts, double nextStart,
    const std::vector<std::pair<double, double>> &otherUploads) {
  const size_t n = problem.steps.size(), chunks = problem.chunkBytes.size();
  if (plan.iterations != 1 || plan.stepEnds.size() != n)
    return fail(llvm::formatv("the refresh is replayed on a plan of one "
                              "iteration, not {0}",
                              plan.iterations));
  if (stepStarts.size() != n)
    return fail(llvm::formatv("the timeline starts {0} steps, the plan has {1}",
                              stepStarts.size(), n));
  PlanOnTimeline on(plan, stepStarts);
  // Times are compared to within a nanosecond per second of the iteration
  // (the pipeline's clock runs over many iterations before it is traced).
  const double eps = 1e-9 * std::max(1.0, nextStart);
  for (size_t s = 0; s < n; ++s)
    if (s ? stepStarts[s] + eps < on.stepEnd(s - 1) : stepStarts[s] != 0)
      return fail(llvm::formatv("step {0} starts at {1:F3} ms in the timeline, "
                                "before the step before it ends",
                                s, stepStarts[s] * 1e3));
  if (n && nextStart + eps < on.stepEnd(n - 1))
    return fail(llvm::formatv("the next iteration starts at {0:F3} ms, before "
                              "this one's last step ends ({1:F3} ms)",
                              nextStart * 1e3, on.stepEnd(n - 1) * 1e3));
  // The link: (start, end, what).
  std::vector<LinkTransfer> link;
  std::vector<double> lastArrival(chunks, -1);
  if (n) {
    for (const Fetch &f : plan.fetches) {
      link.emplace_back(on.at(f.start), on.at(f.end),
                        llvm::formatv("the fetch of chunk {0}", f.chunk).str());
      if (f.chunk >= 0 && f.chunk < static_cast<int>(chunks))
        lastArrival[f.chunk] = std::max(lastArrival[f.chunk], on.at(f.end));
    }
    for (const Reload &r : plan.reloads)
      link.emplace_back(
          on.at(r.start), on.at(r.end),
          llvm::formatv("the reload for step {0}", r.forStep).str());
  }
  for (auto [start, end] : otherUploads)
    if (end > start)
      link.emplace_back(start, end, "the device update's reloads");
  std::set<int> carried(plan.residentAtStart.begin(),
                        plan.residentAtStart.end());
  std::vector<double> refreshed(chunks, 0);
  for (const Refresh &r : refreshes) {
    if (r.chunk < 0 || r.chunk >= static_cast<int>(chunks))
      return fail(llvm::formatv("a refresh of chunk {0}, which does not exist",
                                r.chunk));
    if (!carried.count(r.chunk) || llvm::is_contained(plan.dropped, r.chunk))
      return fail(llvm::formatv("chunk {0} is refreshed, but the plan does not "
                                "carry it into the next iteration",
                                r.chunk));
    if (!(r.bytes >= 0) || !(r.end >= r.start) || !(r.start >= 0))
      return fail(
          llvm::formatv("the refresh of chunk {0} moves {1:F0} bytes over "
                        "[{2:F3}, {3:F3}] ms",
                        r.chunk, r.bytes, r.start * 1e3, r.end * 1e3));
    if (r.afterStep < 0 || r.afterStep >= static_cast<int>(n) ||
        !llvm::is_contained(problem.steps[r.afterStep].reads, r.chunk))
      return fail(llvm::formatv("the refresh of chunk {0} follows step {1}, "
                                "which does not read it",
                                r.chunk, r.afterStep));
    if (r.start + eps < on.stepEnd(r.afterStep))
      return fail(llvm::formatv("the refresh of chunk {0} starts at {1:F3} ms, "
                                "before step {2} has read it ({3:F3} ms)",
                                r.chunk, r.start * 1e3, r.afterStep,
                                on.stepEnd(r.afterStep) * 1e3));
    if (r.start + eps < lastArrival[r.chunk])
      return fail(llvm::formatv("the refresh of chunk {0} starts at {1:F3} ms, "
                                "before the chunk's fetch arrives ({2:F3} ms)",
                                r.chunk, r.start * 1e3,
                                lastArrival[r.chunk] * 1e3));
    if (r.end > nextStart + eps)
      return fail(llvm::formatv("the refresh of chunk {0} ends at {1:F3} ms, "
                                "after the next iteration starts ({2:F3} ms)",
                                r.chunk, r.end * 1e3, nextStart * 1e3));
    refreshed[r.chunk] += r.bytes;
    if (r.end > r.start)
      link.emplace_back(
          r.start, r.end,
          llvm::formatv("the refresh of chunk {0}", r.chunk).str());
  }
  for (int c : carried) {
    double stale = staleBytesOf(problem, c);
    if (std::abs(refreshed[c] - stale) > 1e-6 * std::max(1.0, stale))
      return fail(llvm::formatv("chunk {0} is carried with {1:F0} stale bytes, "
                                "but {2:F0} are refreshed",
                                c, stale, refreshed[c]));
  }
  return oneAtATime(std::move(link), eps);
}

std::vector<std::vector<int>>
loom::memory::residentAtIterationStarts(const ChunkProblem &problem,
                                        const ChunkPlan &plan) {
  int perIteration = static_cast<int>(problem.steps.size());
  std::set<int> on(plan.residentAtStart.begin(), plan.residentAtStart.end());
  std::vector<std::vector<int>> starts;
  size_t f = 0;
  for (int k = 0; k < plan.iterations; ++k) {
    for (; f < plan.fetches.size() &&
           plan.fetches[f].forStep < k * perIteration;
         ++f) {
      for (int v : plan.fetches[f].evicts)
        on.erase(v);
      on.insert(plan.fetches[f].chunk);
    }
    starts.emplace_back(on.begin(), on.end());
  }
  return starts;
}

std::vector<bool>
loom::memory::onDeviceAtEveryStart(const ChunkProblem &problem,
                                   const ChunkPlan &plan) {
  std::vector<int> count(problem.chunkBytes.size(), 0);
  for (const std::vector<int> &on : residentAtIterationStarts(problem, plan))
    for (int c : on)
      ++count[c];
  std::vector<bool> every(count.size());
  for (size_t c = 0; c < count.size(); ++c)
    every[c] = count[c] == plan.iterations;
  return every;
}

namespace {

/// The most bytes of whole chunks that fit in `budget`: a chunk plan never
/// holds more, so the byte bound may use it as its budget. Sums of up to
/// kMaxSubsetSums distinct values are tracked; past that, the budget.
constexpr size_t kMaxSubsetSums = 1 << 14;
double wholeChunkBudget(const std::vector<int64_t> &chunkBytes, double budget) {
  std::vector<int64_t> sums = {0};
  for (int64_t bytes : chunkBytes) {
    size_t before = sums.size();
    for (size_t i = 0; i < before; ++i)
      if (static_cast<double>(sums[i] + bytes) <= budget)
        sums.push_back(sums[i] + bytes);
    llvm::sort(sums);
    sums.erase(std::unique(sums.begin(), sums.end()), sums.end());
    if (sums.size() > kMaxSubsetSums)
      return budget;
  }
  return static_cast<double>(sums.back());
}

/// Per chunk, how many of the steps of `reads` (distinct reads) read it.
std::vector<int> readCounts(const std::vector<std::vector<int>> &reads,
                            size_t chunks) {
  std::vector<int> count(chunks, 0);
  for (const std::vector<int> &r : reads)
    for (int c : r)
      ++count[c];
  return count;
}

/// How far past a step a resident chunk is next needed (infinity: it is
/// dead), and whether its stale bytes are dead before then (the host
/// rewrites them at a boundary first).
struct Need {
  double distance;
  bool staleDead;
};

/// What a node of wholeChunkLowerBound's search fixed for a gap in which a
/// chunk is not read. A chunk read at k distinct steps of the iteration has
/// k + 1 gaps:
/// - gap j < k - 1 follows its j-th read up to the next one: the chunk is
///   kept whole throughout (Keep) or absent throughout (Drop: fetched whole
///   again for the next read);
/// - gap k - 1 follows its last read up to the iteration's end, when the
///   chunk is on the device whole (AtEnd) or not (Drop); on the device at
///   the end, it is kept throughout (Keep) or released after its last read
///   and fetched again (Refetch);
/// - gap k runs from the next iteration's start to the chunk's first read:
///   on the device at the boundary, the chunk is kept whole throughout
///   (Keep: its stale bytes sent again in place) or released there (Drop).
enum class Gap : uint8_t { Free, Keep, Drop, AtEnd, Refetch };
using GapFixes = std::vector<std::vector<Gap>>; // [chunk][gap]; empty: none

/// Chunk c's gap up to the iteration's end in `fixes`, and from the next
/// iteration's start (Free where nothing is fixed or c is not read); and
/// whether the first puts c on the device at the end.
Gap toBoundary(const GapFixes &fixes, size_t c) {
  return c < fixes.size() && fixes[c].size() >= 2
             ? fixes[c][fixes[c].size() - 2]
             : Gap::Free;
}
Gap fromBoundary(const GapFixes &fixes, size_t c) {
  return c < fixes.size() && !fixes[c].empty() ? fixes[c].back() : Gap::Free;
}
bool onDeviceAtEnd(Gap toBoundary) {
  return toBoundary == Gap::Keep || toBoundary == Gap::AtEnd ||
         toBoundary == Gap::Refetch;
}

/// The free gap a byte plan splits most: the one where the smaller of a
/// chunk's bytes kept and those evicted is the largest. (From the boundary,
/// the byte rule frees a chunk's stale bytes, while a plan holds the chunk
/// whole to send them again in place: keeping only the rest splits it.)
struct SplitGap {
  int chunk = -1, gap = -1;
  double partial = 0; // the smaller of the bytes kept and those evicted
  void consider(int c, int g, double kept, double bytes) {
    double part = std::min(kept, bytes - kept);
    if (part > std::max(partial, 0.5)) // (half a byte: rounding)
      *this = {c, g, part};
  }
};

/// One iteration of Belady's rule on bytes. Chunk c's resident bytes are
/// `valid[c]` that stay valid across the iteration boundary (at most the
/// chunk less its stale bytes) and `stale[c]` that the host rewrites
/// there; `used` is their sum. Room is made from the bytes needed
/// furthest ahead (`need`), part of a chunk if need be; dead stale bytes
/// go first (Belady's rule with invalidations: a page dead before its next
/// use is the best victim). With `fixes` (Gap): a chunk in a kept gap is
/// no victim; one whose read opens a gap it is absent from (dropped or
/// refetched) leaves the device after that step; one to be on the device
/// at the iteration's end is needed there, and what it lacks then is
/// fetched. Returns the bytes fetched, or infinity where the fixes leave
/// too little room. `split` (may be null) records the free gap the
/// iteration splits most.
double bytesIteration(const ChunkProblem &p,
                      const std::vector<std::vector<int>> &reads, double budget,
                      std::vector<double> &valid, std::vector<double> &stale,
                      double &used,
                      llvm::function_ref<Need(int chunk, int step)> need,
                      const GapFixes &fixes = {}, SplitGap *split = nullptr) {
  const size_t chunks = valid.size();
  const int n = static_cast<int>(reads.size());
  // Each chunk's distinct reads, and its gap now: before its first read,
  // the one from the boundary.
  const std::vector<int> readCount = readCounts(reads, chunks);
  std::vector<int> gap = readCount, readsSoFar(chunks, 0);
  // Bytes evicted in the gap each chunk is in.
  std::vector<double> evicted(chunks, 0), validAtStart = valid;
  auto fixOf = [&](size_t c) {
    return fixes.empty() || readCount[c] == 0 ? Gap::Free : fixes[c][gap[c]];
  };
  auto toEnd = [&](size_t c) { return gap[c] == readCount[c] - 1; };
  // Makes room for `missing` bytes beside the chunks of `r`; false where
  // the fixes leave too little.
  auto makeRoom = [&](const std::vector<int> &r, double missing, int step) {
    double over = used + missing - budget;
    while (over > 1e-9) {
      int victim = -1;
      bool deadBytes = false;
      double furthest = -1;
      for (size_t v = 0; v < chunks; ++v) {
        if (valid[v] + stale[v] <= 0 || llvm::is_contained(r, static_cast<int>(v)))
          continue;
        Need want = need(static_cast<int>(v), step);
        if (fixOf(v) == Gap::Keep)
          continue;
        // Needed at the end: before the next iteration's first step.
        if (toEnd(v) && fixOf(v) == Gap::AtEnd)
          want = {n - step - 0.5, false};
        bool dead = want.staleDead && stale[v] > 0;
        double d =
            dead ? std::numeric_limits<double>::infinity() : want.distance;
        if (d > furthest) {
          furthest = d;
          victim = static_cast<int>(v);
          deadBytes = dead;
        }
      }
      if (victim < 0)
        break;
      // A live victim gives its stale bytes after its valid ones: both
      // are read again before the boundary.
      double &pool = deadBytes || valid[victim] <= 0 ? stale[victim] : valid[victim];
      double take = std::min(over, pool);
      pool -= take;
      used -= take;
      over -= take;
      evicted[victim] += take;
    }
    // (Without fixes the step's chunks fit the budget: validate().)
    return fixes.empty() || over <= 0.5;
  };
  double fetched = 0;
  for (auto [i, r] : llvm::enumerate(reads)) {
    int step = static_cast<int>(i);
    double missing = 0;
    for (int c : r)
      missing += p.chunkBytes[c] - valid[c] - stale[c];
    fetched += missing;
    if (!makeRoom(r, missing, step))
      return std::numeric_limits<double>::infinity();
    for (int c : r) {
      used += p.chunkBytes[c] - valid[c] - stale[c];
      stale[c] = staleBytesOf(p, c);
      valid[c] = p.chunkBytes[c] - stale[c];
      const double bytes = static_cast<double>(p.chunkBytes[c]);
      // The gap this read closes: one between reads, or the one from the
      // boundary (that splits the chunk's place at the boundary first).
      if (split && fixOf(c) == Gap::Free) {
        if (readsSoFar[c] > 0)
          split->consider(c, gap[c], bytes - evicted[c], bytes);
        else
          split->consider(
              c,
              onDeviceAtEnd(toBoundary(fixes, c)) ? gap[c] : readCount[c] - 1,
              validAtStart[c] - evicted[c], bytes);
      }
      evicted[c] = 0;
      gap[c] = readsSoFar[c]++;
    }
    for (int c : r)
      if (fixOf(c) == Gap::Drop || fixOf(c) == Gap::Refetch) {
        used -= valid[c] + stale[c];
        valid[c] = stale[c] = 0;
      }
  }
  // The chunks to be on the device at the end, whole.
  std::vector<int> atEnd;
  double missing = 0;
  for (size_t c = 0; c < chunks; ++c)
    if (readCount[c] > 0 && onDeviceAtEnd(fixOf(c))) {
      atEnd.push_back(static_cast<int>(c));
      missing += p.chunkBytes[c] - valid[c] - stale[c];
    }
  if (!makeRoom(atEnd, missing, n - 1))
    return std::numeric_limits<double>::infinity();
  fetched += missing;
  used += missing;
  for (int c : atEnd) {
    stale[c] = staleBytesOf(p, c);
    valid[c] = p.chunkBytes[c] - stale[c];
  }
  // Whether the chunk is on the device at the end, or (there) kept since
  // its last read.
  if (split)
    for (size_t c = 0; c < chunks; ++c) {
      const double bytes = static_cast<double>(p.chunkBytes[c]);
      if (readCount[c] > 0 && fixOf(c) == Gap::Free)
        split->consider(static_cast<int>(c), gap[c], valid[c] + stale[c],
                        bytes);
      if (readCount[c] > 0 && fixOf(c) == Gap::AtEnd)
        split->consider(static_cast<int>(c), gap[c], bytes - evicted[c], bytes);
    }
  return fetched;
}

/// `endReads[c]` (empty: none) of chunk c, where it exists.
double endReadOf(const std::vector<double> &endReads, size_t c) {
  return c < endReads.size() ? std::max(0.0, endReads[c]) : 0.0;
}

/// The least of `endReads` any iteration end leaves to come up apart: at
/// most `budget` bytes of whole chunks are on the device then, and those
/// hold at most the fractional knapsack of their end reads (each chunk's
/// end reads per byte, best first; a chunk no step reads, its end reads
/// less its stale bytes). With `fixes`, the chunks on the device at the
/// end are, and those not there are not.
double endReadsUncarried(const ChunkProblem &p,
                         const std::vector<double> &endReads, double budget,
                         const GapFixes &fixes = {}) {
  // A chunk no step reads is on the device at the end only if it was
  // carried in, its stale bytes sent again, or fetched: that much less is
  // saved by having it there.
  std::vector<bool> read(p.chunkBytes.size(), false);
  for (const Step &step : p.steps)
    for (int c : step.reads)
      read[c] = true;
  auto saved = [&](size_t c) {
    return read[c] ? endReadOf(endReads, c)
                   : std::max(0.0, endReadOf(endReads, c) - staleBytesOf(p, c));
  };
  std::vector<size_t> order;
  double total = 0, room = budget, kept = 0;
  for (size_t c = 0; c < p.chunkBytes.size(); ++c) {
    double r = saved(c);
    total += endReadOf(endReads, c);
    Gap fix = toBoundary(fixes, c);
    if (onDeviceAtEnd(fix)) {
      room -= static_cast<double>(p.chunkBytes[c]);
      kept += r;
    } else if (fix == Gap::Free && r > 0) {
      order.push_back(c);
    }
  }
  auto density = [&](size_t c) {
    return saved(c) / std::max<double>(1, p.chunkBytes[c]);
  };
  llvm::stable_sort(
      order, [&](size_t a, size_t b) { return density(a) > density(b); });
  for (size_t c : order) {
    double bytes = static_cast<double>(p.chunkBytes[c]);
    double take = std::min(1.0, std::max(0.0, room) / std::max(1.0, bytes));
    kept += take * saved(c);
    room -= bytes;
  }
  return std::max(0.0, total - kept);
}

/// Belady's rule on bytes (`fixes` applied) over iterations from an empty
/// device until its state repeats: the average bytes per iteration over
/// the period, which no plan (obeying the fixes) moves less than; stale
/// bytes whose next use is past the boundary are dead. Infinity where the
/// fixes do not fit. `split`: the gap the period's last iteration splits
/// most. `rounds`: iterations run.
double steadyBytes(const ChunkProblem &p,
                   const std::vector<std::vector<int>> &reads,
                   const NextUse &next, double budget, const GapFixes &fixes,
                   SplitGap *split, int &rounds) {
  const size_t chunks = p.chunkBytes.size(), n = reads.size();
  std::vector<double> valid(chunks, 0), stale(chunks, 0), lastStart;
  const std::vector<int> readCount = readCounts(reads, chunks);
  std::map<std::vector<double>, int> seen;
  std::vector<double> traffic; // per round
  double used = 0;
  for (int round = 0; round <= kMaxPeriod; ++round) {
    // What the host updated since is no longer on the device. A chunk
    // held from the boundary has those bytes sent again in place; one
    // released there leaves.
    double refreshed = 0;
    for (size_t c = 0; c < chunks; ++c) {
      Gap from = fromBoundary(fixes, c);
      if (from == Gap::Keep) {
        refreshed += stale[c];
        valid[c] += stale[c];
      } else if (from == Gap::Drop) {
        used -= valid[c] + stale[c];
        valid[c] = 0;
      } else {
        used -= stale[c];
      }
      stale[c] = 0;
    }
    // (Keyed to a quarter byte: partial evictions leave rounding dust
    // that would otherwise keep the state from ever repeating, and the
    // weaker bound for no exact period would be taken.)
    std::vector<double> key = valid;
    for (double &bytes : key)
      bytes = std::round(bytes * 4) / 4;
    auto [it, fresh] = seen.emplace(std::move(key), round);
    if (!fresh) {
      // Periodic from round it->second: the average over the period.
      double sum = 0;
      for (int r = it->second; r < round; ++r)
        sum += traffic[r];
      // Over several iterations, its last may split no gap and still end
      // with chunks it did not start with, which a plan of one iteration
      // cannot: split the first such chunk's place at the end.
      if (split && split->chunk < 0 && round - it->second > 1)
        for (size_t c = 0; c < chunks; ++c)
          if (std::abs(valid[c] - lastStart[c]) > 0.5 && readCount[c] > 0 &&
              toBoundary(fixes, c) == Gap::Free) {
            *split = {static_cast<int>(c), readCount[c] - 1,
                      static_cast<double>(p.chunkBytes[c]) / 2};
            break;
          }
      return sum / (round - it->second);
    }
    if (split)
      *split = {};
    lastStart = valid;
    ++rounds;
    traffic.push_back(refreshed +
                      bytesIteration(
                          p, reads, budget, valid, stale, used,
                          [&](int v, int step) -> Need {
                            double d = next.after(v, step);
                            return {d, step + d >= static_cast<double>(n)};
                          },
                          fixes, split));
    if (std::isinf(traffic.back()))
      return traffic.back();
  }
  // No exact period (rounding in partial evictions): any plan that
  // repeats with traffic T per iteration, started from an empty device,
  // would move at most budget + K T over K iterations, and the byte rule
  // moves the least: T >= (its K-iteration traffic - budget) / K.
  double sum = 0;
  for (double t : traffic)
    sum += t;
  return std::max(0.0, (sum - budget) / traffic.size());
}

/// What wholeChunkLowerBound spends at most: rounds of Belady's rule on
/// bytes, counted in steps times chunks (4e8: half a second to a second
/// here, the victim scans uncounted), and nodes expanded (small problems
/// reach it first; 4096 left 22 of 20,000 random ones of 12 chunks up to
/// 5.5% below the exhaustive bound over carried sets this replaced). The
/// 38-chunk MoE of place-memory-parallel.test needs 3185 nodes, 3.2e8;
/// placement computes it for the winner only.
constexpr double kWholeChunkWork = 4e8;
constexpr int kWholeChunkNodes = 65536;

/// A lower bound on the bytes per iteration of plans of one iteration
/// (ChunkProblem::singleIteration), which hold chunks whole: between two
/// reads, such a plan keeps a chunk on the device throughout or fetches it
/// whole again, while the byte rule may keep part of it (a 131 MB
/// embedding in a 160 MB budget stays mostly resident while others stream
/// past). Branch and bound over those gaps (Gap), best first: a node fixes
/// some gaps and is priced by the byte rule under its fixes (a lower bound
/// on every plan obeying them), plus the end reads its end leaves apart;
/// its children fix the gap its byte plan splits most or, where none is,
/// whether a chunk with end reads is on the device at the end. A node
/// with neither is a plan of whole chunks, and the first popped is the
/// least. Past the search's budget, the least node not yet expanded
/// bounds every plan.
double wholeChunkLowerBound(const ChunkProblem &p,
                            const std::vector<std::vector<int>> &reads,
                            const NextUse &next, double budget,
                            const std::vector<double> &endReads,
                            const std::vector<int> &released) {
  const size_t chunks = p.chunkBytes.size();
  std::vector<int> gaps = readCounts(reads, chunks); // then one more
  for (int &g : gaps)
    g += g > 0;
  using Fix = std::tuple<int, int, Gap>;
  struct Node {
    std::vector<Fix> fixes;
    SplitGap split;
  };
  std::vector<Node> nodes;
  std::priority_queue<std::pair<double, size_t>,
                      std::vector<std::pair<double, size_t>>, std::greater<>>
      open;
  double work = 0;
  auto price = [&](std::vector<Fix> fixes) {
    GapFixes table(chunks);
    for (size_t c = 0; c < chunks; ++c)
      table[c].assign(gaps[c], Gap::Free);
    for (auto [c, g, fix] : fixes)
      table[c][g] = fix;
    Node node{std::move(fixes), {}};
    int rounds = 0;
    double bytes =
        steadyBytes(p, reads, next, budget, table, &node.split, rounds);
    work += static_cast<double>(rounds) * reads.size() * chunks;
    if (std::isinf(bytes))
      return;
    bytes += endReadsUncarried(p, endReads, budget, table);
    // Where no gap is split, whether a chunk is there for the end reads.
    if (node.split.chunk < 0)
      for (size_t c = 0; c < chunks; ++c)
        if (gaps[c] > 0 && toBoundary(table, c) == Gap::Free &&
            endReadOf(endReads, c) > node.split.partial)
          node.split = {static_cast<int>(c), gaps[c] - 2,
                        endReadOf(endReads, c)};
    open.push({bytes, nodes.size()});
    nodes.push_back(std::move(node));
  };
  // Released after its last read: not on the device at the end, nor held
  // from the boundary.
  std::vector<Fix> root;
  for (int c : released)
    if (c >= 0 && static_cast<size_t>(c) < chunks && gaps[c] > 0) {
      root.emplace_back(c, gaps[c] - 2, Gap::Drop);
      root.emplace_back(c, gaps[c] - 1, Gap::Drop);
    }
  price(std::move(root));
  for (int expanded = 0; !open.empty(); ++expanded) {
    auto [bound, k] = open.top();
    const SplitGap split = nodes[k].split;
    if (split.chunk < 0 || expanded == kWholeChunkNodes ||
        work > kWholeChunkWork)
      return bound;
    open.pop();
    // The gap up to the end is first split on whether the chunk is there,
    // then (there) on whether it is kept since its last read.
    bool toEnd = split.gap == gaps[split.chunk] - 2;
    bool atEnd = toEnd && llvm::any_of(nodes[k].fixes, [&](const Fix &f) {
                   return f == Fix{split.chunk, split.gap, Gap::AtEnd};
                 });
    std::pair<Gap, Gap> children = {Gap::Keep, Gap::Drop};
    if (toEnd)
      children = atEnd ? std::pair{Gap::Keep, Gap::Refetch}
                       : std::pair{Gap::AtEnd, Gap::Drop};
    for (Gap fix : {children.first, children.second}) {
      std::vector<Fix> fixes = nodes[k].fixes;
      fixes.emplace_back(split.chunk, split.gap, fix);
      // Not on the device at the end: not held from the boundary either.
      if (fix == Gap::Drop && toEnd)
        fixes.emplace_back(split.chunk, split.gap + 1, Gap::Drop);
      price(std::move(fixes));
    }
  }
  // (No node fits: without `released` the root always does.)
  return std::numeric_limits<double>::infinity();
}

} // namespace

double loom::memory::fetchLowerBound(const ChunkProblem &p,
                                     const std::vector<double> &endReads,
                                     const std::vector<int> &released) {
  std::vector<std::vector<int>> reads = distinctReads(p);
  if (llvm::Error e = validate(p, reads)) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  NextUse next(reads, p.chunkBytes.size());
  const double budget = wholeChunkBudget(p.chunkBytes, p.budgetBytes);
  int rounds = 0;
  // The end reads are apart from the fetches, so their bounds add.
  double anyPeriod = steadyBytes(p, reads, next, budget, {}, nullptr, rounds) +
                     endReadsUncarried(p, endReads, budget);
  if (!p.singleIteration)
    return anyPeriod;
  return std::max(anyPeriod, wholeChunkLowerBound(p, reads, next, budget,
                                                  endReads, released));
}

/// `problem` with only the chunks of `members`, renumbered, every step
/// reading its chunks among those it read; `endReads` follows them.
static ChunkProblem restrictedTo(const ChunkProblem &problem,
                                 llvm::ArrayRef<int> members,
                                 const std::vector<double> &endReads,
                                 std::vector<double> &restrictedEndReads,
                                 const std::vector<int> &released,
                                 std::vector<int> &restrictedReleased) {
  ChunkProblem part = problem;
  std::vector<int> index(problem.chunkBytes.size(), -1);
  part.chunkBytes.clear();
  part.staleBytes.clear();
  part.transferSeconds.clear();
  restrictedEndReads.clear();
  for (int c : members) {
    index[c] = static_cast<int>(part.chunkBytes.size());
    part.chunkBytes.push_back(problem.chunkBytes[c]);
    part.staleBytes.push_back(staleBytesOf(problem, c));
    restrictedEndReads.push_back(endReadOf(endReads, c));
  }
  for (Step &step : part.steps) {
    std::vector<int> reads;
    for (int c : step.reads)
      if (index[c] >= 0)
        reads.push_back(index[c]);
    step.reads = std::move(reads);
  }
  restrictedReleased.clear();
  for (int c : released)
    if (c >= 0 && static_cast<size_t>(c) < index.size() && index[c] >= 0)
      restrictedReleased.push_back(index[c]);
  return part;
}

double loom::memory::sharedFetchLowerBound(const ChunkProblem &problem,
                                           const std::vector<double> &shares,
                                           const std::vector<double> &endReads,
                                           const std::vector<int> &released) {
  if (llvm::Error e = validate(problem, distinctReads(problem))) {
    llvm::consumeError(std::move(e));
    return 0; // (as fetchLowerBound: no bound for a malformed problem)
  }
  auto shareOf = [&](size_t c) { return c < shares.size() ? shares[c] : 1.0; };
  // Groups by share, in 1/64ths; each weighs its bytes by its least share.
  std::map<long, std::vector<int>> groups;
  for (size_t c = 0; c < problem.chunkBytes.size(); ++c)
    groups[std::lround(shareOf(c) * 64)].push_back(static_cast<int>(c));
  std::vector<double> weight;
  for (auto &[bucket, members] : groups) {
    double least = 1;
    for (int c : members)
      least = std::min(least, shareOf(c));
    weight.push_back(least);
  }
  const double whole = fetchLowerBound(problem, endReads, released);
  double bound = weight.empty() ? 0 : weight.front() * whole;
  if (groups.size() < 2)
    return bound;
  std::vector<double> partEndReads;
  std::vector<int> partReleased;
  // Each group alone, in the same budget: a plan's fetches of one group are
  // a plan for that group alone.
  double byGroup = 0;
  std::vector<double> groupBound;
  for (auto [g, entry] : llvm::enumerate(groups)) {
    ChunkProblem part = restrictedTo(problem, entry.second, endReads,
                                     partEndReads, released, partReleased);
    groupBound.push_back(fetchLowerBound(part, partEndReads, partReleased));
    byGroup += weight[g] * groupBound.back();
  }
  // By prefixes of the heaviest groups: with weights w1 > w2 > ... > wk
  // (w(k+1) = 0), the weighted bytes of any plan are the sum over i of
  // (wi - w(i+1)) times what it fetches of the first i groups, and those
  // fetches are a plan for the first i groups alone. Unlike the groups
  // alone, this charges the lighter groups for the room the heavier ones
  // take (the MoE's experts beside its dense layers).
  double byPrefix = 0;
  std::vector<int> prefix;
  const size_t k = groups.size();
  auto heaviest = groups.rbegin();
  for (size_t i = 0; i < k; ++i, ++heaviest) {
    prefix.insert(prefix.end(), heaviest->second.begin(),
                  heaviest->second.end());
    const double wi = weight[k - 1 - i],
                 next = i + 1 < k ? weight[k - 2 - i] : 0;
    if (!(wi > next))
      continue;
    // (The heaviest group alone, and all of them, are bounded above.)
    double fetched =
        i + 1 == k ? whole
        : i == 0   ? groupBound.back()
                   : [&] {
                     ChunkProblem part =
                         restrictedTo(problem, prefix, endReads, partEndReads,
                                        released, partReleased);
                     return fetchLowerBound(part, partEndReads, partReleased);
                   }();
    byPrefix += (wi - next) * fetched;
  }
  // (byPrefix's last term is `bound`, the others are not negative.)
  return std::max(byGroup, byPrefix);
}

std::vector<int>
loom::memory::groupIntoChunks(const std::vector<int64_t> &tensorBytes,
                              int64_t chunkBytes,
                              std::vector<int64_t> &chunkSizes) {
  std::vector<int> chunkOf;
  chunkSizes.clear();
  for (int64_t bytes : tensorBytes) {
    if (chunkSizes.empty() || chunkSizes.back() + bytes > chunkBytes)
      chunkSizes.push_back(0);
    chunkSizes.back() += bytes;
    chunkOf.push_back(static_cast<int>(chunkSizes.size()) - 1);
  }
  return chunkOf;
}

int loom::memory::issueStep(const ChunkPlan &plan, const Fetch &f) {
  int step = 0;
  while (step < f.forStep && static_cast<size_t>(step) < plan.stepEnds.size() &&
         plan.stepEnds[step] <= f.start * (1 + 1e-12))
    ++step;
  return step;
}
