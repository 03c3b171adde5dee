//===- Report.cpp - the estimate as a table and as JSON ------------------===//
//
// Both forms carry the same numbers; docs/cost-model.md documents the JSON
// keys. Units: seconds, bytes, FLOPs in the JSON; ms, GiB, TFLOP/s in the
// table.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Estimate.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

static constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

static std::string gridText(const Estimate &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (size_t i = 0; i < e.gridShape.size(); ++i)
    os << (i ? " x " : "") << e.axisNames[i] << "=" << e.gridShape[i];
  return s;
}

static std::string spanText(const Estimate &e, const ::loom::AxisSpan &span) {
  std::string s;
  llvm::raw_string_ostream os(s);
  bool first = true;
  for (auto [l, n] : llvm::enumerate(span.membersPerLevel)) {
    if (n == 1)
      continue;
    os << (first ? "" : " x ") << e.cluster.levels[l].name << ":" << n;
    first = false;
  }
  if (first)
    os << "-";
  return s;
}

/// Four significant digits: the table serves a 4-layer toy and a 175B model.
static std::string g4(double x) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.4g", x);
  return buf;
}

static double tokensPerSecond(const Estimate &e) {
  return e.tokensPerSample ? e.samplesPerSecond() * e.tokensPerSample : 0;
}

