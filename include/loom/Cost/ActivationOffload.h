//===- ActivationOffload.h - kept activations in host memory ----*- C++ -*-===//
//
// Training keeps, per micro-batch, the activations each op's backward reads
// (or, under recomputation, only the inputs the backward re-runs from).
// Offloading them (ZeRO-Infinity's checkpoint offload, Megatron and
// Transformer Engine's activation offload) copies each one to pinned host
// memory as the forward produces it and back before the backward that
// reads it, so the device holds only the activations in transit instead of
// every micro-batch's in flight.
//
// simulateActivationOffload times one stage task pair: the forward's ops in
// program order, each one's kept outputs sent down the device-to-host link
// once it ends, then the backward's ops in reverse, each one's kept inputs
// fetched up the host-to-device link before it starts. The device has
// `kBuffers` staging buffers per direction: an op that produces kept bytes
// waits until the transfer `kBuffers` units back has finished (so a slow
// link stalls the forward instead of filling memory), and a fetch starts
// once the link is free and the backward op `kBuffers` units back has read
// its buffer. Plain C++ on LLVMSupport, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_ACTIVATIONOFFLOAD_H
#define LOOM_COST_ACTIVATIONOFFLOAD_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace loom {

/// Staging buffers per direction (double buffering: one unit moves while
/// the next is produced or consumed).
constexpr int kActivationOffloadBuffers = 2;

/// One op as offload sees it: its compute for one micro-batch and the kept
/// activation bytes it moves: in the forward, what it produces (sent after
/// it); in the backward, what it reads (fetched before it).
struct OffloadStep {
  double seconds = 0;
  double bytes = 0;
};

struct OffloadTimeline {
  /// One micro-batch's forward and backward, stalls and the forward's last
  /// transfer included.
  double forwardSeconds = 0, backwardSeconds = 0;
  /// Per op (program order): the wait charged to its forward (before it
  /// starts; the last op's also holds the forward's drain) and to its
  /// backward (before it starts).
  std::vector<double> forwardStall, backwardStall;
  /// Kept activations on the device at once: the fullest set of staging
  /// buffers in either direction.
  double peakBytes = 0;
  double bytes = 0; // moved each way per micro-batch
};

/// `forward` and `backward` list the same ops in program order (the
/// backward runs them in reverse). Errors: lists of different lengths,
/// a negative time or size or latency, a non-positive bandwidth while
/// bytes must move.
llvm::Expected<OffloadTimeline>
simulateActivationOffload(llvm::ArrayRef<OffloadStep> forward,
                          llvm::ArrayRef<OffloadStep> backward,
                          double deviceToHost, double hostToDevice,
                          double linkLatency);

} // namespace loom

#endif // LOOM_COST_ACTIVATIONOFFLOAD_H
