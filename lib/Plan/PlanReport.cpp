//===- PlanReport.cpp - the readable and JSON plan reports ----------------===//

#include "loom/Plan/Search.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

static std::string gib(double bytes) {
  return llvm::formatv("{0:F2} GiB", bytes / (1ull << 30)).str();
}
static std::string secs(double s) {
  if (s < 1e-3)
    return llvm::formatv("{0:F1} us", s * 1e6).str();
  if (s < 1)
    return llvm::formatv("{0:F2} ms", s * 1e3).str();
  return llvm::formatv("{0:F3} s", s).str();
}

void mlir::loom::printPlan(const PlanResult &p, llvm::raw_ostream &os) {
  const PlanCandidate &b = p.best;
  os << "loom-plan: " << p.clusterName << ", "
     << (p.options.training ? "train" : "infer") << ", level="
     << (p.options.thorough ? "thorough" : "fast")
     << (p.options.fold ? "" : ", unfolded") << "\n";
  os << llvm::formatv("  search: {0} ops -> {1} after folding; {2} grids, {3} "
                      "solves, {4} configurations ({5} bounded); {6}\n",
                      p.ops, p.foldedOps, p.gridsConsidered, p.solves,
                      p.configsConsidered, p.configsBounded,
                      !p.options.thorough ? "greedy (level=fast)"
                      : p.exact           ? "exact"
                                          : "not exact (greedy fallback)");
  if (p.options.thorough && p.cappedSolves)
    os << llvm::formatv("          under the memory cap: {0} of {1} solves "
                        "exact, the rest by the Lagrangian heuristic\n",
                        p.cappedProven, p.cappedSolves);
  os << "  time:   fold " << secs(p.foldSeconds) << ", search " << secs(p.searchSeconds)
     << " (graphs " << secs(p.phases.graphs) << ", solves " << secs(p.phases.solves)
     << ", units " << secs(p.phases.units) << ", stages " << secs(p.phases.stages)
     << "), verify " << secs(p.verifySeconds);
  if (p.options.placeMemory)
    os << ", place " << secs(p.placeSeconds) << " (" << p.placed << " plans over memory)";
  os << ", total " << secs(p.totalSeconds) << "\n";
  auto printRunnersUp = [&] {
    if (p.runnersUp.empty())
      return;
    os << "  runners-up:\n";
    for (const PlanCandidate &c : p.runnersUp) {
      os << "    " << c.describe() << ": " << secs(c.stepTime);
      if (c.verifiedStepTime)
        os << " (estimator " << secs(*c.verifiedStepTime) << ")";
      if (c.placedStepTime)
        os << " (placed " << secs(*c.placedStepTime) << ")";
      os << ", " << gib(c.finalPeakMemory())
         << " -- " << c.verdict << "\n";
    }
  };
  if (!p.feasible) {
    os << "  NO PLAN FITS: the closest (" << b.describe()
       << (b.placedDevicePeak ? ", memory placed" : "") << ") needs "
       << bytesText(b.finalPeakMemory()) << " per device, " << bytesText(p.shortfallBytes)
       << " over the limit\n";
    printRunnersUp();
    for (const std::string &n : p.notes)
      os << "  note: " << n << "\n";
    return;
  }
  os << "  plan:   " << b.describe() << "\n";
  os << "  device order (inner to outer):";
  for (unsigned a : b.deviceOrder)
    os << " " << b.axisNames[a];
  os << "\n";
  os << "  step:   " << secs(b.stepTime) << " (search model)";
  if (b.verifiedStepTime)
    os << ", " << secs(*b.verifiedStepTime) << " (estimator)";
  os << "\n  memory: " << gib(b.peakMemory) << " per device (search model"
     << (b.placement.empty() ? "" : ", before placement") << ")";
  if (b.verifiedPeakMemory)
    os << ", " << gib(*b.verifiedPeakMemory) << " (estimator)";
  os << "\n";
  if (!b.placement.empty())
    os << "  placed: " << b.placement << ": " << secs(*b.placedStepTime) << " per step, "
       << gib(*b.placedDevicePeak) << " per device, host->device "
       << gib(*b.placedHostToDevice) << " per step"
       << llvm::formatv(" ({0:F2}x the lower bound)",
                        *b.placedHostToDeviceBound > 0
                            ? *b.placedHostToDevice / *b.placedHostToDeviceBound
                            : 1.0)
       << " (loom.placement)\n";
  std::optional<PlanResult::Throughput> rates = p.placedThroughput;
  if (p.estimate)
    rates = {p.estimate->samplesPerSecond(), p.estimate->modelTflopsPerDevice(),
             p.estimate->mfu()};
  if (rates)
    os << llvm::formatv("  throughput: {0:F1} samples/s, {1:F1} TFLOP/s per device, "
                        "MFU {2:F1}%{3}\n",
                        rates->samplesPerSecond, rates->tflopsPerDevice, 100 * rates->mfu,
                        p.estimate ? "" : " (placed)");
  for (auto [i, blk] : llvm::enumerate(p.blocks)) {
    os << llvm::formatv("  block {0}: {1} copies x {2} ops\n", i, blk.copies, blk.opsPerCopy);
    for (const OpStrategy &s : blk.ops)
      if (s.strategy.find("[") != std::string::npos)
        os << "    " << s.op << ": " << s.strategy << "\n";
  }
  if (!p.otherOps.empty()) {
    os << "  outside blocks:\n";
    for (const OpStrategy &s : p.otherOps)
      os << "    " << s.op << ": " << s.strategy << "\n";
  }
  for (const std::string &s : p.stages)
    os << "  " << s << "\n";
  printRunnersUp();
  for (const std::string &n : p.notes)
    os << "  note: " << n << "\n";
}

