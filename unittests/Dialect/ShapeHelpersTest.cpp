//===- ShapeHelpersTest.cpp - broadcast and window-size helpers -----------===//
//
// The shape rules every importer and verifier relies on.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomOps.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;

TEST(BroadcastShapes, NumpyRules) {
  auto s = broadcastShapes({2, 1, 8}, {4, 8});
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(ArrayRef<int64_t>(*s), ArrayRef<int64_t>({2, 4, 8}));
  auto scalar = broadcastShapes({}, {3, 5});
  ASSERT_TRUE(succeeded(scalar));
  EXPECT_EQ(ArrayRef<int64_t>(*scalar), ArrayRef<int64_t>({3, 5}));
  auto zero = broadcastShapes({0, 1}, {1, 3});
  ASSERT_TRUE(succeeded(zero));
  EXPECT_EQ(ArrayRef<int64_t>(*zero), ArrayRef<int64_t>({0, 3}));
}

TEST(BroadcastShapes, Incompatible) {
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {4})));
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {3, 3})));
}

TEST(WindowOutputSize, ConvAndPool) {
  // ResNet stem: 224, k7 s2 p3 -> 112; max pool k3 s2 p1 -> 56.
  EXPECT_EQ(windowOutputSize(224, 7, 2, 3, 3, 1, false), 112);
  EXPECT_EQ(windowOutputSize(112, 3, 2, 1, 1, 1, false), 56);
  // Dilation 2 widens a 3-tap kernel to 5.
  EXPECT_EQ(windowOutputSize(10, 3, 1, 0, 0, 2, false), 6);
  // Ceil mode keeps a partial window, but not one starting in the padding.
  EXPECT_EQ(windowOutputSize(6, 3, 2, 0, 0, 1, false), 2);
  EXPECT_EQ(windowOutputSize(6, 3, 2, 0, 0, 1, true), 3);
  EXPECT_EQ(windowOutputSize(5, 2, 2, 0, 1, 1, true), 3);
  // Kernel larger than the padded input: no output.
  EXPECT_EQ(windowOutputSize(2, 5, 1, 0, 0, 1, false), 0);
}
