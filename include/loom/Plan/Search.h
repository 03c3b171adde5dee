//===- Search.h - the sharding and pipeline strategy search ----*- C++ -*-===//
//
// Given a loom function and a cluster, finds the plan with the lowest
// predicted step time that fits in device memory: the grid (factorizations
// of the device count into non-pipeline axes and a pipeline axis, in every
// order onto the topology), every op's split of its iteration space over
// the non-pipeline axes, pipeline stages, schedule, ZeRO stage and
// recomputation. docs/strategy-search.md describes the space, the cost the
// search minimises and how it relates to the estimator (which re-prices the
// winners). planModule writes the chosen plan into the module.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLAN_SEARCH_H
#define LOOM_PLAN_SEARCH_H

#include "loom/Cost/Estimate.h"
#include "loom/Cost/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::loom {

struct PlanOptions {
  std::string cluster = "dgx-a100-80g";
  bool training = true;
  int64_t globalBatch = 0; // 0: the IR's batch (one micro-batch)
  bool thorough = true;    // level=thorough (exact per block) or fast
  bool fold = true;
  /// Split fused projections (a fused QKV) into their parts first, so that
  /// tensor parallelism can split each part by heads (FusedProjections.h).
  bool splitProjections = true;
  int64_t maxTP = 0;       // cap on non-batch splitting of one op (0: none)
  int64_t maxPP = 0;       // cap on the pipeline size (0: none)
  int64_t devices = 0;     // 0: the whole cluster
  std::string precision = "ir";
  std::vector<::loom::PipelineSchedule> schedules = {
      ::loom::PipelineSchedule::OneFOneB, ::loom::PipelineSchedule::Interleaved1F1B,
      ::loom::PipelineSchedule::GPipe, ::loom::PipelineSchedule::KFKB};
  std::vector<int> zeroStages = {0, 1, 2, 3};
  std::vector<std::string> recomputeModes = {"none", "selective", "full"};
  /// With place-memory: where kept activations may wait for their backward
  /// (device, host; PlacementOptions::activationTiers).
  std::vector<std::string> activationTiers = {"device", "host"};
  double memoryFraction = 1.0;
  unsigned runnersUp = 5;
  bool verify = true; // re-price the finalists with estimateModule
  /// Testing (check-exact=true): every exact solve of a strategy graph is
  /// checked against brute force where the graph has at most
  /// kBruteForceLimit combinations; a different cost fails the pass.
  bool checkExact = false;
  static constexpr uint64_t kBruteForceLimit = uint64_t(1) << 22;
  /// Skip simulating a pipelined configuration whose step's lower bound
  /// (pipelineFinishLowerBound) is already slower than the fastest that
  /// fits; rankings simulate any they read, so the plan and report are the
  /// same either way (false: simulate all, for testing that).
  bool boundPipelines = true;
  /// place-memory=true: plans over device memory are priced again with the
  /// memory placement that makes them fit (optimizer offload, parameter
  /// streaming, ZeRO, recomputation; lib/Memory) and compete with those
  /// that fit as they are; the winner's placement is written into the IR.
  bool placeMemory = false;
};

