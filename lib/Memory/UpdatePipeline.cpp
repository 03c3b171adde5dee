//===- UpdatePipeline.cpp - the offloaded optimizer step, overlapped ------===//
//
// Replays iterations one after another. Within an iteration the device runs
// its steps in order, each starting once the previous one has ended and the
// updates it must see have landed; after the last step it runs its own
// update. The offloaded tensors then pass, in the order their gradients
// complete, through three first-come-first-served resources (device-to-host
// link, CPU, host-to-device link), each resource carrying on from where the
// previous iteration left it; under data parallelism a fourth, the
// network, reduces each gradient before it goes down and gathers each
// updated shard after it is back up. The steady-state step is the average distance
// between iteration ends once it repeats; the system is max-plus linear,
// so it does once the start-up has passed.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/UpdatePipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <numeric>

using namespace loom::memory;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

bool nonNegative(double x) { return std::isfinite(x) && x >= 0; }

llvm::Error validate(const UpdateProblem &p) {
  int n = static_cast<int>(p.stepSeconds.size());
  int m = static_cast<int>(p.tensors.size());
  if (p.staleness != 0 && p.staleness != 1)
    return fail(llvm::formatv("staleness {0}: only 0 (exact) and 1 (delayed "
                              "parameter update) are modelled",
                              p.staleness));
  if (!p.waitsFor.empty() && static_cast<int>(p.waitsFor.size()) != n)
    return fail(llvm::formatv("waits are given for {0} steps, there are {1}",
                              p.waitsFor.size(), n));
  for (auto [s, seconds] : llvm::enumerate(p.stepSeconds))
    if (!nonNegative(seconds))
      return fail(llvm::formatv("step {0} takes {1} s", s, seconds));
  if (!nonNegative(p.linkLatency))
    return fail(llvm::formatv("the link latency is {0} s", p.linkLatency));
  if (!nonNegative(p.deviceUpdateSeconds))
    return fail(llvm::formatv("the device's update takes {0} s",
                              p.deviceUpdateSeconds));
  if (!nonNegative(p.deviceReloadSeconds) ||
      p.deviceReloadSeconds > p.deviceUpdateSeconds)
    return fail(llvm::formatv("the device's update reloads for {0} s of its "
                              "{1} s",
                              p.deviceReloadSeconds, p.deviceUpdateSeconds));
  if (p.uploadsAfterStep < -1 || p.uploadsAfterStep >= n)
    return fail(llvm::formatv("uploads wait for step {0}, but there are {1} "
                              "steps",
                              p.uploadsAfterStep, n));
  bool down = false, up = false;
  for (const OffloadedTensor &t : p.tensors) {
    if (t.readyAfterStep < 0 || t.readyAfterStep >= n)
      return fail(llvm::formatv("tensor '{0}' is ready after step {1}, but "
                                "there are {2} steps",
                                t.name, t.readyAfterStep, n));
    if (!nonNegative(t.gradientBytes) || !nonNegative(t.updateSeconds) ||
        !nonNegative(t.uploadBytes) || !nonNegative(t.reduceSeconds) ||
        !nonNegative(t.gatherSeconds))
      return fail(llvm::formatv("tensor '{0}' has a negative or non-finite "
                                "size or time",
                                t.name));
    down |= t.gradientBytes > 0;
    up |= t.uploadBytes > 0;
  }
  if (!nonNegative(p.stagingBytes))
    return fail(llvm::formatv("{0} bytes of gradient staging", p.stagingBytes));
  if (down && !(p.deviceToHost > 0))
    return fail("gradients must move but the device-to-host bandwidth is not "
                "positive");
  if (up && !(p.hostToDevice > 0))
    return fail("parameters must move but the host-to-device bandwidth is not "
                "positive");
  for (auto [s, waits] : llvm::enumerate(p.waitsFor))
    for (int t : waits)
      if (t < 0 || t >= m)
        return fail(llvm::formatv("step {0} waits for tensor {1}, but there "
                                  "are {2} tensors",
                                  s, t, m));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<UpdateTimeline>
loom::memory::simulateUpdates(const UpdateProblem &p) {
  if (llvm::Error e = validate(p))
    return std::move(e);
  size_t n = p.stepSeconds.size(), m = p.tensors.size();
  // Tensors enter the pipeline as their gradients complete.
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int a, int b) {
    return p.tensors[a].readyAfterStep < p.tensors[b].readyAfterStep;
  });
  auto transfer = [&](double bytes, double bandwidth) {
    return bytes > 0 ? p.linkLatency + bytes / bandwidth : 0.0;
  };

  UpdateTimeline t;
  for (double s : p.stepSeconds)
    t.computeSeconds += s;
  t.computeSeconds += p.deviceUpdateSeconds;
  for (const OffloadedTensor &x : p.tensors) {
    t.deviceToHostSeconds += transfer(x.gradientBytes, p.deviceToHost);
    t.cpuSeconds += x.updateSeconds;
    t.hostToDeviceSeconds += transfer(x.uploadBytes, p.hostToDevice);
    t.networkSeconds += x.reduceSeconds + x.gatherSeconds;
  }
  t.serialSeconds = t.computeSeconds + t.deviceToHostSeconds + t.cpuSeconds +
                    t.hostToDeviceSeconds + t.networkSeconds;

  // Iterations are replayed until the distance between iteration ends
  // repeats with some period c (a max-plus linear system becomes periodic
  // once the start-up backlog has settled, which can take many iterations
  // when two resources are nearly balanced); the step is that distance's
  // average over the period.
  const int maxIterations = 4096, maxCycle = 8;
  const int keep = p.staleness + 2; // iterations whose times are still read
  std::vector<std::vector<double>> updated(keep, std::vector<double>(m));
  std::vector<std::vector<double>> landed(keep, std::vector<double>(m));
  std::vector<double> iterationEnd, waited;
  // The tensors each step completes, in pipeline order, and the gradients
  // in staging (when their copies end, and their bytes), oldest first.
  std::vector<std::vector<int>> completes(n);
  std::vector<double> completedBytes(n, 0);
  for (int x : order) {
    completes[p.tensors[x].readyAfterStep].push_back(x);
    completedBytes[p.tensors[x].readyAfterStep] += p.tensors[x].gradientBytes;
  }
  std::deque<std::pair<double, double>> staged;
  double stagedBytes = 0;
  // The earliest a step completing `bytes` of gradients may start at or
  // after `start`: once the copies ahead of them have left room (all of
  // them, where its gradients alone fill the staging).
  auto roomFor = [&](double bytes, double start) {
    if (!(p.stagingBytes > 0) || !(bytes > 0))
      return start;
    while (!staged.empty() &&
           (staged.front().first <= start || stagedBytes + bytes > p.stagingBytes)) {
      start = std::max(start, staged.front().first);
      stagedBytes -= staged.front().second;
      staged.pop_front();
    }
    return start;
  };
  double device = 0, down = 0, cpu = 0, up = 0, network = 0;
  // The state at an iteration's end: how far each resource's queue runs
  // past it. A backlog that still grows (a resource slower than the
  // device, not yet throttling it) looks periodic from the device alone.
  std::vector<std::array<double, 4>> backlog;
  auto periodic = [&](int c) {
    int k = static_cast<int>(iterationEnd.size()) - 1;
    // Three periods back from k, past the start-up.
    if (k < 4 * c + p.staleness)
      return false;
    double tolerance = 1e-12 * std::max(1.0, iterationEnd[k]);
    for (int j = k; j > k - 2 * c; --j) {
      double a = iterationEnd[j] - iterationEnd[j - c];
      double b = iterationEnd[j - c] - iterationEnd[j - 2 * c];
      if (std::abs(a - b) > tolerance)
        return false;
      for (int r = 0; r < 4; ++r)
        if (std::abs(backlog[j][r] - backlog[j - c][r]) > tolerance)
          return false;
    }
    return true;
  };
  // The iteration before the current one, and the current one (whose step
  // ends the pipeline reads), absolute until the loop ends: two buffers,
  // swapped, as the loop can run thousands of iterations over thousands of
  // tensors; names are filled in at the end. Untraced, every tensor's
  // times go to one scratch entry.
  const bool tracing = p.traceIteration;
  IterationTrace previous, current;
  for (IterationTrace *t : {&previous, &current}) {
    t->stepStarts.assign(n, 0);
    t->stepEnds.assign(n, 0);
    t->tensors.resize(tracing ? m : 1);
  }
  auto timesOf = [&](int x) -> TensorTimes & {
    return current.tensors[tracing ? x : 0];
  };
  int cycle = 0;
  for (int k = 0; k < maxIterations && !cycle; ++k) {
    std::swap(previous, current);
    current.deviceUpdate = current.deviceReloads = Interval();
    for (TensorTimes &times : current.tensors)
      times.reduce = times.down = times.update = times.up = times.gather =
          Interval();
    int source = k - 1 - p.staleness; // whose updates this iteration reads
    const std::vector<double> &reads = landed[(source + keep) % keep];
    double wait = 0;
    for (size_t s = 0; s < n; ++s) {
      double start = device;
      if (source >= 0 && !p.waitsFor.empty())
        for (int x : p.waitsFor[s])
          start = std::max(start, reads[x]);
      start = roomFor(completedBytes[s], start);
      current.stepStarts[s] = start;
      wait += start - device;
      device = current.stepEnds[s] = start + p.stepSeconds[s];
      // Its gradients go down as it ends and are updated.
      for (int x : completes[s]) {
        const OffloadedTensor &tensor = p.tensors[x];
        double ready = current.stepEnds[s];
        TensorTimes &times = timesOf(x);
        if (tensor.reduceSeconds > 0) {
          times.reduce.start = std::max(ready, network);
          ready = network = times.reduce.end =
              times.reduce.start + tensor.reduceSeconds;
        }
        if (tensor.gradientBytes > 0) {
          times.down.start = std::max(ready, down);
          ready = down = times.down.end =
              times.down.start + transfer(tensor.gradientBytes, p.deviceToHost);
        }
        if (p.stagingBytes > 0 && tensor.gradientBytes > 0) {
          staged.emplace_back(ready, tensor.gradientBytes);
          stagedBytes += tensor.gradientBytes;
        }
        times.update.start = std::max(ready, cpu);
        updated[k % keep][x] = cpu = times.update.end =
            times.update.start + tensor.updateSeconds;
      }
    }
    if (p.uploadsAfterStep >= 0)
      up = std::max(up, current.stepEnds[p.uploadsAfterStep]);
    if (p.deviceReloadSeconds > 0) {
      // The update starts with its reloads, once the link is free (before
      // this iteration's uploads, whose turn comes below).
      device = std::max(device, up);
      up = device + p.deviceReloadSeconds;
      current.deviceReloads = {device, up};
    }
    current.deviceUpdate = {device, device + p.deviceUpdateSeconds};
    device += p.deviceUpdateSeconds;
    iterationEnd.push_back(device);
    waited.push_back(wait);
    // The update `staleness` iterations back goes up. It overwrites the
    // version this iteration reads, so it waits for the iteration's last
    // read of the tensor (the backward of its first reader; with the exact
    // update that is before the gradient existed at all).
    int j = k - p.staleness;
    for (int x : order) {
      if (j < 0)
        break;
      const OffloadedTensor &tensor = p.tensors[x];
      double ready = std::max(updated[j % keep][x],
                              current.stepEnds[tensor.readyAfterStep]);
      TensorTimes &times = timesOf(x);
      if (tensor.uploadBytes > 0) {
        times.up.start = std::max(ready, up);
        ready = up = times.up.end =
            times.up.start + transfer(tensor.uploadBytes, p.hostToDevice);
      }
      if (tensor.gatherSeconds > 0) {
        times.gather.start = std::max(ready, network);
        ready = network = times.gather.end =
            times.gather.start + tensor.gatherSeconds;
      }
      landed[j % keep][x] = ready;
    }
    backlog.push_back({std::max(0.0, down - device),
                       std::max(0.0, cpu - device),
                       std::max(0.0, up - device),
                       std::max(0.0, network - device)});
    for (int c = 1; c <= maxCycle && !cycle; ++c)
      if (periodic(c))
        cycle = c;
  }
  // Not periodic within the limit (rounding): the last window's average.
  int window = cycle ? cycle : 64;
  int last = static_cast<int>(iterationEnd.size()) - 1;
  t.stepSeconds = (iterationEnd[last] - iterationEnd[last - window]) / window;
  for (int k = last - window + 1; k <= last; ++k)
    t.waitSeconds += waited[k] / window;
  if (!tracing)
    return t;
  // (The loop ran at least 4 iterations, so both traces exist.)
  double origin = n ? previous.stepStarts.front() : 0;
  t.trace = std::move(previous);
  auto shift = [&](Interval &i) {
    i = i.empty() ? Interval() : Interval{i.start - origin, i.end - origin};
  };
  for (size_t s = 0; s < n; ++s) {
    t.trace.stepStarts[s] -= origin;
    t.trace.stepEnds[s] -= origin;
  }
  shift(t.trace.deviceUpdate);
  shift(t.trace.deviceReloads);
  for (auto [x, times] : llvm::enumerate(t.trace.tensors)) {
    times.name = p.tensors[x].name;
    for (Interval *i :
         {&times.reduce, &times.down, &times.update, &times.up, &times.gather})
      shift(*i);
  }
  t.trace.nextStart = (n ? current.stepStarts.front() : 0) - origin;
  return t;
}
