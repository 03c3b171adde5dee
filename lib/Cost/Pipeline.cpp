//===- Pipeline.cpp - pipeline schedules, simulated -----------------------===//
//
// Builds each device's task order for a schedule (GPipe, 1F1B, Megatron-LM's
// interleaved 1F1B, kFkB, or forward-only inference), then replays the orders
// as a discrete-event simulation. A device runs its list strictly in order;
// a task starts when the device is free and the one task it depends on (the
// same micro-batch on the neighbouring stage, plus the transfer) has ended.
// Tasks are started in time order from a heap holding each device's next
// ready task, so the run costs O(tasks * log devices) and a schedule whose
// orders wait on each other is reported as a deadlock instead of looping.
// docs/cost-model.md describes the orders and cites their sources.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Pipeline.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

using namespace loom;

llvm::StringRef loom::stringifyPipelineSchedule(PipelineSchedule s) {
  switch (s) {
  case PipelineSchedule::GPipe:
    return "gpipe";
  case PipelineSchedule::OneFOneB:
    return "1f1b";
  case PipelineSchedule::Interleaved1F1B:
    return "interleaved_1f1b";
  case PipelineSchedule::KFKB:
    return "kfkb";
  }
  return "unknown";
}

std::optional<PipelineSchedule> loom::parsePipelineSchedule(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<PipelineSchedule>>(s)
      .Case("gpipe", PipelineSchedule::GPipe)
      .Case("1f1b", PipelineSchedule::OneFOneB)
      .Cases({"interleaved", "interleaved_1f1b"}, PipelineSchedule::Interleaved1F1B)
      .Case("kfkb", PipelineSchedule::KFKB)
      .Default(std::nullopt);
}

using Step = PipelineStep;
using Order = std::vector<Step>;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "pipeline: " + message);
}

/// GPipe (Huang et al. 2019): every forward, then every backward. Backwards
/// run in micro-batch order 0..m-1, matching the forwards; for uniform
/// stages the makespan is the same either way.
static Order gpipeOrder(int64_t m, bool training) {
  Order order;
  order.reserve(training ? 2 * m : m);
  for (int64_t i = 0; i < m; ++i)
    order.push_back({0, int32_t(i), false});
  if (training)
    for (int64_t i = 0; i < m; ++i)
      order.push_back({0, int32_t(i), true});
  return order;
}

/// 1F1B in units of `group` micro-batches: `group` == 1 is PipeDream-flush /
/// Megatron-LM's non-interleaved schedule (Narayanan et al. 2021); larger
/// groups give kFkB. Device d warms up with p-d-1 groups of forwards, then
/// alternates one group of forwards with one group of backwards, then drains
/// the remaining backwards. The last group may be short when group does not
/// divide m.
static Order oneFOneBOrder(int64_t m, int64_t p, int64_t d, int64_t group) {
  int64_t groups = (m + group - 1) / group;
  int64_t warmup = std::min(p - d - 1, groups);
  Order order;
  order.reserve(2 * m);
  auto emitGroup = [&](int64_t g, bool backward) {
    for (int64_t i = g * group, e = std::min(m, i + group); i < e; ++i)
      order.push_back({0, int32_t(i), backward});
  };
  for (int64_t g = 0; g < warmup; ++g)
    emitGroup(g, false);
  for (int64_t g = 0; g + warmup < groups; ++g) {
    emitGroup(g + warmup, false);
    emitGroup(g, true);
  }
  for (int64_t g = groups - warmup; g < groups; ++g)
    emitGroup(g, true);
  return order;
}

