//===- Timeline.cpp - the placed iteration as a Chrome trace --------------===//
//
// The chosen placement's steady-state iteration, one lane per resource, in
// the trace-event format chrome://tracing and Perfetto read: what the plan
// report sums up (stalls, the device's wait for the update, bytes per link)
// laid out in time. The times are the ones placement priced: the update
// pipeline's trace (UpdateTimeline::trace) where the update runs off the
// device, the chunk plan's transfers moved onto it (PlanOnTimeline), and
// otherwise the device's steps laid end to end.
//
//===----------------------------------------------------------------------===//

#include "DeviceProgram.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::placement;
namespace lm = ::loom::memory;

namespace {

/// The lanes, as trace-event thread ids.
enum Lane : int64_t {
  DeviceLane = 0,
  HostToDevice,
  DeviceToHost,
  CpuOptimizer,
  Network,
};

class TraceWriter {
public:
  /// Events from here on are device `pid`'s.
  void device(int64_t pid, StringRef what) {
    this->pid = pid;
    events.push_back(
        llvm::json::Object{{"name", "process_name"},
                           {"ph", "M"},
                           {"pid", pid},
                           {"args", llvm::json::Object{{"name", what.str()}}}});
    for (auto [lane, name] : {std::pair{DeviceLane, "device"},
                              {HostToDevice, "host -> device"},
                              {DeviceToHost, "device -> host"},
                              {CpuOptimizer, "CPU optimizer"},
                              {Network, "network"}})
      events.push_back(
          llvm::json::Object{{"name", "thread_name"},
                             {"ph", "M"},
                             {"pid", pid},
                             {"tid", static_cast<int64_t>(lane)},
                             {"args", llvm::json::Object{{"name", name}}}});
  }
  /// A complete event over [start, end) seconds; none where empty.
  void span(Lane lane, StringRef what, double start, double end,
            llvm::json::Object args = {}) {
    if (!(end > start))
      return;
    // (Strings copied: a json::Value holds a StringRef by reference.)
    events.push_back(llvm::json::Object{{"name", what.str()},
                                        {"ph", "X"},
                                        {"pid", pid},
                                        {"tid", static_cast<int64_t>(lane)},
                                        {"ts", start * 1e6},
                                        {"dur", (end - start) * 1e6},
                                        {"args", std::move(args)}});
  }
  void instant(StringRef what, double at) {
    events.push_back(
        llvm::json::Object{{"name", what.str()},
                           {"ph", "i"},
                           {"s", "p"},
                           {"pid", pid},
                           {"tid", static_cast<int64_t>(DeviceLane)},
                           {"ts", at * 1e6}});
  }
  llvm::json::Value take(llvm::json::Object meta) {
    return llvm::json::Object{{"traceEvents", std::move(events)},
                              {"displayTimeUnit", "ms"},
                              {"otherData", std::move(meta)}};
  }

private:
  int64_t pid = 0;
  llvm::json::Array events;
};

} // namespace

