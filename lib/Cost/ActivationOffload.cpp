//===- ActivationOffload.cpp - kept activations in host memory -----------===//
//
// The forward and the backward are each one pass over the ops with one link
// and `kActivationOffloadBuffers` staging buffers; see the header for the
// rules. Times are from the task's start.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/ActivationOffload.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace loom;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The most bytes `kActivationOffloadBuffers` consecutive units hold.
static double fullestBuffers(llvm::ArrayRef<double> units) {
  double peak = 0, window = 0;
  for (size_t j = 0; j < units.size(); ++j) {
    window += units[j];
    if (j >= kActivationOffloadBuffers)
      window -= units[j - kActivationOffloadBuffers];
    peak = std::max(peak, window);
  }
  return peak;
}

llvm::Expected<OffloadTimeline>
loom::simulateActivationOffload(llvm::ArrayRef<OffloadStep> forward,
                                llvm::ArrayRef<OffloadStep> backward,
                                double deviceToHost, double hostToDevice,
                                double linkLatency) {
  if (forward.size() != backward.size())
    return fail(llvm::formatv("activation offload: {0} forward ops but {1} "
                              "backward ops",
                              forward.size(), backward.size()));
  if (!(linkLatency >= 0))
    return fail("activation offload: negative link latency");
  double down = 0, up = 0;
  for (auto [i, s] : llvm::enumerate(forward)) {
    const OffloadStep &b = backward[i];
    if (!(s.seconds >= 0 && s.bytes >= 0 && b.seconds >= 0 && b.bytes >= 0))
      return fail(llvm::formatv("activation offload: op {0} has a negative "
                                "time or size",
                                i));
    down += s.bytes;
    up += b.bytes;
  }
  if ((down > 0 && !(deviceToHost > 0)) || (up > 0 && !(hostToDevice > 0)))
    return fail("activation offload: activations must move but the host "
                "link's bandwidth is not positive");

  const size_t n = forward.size();
  const size_t B = kActivationOffloadBuffers;
  OffloadTimeline t;
  t.forwardStall.assign(n, 0);
  t.backwardStall.assign(n, 0);
  t.bytes = down;

  // Forward: an op producing kept bytes writes them into a staging buffer,
  // free once the transfer B units back has finished.
  std::vector<double> sent, sentBytes; // per unit: when its copy ends, size
  double clock = 0, linkFree = 0;
  for (auto [i, s] : llvm::enumerate(forward)) {
    double start = clock;
    if (s.bytes > 0 && sent.size() >= B)
      start = std::max(start, sent[sent.size() - B]);
    t.forwardStall[i] = start - clock;
    clock = start + s.seconds;
    if (s.bytes > 0) {
      linkFree = std::max(linkFree, clock) + linkLatency + s.bytes / deviceToHost;
      sent.push_back(linkFree);
      sentBytes.push_back(s.bytes);
    }
  }
  // The forward ends when its last copy has left the device.
  if (n > 0 && linkFree > clock) {
    t.forwardStall[n - 1] += linkFree - clock;
    clock = linkFree;
  }
  t.forwardSeconds = clock;

  // Backward, ops in reverse: a fetch starts once the link is free and the
  // op B units back has read its buffer; an op starts once its fetch ends.
  std::vector<double> consumed, fetchedBytes; // per unit: when read, size
  clock = 0;
  linkFree = 0;
  for (size_t k = n; k-- > 0;) {
    const OffloadStep &s = backward[k];
    double start = clock;
    if (s.bytes > 0) {
      double fetch = linkFree;
      if (consumed.size() >= B)
        fetch = std::max(fetch, consumed[consumed.size() - B]);
      linkFree = fetch + linkLatency + s.bytes / hostToDevice;
      start = std::max(start, linkFree);
    }
    t.backwardStall[k] = start - clock;
    clock = start + s.seconds;
    if (s.bytes > 0) {
      consumed.push_back(clock);
      fetchedBytes.push_back(s.bytes);
    }
  }
  t.backwardSeconds = clock;
  t.peakBytes = std::max(fullestBuffers(sentBytes), fullestBuffers(fetchedBytes));
  return t;
}
