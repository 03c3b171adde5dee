//===- CollectivesTest.cpp - alpha-beta collective costs ------------------===//
//
// Checks each algorithm's formula against numbers computed by hand, and that
// Auto picks the algorithm a practitioner would expect in the classic
// regimes (hierarchical across a slow network, tree for tiny messages over
// many nodes). Clusters are built by hand so the test does not depend on
// the presets.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Collectives.h"
#include "loom/Cost/Calibration.h"

#include <gtest/gtest.h>

using namespace loom;

namespace {

constexpr double GB = 1e9;

LevelSpec level(const char *name, const char *kind, int64_t fanout,
                double bandwidth, double latency, double busEfficiency = 1) {
  LevelSpec l;
  l.name = name;
  l.kind = kind;
  l.fanout = fanout;
  l.bandwidth = bandwidth;
  l.latency = latency;
  l.busEfficiency = busEfficiency;
  return l;
}

/// `gpus` devices per node on NVLink, `nodes` nodes on InfiniBand.
ClusterSpec twoLevelCluster(int64_t gpus, int64_t nodes, double nvlinkBw,
                            double networkBw, double nvlinkLatency = 0,
                            double networkLatency = 0) {
  ClusterSpec c;
  c.name = "test";
  c.levels.push_back(
      level("nvlink", "nvswitch", gpus, nvlinkBw, nvlinkLatency));
  c.levels.push_back(
      level("ib", "infiniband", nodes, networkBw, networkLatency));
  return c;
}

AxisSpan span(std::initializer_list<int64_t> members) {
  AxisSpan s;
  s.membersPerLevel.assign(members.begin(), members.end());
  return s;
}

} // namespace

TEST(Collectives, Names) {
  for (CollectiveKind k :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter, CollectiveKind::AllToAll,
        CollectiveKind::Broadcast, CollectiveKind::SendRecv})
    EXPECT_EQ(parseCollectiveKind(stringifyCollectiveKind(k)), k);
  for (CollectiveAlgorithm a :
       {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring,
        CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical,
        CollectiveAlgorithm::Direct})
    EXPECT_EQ(parseCollectiveAlgorithm(stringifyCollectiveAlgorithm(a)), a);
  EXPECT_EQ(stringifyCollectiveKind(CollectiveKind::ReduceScatter),
            "reduce_scatter");
  EXPECT_EQ(stringifyCollectiveAlgorithm(CollectiveAlgorithm::Hierarchical),
            "hierarchical");
  EXPECT_FALSE(parseCollectiveKind("allreduce"));
  EXPECT_FALSE(parseCollectiveAlgorithm("Ring"));
}

