//===- CollectivesToRuntime.cpp - shard collectives upstream cannot lower --===//
//
// Upstream `convert-shard-to-mpi` lowers the process index ops (kept) and
// `shard.all_reduce`, but has no pattern for `all_gather`, `all_to_all` or
// `reduce_scatter`, and the MPI dialect has no such ops. Its all-reduce
// emits `mpi.allreduce`, which declares no memory effects, so upstream's
// buffer deallocation rejects any function holding one, and splits a fresh
// communicator per call. So all four become one call into the runtime's C
// ABI on contiguous buffers (docs/lowering.md), which MPI's
// collectives concatenate and split along the leading dimension only; the
// layout changes that move the gathered/split dimension to the front and
// back are ordinary linalg transposes around the call:
//
//   all_gather(x, axis k)      : call -> [n, x...], move n before k, merge
//   all_to_all(x, split s, c)  : split s into (n, s/n), move n to the front,
//                                call -> [n, ...], move n before c, merge
//   reduce_scatter(x, axis s)  : split s into (n, s/n), move n to the front,
//                                call -> the caller's block
//
// `shard.all_slice` (no communication) goes through upstream's pattern. The
// pass also tells upstream's MPI lowering which MPI ABI to target (Debian's
// OpenMPI) through the module's DLTI map.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMCOLLECTIVESTORUNTIME
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The runtime's dtype codes (runtime/include/loomrt.h).
std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return 0;
  if (type.isF64())
    return 1;
  if (type.isF16())
    return 2;
  if (type.isBF16())
    return 3;
  if (type.isInteger(1))
    return 12;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    int base = integer.isUnsigned() ? 8 : 4;
    switch (integer.getWidth()) {
    case 8: return base;
    case 16: return base + 1;
    case 32: return base + 2;
    case 64: return base + 3;
    default: return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<int32_t> reductionCode(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum: return 0;
  case shard::ReductionKind::Max: return 1;
  case shard::ReductionKind::Min: return 2;
  case shard::ReductionKind::Product: return 3;
  default: return std::nullopt;
  }
}

/// Shared plumbing of the three patterns: the group, buffers, the call.
struct CollectiveLowering {
  PatternRewriter &rewriter;
  Location loc;
  ModuleOp module;

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, v, 64);
  }

  /// Number of processes in the group of `axes` on `grid`.
  static int64_t groupSize(shard::GridOp grid, ArrayRef<int16_t> axes) {
    int64_t n = 1;
    for (int16_t axis : axes)
      n *= grid.getShape()[axis];
    return n;
  }

  /// The axes as the runtime takes them: axis i in bits [8i, 8i+8).
  static int64_t packAxes(ArrayRef<int16_t> axes) {
    int64_t packed = 0;
    for (auto [i, axis] : llvm::enumerate(axes))
      packed |= static_cast<int64_t>(axis) << (8 * i);
    return packed;
  }

  Value pointerOf(Value memref) {
    Value index =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, memref);
    Value asInt = arith::IndexCastOp::create(rewriter, loc,
                                             rewriter.getI64Type(), index);
    return LLVM::IntToPtrOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext()),
        asInt);
  }

  /// Declares (once) and calls `void name(args)`.
  void call(StringRef name, ValueRange args) {
    auto callee = module.lookupSymbol<func::FuncOp>(name);
    if (!callee) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      callee = func::FuncOp::create(
          rewriter, loc, name,
          rewriter.getFunctionType(TypeRange(args), TypeRange{}));
      callee.setPrivate();
    }
    func::CallOp::create(rewriter, loc, callee, args);
  }

  /// Runs `name(in, out, extra...)` with `in` made a contiguous buffer and
  /// `out` a fresh one of `outType`; returns `out` as a tensor.
  Value run(StringRef name, Value in, RankedTensorType outType,
            ArrayRef<Value> extra) {
    auto inType = cast<RankedTensorType>(in.getType());
    Value inBuffer = bufferization::ToBufferOp::create(
        rewriter, loc, MemRefType::get(inType.getShape(), inType.getElementType()),
        in, /*read_only=*/true);
    auto outMemref =
        MemRefType::get(outType.getShape(), outType.getElementType());
    Value outBuffer = memref::AllocOp::create(rewriter, loc, outMemref);
    SmallVector<Value> args = {pointerOf(inBuffer), pointerOf(outBuffer)};
    llvm::append_range(args, extra);
    call(name, args);
    return bufferization::ToTensorOp::create(rewriter, loc, outType, outBuffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  /// Moves dimension `from` of `value` to position `to` (a linalg.transpose).
  Value moveDim(Value value, int64_t from, int64_t to) {
    if (from == to)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != from)
        perm.push_back(d);
    perm.insert(perm.begin() + to, from);
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(type.getDimSize(d));
    Value init = tensor::EmptyOp::create(rewriter, loc, shape,
                                         type.getElementType());
    return linalg::TransposeOp::create(rewriter, loc, value, init, perm)
        .getResult()[0];
  }

  /// Splits dimension `dim` into (n, size / n).
  Value splitDim(Value value, int64_t dim, int64_t n) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= n;
    shape.insert(shape.begin() + dim, n);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0, out = 0; d < type.getRank(); ++d) {
      if (d == dim) {
        groups.push_back({out, out + 1});
        out += 2;
      } else {
        groups.push_back({out++});
      }
    }
    return tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        value, groups);
  }

  /// Merges dimensions `dim` and `dim + 1`.
  Value mergeDims(Value value, int64_t dim) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == dim) {
        groups.push_back({d, d + 1});
        ++d;
      } else {
        groups.push_back({d});
      }
    }
    return tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
  }
};

