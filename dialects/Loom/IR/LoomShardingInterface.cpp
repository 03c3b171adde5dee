//===- LoomShardingInterface.cpp - iteration spaces of loom ops -----------===//
//
// Implements upstream `shard::ShardingInterface` for every loom op. Each op
// describes its iteration space once: loops (parallel or reduction, with the
// reduction kind), the affine map from loops to every operand and result, and
// whether a loop may be split with each device computing the op on its local
// blocks ("local" loops). Propagation, `shard-partition` and Loom's planner
// all read this one description.
//
// Conventions, forced by what upstream propagation accepts:
//  * Operand maps use only dims, dim*const and sums of those, never constants.
//    A size-1 operand dim that broadcasts against a larger extent therefore
//    gets its own unit-extent loop (never worth sharding) instead of `0`.
//  * Result maps are projected permutations. Where a result dim is not a
//    plain loop of the computation (a reshaped group, a sliced or padded dim,
//    top-k's axis), it gets its own parallel loop that is not "local": the
//    planner may see it, propagation never splits it (getShardingOption
//    drops such splits, so the operand is gathered first) and partitioning
//    along an explicitly annotated one is rejected.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;
using shard::ReductionKind;
using utils::IteratorType;

namespace {

/// The iteration space of one op, as the sharding interface reports it.
struct IterationSpace {
  SmallVector<IteratorType> iterators;
  SmallVector<ReductionKind> reductionKinds; // one per reduction loop
  SmallVector<bool> local;                   // loop splittable block-locally
  SmallVector<AffineMap> maps;               // operands, then results
};

/// Incrementally builds an IterationSpace.
class SpaceBuilder {
public:
  explicit SpaceBuilder(MLIRContext *ctx) : ctx(ctx) {}

  AffineExpr parallel(bool isLocal = true) {
    space.iterators.push_back(IteratorType::parallel);
    space.local.push_back(isLocal);
    return getAffineDimExpr(space.iterators.size() - 1, ctx);
  }
  AffineExpr reduction(ReductionKind kind) {
    space.iterators.push_back(IteratorType::reduction);
    space.reductionKinds.push_back(kind);
    // Sum/max/min reductions split into local partial results plus an
    // all-reduce; other kinds (softmax, norms, top-k) cannot.
    space.local.push_back(kind == ReductionKind::Sum ||
                          kind == ReductionKind::Max ||
                          kind == ReductionKind::Min);
    return getAffineDimExpr(space.iterators.size() - 1, ctx);
  }
  SmallVector<AffineExpr> parallelLoops(int64_t n) {
    SmallVector<AffineExpr> loops;
    for (int64_t i = 0; i < n; ++i)
      loops.push_back(parallel());
    return loops;
  }

  /// Map for an operand of shape `shape` that broadcasts (numpy rules) against
  /// the loops `resultLoops` of a result of shape `resultShape`.
  SmallVector<AffineExpr> broadcastMap(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> resultShape,
                                       ArrayRef<AffineExpr> resultLoops) {
    SmallVector<AffineExpr> exprs;
    size_t lead = resultShape.size() - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 1 && resultShape[lead + i] != 1)
        exprs.push_back(parallel(/*isLocal=*/false));
      else
        exprs.push_back(resultLoops[lead + i]);
    }
    return exprs;
  }

  void map(ArrayRef<AffineExpr> exprs) { pending.emplace_back(exprs); }

  IterationSpace finish() {
    for (auto &exprs : pending)
      space.maps.push_back(
          AffineMap::get(space.iterators.size(), 0, exprs, ctx));
    return std::move(space);
  }

private:
  MLIRContext *ctx;
  IterationSpace space;
  SmallVector<SmallVector<AffineExpr>> pending;
};

} // namespace

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Ops whose result is a pointwise function of broadcast operands.
static IterationSpace broadcastSpace(Operation *op) {
  SpaceBuilder b(op->getContext());
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  SmallVector<AffineExpr> loops = b.parallelLoops(out.size());
  for (Value v : op->getOperands())
    b.map(b.broadcastMap(shapeOf(v), out, loops));
  b.map(loops);
  return b.finish();
}

/// An op that only reads its one operand (a release): one local parallel
/// loop per dimension, so it goes with the operand's sharding.
static IterationSpace sinkSpace(Operation *op) {
  SpaceBuilder b(op->getContext());
  b.map(b.parallelLoops(shapeOf(op->getOperand(0)).size()));
  return b.finish();
}