TEST(Collectives, RingAllReduceOneLevel) {
  ClusterSpec c = twoLevelCluster(8, 1, 300 * GB, 25 * GB);
  CollectiveCost cost =
      collectiveCost(c, CollectiveKind::AllReduce, 1 * GB, span({8}));
  EXPECT_DOUBLE_EQ(cost.seconds, 2.0 * 7 / 8 * 1e9 / 300e9);
  EXPECT_EQ(cost.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(cost.bytesSentPerDevice, 2.0 * 7 / 8 * 1e9);
  EXPECT_FALSE(cost.calibrated);
}

TEST(Collectives, BusEfficiencyAndLatency) {
  ClusterSpec c;
  c.levels.push_back(level("nvlink", "nvlink", 4, 100 * GB, 2e-6, 0.8));
  double bytes = 64e6;
  CollectiveCost ar = collectiveCost(c, CollectiveKind::AllReduce, bytes,
                                     span({4}), CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(ar.seconds, 6 * 2e-6 + 1.5 * bytes / 80e9);
  CollectiveCost ag = collectiveCost(c, CollectiveKind::AllGather, bytes,
                                     span({4}), CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(ag.seconds, 3 * 2e-6 + 0.75 * bytes / 80e9);
  CollectiveCost rs = collectiveCost(c, CollectiveKind::ReduceScatter, bytes,
                                     span({4}), CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(rs.seconds, ag.seconds);
  CollectiveCost bc = collectiveCost(c, CollectiveKind::Broadcast, bytes,
                                     span({4}), CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(bc.seconds, 3 * 2e-6 + bytes / 80e9);
  CollectiveCost tree = collectiveCost(c, CollectiveKind::AllReduce, bytes,
                                       span({4}), CollectiveAlgorithm::Tree);
  EXPECT_DOUBLE_EQ(tree.seconds, 2 * 2 * 2e-6 + 2 * bytes / 80e9);
  EXPECT_DOUBLE_EQ(tree.bytesSentPerDevice, 2 * bytes);
}

TEST(Collectives, RingIsBoundByTheSlowestCrossedLevel) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB, 1e-6, 5e-6);
  CollectiveCost cost = collectiveCost(c, CollectiveKind::AllReduce, 1 * GB,
                                       span({8, 2}), CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(cost.seconds, 30 * 5e-6 + 2.0 * 15 / 16 * 1e9 / 25e9);
}

TEST(Collectives, HierarchicalBeatsRingAcrossNodes) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB);
  double bytes = 1 * GB;
  CollectiveCost ring = collectiveCost(c, CollectiveKind::AllReduce, bytes,
                                       span({8, 2}), CollectiveAlgorithm::Ring);
  CollectiveCost hier =
      collectiveCost(c, CollectiveKind::AllReduce, bytes, span({8, 2}),
                     CollectiveAlgorithm::Hierarchical);
  // Reduce-scatter and all-gather inside the node on the full buffer, ring
  // all-reduce of 1/8 of it between the two nodes.
  double inner = 7.0 / 8 * bytes / 300e9;
  double outer = 2.0 * 1 / 2 * (bytes / 8) / 25e9;
  EXPECT_DOUBLE_EQ(hier.seconds, 2 * inner + outer);
  EXPECT_DOUBLE_EQ(hier.bytesSentPerDevice, 2 * 7.0 / 8 * bytes + bytes / 8);
  EXPECT_LT(hier.seconds, ring.seconds);

  CollectiveCost best =
      collectiveCost(c, CollectiveKind::AllReduce, bytes, span({8, 2}));
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Hierarchical);
  EXPECT_DOUBLE_EQ(best.seconds, hier.seconds);
}

TEST(Collectives, HierarchicalGatherAndScatter) {
  ClusterSpec c = twoLevelCluster(8, 4, 300 * GB, 25 * GB);
  double bytes = 1 * GB;
  // All-gather: across nodes on 1/8 of the output, then inside on all of it.
  CollectiveCost ag =
      collectiveCost(c, CollectiveKind::AllGather, bytes, span({8, 4}),
                     CollectiveAlgorithm::Hierarchical);
  EXPECT_DOUBLE_EQ(ag.seconds,
                   3.0 / 4 * (bytes / 8) / 25e9 + 7.0 / 8 * bytes / 300e9);
  // Reduce-scatter mirrors it.
  CollectiveCost rs =
      collectiveCost(c, CollectiveKind::ReduceScatter, bytes, span({8, 4}),
                     CollectiveAlgorithm::Hierarchical);
  EXPECT_DOUBLE_EQ(rs.seconds, ag.seconds);
  EXPECT_EQ(collectiveCost(c, CollectiveKind::AllGather, bytes, span({8, 4}))
                .algorithm,
            CollectiveAlgorithm::Hierarchical);
}

TEST(Collectives, TreeBeatsRingForTinyMessagesOverManyNodes) {
  ClusterSpec c = twoLevelCluster(1, 64, 300 * GB, 25 * GB, 1e-6, 5e-6);
  double bytes = 1024;
  CollectiveCost ring =
      collectiveCost(c, CollectiveKind::AllReduce, bytes, span({1, 64}),
                     CollectiveAlgorithm::Ring);
  CollectiveCost tree =
      collectiveCost(c, CollectiveKind::AllReduce, bytes, span({1, 64}),
                     CollectiveAlgorithm::Tree);
  EXPECT_DOUBLE_EQ(ring.seconds, 126 * 5e-6 + 2.0 * 63 / 64 * bytes / 25e9);
  EXPECT_DOUBLE_EQ(tree.seconds, 12 * 5e-6 + 2 * bytes / 25e9);
  CollectiveCost best =
      collectiveCost(c, CollectiveKind::AllReduce, bytes, span({1, 64}));
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Tree);
  // With a large buffer the ring's bandwidth term wins again.
  EXPECT_EQ(collectiveCost(c, CollectiveKind::AllReduce, 1 * GB, span({1, 64}))
                .algorithm,
            CollectiveAlgorithm::Ring);
}

