//===- Search.cpp - the sharding and pipeline strategy search ------------===//
//
// The search, in the order it runs (docs/strategy-search.md has the detail):
//  1. Fold repeated blocks (Fold.h): one representative copy per run stands
//     for all copies; its costs count once per copy, and the edge from a
//     copy's output to the next copy's input becomes a self-edge of the
//     representative (every copy takes the same strategies, as in TAP).
//  2. For every grid (device count = non-pipeline axes x pipeline, every
//     order onto the topology): enumerate each op's strategies from its
//     iteration space, price them and every edge's resharding, and pick one
//     strategy per op with the exact solver (level=thorough) or the greedy
//     one (level=fast); if the result cannot fit, again under a memory cap
//     (Lagrangian).
//  3. Per solution: group ops into units (a block copy, or one op), place
//     stage boundaries by cost (minimise the slowest stage, with per-stage
//     memory limits: bisection over the bottleneck with a greedy check,
//     which is exact for contiguous stages), and price every schedule, ZeRO
//     stage and recomputation mode analytically.
//  4. Re-price the best candidates with the estimator (estimateModule) on
//     annotated copies of the module, choose, and annotate the module.
//
//===----------------------------------------------------------------------===//

#include "loom/Plan/Search.h"
#include "loom/Plan/FusedProjections.h"

#include "Space.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/ShardValues.h"
#include "loom/Autodiff/Differentiate.h"
#include "loom/Cost/Collectives.h"
#include "loom/Cost/Pipeline.h"
#include "loom/Memory/Movement.h"
#include "loom/Memory/Placement.h"
#include "loom/Plan/Fold.h"
#include "loom/Plan/StagePartition.h"
#include "loom/Plan/StrategyGraph.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::search;
using ::loom::PipelineSchedule;
using ::loom::TensorLayout;
using namespace ::loom::plan;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Adds the time until it goes out of scope to `total`.
class PhaseTimer {
public:
  explicit PhaseTimer(double &total) : total(total), start(Clock::now()) {}
  ~PhaseTimer() { total += secondsSince(start); }

private:
  double &total;
  Clock::time_point start;
};

/// place-memory=true places plans whose peak without gradients, optimizer
/// state and (when they may go to the host) kept activations is within this
/// factor of device memory, in the order of the least step each can have
/// placed (the search's, or the host link's time for offloaded
/// activations) and up to kModelsAgreeWithin past the fastest placed step,
/// until kMaxPlacedPlans fit or kMaxPlacementTries were tried.
constexpr double kPlacementMargin = 1.1;
constexpr double kModelsAgreeWithin = 1.05;
constexpr size_t kMaxPlacedPlans = 16, kMaxPlacementTries = 32;
/// The value of the `loom.recompute` marks a plan writes for its selective
/// recomputation (a user's marks are unit attributes).
constexpr llvm::StringLiteral kPlannedRecompute = "selective";

/// A node of the strategy graph: a function input, a weight or a compute op
/// (the representative of its block, when folded).
struct Node {
  enum Kind { Arg, Weight, Op } kind;
  unsigned index;    // argument number, weight position, op position
  double copies = 1; // how many copies of the block it stands for
  std::vector<TensorLayout> layouts; // Arg and Weight strategies
};

/// An edge: the consumer reads result `result` of the producer as operand
/// `operand`, `weight` times per micro-batch-or-step (copies).
struct GraphEdge {
  unsigned producer, consumer, result, operand;
  double weight;
  bool perStep; // a parameter's gradient: synchronised once per step
};

/// What a contiguous piece of the program (a block copy or an op) costs under
/// a chosen solution, per device.
struct Unit {
  double forward = 0, backward = 0; // per micro-batch, comm included
  double backwardComm = 0;          // the backward's resharding, per micro-batch
  double recomputable = 0;          // forward of ops with a backward
  /// Per micro-batch under recompute=none / selective (regionModel): the
  /// activation bytes kept, the forward re-run in the backward, and the
  /// most bytes one recomputed region re-creates at once.
  double kept[2] = {0, 0};
  double recomputed[2] = {0, 0};
  double rerunWorkingSet[2] = {0, 0};
  /// Under full recomputation, as the estimator checkpoints: the results at
  /// the unit's inner cut points (where one activation carries everything
  /// onward; its end is `boundaryOut`), and the most bytes one segment
  /// between cut points keeps, which its re-run re-creates at once.
  double cutBytes = 0, segmentKept = 0;

  /// The backward's extra forward, the bytes kept per micro-batch, and what
  /// re-running a segment or region holds at once, under `mode`.
  double recomputeSeconds(RecomputeMode mode) const {
    return mode == RecomputeMode::Full ? recomputable : recomputed[regionModel(mode)];
  }
  double keptBytes(RecomputeMode mode) const { return kept[regionModel(mode)]; }
  double rerunBytes(RecomputeMode mode) const {
    return mode == RecomputeMode::Full ? segmentKept : rerunWorkingSet[regionModel(mode)];
  }
  double weightBytes = 0, paramBytes = 0, params = 0;
  /// What ZeRO leaves of the parameters per device: each over its own
  /// replicas, the devices its gradient is all-reduced over (as the
  /// estimator's WeightFacts and memory placement count them).
  double shardedParamBytes = 0, shardedParams = 0;
  /// Per step: the parameter gradients' synchronisation as all-reduces
  /// (no ZeRO) and as ZeRO runs it (reduce-scatters plus all-gathers).
  double gradSync = 0, gradSyncZero = 0;
  double footprint = 0;             // largest op working set
  double commBytes = 0;             // largest collective's buffer
  double boundaryOut = 0;           // activation bytes crossing its end
  double sendOut = 0;               // seconds to send them to the next stage
  /// What a stage ending after this unit adds per micro-batch: split
  /// reductions made up to here and read after it end in all-reduces where,
  /// with their reader in their stage, they reduce-scatter (the estimator's
  /// rule). The forward's share, and what recomputation re-runs of it (as
  /// `recomputable` and `recomputed`).
  double cutForward = 0, cutRecomputable = 0, cutRecomputed[2] = {0, 0};

  /// The seconds a stage ending after this unit adds per micro-batch, its
  /// boundary's send aside: the forward's and, training, the backward's.
  std::pair<double, double> cutSeconds(RecomputeMode mode, bool training) const {
    double rerun = mode == RecomputeMode::Full ? cutRecomputable : cutRecomputed[regionModel(mode)];
    return {cutForward, training ? rerun : 0.0};
  }

  /// Every field, for comparing units exactly.
  auto fields() const {
    return std::tie(forward, backward, backwardComm, recomputable, kept[0], kept[1],
                    recomputed[0], recomputed[1], rerunWorkingSet[0], rerunWorkingSet[1],
                    cutBytes, segmentKept, weightBytes, paramBytes, params, shardedParamBytes,
                    shardedParams, gradSync, gradSyncZero, footprint, commBytes, boundaryOut,
                    sendOut, cutForward, cutRecomputable, cutRecomputed[0], cutRecomputed[1]);
  }
};

/// One pipeline stage's memory per device as its units are added: static
/// state, the activations one micro-batch keeps (or, under full
/// recomputation, the block boundaries if smaller), the largest region one
/// recomputation re-creates, the largest temporary working set, and the
/// largest collective's buffer (the estimator's `comm` column; its pipeline
/// send buffers are left out: with them the search overcounted the
/// pipelined plan of test/Plan/plan-recompute.test, which it matches to the
/// byte without). The stage partitioner and the step evaluation both count
/// with it.
struct StageMemory {
  double staticBytes = 0, kept = 0, boundaries = 0, rerun = 0, temp = 0, comm = 0;
  /// Adds `copies` units equal to `u` (sums grow with the copies, the
  /// largest-of terms do not).
  void add(const Unit &u, double unitStaticBytes, RecomputeMode mode, double copies = 1) {
    staticBytes += copies * unitStaticBytes;
    kept += copies * u.keptBytes(mode);
    boundaries += copies * (u.boundaryOut + u.cutBytes);
    rerun = std::max(rerun, u.rerunBytes(mode));
    temp = std::max(temp, u.footprint);
    comm = std::max(comm, u.commBytes);
  }
  /// Everything but the temporaries, with `held` micro-batches in flight.
  double bytes(int64_t held, RecomputeMode mode, bool training) const {
    return staticBytes + keptBytes(held, mode, training) + (training ? rerun : 0);
  }
  /// The activations `held` micro-batches keep for their backward (what
  /// activation offload can move to host memory).
  double keptBytes(int64_t held, RecomputeMode mode, bool training) const {
    if (!training)
      return 0;
    double perMicro = mode == RecomputeMode::Full ? std::min(boundaries, kept) : kept;
    return static_cast<double>(held) * perMicro;
  }
};

/// A weight read in several units: each stage among them holds it and,
/// trainable, its gradient, state and update (a tied embedding on the first
/// and last pipeline devices), as the estimator counts it. `held` has its
/// weight fields, which its first reader's unit counts already.
struct SharedWeight {
  std::vector<unsigned> readers; // units, the first reader's first
  Unit held;
};

/// A solution's units at one micro-batch size (the IR's batch rescaled).
struct BatchOption {
  BatchOption(int64_t irBatch, std::vector<Unit> units,
              std::vector<SharedWeight> shared)
      : irBatch(irBatch), units(std::move(units)), shared(std::move(shared)) {
    for (size_t u = 0; u < this->units.size(); ++u)
      if (u == 0 || this->units[u].fields() != this->units[u - 1].fields())
        runStart.push_back(u);
    runStart.push_back(this->units.size());
  }
  int64_t irBatch;      // the batch of one micro-batch over all replicas
  std::vector<Unit> units;
  std::vector<SharedWeight> shared;
  /// Runs of equal consecutive units (the copies of a folded block cost
  /// alike): run r is units [runStart[r], runStart[r + 1]). The stage
  /// partitioner and the step evaluation take a run's units together, so
  /// their cost follows the number of runs, not the depth.
  std::vector<size_t> runStart;
  size_t numRuns() const { return runStart.size() - 1; }
  /// Calls fn(unit, stage, copies, endsStage) for each stretch of equal
  /// units that `stageOfUnit` puts in one stage, in program order; `unit`
  /// is the stretch's first, `endsStage` whether a later stage follows it.
  template <typename Fn>
  void forEachStretch(const std::vector<unsigned> &stageOfUnit, Fn fn) const {
    for (size_t r = 0; r < numRuns(); ++r)
      for (size_t u = runStart[r], end = runStart[r + 1]; u < end;) {
        size_t next = u + 1;
        while (next < end && stageOfUnit[next] == stageOfUnit[u])
          ++next;
        fn(units[u], stageOfUnit[u], static_cast<double>(next - u),
           next < units.size() && stageOfUnit[next] != stageOfUnit[u]);
        u = next;
      }
  }
};

/// One solution of the strategy graph for a grid.
struct Solved {
  unsigned grid;
  std::vector<unsigned> choice;
  std::vector<BatchOption> batches;  // the IR's micro-batch size first
  SmallVector<std::string, 3> axisNames;
  int64_t dataParallel = 1;
  /// Solved under the device memory cap (Lagrangian), trading time for
  /// memory, after the unconstrained solution of the grid did not fit.
  bool memoryCapped = false;
  /// Solved again with the gradient synchronisation charged at the share an
  /// earlier solution of its grid left exposed (resolveHiddenSync).
  bool syncReweighted = false;
};

/// How the strategy graph charges the per-step terms. By default as without
/// ZeRO and with nothing hidden; resolveHiddenSync prices them as a
/// solution's best configuration runs them.
struct StepTerms {
  double syncWeight = 1;     // share of gradient synchronisation charged
  bool zeroSync = false;     // synchronised as ZeRO does (reduce-scatter + all-gather)
  double optimizerSplit = 1; // ZeRO's split of the optimizer step
};

/// A complete candidate: a solution, stages and the step's settings.
struct Config {
  unsigned solved;
  unsigned batch = 0;           // index into the solution's batches
  int64_t microBatches = 1;
  PipelineSchedule schedule;
  int64_t virtualStages = 1;
  int64_t kfkbGroup = 1; // k of kFkB (1 for every other schedule)
  int zero = 0;
  RecomputeMode recompute = RecomputeMode::None;
  std::vector<unsigned> stageOfUnit;
  double stepTime = 0, peakMemory = 0;
  /// The busiest device's peak with its gradients and optimizer state off
  /// it: what memory placement could reach at best keeping the activations.
  double peakWithoutTrainingState = 0;
  /// The same with the kept activations offloaded too (where placement may),
  /// and the least step that takes: the share of every micro-batch's kept
  /// bytes that must leave the device crosses the host link each way.
  double peakWithActivationsOffloaded = 0, offloadStepBound = 0;
  /// Of the gradient synchronisation, the share the backward does not hide
  /// (over all pipeline devices).
  double exposedSyncShare = 1;
  bool fits = false;
  /// stepTime (and offloadStepBound) is a lower bound, not the simulated
  /// step: the pipeline was not simulated because the bound already lost
  /// (Planner::refine simulates it when a ranking needs it).
  bool stepIsBound = false;
};

/// Choices the input already makes, which the search keeps: a shard.grid
/// fixes the grid's axes, a shard.shard the layout of a value (or, with
/// annotate_for_users, of one op's operand), and loom.stage an op's stage.
struct Pins {
  std::optional<SmallVector<int64_t, 3>> gridAxes; // non-pipeline axes
  std::optional<int64_t> gridPP;                   // the marked pipeline axis
  std::string gridName;
  /// The pinned grid's own axis names (`loom.axis_names`), non-pipeline
  /// axes in order, then the pipeline axis's; empty when it has none. The
  /// plan keeps them; the search's role names (dp, tp, ...) still decide
  /// which axes are data parallel.
  SmallVector<std::string, 4> axisNames;
  DenseMap<Value, std::pair<TensorLayout, Location>> values;
  std::map<std::pair<Operation *, unsigned>, std::pair<TensorLayout, Location>> operands;
  DenseMap<Operation *, int64_t> stages; // compute ops only
  int64_t numStages = 0;                 // largest pinned stage + 1
  bool any() const {
    return gridAxes || !values.empty() || !operands.empty() || !stages.empty();
  }
};

/// Pins mapped onto strategy-graph nodes (representatives, when folded).
struct NodePin {
  unsigned index; // result or operand number
  TensorLayout layout;
  Location loc; // of the annotation
};
struct NodePins {
  SmallVector<NodePin, 1> results, operands;
};

class Planner {
public:
  Planner(ModuleOp module, const PlanOptions &options, PlanResult &result)
      : module(module), options(options), result(result) {}
  LogicalResult run();

private:
  friend class StageMemoryBudget;
  InFlightDiagnostic error() { return mlir::emitError(module.getLoc(), "loom-plan: "); }
  LogicalResult setUp();
  /// Reads the input's own annotations into `pins` and removes them (the
  /// plan re-writes them on its grid).
  LogicalResult readPins();
  /// Maps `pins` onto nodes and units; errors on conflicting pins.
  LogicalResult mapPins();
  /// Whether strategy `s` of node `n` honours the node's pins.
  bool honoursPins(unsigned n, unsigned s) const;
  /// The error when no plan honours the pins: names the first pinned op,
  /// weight or input (in program order) that no strategy honours on any
  /// searched grid, else says the pins only conflict together.
  LogicalResult explainUnhonouredPins();
  void enumerateGrids();
  void buildGraphNodes();
  unsigned nodeOfValue(Value v) const;
  /// The graph node of an op or weight: its block representative's.
  unsigned repNode(Operation *op) const;
  /// `func` in `target` (the module itself, or a clone of it).
  func::FuncOp plannedFunction(ModuleOp target) const;
  void solveGrid(unsigned g);
  /// Records solution `s` of grid `gi` (solved on `g`) and prices its
  /// configurations, unless the grid already has that choice.
  void addSolution(unsigned gi, const StrategyGraph &g, Solution s,
                   bool memoryCapped, bool syncReweighted);
  /// The solutions in order of their best configuration (fitting ones first,
  /// by step; then by peak memory), the first `limit` of them.
  std::vector<unsigned>
  solutionsByBestConfig(size_t limit = std::numeric_limits<size_t>::max());
  /// The names a solution's non-pipeline axes are shown and written with:
  /// the pinned grid's own, else the search's role names.
  SmallVector<std::string, 3> shownAxisNames(const Solved &sv) const {
    if (pins.axisNames.empty())
      return sv.axisNames;
    return SmallVector<std::string, 3>(pins.axisNames.begin(), pins.axisNames.end() - 1);
  }
  /// Solution `si`'s best configuration: its fastest that fits, else the
  /// one needing least memory (as solutionsByBestConfig ranks them).
  const Config *bestConfigOf(unsigned si);
  /// Of these configurations, the best as bestConfigKey ranks them, bounded
  /// ones simulated until the best is exact (null when there are none).
  Config *bestAmong(ArrayRef<unsigned> indices);
  /// Solves the best grids again with the gradient synchronisation their
  /// solution hides discounted in the objective.
  void resolveHiddenSync();
  /// Makes the op strategies and node layouts those of grid `g` (they are
  /// enumerated per grid; solutions index into them).
  void activateGrid(unsigned g);
  StrategyGraph buildStrategyGraph(const SearchGrid &grid, const StepTerms &terms = {});
  /// Parameters, gradients and optimizer state a unit holds per device.
  double staticBytes(const Unit &u, const Config &cfg) const;
  /// Of those, the gradients and optimizer state (what memory placement can
  /// move off the device).
  double trainingStateBytes(const Unit &u, const Config &cfg) const;
  /// Bytes of a parameter-derived value's gradient as the step
  /// synchronises it, per byte of the value: a 16-bit parameter's float32
  /// sum where the step on `grid` accumulates over micro-batches (at the
  /// model's batch scale) or a pipeline (gradientBytesPerParameter).
  double gradientWidening(const ValueModel &vm, const SearchGrid &grid) const {
    bool accumulates =
        static_cast<double>(microBatches) > model->batchScale || grid.pp > 1;
    return gradientBytesPerParameter(vm.elementBytes, accumulates) /
           vm.elementBytes;
  }
  static double dpDivisor(int64_t dataParallel) {
    return dataParallel > 1 ? static_cast<double>(dataParallel) : 1;
  }
  std::vector<Unit> evaluateUnits(const SearchGrid &grid,
                                  const std::vector<unsigned> &choice,
                                  SmallVector<std::string, 3> &names,
                                  int64_t &dp,
                                  std::vector<SharedWeight> &shared);
  /// Prices the configurations of solution `solvedIndex` at its micro-batch
  /// sizes from `firstBatch` on.
  void priceConfigs(unsigned solvedIndex, size_t firstBatch);
  /// Adds the other micro-batch sizes to the best solutions and prices them.
  void priceOtherBatchSizes();
  /// Splits the units into `stages` contiguous stages so that the slowest
  /// stage (its sends included) is as fast as it can be, each stage within
  /// its memory when `memoryAware`; false when no split does.
  bool partitionStages(const BatchOption &option, int64_t stages, const Config &cfg,
                       const SearchGrid &grid, bool memoryAware,
                       std::vector<unsigned> &stageOfUnit);
  /// Whether every stage of a split fits its share of the device memory.
  bool stagesFitMemory(const BatchOption &option, int64_t stages, const Config &cfg,
                       const SearchGrid &grid, const std::vector<unsigned> &stageOfUnit);
  bool stageFits(const StageMemory &mem, int64_t held, const Config &cfg,
                 int64_t chunks) const;
  /// Micro-batches each of `stages` stages (over p pipeline devices) holds.
  std::vector<int64_t> heldPerStage(const Config &cfg, int64_t stages, int64_t p);
  /// Prices `cfg`: memory, synchronisation and the step, the pipeline
  /// simulated unless a lower bound on its step is above `simulateBelow`
  /// (then the step is that bound and cfg.stepIsBound is set).
  void evaluateConfig(Config &cfg,
                      double simulateBelow = std::numeric_limits<double>::infinity());
  /// Simulates a configuration priced by a bound (no-op otherwise).
  void refine(Config &cfg);
  /// The fastest fitting configuration's exact step so far: configurations
  /// bounded above it (by more than the model's resolution) are not
  /// simulated while pricing.
  double fastestFitting = std::numeric_limits<double>::infinity();
  /// Simulates every bounded configuration a ranking of the final choice
  /// could read (the fastest, the finalists, plans placement may try), so
  /// that bounds never change the plan or the report.
  void settleRanking();
  /// check-exact: `s`, proven the cheapest plan of `g` (under `cap`), against
  /// brute force; a difference is kept in exactnessFailure.
  void checkAgainstBruteForce(const StrategyGraph &g, const Solution &s, unsigned gi,
                              double cap = ::loom::plan::kInfeasible);
  std::string exactnessFailure;
  /// When each of the p pipeline devices ends its last task under `cfg`'s
  /// schedule with these stage costs (null: the simulator refused them).
  const std::vector<double> *pipelineFinish(const Config &cfg, int64_t p,
                                            const std::vector<::loom::StageCost> &costs);
  /// Pipelines already simulated: ZeRO stages below 3 change a plan's
  /// synchronisation and memory, not its stages' costs, so many
  /// configurations share a run.
  std::map<std::tuple<int, int64_t, int64_t, int64_t, std::vector<double>>,
           std::optional<std::vector<double>>>
      pipelineCache;
  /// The task orders of `cfg`'s schedule on p pipeline devices, built once
  /// per (schedule, m, p, v, k) (null: the simulator refuses that shape).
  const ::loom::PipelineOrders *scheduleOrders(const Config &cfg, int64_t p);
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>,
           std::optional<::loom::PipelineOrders>>
      ordersCache;
  double sendSeconds(double bytes, const SearchGrid &grid) const;
  /// Per pipeline device and chunk, the micro-batches it holds at its worst
  /// moment under `cfg`'s schedule (p devices).
  const std::vector<std::vector<int64_t>> &inFlightCounts(const Config &cfg, int64_t p);
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>,
           std::vector<std::vector<int64_t>>>
      inFlightCache;
  PlanCandidate toCandidate(const Config &cfg) const;
  void annotate(ModuleOp target, const Config &cfg);
  /// Memory placement of `cfg`'s plan under its own ZeRO stage and
  /// activation policy (place-memory=true).
  PlacementOptions placementOptions(const Config &cfg) const;
  /// The fastest distinct plans over device memory (by the search's step,
  /// below `fasterThan`) that placement might make fit, each with the
  /// placement that does or why none does.
  std::vector<std::pair<unsigned, PlanCandidate>> placeOverMemory(double fasterThan);
  LogicalResult chooseAndAnnotate();

