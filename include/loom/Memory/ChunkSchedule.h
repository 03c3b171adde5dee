//===- ChunkSchedule.h - static movement of parameter chunks ----*- C++ -*-===//
//
// The core of memory placement (docs/memory-placement.md): given the static
// step sequence of one device (each step's compute time and the parameter
// chunks it reads) and a device budget for chunks, decide when each chunk is
// fetched from host memory and when it is dropped, and replay that plan
// event by event against the link and the budget.
//
// Fetch order follows the steps; room is made by evicting the resident chunk
// whose next use is furthest away (Belady's rule, exact for equal chunks, and
// possible here because the whole schedule is known before it runs). A fetch
// starts as soon as the host-to-device link is free and the chunks it evicts
// have finished their last use before it, so transfers overlap compute as
// far as memory allows. Parameters on the host are the master copy: dropping
// a chunk moves nothing. Plain C++ on LLVMSupport, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_CHUNKSCHEDULE_H
#define LOOM_MEMORY_CHUNKSCHEDULE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::memory {

/// One step of a device's static schedule: compute that needs `reads`
/// (chunk ids) on the device from its start to its end.
struct Step {
  std::string name;
  double seconds = 0;
  std::vector<int> reads;
  /// Offloaded activations this step is the first to read, fetched back
  /// from the host over the same link: issued after the step's own chunk
  /// fetches and no earlier than the previous step's start (two staging
  /// buffers, as the estimator's activation offload), done before the
  /// step starts.
  double reloadBytes = 0;
};

/// The problem: chunk sizes, the step sequence of one iteration (it repeats,
/// so the plan is for the steady state), the device budget for chunks and
/// the host-to-device bandwidth.
struct ChunkProblem {
  std::vector<int64_t> chunkBytes;
  std::vector<Step> steps;
  double budgetBytes = 0;
  double hostToDevice = 0; // bytes/s
  double linkLatency = 0;  // seconds per transfer
  /// Per chunk (empty: none), the bytes the host rewrites between
  /// iterations (trainable parameters whose optimizer step runs there). A
  /// chunk wholly rewritten is worthless across the boundary, so when its
  /// next use is past it, it is evicted first.
  std::vector<double> staleBytes;
  /// Training: the host rewrites its copies at each iteration boundary, so
  /// no fetch for an iteration may start before that iteration does.
  bool fetchWithinIteration = false;
  /// The plan must repeat every iteration (period one): the program holds
  /// one iteration, which a runtime runs again as written. Where Belady's
  /// rule cycles through several, some chunks are kept on the device
  /// throughout and the rest streamed (the fastest such plan).
  bool singleIteration = false;
  /// Per chunk (empty: the link alone), the seconds one fetch of it takes.
  /// Streaming ZeRO-3 shards over data-parallel replicas, a fetch uploads
  /// the device's shard and all-gathers the chunk, which one bandwidth
  /// cannot say; the link is still one resource, busy for that long.
  std::vector<double> transferSeconds;
};

/// How long `bytes` take over the host link: its latency plus the bytes at
/// `hostToDevice`.
double linkSeconds(const ChunkProblem &problem, double bytes);

/// How long one fetch of `chunk` holds the link: its entry in
/// `transferSeconds`, or linkSeconds of its bytes.
double fetchSeconds(const ChunkProblem &problem, int chunk);

/// A fetch of `chunk` for step `forStep`, evicting `evicts` to make room.
struct Fetch {
  int chunk = 0;
  int forStep = 0;
  std::vector<int> evicts;
  double start = 0, end = 0; // seconds from the iteration's start
};

/// The activations fetched back for step `forStep` (laid end to end, as
/// a Fetch's), on the link from `start` to `end`.
struct Reload {
  int forStep = 0;
  double start = 0, end = 0;
};

/// The steady state: `iterations` consecutive iterations (usually 1; the
/// rule's state can also cycle through several) that start and end with the
/// same chunks resident, so they repeat. Fetches index the steps of those
/// iterations laid end to end (step k of iteration j is j * steps + k);
/// times are from the first one's start, the per-iteration figures are
/// averages over the period.
struct ChunkPlan {
  int iterations = 1;
  std::vector<int> residentAtStart;
  std::vector<Fetch> fetches; // in issue order
  std::vector<Reload> reloads; // in issue order (Step::reloadBytes)
  double iterationSeconds = 0; // compute plus stalls
  double computeSeconds = 0;
  double stallSeconds = 0;     // compute waiting for a fetch
  double bytesFetched = 0;     // host -> device per iteration
  double peakBytes = 0;        // chunks on the device, at most budgetBytes
  /// When each step of the period ends (seconds from its start; the
  /// period's steps laid end to end, as in `fetches`).
  std::vector<double> stepEnds;
  /// A plan of one iteration may release chunks after their last read
  /// (lastReadStep), so that the next iteration starts with
  /// `residentAtStart` alone: where the host rewrites a chunk at the
  /// boundary, carrying it means uploading that again before the next
  /// iteration, while fetching it overlaps that iteration's compute.
  std::vector<int> dropped;
};