TEST(Collectives, SendRecvUsesTheOutermostLevel) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB, 1e-6, 5e-6);
  double bytes = 100e6;
  CollectiveCost acrossNodes =
      collectiveCost(c, CollectiveKind::SendRecv, bytes, span({1, 2}));
  EXPECT_DOUBLE_EQ(acrossNodes.seconds, 5e-6 + bytes / 25e9);
  EXPECT_EQ(acrossNodes.algorithm, CollectiveAlgorithm::Direct);
  EXPECT_DOUBLE_EQ(acrossNodes.bytesSentPerDevice, bytes);
  CollectiveCost insideNode =
      collectiveCost(c, CollectiveKind::SendRecv, bytes, span({2}));
  EXPECT_DOUBLE_EQ(insideNode.seconds, 1e-6 + bytes / 300e9);
}

TEST(Collectives, AllToAllAcrossNodes) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB, 1e-6, 5e-6);
  double bytes = 1 * GB;
  CollectiveCost cost =
      collectiveCost(c, CollectiveKind::AllToAll, bytes, span({8, 2}));
  EXPECT_EQ(cost.algorithm, CollectiveAlgorithm::Direct);
  // Half of each device's buffer goes to the other node over the network,
  // 7/16 to its node peers over NVLink; the network is the bottleneck.
  EXPECT_DOUBLE_EQ(cost.seconds, 15 * 5e-6 + 0.5 * bytes / 25e9);
  EXPECT_DOUBLE_EQ(cost.bytesSentPerDevice, 15.0 / 16 * bytes);

  CollectiveCost inside =
      collectiveCost(c, CollectiveKind::AllToAll, bytes, span({8}));
  EXPECT_DOUBLE_EQ(inside.seconds, 7 * 1e-6 + 7.0 / 8 * bytes / 300e9);
}

TEST(Collectives, GroupOfOneIsFree) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB, 1e-6, 5e-6);
  for (AxisSpan s : {span({1}), span({1, 1}), span({})}) {
    for (CollectiveKind k :
         {CollectiveKind::AllReduce, CollectiveKind::AllToAll,
          CollectiveKind::SendRecv}) {
      CollectiveCost cost = collectiveCost(c, k, 1 * GB, s);
      EXPECT_EQ(cost.seconds, 0);
      EXPECT_EQ(cost.bytesSentPerDevice, 0);
    }
  }
}

TEST(Collectives, InapplicableAlgorithmFallsBack) {
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB);
  // No tree all-gather: the fastest applicable algorithm is reported.
  CollectiveCost ag = collectiveCost(c, CollectiveKind::AllGather, 1 * GB,
                                     span({8}), CollectiveAlgorithm::Tree);
  EXPECT_EQ(ag.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(ag.seconds, 7.0 / 8 * 1e9 / 300e9);
  // Hierarchical needs two crossed levels.
  CollectiveCost ar =
      collectiveCost(c, CollectiveKind::AllReduce, 1 * GB, span({8}),
                     CollectiveAlgorithm::Hierarchical);
  EXPECT_EQ(ar.algorithm, CollectiveAlgorithm::Ring);
  CollectiveCost a2a = collectiveCost(c, CollectiveKind::AllToAll, 1 * GB,
                                      span({8}), CollectiveAlgorithm::Ring);
  EXPECT_EQ(a2a.algorithm, CollectiveAlgorithm::Direct);
}

TEST(Collectives, CalibrationOverrides) {
  llvm::Expected<Calibration> calibration = Calibration::parse(
      R"({"collectives": [{"kind": "all_reduce", "members_per_level": [8, 1],
          "points": [{"bytes": 1000000, "time_us": 50},
                     {"bytes": 1000000000, "time_us": 9000}]}]})",
      "calib.json");
  ASSERT_TRUE(bool(calibration)) << llvm::toString(calibration.takeError());
  ClusterSpec c = twoLevelCluster(8, 2, 300 * GB, 25 * GB);
  CollectiveCost cost =
      collectiveCost(c, CollectiveKind::AllReduce, 1 * GB, span({8}),
                     CollectiveAlgorithm::Auto, &*calibration);
  EXPECT_TRUE(cost.calibrated);
  EXPECT_DOUBLE_EQ(cost.seconds, 9000e-6);
  EXPECT_EQ(cost.algorithm, CollectiveAlgorithm::Ring);
  // Another layout or kind has no measurement: the model answers.
  CollectiveCost across =
      collectiveCost(c, CollectiveKind::AllReduce, 1 * GB, span({8, 2}),
                     CollectiveAlgorithm::Auto, &*calibration);
  EXPECT_FALSE(across.calibrated);
  CollectiveCost gather =
      collectiveCost(c, CollectiveKind::AllGather, 1 * GB, span({8}),
                     CollectiveAlgorithm::Auto, &*calibration);
  EXPECT_FALSE(gather.calibrated);
}