/// One complete plan, as the search priced it.
struct PlanCandidate {
  std::vector<int64_t> gridShape; // the IR grid; the pipeline axis last
  std::vector<std::string> axisNames;
  std::vector<unsigned> deviceOrder; // grid axes, innermost first
  int pipelineAxis = -1;
  int64_t pipeline = 1, virtualStages = 1, dataParallel = 1, microBatches = 1;
  ::loom::PipelineSchedule schedule = ::loom::PipelineSchedule::OneFOneB;
  int64_t kfkbGroup = 1; // k of kFkB (1 for every other schedule)
  int zeroStage = 0;
  std::string recompute = "none";
  /// The grid's layouts as solved under the memory cap (when its fastest
  /// did not fit), not its fastest: named so the two are told apart.
  bool memoryCappedLayouts = false;
  double stepTime = 0;   // the search's model
  double peakMemory = 0; // the search's model, busiest device
  bool fits = false;
  std::optional<double> verifiedStepTime, verifiedPeakMemory; // estimator
  /// place-memory=true, for a plan over device memory: the placement that
  /// makes it fit (empty: none does, `placementWhy` says why) and its step.
  std::string placement, placementWhy;
  std::optional<double> placedStepTime, placedDevicePeak, placedHostToDevice;
  /// The least host-to-device bytes per step any schedule of that placement
  /// moves (ChunkSchedule.h's bound; the bytes themselves when resident).
  std::optional<double> placedHostToDeviceBound;
  std::string verdict; // why it lost (runners-up), or "chosen"
  std::string describe() const;
  /// The step time the choice compares: placed, else the estimator's, else
  /// the search's.
  double finalStepTime() const {
    return placedStepTime     ? *placedStepTime
           : verifiedStepTime ? *verifiedStepTime
                              : stepTime;
  }
  /// The per-device peak that goes with finalStepTime().
  double finalPeakMemory() const {
    return placedDevicePeak     ? *placedDevicePeak
           : verifiedPeakMemory ? *verifiedPeakMemory
                                : peakMemory;
  }
};

/// The strategy of one op of a representative block, for the report.
struct OpStrategy {
  std::string op;        // name and location
  std::string strategy;  // e.g. "column: n->tp, batch->dp"
};
struct BlockPlan {
  unsigned copies = 1, opsPerCopy = 0;
  std::vector<OpStrategy> ops;
};

struct PlanResult {
  PlanCandidate best;
  std::vector<PlanCandidate> runnersUp;
  std::vector<BlockPlan> blocks;       // folded blocks (empty when unfolded)
  std::vector<OpStrategy> otherOps;    // ops outside blocks (non-trivial only)
  std::vector<std::string> stages;     // per stage: what it holds
  size_t ops = 0, foldedOps = 0;       // compute ops before / after folding
  size_t gridsConsidered = 0, configsConsidered = 0, solves = 0;
  /// Configurations whose pipeline was never simulated: a lower bound on
  /// their step already lost (PlanOptions::boundPipelines).
  size_t configsBounded = 0;
  bool exact = true;                   // every block solved exactly
  /// Solves under the memory cap (where no layout fits as it is), and how
  /// many of them are proven cheapest under the cap (or that none fits)
  /// rather than the Lagrangian heuristic's answer.
  size_t cappedSolves = 0, cappedProven = 0;
  /// check-exact: solves checked against brute force (of them, under the
  /// memory cap), and those whose graph was too large to enumerate.
  size_t bruteForceChecks = 0, bruteForceSkipped = 0, bruteForceCappedChecks = 0;
  bool feasible = true;
  double shortfallBytes = 0;           // when nothing fits: the smallest excess
  double foldSeconds = 0, searchSeconds = 0, verifySeconds = 0, totalSeconds = 0;
  /// Where the search's time goes: building strategy graphs, solving them,
  /// pricing each solution's units (per op, so it follows the depth), and
  /// cutting stages and pricing configurations (per unit: also the depth).
  struct Phases {
    double graphs = 0, solves = 0, units = 0, stages = 0;
  } phases;
  size_t placed = 0;       // plans over memory placed (place-memory=true)
  double placeSeconds = 0; // their placement, and the winner's again
  std::optional<Estimate> estimate;    // of the chosen plan, when verified
  /// Of a placed winner (which has no verified estimate): at its placed step.
  struct Throughput {
    double samplesPerSecond = 0, tflopsPerDevice = 0, mfu = 0;
  };
  std::optional<Throughput> placedThroughput;
  std::vector<std::string> notes;
  PlanOptions options;
  std::string clusterName;
};

/// Searches and, on success, annotates `module` with the chosen plan. Fails
/// with an error on the module when the input cannot be planned; a plan
/// that does not fit is a success with `feasible == false` (the module is
/// left unannotated and the report says by how much it missed).
FailureOr<PlanResult> planModule(ModuleOp module, const PlanOptions &options);

void printPlan(const PlanResult &plan, llvm::raw_ostream &os);
llvm::json::Value planToJSON(const PlanResult &plan);

} // namespace mlir::loom

#endif // LOOM_PLAN_SEARCH_H