/// The last step of an iteration of `problem` that reads `chunk` (-1:
/// none). A dropped chunk is released after it.
int lastReadStep(const ChunkProblem &problem, int chunk);

/// The step before which `f` is issued: after the last step (of the
/// period, laid end to end) that ends before the fetch starts, and at most
/// its own. The chunks it evicts are released there, so the IR's movement
/// ops (Movement.h) and the static memory plan both free their bytes at
/// this step.
int issueStep(const ChunkPlan &plan, const Fetch &f);

/// `p` with its steps repeated `iterations` times (a plan's period).
ChunkProblem unrolled(const ChunkProblem &p, int iterations);

/// Plans the steady state. Errors: a step whose chunks alone exceed the
/// budget (names the step and the shortfall), a chunk id out of range, a
/// non-positive bandwidth while something must move.
llvm::Expected<ChunkPlan> planChunks(const ChunkProblem &problem);

/// What a plan costs its caller per iteration, at least the plan's own
/// `iterationSeconds` (the caller adds what the plan's residency implies
/// beyond the link and the steps, such as refreshing carried chunks after
/// an update off the device).
using PlanPrice = llvm::function_ref<double(const ChunkPlan &)>;

/// `plan` (planChunks', of one iteration), or a plan that carries fewer
/// chunks across the boundary and that `price` finds cheaper than `toBeat`
/// (`plan`'s price, or less: a rival's), the cheapest such (fewer bytes on
/// ties): for `problem`s with `singleIteration` whose host rewrites chunks
/// (`staleBytes`). Such a plan keeps the first j chunks (in the order
/// Belady's cycling plans pin them) on the device throughout, and the
/// chunks the last step reads across the boundary, and drops the others
/// after their last read (ChunkPlan::dropped); j takes every value where
/// there are at most 64 (the price is not unimodal in j), else a grid of
/// about 4 values, then half the grid step either side of the best, a
/// quarter, and so on. A plan whose own iteration takes as long as the
/// cheapest price found so far (a bound on its price) is not priced. (It
/// is searched even where `plan`'s own iteration already takes `toBeat`:
/// carrying fewer mostly adds fetches, but a plan pinning other chunks can
/// iterate faster than Belady's, in 641 of 20,000 random problems of the
/// review by up to 10%.)
ChunkPlan carryFewer(const ChunkProblem &problem, ChunkPlan plan, double toBeat,
                     PlanPrice price);

/// Replays `plan` event by event and reports the first violation: a step
/// starting with a chunk it reads absent, a fetch of a present chunk or an
/// eviction of an absent or in-use one, or the device holding more than the
/// budget at any moment, or (with fetchWithinIteration) a fetch starting
/// before its iteration; two transfers on the link at once (fetches and
/// reloads), a step starting before its reload has ended, a reload issued
/// before the previous step starts, or a step's reload missing; a chunk
/// dropped that is not on the device at the end, carried as well, read by
/// no step or by the last one, or dropped by a plan of several iterations.
/// Also recomputes the timeline and checks it matches the plan's.
/// Independent of planChunks' bookkeeping.
llvm::Error simulateChunks(const ChunkProblem &problem, const ChunkPlan &plan);

/// An upload into a chunk's device copy of bytes the host's update rewrote
/// (the refresh of a chunk carried into the next iteration), on the same
/// link as the plan's fetches.
struct Refresh {
  int chunk = 0;
  double bytes = 0;  // of the chunk's stale bytes it brings up to date
  int afterStep = 0; // the last step reading those bytes
  double start = 0, end = 0;
};

/// Times of a plan of one iteration (with steps) moved onto a timeline
/// whose steps start at `stepStarts`, each lasting what it does in the
/// plan, stalls included (the update pipeline's, where gradient staging
/// may hold a step back): a time moves with the first step whose interval
/// holds it (`at`), so a transfer spanning a held-back step widens.
class PlanOnTimeline {
public:
  PlanOnTimeline(const ChunkPlan &plan, const std::vector<double> &stepStarts)
      : plan(plan), stepStarts(stepStarts) {}
  double at(double planTime) const;
  double stepEnd(size_t step) const;

private:
  double planStart(size_t step) const;
  const ChunkPlan &plan;
  const std::vector<double> &stepStarts;
};