void mlir::loom::printEstimate(const Estimate &e, llvm::raw_ostream &os) {
  const bool training = e.options.training;
  os << "loom-estimate: " << (training ? "training" : "inference") << " step on "
     << e.clusterName << " (" << e.cluster.numDevices() << " x "
     << e.cluster.device.name << ")\n";
  os << "  grid        " << gridText(e) << "  (" << e.devices << " devices)\n";
  for (size_t i = 0; i < e.gridShape.size(); ++i)
    os << "    axis " << e.axisNames[i] << ": " << spanText(e, e.axisSpans[i])
       << (static_cast<int>(i) == e.pipelineAxis ? "  [pipeline]" : "") << "\n";
  os << llvm::formatv("  batch       global {0}, micro-batch {1} x data-parallel {2}"
                      " -> {3} micro-batches\n",
                      e.globalBatch, e.microBatch, e.dataParallel, e.microBatches);
  os << "  pipeline    " << e.stages << " stage(s) on " << e.pipelineDevices
     << " device(s), schedule "
     << ::loom::stringifyPipelineSchedule(e.options.schedule)
     << ", precision " << e.precisionName << ", recompute " << e.options.recompute
     << (e.options.activations == "host" ? ", activations offloaded to host" : "")
     << ", zero " << e.options.zeroStage << "\n\n";

  os << "  per op class (per device, one micro-batch, all stages):\n";
  os << llvm::formatv("    {0,-13} {1,6} {2,12} {3,10} {4,10} {5,10} {6,10}\n",
                      "class", "ops", "GFLOP", "MB", "fwd ms", "bwd ms", "comm ms");
  for (const auto &[name, c] : e.opClasses)
    os << llvm::formatv("    {0,-13} {1,6} {2,12} {3,10} {4,10} {5,10} {6,10}\n",
                        name, c.count, g4(c.flops / 1e9), g4(c.bytes / 1e6),
                        g4(c.forward * 1e3), g4(c.backward * 1e3), g4(c.comm * 1e3));

  os << "\n  per stage (per micro-batch; memory per device in GiB):\n";
  os << llvm::formatv("    {0,5} {1,5} {2,9} {3,9} {4,9} {5,9} {6,9} {7,10}\n",
                      "stage", "dev", "fwd ms", "bwd ms", "comm ms", "send ms",
                      "sync ms", "act GiB");
  for (const StageEstimate &s : e.stageEstimates)
    os << llvm::formatv("    {0,5} {1,5} {2,9} {3,9} {4,9} {5,9} {6,9} {7,10}\n",
                        s.stage, s.device, g4(s.forward * 1e3), g4(s.backward * 1e3),
                        g4((s.forwardComm + s.backwardComm) * 1e3), g4(s.sendForward * 1e3),
                        g4(s.gradSync * 1e3), g4(s.savedActivationBytes / kGiB));

  os << "\n  memory per pipeline device (GiB):\n";
  os << llvm::formatv("    {0,5} {1,9} {2,9} {3,9} {4,9} {5,9} {6,9} {7,9}\n", "dev",
                      "weights", "grads", "optim", "acts", "temp", "comm", "total");
  for (const DeviceMemory &d : e.deviceMemory)
    os << llvm::formatv("    {0,5} {1,9} {2,9} {3,9} {4,9} {5,9} {6,9} {7,9}\n",
                        d.device, g4(d.memory.weights / kGiB), g4(d.memory.gradients / kGiB),
                        g4(d.memory.optimizer / kGiB), g4(d.memory.activations / kGiB),
                        g4(d.memory.temporaries / kGiB), g4(d.memory.commBuffers / kGiB),
                        g4(d.memory.total() / kGiB));

  if (e.options.activations == "host" && e.options.training) {
    os << "\n  activation offload (per micro-batch; host memory per device):\n";
    os << llvm::formatv("    {0,5} {1,12} {2,14} {3,14}\n", "stage", "to host MB",
                        "fwd stall ms", "bwd stall ms");
    for (const StageEstimate &s : e.stageEstimates)
      os << llvm::formatv("    {0,5} {1,12} {2,14} {3,14}\n", s.stage,
                          g4(s.offloadedActivationBytes / 1e6),
                          g4(s.offloadForwardStall * 1e3),
                          g4(s.offloadBackwardStall * 1e3));
    for (const DeviceMemory &d : e.deviceMemory)
      os << llvm::formatv("    device {0}: {1} GiB of activations in host memory\n",
                          d.device, g4(d.hostActivationBytes / kGiB));
  }

  if (!e.collectives.empty()) {
    os << "\n  collectives per step (busiest device):\n";
    for (const auto &[kind, c] : e.collectives)
      os << llvm::formatv("    {0,-15} {1,8} x  {2,12} MB  {3,10} ms\n", kind,
                          c.count, g4(c.bytes / 1e6), g4(c.seconds * 1e3));
  }

  const DeviceMemory *peak = nullptr;
  for (const DeviceMemory &d : e.deviceMemory)
    if (!peak || d.memory.total() > peak->memory.total())
      peak = &d;
  double modelTflops = e.modelTflopsPerDevice();
  double hwTflops = e.hardwareTflopsPerDevice();
  os << "\n  totals:\n";
  os << llvm::formatv("    step time              {0} s\n", g4(e.stepTime));
  os << llvm::formatv("    samples/s              {0}\n", g4(e.samplesPerSecond()));
  if (e.tokensPerSample)
    os << llvm::formatv("    tokens/s               {0}\n", g4(tokensPerSecond(e)));
  os << llvm::formatv("    TFLOP/s per device     {0} model, {1} hardware\n",
                      g4(modelTflops), g4(hwTflops));
  os << llvm::formatv("    MFU                    {0} %\n",
                      g4(100 * e.mfu()));
  os << llvm::formatv("    pipeline bubble        {0:F1} %\n", 100 * e.bubbleFraction);
  os << llvm::formatv("    communication          {0} s per step, {1} s exposed\n",
                      g4(e.commSeconds), g4(e.exposedCommSeconds));
  if (peak)
    os << llvm::formatv("    peak memory per device {0} GiB on pipeline device {1}: {2}\n",
                        g4(peak->memory.total() / kGiB), peak->device, peak->peakAt);
  for (const std::string &note : e.notes)
    os << "  note: " << note << "\n";
}

