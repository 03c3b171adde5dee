//===- Collectives.cpp - alpha-beta costs of collectives ------------------===//
//
// Alpha-beta times of collectives over a group that spans levels of the
// cluster hierarchy. Every level the group crosses (more than one member
// there) carries traffic; a flat algorithm (ring, tree) is bounded by the
// slowest crossed level and pays the largest per-hop latency, while the
// hierarchical algorithm moves most of the data over the inner, fast level
// and only 1/p of it over the outer ones. docs/cost-model.md derives each
// formula.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Collectives.h"
#include "loom/Cost/Calibration.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace loom;

llvm::StringRef loom::stringifyCollectiveKind(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::SendRecv:
    return "send_recv";
  }
  return "unknown";
}

std::optional<CollectiveKind> loom::parseCollectiveKind(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<CollectiveKind>>(s)
      .Case("all_reduce", CollectiveKind::AllReduce)
      .Case("all_gather", CollectiveKind::AllGather)
      .Case("reduce_scatter", CollectiveKind::ReduceScatter)
      .Case("all_to_all", CollectiveKind::AllToAll)
      .Case("broadcast", CollectiveKind::Broadcast)
      .Case("send_recv", CollectiveKind::SendRecv)
      .Default(std::nullopt);
}

llvm::StringRef loom::stringifyCollectiveAlgorithm(CollectiveAlgorithm a) {
  switch (a) {
  case CollectiveAlgorithm::Auto:
    return "auto";
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  case CollectiveAlgorithm::Direct:
    return "direct";
  }
  return "unknown";
}

std::optional<CollectiveAlgorithm>
loom::parseCollectiveAlgorithm(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<CollectiveAlgorithm>>(s)
      .Case("auto", CollectiveAlgorithm::Auto)
      .Case("ring", CollectiveAlgorithm::Ring)
      .Case("tree", CollectiveAlgorithm::Tree)
      .Case("hierarchical", CollectiveAlgorithm::Hierarchical)
      .Case("direct", CollectiveAlgorithm::Direct)
      .Default(std::nullopt);
}

namespace {

/// One level the group crosses, with the numbers the formulas need.
struct CrossedLevel {
  int64_t members;  // group members joined at this level
  double bandwidth; // effective bytes/s per device (bandwidth * busEfficiency)
  double latency;   // seconds per step
};

/// The crossed levels of a span, innermost first. Span entries past the
/// cluster's levels are charged at the outermost level: the span is malformed,
/// but a cost function has no error channel and must not crash.
using Crossed = llvm::SmallVector<CrossedLevel, 4>;

struct Estimate {
  double seconds = std::numeric_limits<double>::infinity();
  double bytesSent = 0;
};

} // namespace

static Crossed crossedLevels(const ClusterSpec &cluster, const AxisSpan &span) {
  Crossed crossed;
  if (cluster.levels.empty())
    return crossed;
  for (size_t l = 0, e = span.membersPerLevel.size(); l < e; ++l) {
    if (span.membersPerLevel[l] <= 1)
      continue;
    const LevelSpec &level =
        cluster.levels[std::min(l, cluster.levels.size() - 1)];
    crossed.push_back({span.membersPerLevel[l],
                       level.bandwidth * level.busEfficiency, level.latency});
  }
  return crossed;
}

static int64_t groupSize(llvm::ArrayRef<CrossedLevel> levels) {
  int64_t n = 1;
  for (const CrossedLevel &l : levels)
    n *= l.members;
  return n;
}

/// A flat algorithm runs at the slowest crossed level's bandwidth and waits
/// for the slowest hop at every step.
static double bottleneckBandwidth(llvm::ArrayRef<CrossedLevel> levels) {
  double bw = std::numeric_limits<double>::infinity();
  for (const CrossedLevel &l : levels)
    bw = std::min(bw, l.bandwidth);
  return bw;
}

static double worstLatency(llvm::ArrayRef<CrossedLevel> levels) {
  double alpha = 0;
  for (const CrossedLevel &l : levels)
    alpha = std::max(alpha, l.latency);
  return alpha;
}

static Estimate ringCost(CollectiveKind kind, double bytes,
                         llvm::ArrayRef<CrossedLevel> levels) {
  double n = double(groupSize(levels));
  double bw = bottleneckBandwidth(levels), alpha = worstLatency(levels);
  switch (kind) {
  case CollectiveKind::AllReduce: {
    // Reduce-scatter then all-gather around the ring.
    double sent = 2 * (n - 1) / n * bytes;
    return {2 * (n - 1) * alpha + sent / bw, sent};
  }
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter: {
    double sent = (n - 1) / n * bytes;
    return {(n - 1) * alpha + sent / bw, sent};
  }
  case CollectiveKind::Broadcast:
    // Chunked pipeline along the ring: the fill costs n-1 hops, then the
    // whole buffer streams through each link once.
    return {(n - 1) * alpha + bytes / bw, bytes};
  case CollectiveKind::AllToAll:
  case CollectiveKind::SendRecv:
    break;
  }
  return {};
}

static Estimate treeCost(CollectiveKind kind, double bytes,
                         llvm::ArrayRef<CrossedLevel> levels) {
  double depth = std::ceil(std::log2(double(groupSize(levels))));
  double bw = bottleneckBandwidth(levels), alpha = worstLatency(levels);
  switch (kind) {
  case CollectiveKind::AllReduce:
    // NCCL's double binary tree: reduce up, broadcast down, each device
    // moving about the whole buffer in each direction.
    return {2 * depth * alpha + 2 * bytes / bw, 2 * bytes};
  case CollectiveKind::Broadcast:
    return {depth * alpha + bytes / bw, bytes};
  default:
    break;
  }
  return {};
}