/// Replays the refresh of `plan` (of one iteration) on the iteration as the
/// update pipeline ran it: `stepStarts`, when each step starts in seconds
/// from the first step's start, each lasting what it does in the plan (its
/// stalls included), and `nextStart`, when the next iteration's first step
/// starts; the plan's fetches and reloads move with the steps around them
/// (widened where a step is held back). Reports the first violation: a
/// refresh overlapping a fetch, a reload or another refresh on the link,
/// starting before its `afterStep` has ended or before its chunk's last
/// fetch of the iteration has arrived, ending after the next iteration
/// starts, or of a chunk not carried into the next iteration (released or
/// not on the device); a chunk carried with fewer (or more) of its stale
/// bytes refreshed than the host rewrote; steps overlapping in the given
/// timeline. Independent of the update pipeline's bookkeeping.
/// `otherUploads`: other transfers on the link in the timeline's time (a
/// split's device update reloading kept weights), checked the same way.
llvm::Error simulateRefresh(
    const ChunkProblem &problem, const ChunkPlan &plan,
    const std::vector<Refresh> &refreshes,
    const std::vector<double> &stepStarts, double nextStart,
    const std::vector<std::pair<double, double>> &otherUploads = {});

/// The chunks on the device at the start of each iteration of `plan`'s
/// period (the first is `residentAtStart`). Training rewrites their
/// trainable bytes on the host at every one of these boundaries.
std::vector<std::vector<int>> residentAtIterationStarts(const ChunkProblem &problem,
                                                        const ChunkPlan &plan);

/// Per chunk, whether `plan` has it on the device at every iteration start
/// of its period (so at the end of every iteration).
std::vector<bool> onDeviceAtEveryStart(const ChunkProblem &problem,
                                       const ChunkPlan &plan);

/// A lower bound on the average host-to-device bytes per iteration of any
/// repeating plan: Belady's rule on bytes rather than chunks (a chunk plan is
/// also a byte plan, and for equal pages the rule moves the least), in its
/// steady state, under the most bytes of whole chunks the budget holds (all
/// a chunk plan can use). With equal chunks and no stale bytes, it is
/// exactly what planChunks moves. With stale bytes, each iteration starts
/// with at most the rest of each chunk valid on the device, and the bound
/// counts re-sending them. With `singleIteration`, a bound on plans of one
/// iteration that hold chunks whole, which may move more than the byte rule
/// (it keeps part of a chunk where a plan must fetch all of it again) or a
/// cycling plan: a branch and bound, best first, over whether each chunk is
/// kept between two reads, on the device at the iteration's end and kept
/// from there to its first read, each node priced by the byte rule under
/// what it fixed. Searched to the end (within 65536 nodes and about a
/// second), it is the fewest bytes of any such plan: some way of holding
/// whole chunks that fits the budget at every step moves exactly that (link
/// timing aside; the way may hold a chunk at the iteration's end and
/// release it at the boundary without refreshing it, which a ChunkPlan
/// cannot say, so the plans placement makes may not reach it). Stopped
/// early, the least node left open.
///
/// `endReads[c]` (empty: none): bytes of chunk c that work after the
/// iteration's last step reads (a split's device update of its 32-bit
/// weights), brought up the link apart where the chunk is not on the device
/// when the iteration ends. The bound counts them too: at least what the
/// end's whole chunks cannot hold (the fractional knapsack of the end reads
/// in the budget), and with `singleIteration` the search fixes whether each
/// chunk with end reads is there.
///
/// `released` (plans of one iteration): chunks the plans bounded release
/// after their last read (ChunkPlan::dropped), so not on the device at the
/// iteration's end: the search starts with that fixed, and bounds only
/// such plans.
double fetchLowerBound(const ChunkProblem &problem,
                       const std::vector<double> &endReads = {},
                       const std::vector<int> &released = {});

/// The same bound where a fetch of chunk c moves `shares[c]` of its bytes
/// (streamed in ZeRO-3 shards, a device uploads its shard; shares differ
/// where weights are split over different numbers of replicas, as MoE
/// experts are). Chunks of about the same share (to 1/64) form a group,
/// weighed by its smallest share; a plan's fetches of any set of groups
/// are a plan for those groups alone in the same budget. The bound is the
/// largest of: fetchLowerBound scaled by the smallest share; the sum of
/// each group's own bound times its weight; and, with the weights w1 > w2
/// > ... > wk sorted (w(k+1) = 0), the sum over i of (wi - w(i+1)) times
/// the bound of the i heaviest groups together, which also charges the
/// lighter groups for the room the heavier take. `endReads` as for
/// fetchLowerBound, in whole bytes (scaled by the share as fetches are);
/// `released` as for fetchLowerBound.
double sharedFetchLowerBound(const ChunkProblem &problem,
                             const std::vector<double> &shares,
                             const std::vector<double> &endReads = {},
                             const std::vector<int> &released = {});

/// Groups `tensorBytes` (in first-use order) into chunks of at most
/// `chunkBytes` (a tensor larger than that is a chunk alone), returning each
/// tensor's chunk id and filling `chunkSizes`.
std::vector<int> groupIntoChunks(const std::vector<int64_t> &tensorBytes,
                                 int64_t chunkBytes,
                                 std::vector<int64_t> &chunkSizes);

} // namespace loom::memory

#endif // LOOM_MEMORY_CHUNKSCHEDULE_H
