//===- ShardingInterfaceTest.cpp - iteration spaces of loom ops -----------===//
//
// Checks the loops and indexing maps ops report through upstream's
// ShardingInterface: what sharding propagation and the planner read.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::loom;
using utils::IteratorType;

namespace {
class ShardingInterfaceTest : public ::testing::Test {
protected:
  ShardingInterfaceTest() {
    ctx.loadDialect<LoomDialect, func::FuncDialect>();
  }

  /// Parses `body` inside a function and returns its first loom op.
  shard::ShardingInterface parseOp(const std::string &args,
                                   const std::string &body) {
    std::string src = "func.func @f(" + args + ") {\n" + body + "\nreturn\n}";
    module = parseSourceString<ModuleOp>(src, &ctx);
    EXPECT_TRUE(module) << src;
    if (!module)
      return nullptr;
    shard::ShardingInterface found;
    module->walk([&](shard::ShardingInterface op) {
      if (!found)
        found = op;
    });
    return found;
  }

  static std::string str(AffineMap map) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << map;
    return s;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};
} // namespace

TEST_F(ShardingInterfaceTest, MatmulBroadcastsBatch) {
  auto op = parseOp("%a: tensor<2x16x64xf32>, %b: tensor<64x32xf32>",
                    "%0 = loom.matmul %a, %b : tensor<2x16x64xf32>, "
                    "tensor<64x32xf32>");
  ASSERT_TRUE(op);
  auto iters = op.getLoopIteratorTypes();
  ASSERT_EQ(iters.size(), 4u);
  EXPECT_EQ(iters[3], IteratorType::reduction);
  auto maps = op.getIndexingMaps();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(str(maps[0]), "(d0, d1, d2, d3) -> (d0, d1, d3)");
  EXPECT_EQ(str(maps[1]), "(d0, d1, d2, d3) -> (d3, d2)");
  EXPECT_EQ(str(maps[2]), "(d0, d1, d2, d3) -> (d0, d1, d2)");
  EXPECT_EQ(op.getReductionLoopIteratorKinds().front(),
            shard::ReductionKind::Sum);
}

TEST_F(ShardingInterfaceTest, SizeOneBroadcastGetsItsOwnLoop) {
  auto op = parseOp("%a: tensor<4x1x8xf32>, %b: tensor<4x3x8xf32>",
                    "%0 = loom.binary add %a, %b : tensor<4x1x8xf32>, "
                    "tensor<4x3x8xf32>");
  ASSERT_TRUE(op);
  auto maps = op.getIndexingMaps();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(str(maps[0]), "(d0, d1, d2, d3) -> (d0, d3, d2)");
  EXPECT_EQ(str(maps[1]), "(d0, d1, d2, d3) -> (d0, d1, d2)");
  EXPECT_EQ(str(maps[2]), "(d0, d1, d2, d3) -> (d0, d1, d2)");
}

TEST_F(ShardingInterfaceTest, ReshapeSharesLeadingDimOfEachGroup) {
  auto op = parseOp("%a: tensor<2x16x768xf32>",
                    "%0 = loom.reshape %a : tensor<2x16x768xf32> -> "
                    "tensor<32x12x64xf32>");
  ASSERT_TRUE(op);
  auto maps = op.getIndexingMaps();
  ASSERT_EQ(maps.size(), 2u);
  // Groups: (2,16) -> (32) and (768) -> (12, 64). The batch dim and the
  // merged token dim share a loop; so do 768 and the head dim 12.
  AffineMap in = maps[0], out = maps[1];
  EXPECT_EQ(in.getResult(0), out.getResult(0));
  EXPECT_NE(in.getResult(1), out.getResult(0));
  EXPECT_EQ(in.getResult(2), out.getResult(1));
  EXPECT_NE(out.getResult(2), in.getResult(2));
}

TEST_F(ShardingInterfaceTest, GroupedQueryAttentionSeparatesKvHeads) {
  auto op = parseOp(
      "%q: tensor<1x8x16x32xf32>, %kv: tensor<1x2x16x32xf32>",
      "%0 = loom.attention %q, %kv, %kv : tensor<1x8x16x32xf32>, "
      "tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>");
  ASSERT_TRUE(op);
  auto maps = op.getIndexingMaps();
  ASSERT_EQ(maps.size(), 4u);
  // Query heads and key heads are different loops under GQA.
  EXPECT_NE(maps[0].getResult(1), maps[1].getResult(1));
  EXPECT_EQ(maps[0].getResult(1), maps[3].getResult(1));
}

TEST_F(ShardingInterfaceTest, ConvWindowExpressions) {
  auto op = parseOp(
      "%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>",
      "%0 = loom.conv %x, %w {strides = array<i64: 2, 2>, padding = "
      "array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : "
      "i64} : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>");
  ASSERT_TRUE(op);
  auto maps = op.getIndexingMaps();
  ASSERT_EQ(maps.size(), 3u);
  // Loops: n f oh ow c kh kw.
  EXPECT_EQ(str(maps[0]),
            "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)");
  EXPECT_EQ(str(maps[1]), "(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)");
  EXPECT_EQ(str(maps[2]), "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)");
}

TEST_F(ShardingInterfaceTest, EveryOpPassesUpstreamVerification) {
  auto op = parseOp("%a: tensor<4x8xf32>",
                    "%0 = loom.softmax %a {axis = 1 : i64} : tensor<4x8xf32>");
  ASSERT_TRUE(op);
  EXPECT_TRUE(succeeded(op.verifyShardingInterfaceImpl()));
  EXPECT_EQ(op.getLoopIteratorTypes()[1], IteratorType::reduction);
  EXPECT_EQ(op.getReductionLoopIteratorKinds()[0],
            shard::ReductionKind::Generic);
}