/// Ops with no operands: one parallel loop per result dim. A weight's loops
/// are local (each device loads only its slice); a constant's are not: its
/// value is one attribute, so it stays whole and a user that wants a slice
/// of it gets one from an all_slice. A splat constant's are local (every
/// slice is the same splat, which partitioning writes at the local type).
static IterationSpace sourceSpace(Operation *op, bool isLocal = true) {
  SpaceBuilder b(op->getContext());
  SmallVector<AffineExpr> loops;
  for (int64_t d = 0, e = shapeOf(op->getResult(0)).size(); d < e; ++d)
    loops.push_back(b.parallel(isLocal));
  b.map(loops);
  return b.finish();
}

static IterationSpace spaceOf(MatmulOp op) {
  SpaceBuilder b(op.getContext());
  ArrayRef<int64_t> out = shapeOf(op.getResult());
  ArrayRef<int64_t> batch = out.drop_back(2);
  SmallVector<AffineExpr> batchLoops = b.parallelLoops(batch.size());
  AffineExpr m = b.parallel(), n = b.parallel();
  AffineExpr k = b.reduction(ReductionKind::Sum);
  auto operand = [&](Value v, AffineExpr row, AffineExpr col) {
    SmallVector<AffineExpr> e =
        b.broadcastMap(shapeOf(v).drop_back(2), batch, batchLoops);
    e.push_back(row);
    e.push_back(col);
    b.map(e);
  };
  operand(op.getLhs(), m, k);
  operand(op.getRhs(), k, n);
  SmallVector<AffineExpr> res = batchLoops;
  res.append({m, n});
  b.map(res);
  return b.finish();
}

/// Window ops (conv, pool): input spatial index = out * stride + k * dilation.
/// Spatial output loops are not local: splitting them needs a halo exchange.
static IterationSpace spaceOf(ConvOp op) {
  SpaceBuilder b(op.getContext());
  int64_t spatial = shapeOf(op.getInput()).size() - 2;
  int64_t groups = op.getGroups();
  int64_t channels = shapeOf(op.getInput())[1];
  int64_t filters = shapeOf(op.getWeight())[0];
  bool depthwise = groups > 1 && groups == channels && groups == filters;
  AffineExpr n = b.parallel();
  AffineExpr f = b.parallel(/*isLocal=*/groups == 1 || depthwise);
  SmallVector<AffineExpr> outs;
  for (int64_t i = 0; i < spatial; ++i)
    outs.push_back(b.parallel(/*isLocal=*/false));
  // Input channels: the reduction loop for a plain conv, the filter loop for a
  // depthwise one; a general grouped conv keeps them apart (not shardable).
  AffineExpr cIn, cW;
  if (groups == 1) {
    cIn = cW = b.reduction(ReductionKind::Sum);
  } else if (depthwise) {
    cIn = f;
    cW = b.parallel(/*isLocal=*/false);
  } else {
    cIn = b.parallel(/*isLocal=*/false);
    cW = b.reduction(ReductionKind::Generic);
  }
  SmallVector<AffineExpr> ks;
  for (int64_t i = 0; i < spatial; ++i)
    ks.push_back(b.reduction(ReductionKind::Generic));
  SmallVector<AffineExpr> in = {n, cIn}, w = {f, cW}, res = {n, f};
  for (int64_t i = 0; i < spatial; ++i) {
    in.push_back(outs[i] * op.getStrides()[i] + ks[i] * op.getDilations()[i]);
    w.push_back(ks[i]);
    res.push_back(outs[i]);
  }
  b.map(in);
  b.map(w);
  if (op.getBias())
    b.map({f});
  b.map(res);
  return b.finish();
}

static IterationSpace spaceOf(PoolOp op) {
  SpaceBuilder b(op.getContext());
  int64_t spatial = shapeOf(op.getInput()).size() - 2;
  AffineExpr n = b.parallel(), c = b.parallel();
  SmallVector<AffineExpr> outs, ks;
  for (int64_t i = 0; i < spatial; ++i)
    outs.push_back(b.parallel(/*isLocal=*/false));
  for (int64_t i = 0; i < spatial; ++i)
    ks.push_back(b.reduction(ReductionKind::Generic));
  SmallVector<AffineExpr> in = {n, c}, res = {n, c};
  for (int64_t i = 0; i < spatial; ++i) {
    in.push_back(outs[i] * op.getStrides()[i] + ks[i] * op.getDilations()[i]);
    res.push_back(outs[i]);
  }
  b.map(in);
  b.map(res);
  return b.finish();
}