static Estimate bestFlatOrHierarchical(CollectiveKind kind, double bytes,
                                       llvm::ArrayRef<CrossedLevel> levels,
                                       CollectiveAlgorithm *chosen);

/// Two-level decomposition: the innermost crossed level (p members) carries
/// the full buffer, the remaining levels 1/p of it.
static Estimate hierarchicalCost(CollectiveKind kind, double bytes,
                                 llvm::ArrayRef<CrossedLevel> levels) {
  if (levels.size() < 2)
    return {};
  llvm::ArrayRef<CrossedLevel> inner = levels.take_front(1);
  llvm::ArrayRef<CrossedLevel> outer = levels.drop_front(1);
  double p = double(inner.front().members);
  switch (kind) {
  case CollectiveKind::AllReduce: {
    Estimate rs = ringCost(CollectiveKind::ReduceScatter, bytes, inner);
    Estimate ar = bestFlatOrHierarchical(kind, bytes / p, outer, nullptr);
    Estimate ag = ringCost(CollectiveKind::AllGather, bytes, inner);
    return {rs.seconds + ar.seconds + ag.seconds,
            rs.bytesSent + ar.bytesSent + ag.bytesSent};
  }
  case CollectiveKind::AllGather: {
    // Gather across the outer levels first, while the pieces are small.
    Estimate outerAg = bestFlatOrHierarchical(kind, bytes / p, outer, nullptr);
    Estimate innerAg = ringCost(kind, bytes, inner);
    return {outerAg.seconds + innerAg.seconds,
            outerAg.bytesSent + innerAg.bytesSent};
  }
  case CollectiveKind::ReduceScatter: {
    // Reduce inside first, so only 1/p of the data crosses the outer levels.
    Estimate innerRs = ringCost(kind, bytes, inner);
    Estimate outerRs = bestFlatOrHierarchical(kind, bytes / p, outer, nullptr);
    return {innerRs.seconds + outerRs.seconds,
            innerRs.bytesSent + outerRs.bytesSent};
  }
  default:
    break;
  }
  return {};
}

/// Every device sends bytes/n to each peer; a message travels over the
/// outermost level on which sender and receiver differ. Levels work in
/// parallel, so the busiest one sets the time.
static Estimate directCost(CollectiveKind kind, double bytes,
                           llvm::ArrayRef<CrossedLevel> levels) {
  if (kind == CollectiveKind::SendRecv) {
    const CrossedLevel &hop = levels.back();
    return {hop.latency + bytes / hop.bandwidth, bytes};
  }
  if (kind != CollectiveKind::AllToAll)
    return {};
  double n = double(groupSize(levels));
  double slowest = 0;
  int64_t inside = 1; // peers (self included) reachable below this level
  for (const CrossedLevel &l : levels) {
    int64_t reach = inside * l.members;
    double bytesHere = double(reach - inside) / n * bytes;
    slowest = std::max(slowest, bytesHere / l.bandwidth);
    inside = reach;
  }
  return {(n - 1) * worstLatency(levels) + slowest, (n - 1) / n * bytes};
}

static Estimate algorithmCost(CollectiveAlgorithm algorithm,
                              CollectiveKind kind, double bytes,
                              llvm::ArrayRef<CrossedLevel> levels) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return ringCost(kind, bytes, levels);
  case CollectiveAlgorithm::Tree:
    return treeCost(kind, bytes, levels);
  case CollectiveAlgorithm::Hierarchical:
    return hierarchicalCost(kind, bytes, levels);
  case CollectiveAlgorithm::Direct:
    return directCost(kind, bytes, levels);
  case CollectiveAlgorithm::Auto:
    break;
  }
  return {};
}

/// The fastest applicable algorithm; inapplicable ones cost infinity. Ties go
/// to the earlier (simpler) algorithm in the list.
static Estimate bestFlatOrHierarchical(CollectiveKind kind, double bytes,
                                       llvm::ArrayRef<CrossedLevel> levels,
                                       CollectiveAlgorithm *chosen) {
  static constexpr CollectiveAlgorithm candidates[] = {
      CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
      CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Direct};
  Estimate best;
  for (CollectiveAlgorithm a : candidates) {
    Estimate e = algorithmCost(a, kind, bytes, levels);
    if (e.seconds < best.seconds) {
      best = e;
      if (chosen)
        *chosen = a;
    }
  }
  return best;
}

CollectiveCost loom::collectiveCost(const ClusterSpec &cluster,
                                    CollectiveKind kind, double bytes,
                                    const AxisSpan &span,
                                    CollectiveAlgorithm algorithm,
                                    const Calibration *calibration) {
  CollectiveCost cost;
  Crossed levels = crossedLevels(cluster, span);
  if (levels.empty() || bytes <= 0) {
    // Nothing to move: a group of one, or an empty buffer.
    cost.algorithm = algorithm == CollectiveAlgorithm::Auto
                         ? CollectiveAlgorithm::Direct
                         : algorithm;
    return cost;
  }

  Estimate estimate;
  if (algorithm != CollectiveAlgorithm::Auto) {
    estimate = algorithmCost(algorithm, kind, bytes, levels);
    cost.algorithm = algorithm;
  }
  // An algorithm that does not apply (tree all-gather, hierarchical over one
  // level, ...) falls back to the fastest that does; `algorithm` says which.
  if (!std::isfinite(estimate.seconds))
    estimate = bestFlatOrHierarchical(kind, bytes, levels, &cost.algorithm);
  cost.seconds = estimate.seconds;
  cost.bytesSentPerDevice = estimate.bytesSent;

  if (calibration) {
    if (std::optional<double> measured =
            calibration->collectiveSeconds(kind, span, bytes)) {
      cost.seconds = *measured;
      cost.calibrated = true;
    }
  }
  return cost;
}