  ModuleOp module;
  const PlanOptions &options;
  PlanResult &result;
  ::loom::ClusterSpec cluster;
  std::optional<::loom::Precision> forcedPrecision;
  func::FuncOp func;
  std::unique_ptr<ProgramModel> model;
  FoldedFunction folded;
  int64_t irBatch = 1, microBatches = 1, devices = 1;
  /// Micro-batch sizes (IR batches) the search may choose, the IR's first;
  /// each rebatches the IR cleanly.
  SmallVector<int64_t, 5> batchCandidates;
  /// Rebatches `target` (a copy of the planned function) from the IR's
  /// batch to `batch`: types of batch-carrying values and slice sizes.
  LogicalResult rebatch(func::FuncOp target, int64_t batch);
  /// Whether solution `choice` divides evenly at micro-batch size `batch`.
  bool dividesAt(const std::vector<unsigned> &choice, int64_t batch);

  // Folding: every op and weight's representative, and the copies it covers.
  DenseMap<Operation *, Operation *> representative;
  std::vector<Node> nodes;
  DenseMap<Operation *, unsigned> nodeOfOp; // representative op/weight -> node
  std::vector<GraphEdge> edges;
  // Units: the unit of every compute op (program order).
  std::vector<unsigned> unitOfOp; // by model op index
  size_t numUnits = 0;
  std::vector<std::string> unitLabels;

  /// The program flattened once for evaluateUnits, which runs per solution
  /// and micro-batch size: per op its node, every non-constant operand use,
  /// every activation that outlives its unit, every weight's first unit.
  struct ProgramIndex {
    struct Use {
      unsigned unit, pnode, result, cnode, operand, value;
      int weight; // the weight the value is read from (through casts), or -1
      bool sameUnit; // an op of the consumer's unit produces it
    };
    struct Crossing {
      unsigned op, result, lastUnit, value;
    };
    std::vector<unsigned> nodeOfOp, nodeOfWeight;
    std::vector<Use> uses;
    std::vector<Crossing> crossings;
    /// Uses that are an op result's one reader in another unit (a split
    /// reduction there may end in a reduce-scatter): the use, and the
    /// producer's unit.
    std::vector<std::pair<unsigned, unsigned>> crossReaders;
    std::vector<int> weightUnit; // -1: no compute user
    /// Per weight read in several units: those units, the first first.
    std::vector<std::vector<unsigned>> weightReaders;
    /// Per op: whether its result alone carries the program onward, inside
    /// its unit (the estimator's checkpoints under full recomputation).
    std::vector<bool> innerCut;
    /// Per op: whether a result of it is read in a later unit.
    std::vector<bool> crosses;
    /// Per unit: the first unit that costs what it does under every
    /// solution (the same nodes, uses, cut points, recomputed regions and
    /// weights, in the same order; itself when none before). Copies of a
    /// folded block are priced once and copied, so pricing a solution
    /// follows the number of unique blocks, not the depth.
    std::vector<unsigned> unitTwin;
  } program;
  /// Fills program.unitTwin (after the rest of the index).
  void findUnitTwins();
  void indexProgram();

  Pins pins;
  DenseMap<unsigned, NodePins> nodePins;
  std::vector<int64_t> unitStagePin; // -1: free

  std::vector<SearchGrid> grids;
  int activeGrid = -1;
  std::vector<Solved> solved;
  std::vector<Config> configs;
};

} // namespace

//===----------------------------------------------------------------------===//
// Set-up: cluster, function, batch, folding
//===----------------------------------------------------------------------===//

LogicalResult Planner::setUp() {
  auto c = ::loom::loadCluster(options.cluster);
  if (!c)
    return error() << llvm::toString(c.takeError());
  cluster = std::move(*c);
  result.clusterName = options.cluster;
  if (options.precision != "ir") {
    forcedPrecision = ::loom::parsePrecision(options.precision);
    if (!forcedPrecision)
      return error() << "unknown precision '" << options.precision
                     << "' (ir, fp32, tf32, bf16, fp16, fp8)";
  }
  devices = options.devices ? options.devices : cluster.numDevices();
  if (devices < 1 || devices > cluster.numDevices())
    return error() << "devices=" << devices << " but the cluster has "
                   << cluster.numDevices();

  SmallVector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  if (funcs.empty())
    return error() << "no function with a body to plan";
  func = funcs.front();
  if (funcs.size() > 1) {
    auto main = llvm::find_if(funcs, [](func::FuncOp f) { return f.getSymName() == "main"; });
    if (main == funcs.end())
      return error() << "several functions and none is named 'main'";
    func = *main;
  }
  if (func->hasAttr(kDifferentiatedAttr))
    return error() << "'" << func.getSymName() << "' " << kHoldsBackwardMessage;
  if (failed(readPins()))
    return failure();

  if (func.getNumArguments() == 0)
    return error() << "the function has no inputs to take the batch from";
  auto input = dyn_cast<RankedTensorType>(func.getArgument(0).getType());
  if (!input || input.getRank() == 0 || input.isDynamicDim(0) || input.getDimSize(0) < 1)
    return error() << "the first input must be a tensor with a static batch "
                      "dimension (re-import with --input-shape)";
  irBatch = input.getDimSize(0);
  int64_t global = options.globalBatch ? options.globalBatch : irBatch;
  if (global % irBatch != 0)
    return error() << "global-batch=" << global << " is not a multiple of the IR's batch "
                   << irBatch << " (the samples of one micro-batch over all replicas)";
  microBatches = global / irBatch;

  model = std::make_unique<ProgramModel>(func, cluster, forcedPrecision,
                                         options.training);
  result.ops = model->ops.size();
  if (model->ops.empty())
    return error() << "the function has no loom ops to plan";

  // Micro-batch sizes: the IR's, halved or doubled up to twice, where the
  // global batch divides and the rebatched IR verifies.
  batchCandidates.push_back(irBatch);
  for (int64_t b : {irBatch / 2, irBatch * 2, irBatch / 4, irBatch * 4}) {
    if (b < 1 || b == irBatch || global % b != 0 ||
        (b < irBatch ? irBatch % b : b % irBatch) != 0)
      continue;
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (succeeded(rebatch(plannedFunction(*copy), b)) && succeeded(mlir::verify(*copy)))
      batchCandidates.push_back(b);
  }

  // The repeated blocks are found either way: they are the pipeline's
  // units (stages cut between layers, not inside them) in both modes; only
  // with fold=true do copies also share one set of strategies.
  auto t0 = Clock::now();
  folded = foldRepeatedBlocks(func);
  result.foldSeconds = secondsSince(t0);
  result.foldedOps = options.fold ? folded.foldedOpCount() : model->ops.size();
  return success();
}

//===----------------------------------------------------------------------===//
// Pins: choices the input already makes
//===----------------------------------------------------------------------===//

using ::loom::SplitDims;
using ::loom::trimmedDims;
using ::loom::searchReshardable;

/// Layouts compare without trailing unsplit dimensions.
static bool sameLayout(const TensorLayout &a, const TensorLayout &b) {
  return trimmedDims(a.splitAxes) == trimmedDims(b.splitAxes) &&
         a.partialAxes == b.partialAxes;
}

static std::string layoutText(const TensorLayout &l) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  for (auto [d, axes] : llvm::enumerate(l.splitAxes)) {
    os << (d ? ", " : "") << "[";
    llvm::interleaveComma(axes, os);
    os << "]";
  }
  os << "]";
  return text;
}