static IterationSpace spaceOf(AttentionOp op) {
  SpaceBuilder b(op.getContext());
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey());
  // A causal mask compares global query and key positions: a device holding
  // queries [s, s + n) would mask as if they were [0, n), so the query loop
  // of a causal attention is not local.
  AffineExpr batch = b.parallel(), head = b.parallel(),
             sq = b.parallel(/*isLocal=*/!op.getCausal()), dv = b.parallel();
  // Grouped-query attention: query heads map onto key/value heads by integer
  // division, which affine maps cannot say; give kv heads their own loop.
  AffineExpr kvHead = q[1] == k[1] ? head : b.parallel(/*isLocal=*/false);
  AffineExpr skv = b.reduction(ReductionKind::Generic);
  AffineExpr d = b.reduction(ReductionKind::Generic);
  b.map({batch, head, sq, d});
  b.map({batch, kvHead, skv, d});
  b.map({batch, kvHead, skv, dv});
  if (Value mask = op.getMask()) {
    SmallVector<int64_t> scores = {q[0], q[1], q[2], k[2]};
    b.map(b.broadcastMap(shapeOf(mask), scores, {batch, head, sq, skv}));
  }
  b.map({batch, head, sq, dv});
  return b.finish();
}

/// Norms and softmax: dims from `axis` on are reduced non-linearly.
static IterationSpace normalizedSpace(Operation *op, int64_t axis,
                                      int64_t rank, ValueRange params) {
  SpaceBuilder b(op->getContext());
  SmallVector<AffineExpr> loops;
  for (int64_t d = 0; d < rank; ++d)
    loops.push_back(d < axis ? b.parallel()
                             : b.reduction(ReductionKind::Generic));
  b.map(loops);
  for (Value p : params)
    if (p)
      b.map(ArrayRef<AffineExpr>(loops).drop_front(axis));
  b.map(loops);
  return b.finish();
}

static IterationSpace spaceOf(SoftmaxOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> loops;
  for (int64_t d = 0, e = shapeOf(op.getInput()).size(); d < e; ++d)
    loops.push_back(d == op.getAxis() ? b.reduction(ReductionKind::Generic)
                                      : b.parallel());
  b.map(loops);
  b.map(loops);
  return b.finish();
}

static IterationSpace spaceOf(BatchNormOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> loops =
      b.parallelLoops(shapeOf(op.getInput()).size());
  b.map(loops);
  for (int i = 0; i < 4; ++i)
    b.map({loops[1]});
  b.map(loops);
  return b.finish();
}

static ReductionKind shardReductionKind(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::sum:
    return ReductionKind::Sum;
  case ReduceKind::max:
    return ReductionKind::Max;
  case ReduceKind::min:
    return ReductionKind::Min;
  case ReduceKind::prod:
    return ReductionKind::Product;
  case ReduceKind::mean:
    return ReductionKind::Average;
  default:
    return ReductionKind::Generic;
  }
}

static IterationSpace spaceOf(ReduceOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> in, res;
  for (int64_t d = 0, e = shapeOf(op.getInput()).size(); d < e; ++d) {
    if (!llvm::is_contained(op.getAxes(), d)) {
      in.push_back(b.parallel());
      res.push_back(in.back());
      continue;
    }
    in.push_back(b.reduction(shardReductionKind(op.getKind())));
    if (op.getKeepDims())
      res.push_back(b.parallel(/*isLocal=*/false));
  }
  b.map(in);
  b.map(res);
  return b.finish();
}

/// Reshape: dims group into runs of equal element count. Within a group the
/// leading non-unit dims of input and result share a loop (splitting the
/// outermost dim of a merged group splits the merged dim evenly); every other
/// dim has its own loop.
static IterationSpace spaceOf(ReshapeOp op) {
  SpaceBuilder b(op.getContext());
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  SmallVector<AffineExpr> inExprs(in.size()), outExprs(out.size());
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    // Collect one group [i, i2) x [j, j2) with equal products.
    size_t i2 = i, j2 = j;
    int64_t pi = 1, po = 1;
    do {
      if (i2 < in.size() && (pi <= po || j2 == out.size()))
        pi *= in[i2++];
      else if (j2 < out.size())
        po *= out[j2++];
      else
        break;
    } while (pi != po || (i2 < in.size() && in[i2] == 1 && j2 == out.size()) ||
             (j2 < out.size() && out[j2] == 1 && i2 == in.size()));
    size_t iLead = i, jLead = j;
    while (iLead < i2 && in[iLead] == 1)
      ++iLead;
    while (jLead < j2 && out[jLead] == 1)
      ++jLead;
    bool shareLead = iLead < i2 && jLead < j2;
    for (size_t a = i; a < i2; ++a)
      inExprs[a] = (shareLead && a == iLead) ? AffineExpr()
                                             : b.parallel(/*isLocal=*/false);
    for (size_t a = j; a < j2; ++a)
      outExprs[a] = (shareLead && a == jLead) ? AffineExpr()
                                              : b.parallel(/*isLocal=*/false);
    if (shareLead) {
      // Identity within the group keeps the lead loop local; a genuine
      // merge/split keeps it local too when it is the outermost dim.
      AffineExpr lead = b.parallel();
      inExprs[iLead] = lead;
      outExprs[jLead] = lead;
    }
    i = i2;
    j = j2;
  }
  b.map(inExprs);
  b.map(outExprs);
  return b.finish();
}