llvm::json::Value mlir::loom::estimateToJSON(const Estimate &e) {
  using llvm::json::Array;
  using llvm::json::Object;
  auto memoryJSON = [](const MemoryBreakdown &m) {
    return Object{{"weights", m.weights},         {"gradients", m.gradients},
                  {"optimizer", m.optimizer},     {"activations", m.activations},
                  {"temporaries", m.temporaries}, {"comm_buffers", m.commBuffers},
                  {"total", m.total()}};
  };
  Array axes;
  for (size_t i = 0; i < e.gridShape.size(); ++i) {
    Array levels;
    for (auto [l, n] : llvm::enumerate(e.axisSpans[i].membersPerLevel))
      if (n > 1)
        levels.push_back(Object{{"level", e.cluster.levels[l].name}, {"members", n}});
    axes.push_back(Object{{"name", e.axisNames[i]},
                          {"size", e.gridShape[i]},
                          {"pipeline", static_cast<int>(i) == e.pipelineAxis},
                          {"levels", std::move(levels)}});
  }
  Array classes;
  for (const auto &[name, c] : e.opClasses)
    classes.push_back(Object{{"class", name},
                             {"count", c.count},
                             {"flops", c.flops},
                             {"bytes", c.bytes},
                             {"forward_s", c.forward},
                             {"backward_s", c.backward},
                             {"comm_s", c.comm}});
  Array stages;
  for (const StageEstimate &s : e.stageEstimates)
    stages.push_back(Object{{"stage", s.stage},
                            {"device", s.device},
                            {"ops", s.ops},
                            {"forward_s", s.forward},
                            {"backward_s", s.backward},
                            {"forward_comm_s", s.forwardComm},
                            {"backward_comm_s", s.backwardComm},
                            {"recompute_s", s.recompute},
                            {"send_forward_s", s.sendForward},
                            {"send_backward_s", s.sendBackward},
                            {"saved_activation_bytes", s.savedActivationBytes},
                            {"offloaded_activation_bytes", s.offloadedActivationBytes},
                            {"offload_forward_stall_s", s.offloadForwardStall},
                            {"offload_backward_stall_s", s.offloadBackwardStall},
                            {"parameters", s.parameters},
                            {"grad_sync_s", s.gradSync},
                            {"grad_sync_exposed_s", s.gradSyncExposed},
                            {"optimizer_step_s", s.optimizerStep}});
  Array devices;
  for (const DeviceMemory &d : e.deviceMemory) {
    Array timeline;
    for (auto [t, b] : d.timeline)
      timeline.push_back(Array{t, b});
    devices.push_back(Object{{"device", d.device},
                             {"memory", memoryJSON(d.memory)},
                             {"micro_batches_in_flight", d.microBatchesInFlight},
                             {"host_activation_bytes", d.hostActivationBytes},
                             {"peak_at", d.peakAt},
                             {"timeline", std::move(timeline)}});
  }
  Object collectives;
  for (const auto &[kind, c] : e.collectives)
    collectives[kind] = Object{{"count", c.count}, {"bytes", c.bytes}, {"seconds", c.seconds}};
  Array notes;
  for (const std::string &n : e.notes)
    notes.push_back(n);

  Array shape;
  for (int64_t d : e.gridShape)
    shape.push_back(d);
  double modelTflops = e.modelTflopsPerDevice();
  double hwTflops = e.hardwareTflopsPerDevice();
  return Object{
      {"version", 1},
      {"mode", e.options.training ? "train" : "infer"},
      {"cluster", Object{{"name", e.clusterName},
                         {"device", e.cluster.device.name},
                         {"devices", e.cluster.numDevices()}}},
      {"grid", Object{{"shape", std::move(shape)},
                      {"devices", e.devices},
                      {"axes", std::move(axes)}}},
      {"batch", Object{{"global", e.globalBatch},
                       {"micro_batch", e.microBatch},
                       {"data_parallel", e.dataParallel},
                       {"micro_batches", e.microBatches},
                       {"tokens_per_sample", e.tokensPerSample}}},
      {"pipeline", Object{{"stages", e.stages},
                          {"devices", e.pipelineDevices},
                          {"virtual_stages", e.virtualStages},
                          {"schedule", ::loom::stringifyPipelineSchedule(e.options.schedule)},
                          {"makespan_s", e.pipelineTime},
                          {"bubble_fraction", e.bubbleFraction}}},
      {"precision", e.precisionName},
      {"recompute", e.options.recompute},
      {"zero", e.options.zeroStage},
      {"totals", Object{{"step_time_s", e.stepTime},
                        {"samples_per_s", e.samplesPerSecond()},
                        {"tokens_per_s", tokensPerSecond(e)},
                        {"model_flops", e.modelFlops},
                        {"hardware_flops", e.hardwareFlops},
                        {"model_tflops_per_device", modelTflops},
                        {"hardware_tflops_per_device", hwTflops},
                        {"mfu", e.mfu()},
                        {"peak_memory_bytes", e.peakMemory()},
                        {"fits", e.peakMemory() <= e.cluster.device.memoryBytes},
                        {"comm_s", e.commSeconds},
                        {"exposed_comm_s", e.exposedCommSeconds},
                        {"bubble_fraction", e.bubbleFraction}}},
      {"op_classes", std::move(classes)},
      {"stages", std::move(stages)},
      {"devices", std::move(devices)},
      {"collectives", std::move(collectives)},
      {"notes", std::move(notes)},
      {"estimate_wall_s", e.estimateSeconds}};
}

std::string mlir::loom::bytesText(double b) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && std::abs(b) >= 1024) {
    b /= 1024;
    ++u;
  }
  return llvm::formatv("{0:F2} {1}", b, units[u]).str();
}