static llvm::json::Value candidateToJSON(const PlanCandidate &c) {
  llvm::json::Array shape, names, order;
  for (int64_t d : c.gridShape)
    shape.push_back(d);
  for (const std::string &n : c.axisNames)
    names.push_back(n);
  for (unsigned a : c.deviceOrder)
    order.push_back(a);
  llvm::json::Object o{
      {"plan", c.describe()},
      {"grid", std::move(shape)},
      {"axis_names", std::move(names)},
      {"device_order", std::move(order)},
      {"pipeline_axis", c.pipelineAxis},
      {"pipeline", c.pipeline},
      {"virtual_stages", c.virtualStages},
      {"data_parallel", c.dataParallel},
      {"micro_batches", c.microBatches},
      {"schedule", ::loom::stringifyPipelineSchedule(c.schedule)},
      {"kfkb_group", c.kfkbGroup},
      {"zero", c.zeroStage},
      {"recompute", c.recompute},
      {"memory_capped_layouts", c.memoryCappedLayouts},
      {"step_time_s", c.stepTime},
      {"peak_memory_bytes", c.peakMemory},
      {"fits", c.fits},
      {"verdict", c.verdict},
  };
  if (c.verifiedStepTime)
    o["estimated_step_time_s"] = *c.verifiedStepTime;
  if (c.verifiedPeakMemory)
    o["estimated_peak_memory_bytes"] = *c.verifiedPeakMemory;
  if (!c.placement.empty()) {
    o["placement"] = c.placement;
    o["placed_step_time_s"] = *c.placedStepTime;
    o["placed_device_peak_bytes"] = *c.placedDevicePeak;
    o["placed_h2d_bytes_per_step"] = *c.placedHostToDevice;
    o["placed_h2d_lower_bound_bytes"] = *c.placedHostToDeviceBound;
  }
  if (!c.placementWhy.empty())
    o["placement_shortfall"] = c.placementWhy;
  return o;
}

llvm::json::Value mlir::loom::planToJSON(const PlanResult &p) {
  llvm::json::Array runners, blocks, stages, others, notes;
  for (const PlanCandidate &c : p.runnersUp)
    runners.push_back(candidateToJSON(c));
  auto strategies = [](const std::vector<OpStrategy> &ops) {
    llvm::json::Array a;
    for (const OpStrategy &s : ops)
      a.push_back(llvm::json::Object{{"op", s.op}, {"strategy", s.strategy}});
    return a;
  };
  for (const BlockPlan &b : p.blocks)
    blocks.push_back(llvm::json::Object{{"copies", b.copies},
                                        {"ops_per_copy", b.opsPerCopy},
                                        {"ops", strategies(b.ops)}});
  for (const std::string &s : p.stages)
    stages.push_back(s);
  for (const std::string &n : p.notes)
    notes.push_back(n);
  llvm::json::Object o{
      {"cluster", p.clusterName},
      {"mode", p.options.training ? "train" : "infer"},
      {"level", p.options.thorough ? "thorough" : "fast"},
      {"fold", p.options.fold},
      {"feasible", p.feasible},
      {"shortfall_bytes", p.shortfallBytes},
      {"ops", static_cast<int64_t>(p.ops)},
      {"folded_ops", static_cast<int64_t>(p.foldedOps)},
      {"grids_considered", static_cast<int64_t>(p.gridsConsidered)},
      {"configs_considered", static_cast<int64_t>(p.configsConsidered)},
      {"configs_bounded", static_cast<int64_t>(p.configsBounded)},
      {"solves", static_cast<int64_t>(p.solves)},
      {"exact", p.exact},
      {"memory_capped_solves", static_cast<int64_t>(p.cappedSolves)},
      {"memory_capped_exact", static_cast<int64_t>(p.cappedProven)},
      {"brute_force_checks", static_cast<int64_t>(p.bruteForceChecks)},
      {"brute_force_skipped", static_cast<int64_t>(p.bruteForceSkipped)},
      {"brute_force_capped_checks", static_cast<int64_t>(p.bruteForceCappedChecks)},
      {"fold_seconds", p.foldSeconds},
      {"search_seconds", p.searchSeconds},
      {"search_phase_seconds",
       llvm::json::Object{{"graphs", p.phases.graphs},
                          {"solves", p.phases.solves},
                          {"units", p.phases.units},
                          {"stages", p.phases.stages}}},
      {"verify_seconds", p.verifySeconds},
      {"place_memory", p.options.placeMemory},
      {"place_seconds", p.placeSeconds},
      {"plans_placed", static_cast<int64_t>(p.placed)},
      {"total_seconds", p.totalSeconds},
      {"best", candidateToJSON(p.best)},
      {"runners_up", std::move(runners)},
      {"blocks", std::move(blocks)},
      {"other_ops", strategies(p.otherOps)},
      {"stages", std::move(stages)},
      {"notes", std::move(notes)},
  };
  if (p.estimate)
    o["estimate"] = estimateToJSON(*p.estimate);
  if (const auto &t = p.placedThroughput)
    o["placed_throughput"] = llvm::json::Object{
        {"samples_per_s", t->samplesPerSecond},
        {"model_tflops_per_device", t->tflopsPerDevice},
        {"mfu", t->mfu}};
  return o;
}