static IterationSpace spaceOf(TransposeOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> loops =
      b.parallelLoops(shapeOf(op.getInput()).size());
  SmallVector<AffineExpr> res;
  for (int64_t p : op.getPermutation())
    res.push_back(loops[p]);
  b.map(loops);
  b.map(res);
  return b.finish();
}

/// Ops that keep some dims whole and change the others (concat axis, sliced
/// or padded dims): kept dims share a local loop, changed dims get their own.
static IterationSpace keptDimsSpace(Operation *op, ArrayRef<bool> kept) {
  SpaceBuilder b(op->getContext());
  SmallVector<AffineExpr> shared;
  for (bool k : kept)
    shared.push_back(k ? b.parallel() : AffineExpr());
  auto mapFor = [&](Value) {
    SmallVector<AffineExpr> e;
    for (size_t d = 0; d < kept.size(); ++d)
      e.push_back(kept[d] ? shared[d] : b.parallel(/*isLocal=*/false));
    b.map(e);
  };
  for (Value v : op->getOperands())
    mapFor(v);
  mapFor(op->getResult(0));
  return b.finish();
}

static IterationSpace spaceOf(ConcatOp op) {
  SmallVector<bool> kept(shapeOf(op.getResult()).size(), true);
  kept[op.getAxis()] = false;
  return keptDimsSpace(op, kept);
}

static IterationSpace spaceOf(SliceOp op) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  SmallVector<bool> kept;
  for (size_t d = 0; d < in.size(); ++d)
    kept.push_back(op.getOffsets()[d] == 0 && op.getStrides()[d] == 1 &&
                   op.getSizes()[d] == in[d]);
  return keptDimsSpace(op, kept);
}

static IterationSpace spaceOf(PadOp op) {
  int64_t rank = shapeOf(op.getInput()).size();
  SmallVector<bool> kept;
  for (int64_t d = 0; d < rank; ++d)
    kept.push_back(op.getPadding()[d] == 0 && op.getPadding()[rank + d] == 0);
  return keptDimsSpace(op, kept);
}

static IterationSpace spaceOf(GatherOp op) {
  SpaceBuilder b(op.getContext());
  ArrayRef<int64_t> data = shapeOf(op.getData());
  int64_t axis = op.getAxis();
  SmallVector<AffineExpr> dataLoops, idxLoops, res;
  for (int64_t d = 0; d < (int64_t)data.size(); ++d)
    dataLoops.push_back(d == axis ? b.parallel(/*isLocal=*/false)
                                  : b.parallel());
  idxLoops = b.parallelLoops(shapeOf(op.getIndices()).size());
  res.append(dataLoops.begin(), dataLoops.begin() + axis);
  res.append(idxLoops);
  res.append(dataLoops.begin() + axis + 1, dataLoops.end());
  b.map(dataLoops);
  b.map(idxLoops);
  b.map(res);
  return b.finish();
}

static IterationSpace spaceOf(ScatterOp op) {
  SpaceBuilder b(op.getContext());
  ArrayRef<int64_t> data = shapeOf(op.getData()), idx = shapeOf(op.getIndices());
  SmallVector<AffineExpr> dataLoops, idxExprs;
  // Off the scatter axis, position p of the indices and updates writes
  // position p of the data: where they cover the whole data dimension, a
  // block split of it keeps every write on its own device (ScatterElements
  // over a batch of rows, as a router's gates are scattered per token).
  auto aligned = [&](size_t d) {
    return static_cast<int64_t>(d) != op.getAxis() && d < idx.size() && idx[d] == data[d];
  };
  for (size_t d = 0; d < data.size(); ++d)
    dataLoops.push_back(b.parallel(/*isLocal=*/aligned(d)));
  for (size_t d = 0; d < idx.size(); ++d)
    idxExprs.push_back(aligned(d) ? dataLoops[d] : b.parallel(/*isLocal=*/false));
  b.map(dataLoops);
  b.map(idxExprs);
  b.map(idxExprs);
  b.map(dataLoops);
  return b.finish();
}