LogicalResult Planner::readPins() {
  // The grid: its axes stay, the search maps them onto the topology.
  auto gridOps = llvm::to_vector(module.getOps<shard::GridOp>());
  if (gridOps.size() > 1)
    return error() << "the module has " << gridOps.size()
                   << " shard.grid ops; a pinned plan uses one grid";
  std::optional<int64_t> pipelineAxis;
  // User grid axis -> search axis: the pipeline axis and size-1 axes map to
  // -1 (the plan puts the pipeline axis last).
  SmallVector<int, 4> searchAxisOf;
  if (!gridOps.empty()) {
    shard::GridOp g = gridOps.front();
    pins.gridName = g.getSymName().str();
    if (auto a = g->getAttrOfType<IntegerAttr>("loom.pipeline_axis"))
      pipelineAxis = a.getInt();
    SmallVector<int64_t, 3> axes;
    for (auto [i, d] : llvm::enumerate(g.getShape())) {
      if (ShapedType::isDynamic(d) || d < 1)
        return g.emitError("loom-plan: pinned grid @")
               << pins.gridName << " has axis " << i << " of size "
               << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d))
               << "; every axis must have a static positive size";
      if (pipelineAxis && static_cast<int64_t>(i) == *pipelineAxis) {
        pins.gridPP = d;
        searchAxisOf.push_back(-1);
      } else if (d == 1) {
        searchAxisOf.push_back(-1); // splits nothing: dropped
      } else {
        searchAxisOf.push_back(axes.size());
        axes.push_back(d);
      }
    }
    if (axes.size() > 3)
      return g.emitError("loom-plan: pinned grid @")
             << pins.gridName << " has " << axes.size()
             << " non-pipeline axes; the search handles at most 3";
    pins.gridAxes = axes;
    if (auto names = g->getAttrOfType<ArrayAttr>("loom.axis_names")) {
      if (names.size() != g.getShape().size() ||
          !llvm::all_of(names, [](Attribute n) { return isa<StringAttr>(n); }))
        return g.emitError("loom-plan: pinned grid @")
               << pins.gridName << ": loom.axis_names must name each of its "
               << g.getShape().size() << " axes with a string";
      std::string pipelineName;
      for (auto [i, n] : llvm::enumerate(names)) {
        if (pipelineAxis && static_cast<int64_t>(i) == *pipelineAxis)
          pipelineName = cast<StringAttr>(n).str();
        else if (searchAxisOf[i] >= 0)
          pins.axisNames.push_back(cast<StringAttr>(n).str());
      }
      pins.axisNames.push_back(pipelineName.empty() ? "pp" : pipelineName);
    }
  }

  SmallVector<shard::ShardOp> shardOps;
  func.walk([&](shard::ShardOp op) { shardOps.push_back(op); });
  if (!shardOps.empty() && gridOps.empty())
    return shardOps.front().emitError("loom-plan: shard.shard without a shard.grid");
  for (shard::ShardOp op : shardOps) {
    auto sharding = op.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!sharding || sharding.getGrid() != pins.gridName)
      return op.emitError("loom-plan: a pinned sharding must be a shard.sharding "
                          "on grid @")
             << pins.gridName;
    if (!sharding.getStaticHaloSizes().empty() ||
        !sharding.getStaticShardedDimsOffsets().empty() ||
        !sharding.getDynamicHaloSizes().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty())
      return op.emitError("loom-plan: pinned shardings with halos or explicit "
                          "offsets are not supported");
    TensorLayout layout;
    for (shard::GridAxesAttr axes : sharding.getSplitAxes().getAxes()) {
      ::loom::GridAxes dim;
      for (int16_t a : axes.asArrayRef()) {
        if (a < 0 || static_cast<size_t>(a) >= searchAxisOf.size())
          return op.emitError("loom-plan: a pinned sharding names grid axis ")
                 << a << ", which grid @" << pins.gridName << " does not have";
        if (pipelineAxis && a == *pipelineAxis && pins.gridPP != 1)
          return op.emitError("loom-plan: a pinned sharding splits a tensor over "
                              "the pipeline axis ")
                 << a;
        if (searchAxisOf[a] >= 0)
          dim.push_back(searchAxisOf[a]);
      }
      layout.splitAxes.push_back(dim);
    }
    Value src = lookThroughShards(op.getSrc());
    if (op.getAnnotateForUsers()) {
      for (OpOperand &use : op.getResult().getUses())
        if (!isa<shard::ShardOp>(use.getOwner()))
          pins.operands.insert_or_assign({use.getOwner(), use.getOperandNumber()},
                                         std::make_pair(layout, op.getLoc()));
    } else {
      auto [it, inserted] = pins.values.try_emplace(src, layout, op.getLoc());
      if (!inserted && !sameLayout(it->second.first, layout))
        return op.emitError("loom-plan: value pinned twice with different "
                            "shardings: ")
               << layoutText(it->second.first) << " and " << layoutText(layout);
    }
  }
  // Remove the annotations (users read the source again), then the grid.
  for (shard::ShardOp op : llvm::reverse(shardOps)) {
    op.getResult().replaceAllUsesWith(op.getSrc());
    op.erase();
  }
  SmallVector<Operation *> shardings;
  func.walk([&](shard::ShardingOp op) { shardings.push_back(op); });
  for (Operation *op : shardings)
    if (op->use_empty())
      op->erase();
  for (shard::GridOp g : gridOps)
    g.erase();

  // Stages: of compute ops; a weight's stage follows its users.
  WalkResult walk = func.walk([&](Operation *op) {
    Attribute attr = op->getAttr(kStageAttr);
    if (!attr)
      return WalkResult::advance();
    auto stage = dyn_cast<IntegerAttr>(attr);
    if (!stage || stage.getInt() < 0) {
      op->emitError("loom-plan: loom.stage must be a non-negative integer");
      return WalkResult::interrupt();
    }
    if (!isa<WeightOp, ConstantOp>(op)) {
      pins.stages[op] = stage.getInt();
      pins.numStages = std::max(pins.numStages, stage.getInt() + 1);
    }
    op->removeAttr(kStageAttr);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult Planner::mapPins() {
  auto addPin = [&](SmallVector<NodePin, 1> &list, unsigned index,
                    const TensorLayout &l, Location loc) -> LogicalResult {
    for (const NodePin &have : list)
      if (have.index == index) {
        if (sameLayout(have.layout, l))
          return success();
        return mlir::emitError(loc, "loom-plan: this pinned sharding ")
               << layoutText(l) << " conflicts with " << layoutText(have.layout)
               << " pinned on another copy of the same repeated block (copies "
                  "share one plan; plan with fold=false to pin copies apart)";
      }
    list.push_back({index, l, loc});
    return success();
  };
  for (auto &[v, pin] : pins.values) {
    unsigned node = nodeOfValue(v);
    unsigned r = isa<OpResult>(v) ? cast<OpResult>(v).getResultNumber() : 0;
    if (failed(addPin(nodePins[node].results, r, pin.first, pin.second)))
      return failure();
  }
  for (auto &[use, pin] : pins.operands) {
    if (!model->opIndex.count(use.first))
      continue; // not a compute op (a return): nothing to choose
    if (failed(addPin(nodePins[repNode(use.first)].operands, use.second,
                      pin.first, pin.second)))
      return failure();
  }
  // Stages per unit; they must agree within a unit and not decrease.
  unitStagePin.assign(numUnits, -1);
  Operation *last = nullptr;
  int64_t lastStage = -1;
  for (auto [i, o] : llvm::enumerate(model->ops)) {
    auto it = pins.stages.find(o.op);
    if (it == pins.stages.end())
      continue;
    int64_t &unit = unitStagePin[unitOfOp[i]];
    if (unit >= 0 && unit != it->second)
      return o.op->emitError("loom-plan: pinned to stage ")
             << it->second << " inside a repeated block copy pinned to stage "
             << unit << "; stages cut between block copies";
    if (it->second < lastStage)
      return o.op->emitError("loom-plan: pinned to stage ")
             << it->second << " after an op pinned to stage " << lastStage
             << " (at " << last->getLoc() << "); stages follow program order";
    unit = it->second;
    last = o.op;
    lastStage = it->second;
  }
  return success();
}

bool Planner::honoursPins(unsigned n, unsigned s) const {
  auto it = nodePins.find(n);
  if (it == nodePins.end())
    return true;
  const Node &node = nodes[n];
  for (const NodePin &pin : it->second.results) {
    TensorLayout have = node.kind == Node::Op
                            ? model->resultLayout(model->ops[node.index],
                                                  model->ops[node.index].strategies[s],
                                                  pin.index)
                            : node.layouts[s];
    if (!sameLayout(have, pin.layout))
      return false;
  }
  for (const NodePin &pin : it->second.operands) {
    const OpModel &o = model->ops[node.index];
    if (!sameLayout(model->operandLayout(o, o.strategies[s], pin.index), pin.layout))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Micro-batch sizes
//===----------------------------------------------------------------------===//

/// `size` (a batch-carrying extent at the IR's batch) at micro-batch `batch`.
static std::optional<int64_t> rescaled(int64_t size, int64_t from, int64_t to) {
  if ((size * to) % from != 0)
    return std::nullopt;
  return size * to / from;
}

LogicalResult Planner::rebatch(func::FuncOp target, int64_t batch) {
  if (batch == irBatch)
    return success();
  // The target is a copy of `func`: values correspond in walk order.
  SmallVector<Value> original, copy;
  llvm::append_range(original, func.getArguments());
  llvm::append_range(copy, target.getArguments());
  func.walk([&](Operation *op) { llvm::append_range(original, op->getResults()); });
  target.walk([&](Operation *op) { llvm::append_range(copy, op->getResults()); });
  if (original.size() != copy.size())
    return failure();
  for (auto [v, c] : llvm::zip(original, copy)) {
    auto it = model->valueIndex.find(v);
    if (it == model->valueIndex.end())
      continue;
    const ValueModel &vm = model->values[it->second];
    auto type = dyn_cast<RankedTensorType>(c.getType());
    if (vm.batchDim < 0 || !type)
      continue;
    SmallVector<int64_t> shape(type.getShape());
    auto size = rescaled(shape[vm.batchDim], irBatch, batch);
    if (!size)
      return failure();
    shape[vm.batchDim] = *size;
    c.setType(type.clone(shape));
    // A slice spells out the extents it keeps.
    if (auto slice = c.getDefiningOp<SliceOp>()) {
      SmallVector<int64_t> sizes(slice.getSizes());
      if (static_cast<size_t>(vm.batchDim) < sizes.size()) {
        auto kept = rescaled(sizes[vm.batchDim], irBatch, batch);
        if (!kept)
          return failure();
        sizes[vm.batchDim] = *kept;
        slice.setSizes(sizes);
      }
    }
  }
  auto results = target.getBody().back().getTerminator()->getOperandTypes();
  target.setFunctionType(FunctionType::get(target.getContext(),
                                           target.getBody().getArgumentTypes(),
                                           SmallVector<Type>(results)));
  return success();
}

bool Planner::dividesAt(const std::vector<unsigned> &choice, int64_t batch) {
  const SearchGrid &grid = grids[activeGrid];
  auto divides = [&](int64_t size, int64_t split) {
    auto scaled = rescaled(size, irBatch, batch);
    return scaled && *scaled % split == 0;
  };
  for (const Node &n : nodes) {
    unsigned s = choice[&n - nodes.data()];
    if (n.kind == Node::Op) {
      const OpModel &o = model->ops[n.index];
      if (o.batchLoop < 0)
        continue;
      int64_t split = 1;
      for (auto [a, loop] : llvm::enumerate(o.strategies[s]))
        if (loop == o.batchLoop)
          split *= grid.axes[a];
      if (!divides(o.loopSizes[o.batchLoop], split))
        return false;
    } else if (n.kind == Node::Arg) {
      const ValueModel &vm = model->valueOf(func.getArgument(n.index));
      if (vm.batchDim < 0 || static_cast<size_t>(vm.batchDim) >= n.layouts[s].splitAxes.size())
        continue;
      if (!divides(vm.shape[vm.batchDim], grid.size(n.layouts[s].splitAxes[vm.batchDim])))
        return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Grids
//===----------------------------------------------------------------------===//

void Planner::enumerateGrids() {
  SmallVector<int64_t> divisors;
  for (int64_t d = 1; d <= devices; ++d)
    if (devices % d == 0)
      divisors.push_back(d);
  int64_t perNode = cluster.devicesPerNode();
  // Ordered factorizations of n into factors > 1, at most `maxAxes` of them:
  // dp x tp x (sp or ep), each a grid axis. level=fast keeps two.
  const unsigned maxAxes = options.thorough ? 3 : 2;
  std::vector<SmallVector<int64_t, 3>> factorizations;
  std::function<void(int64_t, SmallVector<int64_t, 3> &)> factor =
      [&](int64_t n, SmallVector<int64_t, 3> &axes) {
        if (n == 1) {
          factorizations.push_back(axes);
          return;
        }
        if (axes.size() == maxAxes)
          return;
        for (int64_t d : divisors)
          if (d > 1 && n % d == 0) {
            axes.push_back(d);
            factor(n / d, axes);
            axes.pop_back();
          }
      };
  std::set<std::vector<int64_t>> seen;
  for (int64_t pp : divisors) {
    if (options.maxPP && pp > options.maxPP)
      continue;
    if (pins.gridPP && pp != *pins.gridPP)
      continue;
    if (pins.numStages && pins.numStages % pp != 0)
      continue;
    factorizations.clear();
    SmallVector<int64_t, 3> start;
    factor(devices / pp, start);
    for (const SmallVector<int64_t, 3> &axes : factorizations) {
      if (pins.gridAxes && axes != *pins.gridAxes)
        continue;
      unsigned n = axes.size();
      // level=fast: the inner axis stays inside a node (unless pinned).
      if (!options.thorough && !pins.gridAxes && n == 2 && axes[0] > perNode)
        continue;
      // A third axis splits the node (tp x sp or tp x ep inside it, the
      // outer axis across nodes): on a cluster the two inner axes fill one
      // node exactly. Three axes anywhere would multiply the grids (and
      // search time) ~5x for splits of the slow links no good plan makes.
      if (n == 3 && !pins.gridAxes &&
          (axes[0] * axes[1] > perNode ||
           (axes[0] * axes[1] < perNode && devices > perNode)))
        continue;
      // The pipeline axis may sit at any position of the device order.
      unsigned positions = pp > 1 ? n + 1 : 1;
      for (unsigned pos = 0; pos < positions; ++pos) {
        if (!options.thorough && !pins.gridAxes && pp > 1 && n == 2 && pos != 1)
          continue;
        if (n == 3 && !pins.gridAxes && pp > 1 && pos < 2)
          continue; // the pipeline axis does not split the node's two axes
        SearchGrid g;
        g.axes = axes;
        g.pp = pp;
        for (unsigned a = 0; a < n; ++a) {
          if (pp > 1 && a == pos)
            g.innerToOuter.push_back(n);
          g.innerToOuter.push_back(a);
        }
        if (pp > 1 && pos == n)
          g.innerToOuter.push_back(n);
        std::vector<int64_t> key(axes.begin(), axes.end());
        key.push_back(pp);
        for (unsigned i : g.innerToOuter)
          key.push_back(100000 + i);
        if (!seen.insert(key).second)
          continue;
        SmallVector<int64_t, 4> shape = g.irShape();
        if (shape.empty())
          shape.push_back(1);
        auto spans = ::loom::mapGridOntoCluster(cluster, shape, g.innerToOuter);
        if (!spans) {
          llvm::consumeError(spans.takeError());
          continue;
        }
        g.spans.assign(spans->begin(), spans->end());
        grids.push_back(std::move(g));
      }
    }
  }
  result.gridsConsidered = grids.size();
}

//===----------------------------------------------------------------------===//
// The strategy graph
//===----------------------------------------------------------------------===//

void Planner::buildGraphNodes() {
  // Representatives: op j of copy c stands for op j of copy 0.
  DenseMap<Operation *, double> copiesOf;
  for (const RepeatedBlock &b : options.fold ? folded.blocks : std::vector<RepeatedBlock>())
    for (unsigned c = 0; c < b.copies(); ++c) {
      for (auto [j, op] : llvm::enumerate(b.ops[c]))
        representative[op] = b.ops[0][j];
      for (auto [k, w] : llvm::enumerate(b.weights[c]))
        representative[w] = b.weights[0][k];
      if (c == 0) {
        for (Operation *op : b.ops[0])
          copiesOf[op] = b.copies();
        for (Operation *w : b.weights[0])
          copiesOf[w] = b.copies();
      }
    }
  auto repOf = [&](Operation *op) {
    auto it = representative.find(op);
    return it == representative.end() ? op : it->second;
  };
  auto copies = [&](Operation *op) {
    auto it = copiesOf.find(op);
    return it == copiesOf.end() ? 1.0 : it->second;
  };

  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    nodes.push_back({Node::Arg, i, 1, {}});
  for (auto [i, w] : llvm::enumerate(model->weights))
    if (repOf(w) == w) {
      nodeOfOp[w] = nodes.size();
      nodes.push_back({Node::Weight, static_cast<unsigned>(i), copies(w), {}});
    }
  for (auto [i, o] : llvm::enumerate(model->ops))
    if (repOf(o.op) == o.op) {
      nodeOfOp[o.op] = nodes.size();
      nodes.push_back({Node::Op, static_cast<unsigned>(i), copies(o.op), {}});
    }

  // Edges, from every representative consumer.
  for (const OpModel &o : model->ops) {
    if (repOf(o.op) != o.op)
      continue;
    unsigned consumer = nodeOfOp.lookup(o.op);
    double mult = copies(o.op);
    const RepeatedBlock *block = nullptr;
    if (auto it = folded.position.find(o.op); options.fold && it != folded.position.end())
      block = &folded.blocks[it->second.block];
    for (unsigned i = 0; i < o.op->getNumOperands(); ++i) {
      Value v = lookThroughShards(o.op->getOperand(i));
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<ConstantOp>(def))
        continue;
      const ValueModel &vm = model->valueOf(v);
      bool perStep = options.training && vm.needsGrad && vm.parameterDerived;
      auto addEdge = [&](Value from, double w) {
        unsigned producer = nodeOfValue(from);
        unsigned res = isa<OpResult>(from) ? cast<OpResult>(from).getResultNumber() : 0;
        edges.push_back({producer, consumer, res, i, w, perStep});
      };
      // A block's input: the chain from the previous copy, or shared.
      if (block && def && !llvm::is_contained(block->ops[0], def) &&
          !llvm::is_contained(block->weights[0], def)) {
        auto k = llvm::find(block->inputs[0], v);
        if (k != block->inputs[0].end()) {
          int from = block->chainedFrom[k - block->inputs[0].begin()];
          if (from >= 0 && block->copies() > 1) {
            addEdge(v, 1);
            addEdge(block->outputs[0][from], mult - 1);
            continue;
          }
        }
      }
      addEdge(v, mult); // inside the copy, or an input shared by every copy
    }
  }

  // Units: block copies and single ops, in program order.
  unitOfOp.assign(model->ops.size(), 0);
  DenseMap<std::pair<unsigned, unsigned>, unsigned> unitOfCopy;
  for (auto [i, o] : llvm::enumerate(model->ops)) {
    auto it = folded.position.find(o.op);
    if (it == folded.position.end()) {
      unitOfOp[i] = numUnits++;
      unitLabels.push_back(o.op->getName().getStringRef().str());
      continue;
    }
    auto key = std::make_pair(it->second.block, it->second.copy);
    auto [u, inserted] = unitOfCopy.try_emplace(key, numUnits);
    if (inserted) {
      ++numUnits;
      unitLabels.push_back(llvm::formatv("block {0} copy {1}", key.first, key.second));
    }
    unitOfOp[i] = u->second;
  }
}

unsigned Planner::nodeOfValue(Value v) const {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getArgNumber();
  return repNode(v.getDefiningOp());
}

unsigned Planner::repNode(Operation *op) const {
  auto it = representative.find(op);
  return nodeOfOp.lookup(it == representative.end() ? op : it->second);
}

func::FuncOp Planner::plannedFunction(ModuleOp target) const {
  if (target == module)
    return func;
  StringRef name = func::FuncOp(func).getSymName(); // (accessors are not const)
  for (auto candidate : target.getOps<func::FuncOp>())
    if (candidate.getSymName() == name)
      return candidate;
  return func::FuncOp();
}

/// The layout node `n` gives result `r` under strategy `s`.
static TensorLayout producedLayout(const ProgramModel &model, const Node &n,
                                   unsigned s, unsigned r) {
  if (n.kind != Node::Op)
    return n.layouts[s];
  const OpModel &o = model.ops[n.index];
  return model.resultLayout(o, o.strategies[s], r);
}

static size_t strategyCount(const ProgramModel &model, const Node &n) {
  return n.kind == Node::Op ? model.ops[n.index].strategies.size() : n.layouts.size();
}

LogicalResult Planner::explainUnhonouredPins() {
  SmallVector<unsigned> pinned;
  for (auto &entry : nodePins)
    pinned.push_back(entry.first);
  llvm::sort(pinned); // nodes are numbered in program order
  for (unsigned n : pinned) {
    bool honoured = false;
    for (unsigned g = 0; g < grids.size() && !honoured; ++g) {
      activateGrid(g);
      for (size_t s = 0, e = strategyCount(*model, nodes[n]); s < e && !honoured; ++s)
        honoured = honoursPins(n, s);
    }
    if (honoured)
      continue;
    // Reported at the first of its annotations, naming what it pins.
    const Node &node = nodes[n];
    const NodePins &np = nodePins[n];
    Location loc = np.results.empty() ? np.operands.front().loc : np.results.front().loc;
    InFlightDiagnostic diag = mlir::emitError(loc, "loom-plan: no strategy of ");
    if (node.kind == Node::Op)
      diag << model->ops[node.index].op->getName() << " at "
           << model->ops[node.index].op->getLoc();
    else if (node.kind == Node::Weight)
      diag << "weight at " << model->weights[node.index]->getLoc();
    else
      diag << "input #" << node.index;
    diag << " honours its pinned shardings on any grid (";
    llvm::interleaveComma(np.results, diag, [&](const NodePin &pin) {
      diag << "result " << pin.index << " " << layoutText(pin.layout);
    });
    if (!np.results.empty() && !np.operands.empty())
      diag << ", ";
    llvm::interleaveComma(np.operands, diag, [&](const NodePin &pin) {
      diag << "operand " << pin.index << " " << layoutText(pin.layout);
    });
    diag << "): a pinned layout may split a dimension the grid does not divide, "
            "list a dimension's axes out of order, or ask for a split the op "
            "cannot compute locally";
    return diag;
  }
  return error() << "no plan honours the pinned shardings on any grid: each "
                    "pin alone is possible, but together they need a "
                    "resharding the partitioner cannot do in one step, or "
                    "exceed the memory limit";
}

void Planner::activateGrid(unsigned g) {
  if (activeGrid == static_cast<int>(g))
    return;
  activeGrid = g;
  const SearchGrid &grid = grids[g];
  // Only the graph's ops (representatives, when folded) need strategies.
  SmallVector<bool> wanted(model->ops.size(), false);
  for (const Node &n : nodes)
    if (n.kind == Node::Op)
      wanted[n.index] = true;
  model->enumerateStrategies(grid, options.maxTP, wanted);
  for (Node &n : nodes) {
    if (n.kind == Node::Arg)
      n.layouts = tensorLayouts(model->valueOf(func.getArgument(n.index)).shape, grid);
    else if (n.kind == Node::Weight)
      n.layouts = tensorLayouts(
          model->valueOf(model->weights[n.index]->getResult(0)).shape, grid);
  }
}

StrategyGraph Planner::buildStrategyGraph(const SearchGrid &grid, const StepTerms &terms) {
  PhaseTimer timer(result.phases.graphs);
  const double pp = static_cast<double>(grid.pp);
  // Per-micro-batch costs are paid (m + pp - 1) times on the critical path
  // of a pipelined step (the bubble included); per-step costs once.
  const double M = static_cast<double>(microBatches) + pp - 1;
  const ::loom::DeviceSpec &dev = cluster.device;
  const double adamRate =
      dev.memoryBandwidth * dev.eff(::loom::OpClass::Elementwise).memory;
  StrategyGraph g;
  for (Node &n : nodes) {
    std::vector<double> cost, memory;
    if (n.kind == Node::Arg) {
      const ValueModel &vm = model->valueOf(func.getArgument(n.index));
      for (const TensorLayout &l : n.layouts) {
        cost.push_back(0);
        memory.push_back(vm.saved ? model->localBytes(vm, l, grid) : 0);
      }
    } else if (n.kind == Node::Weight) {
      Operation *w = model->weights[n.index];
      const ValueModel &vm = model->valueOf(w->getResult(0));
      bool trained = model->isParameter(w);
      double perByte = 1;
      if (trained)
        perByte = 1 + gradientWidening(vm, grid) +
                  adamStateBytesPerParameter(vm.elementBytes) / vm.elementBytes;
      for (const TensorLayout &l : n.layouts) {
        double local = model->localBytes(vm, l, grid);
        double params = local / vm.elementBytes;
        cost.push_back(trained ? n.copies * params / terms.optimizerSplit * 28.0 / adamRate
                               : 0);
        // Weights spread over the pipeline: per device about 1/pp of them.
        memory.push_back(n.copies * local * perByte / pp);
      }
    } else {
      const OpModel &o = model->ops[n.index];
      for (const Strategy &s : o.strategies) {
        StrategyCost c = model->strategyCost(o, s, grid);
        cost.push_back(n.copies * M * (c.forward + c.backward));
        memory.push_back(n.copies * c.keptBytes[0]);
      }
    }
    for (size_t k = 0; k < cost.size(); ++k)
      if (!honoursPins(&n - nodes.data(), k))
        cost[k] = kInfeasible;
    g.addNode(std::move(cost), std::move(memory));
  }

  // Edges: price distinct (from, to) layout pairs once, then expand. Many
  // edges of a grid carry tensors of one size between the same layouts
  // (the projections of a layer), so each (bytes, from, to) is priced once
  // per grid.
  DenseMap<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>, double> reshardPriced;
  auto reshardSeconds = [&](double bytes, const TensorLayout &from,
                            const TensorLayout &to, bool zeroSync) {
    auto key = std::make_tuple(llvm::bit_cast<uint64_t>(bytes), layoutKey(from),
                               layoutKey(to), uint64_t(zeroSync));
    auto [it, fresh] = reshardPriced.try_emplace(key, 0.0);
    if (fresh)
      it->second = model->reshardSeconds(bytes, from, to, grid, zeroSync);
    return it->second;
  };
  DenseMap<std::pair<uint64_t, uint64_t>, bool> reshardableSeen;
  auto reshardable = [&](const TensorLayout &from, const TensorLayout &to) {
    auto [it, fresh] =
        reshardableSeen.try_emplace({layoutKey(from), layoutKey(to)}, false);
    if (fresh)
      it->second = searchReshardable(from, to);
    return it->second;
  };
  for (const GraphEdge &e : edges) {
    const Node &pn = nodes[e.producer], &cn = nodes[e.consumer];
    const OpModel &co = model->ops[cn.index];
    Value v = lookThroughShards(co.op->getOperand(e.operand));
    const ValueModel &vm = model->valueOf(v);
    size_t np = strategyCount(*model, pn), nc = co.strategies.size();
    // A split reduction with one reader may end in a reduce-scatter
    // (reductionScatterDelta), which depends on the producer's reduction
    // axes as well as its layout. Stages are not known yet: it is priced
    // as if the reader were in the producer's stage, as it mostly is.
    const OpModel *reducer =
        pn.kind == Node::Op && vm.soleReader ? &model->ops[pn.index] : nullptr;
    // Distinct producer layouts; and, of a reducer's strategies with a
    // split reduction, distinct (layout, reduction axes).
    std::vector<unsigned> pIdx(np);
    std::vector<TensorLayout> pLayouts;
    DenseMap<uint64_t, unsigned> pSeen;
    std::vector<int> pReduction(np, -1);
    std::vector<unsigned> reductionStrategy;
    DenseMap<std::pair<uint64_t, uint64_t>, unsigned> reductionSeen;
    for (size_t s = 0; s < np; ++s) {
      TensorLayout l = producedLayout(*model, pn, s, e.result);
      uint64_t key = layoutKey(l);
      auto [it, inserted] = pSeen.try_emplace(key, pLayouts.size());
      if (inserted)
        pLayouts.push_back(l);
      pIdx[s] = it->second;
      uint64_t reductionMask = 0;
      if (reducer)
        for (int16_t a : model->reductionAxes(*reducer, reducer->strategies[s]))
          reductionMask |= uint64_t(1) << a;
      if (reductionMask) {
        auto [rt, fresh] =
            reductionSeen.try_emplace({key, reductionMask}, reductionStrategy.size());
        if (fresh)
          reductionStrategy.push_back(s);
        pReduction[s] = static_cast<int>(rt->second);
      }
    }
    // Distinct consumer (wanted layout, gradient layout) pairs.
    bool grad = options.training && vm.needsGrad;
    std::vector<unsigned> cIdx(nc);
    std::vector<std::pair<TensorLayout, TensorLayout>> cLayouts;
    DenseMap<std::pair<uint64_t, uint64_t>, unsigned> cSeen;
    for (size_t s = 0; s < nc; ++s) {
      TensorLayout want = model->operandLayout(co, co.strategies[s], e.operand);
      TensorLayout gradFrom = want;
      if (grad)
        gradFrom.partialAxes = model->gradientPartialAxes(co, co.strategies[s], e.operand);
      auto key = std::make_pair(layoutKey(want), layoutKey(gradFrom));
      auto [it, inserted] = cSeen.try_emplace(key, cLayouts.size());
      if (inserted)
        cLayouts.push_back({want, gradFrom});
      cIdx[s] = it->second;
    }
    std::vector<double> small(pLayouts.size() * cLayouts.size());
    for (size_t a = 0; a < pLayouts.size(); ++a)
      for (size_t b = 0; b < cLayouts.size(); ++b) {
        if (!reshardable(pLayouts[a], cLayouts[b].first)) {
          small[a * cLayouts.size() + b] = kInfeasible;
          continue;
        }
        double fwd = reshardSeconds(model->bytesOf(vm), pLayouts[a], cLayouts[b].first,
                                    /*zeroSync=*/false);
        double bwd = grad
                         ? reshardSeconds(
                               model->bytesOf(vm) *
                                   (e.perStep ? gradientWidening(vm, grid) : 1),
                               cLayouts[b].second, pLayouts[a],
                               e.perStep && terms.zeroSync)
                         : 0;
        small[a * cLayouts.size() + b] =
            e.weight * (e.perStep ? M * fwd + terms.syncWeight * bwd : M * (fwd + bwd));
      }
    std::vector<double> reductionDelta(reductionStrategy.size() * cLayouts.size());
    for (auto [r, s] : llvm::enumerate(reductionStrategy))
      for (size_t b = 0; b < cLayouts.size(); ++b)
        reductionDelta[r * cLayouts.size() + b] =
            e.weight * M *
            model->reductionScatterDelta(*reducer, reducer->strategies[s],
                                         cLayouts[b].first, grid);
    std::vector<double> cost(np * nc);
    for (size_t a = 0; a < np; ++a)
      for (size_t b = 0; b < nc; ++b)
        cost[a * nc + b] =
            small[pIdx[a] * cLayouts.size() + cIdx[b]] +
            (pReduction[a] < 0
                 ? 0.0
                 : reductionDelta[pReduction[a] * cLayouts.size() + cIdx[b]]);
    g.addEdge(e.producer, e.consumer, std::move(cost));
  }
  return g;
}

//===----------------------------------------------------------------------===//
// Units: what a solution costs piece by piece
//===----------------------------------------------------------------------===//

std::vector<Unit> Planner::evaluateUnits(const SearchGrid &grid,
                                         const std::vector<unsigned> &choice,
                                         SmallVector<std::string, 3> &names,
                                         int64_t &dp,
                                         std::vector<SharedWeight> &shared) {
  PhaseTimer timer(result.phases.units);
  std::vector<Unit> units(numUnits);
  // Axis roles, for names and data parallelism: an axis splitting the batch
  // loop of ops carrying most of the FLOPs is data-parallel (dp); one
  // splitting a weight is tensor-parallel (tp); anything else splits
  // activations along another dim (sp).
  dp = 1;
  SmallVector<double, 3> batchFlops(grid.axes.size(), 0), otherFlops(grid.axes.size(), 0);
  for (const Node &n : nodes) {
    if (n.kind != Node::Op)
      continue;
    const OpModel &o = model->ops[n.index];
    const Strategy &s = o.strategies[choice[&n - nodes.data()]];
    double f = n.copies * std::max(1.0, o.totalFlops);
    for (auto [a, loop] : llvm::enumerate(s))
      if (loop >= 0)
        (loop == o.batchLoop ? batchFlops : otherFlops)[a] += f;
  }
  // A data-parallel axis that also splits a parallel loop a contraction
  // shares between a weight and an activation (the expert loop of a batched
  // expert matmul) holds different experts on different replicas, GShard's
  // expert parallelism: ep, still a data axis for every other weight.
  SmallVector<bool, 3> splitsExperts(grid.axes.size(), false);
  for (const Node &n : nodes) {
    if (n.kind != Node::Op || model->ops[n.index].contractionFlops <= 0)
      continue;
    const OpModel &o = model->ops[n.index];
    const Strategy &s = o.strategies[choice[&n - nodes.data()]];
    for (auto [a, loop] : llvm::enumerate(s)) {
      if (loop < 0 || loop == o.batchLoop || o.reduction[loop])
        continue;
      bool inWeight = false, inActivation = false;
      for (unsigned i = 0; i < o.op->getNumOperands(); ++i) {
        if (!o.maps[i].isFunctionOfDim(loop))
          continue;
        const ValueModel &vm = model->valueOf(lookThroughShards(o.op->getOperand(i)));
        (vm.activation ? inActivation : inWeight) = true;
      }
      splitsExperts[a] = splitsExperts[a] || (inWeight && inActivation);
    }
  }
  // An axis that splits experts and the other ops' batch is ep however the
  // FLOPs weigh: the expert matmuls may outweigh the dense ops, whose weights
  // it still replicates as data parallelism does.
  SmallVector<int, 3> role(grid.axes.size(), 3); // 0 ep, 1 dp, 2 tp, 3 sp
  for (size_t a = 0; a < grid.axes.size(); ++a)
    if (batchFlops[a] > 0 && (batchFlops[a] >= otherFlops[a] || splitsExperts[a])) {
      role[a] = splitsExperts[a] ? 0 : 1;
      dp *= grid.axes[a];
    }
  for (const Node &n : nodes)
    if (n.kind == Node::Weight) {
      const TensorLayout &l = n.layouts[choice[&n - nodes.data()]];
      for (const auto &axes : l.splitAxes)
        for (int16_t a : axes)
          if (role[a] == 3)
            role[a] = 2;
    }
  names.clear();
  for (auto [a, r] : llvm::enumerate(role)) {
    const char *base = r == 0 ? "ep" : r == 1 ? "dp" : r == 2 ? "tp" : "sp";
    std::string name = base;
    if (llvm::count(role, r) > 1)
      name += std::to_string(a);
    names.push_back(name);
  }

  // Op costs, one per copy; copies of a folded block cost what their
  // representative does, so each node is priced once. Per recomputed region
  // (each copy's own): its re-created bytes and its last unit.
  std::map<int, std::pair<double, unsigned>> regionBytes[2];
  std::vector<std::optional<StrategyCost>> opCost(nodes.size());
  double segment = 0; // kept since the last cut point (full recomputation)
  // A unit with an earlier twin is copied from it below.
  auto priced = [&](unsigned u) { return program.unitTwin[u] == u; };
  for (auto [i, o] : llvm::enumerate(model->ops)) {
    if (!priced(unitOfOp[i]))
      continue;
    unsigned node = program.nodeOfOp[i];
    const OpModel &ro = model->ops[nodes[node].index];
    if (!opCost[node])
      opCost[node] = model->strategyCost(ro, ro.strategies[choice[node]], grid);
    const StrategyCost &c = *opCost[node];
    Unit &u = units[unitOfOp[i]];
    u.forward += c.forward;
    u.backward += c.backward;
    if (ro.hasBackward)
      u.recomputable += c.forward;
    // What the step returns this copy holds until its backward ends: kept
    // under every policy, and under full recomputation a checkpoint of its
    // own unless it is one already (a cut point, or crossing the unit's end).
    double held = 0;
    for (unsigned r = 0; r < o.op->getNumResults(); ++r)
      if (const ValueModel &vm = model->valueOf(o.op->getResult(r)); vm.held)
        held += model->localBytes(vm, model->resultLayout(ro, ro.strategies[choice[node]], r),
                                  grid);
    if (!program.innerCut[i] && !program.crosses[i])
      u.cutBytes += held;
    for (unsigned k = 0; k < 2; ++k) {
      u.kept[k] += c.keptBytes[k] + held;
      // The copy's own region (one that is returned is never re-run): its
      // forward runs again in the backward, re-creating what it saves.
      if (o.region[k] >= 0) {
        if (o.hasBackward)
          u.recomputed[k] += c.forward;
        auto &[bytes, unit] = regionBytes[k][o.region[k]];
        bytes += c.savedBytes;
        unit = std::max(unit, unitOfOp[i]);
      }
    }
    u.footprint = std::max(u.footprint, c.footprint);
    u.commBytes = std::max(u.commBytes, c.commBytes);
    if (ro.hasBackward)
      segment += c.keptBytes[0];
    bool unitEnds = i + 1 == model->ops.size() || unitOfOp[i + 1] != unitOfOp[i];
    if (program.innerCut[i])
      u.cutBytes += model->localBytes(model->valueOf(o.op->getResult(0)),
                                      model->resultLayout(ro, ro.strategies[choice[node]], 0),
                                      grid);
    if (program.innerCut[i] || unitEnds) {
      u.segmentKept = std::max(u.segmentKept, segment);
      segment = 0;
    }
  }
  // A region's re-created bytes are live together while its backward runs:
  // charged whole to the unit of its last op (a region stays between the
  // cut points stages split at; Recompute.cpp).
  for (unsigned k = 0; k < 2; ++k)
    for (auto &[region, entry] : regionBytes[k])
      units[entry.second].rerunWorkingSet[k] =
          std::max(units[entry.second].rerunWorkingSet[k], entry.first);
  // Edge costs (resharding, gradients) go to the consumer's unit; the same
  // producer and consumer nodes (so the same layouts) are priced once.
  struct EdgeCost {
    double forward = 0, backward = 0, zeroSync = 0;
    double reduction = 0;   // the producer's reduce-scatter in place of its all-reduce
    double largestStep = 0; // bytes of its largest collective
    int64_t replicas = 1;   // devices a parameter's gradient is all-reduced over
  };
  std::vector<int64_t> weightReplicas(model->weights.size(), 1);
  DenseMap<uint64_t, EdgeCost> edgeCost;
  auto costOfUse = [&](const ProgramIndex::Use &use) -> const EdgeCost & {
    uint64_t key = (uint64_t(use.pnode) << 40) | (uint64_t(use.result) << 32) |
                   (uint64_t(use.cnode) << 8) | use.operand;
    auto [it, inserted] = edgeCost.try_emplace(key);
    EdgeCost &e = it->second;
    if (!inserted)
      return e;
    const ValueModel &vm = model->values[use.value];
    const OpModel &co = model->ops[nodes[use.cnode].index];
    const Strategy &cs = co.strategies[choice[use.cnode]];
    TensorLayout from = producedLayout(*model, nodes[use.pnode], choice[use.pnode], use.result);
    TensorLayout want = model->operandLayout(co, cs, use.operand);
    e.forward = model->reshardSeconds(model->bytesOf(vm), from, want, grid,
                                      /*zeroSync=*/false, &e.largestStep);
    // Priced wherever the one reader is; it applies where the reader is in
    // the producer's stage.
    const Node &pn = nodes[use.pnode];
    if (vm.soleReader && pn.kind == Node::Op) {
      const OpModel &po = model->ops[pn.index];
      e.reduction = model->reductionScatterDelta(po, po.strategies[choice[use.pnode]], want, grid);
    }
    if (options.training && vm.needsGrad) {
      TensorLayout gradFrom = want;
      gradFrom.partialAxes = model->gradientPartialAxes(co, cs, use.operand);
      // (A parameter's gradient is synchronised once a step, in its sum.)
      double gradBytes = model->bytesOf(vm) *
                         (vm.parameterDerived ? gradientWidening(vm, grid) : 1);
      e.backward = model->reshardSeconds(gradBytes, gradFrom, from, grid,
                                         /*zeroSync=*/false, &e.largestStep);
      if (vm.parameterDerived) {
        e.zeroSync = model->reshardSeconds(gradBytes, gradFrom, from, grid,
                                           /*zeroSync=*/true);
        for (const ::loom::CollectiveStep &step :
             ::loom::reshardSteps(model->bytesOf(vm), gradFrom, from,
                                  [&](int16_t a) { return grid.axes[a]; }))
          if (step.kind == ::loom::CollectiveKind::AllReduce)
            e.replicas = std::max(e.replicas, grid.size(step.axes));
      }
    }
    return e;
  };
  // Seconds of op `o`'s forward, which recomputation re-runs with it.
  auto addForward = [](const OpModel &o, double seconds, double &forward,
                       double &recomputable, double (&recomputed)[2]) {
    forward += seconds;
    if (o.hasBackward)
      recomputable += seconds;
    for (unsigned k = 0; k < 2; ++k)
      if (o.region[k] >= 0)
        recomputed[k] += seconds;
  };
  for (const ProgramIndex::Use &use : program.uses) {
    if (!priced(use.unit))
      continue;
    const ValueModel &vm = model->values[use.value];
    const OpModel &co = model->ops[nodes[use.cnode].index];
    const EdgeCost &ec = costOfUse(use);
    bool perStep = options.training && vm.needsGrad && vm.parameterDerived;
    double bwd = ec.backward;
    Unit &u = units[use.unit];
    u.commBytes = std::max(u.commBytes, ec.largestStep);
    // Operands' resharding is part of the consumer's forward (re-run with
    // it, as the estimator's), the producer's reduction part of the
    // producer's (a reader in another unit is charged below).
    addForward(co, ec.forward, u.forward, u.recomputable, u.recomputed);
    if (ec.reduction && use.sameUnit)
      addForward(model->ops[nodes[use.pnode].index], ec.reduction, u.forward, u.recomputable,
                 u.recomputed);
    if (perStep) {
      u.gradSync += bwd;
      u.gradSyncZero += ec.zeroSync;
      if (use.weight >= 0)
        weightReplicas[use.weight] = std::max(weightReplicas[use.weight], ec.replicas);
    } else {
      u.backward += bwd;
      u.backwardComm += bwd;
    }
  }
  // Weights: held by the unit of their first user.
  for (auto [w, first] : llvm::enumerate(program.weightUnit)) {
    if (first < 0 || !priced(first))
      continue;
    Operation *op = model->weights[w];
    unsigned wn = program.nodeOfWeight[w];
    const ValueModel &vm = model->valueOf(op->getResult(0));
    double local = model->localBytes(vm, nodes[wn].layouts[choice[wn]], grid);
    Unit held;
    held.weightBytes = local;
    if (model->isParameter(op)) {
      double replicas = static_cast<double>(weightReplicas[w]);
      held.paramBytes = local;
      held.params = local / vm.elementBytes;
      held.shardedParamBytes = local / replicas;
      held.shardedParams = local / vm.elementBytes / replicas;
    }
    Unit &u = units[first];
    u.weightBytes += held.weightBytes;
    u.paramBytes += held.paramBytes;
    u.params += held.params;
    u.shardedParamBytes += held.shardedParamBytes;
    u.shardedParams += held.shardedParams;
    if (!program.weightReaders[w].empty())
      shared.push_back({program.weightReaders[w], held});
  }
  for (unsigned u = 0; u < numUnits; ++u)
    if (!priced(u))
      units[u] = units[program.unitTwin[u]];
  // A split reduction read by its one reader in another unit: a
  // reduce-scatter when the reader is in the producer's stage, which the
  // producer's unit is charged; the all-reduce's extra when a stage ends
  // between them, which every unit end between them is charged (two stage
  // boundaries between one pair charge it twice).
  for (auto [useIndex, producerUnit] : program.crossReaders) {
    const ProgramIndex::Use &use = program.uses[useIndex];
    double r = costOfUse(use).reduction;
    if (!r)
      continue;
    const OpModel &po = model->ops[nodes[use.pnode].index];
    Unit &p = units[producerUnit];
    addForward(po, r, p.forward, p.recomputable, p.recomputed);
    for (unsigned u = std::min(producerUnit, use.unit), end = std::max(producerUnit, use.unit);
         u < end; ++u)
      addForward(po, -r, units[u].cutForward, units[u].cutRecomputable, units[u].cutRecomputed);
  }
  // Activation bytes crossing each unit boundary (for pipeline sends and
  // full-recompute checkpoints): a value lives from its unit to its last
  // reader's unit.
  std::vector<double> delta(numUnits + 1, 0);
  // Copies of a folded block cross with the same bytes, and send the same
  // bytes on: each (node, result) and each boundary size is priced once.
  DenseMap<uint64_t, double> crossingBytes;
  for (const ProgramIndex::Crossing &x : program.crossings) {
    unsigned node = program.nodeOfOp[x.op];
    auto [it, inserted] = crossingBytes.try_emplace((uint64_t(node) << 32) | x.result, 0.0);
    if (inserted) {
      const OpModel &ro = model->ops[nodes[node].index];
      it->second = model->localBytes(
          model->values[x.value], model->resultLayout(ro, ro.strategies[choice[node]], x.result),
          grid);
    }
    double b = it->second;
    delta[unitOfOp[x.op]] += b;
    delta[x.lastUnit] -= b;
  }
  double live = 0;
  std::map<double, double> sendOf;
  for (size_t u = 0; u < numUnits; ++u) {
    live += delta[u];
    units[u].boundaryOut = live;
    auto [it, inserted] = sendOf.try_emplace(live, 0.0);
    if (inserted)
      it->second = sendSeconds(live, grid);
    units[u].sendOut = it->second;
  }
  return units;
}

void Planner::indexProgram() {
  program.nodeOfOp.resize(model->ops.size());
  DenseMap<Operation *, int> weightIndex;
  for (auto [w, op] : llvm::enumerate(model->weights))
    weightIndex[op] = static_cast<int>(w);
  // The weight a value is read from through single-operand ops (casts,
  // transposes), whose gradient synchronisation is that weight's.
  auto weightBehind = [&](Value v) {
    for (;;) {
      Operation *def = lookThroughShards(v).getDefiningOp();
      if (!def)
        return -1;
      if (auto it = weightIndex.find(def); it != weightIndex.end())
        return it->second;
      if (def->getNumOperands() != 1)
        return -1;
      v = def->getOperand(0);
    }
  };
  program.crosses.assign(model->ops.size(), false);
  for (auto [i, o] : llvm::enumerate(model->ops)) {
    program.nodeOfOp[i] = repNode(o.op);
    for (unsigned k = 0; k < o.op->getNumOperands(); ++k) {
      Value v = lookThroughShards(o.op->getOperand(k));
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<ConstantOp>(def))
        continue;
      unsigned pnode = def ? repNode(def) : cast<BlockArgument>(v).getArgNumber();
      unsigned res = isa<OpResult>(v) ? cast<OpResult>(v).getResultNumber() : 0;
      auto producer = def ? model->opIndex.find(def) : model->opIndex.end();
      bool sameUnit = producer != model->opIndex.end() &&
                      unitOfOp[producer->second] == unitOfOp[i];
      if (producer != model->opIndex.end() && !sameUnit && model->valueOf(v).soleReader)
        program.crossReaders.push_back({static_cast<unsigned>(program.uses.size()),
                                        unitOfOp[producer->second]});
      program.uses.push_back({unitOfOp[i], pnode, res, program.nodeOfOp[i], k,
                              model->valueIndex.lookup(v), weightBehind(v), sameUnit});
    }
    for (unsigned r = 0; r < o.op->getNumResults(); ++r) {
      Value res = o.op->getResult(r);
      if (!model->valueOf(res).activation)
        continue;
      unsigned last = unitOfOp[i];
      for (Operation *user : res.getUsers())
        if (auto it = model->opIndex.find(user); it != model->opIndex.end())
          last = std::max(last, unitOfOp[it->second]);
      if (last != unitOfOp[i]) {
        program.crosses[i] = true;
        program.crossings.push_back({static_cast<unsigned>(i), r, last,
                                     model->valueIndex.lookup(res)});
      }
    }
  }
  // Cut points, as the estimator finds them in a stage: after an op whose
  // one result is then the only live activation. Kept only inside a unit
  // (its last reader in the same unit): a unit's end is its boundaryOut.
  {
    const size_t n = model->ops.size();
    auto lastReader = [&](Value v) {
      int64_t last = -1;
      for (Operation *user : v.getUsers())
        if (auto it = model->opIndex.find(user); it != model->opIndex.end())
          last = std::max<int64_t>(last, it->second);
      return last;
    };
    std::vector<unsigned> dying(n, 0);
    int64_t live = 0;
    for (BlockArgument arg : func.getArguments())
      if (int64_t last = lastReader(arg); last >= 0 && model->valueOf(arg).activation) {
        ++live;
        ++dying[last];
      }
    program.innerCut.assign(n, false);
    for (auto [i, o] : llvm::enumerate(model->ops)) {
      for (Value r : o.op->getResults())
        if (int64_t last = lastReader(r);
            last > static_cast<int64_t>(i) && model->valueOf(r).activation) {
          ++live;
          ++dying[last];
        }
      live -= dying[i];
      if (live != 1 || o.op->getNumResults() != 1 || !model->valueOf(o.op->getResult(0)).activation)
        continue;
      int64_t last = lastReader(o.op->getResult(0));
      program.innerCut[i] = last > static_cast<int64_t>(i) && unitOfOp[last] == unitOfOp[i];
    }
  }
  for (Operation *w : model->weights) {
    program.nodeOfWeight.push_back(repNode(w));
    int first = -1;
    for (Operation *user : w->getResult(0).getUsers())
      if (auto it = model->opIndex.find(user); it != model->opIndex.end())
        first = first < 0 ? static_cast<int>(unitOfOp[it->second])
                          : std::min(first, static_cast<int>(unitOfOp[it->second]));
    program.weightUnit.push_back(first);
  }
  findUnitTwins();
}

void Planner::findUnitTwins() {
  program.unitTwin.resize(numUnits);
  std::iota(program.unitTwin.begin(), program.unitTwin.end(), 0u);
  // Units whose price depends on another unit stay their own: a recomputed
  // region or a weight (its users, its gradient's replicas) spanning units,
  // or a unit whose ops are not contiguous.
  std::vector<bool> alone(numUnits, false);
  std::vector<int64_t> opBegin(numUnits, -1), opEnd(numUnits, -1);
  for (auto [i, o] : llvm::enumerate(model->ops)) {
    unsigned u = unitOfOp[i];
    if (opBegin[u] < 0)
      opBegin[u] = static_cast<int64_t>(i);
    else if (opEnd[u] != static_cast<int64_t>(i))
      alone[u] = true;
    opEnd[u] = static_cast<int64_t>(i) + 1;
  }
  auto markSpan = [&](const std::vector<std::vector<unsigned>> &unitsOf) {
    for (const std::vector<unsigned> &us : unitsOf)
      if (llvm::any_of(us, [&](unsigned u) { return u != us.front(); }))
        for (unsigned u : us)
          alone[u] = true;
  };
  for (unsigned k = 0; k < 2; ++k) {
    std::vector<std::vector<unsigned>> unitsOfRegion;
    for (auto [i, o] : llvm::enumerate(model->ops))
      if (o.region[k] >= 0) {
        if (unitsOfRegion.size() <= static_cast<size_t>(o.region[k]))
          unitsOfRegion.resize(o.region[k] + 1);
        unitsOfRegion[o.region[k]].push_back(unitOfOp[i]);
      }
    markSpan(unitsOfRegion);
  }
  std::vector<std::vector<unsigned>> unitsOfWeight(model->weights.size());
  for (auto [w, first] : llvm::enumerate(program.weightUnit))
    if (first >= 0)
      unitsOfWeight[w].push_back(first);
  for (const ProgramIndex::Use &use : program.uses)
    if (use.weight >= 0)
      unitsOfWeight[use.weight].push_back(use.unit);
  markSpan(unitsOfWeight);
  program.weightReaders.assign(model->weights.size(), {});
  for (auto [w, us] : llvm::enumerate(unitsOfWeight)) {
    llvm::sort(us);
    us.erase(std::unique(us.begin(), us.end()), us.end());
    if (us.size() > 1)
      program.weightReaders[w] = us;
  }

  // A unit's signature: everything evaluateUnits reads of it, with values
  // by their size and flags, regions by their order within the unit.
  std::vector<std::vector<uint64_t>> signature(numUnits);
  auto bits = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  auto addValue = [&](std::vector<uint64_t> &sig, const ValueModel &vm) {
    sig.push_back(bits(vm.fullBytes));
    sig.push_back(bits(vm.elementBytes));
    sig.push_back((uint64_t(vm.soleReader) << 5) | (uint64_t(vm.batchDim >= 0) << 4) |
                  (uint64_t(vm.activation) << 3) |
                  (uint64_t(vm.needsGrad) << 2) | (uint64_t(vm.parameterDerived) << 1));
  };
  for (unsigned u = 0; u < numUnits; ++u) {
    if (alone[u] || opBegin[u] < 0)
      continue;
    std::vector<uint64_t> &sig = signature[u];
    SmallVector<int, 8> regionOrder[2];
    for (int64_t i = opBegin[u]; i < opEnd[u]; ++i) {
      const OpModel &o = model->ops[i];
      sig.push_back(program.nodeOfOp[i]);
      sig.push_back(program.innerCut[i]);
      sig.push_back(program.crosses[i]);
      sig.push_back(llvm::any_of(o.op->getResults(),
                                 [&](Value r) { return model->valueOf(r).held; }));
      for (unsigned k = 0; k < 2; ++k) {
        int local = -1;
        if (o.region[k] >= 0) {
          auto *it = llvm::find(regionOrder[k], o.region[k]);
          local = static_cast<int>(it - regionOrder[k].begin());
          if (it == regionOrder[k].end())
            regionOrder[k].push_back(o.region[k]);
        }
        sig.push_back(static_cast<uint64_t>(static_cast<int64_t>(local)));
      }
      if (program.innerCut[i])
        addValue(sig, model->valueOf(o.op->getResult(0)));
    }
  }
  for (const ProgramIndex::Use &use : program.uses) {
    if (alone[use.unit])
      continue;
    std::vector<uint64_t> &sig = signature[use.unit];
    sig.push_back((uint64_t(use.pnode) << 32) | use.cnode);
    sig.push_back((uint64_t(use.result) << 32) | use.operand);
    sig.push_back(use.weight >= 0);
    addValue(sig, model->values[use.value]);
  }
  for (auto [w, first] : llvm::enumerate(program.weightUnit)) {
    if (first < 0 || alone[first])
      continue;
    std::vector<uint64_t> &sig = signature[first];
    sig.push_back(program.nodeOfWeight[w]);
    sig.push_back(model->isParameter(model->weights[w]));
    addValue(sig, model->valueOf(model->weights[w]->getResult(0)));
  }
  std::map<std::vector<uint64_t>, unsigned> firstWith;
  for (unsigned u = 0; u < numUnits; ++u)
    if (!alone[u] && opBegin[u] >= 0)
      program.unitTwin[u] = firstWith.try_emplace(std::move(signature[u]), u).first->second;
}

//===----------------------------------------------------------------------===//
// Solving one grid
//===----------------------------------------------------------------------===//

void Planner::addSolution(unsigned gi, const StrategyGraph &g, Solution s,
                          bool memoryCapped, bool syncReweighted) {
  if (s.choice.empty() || !s.feasible)
    return;
  // A function input costs nothing in any layout, so the solver's pick
  // among equal costs is arbitrary: give it the layout its first reader
  // wants (the data loader delivers it that way; the estimator reads data
  // parallelism off the first input).
  for (const GraphEdge &e : edges) {
    if (nodes[e.producer].kind != Node::Arg)
      continue;
    const Node &arg = nodes[e.producer];
    const OpModel &co = model->ops[nodes[e.consumer].index];
    uint64_t want = layoutKey(model->operandLayout(
        co, co.strategies[s.choice[e.consumer]], e.operand));
    if (layoutKey(arg.layouts[s.choice[e.producer]]) == want)
      continue;
    for (size_t k = 0; k < arg.layouts.size(); ++k)
      if (layoutKey(arg.layouts[k]) == want) {
        std::vector<unsigned> alt = s.choice;
        alt[e.producer] = k;
        if (evaluateCost(g, alt) <= s.cost) {
          s.choice = std::move(alt);
        }
        break;
      }
  }
  for (const Solved &other : solved)
    if (other.grid == gi && other.choice == s.choice)
      return;
  Solved sv;
  sv.grid = gi;
  sv.choice = s.choice;
  sv.memoryCapped = memoryCapped;
  sv.syncReweighted = syncReweighted;
  std::vector<SharedWeight> shared;
  std::vector<Unit> units = evaluateUnits(grids[gi], sv.choice, sv.axisNames,
                                          sv.dataParallel, shared);
  sv.batches.emplace_back(irBatch, std::move(units), std::move(shared));
  solved.push_back(std::move(sv));
  priceConfigs(solved.size() - 1, 0);
}

void Planner::solveGrid(unsigned gi) {
  const SearchGrid &grid = grids[gi];
  activateGrid(gi);
  StrategyGraph g = buildStrategyGraph(grid);
  bool exact = true;
  Solution s;
  {
    PhaseTimer timer(result.phases.solves);
    s = options.thorough ? solveExact(g, &exact) : solveGreedy(g);
  }
  if (options.thorough && exact)
    checkAgainstBruteForce(g, s, gi);
  ++result.solves;
  result.exact &= exact && options.thorough;
  size_t before = configs.size();
  addSolution(gi, g, s, /*memoryCapped=*/false, /*syncReweighted=*/false);
  // The memory-capped solve runs unless a configuration fits without full
  // recomputation: a layout that fits only by re-running the whole forward
  // must not hide one that fits without. level=fast settles for any
  // configuration that fits.
  bool fitsWellEnough = false;
  for (size_t i = before; i < configs.size(); ++i)
    fitsWellEnough |= configs[i].fits && (!options.thorough ||
                                          configs[i].recompute != RecomputeMode::Full);
  if (fitsWellEnough)
    return;
  // Trade time for memory: the cheapest layout under the cap (exact where
  // the fronts stay within budget, docs/strategy-search.md "Search").
  double cap = cluster.device.memoryBytes * options.memoryFraction;
  Solution lean, lagrangian;
  bool proven = false;
  {
    PhaseTimer timer(result.phases.solves);
    lean = solveUnderMemoryCap(g, cap, options.thorough, &proven,
                               uint64_t(1) << 20, &lagrangian);
  }
  if (proven)
    checkAgainstBruteForce(g, lean, gi, cap);
  ++result.solves;
  ++result.cappedSolves;
  result.cappedProven += proven;
  addSolution(gi, g, lean, /*memoryCapped=*/true, /*syncReweighted=*/false);
  // The graph's memory is weights and kept activations only, and placement
  // can move optimizer state off the device: the Lagrangian plan, dearer
  // under the cap by this graph, can still be the faster one once priced in
  // full (or placed). Both are priced; an identical choice is kept once.
  if (lagrangian.feasible)
    addSolution(gi, g, lagrangian, /*memoryCapped=*/true,
                /*syncReweighted=*/false);
}

void Planner::checkAgainstBruteForce(const StrategyGraph &g, const Solution &s,
                                     unsigned gi, double cap) {
  if (!options.checkExact || !exactnessFailure.empty())
    return;
  uint64_t combos = ::loom::plan::countCombinations(g, PlanOptions::kBruteForceLimit);
  if (combos > PlanOptions::kBruteForceLimit) {
    ++result.bruteForceSkipped;
    return;
  }
  ++result.bruteForceChecks;
  result.bruteForceCappedChecks += cap < kInfeasible;
  Solution truth = ::loom::plan::solveBruteForce(g, PlanOptions::kBruteForceLimit, cap);
  double a = s.feasible ? s.cost : kInfeasible, b = truth.feasible ? truth.cost : kInfeasible;
  if (a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)))
    return;
  llvm::raw_string_ostream os(exactnessFailure);
  os << "check-exact: on grid ";
  for (int64_t d : grids[gi].axes)
    os << d << "x";
  os << "pp" << grids[gi].pp << " the solver's plan costs " << a
     << " s, brute force over its " << combos << " combinations finds " << b << " s";
  if (cap < kInfeasible)
    os << " under the memory cap of " << cap << " bytes";
}

/// How configurations rank as their solution's best: fitting ones first,
/// by step; the others by peak memory.
static std::tuple<bool, double> bestConfigKey(const Config &c) {
  return {!c.fits, c.fits ? c.stepTime : c.peakMemory};
}

/// Of these configurations, the best by its key as priced (a bound where
/// not simulated).
static Config *bestByKey(std::vector<Config> &configs, ArrayRef<unsigned> indices) {
  Config *best = nullptr;
  for (unsigned i : indices)
    if (!best || bestConfigKey(configs[i]) < bestConfigKey(*best))
      best = &configs[i];
  return best;
}

/// Whether a configuration's rank key is a bound, not its simulated step.
static bool keyIsBound(const Config &c) { return c.fits && c.stepIsBound; }

Config *Planner::bestAmong(ArrayRef<unsigned> indices) {
  for (;;) {
    Config *best = bestByKey(configs, indices);
    // A bound is below the simulated step: simulated, it may rank lower.
    if (!best || !keyIsBound(*best))
      return best;
    refine(*best);
  }
}

std::vector<unsigned> Planner::solutionsByBestConfig(size_t limit) {
  std::vector<std::vector<unsigned>> members; // per solution, its configurations
  std::vector<unsigned> solutionOf;
  DenseMap<unsigned, size_t> slot;
  for (auto [i, c] : llvm::enumerate(configs)) {
    auto [it, inserted] = slot.try_emplace(c.solved, members.size());
    if (inserted) {
      members.emplace_back();
      solutionOf.push_back(c.solved);
    }
    members[it->second].push_back(i);
  }
  // Best first from a heap of each solution's best key as priced: a bound
  // at the top is simulated and its solution goes back in, so only the
  // solutions ranked (up to `limit`) need their best simulated. At equal
  // keys a bound comes first, to be simulated before a tie is broken by
  // solution number.
  using Entry = std::tuple<std::tuple<bool, double>, bool, unsigned, size_t>;
  auto entryOf = [&](size_t k) -> Entry {
    const Config &best = *bestByKey(configs, members[k]);
    return {bestConfigKey(best), !keyIsBound(best), solutionOf[k], k};
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t k = 0; k < members.size(); ++k)
    heap.push(entryOf(k));
  std::vector<unsigned> order;
  while (!heap.empty() && order.size() < limit) {
    auto [key, exact, si, k] = heap.top();
    heap.pop();
    if (exact) {
      order.push_back(si);
      continue;
    }
    refine(*bestByKey(configs, members[k]));
    heap.push(entryOf(k));
  }
  return order;
}

void Planner::resolveHiddenSync() {
  // level=fast keeps to one solve per grid (its first answer must come in
  // well under a second).
  if (!options.training || !options.thorough)
    return;
  // The objective charges each parameter gradient's synchronisation in full,
  // once per step, but the step overlaps it with the backward: a layout
  // that replicates weights (more synchronisation, less resharding) looks
  // dearer to the solver than it runs. The best solutions' grids are solved
  // again with synchronisation charged at the share their best configuration
  // leaves exposed; the new solutions are priced like any other, so they
  // win only by being faster.
  const size_t kSolutions = 8;
  const double kMostlyHidden = 0.9;
  std::vector<unsigned> order = solutionsByBestConfig();
  SmallVector<std::pair<unsigned, StepTerms>> work; // solution, its terms
  for (unsigned si : order) {
    if (work.size() == kSolutions)
      break;
    const Solved &sv = solved[si];
    if (sv.memoryCapped || sv.syncReweighted ||
        llvm::any_of(work, [&](auto &w) { return solved[w.first].grid == sv.grid; }))
      continue;
    const Config *best = bestConfigOf(si);
    if (!best || best->exposedSyncShare >= kMostlyHidden)
      continue;
    StepTerms terms;
    terms.syncWeight = best->exposedSyncShare;
    terms.zeroSync = best->zero >= 1;
    if (best->zero >= 1)
      terms.optimizerSplit = dpDivisor(sv.dataParallel);
    work.push_back({si, terms});
  }
  for (auto &[si, terms] : work) {
    unsigned gi = solved[si].grid;
    activateGrid(gi);
    StrategyGraph g = buildStrategyGraph(grids[gi], terms);
    bool exact = true;
    Solution s;
    {
      PhaseTimer timer(result.phases.solves);
      s = solveExact(g, &exact);
    }
    if (exact)
      checkAgainstBruteForce(g, s, gi);
    ++result.solves;
    result.exact &= exact;
    size_t solvedBefore = solved.size(), configsBefore = configs.size();
    addSolution(gi, g, s, /*memoryCapped=*/false, /*syncReweighted=*/true);
    if (solved.size() == solvedBefore)
      continue;
    // Kept only where it beats the solution it came from by more than the
    // model's resolution (0.5%): otherwise it is a near-copy that would take
    // finalist and placement slots.
    const Config *was = bestConfigOf(si), *now = bestConfigOf(solvedBefore);
    bool faster = now && now->fits &&
                  (!was->fits || now->stepTime * kStepTimesEqualWithin < was->stepTime);
    if (!faster) {
      solved.pop_back();
      configs.resize(configsBefore);
      fastestFitting = std::numeric_limits<double>::infinity();
      for (const Config &c : configs)
        if (c.fits && !c.stepIsBound)
          fastestFitting = std::min(fastestFitting, c.stepTime);
    }
  }
}

const Config *Planner::bestConfigOf(unsigned si) {
  std::vector<unsigned> indices;
  for (auto [i, c] : llvm::enumerate(configs))
    if (c.solved == si)
      indices.push_back(i);
  return bestAmong(indices);
}

//===----------------------------------------------------------------------===//
// Stages, schedules, ZeRO, recomputation
//===----------------------------------------------------------------------===//

double Planner::sendSeconds(double bytes, const SearchGrid &grid) const {
  if (grid.pp <= 1 || bytes <= 0)
    return 0;
  unsigned ppAxis = grid.axes.size();
  ::loom::AxisSpan neighbours = grid.spans[ppAxis];
  int outer = neighbours.outermostLevel();
  for (auto &m : neighbours.membersPerLevel)
    m = 1;
  if (outer >= 0)
    neighbours.membersPerLevel[outer] = 2;
  return ::loom::collectiveCost(cluster, ::loom::CollectiveKind::SendRecv, bytes,
                                neighbours)
      .seconds;
}

/// Per pipeline device and chunk, the micro-batches whose activations it
/// holds at its peak.
const std::vector<std::vector<int64_t>> &Planner::inFlightCounts(const Config &cfg,
                                                                  int64_t p) {
  // The schedule's per-device task order alone fixes how many micro-batches
  // each chunk holds at its worst moment (forwards done, backwards not):
  // the counts the estimator's simulation of the real costs will find.
  const int64_t m = cfg.microBatches, v = cfg.virtualStages;
  auto key = std::make_tuple(static_cast<int>(cfg.schedule), m, p, v, cfg.kfkbGroup);
  auto it = inFlightCache.find(key);
  if (it == inFlightCache.end() && p == 1) { // micro-batches run one after another
    std::vector<std::vector<int64_t>> ones(1, std::vector<int64_t>(v, 1));
    it = inFlightCache.emplace(key, std::move(ones)).first;
  }
  if (it == inFlightCache.end()) {
    assert(options.training && "micro-batches are held only for a backward");
    std::vector<std::vector<int64_t>> counts(p, std::vector<int64_t>(v, m)); // all: safe
    if (const ::loom::PipelineOrders *orders = scheduleOrders(cfg, p))
      counts = ::loom::peakInFlight(*orders);
    it = inFlightCache.emplace(key, std::move(counts)).first;
  }
  return it->second;
}

double Planner::staticBytes(const Unit &u, const Config &cfg) const {
  double held = cfg.zero >= 3 && options.training
                    ? u.weightBytes - u.paramBytes + u.shardedParamBytes
                    : u.weightBytes;
  return held + trainingStateBytes(u, cfg);
}

double Planner::trainingStateBytes(const Unit &u, const Config &cfg) const {
  // As the estimator: gradients the size of the parameters (float32 sums
  // of 16-bit ones over several micro-batches) and Adam state (fp32 master
  // copy when the parameters are 16-bit, two fp32 moments), each
  // parameter's divided by ZeRO over its replicas.
  if (!options.training)
    return 0;
  double bytesPerParam = u.params > 0 ? u.paramBytes / u.params : 4;
  bool pipelined = grids[solved[cfg.solved].grid].pp > 1;
  double grads = (cfg.zero >= 2 ? u.shardedParamBytes : u.paramBytes) *
                 gradientBytesPerParameter(bytesPerParam,
                                           cfg.microBatches > 1 || pipelined) /
                 bytesPerParam;
  double optimizer = (cfg.zero >= 1 ? u.shardedParams : u.params) *
                     adamStateBytesPerParameter(bytesPerParam);
  return grads + optimizer;
}

const std::vector<double> *
Planner::pipelineFinish(const Config &cfg, int64_t p,
                        const std::vector<::loom::StageCost> &costs) {
  std::vector<double> flat;
  flat.reserve(4 * costs.size());
  for (const ::loom::StageCost &c : costs)
    flat.insert(flat.end(), {c.forward, c.backward, c.sendForward, c.sendBackward});
  auto [it, fresh] = pipelineCache.try_emplace(
      std::make_tuple(static_cast<int>(cfg.schedule), cfg.microBatches, p, cfg.kfkbGroup,
                      std::move(flat)));
  if (!fresh)
    return it->second ? &*it->second : nullptr;
  if (const ::loom::PipelineOrders *orders = scheduleOrders(cfg, p)) {
    if (auto sim = ::loom::simulatePipeline(*orders, costs))
      it->second = std::move(sim->finish);
    else
      llvm::consumeError(sim.takeError());
  }
  return it->second ? &*it->second : nullptr;
}

const ::loom::PipelineOrders *Planner::scheduleOrders(const Config &cfg, int64_t p) {
  auto [it, fresh] = ordersCache.try_emplace(std::make_tuple(
      static_cast<int>(cfg.schedule), cfg.microBatches, p, cfg.virtualStages, cfg.kfkbGroup));
  if (fresh) {
    ::loom::PipelineOptions po;
    po.schedule = cfg.schedule;
    po.microBatches = cfg.microBatches;
    po.devices = p;
    po.kfkbGroup = cfg.kfkbGroup;
    po.training = options.training;
    po.recordTasks = false;
    if (auto built = ::loom::buildPipelineOrders(p * cfg.virtualStages, po))
      it->second = std::move(*built);
    else // the enumeration builds only shapes the simulator accepts
      llvm::consumeError(built.takeError());
  }
  return it->second ? &*it->second : nullptr;
}

std::vector<int64_t> Planner::heldPerStage(const Config &cfg, int64_t stages,
                                           int64_t p) {
  std::vector<int64_t> held(stages, 0);
  assert(stages == p * cfg.virtualStages && "stages of another configuration");
  if (options.training) {
    const auto &counts = inFlightCounts(cfg, p);
    for (int64_t s = 0; s < stages; ++s)
      held[s] = counts[s % p][s / p];
  }
  return held;
}

bool Planner::stageFits(const StageMemory &mem, int64_t held, const Config &cfg,
                        int64_t chunks) const {
  double cap = cluster.device.memoryBytes * options.memoryFraction;
  return mem.bytes(held, cfg.recompute, options.training) + mem.temp + mem.comm <=
         cap / static_cast<double>(chunks);
}

bool Planner::stagesFitMemory(const BatchOption &option, int64_t stages, const Config &cfg,
                              const SearchGrid &grid,
                              const std::vector<unsigned> &stageOfUnit) {
  std::vector<int64_t> held = heldPerStage(cfg, stages, grid.pp);
  std::vector<StageMemory> mem(stages);
  option.forEachStretch(stageOfUnit, [&](const Unit &u, unsigned s, double k, bool) {
    mem[s].add(u, staticBytes(u, cfg), cfg.recompute, k);
  });
  const int64_t chunks = stages / std::max<int64_t>(1, grid.pp);
  for (int64_t s = 0; s < stages; ++s)
    if (!stageFits(mem[s], held[s], cfg, chunks))
      return false;
  return true;
}

namespace {
/// A stage's memory per device, as the search counts it (StageMemory), for
/// the stage split.
class StageMemoryBudget : public ::loom::plan::StageBudget {
public:
  StageMemoryBudget(const Planner &planner, const BatchOption &option, const Config &cfg,
                    std::vector<int64_t> held, int64_t chunks)
      : planner(planner), option(option), cfg(cfg), held(std::move(held)), chunks(chunks) {
    for (size_t r = 0; r < option.numRuns(); ++r)
      runStatic.push_back(planner.staticBytes(option.units[option.runStart[r]], cfg));
  }
  void begin(int64_t s) override {
    stage = s;
    mem = StageMemory();
  }
  bool fits(size_t run, size_t copies) const override {
    StageMemory grown = mem;
    grown.add(option.units[option.runStart[run]], runStatic[run], cfg.recompute,
              static_cast<double>(copies));
    return planner.stageFits(grown, held[stage], cfg, chunks);
  }
  void add(size_t run, size_t copies) override {
    mem.add(option.units[option.runStart[run]], runStatic[run], cfg.recompute,
            static_cast<double>(copies));
  }

private:
  const Planner &planner;
  const BatchOption &option;
  const Config &cfg;
  std::vector<int64_t> held;
  int64_t chunks;
  std::vector<double> runStatic;
  int64_t stage = 0;
  StageMemory mem;
};
} // namespace

bool Planner::partitionStages(const BatchOption &option, int64_t stages,
                              const Config &cfg, const SearchGrid &grid, bool memoryAware,
                              std::vector<unsigned> &stageOfUnit) {
  // Training sends each boundary forward and its gradient back (as
  // evaluateConfig charges it).
  const double sends = options.training ? 2 : 1;
  std::vector<::loom::plan::UnitRun> runs;
  for (size_t r = 0; r < option.numRuns(); ++r) {
    const Unit &u = option.units[option.runStart[r]];
    auto [cutFwd, cutBwd] = u.cutSeconds(cfg.recompute, options.training);
    runs.push_back({option.runStart[r + 1] - option.runStart[r],
                    u.forward + u.backward + u.recomputeSeconds(cfg.recompute),
                    sends * u.sendOut + cutFwd + cutBwd});
  }
  std::optional<StageMemoryBudget> budget;
  if (memoryAware)
    budget.emplace(*this, option, cfg, heldPerStage(cfg, stages, grid.pp),
                   stages / std::max<int64_t>(1, grid.pp));
  double slowest;
  return ::loom::plan::splitStages(runs, stages, unitStagePin, budget ? &*budget : nullptr,
                                   stageOfUnit, slowest);
}

void Planner::evaluateConfig(Config &cfg, double simulateBelow) {
  const Solved &sv = solved[cfg.solved];
  const SearchGrid &grid = grids[sv.grid];
  const BatchOption &option = sv.batches[cfg.batch];
  const int64_t p = grid.pp, S = p * cfg.virtualStages;
  const double m = static_cast<double>(cfg.microBatches);
  // Per stage and micro-batch: its forward, its backward (recomputation
  // included) and the send of its boundary to the next stage.
  std::vector<double> stageFwd(S, 0), stageBack(S, 0), stageSend(S, 0);
  std::vector<double> stageBwd(S, 0), stageSync(S, 0), stageParams(S, 0),
      stageMovable(S, 0);
  std::vector<StageMemory> stageMem(S);
  // A run's units in one stage are added together: k equal units at once.
  option.forEachStretch(cfg.stageOfUnit, [&](const Unit &un, unsigned s, double k,
                                             bool endsStage) {
    double bwd = un.backward + un.recomputeSeconds(cfg.recompute);
    stageFwd[s] += k * un.forward;
    stageBack[s] += options.training ? k * bwd : 0;
    // Gradient synchronisation overlaps the backward's compute, not its
    // collectives (as the estimator).
    stageBwd[s] += options.training ? k * (bwd - un.backwardComm) : 0;
    stageSync[s] += k * (cfg.zero >= 1 ? un.gradSyncZero : un.gradSync);
    // The optimizer updates each device's shard of every parameter with ZeRO.
    stageParams[s] += k * (cfg.zero >= 1 ? un.shardedParams : un.params);
    stageMovable[s] += k * trainingStateBytes(un, cfg);
    stageMem[s].add(un, staticBytes(un, cfg), cfg.recompute, k);
    if (endsStage && s + 1 < static_cast<unsigned>(S)) {
      stageSend[s] = un.sendOut;
      auto [cutFwd, cutBwd] = un.cutSeconds(cfg.recompute, options.training);
      stageFwd[s] += cutFwd;
      stageBack[s] += cutBwd;
      stageBwd[s] += cutBwd;
    }
  });
  // A weight read in several stages is held and updated by each; its first
  // reader's unit counted it for that one's. Read on several pipeline
  // devices (a tied embedding), its gradient sums are exchanged between
  // them once a step, after both devices' last backward (the estimator's
  // rule): each sends its sum, in ZeRO's shard, float32 for a 16-bit
  // weight.
  std::vector<double> exchange(p, 0);
  for (const SharedWeight &w : option.shared) {
    SmallVector<unsigned, 4> stages = {cfg.stageOfUnit[w.readers.front()]};
    SmallVector<int64_t, 2> devices = {stages.front() % p};
    for (unsigned u : w.readers) {
      unsigned s = cfg.stageOfUnit[u];
      if (llvm::is_contained(stages, s))
        continue;
      stages.push_back(s);
      if (!llvm::is_contained(devices, s % p))
        devices.push_back(s % p);
      stageParams[s] += cfg.zero >= 1 ? w.held.shardedParams : w.held.params;
      stageMovable[s] += trainingStateBytes(w.held, cfg);
      stageMem[s].staticBytes += staticBytes(w.held, cfg);
    }
    if (!options.training || devices.size() < 2 || w.held.params <= 0)
      continue;
    double bytesPerParam = w.held.paramBytes / w.held.params;
    double bytes =
        (cfg.zero >= 1 ? w.held.shardedParams : w.held.params) *
        gradientBytesPerParameter(bytesPerParam, /*accumulates=*/true);
    const double seconds = sendSeconds(bytes, grid);
    for (int64_t d : devices)
      exchange[d] += seconds;
  }
  // ZeRO-3 gathers each stage's parameters every micro-batch; prefetch hides
  // what the stage's own compute covers; the rest is split between its
  // forward and backward (as the estimator).
  if (options.training && cfg.zero == 3)
    for (int64_t s = 0; s < S; ++s) {
      double exposed = std::max(0.0, stageSync[s] - (stageFwd[s] + stageBack[s]));
      stageFwd[s] += exposed / 2;
      stageBack[s] += exposed / 2;
    }
  // Per pipeline device.
  const ::loom::DeviceSpec &dev = cluster.device;
  double adamRate = dev.memoryBandwidth * dev.eff(::loom::OpClass::Elementwise).memory;
  double peak = 0, peakUnmoved = 0, peakOffloaded = 0;
  // After a device's last task: its exposed synchronisation, then its
  // optimizer step.
  std::vector<double> exposedSync(p, 0), optimizerStep(p, 0);
  double totalSync = 0, totalExposed = 0;
  double offloadSeconds = 0;
  const bool offloadable =
      options.training && llvm::is_contained(options.activationTiers, "host") &&
      cluster.host.copyBandwidth() > 0;
  const std::vector<std::vector<int64_t>> *inFlight =
      options.training ? &inFlightCounts(cfg, p)
                       : nullptr;
  for (int64_t d = 0; d < p; ++d) {
    double bwd = 0, sync = 0, params = 0, mem = 0, temp = 0, comm = 0, movable = 0, kept = 0,
           keptPerStep = 0;
    for (int64_t s = d; s < S; s += p) {
      bwd += stageBwd[s];
      sync += stageSync[s];
      params += stageParams[s];
      int64_t held = inFlight ? (*inFlight)[d][s / p] : 0;
      // A device re-runs one segment at a time: of its model chunks'
      // recomputation working sets (interleaved schedules run several),
      // only the largest is live, on top of that chunk's temporaries, as
      // the estimator counts it.
      double rerun = options.training ? stageMem[s].rerun : 0;
      mem += stageMem[s].bytes(held, cfg.recompute, options.training) - rerun;
      movable += stageMovable[s];
      kept += stageMem[s].keptBytes(held, cfg.recompute, options.training);
      keptPerStep += stageMem[s].keptBytes(cfg.microBatches, cfg.recompute,
                                           options.training);
      temp = std::max(temp, stageMem[s].temp + rerun);
      comm = std::max(comm, stageMem[s].comm);
    }
    mem += temp + comm;
    peak = std::max(peak, mem);
    peakUnmoved = std::max(peakUnmoved, mem - movable);
    // Placement may also offload the kept activations to host memory; each
    // micro-batch's then cross the host link each way. It offloads only as
    // much as it must (partial offload): at least the share of the kept
    // bytes over the device once everything movable is off it.
    if (offloadable) {
      peakOffloaded = std::max(peakOffloaded, mem - movable - kept);
      double excess = mem - movable - dev.memoryBytes * options.memoryFraction;
      double share = kept > 0 ? std::clamp(excess / kept, 0.0, 1.0) : 0.0;
      offloadSeconds = std::max(offloadSeconds,
                                share * keptPerStep / cluster.host.copyBandwidth());
    }
    double exposed = std::max(0.0, sync - bwd) + exchange[d];
    totalSync += sync + exchange[d];
    totalExposed += exposed;
    double opt = options.training
                     ? params * 28.0 / adamRate
                     : 0;
    exposedSync[d] = exposed;
    optimizerStep[d] = opt;
  }
  // The pipeline's run, as the estimator simulates it: each device runs its
  // schedule's task order, and a send delays its receiver without occupying
  // either device, so schedules that run several forwards (or backwards) in
  // a row hide their sends and 1F1B does not. A device's step ends after
  // its last task, its exposed synchronisation and its optimizer step.
  auto stepAfter = [&](ArrayRef<double> finish) {
    double step = 0;
    for (int64_t d = 0; d < p; ++d)
      step = std::max(step, finish[d] + exposedSync[d] + optimizerStep[d]);
    return step;
  };
  cfg.stepIsBound = false;
  if (p == 1) {
    cfg.stepTime = stepAfter({m * (stageFwd[0] + stageBack[0])});
  } else {
    std::vector<::loom::StageCost> costs(S);
    for (int64_t s = 0; s < S; ++s)
      costs[s] = {stageFwd[s], stageBack[s], stageSend[s],
                  options.training && s > 0 ? stageSend[s - 1] : 0.0};
    const ::loom::PipelineOrders *orders =
        simulateBelow < kInfeasible ? scheduleOrders(cfg, p) : nullptr;
    double bound = orders ? stepAfter(::loom::pipelineFinishLowerBound(costs, orders->options))
                          : 0.0;
    const std::vector<double> *run = nullptr;
    if (orders && bound > simulateBelow) {
      // Simulated, it would be slower still.
      cfg.stepTime = bound;
      cfg.stepIsBound = true;
    } else if ((run = pipelineFinish(cfg, p, costs))) {
      cfg.stepTime = stepAfter(*run);
    } else {
      cfg.stepTime = kInfeasible;
      cfg.fits = false;
      return;
    }
  }
  cfg.exposedSyncShare = totalSync > 0 ? totalExposed / totalSync : 1;
  cfg.peakMemory = peak;
  cfg.peakWithoutTrainingState = peakUnmoved;
  cfg.peakWithActivationsOffloaded = offloadable ? peakOffloaded : peakUnmoved;
  cfg.offloadStepBound = offloadable ? std::max(cfg.stepTime, offloadSeconds)
                                     : cfg.stepTime;
  cfg.fits = peak <= dev.memoryBytes * options.memoryFraction;
}

void Planner::refine(Config &cfg) {
  if (!cfg.stepIsBound)
    return;
  PhaseTimer timer(result.phases.stages);
  bool fits = cfg.fits; // whether its stages split within memory, too
  evaluateConfig(cfg);
  cfg.fits = fits && cfg.fits;
  if (cfg.fits)
    fastestFitting = std::min(fastestFitting, cfg.stepTime);
}

void Planner::settleRanking() {
  // Rankings read the fastest fitting step, the plans within the model's
  // resolution of it, the first runnersUp + 1 distinct fitting plans by
  // step (the finalists), plans over memory up to kModelsAgreeWithin past
  // the fastest (placement) and those faster than the choice (shown as
  // needing more memory). A bound above all of those needs no simulation:
  // simulated, its step is higher still. Simulating raises steps, so this
  // repeats until no bound is below the horizon.
  for (;;) {
    double fastest = std::numeric_limits<double>::infinity();
    std::vector<unsigned> fitting;
    for (auto [i, c] : llvm::enumerate(configs))
      if (c.fits) {
        fastest = std::min(fastest, c.stepTime);
        fitting.push_back(i);
      }
    if (fitting.empty())
      return; // nothing fits: nothing was bounded
    llvm::stable_sort(fitting, [&](unsigned a, unsigned b) {
      return configs[a].stepTime < configs[b].stepTime;
    });
    double lastFinalist = std::numeric_limits<double>::infinity();
    std::set<std::string> seen;
    for (unsigned i : fitting)
      if (seen.insert(toCandidate(configs[i]).describe()).second &&
          seen.size() > options.runnersUp) {
        lastFinalist = configs[i].stepTime;
        break;
      }
    double horizon = std::max({fastest * kStepTimesEqualWithin,
                               options.placeMemory ? fastest * kModelsAgreeWithin : 0.0,
                               lastFinalist});
    bool simulated = false;
    for (Config &c : configs)
      if (c.stepIsBound && c.stepTime <= horizon) {
        refine(c);
        simulated = true;
      }
    if (!simulated)
      break;
  }
  for (const Config &c : configs)
    result.configsBounded += c.stepIsBound;
}

void Planner::priceOtherBatchSizes() {
  if (batchCandidates.size() < 2)
    return;
  // Other micro-batch sizes change stage balance, bubbles and activation
  // memory, not which layouts are good: they are priced for the few best
  // solutions only.
  const size_t kSolutions = 8;
  std::vector<unsigned> best = solutionsByBestConfig(kSolutions);
  for (size_t k = 0; k < best.size(); ++k) {
    unsigned si = best[k];
    Solved &sv = solved[si];
    activateGrid(sv.grid);
    size_t first = sv.batches.size();
    for (int64_t b : ArrayRef(batchCandidates).drop_front()) {
      if (!dividesAt(sv.choice, b))
        continue;
      SmallVector<std::string, 3> names;
      int64_t dp;
      model->batchScale = static_cast<double>(b) / static_cast<double>(irBatch);
      std::vector<SharedWeight> shared;
      std::vector<Unit> units =
          evaluateUnits(grids[sv.grid], sv.choice, names, dp, shared);
      sv.batches.emplace_back(b, std::move(units), std::move(shared));
      model->batchScale = 1;
    }
    priceConfigs(si, first);
  }
}

void Planner::priceConfigs(unsigned si, size_t firstBatch) {
  PhaseTimer timer(result.phases.stages);
  const Solved &sv = solved[si];
  const SearchGrid &grid = grids[sv.grid];
  const int64_t p = grid.pp;
  std::vector<PipelineSchedule> schedules = options.schedules;
  if (p == 1)
    schedules = {PipelineSchedule::OneFOneB};
  std::vector<int> zeros = options.zeroStages;
  if (sv.dataParallel == 1 || !options.training)
    zeros = {0};
  std::vector<RecomputeMode> recomputes;
  for (const std::string &r : options.recomputeModes)
    if (options.training || r == "none")
      recomputes.push_back(*parseRecomputeMode(r));
  if (recomputes.empty())
    recomputes.push_back(RecomputeMode::None);
  const int64_t global = irBatch * microBatches;
  // Per (micro-batch size, recompute mode, stages): the split balancing
  // time alone, if any.
  std::map<std::tuple<size_t, int, int64_t>, std::optional<std::vector<unsigned>>>
      timeOnlySplits;
  for (size_t bi = firstBatch; bi < sv.batches.size(); ++bi) {
    const std::vector<Unit> &units = sv.batches[bi].units;
    const int64_t m = global / sv.batches[bi].irBatch;
    for (RecomputeMode rc : recomputes)
      for (int z : zeros)
        for (PipelineSchedule sched : schedules) {
          // The schedule's shapes: model chunks per device (v, interleaved)
          // and micro-batches per group (k, kFkB; k >= m would be GPipe).
          SmallVector<std::pair<int64_t, int64_t>, 2> shapes = {{1, 1}};
          if (sched == PipelineSchedule::Interleaved1F1B) {
            if (m % p != 0)
              continue;
            shapes = {{2, 1}, {4, 1}};
          } else if (sched == PipelineSchedule::KFKB) {
            shapes.clear();
            for (int64_t k : {2, 4})
              if (k < m)
                shapes.push_back({1, k});
          }
          for (auto [v, k] : shapes) {
            // Pinned stages fix the number of stages (chunks, when interleaved).
            if (pins.numStages && p * v != pins.numStages)
              continue;
            Config cfg;
            cfg.solved = si;
            cfg.batch = bi;
            cfg.microBatches = m;
            cfg.schedule = sched;
            cfg.virtualStages = v;
            cfg.kfkbGroup = k;
            cfg.zero = z;
            cfg.recompute = rc;
            // The split balancing time alone is shared by every schedule
            // and ZeRO stage with this many stages; where it fits memory, it
            // is also the memory-aware split (its bisection meets the same
            // answers), which is searched for only where it does not.
            auto [known, fresh] = timeOnlySplits.try_emplace({bi, int(rc), p * v});
            if (fresh) {
              std::vector<unsigned> stageOfUnit;
              if (partitionStages(sv.batches[bi], p * v, cfg, grid, /*memoryAware=*/false,
                                  stageOfUnit))
                known->second = std::move(stageOfUnit);
            }
            bool split = false;
            if (known->second &&
                stagesFitMemory(sv.batches[bi], p * v, cfg, grid, *known->second)) {
              cfg.stageOfUnit = *known->second;
              split = true;
            } else if (known->second) {
              split = partitionStages(sv.batches[bi], p * v, cfg, grid, /*memoryAware=*/true,
                                      cfg.stageOfUnit);
            }
            if (!split) {
              // No split fits in memory: price an even split by unit count
              // (kept, marked as not fitting, for the shortfall report).
              const size_t n = units.size(), stages = p * v;
              if (n < stages)
                continue;
              cfg.stageOfUnit.assign(n, 0);
              int64_t pinned = -1; // a free unit follows the last pin before it
              for (size_t u = 0; u < n; ++u) {
                if (unitStagePin[u] >= 0)
                  pinned = unitStagePin[u];
                cfg.stageOfUnit[u] = pins.numStages ? std::max<int64_t>(pinned, 0)
                                                    : u * stages / n;
              }
            }
            // A configuration bounded slower than the fastest that fits
            // (beyond the model's resolution) cannot win: it is simulated
            // only if a ranking reads it (settleRanking).
            evaluateConfig(cfg, options.boundPipelines
                                    ? fastestFitting * kStepTimesEqualWithin
                                    : std::numeric_limits<double>::infinity());
            cfg.fits = cfg.fits && split;
            if (cfg.fits && !cfg.stepIsBound)
              fastestFitting = std::min(fastestFitting, cfg.stepTime);
            ++result.configsConsidered;
            configs.push_back(std::move(cfg));
          }
        }
  }
}

//===----------------------------------------------------------------------===//
// Candidates, annotation, verification
//===----------------------------------------------------------------------===//

std::string PlanCandidate::describe() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "grid ";
  for (auto [i, d] : llvm::enumerate(gridShape))
    os << (i ? "x" : "") << axisNames[i] << "=" << d;
  if (gridShape.empty())
    os << "single device";
  os << ", " << microBatches << " micro-batches";
  if (pipeline > 1) {
    os << ", " << ::loom::stringifyPipelineSchedule(schedule);
    if (virtualStages > 1)
      os << " v=" << virtualStages;
    if (schedule == ::loom::PipelineSchedule::KFKB)
      os << " k=" << kfkbGroup;
  }
  if (zeroStage)
    os << ", zero-" << zeroStage;
  if (recompute != "none")
    os << ", recompute=" << recompute;
  if (memoryCappedLayouts)
    os << ", memory-capped layouts";
  return s;
}

PlanCandidate Planner::toCandidate(const Config &cfg) const {
  const Solved &sv = solved[cfg.solved];
  const SearchGrid &grid = grids[sv.grid];
  PlanCandidate c;
  for (int64_t d : grid.irShape())
    c.gridShape.push_back(d);
  for (const std::string &n : shownAxisNames(sv))
    c.axisNames.push_back(n);
  if (grid.pp > 1) {
    c.axisNames.push_back(pins.axisNames.empty() ? "pp" : pins.axisNames.back());
    c.pipelineAxis = grid.axes.size();
  }
  c.deviceOrder.assign(grid.innerToOuter.begin(), grid.innerToOuter.end());
  c.pipeline = grid.pp;
  c.virtualStages = cfg.virtualStages;
  c.dataParallel = sv.dataParallel;
  c.memoryCappedLayouts = sv.memoryCapped;
  c.microBatches = cfg.microBatches;
  c.schedule = cfg.schedule;
  c.kfkbGroup = cfg.kfkbGroup;
  c.zeroStage = cfg.zero;
  c.recompute = recomputeModeName(cfg.recompute).str();
  c.stepTime = cfg.stepTime;
  c.peakMemory = cfg.peakMemory;
  c.fits = cfg.fits;
  return c;
}

/// Writes the plan of `cfg` into `target` (the module or a clone of it; the
/// function is found by name, ops by their position in program order).
void Planner::annotate(ModuleOp target, const Config &cfg) {
  const Solved &sv = solved[cfg.solved];
  activateGrid(sv.grid);
  const SearchGrid &grid = grids[sv.grid];
  func::FuncOp f = plannedFunction(target);
  // The chosen micro-batch size (setUp checked that this rebatching works).
  (void)rebatch(f, sv.batches[cfg.batch].irBatch);
  // Ops of `f` in the same order as model->ops / model->weights.
  SmallVector<Operation *> ops, weights;
  f.walk([&](Operation *op) {
    if (!isa<LoomDialect>(op->getDialect()))
      return;
    if (isa<WeightOp>(op))
      weights.push_back(op);
    else if (!isa<ConstantOp>(op))
      ops.push_back(op);
  });
  MLIRContext *ctx = target.getContext();
  OpBuilder b(ctx);
  PlanCandidate cand = toCandidate(cfg);

  // Micro-batches: the function now computes one; the runtime feeds it
  // `loom.micro_batches` slices of the global batch, cut along each input's
  // and output's `loom.batch_dim` (absent: every micro-batch sees it whole).
  // (A plan of one micro-batch drops the one an earlier plan wrote: the
  // estimator reads it.)
  f->removeAttr(kMicroBatchesAttr);
  if (cfg.microBatches > 1) {
    f->setAttr(kMicroBatchesAttr, b.getI64IntegerAttr(cfg.microBatches));
    auto batchDimOf = [&](Value v) -> int64_t {
      auto it = model->valueIndex.find(v);
      return it == model->valueIndex.end() ? -1 : model->values[it->second].batchDim;
    };
    for (BlockArgument arg : func.getArguments())
      if (int64_t d = batchDimOf(arg); d >= 0)
        f.setArgAttr(arg.getArgNumber(), "loom.batch_dim", b.getI64IntegerAttr(d));
    for (auto [i, v] : llvm::enumerate(func.getBody().back().getTerminator()->getOperands()))
      if (int64_t d = batchDimOf(v); d >= 0)
        f.setResultAttr(i, "loom.batch_dim", b.getI64IntegerAttr(d));
  }

  // Stages.
  std::vector<int64_t> stageOfOp(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    stageOfOp[i] = cfg.stageOfUnit[unitOfOp[i]];
  if (grid.pp > 1) {
    for (size_t i = 0; i < ops.size(); ++i)
      ops[i]->setAttr(kStageAttr, b.getI64IntegerAttr(stageOfOp[i]));
    DenseMap<Operation *, size_t> pos;
    for (auto [i, op] : llvm::enumerate(ops))
      pos[op] = i;
    for (Operation *w : weights) {
      int64_t first = -1;
      for (Operation *user : w->getResult(0).getUsers())
        if (auto it = pos.find(user); it != pos.end())
          first = first < 0 ? stageOfOp[it->second] : std::min(first, stageOfOp[it->second]);
      w->setAttr(kStageAttr, b.getI64IntegerAttr(std::max<int64_t>(first, 0)));
    }
  }
  // Selective recomputation: its regions are marked, so the estimator,
  // memory placement and the lowering re-run exactly these ops (as for a
  // `loom.recompute` the user wrote).
  if (cfg.recompute == RecomputeMode::Selective)
    for (auto [i, op] : llvm::enumerate(ops))
      if (model->ops[i].region[regionModel(cfg.recompute)] >= 0)
        op->setAttr(kRecomputeMark, b.getStringAttr(kPlannedRecompute));
  if (grid.axes.empty() && grid.pp == 1)
    return; // one device: nothing to shard

  // The grid.
  b.setInsertionPointToStart(target.getBody());
  std::string gridName = "plan";
  auto gridOp = shard::GridOp::create(b, target.getLoc(), gridName, grid.irShape());
  SmallVector<Attribute> names;
  for (const std::string &n : cand.axisNames)
    names.push_back(b.getStringAttr(n));
  gridOp->setAttr("loom.axis_names", b.getArrayAttr(names));
  if (grid.pp > 1)
    gridOp->setAttr("loom.pipeline_axis", b.getI64IntegerAttr(grid.axes.size()));
  SmallVector<Attribute> order;
  for (unsigned a : grid.innerToOuter)
    order.push_back(b.getI64IntegerAttr(a));
  gridOp->setAttr("loom.device_order", b.getArrayAttr(order));
  SmallVector<Attribute> dataAxes;
  for (auto [a, name] : llvm::enumerate(sv.axisNames))
    if (StringRef(name).starts_with("dp") || StringRef(name).starts_with("ep"))
      dataAxes.push_back(b.getI64IntegerAttr(a));
  if (!dataAxes.empty())
    gridOp->setAttr("loom.data_axes", b.getArrayAttr(dataAxes));

  // Sharding values are created at the top of the function and reused.
  Block &entry = f.getBody().front();
  DenseMap<uint64_t, Value> shardings;
  auto shardingFor = [&](const TensorLayout &l) -> Value {
    // One sharding value per layout, whatever the tensor's rank: trailing
    // unsplit dimensions do not change it (nor the key).
    uint64_t key = layoutKey(l);
    if (auto it = shardings.find(key); it != shardings.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry);
    Value s = createSharding(b, f.getLoc(), FlatSymbolRefAttr::get(ctx, gridName),
                             ArrayRef<::loom::GridAxes>(l.splitAxes))
                  .getResult();
    shardings[key] = s;
    return s;
  };
  DenseMap<Value, TensorLayout> produced; // each annotated value's layout
  auto annotateResult = [&](Value v, const TensorLayout &l) {
    if (!isa<RankedTensorType>(v.getType()))
      return;
    produced[v] = l;
    OpBuilder::InsertionGuard guard(b);
    Value s = shardingFor(l);
    // An argument's annotation goes right after its (reused, top-of-entry)
    // sharding value, so that the sharding dominates it.
    b.setInsertionPointAfter(isa<BlockArgument>(v) ? s.getDefiningOp()
                                                   : v.getDefiningOp());
    auto sh = shard::ShardOp::create(b, v.getLoc(), v, s, false);
    v.replaceAllUsesExcept(sh.getResult(), sh);
  };

  // Function inputs, weights and op results (producers' layouts).
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    annotateResult(f.getArgument(i), nodes[i].layouts[sv.choice[i]]);
  for (auto [i, w] : llvm::enumerate(weights)) {
    unsigned node = repNode(model->weights[i]);
    annotateResult(w->getResult(0), nodes[node].layouts[sv.choice[node]]);
  }
  for (auto [i, op] : llvm::enumerate(ops)) {
    unsigned node = repNode(model->ops[i].op);
    const OpModel &ro = model->ops[nodes[node].index];
    for (unsigned r = 0; r < op->getNumResults(); ++r)
      annotateResult(op->getResult(r),
                     model->resultLayout(ro, ro.strategies[sv.choice[node]], r));
  }
  // Operands: what each op wants, for its users.
  for (auto [i, op] : llvm::enumerate(ops)) {
    unsigned node = repNode(model->ops[i].op);
    const OpModel &ro = model->ops[nodes[node].index];
    const Strategy &s = ro.strategies[sv.choice[node]];
    for (unsigned k = 0; k < op->getNumOperands(); ++k) {
      Value v = op->getOperand(k);
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      TensorLayout want = model->operandLayout(ro, s, k);
      b.setInsertionPoint(op);
      // A resharding upstream does not do in one step (an axis moving
      // between dimensions whose other axes differ) is written as the chain
      // of steps it does; loom-partition fuses it back (Reshard.h).
      SmallVector<SplitDims> steps;
      if (auto have = produced.find(lookThroughShards(v));
          have != produced.end() && !::loom::upstreamOneStep(have->second, want))
        steps = ::loom::reshardPath(have->second.splitAxes, want.splitAxes);
      if (!steps.empty())
        steps.pop_back(); // the last is `want` itself
      for (const SplitDims &dims : steps) {
        TensorLayout step;
        step.splitAxes = dims;
        v = shard::ShardOp::create(b, op->getLoc(), v, shardingFor(step), true);
      }
      auto sh = shard::ShardOp::create(b, op->getLoc(), v, shardingFor(want), true);
      op->setOperand(k, sh.getResult());
    }
  }
}

PlacementOptions Planner::placementOptions(const Config &cfg) const {
  PlacementOptions po;
  po.cluster = options.cluster;
  po.training = options.training;
  po.globalBatch = irBatch * microBatches;
  po.precision = options.precision;
  po.memoryFraction = options.memoryFraction;
  po.schedule = cfg.schedule;
  po.kfkbGroup = cfg.kfkbGroup;
  // The plan's own ZeRO stage (the search prices the others as
  // configurations of their own), and its activation policy or one that
  // recomputes more: recomputation is a placement choice, and a plan the
  // search priced keeping activations may fit placed only by re-running some.
  po.zeroStages = {cfg.zero};
  po.recomputeModes.clear();
  for (const std::string &name : options.recomputeModes)
    if (*parseRecomputeMode(name) >= cfg.recompute)
      po.recomputeModes.push_back(name);
  po.activationTiers = options.activationTiers;
  return po;
}

std::vector<std::pair<unsigned, PlanCandidate>>
Planner::placeOverMemory(double fasterThan) {
  auto t0 = Clock::now();
  // Only plans that could fit once their gradients and optimizer state
  // (and, where allowed, their kept activations) are off the device are
  // worth placing (unless their parameters can be streamed: one device,
  // one micro-batch); the search's memory model is coarser than
  // placement's, hence the margin.
  double cap = cluster.device.memoryBytes * options.memoryFraction;
  // The least step a plan can have placed: a plan that could fit only with
  // its activations offloaded waits for the host link at least.
  std::vector<double> floorOf(configs.size(), 0);
  std::vector<unsigned> over;
  for (unsigned i = 0; i < configs.size(); ++i) {
    const Config &cfg = configs[i];
    bool streamable = devices == 1 && cfg.microBatches == 1;
    bool keeping = cfg.peakWithoutTrainingState <= kPlacementMargin * cap;
    bool offloading = cfg.peakWithActivationsOffloaded <= kPlacementMargin * cap;
    floorOf[i] = streamable || keeping ? cfg.stepTime : cfg.offloadStepBound;
    if (!cfg.fits && floorOf[i] < fasterThan * kModelsAgreeWithin &&
        (streamable || keeping || offloading))
      over.push_back(i);
  }
  std::stable_sort(over.begin(), over.end(), [&](unsigned a, unsigned b) {
    return floorOf[a] < floorOf[b];
  });
  // Placement adds transfers and waits to a plan's step and takes off at
  // most the device's own optimizer step (a few percent), so once the
  // search's step of the next plan is past the fastest placed one by more
  // than that and the two models' disagreement, no later plan can win; the
  // count cap bounds the rest.
  std::vector<std::pair<unsigned, PlanCandidate>> placed;
  std::set<std::string> seen;
  // Plans differing only in their activation policy: placing one also tries
  // every policy that recomputes more, so such a plan is placed once per
  // policy it adds (the try count then buys different plans).
  std::map<std::string, RecomputeMode> placedFrom;
  double fastestPlaced = std::numeric_limits<double>::infinity();
  size_t fitted = 0;
  for (unsigned i : over) {
    if (floorOf[i] >= fastestPlaced * kModelsAgreeWithin ||
        fitted >= kMaxPlacedPlans || placed.size() >= kMaxPlacementTries)
      break;
    PlanCandidate c = toCandidate(configs[i]);
    // Two solutions of one grid read alike (the memory-capped solve adds
    // the exact plan and the Lagrangian one): the solution tells them apart.
    std::string solution = "#" + std::to_string(configs[i].solved);
    if (!seen.insert(c.describe() + solution).second)
      continue;
    Config keepAll = configs[i];
    keepAll.recompute = RecomputeMode::None;
    std::string samePlan = toCandidate(keepAll).describe() + solution;
    if (auto it = placedFrom.find(samePlan);
        it != placedFrom.end() && it->second <= configs[i].recompute)
      continue;
    placedFrom[samePlan] = configs[i].recompute;
    OwningOpRef<ModuleOp> clone = cast<ModuleOp>(module->clone());
    annotate(*clone, configs[i]);
    std::string firstError;
    ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &d) {
      if (firstError.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        firstError = d.str();
      return success();
    });
    FailureOr<MemoryPlacement> p = placeMemory(*clone, placementOptions(configs[i]));
    if (failed(p)) {
      c.placementWhy = "placement failed: " + firstError;
    } else if (const PlacementCandidate *best = p->best()) {
      // The estimator's step of the plan with no memory limit, as placement
      // priced it; the placed step adds the transfers and waits.
      c.verifiedStepTime = p->unlimitedStepSeconds;
      c.placement = best->name;
      c.recompute = recomputeModeName(best->recompute).str();
      c.placedStepTime = best->stepSeconds;
      c.placedDevicePeak = best->devicePeak;
      c.placedHostToDevice = best->h2dBytes;
      c.placedHostToDeviceBound = p->lowerBoundH2D;
      fastestPlaced = std::min(fastestPlaced, best->stepSeconds);
      ++fitted;
    } else {
      // The last placement tried moves the most off the device: its
      // shortfall is the one to report.
      c.placementWhy = "no placement applies";
      for (const PlacementCandidate &pc : p->candidates) {
        if (!pc.why.empty())
          c.placementWhy = pc.name + ": " + pc.why;
        // The least device memory a placement short on the device needs,
        // for the shortfall (one short on host memory or NVMe fits the
        // device and says so in `placementWhy`).
        if (pc.devicePeak > p->deviceBytes)
          c.placedDevicePeak = std::min(c.placedDevicePeak.value_or(pc.devicePeak),
                                        pc.devicePeak);
      }
    }
    placed.emplace_back(i, std::move(c));
  }
  result.placed = placed.size();
  result.placeSeconds += secondsSince(t0);
  return placed;
}

LogicalResult Planner::chooseAndAnnotate() {
  // Rank: fitting plans first, then by the search's step time; ties by
  // order of discovery (deterministic).
  std::vector<unsigned> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  // Fitting plans within 0.5% of the fastest are equal within the model's
  // resolution and rank by grid simplicity (fewest axes) first.
  double fastest = std::numeric_limits<double>::infinity();
  for (const Config &c : configs)
    if (c.fits)
      fastest = std::min(fastest, c.stepTime);
  auto axisCount = [&](const Config &c) {
    const SearchGrid &g = grids[solved[c.solved].grid];
    return g.axes.size() + (g.pp > 1);
  };
  // Of `n` candidates, the fastest usable one (by `step`), then within 0.5%
  // of it the simplest grid (fewest axes; `config` gives each one's), so
  // that pure data parallelism is dp=8 rather than an equivalent dp0 x dp1;
  // -1 when none is usable.
  auto simplestOfFastest = [&](size_t n, auto usable, auto step, auto config) {
    int best = -1;
    for (size_t k = 0; k < n; ++k)
      if (usable(k) && (best < 0 || step(k) < step(best)))
        best = static_cast<int>(k);
    if (best < 0)
      return best;
    double fastestStep = step(best);
    for (size_t k = 0; k < n; ++k)
      if (usable(k) && step(k) <= fastestStep * kStepTimesEqualWithin &&
          axisCount(config(k)) < axisCount(config(best)))
        best = static_cast<int>(k);
    return best;
  };
  auto rankKey = [&](unsigned i) {
    const Config &c = configs[i];
    bool top = c.fits && c.stepTime <= fastest * kStepTimesEqualWithin;
    return std::make_tuple(!c.fits, !top, top ? axisCount(c) : 0,
                           c.fits ? c.stepTime : c.peakMemory);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](unsigned a, unsigned b) { return rankKey(a) < rankKey(b); });
  if (order.empty())
    return error() << "no grid of " << devices << " devices maps onto cluster '"
                   << options.cluster << "'";
  bool anyFits = configs[order.front()].fits;
  // With place-memory, the fastest plans over memory get their placement
  // first: one of them may win even when others fit as they are.
  std::vector<std::pair<unsigned, PlanCandidate>> placed;
  if (options.placeMemory)
    placed = placeOverMemory(anyFits ? fastest : std::numeric_limits<double>::infinity());
  int bestPlaced = simplestOfFastest(
      placed.size(), [&](size_t k) { return !placed[k].second.placement.empty(); },
      [&](size_t k) { return *placed[k].second.placedStepTime; },
      [&](size_t k) -> const Config & { return configs[placed[k].first]; });
  if (!anyFits && bestPlaced < 0) {
    result.feasible = false;
    result.shortfallBytes = configs[order.front()].peakMemory -
                            cluster.device.memoryBytes * options.memoryFraction;
    result.best = toCandidate(configs[order.front()]);
    result.best.verdict = "does not fit";
    // Placement may bring a plan closer than the search's leanest.
    double cap = cluster.device.memoryBytes * options.memoryFraction;
    int closest = -1;
    for (auto [k, pc] : llvm::enumerate(placed))
      if (pc.second.placedDevicePeak &&
          *pc.second.placedDevicePeak - cap < result.shortfallBytes) {
        result.shortfallBytes = *pc.second.placedDevicePeak - cap;
        closest = static_cast<int>(k);
      }
    if (closest >= 0) {
      result.best = placed[closest].second;
      result.best.verdict = "does not fit, even placed";
    }
    for (auto [k, pc] : llvm::enumerate(placed)) {
      if (result.runnersUp.size() >= options.runnersUp)
        break;
      if (static_cast<int>(k) == closest)
        continue;
      pc.second.verdict = "no placement fits: " + pc.second.placementWhy;
      result.runnersUp.push_back(pc.second);
    }
    if (options.placeMemory)
      result.notes.push_back(
          placed.empty()
              ? llvm::formatv("no plan is within {0:F1}x of device memory without its "
                              "gradients and optimizer state, so none was placed",
                              kPlacementMargin)
                    .str()
              : llvm::formatv("memory placement fits none of the {0} fastest plans "
                              "within {1:F1}x of device memory without their gradients "
                              "and optimizer state",
                              placed.size(), kPlacementMargin)
                    .str());
    return success();
  }
  // Finalists: the best config of each distinct grid/solution, up to
  // runnersUp + 1 of them.
  std::vector<unsigned> finalists;
  std::set<std::string> seen;
  for (unsigned i : order) {
    if (!configs[i].fits)
      break;
    std::string key = toCandidate(configs[i]).describe();
    if (!seen.insert(key).second)
      continue;
    finalists.push_back(i);
    if (finalists.size() > options.runnersUp)
      break;
  }
  auto t0 = Clock::now();
  std::vector<std::optional<Estimate>> estimates(finalists.size());
  if (options.verify) {
    for (auto [k, i] : llvm::enumerate(finalists)) {
      // level=fast re-prices its first choice only (the estimator on a
      // 96-layer model costs about as much as the whole fast search).
      if (!options.thorough && k > 0)
        break;
      OwningOpRef<ModuleOp> clone = cast<ModuleOp>(module->clone());
      annotate(*clone, configs[i]);
      EstimateOptions eo;
      eo.cluster = options.cluster;
      eo.training = options.training;
      eo.globalBatch = irBatch * microBatches;
      eo.schedule = configs[i].schedule;
      eo.kfkbGroup = configs[i].kfkbGroup;
      eo.precision = options.precision;
      eo.recompute = recomputeModeName(configs[i].recompute).str();
      eo.zeroStage = configs[i].zero;
      // Estimation diagnostics of a finalist are not the user's errors.
      ScopedDiagnosticHandler quiet(module.getContext(),
                                    [](Diagnostic &) { return success(); });
      auto est = estimateModule(*clone, eo);
      if (succeeded(est))
        estimates[k] = std::move(*est);
    }
  }
  result.verifySeconds += secondsSince(t0);
  // Choose: by the estimator's step time among those that fit by it.
  size_t chosen = 0;
  bool fittingVerified = !options.verify; // a fitting finalist fits by the estimator
  auto verifiedFits = [&](size_t k) {
    return estimates[k] &&
           estimates[k]->peakMemory() <= cluster.device.memoryBytes * options.memoryFraction;
  };
  if (options.verify && !finalists.empty()) {
    int k = simplestOfFastest(
        finalists.size(), verifiedFits, [&](size_t k) { return estimates[k]->stepTime; },
        [&](size_t k) -> const Config & { return configs[finalists[k]]; });
    fittingVerified = k >= 0;
    if (fittingVerified)
      chosen = static_cast<size_t>(k);
    else
      result.notes.push_back("the estimator finds every finalist over memory or "
                             "fails on it; keeping the search's choice");
  }
  std::vector<PlanCandidate> fitting;
  for (auto [k, i] : llvm::enumerate(finalists)) {
    PlanCandidate c = toCandidate(configs[i]);
    if (estimates[k]) {
      c.verifiedStepTime = estimates[k]->stepTime;
      c.verifiedPeakMemory = estimates[k]->peakMemory();
    }
    fitting.push_back(std::move(c));
  }
  // A placed plan wins only when it is faster beyond the model's resolution
  // than the best plan that needs no placement.
  bool placedWins =
      bestPlaced >= 0 &&
      (fitting.empty() || !fittingVerified ||
       *placed[bestPlaced].second.placedStepTime * kStepTimesEqualWithin <
           fitting[chosen].finalStepTime());
  const PlanCandidate &winner =
      placedWins ? placed[bestPlaced].second : fitting[chosen];
  double best = winner.finalStepTime();
  auto slower = [&](double mine) {
    return llvm::formatv("{0:F1}% slower", 100.0 * (mine / best - 1)).str();
  };
  for (auto [k, c] : llvm::enumerate(fitting)) {
    if (!placedWins && k == chosen) {
      c.verdict = "chosen";
      result.best = c;
      continue;
    }
    double mine = c.finalStepTime();
    if (c.verifiedPeakMemory && !verifiedFits(k))
      c.verdict = llvm::formatv("over memory by the estimate ({0:F1} GiB)",
                                *c.verifiedPeakMemory / (1ull << 30));
    else if (mine < best)
      c.verdict = llvm::formatv("{0:F2}% faster, but a grid with more axes "
                                "(within 0.5%, the simpler grid wins)",
                                100.0 * (1 - mine / best));
    else
      c.verdict = slower(mine);
    result.runnersUp.push_back(c);
  }
  // Placed plans: the fastest that fit, then a few that no placement fits.
  std::vector<unsigned> placedOrder(placed.size());
  std::iota(placedOrder.begin(), placedOrder.end(), 0);
  std::stable_sort(placedOrder.begin(), placedOrder.end(), [&](unsigned a, unsigned b) {
    const PlanCandidate &x = placed[a].second, &y = placed[b].second;
    return std::make_tuple(x.placement.empty(), x.placedStepTime.value_or(0)) <
           std::make_tuple(y.placement.empty(), y.placedStepTime.value_or(0));
  });
  unsigned placedShown = 0, unplacedShown = 0;
  for (unsigned k : placedOrder) {
    PlanCandidate &c = placed[k].second;
    if (placedWins && static_cast<int>(k) == bestPlaced) {
      c.verdict = "chosen";
      result.best = c;
      continue;
    }
    if (c.placement.empty() ? unplacedShown++ >= 2 : placedShown++ >= options.runnersUp)
      continue;
    if (c.placement.empty())
      c.verdict = "no placement fits: " + c.placementWhy;
    else if (*c.placedStepTime < best)
      c.verdict = llvm::formatv("with {0}: {1:F2}% faster, but within 0.5% {2}", c.placement,
                                100.0 * (1 - *c.placedStepTime / best),
                                placedWins ? "the simpler grid wins"
                                           : "the plan that needs no placement wins")
                      .str();
    else
      c.verdict = "with " + c.placement + ": " + slower(*c.placedStepTime);
    result.runnersUp.push_back(c);
  }
  // A few of the plans that do not fit, to show why memory ruled them out
  // (when plans were placed, the list above shows it).
  unsigned overMemory = placed.empty() ? 0 : 2;
  for (unsigned i : order)
    if (!configs[i].fits && configs[i].stepTime < result.best.stepTime && overMemory < 2) {
      PlanCandidate c = toCandidate(configs[i]);
      c.verdict = llvm::formatv("faster but needs {0:F1} GiB per device",
                                c.peakMemory / (1ull << 30));
      result.runnersUp.push_back(c);
      ++overMemory;
    }
  if (!placedWins && estimates[chosen])
    result.estimate = std::move(*estimates[chosen]);

  Config cfg = configs[placedWins ? placed[bestPlaced].first : finalists[chosen]];
  // Placement may have chosen to recompute more than the search priced.
  if (placedWins)
    cfg.recompute = *parseRecomputeMode(placed[bestPlaced].second.recompute);
  // A placement from an earlier run belongs to another plan.
  removePlacement(module);
  annotate(module, cfg);
  if (placedWins) {
    // The same placement again, now written into the module.
    auto t1 = Clock::now();
    FailureOr<MemoryPlacement> placement = placeMemory(module, placementOptions(cfg));
    if (failed(placement))
      return failure();
    result.placeSeconds += secondsSince(t1);
    result.placedThroughput = {placement->samplesPerSecond(),
                               placement->modelTflopsPerDevice(), placement->mfu()};
  }

  // The report's strategies: per block (representative ops), then the rest.
  const Solved &sv = solved[cfg.solved];
  SmallVector<std::string, 3> names = shownAxisNames(sv);
  auto describeOp = [&](Operation *op) {
    unsigned node = nodeOfOp.lookup(op);
    const OpModel &o = model->ops[nodes[node].index];
    std::string where;
    llvm::raw_string_ostream os(where);
    os << op->getName();
    if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
      os << " at " << llvm::sys::path::filename(loc.getFilename().getValue()) << ":"
         << loc.getLine();
    // What the result's one reader in the same stage wants, for a
    // reduction that ends in a reduce-scatter.
    std::optional<TensorLayout> readerWants;
    if (op->getNumResults() == 1 && model->valueOf(op->getResult(0)).soleReader) {
      OpOperand *use = soleReadingUse(op->getResult(0));
      auto reader = model->opIndex.find(use->getOwner());
      auto self = model->opIndex.find(op);
      if (reader != model->opIndex.end() && self != model->opIndex.end() &&
          cfg.stageOfUnit[unitOfOp[reader->second]] == cfg.stageOfUnit[unitOfOp[self->second]]) {
        unsigned cnode = nodeOfOp.lookup(use->getOwner());
        const OpModel &co = model->ops[nodes[cnode].index];
        readerWants = model->operandLayout(co, co.strategies[sv.choice[cnode]],
                                           use->getOperandNumber());
      }
    }
    // The layout each weight operand is stored in (its node's choice).
    auto storedWeight = [&](unsigned operand) -> const TensorLayout * {
      auto w = lookThroughShards(op->getOperand(operand)).getDefiningOp<WeightOp>();
      if (!w)
        return nullptr;
      unsigned wn = repNode(w);
      return nodes[wn].kind == Node::Weight ? &nodes[wn].layouts[sv.choice[wn]] : nullptr;
    };
    return OpStrategy{where, model->describe(o, o.strategies[sv.choice[node]], names,
                                             readerWants ? &*readerWants : nullptr,
                                             storedWeight)};
  };
  for (const RepeatedBlock &blk : options.fold ? folded.blocks : std::vector<RepeatedBlock>()) {
    BlockPlan bp;
    bp.copies = blk.copies();
    bp.opsPerCopy = blk.opsPerCopy();
    for (Operation *op : blk.ops[0])
      bp.ops.push_back(describeOp(op));
    result.blocks.push_back(std::move(bp));
  }
  for (const OpModel &o : model->ops)
    if (!representative.count(o.op) && isa<MatmulOp, ConvOp, EmbeddingOp, AttentionOp>(o.op))
      result.otherOps.push_back(describeOp(o.op));
  // Stages: unit ranges.
  int64_t S = grids[sv.grid].pp * cfg.virtualStages;
  for (int64_t s = 0; s < S; ++s) {
    size_t first = SIZE_MAX, last = 0, count = 0;
    for (size_t u = 0; u < cfg.stageOfUnit.size(); ++u)
      if (cfg.stageOfUnit[u] == static_cast<unsigned>(s)) {
        first = std::min(first, u);
        last = u;
        ++count;
      }
    if (!count)
      continue;
    result.stages.push_back(llvm::formatv("stage {0} (device {1}): {2} units, {3} .. {4}", s,
                                          s % grids[sv.grid].pp, count,
                                          unitLabels[first], unitLabels[last]));
  }
  return success();
}

LogicalResult Planner::run() {
  auto start = Clock::now();
  result.options = options;
  if (failed(setUp()))
    return failure();
  auto searchStart = Clock::now();
  enumerateGrids();
  buildGraphNodes();
  indexProgram();
  if (failed(mapPins()))
    return failure();
  if (grids.empty() && pins.any())
    return error() << "no grid of " << devices << " devices on '" << options.cluster
                   << "' matches the pinned grid and stages";
  for (unsigned g = 0; g < grids.size(); ++g)
    solveGrid(g);
  resolveHiddenSync();
  if (!exactnessFailure.empty())
    return error() << exactnessFailure;
  priceOtherBatchSizes();
  if (configs.empty() && pins.any())
    return explainUnhonouredPins();
  settleRanking();
  result.searchSeconds = secondsSince(searchStart) + result.foldSeconds;
  if (failed(chooseAndAnnotate()))
    return failure();
  result.totalSeconds = secondsSince(start);
  return success();
}

FailureOr<PlanResult> mlir::loom::planModule(ModuleOp module,
                                             const PlanOptions &options) {
  PlanResult result;
  // So do the fetches and releases of an earlier placement (Movement.h).
  for (auto func : module.getOps<func::FuncOp>())
    removeMovement(func);
  if (options.splitProjections)
    for (auto func : module.getOps<func::FuncOp>())
      splitFusedProjections(func);
  // Marks an earlier plan wrote for its selective recomputation belong to
  // that plan; a user's own (unit) marks stay and bind every plan.
  module.walk([](Operation *op) {
    if (auto mark = op->getAttrOfType<StringAttr>(kRecomputeMark);
        mark && mark.getValue() == kPlannedRecompute)
      op->removeAttr(kRecomputeMark);
  });
  Planner planner(module, options, result);
  if (failed(planner.run()))
    return failure();
  return result;
}
