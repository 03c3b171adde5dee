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
// Pipeline-stage `shard.send` / `shard.recv` become in-group point-to-point
// calls. `shard.all_slice` (no communication) goes through upstream's pattern. The
// pass also tells upstream's MPI lowering which MPI ABI to target (Debian's
// OpenMPI) through the module's DLTI map.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"
#include "loom/Target/RuntimeABI.h"

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

std::optional<int32_t> reductionCode(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum: return 0;
  case shard::ReductionKind::Max: return 1;
  case shard::ReductionKind::Min: return 2;
  case shard::ReductionKind::Product: return 3;
  default: return std::nullopt;
  }
}

/// Shared plumbing of the four patterns: the group, buffers, the call.
struct CollectiveLowering {
  PatternRewriter &rewriter;
  Location loc;
  ModuleOp module;
  ArrayRef<int16_t> axes;
  /// Number of processes in the group.
  int64_t groupSize;
  shard::GridOp grid;

  /// Fails to match if `op`'s grid is unknown.
  template <typename OpTy>
  static FailureOr<CollectiveLowering> get(OpTy op, PatternRewriter &rewriter) {
    SymbolTableCollection symbols;
    shard::GridOp grid = shard::getGridOrNull(op, op.getGridAttr(), symbols);
    if (!grid)
      return rewriter.notifyMatchFailure(op, "unknown grid");
    int64_t n = 1;
    for (int16_t axis : op.getGridAxes())
      n *= grid.getShape()[axis];
    return CollectiveLowering{rewriter, op.getLoc(),
                              op->template getParentOfType<ModuleOp>(),
                              op.getGridAxes(), n, grid};
  }

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, v, 64);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, v, 32);
  }

  /// The arguments every call ends with: the number of axes and the axes.
  SmallVector<Value, 2> groupArgs() {
    return {i64(axes.size()), i64(packGridAxes(axes))};
  }

  /// The (dtype, reduction) arguments of a reducing call, or an error on
  /// `op` if the runtime has no such reduction.
  FailureOr<SmallVector<Value, 2>> reductionArgs(Operation *op, Type element,
                                                 shard::ReductionKind kind) {
    std::optional<int32_t> dtype = runtimeDtype(element);
    std::optional<int32_t> reduction = reductionCode(kind);
    if (!dtype || !reduction)
      return op->emitOpError("reduces ")
             << element << " with " << shard::stringifyReductionKind(kind)
             << ", which the runtime does not implement";
    return SmallVector<Value, 2>{i32(*dtype), i32(*reduction)};
  }

  static int64_t bytesOf(RankedTensorType type) {
    return type.getNumElements() *
           llvm::divideCeil(type.getElementTypeBitWidth(), 8);
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

  /// Calls the point-to-point `name(buffer, bytes, peer, tag, axes)`, the
  /// peer given by its static multi-index in the group, the tag by the op's
  /// `loom.tag` (0 without one).
  LogicalResult transfer(Operation *op, StringRef name, Value buffer,
                         RankedTensorType type,
                         std::optional<ArrayRef<int64_t>> peer,
                         ValueRange dynamicPeer) {
    if (!peer || !dynamicPeer.empty() || peer->size() != axes.size())
      return op->emitOpError("needs a static peer index with one entry per "
                             "grid axis");
    int64_t index = 0;
    for (auto [axis, i] : llvm::zip(axes, *peer))
      index = index * grid.getShape()[axis] + i;
    auto tag = op->getAttrOfType<IntegerAttr>("loom.tag");
    SmallVector<Value> args = {pointerOf(buffer), i64(bytesOf(type)),
                               i64(index), i64(tag ? tag.getInt() : 0)};
    llvm::append_range(args, groupArgs());
    call(name, args);
    return success();
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

struct AllGatherToRuntime : OpRewritePattern<shard::AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::AllGatherOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = op.getGatherAxis().getSExtValue();
    SmallVector<int64_t> stacked(inType.getShape());
    stacked.insert(stacked.begin(), lower->groupSize);
    SmallVector<Value> args = {lower->i64(CollectiveLowering::bytesOf(inType))};
    llvm::append_range(args, lower->groupArgs());
    Value gathered = lower->run(
        "loomrt_all_gather", op.getInput(),
        RankedTensorType::get(stacked, inType.getElementType()), args);
    rewriter.replaceOp(
        op, lower->mergeDims(lower->moveDim(gathered, 0, axis), axis));
    return success();
  }
};