/// Megatron-LM's forward_backward_pipelining_with_interleaving (Narayanan et
/// al., SC'21): the k-th forward on a device is chunk (k / p) % v of
/// micro-batch (k / (p v)) p + k % p; the k-th backward walks the chunks in
/// reverse. Device d warms up with 2 (p - d - 1) + (v - 1) p forwards (capped
/// at m v), then runs 1F1B, then drains. Forward-only runs take the forward
/// order alone.
static Order interleavedOrder(int64_t m, int64_t p, int64_t v, int64_t d,
                              bool training) {
  int64_t total = m * v;
  auto step = [&](int64_t k, bool backward) {
    int64_t chunk = (k / p) % v;
    if (backward)
      chunk = v - 1 - chunk;
    int64_t microBatch = (k / (p * v)) * p + k % p;
    return Step{int32_t(chunk), int32_t(microBatch), backward};
  };
  Order order;
  order.reserve(training ? 2 * total : total);
  if (!training) {
    for (int64_t k = 0; k < total; ++k)
      order.push_back(step(k, false));
    return order;
  }
  int64_t warmup = std::min(2 * (p - d - 1) + (v - 1) * p, total);
  for (int64_t k = 0; k < warmup; ++k)
    order.push_back(step(k, false));
  for (int64_t k = 0; k + warmup < total; ++k) {
    order.push_back(step(k + warmup, false));
    order.push_back(step(k, true));
  }
  for (int64_t k = total - warmup; k < total; ++k)
    order.push_back(step(k, true));
  return order;
}

/// Checks what every simulation needs: stages spread evenly over devices,
/// at least one micro-batch.
static llvm::Error validateShape(int64_t numStages, const PipelineOptions &options) {
  int64_t p = options.devices, m = options.microBatches;
  if (numStages < 1)
    return fail("no stages");
  if (p < 1)
    return fail(llvm::formatv("devices = {0}: must be >= 1", p));
  if (m < 1)
    return fail(llvm::formatv("microBatches = {0}: must be >= 1", m));
  if (numStages % p != 0)
    return fail(llvm::formatv("{0} stages do not divide over {1} devices",
                              numStages, p));
  // Steps pack indices in 32 bits; 2^31 tasks would not fit in memory anyway.
  if (m > INT32_MAX || numStages > INT32_MAX)
    return fail("too many micro-batches or stages");
  return llvm::Error::success();
}

/// Every stage's costs finite and non-negative.
static llvm::Error validateCosts(llvm::ArrayRef<StageCost> stages) {
  for (size_t j = 0; j < stages.size(); ++j) {
    const StageCost &s = stages[j];
    for (double t : {s.forward, s.backward, s.sendForward, s.sendBackward})
      if (!(t >= 0) || !std::isfinite(t))
        return fail(
            llvm::formatv("stage {0}: costs must be finite and >= 0", j));
  }
  return llvm::Error::success();
}

/// Checks what a built-in schedule needs on top of validateShape.
static llvm::Error validateSchedule(int64_t numStages, const PipelineOptions &options) {
  int64_t p = options.devices, m = options.microBatches;
  int64_t v = numStages / p;
  bool interleaved = options.schedule == PipelineSchedule::Interleaved1F1B;
  if (v > 1 && !interleaved)
    return fail(llvm::formatv(
        "{0} stages on {1} devices ({2} per device) need the "
        "interleaved_1f1b schedule, not {3}",
        numStages, p, v, stringifyPipelineSchedule(options.schedule)));
  if (v > 1 && m % p != 0)
    return fail(llvm::formatv("interleaved_1f1b needs microBatches ({0}) to "
                              "be a multiple of devices ({1})",
                              m, p));
  if (options.training && options.schedule == PipelineSchedule::KFKB &&
      options.kfkbGroup < 1)
    return fail(
        llvm::formatv("kfkbGroup = {0}: must be >= 1", options.kfkbGroup));
  return llvm::Error::success();
}

static Order deviceOrder(const PipelineOptions &options, int64_t v, int64_t d) {
  int64_t m = options.microBatches, p = options.devices;
  if (v > 1)
    return interleavedOrder(m, p, v, d, options.training);
  if (!options.training)
    return gpipeOrder(m, /*training=*/false);
  switch (options.schedule) {
  case PipelineSchedule::GPipe:
    return gpipeOrder(m, /*training=*/true);
  case PipelineSchedule::OneFOneB:
  case PipelineSchedule::Interleaved1F1B: // v == 1: plain 1F1B
    return oneFOneBOrder(m, p, d, 1);
  case PipelineSchedule::KFKB:
    return oneFOneBOrder(m, p, d, options.kfkbGroup);
  }
  return {};
}

