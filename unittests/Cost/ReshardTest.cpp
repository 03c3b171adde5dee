//===- ReshardTest.cpp - collectives between two layouts of a tensor -----===//

#include "loom/Cost/Reshard.h"

#include <gtest/gtest.h>

using namespace loom;

namespace {
// A 2x4 grid: axis 0 of size 2, axis 1 of size 4.
int64_t axisSize(int16_t a) { return a == 0 ? 2 : 4; }

TensorLayout layout(std::initializer_list<GridAxes> dims, GridAxes partial = {}) {
  TensorLayout l;
  for (const GridAxes &d : dims)
    l.splitAxes.push_back(d);
  l.partialAxes = partial;
  return l;
}
} // namespace

TEST(Reshard, SameLayoutIsFree) {
  auto steps = reshardSteps(1024, layout({{1}, {}}), layout({{1}, {}}), axisSize);
  EXPECT_TRUE(steps.empty());
}

TEST(Reshard, SlicingIsFree) {
  auto steps = reshardSteps(1024, layout({{}, {}}), layout({{1}, {0}}), axisSize);
  EXPECT_TRUE(steps.empty());
}

TEST(Reshard, GatherBytesAreTheOutput) {
  // Split 4 ways on dim 0 -> replicated: one all-gather producing 1024 bytes.
  auto steps = reshardSteps(1024, layout({{1}, {}}), layout({{}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(steps[0].axes, GridAxes({1}));
  EXPECT_DOUBLE_EQ(steps[0].bytes, 1024);
}

TEST(Reshard, PartialToReplicatedIsAllReduce) {
  // Row-parallel matmul result, partial over axis 1, replicated after.
  auto steps = reshardSteps(1024, layout({{}, {}}, {1}), layout({{}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(steps[0].bytes, 1024);
}

TEST(Reshard, PartialToSplitIsReduceScatter) {
  // Sequence parallelism: partial over axis 1 -> split on dim 0 over axis 1.
  auto steps = reshardSteps(1024, layout({{}, {}}, {1}), layout({{1}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_DOUBLE_EQ(steps[0].bytes, 1024); // the input
  // Scattered along the leading dimension: blocks are contiguous.
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 0);
  // Along dim 1 the runtime packs the input first.
  steps = reshardSteps(1024, layout({{}, {}}, {1}), layout({{}, {1}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 1024);
}

TEST(Reshard, GatherOffTheLeadingDimUnpacks) {
  // The gathered blocks arrive stacked leading: gathering dim 1 transposes
  // the output into place, with or without another axis kept on dim 0.
  auto steps = reshardSteps(1024, layout({{}, {1}}), layout({{}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllGather);
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 1024);
  steps = reshardSteps(1024, layout({{0}, {1}}), layout({{0}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_DOUBLE_EQ(steps[0].bytes, 512);
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 512);
  // Gathering dim 0 lands in place.
  steps = reshardSteps(1024, layout({{1}, {0}}), layout({{}, {0}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 0);
}

TEST(Reshard, MovingAnAxisIsAllToAll) {
  // Split on dim 0 over axis 1 -> split on dim 1 over axis 1; data-parallel
  // axis 0 stays on dim 0 (local size 1024 / 8).
  auto steps = reshardSteps(1024, layout({{0, 1}, {}}), layout({{0}, {1}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllToAll);
  EXPECT_DOUBLE_EQ(steps[0].bytes, 128);
  // The chunks for dim 1 are strided: packed before sending; they arrive
  // in dim 0 order, the leading one, so no unpack.
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 128);
}

TEST(Reshard, AllToAllBetweenInnerDimsPacksAndUnpacks) {
  // Heads split (dim 2) -> sequence split (dim 1), as a row of attention
  // moving to sequence parallelism: both sides are strided.
  auto steps = reshardSteps(1024, layout({{}, {}, {1}}), layout({{}, {1}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllToAll);
  EXPECT_DOUBLE_EQ(steps[0].rearrangedBytes, 2 * steps[0].bytes);
  // Nothing moves between dims: nothing to rearrange.
  for (const CollectiveStep &step :
       reshardSteps(1024, layout({{1}, {}}), layout({{}, {}}), axisSize))
    EXPECT_DOUBLE_EQ(step.rearrangedBytes, 0);
}

TEST(Reshard, PartialGatherAndKeep) {
  // Partial over 0, split over 1 on dim 1 -> replicated: all-reduce of the
  // local 256 bytes, then all-gather to 1024 (unpacked: dim 1).
  auto steps = reshardSteps(1024, layout({{}, {1}}, {0}), layout({{}, {}}), axisSize);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(steps[0].bytes, 256);
  EXPECT_EQ(steps[1].kind, CollectiveKind::AllGather);
  EXPECT_DOUBLE_EQ(steps[1].bytes, 1024);
  EXPECT_DOUBLE_EQ(steps[1].rearrangedBytes, 1024);
}

TEST(Reshard, UpstreamMovesAnAxisOnlyBetweenDimsWithEqualOtherAxes) {
  // [[1]] -> [[], [1]]: upstream's own all-to-all.
  EXPECT_TRUE(upstreamOneStep(layout({{1}}), layout({{}, {1}})));
  EXPECT_TRUE(isAxisMove(layout({{1}}), layout({{}, {1}})));
  // GShard's [[dp, ep]] -> [[dp], [ep]]: an all-to-all over ep, but the
  // dimensions' other axes ([dp] and []) differ, so upstream cannot.
  TensorLayout grouped = layout({{0, 1}}), expertSplit = layout({{0}, {1}});
  EXPECT_FALSE(upstreamReshardable(grouped, expertSplit));
  EXPECT_TRUE(isAxisMove(grouped, expertSplit));
  EXPECT_TRUE(isAxisMove(expertSplit, grouped));
  EXPECT_TRUE(searchReshardable(grouped, expertSplit));
  auto steps = reshardSteps(1024, grouped, expertSplit, axisSize);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, CollectiveKind::AllToAll);
  EXPECT_EQ(steps[0].axes, GridAxes({1}));
}

TEST(Reshard, AxisMoveIsOneAxisBetweenTwoDims) {
  // Not the last axis of its dimension.
  EXPECT_FALSE(isAxisMove(layout({{1, 0}}), layout({{0}, {1}})));
  // Lands before the target's own axes.
  EXPECT_FALSE(isAxisMove(layout({{1}, {0}}), layout({{}, {1, 0}})));
  EXPECT_TRUE(isAxisMove(layout({{1}, {0}}), layout({{}, {0, 1}})));
  // Two axes change, or a third dimension changes too.
  EXPECT_FALSE(isAxisMove(layout({{0, 1}}), layout({{}, {0, 1}})));
  EXPECT_FALSE(isAxisMove(layout({{0, 1}, {}, {}}), layout({{0}, {1}, {0}})));
  // No change, a gather, a slice.
  EXPECT_FALSE(isAxisMove(layout({{1}}), layout({{1}})));
  EXPECT_FALSE(isAxisMove(layout({{1}}), layout({{}})));
  EXPECT_FALSE(isAxisMove(layout({{}}), layout({{1}})));
}

TEST(Reshard, PathDropsThenAppendsOneAxisAtATime) {
  auto path = reshardPath({{0, 1}}, {{0}, {1}});
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0], SplitDims({{0}}));
  EXPECT_EQ(path[1], SplitDims({{0}, {1}}));
  // Every step is one upstream step from the one before.
  path = reshardPath({{1, 0}, {}}, {{}, {0, 1}});
  ASSERT_EQ(path.size(), 4u);
  SplitDims cur = {{1, 0}};
  for (const SplitDims &next : path) {
    TensorLayout a, b;
    a.splitAxes = cur;
    b.splitAxes = next;
    EXPECT_TRUE(upstreamOneStep(a, b));
    cur = next;
  }
  EXPECT_EQ(cur, SplitDims({{}, {0, 1}}));
  EXPECT_TRUE(reshardPath({{1}}, {{1}, {}}).empty());
}

// A split reduction whose reader only appends the reduction's axes to one
// dimension ends in a reduce-scatter along that dimension; any other change
// (another dimension too, a different order, a dropped axis) keeps the
// all-reduce.
TEST(Reshard, ReductionScatterDim) {
  GridAxes tp = {1}, both = {0, 1};
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{}, {1}}), tp), 1);
  EXPECT_EQ(reductionScatterDim(layout({{0}, {}}), layout({{0, 1}, {}}), tp), 0);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}, {}}), layout({{}, {0, 1}}), both), 1);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{}, {1, 0}}), both), -1);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{}, {0}}), both), -1);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{0}, {1}}), tp), -1);
  EXPECT_EQ(reductionScatterDim(layout({{0}, {}}), layout({{}, {1}}), tp), -1);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{}, {}}), tp), -1);
  EXPECT_EQ(reductionScatterDim(layout({{}, {}}), layout({{}, {1}}), {}), -1);

  // Scattering along the leading dimension needs no packing.
  CollectiveStep lead = reductionStep(tp, 1024, 0);
  EXPECT_EQ(lead.kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(lead.bytes, 1024);
  EXPECT_EQ(lead.rearrangedBytes, 0);
  CollectiveStep inner = reductionStep(tp, 1024, 1);
  EXPECT_EQ(inner.rearrangedBytes, 1024);
  CollectiveStep reduce = reductionStep(tp, 1024, -1);
  EXPECT_EQ(reduce.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(reduce.rearrangedBytes, 0);
}
