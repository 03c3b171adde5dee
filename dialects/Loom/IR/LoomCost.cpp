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
#include "dialects/Loom/IR/ShardValues.h"

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

//===----------------------------------------------------------------------===//
// Roofline class, bytes accessed, values saved for backward
//===----------------------------------------------------------------------===//

#include "llvm/ADT/TypeSwitch.h"

::loom::OpClass mlir::loom::detail::defaultCostClass(Operation *op) {
  using ::loom::OpClass;
  return llvm::TypeSwitch<Operation *, OpClass>(op)
      .Case<MatmulOp>([](auto) { return OpClass::Matmul; })
      .Case<ConvOp>([](auto) { return OpClass::Conv; })
      .Case<AttentionOp>([](auto) { return OpClass::Attention; })
      .Case<UnaryOp, BinaryOp, CompareOp, WhereOp, ClampOp, CastOp, MoeCombineOp>(
          [](auto) { return OpClass::Elementwise; })
      .Case<LayerNormOp, RmsNormOp, BatchNormOp, SoftmaxOp>(
          [](auto) { return OpClass::Normalize; })
      .Case<ReduceOp, TopKOp, PoolOp>([](auto) { return OpClass::Reduce; })
      .Default([](Operation *) { return OpClass::DataMovement; });
}

double mlir::loom::detail::defaultBytesAccessed(
    Operation *op, llvm::function_ref<double(Value)> bytesOf) {
  auto all = [&] {
    double b = 0;
    for (Value v : op->getOperands())
      b += bytesOf(v);
    for (Value v : op->getResults())
      b += bytesOf(v);
    return b;
  };
  return llvm::TypeSwitch<Operation *, double>(op)
      // Sources live in memory already; views alias their input.
      .Case<WeightOp, ConstantOp, ReshapeOp, ExpandOp>([](auto) { return 0.0; })
      // A gather reads the rows it fetches (as many bytes as it writes) and
      // its indices, not the whole table.
      .Case<GatherOp, EmbeddingOp>([&](auto g) {
        return 2 * bytesOf(g->getResult(0)) + bytesOf(g->getOperand(1));
      })
      // Slicing reads what it keeps. A unit-stride slice of a stored weight
      // is a view its reader takes in place (a strided matrix operand), as
      // the parts of a split fused projection are (FusedProjections.h).
      .Case<SliceOp>([&](SliceOp s) {
        if (lookThroughShards(s.getInput()).getDefiningOp<WeightOp>() &&
            llvm::all_of(s.getStrides(), [](int64_t st) { return st == 1; }))
          return 0.0;
        return 2 * bytesOf(s.getResult());
      })
      // Scatter updates in place: read and write the updated rows.
      .Case<ScatterOp>([&](ScatterOp s) {
        return 3 * bytesOf(s.getUpdates()) + bytesOf(s.getIndices());
      })
      .Default([&](Operation *) { return all(); });
}

void mlir::loom::detail::defaultSavedForBackward(Operation *op,
                                                 SmallVectorImpl<Value> &saved) {
  llvm::TypeSwitch<Operation *>(op)
      // Gradients that need no forward values: linear in their inputs, or
      // pure data movement (the backward of a gather/slice/pad needs only
      // shapes and indices).
      .Case<WeightOp, ConstantOp, ReshapeOp, TransposeOp, ExpandOp, ConcatOp,
            SliceOp, PadOp, CastOp, CompareOp>([](auto) {})
      .Case<BinaryOp>([&](BinaryOp b) {
        if (b.getKind() == BinaryKind::add || b.getKind() == BinaryKind::sub)
          return;
        // x / y's gradients are g / y and -g (x / y) / y: its result, not x.
        if (b.getKind() == BinaryKind::div) {
          saved.append({b.getRhs(), b.getResult()});
          return;
        }
        saved.append({b.getLhs(), b.getRhs()});
        // x^y's gradient with respect to y is x^y log(x).
        if (b.getKind() == BinaryKind::pow)
          saved.push_back(b.getResult());
      })
      // What --loom-autodiff's rule reads: the result of the ops whose
      // derivative is expressed in it (exp, sqrt, rsqrt, reciprocal,
      // sigmoid, tanh), nothing for the linear or piecewise-constant ones,
      // the input for the rest.
      .Case<UnaryOp>([&](UnaryOp u) {
        switch (u.getKind()) {
        case UnaryKind::identity:
        case UnaryKind::neg:
        case UnaryKind::floor:
        case UnaryKind::ceil:
        case UnaryKind::round:
        case UnaryKind::sign:
          return;
        case UnaryKind::exp:
        case UnaryKind::sqrt:
        case UnaryKind::rsqrt:
        case UnaryKind::reciprocal:
        case UnaryKind::sigmoid:
        case UnaryKind::tanh:
          saved.push_back(u.getResult());
          return;
        default:
          saved.push_back(u.getInput());
        }
      })
      .Case<ReduceOp>([&](ReduceOp r) {
        if (r.getKind() == ReduceKind::sum || r.getKind() == ReduceKind::mean)
          return;
        saved.append({r.getInput(), r.getResult()});
      })
      // Max pooling routes the gradient to each window's maximum, found by
      // comparing the input with the output; averaging needs only shapes.
      .Case<PoolOp>([&](PoolOp p) {
        if (p.getKind() == PoolKind::max)
          saved.append({p.getInput(), p.getResult()});
      })
      // Softmax's gradient is expressed in its output.
      .Case<SoftmaxOp>([&](SoftmaxOp s) { saved.push_back(s.getResult()); })
      // Gathers keep their indices only.
      .Case<GatherOp, EmbeddingOp, ScatterOp>(
          [&](auto g) { saved.push_back(g->getOperand(1)); })
      // Attention saves q, k, v and its output (flash-attention style; the
      // probabilities are recomputed in backward).
      .Case<AttentionOp>([&](AttentionOp a) {
        saved.append({a.getQuery(), a.getKey(), a.getValue(), a.getResult()});
      })
      .Default([&](Operation *o) {
        saved.append(o->operand_begin(), o->operand_end());
      });
}