/// Every task of the run must appear exactly once, on its own device.
static llvm::Error validateOrders(llvm::ArrayRef<StageCost> stages,
                                  const PipelineOptions &options,
                                  llvm::ArrayRef<Order> orders) {
  int64_t p = options.devices, m = options.microBatches;
  int64_t numStages = int64_t(stages.size()), v = numStages / p;
  if (int64_t(orders.size()) != p)
    return fail(llvm::formatv("{0} orders for {1} devices", orders.size(), p));
  std::vector<bool> seen(numStages * m * 2, false);
  size_t expected = numStages * m * (options.training ? 2 : 1), count = 0;
  for (int64_t d = 0; d < p; ++d) {
    for (const Step &step : orders[d]) {
      if (step.chunk < 0 || step.chunk >= v || step.microBatch < 0 ||
          step.microBatch >= m || (step.backward && !options.training))
        return fail(llvm::formatv(
            "device {0}: order has an invalid task (chunk {1}, micro-batch "
            "{2}, {3})",
            d, step.chunk, step.microBatch,
            step.backward ? "backward" : "forward"));
      size_t key =
          ((step.chunk * p + d) * m + step.microBatch) * 2 + step.backward;
      if (seen[key])
        return fail(llvm::formatv(
            "device {0}: order repeats the {1} of chunk {2}, micro-batch {3}",
            d, step.backward ? "backward" : "forward", step.chunk,
            step.microBatch));
      seen[key] = true;
      ++count;
    }
  }
  if (count != expected)
    return fail(llvm::formatv("orders hold {0} tasks; the run has {1}", count,
                              expected));
  return llvm::Error::success();
}

static llvm::Expected<PipelineResult> simulate(llvm::ArrayRef<StageCost> stages,
                                               const PipelineOptions &options,
                                               llvm::ArrayRef<Order> orders);

llvm::Expected<PipelineOrders> loom::buildPipelineOrders(int64_t numStages,
                                                        const PipelineOptions &options) {
  if (llvm::Error err = validateShape(numStages, options))
    return std::move(err);
  if (llvm::Error err = validateSchedule(numStages, options))
    return std::move(err);
  PipelineOrders built;
  built.options = options;
  built.numStages = numStages;
  int64_t v = numStages / options.devices;
  built.orders.resize(options.devices);
  for (int64_t d = 0; d < options.devices; ++d)
    built.orders[d] = deviceOrder(options, v, d);
  return built;
}

llvm::Expected<PipelineResult> loom::simulatePipeline(const PipelineOrders &orders,
                                                      llvm::ArrayRef<StageCost> stages) {
  if (int64_t(stages.size()) != orders.numStages)
    return fail(llvm::formatv("{0} stage costs for orders built for {1} stages",
                              stages.size(), orders.numStages));
  if (llvm::Error err = validateCosts(stages))
    return std::move(err);
  return simulate(stages, orders.options, orders.orders);
}

llvm::Expected<PipelineResult>
loom::simulatePipeline(llvm::ArrayRef<StageCost> stages,
                       const PipelineOptions &options) {
  auto orders = buildPipelineOrders(int64_t(stages.size()), options);
  if (!orders)
    return orders.takeError();
  return simulatePipeline(*orders, stages);
}

llvm::Expected<PipelineResult>
loom::simulatePipelineOrders(llvm::ArrayRef<StageCost> stages,
                             const PipelineOptions &options,
                             llvm::ArrayRef<std::vector<PipelineStep>> orders) {
  if (llvm::Error err = validateShape(int64_t(stages.size()), options))
    return std::move(err);
  if (llvm::Error err = validateCosts(stages))
    return std::move(err);
  if (llvm::Error err = validateOrders(stages, options, orders))
    return std::move(err);
  return simulate(stages, options, orders);
}