shard::GridOp gridOf(Operation *op, FlatSymbolRefAttr symbol) {
  SymbolTableCollection symbols;
  return shard::getGridOrNull(op, symbol, symbols);
}

struct AllGatherToRuntime : OpRewritePattern<shard::AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::AllGatherOp op,
                                PatternRewriter &rewriter) const override {
    shard::GridOp grid = gridOf(op, op.getGridAttr());
    if (!grid)
      return rewriter.notifyMatchFailure(op, "unknown grid");
    CollectiveLowering lower{rewriter, op.getLoc(),
                             op->getParentOfType<ModuleOp>()};
    ArrayRef<int16_t> axes = op.getGridAxes();
    int64_t n = CollectiveLowering::groupSize(grid, axes);
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = op.getGatherAxis().getSExtValue();
    SmallVector<int64_t> stacked(inType.getShape());
    stacked.insert(stacked.begin(), n);
    int64_t bytes = inType.getNumElements() *
                    llvm::divideCeil(inType.getElementTypeBitWidth(), 8);
    Value gathered = lower.run(
        "loomrt_all_gather", op.getInput(),
        RankedTensorType::get(stacked, inType.getElementType()),
        {lower.i64(bytes), lower.i64(axes.size()),
         lower.i64(CollectiveLowering::packAxes(axes))});
    Value result = lower.mergeDims(lower.moveDim(gathered, 0, axis), axis);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AllToAllToRuntime : OpRewritePattern<shard::AllToAllOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::AllToAllOp op,
                                PatternRewriter &rewriter) const override {
    shard::GridOp grid = gridOf(op, op.getGridAttr());
    if (!grid)
      return rewriter.notifyMatchFailure(op, "unknown grid");
    CollectiveLowering lower{rewriter, op.getLoc(),
                             op->getParentOfType<ModuleOp>()};
    ArrayRef<int16_t> axes = op.getGridAxes();
    int64_t n = CollectiveLowering::groupSize(grid, axes);
    int64_t split = op.getSplitAxis().getSExtValue();
    int64_t concat = op.getConcatAxis().getSExtValue();
    Value blocks =
        lower.moveDim(lower.splitDim(op.getInput(), split, n), split, 0);
    auto blocksType = cast<RankedTensorType>(blocks.getType());
    int64_t bytesPerPeer = blocksType.getNumElements() / n *
                           llvm::divideCeil(blocksType.getElementTypeBitWidth(), 8);
    Value received = lower.run("loomrt_all_to_all", blocks, blocksType,
                               {lower.i64(bytesPerPeer), lower.i64(axes.size()),
                                lower.i64(CollectiveLowering::packAxes(axes))});
    Value result = lower.mergeDims(lower.moveDim(received, 0, concat), concat);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReduceScatterToRuntime : OpRewritePattern<shard::ReduceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::ReduceScatterOp op,
                                PatternRewriter &rewriter) const override {
    shard::GridOp grid = gridOf(op, op.getGridAttr());
    if (!grid)
      return rewriter.notifyMatchFailure(op, "unknown grid");
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    std::optional<int32_t> dtype = dtypeCode(inType.getElementType());
    std::optional<int32_t> reduction = reductionCode(op.getReduction());
    if (!dtype || !reduction)
      return op.emitOpError("reduces ")
             << inType.getElementType() << " with "
             << shard::stringifyReductionKind(op.getReduction())
             << ", which the runtime does not implement";
    CollectiveLowering lower{rewriter, op.getLoc(),
                             op->getParentOfType<ModuleOp>()};
    ArrayRef<int16_t> axes = op.getGridAxes();
    int64_t n = CollectiveLowering::groupSize(grid, axes);
    int64_t axis = op.getScatterAxis().getSExtValue();
    Value blocks = lower.moveDim(lower.splitDim(op.getInput(), axis, n), axis, 0);
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Value dtypeValue = arith::ConstantIntOp::create(rewriter, op.getLoc(), *dtype, 32);
    Value reductionValue =
        arith::ConstantIntOp::create(rewriter, op.getLoc(), *reduction, 32);
    Value result = lower.run(
        "loomrt_reduce_scatter", blocks, resultType,
        {lower.i64(resultType.getNumElements()), dtypeValue, reductionValue,
         lower.i64(axes.size()), lower.i64(CollectiveLowering::packAxes(axes))});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Upstream lowers all-reduce to `mpi.allreduce`, which declares no memory
/// effects (upstream's ownership-based deallocation then rejects the
/// function) and splits a new communicator on every call; the runtime
/// caches one per axis set.
struct AllReduceToRuntime : OpRewritePattern<shard::AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::AllReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto outType = cast<RankedTensorType>(op.getResult().getType());
    std::optional<int32_t> dtype = dtypeCode(outType.getElementType());
    std::optional<int32_t> reduction = reductionCode(op.getReduction());
    if (inType.getElementType() != outType.getElementType() || !dtype ||
        !reduction)
      return op.emitOpError("reduces ")
             << inType << " to " << outType << " with "
             << shard::stringifyReductionKind(op.getReduction())
             << ", which the runtime does not implement";
    Location loc = op.getLoc();
    CollectiveLowering lower{rewriter, loc, op->getParentOfType<ModuleOp>()};
    ArrayRef<int16_t> axes = op.getGridAxes();
    auto memrefType = MemRefType::get(inType.getShape(), inType.getElementType());
    Value in = bufferization::ToBufferOp::create(rewriter, loc, memrefType,
                                                 op.getInput(), /*read_only=*/true);
    Value buffer = memref::AllocOp::create(rewriter, loc, memrefType);
    memref::CopyOp::create(rewriter, loc, in, buffer);
    lower.call("loomrt_all_reduce",
               {lower.pointerOf(buffer), lower.i64(inType.getNumElements()),
                arith::ConstantIntOp::create(rewriter, loc, *dtype, 32),
                arith::ConstantIntOp::create(rewriter, loc, *reduction, 32),
                lower.i64(axes.size()),
                lower.i64(CollectiveLowering::packAxes(axes))});
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, loc, outType, buffer,
                               /*restrict=*/true, /*writable=*/true));
    return success();
  }
};

struct CollectivesToRuntimePass
    : mlir::loom::impl::LoomCollectivesToRuntimeBase<CollectivesToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTableCollection symbols;
    RewritePatternSet patterns(ctx);
    patterns.add<AllReduceToRuntime, AllGatherToRuntime, AllToAllToRuntime,
                 ReduceScatterToRuntime>(ctx);
    shard::populateAllSliceOpLoweringPatterns(patterns, symbols);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    // Upstream's MPI lowering reads the ABI from the module's DLTI map; the
    // runtime links Debian's OpenMPI. Only set where MPI is used, so that
    // single-device modules stay runnable by mlir-runner.
    bool communicates = false;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<shard::ShardDialect>(op->getDialect()) &&
          !isa<shard::GridOp>(op))
        communicates = true;
    });
    if (communicates && !module->hasAttr(DLTIDialect::kMapAttrName)) {
      Builder b(ctx);
      DataLayoutEntryInterface abi = DataLayoutEntryAttr::get(
          b.getStringAttr("MPI:Implementation"), b.getStringAttr("OpenMPI"));
      module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(ctx, {abi}));
    }
  }
};
} // namespace