static IterationSpace spaceOf(ExpandOp op) { return broadcastSpace(op); }

/// Embedding: the vocabulary is a sum reduction (each shard contributes the
/// rows it owns, zeros elsewhere), which is Megatron's vocab-parallel lookup.
/// Its loop is the last one; partitioning gives the local lookup the offset of
/// its rows (see partitionLoomOp), an operand without dims.
static IterationSpace spaceOf(EmbeddingOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> idx = b.parallelLoops(shapeOf(op.getIndices()).size());
  AffineExpr h = b.parallel();
  AffineExpr v = b.reduction(ReductionKind::Sum);
  b.map({v, h});
  b.map(idx);
  if (op.getRowOffset())
    b.map({});
  SmallVector<AffineExpr> res = idx;
  res.push_back(h);
  b.map(res);
  return b.finish();
}

static IterationSpace spaceOf(TopKOp op) {
  SpaceBuilder b(op.getContext());
  SmallVector<AffineExpr> in, res;
  for (int64_t d = 0, e = shapeOf(op.getInput()).size(); d < e; ++d)
    in.push_back(d == op.getAxis() ? b.reduction(ReductionKind::Generic)
                                   : b.parallel());
  res = in;
  res[op.getAxis()] = b.parallel(/*isLocal=*/false);
  b.map(in);
  b.map(res);
  b.map(res);
  return b.finish();
}

/// `dims`, after the group loop `g` of the grouped MoE form (null: none).
static SmallVector<AffineExpr> prependGroup(AffineExpr g, ArrayRef<AffineExpr> dims) {
  SmallVector<AffineExpr> all;
  if (g)
    all.push_back(g);
  llvm::append_range(all, dims);
  return all;
}

/// Dispatch: slot positions depend on all earlier tokens of the group, so
/// the token loop is a generic reduction; experts and capacity slots are
/// parallel but not local (a device holding some experts would need their
/// global ids). Groups of the grouped form are independent and local: that
/// split, moved to the expert dimension by an all-to-all, is expert
/// parallelism.
static IterationSpace spaceOf(MoeDispatchOp op) {
  SpaceBuilder b(op.getContext());
  bool grouped = shapeOf(op.getTokens()).size() == 3;
  AffineExpr g = grouped ? b.parallel() : AffineExpr();
  AffineExpr e = b.parallel(/*isLocal=*/false), c = b.parallel(false),
             h = b.parallel();
  AffineExpr t = b.reduction(ReductionKind::Generic),
             k = b.reduction(ReductionKind::Generic);
  auto withGroup = [&](ArrayRef<AffineExpr> dims) {
    return prependGroup(grouped ? g : AffineExpr(), dims);
  };
  b.map(withGroup({t, h}));
  b.map(withGroup({t, k}));
  b.map(withGroup({e, c, h}));
  return b.finish();
}

static IterationSpace spaceOf(MoeCombineOp op) {
  SpaceBuilder b(op.getContext());
  bool grouped = shapeOf(op.getExpertOutputs()).size() == 4;
  AffineExpr g = grouped ? b.parallel() : AffineExpr();
  AffineExpr t = b.parallel(false), h = b.parallel();
  AffineExpr k = b.reduction(ReductionKind::Generic),
             e = b.reduction(ReductionKind::Generic),
             c = b.reduction(ReductionKind::Generic);
  auto withGroup = [&](ArrayRef<AffineExpr> dims) {
    return prependGroup(grouped ? g : AffineExpr(), dims);
  };
  b.map(withGroup({e, c, h}));
  b.map(withGroup({t, k}));
  b.map(withGroup({t, k}));
  b.map(withGroup({t, h}));
  return b.finish();
}