/// Per device and chunk, the most micro-batches whose forward is done and
/// backward not: a device runs its order in sequence, so the order alone
/// fixes it (`v` chunks per device).
static std::vector<std::vector<int64_t>> inFlightPeaks(llvm::ArrayRef<Order> orders,
                                                       int64_t v) {
  std::vector<std::vector<int64_t>> peak;
  for (const Order &order : orders) {
    std::vector<int64_t> held(v, 0), most(v, 0);
    for (const Step &step : order) {
      int64_t &h = held[step.chunk];
      h += step.backward ? -1 : 1;
      most[step.chunk] = std::max(most[step.chunk], h);
    }
    peak.push_back(std::move(most));
  }
  return peak;
}

std::vector<std::vector<int64_t>> loom::peakInFlight(const PipelineOrders &orders) {
  return inFlightPeaks(orders.orders, orders.numStages / orders.options.devices);
}

std::vector<double> loom::pipelineFinishLowerBound(llvm::ArrayRef<StageCost> stages,
                                                   const PipelineOptions &options) {
  const int64_t p = options.devices, numStages = int64_t(stages.size());
  const double m = double(options.microBatches);
  std::vector<double> bound(p, 0.0);
  // Device d holds stages d, d + p, ...; the first of them is reached after
  // micro-batch 0's forward through every stage before it.
  double head = 0;
  for (int64_t s = 0; s < numStages; ++s) {
    const StageCost &c = stages[s];
    if (s < p)
      bound[s] += head;
    bound[s % p] += m * (c.forward + (options.training ? c.backward : 0.0));
    head += c.forward + c.sendForward;
  }
  // A training device's last task is a backward, on a stage at or after
  // the device's first; that micro-batch's backward then runs on every
  // stage before, device e's first stage e among them.
  if (options.training)
    for (int64_t e = p - 2; e >= 0; --e)
      bound[e] = std::max(bound[e], bound[e + 1] + stages[e + 1].sendBackward +
                                        stages[e].backward);
  return bound;
}

