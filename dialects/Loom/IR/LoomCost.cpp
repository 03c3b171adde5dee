//===- LoomCost.cpp - FLOP counts of loom ops -----------------------------===//
//
// Implements CostOpInterface. A multiply-add counts as 2 FLOPs. Contractions
// (matmul, conv, attention) report their multiply-adds as contraction FLOPs,
// the figure published "FLOPs per sample" numbers use. Total FLOPs add one
// FLOP per element for pointwise work and small per-element constants for
// norms and softmax; data movement counts zero. The cost model (bytes, time)
// builds on these counts.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

static double elements(Value v) {
  return static_cast<double>(cast<RankedTensorType>(v.getType()).getNumElements());
}

static double product(ArrayRef<int64_t> dims) {
  double p = 1;
  for (int64_t d : dims)
    p *= static_cast<double>(d);
  return p;
}

// Data movement and sources: no arithmetic.
#define LOOM_ZERO_FLOPS(OP)                                                    \
  double OP::getContractionFlops() { return 0; }                               \
  double OP::getTotalFlops() { return 0; }
LOOM_ZERO_FLOPS(WeightOp)
LOOM_ZERO_FLOPS(ConstantOp)
LOOM_ZERO_FLOPS(CastOp)
LOOM_ZERO_FLOPS(ReshapeOp)
LOOM_ZERO_FLOPS(TransposeOp)
LOOM_ZERO_FLOPS(ConcatOp)
LOOM_ZERO_FLOPS(SliceOp)
LOOM_ZERO_FLOPS(GatherOp)
LOOM_ZERO_FLOPS(ScatterOp)
LOOM_ZERO_FLOPS(PadOp)
LOOM_ZERO_FLOPS(ExpandOp)
LOOM_ZERO_FLOPS(EmbeddingOp)
LOOM_ZERO_FLOPS(MoeDispatchOp)
#undef LOOM_ZERO_FLOPS

// Pointwise: `PER_ELEMENT` FLOPs per element of `SIZED_BY`.
#define LOOM_POINTWISE_FLOPS(OP, PER_ELEMENT, SIZED_BY)                        \
  double OP::getContractionFlops() { return 0; }                               \
  double OP::getTotalFlops() { return (PER_ELEMENT) * elements(SIZED_BY); }
LOOM_POINTWISE_FLOPS(UnaryOp, 1, getResult())
LOOM_POINTWISE_FLOPS(BinaryOp, 1, getResult())
LOOM_POINTWISE_FLOPS(CompareOp, 1, getResult())
LOOM_POINTWISE_FLOPS(WhereOp, 1, getResult())
LOOM_POINTWISE_FLOPS(ClampOp, 2, getResult())
LOOM_POINTWISE_FLOPS(LayerNormOp, 5, getResult())
LOOM_POINTWISE_FLOPS(RmsNormOp, 4, getResult())
LOOM_POINTWISE_FLOPS(BatchNormOp, 2, getResult())
LOOM_POINTWISE_FLOPS(SoftmaxOp, 5, getResult())
LOOM_POINTWISE_FLOPS(ReduceOp, 1, getInput())
LOOM_POINTWISE_FLOPS(TopKOp, 1, getInput())
#undef LOOM_POINTWISE_FLOPS

double MatmulOp::getContractionFlops() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  return 2.0 * elements(getResult()) * static_cast<double>(lhs.getShape().back());
}
double MatmulOp::getTotalFlops() { return getContractionFlops(); }

double ConvOp::getContractionFlops() {
  auto w = cast<RankedTensorType>(getWeight().getType());
  // Each output element is a dot product over (C / groups) x kernel taps.
  return 2.0 * elements(getResult()) * product(w.getShape().drop_front(1));
}
double ConvOp::getTotalFlops() {
  return getContractionFlops() + (getBias() ? elements(getResult()) : 0.0);
}

double AttentionOp::getContractionFlops() {
  ArrayRef<int64_t> q = cast<RankedTensorType>(getQuery().getType()).getShape();
  ArrayRef<int64_t> k = cast<RankedTensorType>(getKey().getType()).getShape();
  ArrayRef<int64_t> v = cast<RankedTensorType>(getValue().getType()).getShape();
  double scores = product({q[0], q[1], q[2], k[2]});
  return 2.0 * scores * static_cast<double>(q[3]) +
         2.0 * scores * static_cast<double>(v[3]);
}
double AttentionOp::getTotalFlops() {
  ArrayRef<int64_t> q = cast<RankedTensorType>(getQuery().getType()).getShape();
  ArrayRef<int64_t> k = cast<RankedTensorType>(getKey().getType()).getShape();
  // Scale, mask and a 5-FLOP softmax per score.
  return getContractionFlops() + 7.0 * product({q[0], q[1], q[2], k[2]});
}

double PoolOp::getContractionFlops() { return 0; }
double PoolOp::getTotalFlops() {
  return elements(getResult()) * product(getKernel());
}

double MoeCombineOp::getContractionFlops() { return 0; }
double MoeCombineOp::getTotalFlops() {
  auto experts = cast<RankedTensorType>(getExperts().getType());
  return 2.0 * elements(getResult()) *
         static_cast<double>(experts.getShape().back());
}