static IterationSpace iterationSpace(Operation *op) {
  return llvm::TypeSwitch<Operation *, IterationSpace>(op)
      .Case<WeightOp>([](Operation *o) { return sourceSpace(o); })
      .Case<ConstantOp>([](ConstantOp o) {
        // A splat's block is the same splat; other values would need
        // slicing.
        return sourceSpace(o, /*isLocal=*/o.getValue().isSplat());
      })
      .Case<UnaryOp, BinaryOp, CompareOp, WhereOp, ClampOp, CastOp, SpillOp,
            ReloadOp, FetchOp>([](Operation *o) { return broadcastSpace(o); })
      .Case<ReleaseOp>([](Operation *o) { return sinkSpace(o); })
      .Case<LayerNormOp>([](LayerNormOp o) {
        return normalizedSpace(o, o.getAxis(), shapeOf(o.getInput()).size(),
                               {o.getScale(), o.getBias()});
      })
      .Case<RmsNormOp>([](RmsNormOp o) {
        return normalizedSpace(o, o.getAxis(), shapeOf(o.getInput()).size(),
                               {o.getScale()});
      })
      .Case<MatmulOp, ConvOp, PoolOp, AttentionOp, SoftmaxOp, BatchNormOp,
            ReduceOp, ReshapeOp, TransposeOp, ConcatOp, SliceOp, PadOp,
            GatherOp, ScatterOp, ExpandOp, EmbeddingOp, TopKOp, MoeDispatchOp,
            MoeCombineOp>([](auto o) { return spaceOf(o); })
      .Default([](Operation *) { return IterationSpace(); });
}

SmallVector<bool> mlir::loom::getLocalLoops(Operation *op) {
  return iterationSpace(op).local;
}

//===----------------------------------------------------------------------===//
// Propagation
//===----------------------------------------------------------------------===//

/// Upstream's choice from the neighbours' shardings, minus any split of a
/// loop that is not local: left alone, propagation carries a split through a
/// slice, a softmax axis, a constant or a causal attention's queries, which
/// partitioning then rejects or gets wrong. Without it the operands arrive
/// whole along that loop (the producer's split is gathered first) and the
/// result is whole there.
static FailureOr<shard::ShardingOption>
localShardingOption(Operation *op, ArrayRef<shard::Sharding> operandShardings,
                    ArrayRef<shard::Sharding> resultShardings) {
  FailureOr<shard::ShardingOption> option =
      shard::detail::defaultGetShardingOption(op, operandShardings,
                                              resultShardings);
  if (failed(option) || option->empty)
    return option;
  SmallVector<bool> local = iterationSpace(op).local;
  for (size_t loop = 0; loop < option->shardingArray.size(); ++loop)
    if (loop >= local.size() || !local[loop])
      option->shardingArray[loop].clear();
  return option;
}

//===----------------------------------------------------------------------===//
// Partition
//===----------------------------------------------------------------------===//

/// Turns `local`, the lookup in this device's block of `global`'s table split
/// over `vocabAxes`, into the lookup of those rows only: its offset is the
/// device's linear index along the axes (the first one major, as in a
/// sharding) times the block's rows; ids owned elsewhere read zero rows, which
/// the all-reduce over the axes fills in.
static LogicalResult offsetLocalRows(EmbeddingOp global, EmbeddingOp local,
                                     FlatSymbolRefAttr gridName,
                                     ArrayRef<shard::GridAxis> vocabAxes,
                                     SymbolTableCollection &symbols,
                                     OpBuilder &builder) {
  if (global.getRowOffset())
    return global.emitOpError("is already a block of a larger table");
  shard::GridOp grid = shard::getGrid(global, gridName, symbols);
  if (!grid)
    return global.emitOpError("names an unknown grid ") << gridName;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(local);
  Location loc = global.getLoc();
  auto position = shard::ProcessMultiIndexOp::create(
      builder, loc, gridName.getValue(), vocabAxes);
  Value linear = arith::ConstantIndexOp::create(builder, loc, 0);
  for (auto [axis, index] : llvm::zip(vocabAxes, position.getResults())) {
    Value size = arith::ConstantIndexOp::create(builder, loc,
                                                grid.getShape()[axis]);
    linear = arith::AddIOp::create(
        builder, loc, arith::MulIOp::create(builder, loc, linear, size), index);
  }
  int64_t localRows = local.getTable().getType().getDimSize(0);
  Value offset = arith::MulIOp::create(
      builder, loc, linear,
      arith::ConstantIndexOp::create(builder, loc, localRows));
  local.getRowOffsetMutable().assign(offset);
  local.setRows(global.getTable().getType().getDimSize(0));
  return success();
}

