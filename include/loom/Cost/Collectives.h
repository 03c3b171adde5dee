//===- Collectives.h - alpha-beta costs of collectives ----------*- C++ -*-===//
//
// Time of a collective over a group of devices that spans levels of the
// cluster hierarchy (an AxisSpan), per algorithm: ring, (double binary) tree,
// and hierarchical (reduce-scatter inside the inner level, the collective
// across the outer levels on 1/p of the data, all-gather inside again).
// `Auto` picks the fastest, like NCCL's tuner. Measured timings from a
// calibration file override the analytic value (see Calibration.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_COLLECTIVES_H
#define LOOM_COST_COLLECTIVES_H

#include "loom/Cost/Cluster.h"

namespace loom {

class Calibration;

enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  SendRecv
};
llvm::StringRef stringifyCollectiveKind(CollectiveKind k);
std::optional<CollectiveKind> parseCollectiveKind(llvm::StringRef s);

enum class CollectiveAlgorithm { Auto, Ring, Tree, Hierarchical, Direct };
llvm::StringRef stringifyCollectiveAlgorithm(CollectiveAlgorithm a);
std::optional<CollectiveAlgorithm> parseCollectiveAlgorithm(llvm::StringRef s);

/// The cost of one collective.
struct CollectiveCost {
  double seconds = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto; // the one chosen
  /// Bytes each device sends over the wire (the "bus bytes" of nccl-tests).
  double bytesSentPerDevice = 0;
  bool calibrated = false; // true when a measured timing was used
};

/// `bytes` is the size of the full (unreduced, ungathered) buffer on each
/// device: the all-reduce buffer; the all-gather *output*; the reduce-scatter
/// *input*; the all-to-all buffer; the broadcast buffer; the message of a
/// send/recv (which uses the span's outermost level; pass a span with the two
/// endpoints). A group of size 1 costs 0.
CollectiveCost collectiveCost(const ClusterSpec &cluster, CollectiveKind kind,
                              double bytes, const AxisSpan &span,
                              CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto,
                              const Calibration *calibration = nullptr);

} // namespace loom

#endif // LOOM_COST_COLLECTIVES_H