llvm::Error mlir::loom::writeTimeline(const MemoryPlacement &p,
                                      llvm::StringRef path) {
  const PlacementCandidate *c = p.best();
  if (!c || !p.programs)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no placement fits, so there is no timeline");
  const std::vector<DeviceProgram> &devices = p.programs->devices;
  const bool streamed = c->params != Tier::Device;
  TraceWriter trace;
  int64_t fetches = 0;
  double last = 0; // the latest next-iteration start over the devices
  // (Streamed parameters: one-device programs.)
  for (size_t d = 0; d < (streamed ? 1 : devices.size()); ++d) {
    const DeviceProgram &dev = devices[d];
    trace.device(dev.device,
                 llvm::formatv("device {0}: {1}", dev.device, c->name).str());
    const lm::IterationTrace *pipeline =
        d < p.deviceUpdates.size() && p.deviceUpdates[d]
            ? &p.deviceUpdates[d]->trace
            : nullptr;

    // The device's steps, named, and when each starts and ends.
    std::vector<std::string> names;
    std::vector<double> starts, ends;
    // A streamed training step of several micro-batches runs the earlier
    // ones first, priced as one step (Placement.cpp's priceStreamed).
    const size_t lead = streamed && pipeline
                            ? earlierMicroBatchSteps(p.microBatches, p.training)
                            : 0;
    if (lead)
      names.push_back(
          p.microBatches == 2
              ? std::string("micro-batch 1")
              : llvm::formatv("micro-batches 1 to {0}", p.microBatches - 1)
                    .str());
    if (streamed) {
      for (const lm::Step &s : p.problem.steps)
        names.push_back(s.name);
    } else {
      std::vector<double> seconds = framedSteps(dev, 1.0, p.training, &names);
      if (!pipeline) {
        // Nothing offloaded: the steps end to end, then the device's update.
        double clock = 0;
        for (double s : seconds) {
          starts.push_back(clock);
          ends.push_back(clock += s);
        }
      }
    }
    double next = 0;
    if (pipeline) {
      starts = pipeline->stepStarts;
      ends = pipeline->stepEnds;
      next = pipeline->nextStart;
    } else if (streamed) {
      // Inference: the chunk plan's own clock, each step after its stalls.
      for (auto [s, end] : llvm::enumerate(p.plan.stepEnds)) {
        if (s >= p.problem.steps.size())
          break;
        starts.push_back(end - p.problem.steps[s].seconds);
        ends.push_back(end);
      }
      next = p.plan.iterationSeconds;
    }
    size_t n = std::min({names.size(), starts.size(), ends.size()});
    for (size_t s = 0; s < n; ++s)
      trace.span(DeviceLane, names[s], starts[s], ends[s],
                 llvm::json::Object{{"step", static_cast<int64_t>(s)}});
    if (pipeline) {
      trace.span(DeviceLane, "optimizer step (device)",
                 pipeline->deviceUpdate.start, pipeline->deviceUpdate.end);
      trace.span(HostToDevice, "kept weights reloaded for the device's update",
                 pipeline->deviceReloads.start, pipeline->deviceReloads.end);
    } else if (n) {
      double update = p.training && c->optimizer == Tier::Device
                          ? dev.times.optimizerStep
                          : 0;
      trace.span(DeviceLane, "optimizer step (device)", ends[n - 1],
                 ends[n - 1] + update);
      next = std::max(next, ends[n - 1] + update);
    }

    // The chunk schedule's transfers, each starting where its step moved
    // it (gradient staging may hold steps back) and taking its own time.
    if (streamed && n == lead + p.problem.steps.size() &&
        p.plan.iterations == 1 && n > lead) {
      const std::vector<double> planStarts(starts.begin() + lead, starts.end());
      lm::PlanOnTimeline on(p.plan, planStarts);
      auto place = [&](double start, double end) {
        double at = pipeline ? on.at(start) : start;
        return std::make_pair(at, at + end - start);
      };
      for (const lm::Fetch &f : p.plan.fetches) {
        auto [start, end] = place(f.start, f.end);
        trace.span(
            HostToDevice, llvm::formatv("fetch chunk {0}", f.chunk).str(),
            start, end,
            llvm::json::Object{{"chunk", static_cast<int64_t>(f.chunk)},
                               {"for_step", static_cast<int64_t>(f.forStep)},
                               {"bytes", p.problem.chunkBytes[f.chunk]}});
        ++fetches;
      }
      for (const lm::Reload &r : p.plan.reloads) {
        auto [start, end] = place(r.start, r.end);
        trace.span(
            HostToDevice,
            llvm::formatv("activations back for step {0}", r.forStep).str(),
            start, end,
            llvm::json::Object{{"for_step", static_cast<int64_t>(r.forStep)}});
      }
    }
    // The update pipeline's work for each tensor.
    if (pipeline)
      for (const lm::TensorTimes &t : pipeline->tensors) {
        trace.span(Network, "reduce " + t.name, t.reduce.start, t.reduce.end);
        trace.span(DeviceToHost, "gradient " + t.name, t.down.start,
                   t.down.end);
        trace.span(CpuOptimizer, "update " + t.name, t.update.start,
                   t.update.end);
        trace.span(HostToDevice, "parameters " + t.name, t.up.start, t.up.end);
        trace.span(Network, "gather " + t.name, t.gather.start, t.gather.end);
      }
    trace.instant("next iteration", next);
    last = std::max(last, next);
  }

  llvm::json::Value json = trace.take(llvm::json::Object{
      {"placement", c->name},
      {"devices", static_cast<int64_t>(streamed ? 1 : devices.size())},
      {"step_ms", c->stepSeconds * 1e3},
      {"next_iteration_ms", last * 1e3},
      {"fetches", fetches}});
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", json) << "\n";
    return llvm::Error::success();
  });
}