/// Replays validated orders. Built-in orders are trusted: they are built to
/// hold every task once.
static llvm::Expected<PipelineResult> simulate(llvm::ArrayRef<StageCost> stages,
                                               const PipelineOptions &options,
                                               llvm::ArrayRef<Order> orders) {
  const int64_t p = options.devices, m = options.microBatches;
  const int64_t numStages = int64_t(stages.size()), v = numStages / p;
  size_t numTasks = 0;
  for (const Order &order : orders)
    numTasks += order.size();

  // End times indexed [microBatch * numStages + stage], so that a task and
  // the one it waits on are neighbours in memory; -1 = not run yet.
  std::vector<double> forwardEnd(numStages * m, -1.0);
  std::vector<double> backwardEnd(options.training ? numStages * m : 0, -1.0);
  auto slot = [numStages](int64_t stage, int64_t microBatch) {
    return microBatch * numStages + stage;
  };

  // When the dependency of `step` on device d is met, or -1 if not yet.
  auto readyAt = [&](int64_t d, const Step &step) -> double {
    int64_t stage = int64_t(step.chunk) * p + d;
    if (!step.backward) {
      if (stage == 0)
        return 0.0;
      double end = forwardEnd[slot(stage - 1, step.microBatch)];
      return end < 0 ? -1.0 : end + stages[stage - 1].sendForward;
    }
    if (stage == numStages - 1)
      return forwardEnd[slot(stage, step.microBatch)];
    double end = backwardEnd[slot(stage + 1, step.microBatch)];
    return end < 0 ? -1.0 : end + stages[stage + 1].sendBackward;
  };

  PipelineResult result;
  result.busy.assign(p, 0.0);
  // Only a backward needs its forward's activations kept.
  result.peakInFlight = options.training
                            ? inFlightPeaks(orders, v)
                            : std::vector<std::vector<int64_t>>(p, std::vector<int64_t>(v, 0));
  if (options.recordTasks)
    result.tasks.reserve(numTasks);
  std::vector<size_t> next(p, 0);
  std::vector<double> deviceFree(p, 0.0);
  std::vector<char> queued(p, false);
  size_t done = 0;

  // Runs the next task of device d from `start`; returns the device whose
  // next task may have waited on it (-1 if none).
  auto runNext = [&](int64_t d, double start) -> int64_t {
    const Step step = orders[d][next[d]++];
    int64_t stage = int64_t(step.chunk) * p + d;
    const StageCost &cost = stages[stage];
    double end = start + (step.backward ? cost.backward : cost.forward);
    deviceFree[d] = end;
    result.busy[d] += end - start;
    ++done;
    if (options.recordTasks)
      result.tasks.push_back(
          {d, stage, int64_t(step.microBatch), step.backward, start, end});
    if (!step.backward) {
      forwardEnd[slot(stage, step.microBatch)] = end;
      if (stage + 1 < numStages)
        return (stage + 1) % p;
      return options.training ? d : -1;
    }
    backwardEnd[slot(stage, step.microBatch)] = end;
    return stage > 0 ? (stage - 1) % p : -1;
  };
  // When device d's next task can start, or -1 if it cannot yet.
  auto nextStart = [&](int64_t d) -> double {
    if (next[d] == orders[d].size())
      return -1.0;
    double at = readyAt(d, orders[d][next[d]]);
    return at < 0 ? -1.0 : std::max(at, deviceFree[d]);
  };

  // Start times depend only on dependencies and device order, not on the
  // order in which the simulation discovers them. Recording tasks in start
  // order needs a heap; otherwise a plain worklist is about twice as fast.
  if (options.recordTasks) {
    // Min-heap of (start, device) over devices whose next task is ready. A
    // task becomes ready no earlier than the start of the task being popped,
    // so tasks pop in start order.
    using Entry = std::pair<double, int64_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    auto tryQueue = [&](int64_t d) {
      if (queued[d])
        return;
      double start = nextStart(d);
      if (start < 0)
        return;
      queued[d] = true;
      ready.push({start, d});
    };
    for (int64_t d = 0; d < p; ++d)
      tryQueue(d);
    while (!ready.empty()) {
      auto [start, d] = ready.top();
      ready.pop();
      queued[d] = false;
      int64_t wakes = runNext(d, start);
      tryQueue(d);
      if (wakes >= 0 && wakes != d)
        tryQueue(wakes);
    }
  } else {
    // Devices that may be able to run their next task.
    std::vector<int64_t> worklist;
    for (int64_t d = p - 1; d >= 0; --d) {
      worklist.push_back(d);
      queued[d] = true;
    }
    while (!worklist.empty()) {
      int64_t d = worklist.back();
      worklist.pop_back();
      queued[d] = false;
      for (double start = nextStart(d); start >= 0; start = nextStart(d)) {
        int64_t wakes = runNext(d, start);
        if (wakes >= 0 && wakes != d && !queued[wakes]) {
          queued[wakes] = true;
          worklist.push_back(wakes);
        }
      }
    }
  }

  if (done != numTasks) {
    for (int64_t d = 0; d < p; ++d) {
      if (next[d] == orders[d].size())
        continue;
      const Step &step = orders[d][next[d]];
      return fail(llvm::formatv(
          "deadlock: device {0} waits forever to run the {1} of stage {2}, "
          "micro-batch {3}",
          d, step.backward ? "backward" : "forward", step.chunk * p + d,
          step.microBatch));
    }
  }

  result.finish = deviceFree;
  for (int64_t d = 0; d < p; ++d)
    result.makespan = std::max(result.makespan, deviceFree[d]);
  double meanBusy = 0;
  for (double busy : result.busy)
    meanBusy += busy / double(p);
  result.bubbleFraction =
      result.makespan > 0 ? 1.0 - meanBusy / result.makespan : 0.0;
  return result;
}