/// Partitions a loom op whose sharded loops are all local: the op runs on the
/// local blocks, and sharded sum/max/min reduction loops are completed by an
/// all-reduce over their grid axes. Anything else is reported, not guessed.
static LogicalResult partitionLoomOp(Operation *op, ArrayRef<Value> operands,
                                     ArrayRef<shard::Sharding> operandShardings,
                                     ArrayRef<shard::Sharding> resultShardings,
                                     IRMapping &map,
                                     SymbolTableCollection &symbols,
                                     OpBuilder &builder) {
  IterationSpace space = iterationSpace(op);
  shard::ShardingArray axes = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, space.iterators, space.maps);
  SmallVector<shard::GridAxis> reductionAxes;
  std::optional<ReductionKind> kind;
  unsigned reductionIdx = 0;
  for (size_t loop = 0; loop < space.iterators.size(); ++loop) {
    bool isReduction = space.iterators[loop] == IteratorType::reduction;
    std::optional<ReductionKind> loopKind;
    if (isReduction)
      loopKind = space.reductionKinds[reductionIdx++];
    if (loop >= axes.size() || axes[loop].empty())
      continue;
    if (!space.local[loop])
      return op->emitOpError("cannot be partitioned along loop ")
             << loop << " (sharded over grid axes "
             << "[" << llvm::make_range(axes[loop].begin(), axes[loop].end())
             << "]): splitting it needs a resharding Loom does not insert yet";
    if (isReduction) {
      if (kind && *kind != *loopKind)
        return op->emitOpError("sharded reductions of different kinds");
      kind = loopKind;
      llvm::append_range(reductionAxes, axes[loop]);
    }
  }
  shard::partitionTriviallyShardableOperation(*op, operands, operandShardings,
                                              resultShardings, map, symbols,
                                              builder);
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto local = cast<ConstantOp>(map.lookup(op->getResult(0)).getDefiningOp());
    auto type = cast<ShapedType>(local.getType());
    if (type != constant.getType())
      local.setValueAttr(DenseElementsAttr::get(
          type, constant.getValue().getSplatValue<Attribute>()));
  }
  if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
    ArrayRef<shard::GridAxis> vocabAxes = axes.size() == space.iterators.size()
                                              ? ArrayRef(axes.back())
                                              : ArrayRef<shard::GridAxis>();
    if (!vocabAxes.empty() &&
        failed(offsetLocalRows(embedding,
                               cast<EmbeddingOp>(map.lookup(op->getResult(0))
                                                     .getDefiningOp()),
                               resultShardings.front().getGridAttr(),
                               vocabAxes, symbols, builder)))
      return failure();
  }
  // A slice's sizes attribute spells out its kept (whole) dimensions; split
  // ones shrink to the local extent of the input.
  if (auto slice = dyn_cast<SliceOp>(map.lookup(op->getResult(0)).getDefiningOp())) {
    ArrayRef<int64_t> in = shapeOf(slice.getInput());
    ArrayRef<int64_t> global = shapeOf(cast<SliceOp>(op).getInput());
    SmallVector<int64_t> sizes(slice.getSizes());
    for (size_t d = 0; d < sizes.size(); ++d)
      if (sizes[d] == global[d])
        sizes[d] = in[d];
    slice.setSizes(sizes);
  }
  if (reductionAxes.empty())
    return success();
  llvm::sort(reductionAxes);
  Operation *local = map.lookup(op->getResult(0)).getDefiningOp();
  FlatSymbolRefAttr grid = resultShardings.front().getGridAttr();
  builder.setInsertionPointAfter(local);
  for (OpResult res : op->getResults()) {
    Value partial = map.lookup(res);
    auto reduced = shard::AllReduceOp::create(
        builder, op->getLoc(), partial.getType(), grid.getValue(),
        reductionAxes, partial, *kind);
    map.map(res, reduced.getResult());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Interface methods, forwarded for every op
//===----------------------------------------------------------------------===//

#define LOOM_SHARDING_LOOPS(OP)                                                \
  SmallVector<IteratorType> OP::getLoopIteratorTypes() {                       \
    return iterationSpace(*this).iterators;                                    \
  }                                                                            \
  SmallVector<ReductionKind> OP::getReductionLoopIteratorKinds() {             \
    return iterationSpace(*this).reductionKinds;                               \
  }                                                                            \
  SmallVector<AffineMap> OP::getIndexingMaps() {                               \
    return iterationSpace(*this).maps;                                         \
  }

#define LOOM_SHARDING_METHODS(OP)                                              \
  LOOM_SHARDING_LOOPS(OP)                                                      \
  FailureOr<shard::ShardingOption> OP::getShardingOption(                      \
      ArrayRef<shard::Sharding> operandShardings,                              \
      ArrayRef<shard::Sharding> resultShardings) {                             \
    return localShardingOption(*this, operandShardings, resultShardings);      \
  }                                                                            \
  LogicalResult OP::partition(                                                 \
      ArrayRef<Value> operands, ArrayRef<shard::Sharding> operandShardings,    \
      ArrayRef<shard::Sharding> resultShardings, IRMapping &map,               \
      SymbolTableCollection &symbols, OpBuilder &builder) {                    \
    return partitionLoomOp(*this, operands, operandShardings, resultShardings, \
                           map, symbols, builder);                             \
  }

LOOM_SHARDING_METHODS(WeightOp)
LOOM_SHARDING_METHODS(ConstantOp)
LOOM_SHARDING_METHODS(UnaryOp)
LOOM_SHARDING_METHODS(BinaryOp)
LOOM_SHARDING_METHODS(CompareOp)
LOOM_SHARDING_METHODS(WhereOp)
LOOM_SHARDING_METHODS(ClampOp)
LOOM_SHARDING_METHODS(CastOp)
LOOM_SHARDING_METHODS(SpillOp)
LOOM_SHARDING_METHODS(ReloadOp)

LOOM_SHARDING_METHODS(MatmulOp)
LOOM_SHARDING_METHODS(ConvOp)
LOOM_SHARDING_METHODS(AttentionOp)
LOOM_SHARDING_METHODS(PoolOp)
LOOM_SHARDING_METHODS(LayerNormOp)
LOOM_SHARDING_METHODS(RmsNormOp)
LOOM_SHARDING_METHODS(BatchNormOp)
LOOM_SHARDING_METHODS(SoftmaxOp)
LOOM_SHARDING_METHODS(ReduceOp)
LOOM_SHARDING_METHODS(ReshapeOp)
LOOM_SHARDING_METHODS(TransposeOp)
LOOM_SHARDING_METHODS(ConcatOp)
LOOM_SHARDING_METHODS(SliceOp)
LOOM_SHARDING_METHODS(GatherOp)
LOOM_SHARDING_METHODS(ScatterOp)
LOOM_SHARDING_METHODS(PadOp)
LOOM_SHARDING_METHODS(ExpandOp)
LOOM_SHARDING_METHODS(EmbeddingOp)
LOOM_SHARDING_METHODS(TopKOp)
LOOM_SHARDING_METHODS(MoeDispatchOp)
LOOM_SHARDING_METHODS(MoeCombineOp)

// A fetch copies its source as it is stored: its readers' layouts (ZeRO-3's
// gathers) come after the copy, so their shardings do not choose its own.
LOOM_SHARDING_LOOPS(FetchOp)
FailureOr<shard::ShardingOption>
FetchOp::getShardingOption(ArrayRef<shard::Sharding> operandShardings,
                           ArrayRef<shard::Sharding> resultShardings) {
  SmallVector<shard::Sharding, 1> unread(resultShardings.size());
  return localShardingOption(*this, operandShardings, unread);
}
LogicalResult FetchOp::partition(ArrayRef<Value> operands,
                                 ArrayRef<shard::Sharding> operandShardings,
                                 ArrayRef<shard::Sharding> resultShardings,
                                 IRMapping &map, SymbolTableCollection &symbols,
                                 OpBuilder &builder) {
  // A copy nothing reads (the backward fetches a chunk whole, also weights
  // whose gradient does not need them) has no annotation of its own.
  SmallVector<shard::Sharding, 1> copied = {operandShardings.front()};
  if (!copied.front()) {
    map.map(getResult(), FetchOp::create(builder, getLoc(), operands.front(),
                                         getChunkAttr(), getCarriedAttr(),
                                         getOffsetAttr())
                             .getResult());
    return success();
  }
  return partitionLoomOp(*this, operands, operandShardings, copied, map, symbols,
                         builder);
}

// A release has no result: it drops each device's own block of its operand.
LOOM_SHARDING_LOOPS(ReleaseOp)
FailureOr<shard::ShardingOption>
ReleaseOp::getShardingOption(ArrayRef<shard::Sharding> operandShardings,
                             ArrayRef<shard::Sharding> resultShardings) {
  return localShardingOption(*this, operandShardings, resultShardings);
}
LogicalResult ReleaseOp::partition(ArrayRef<Value> operands,
                                   ArrayRef<shard::Sharding>,
                                   ArrayRef<shard::Sharding>, IRMapping &,
                                   SymbolTableCollection &, OpBuilder &builder) {
  ReleaseOp::create(builder, getLoc(), operands.front());
  return success();
}