struct AllToAllToRuntime : OpRewritePattern<shard::AllToAllOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::AllToAllOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    int64_t n = lower->groupSize;
    int64_t split = op.getSplitAxis().getSExtValue();
    int64_t concat = op.getConcatAxis().getSExtValue();
    Value blocks =
        lower->moveDim(lower->splitDim(op.getInput(), split, n), split, 0);
    auto blocksType = cast<RankedTensorType>(blocks.getType());
    SmallVector<Value> args = {
        lower->i64(CollectiveLowering::bytesOf(blocksType) / n)};
    llvm::append_range(args, lower->groupArgs());
    Value received = lower->run("loomrt_all_to_all", blocks, blocksType, args);
    rewriter.replaceOp(
        op, lower->mergeDims(lower->moveDim(received, 0, concat), concat));
    return success();
  }
};

struct ReduceScatterToRuntime : OpRewritePattern<shard::ReduceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::ReduceScatterOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<SmallVector<Value, 2>> reduction = lower->reductionArgs(
        op, resultType.getElementType(), op.getReduction());
    if (failed(reduction))
      return failure();
    int64_t axis = op.getScatterAxis().getSExtValue();
    Value blocks = lower->moveDim(
        lower->splitDim(op.getInput(), axis, lower->groupSize), axis, 0);
    SmallVector<Value> args = {lower->i64(resultType.getNumElements())};
    llvm::append_range(args, *reduction);
    llvm::append_range(args, lower->groupArgs());
    rewriter.replaceOp(
        op, lower->run("loomrt_reduce_scatter", blocks, resultType, args));
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
    if (inType.getElementType() != outType.getElementType())
      return op.emitOpError("reduces ")
             << inType << " to " << outType
             << "; the runtime reduces in the input's element type";
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    FailureOr<SmallVector<Value, 2>> reduction = lower->reductionArgs(
        op, outType.getElementType(), op.getReduction());
    if (failed(reduction))
      return failure();
    Location loc = op.getLoc();
    auto memrefType = MemRefType::get(inType.getShape(), inType.getElementType());
    Value in = bufferization::ToBufferOp::create(rewriter, loc, memrefType,
                                                 op.getInput(), /*read_only=*/true);
    Value buffer = memref::AllocOp::create(rewriter, loc, memrefType);
    memref::CopyOp::create(rewriter, loc, in, buffer);
    SmallVector<Value> args = {lower->pointerOf(buffer),
                               lower->i64(inType.getNumElements())};
    llvm::append_range(args, *reduction);
    llvm::append_range(args, lower->groupArgs());
    lower->call("loomrt_all_reduce", args);
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, loc, outType, buffer,
                               /*restrict=*/true, /*writable=*/true));
    return success();
  }
};

/// Pipeline transfers (loom-stage-transfers): the runtime resolves the
/// peer's world rank from its index in this rank's group.
struct SendToRuntime : OpRewritePattern<shard::SendOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::SendOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Value buffer = bufferization::ToBufferOp::create(
        rewriter, op.getLoc(),
        MemRefType::get(type.getShape(), type.getElementType()), op.getInput(),
        /*read_only=*/true);
    if (failed(lower->transfer(op, "loomrt_send_in_group", buffer, type,
                               op.getDestination(), op.getDestinationDynamic())))
      return failure();
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

struct RecvToRuntime : OpRewritePattern<shard::RecvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(shard::RecvOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<CollectiveLowering> lower = CollectiveLowering::get(op, rewriter);
    if (failed(lower))
      return failure();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value buffer = memref::AllocOp::create(
        rewriter, op.getLoc(),
        MemRefType::get(type.getShape(), type.getElementType()));
    if (failed(lower->transfer(op, "loomrt_recv_in_group", buffer, type,
                               op.getSource(), op.getSourceDynamic())))
      return failure();
    rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                               rewriter, op.getLoc(), type, buffer,
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
                 ReduceScatterToRuntime, SendToRuntime, RecvToRuntime>(ctx);
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
