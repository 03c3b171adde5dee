//===- RecomputeTest.cpp - segments and marked regions ---------------------===//
//
// Partial recomputation (docs/memory-placement.md) ranks the program's
// segments and marks each chosen one with its own integer; these check the
// segments found between cut points and that differently marked segments
// stay separate regions.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Recompute.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::loom;

namespace {
/// `blocks` residual MLP blocks: y = x + down(relu(up(x))). After each
/// block's addition its result alone is live: the cut points.
std::string residualMlp(int blocks) {
  std::string ir = "func.func @main(%s0: tensor<4x64xf32>) -> tensor<4x64xf32> {\n";
  for (int b = 0; b < blocks; ++b) {
    std::string i = std::to_string(b), o = std::to_string(b + 1);
    ir += "  %uw" + i + " = loom.weight parameter \"b" + i +
          ".up\" from \"m.bin\"[0] : tensor<64x256xf32>\n"
          "  %u" + i + " = loom.matmul %s" + i + ", %uw" + i +
          " : tensor<4x64xf32>, tensor<64x256xf32>\n"
          "  %a" + i + " = loom.unary relu %u" + i + " : tensor<4x256xf32>\n"
          "  %dw" + i + " = loom.weight parameter \"b" + i +
          ".down\" from \"m.bin\"[0] : tensor<256x64xf32>\n"
          "  %d" + i + " = loom.matmul %a" + i + ", %dw" + i +
          " : tensor<4x256xf32>, tensor<256x64xf32>\n"
          "  %s" + o + " = loom.binary add %s" + i + ", %d" + i +
          " : tensor<4x64xf32>, tensor<4x64xf32>\n";
  }
  return ir + "  return %s" + std::to_string(blocks) + " : tensor<4x64xf32>\n}\n";
}

class RecomputeTest : public ::testing::Test {
protected:
  RecomputeTest() {
    ctx.loadDialect<LoomDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(residualMlp(3), &ctx);
    EXPECT_TRUE(module);
    func = *module->getOps<func::FuncOp>().begin();
  }

  RecomputeFacts facts(const DenseMap<Operation *, int64_t> *marks = nullptr) {
    return RecomputeFacts{hasBackward, isActivation, needsGradient, marks};
  }

  // Every compute op has a backward; every value but a weight is an
  // activation; everything needs a gradient.
  static bool hasBackwardImpl(Operation *op) {
    return isa<MatmulOp, UnaryOp, BinaryOp>(op);
  }
  static bool isActivationImpl(Value v) { return !v.getDefiningOp<WeightOp>(); }
  static bool needsGradientImpl(Value) { return true; }
  llvm::function_ref<bool(Operation *)> hasBackward = hasBackwardImpl;
  llvm::function_ref<bool(Value)> isActivation = isActivationImpl;
  llvm::function_ref<bool(Value)> needsGradient = needsGradientImpl;

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
};
} // namespace

TEST_F(RecomputeTest, SegmentsAreBlocksBetweenCutPoints) {
  RecomputeRegions none = selectRecomputation(func, RecomputeMode::None, facts());
  EXPECT_EQ(none.numRegions, 0u);
  SmallVector<RecomputeSegment> segments = rankRecomputeSegments(func, facts(), none);
  ASSERT_EQ(segments.size(), 3u);
  for (const RecomputeSegment &s : segments) {
    EXPECT_TRUE(isa<MatmulOp>(s.ops.front()));
    EXPECT_GT(s.flops, 0);
  }
  // The first two blocks end at a cut: their residual add's result is the
  // next block's checkpoint, apart from the ops (the next block's up
  // projection keeps it, so offloading moves its bytes). The last block's
  // add ends the program and stays among its ops; its result is read by
  // nothing's backward.
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(segments[k].ops.size(), 3u);
    EXPECT_TRUE(isa<MatmulOp>(segments[k].ops.back()));
    ASSERT_TRUE(segments[k].checkpoint);
    EXPECT_TRUE(isa<BinaryOp>(segments[k].checkpoint));
    EXPECT_GT(segments[k].checkpointBytes, 0);
  }
  ASSERT_EQ(segments[2].ops.size(), 4u);
  EXPECT_TRUE(isa<BinaryOp>(segments[2].ops.back()));
  EXPECT_FALSE(segments[2].checkpoint);
  // Each frees its up projection's and activation's outputs; the last
  // re-runs its add as well, so it ranks last. Equal ratios go in program
  // order.
  auto blockOf = [&](const RecomputeSegment &s) {
    for (auto [i, op] : llvm::enumerate(func.getBody().front().getOperations()))
      if (&op == s.ops.front())
        return i;
    return size_t(0);
  };
  EXPECT_LT(blockOf(segments[0]), blockOf(segments[1]));
  EXPECT_LT(blockOf(segments[1]), blockOf(segments[2]));
  EXPECT_EQ(segments[0].freedBytes, segments[1].freedBytes);
  EXPECT_EQ(segments[2].freedBytes, segments[0].freedBytes);
  EXPECT_GT(segments[2].flops, segments[0].flops);
}

TEST_F(RecomputeTest, EqualMarksJoinDifferentMarksDoNot) {
  RecomputeRegions none = selectRecomputation(func, RecomputeMode::None, facts());
  SmallVector<RecomputeSegment> segments = rankRecomputeSegments(func, facts(), none);
  ASSERT_EQ(segments.size(), 3u);
  // Two blocks marked apart (their checkpoint kept, as placement marks
  // consecutive segments), and the same with block 0's checkpoint marked
  // like the rest: one connected run.
  DenseMap<Operation *, int64_t> apart, together;
  for (int64_t k = 0; k < 2; ++k)
    for (Operation *op : segments[k].ops) {
      apart[op] = k;
      together[op] = 0;
    }
  together[segments[0].checkpoint] = 0;
  Value checkpoint = segments[0].checkpoint->getResult(0);
  RecomputeRegions two = selectRecomputation(func, RecomputeMode::None, facts(&apart));
  EXPECT_EQ(two.numRegions, 2u);
  EXPECT_EQ(two.regionOf.size(), 6u);
  // Each re-runs from its own checkpoint: the input, then block 0's output.
  EXPECT_TRUE(two.keptInputs.contains(func.getArgument(0)));
  EXPECT_TRUE(two.keptInputs.contains(checkpoint));
  RecomputeRegions one = selectRecomputation(func, RecomputeMode::None, facts(&together));
  EXPECT_EQ(one.numRegions, 1u);
  EXPECT_FALSE(one.keptInputs.contains(checkpoint));
  // Equal marks on ops not connected by def-use stay apart: without the
  // checkpoint between them, the two blocks are two regions.
  together.erase(segments[0].checkpoint);
  EXPECT_EQ(selectRecomputation(func, RecomputeMode::None, facts(&together)).numRegions, 2u);
}
