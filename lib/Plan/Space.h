//===- Space.h - strategies of loom ops and what they cost -------*- C++ -*-===//
//
// The strategy space of the search, derived from each op's iteration space
// (the ShardingInterface's loops and indexing maps): a strategy assigns
// every non-pipeline grid axis to one loop the op can split block-locally,
// or to none (replicated over that axis). Data parallelism (the batch loop),
// Megatron column/row parallelism (a weight's output or reduction loop),
// sequence, head and expert splits, and multi-axis splits of one op all
// fall out of that one rule. The costs here are the estimator's
// (lib/Cost/Estimate.cpp) per-op terms, computed without running sharding
// propagation: roofline compute per op class, the all-reduce of split
// reductions, and resharding on edges forward and (gradients) backward.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_PLAN_SPACE_H
#define LOOM_LIB_PLAN_SPACE_H

#include "loom/Cost/Cluster.h"
#include "loom/Cost/Recompute.h"
#include "loom/Cost/Reshard.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::search {

/// A grid the search considers: `axes` are the non-pipeline axes (each > 1),
/// numbered 0..n-1; the pipeline axis (if pp > 1) is axis n of the IR grid.
struct SearchGrid {
  SmallVector<int64_t, 3> axes;
  int64_t pp = 1;
  SmallVector<unsigned, 4> innerToOuter; // IR grid axes, innermost first
  SmallVector<::loom::AxisSpan, 4> spans; // per IR grid axis
  int64_t devices() const;
  SmallVector<int64_t, 4> irShape() const;
  ::loom::AxisSpan span(ArrayRef<int16_t> axes) const;
  int64_t size(ArrayRef<int16_t> axes) const;
};

/// A strategy: for each non-pipeline axis, the loop it splits or -1.
using Strategy = SmallVector<int8_t, 3>;

/// What a value is, for memory and gradients.
struct ValueModel {
  Value value;
  SmallVector<int64_t, 4> shape;
  double elementBytes = 4, fullBytes = 0;
  bool activation = false; // depends on a function input
  bool needsGrad = false;  // carries a gradient (gradientValues)
  bool parameterDerived = false;
  bool saved = false;      // some op keeps it for backward
  bool soleReader = false; // exactly one operand reads it
  /// A training step's result: held until its backward ends, as the
  /// estimator counts it (kept, never re-run, a full-recompute checkpoint).
  bool held = false;
  /// Kept for backward under recompute=none / selective (regionModel):
  /// what recomputed regions produce is not, their inputs are.
  bool kept[2] = {false, false};
  int batchDim = -1;       // the dim carrying the first input's batch
};

/// A loom op and its iteration space.
struct OpModel {
  Operation *op = nullptr;
  SmallVector<int64_t, 6> loopSizes;
  SmallVector<bool, 6> reduction, local;
  SmallVector<AffineMap, 4> maps; // operands, then results
  int batchLoop = -1;
  ::loom::OpClass cls = ::loom::OpClass::DataMovement;
  ::loom::Precision precision = ::loom::Precision::FP32;
  double contractionFlops = 0, totalFlops = 0;
  bool hasBackward = false;
  double contractionGrads = 0; // how many contraction-sized gradients
  SmallVector<unsigned, 4> gradOperands;
  /// Its recomputed region under recompute=none / selective, or -1.
  int region[2] = {-1, -1};
  std::vector<Strategy> strategies;
};

/// The two activation policies with regions (Recompute.h), as indices of
/// ValueModel::kept, OpModel::region and StrategyCost::keptBytes; full
/// recomputation keeps cut points and prices segments of the `none` model.
inline unsigned regionModel(RecomputeMode mode) {
  return mode == RecomputeMode::Selective ? 1 : 0;
}

/// Per-micro-batch seconds and bytes of one op under one strategy.
struct StrategyCost {
  double forward = 0, backward = 0; // compute + the op's own collectives
  double forwardComm = 0;
  /// Results kept for backward under recompute=none / selective, less
  /// those the step returns (ValueModel::held; the search adds them per
  /// copy, as a folded block's copies need not all return alike).
  double keptBytes[2] = {0, 0};
  /// Results some backward keeps: what a re-run of the op re-creates when
  /// its copy is in a recomputed region (OpModel::region).
  double savedBytes = 0;
  double footprint = 0;             // local operand + result bytes
  double commBytes = 0;             // its own collective's buffer (a split reduction's)
};

/// The program as the search sees it: ops, values, and cost functions
/// parameterised by a grid.
class ProgramModel {
public:
  ProgramModel(func::FuncOp func, const ::loom::ClusterSpec &cluster,
               std::optional<::loom::Precision> forcedPrecision, bool training);

  func::FuncOp func;
  const ::loom::ClusterSpec &cluster;
  std::optional<::loom::Precision> forcedPrecision;
  bool training;

  std::vector<OpModel> ops;            // compute ops, program order
  DenseMap<Operation *, unsigned> opIndex;
  std::vector<ValueModel> values;
  DenseMap<Value, unsigned> valueIndex;
  SmallVector<Operation *> weights;    // loom.weight ops, program order

  const ValueModel &valueOf(Value v) const { return values[valueIndex.lookup(v)]; }

  /// The micro-batch size relative to the IR's. Costs scale batch-carrying
  /// tensors and the FLOPs of ops with a batch loop by it, which prices
  /// other micro-batch sizes of the same program without rebatching the IR.
  double batchScale = 1;
  double bytesOf(const ValueModel &v) const {
    return v.batchDim >= 0 ? v.fullBytes * batchScale : v.fullBytes;
  }
  double flopScale(const OpModel &o) const { return o.batchLoop >= 0 ? batchScale : 1; }
  bool isParameter(Operation *weight) const;

  /// Enumerates the strategies of every op for `grid` (non-pipeline axes),
  /// honouring `maxTP` (product of axes on non-batch loops); with `wanted`,
  /// only of the ops it marks (the others get none).
  void enumerateStrategies(const SearchGrid &grid, int64_t maxTP,
                           ArrayRef<bool> wanted = {});

  /// The layout op `o` (its strategy `s`) wants for operand `i` / gives
  /// result `r` (no partial axes: split reductions are all-reduced).
  ::loom::TensorLayout operandLayout(const OpModel &o, const Strategy &s,
                                     unsigned i) const;
  ::loom::TensorLayout resultLayout(const OpModel &o, const Strategy &s,
                                    unsigned r) const;
  /// The grid axes `s` splits `o`'s reduction loops over, ascending (the
  /// order loom-partition all-reduces them in).
  ::loom::GridAxes reductionAxes(const OpModel &o, const Strategy &s) const;
  /// Axes over which the gradient of operand i is partial.
  ::loom::GridAxes gradientPartialAxes(const OpModel &o, const Strategy &s,
                                       unsigned i) const;

  StrategyCost strategyCost(const OpModel &o, const Strategy &s,
                            const SearchGrid &grid) const;

  /// Seconds the split reduction of `o` under `s` costs beyond its
  /// all-reduce (strategyCost) when the one reader of its result (the
  /// caller checks ValueModel::soleReader) wants
  /// `want`: a reduce-scatter where `want` only slices the sum over the
  /// reduction's axes (loom::reductionScatterDim), which is cheaper; else 0.
  double reductionScatterDelta(const OpModel &o, const Strategy &s,
                               const ::loom::TensorLayout &want,
                               const SearchGrid &grid) const;

  /// Seconds of one collective step with its local copies (as the
  /// estimator's reshardStep prices it).
  double stepSeconds(const ::loom::CollectiveStep &step, const SearchGrid &grid) const;

  /// Seconds of the collectives turning `from` into `to` for a tensor of
  /// `fullBytes`; with `zeroSync`, as ZeRO synchronises a parameter's
  /// gradient (an all-reduce as a reduce-scatter plus an all-gather).
  /// `largestStep`, if given, is raised to the largest collective's bytes
  /// (the buffer it needs).
  double reshardSeconds(double fullBytes, const ::loom::TensorLayout &from,
                        const ::loom::TensorLayout &to, const SearchGrid &grid,
                        bool zeroSync = false, double *largestStep = nullptr) const;
  double collectiveSeconds(::loom::CollectiveKind kind, ArrayRef<int16_t> axes,
                           double bytes, const SearchGrid &grid) const;
  double localBytes(const ValueModel &v, const ::loom::TensorLayout &l,
                    const SearchGrid &grid) const;
  double roofline(::loom::OpClass cls, double flops, double bytes,
                  ::loom::Precision p) const;

  /// A readable strategy, e.g. "result [dp, -, tp] weight [-, tp]"; a split
  /// reduction ends in "all-reduce over tp", or "reduce-scatter over tp"
  /// where `readerWants` (what the result's one reader in the same unit
  /// wants) only slices the sum. `storedWeight` gives the layout a weight
  /// operand is stored in; where it splits the weight over an axis the op
  /// reads it whole on, the weight is gathered for each use, printed
  /// "weight [-, tp] stored [dp, tp]".
  std::string describe(
      const OpModel &o, const Strategy &s, ArrayRef<std::string> axisNames,
      const ::loom::TensorLayout *readerWants = nullptr,
      llvm::function_ref<const ::loom::TensorLayout *(unsigned operand)> storedWeight =
          nullptr) const;

private:
  /// Marks what recompute=none and =selective keep and re-run.
  void modelRecomputation();
};

/// All layouts of a tensor of `shape` over the non-pipeline axes (each axis
/// on one dim, dividing it, or none), for weights and function inputs.
std::vector<::loom::TensorLayout> tensorLayouts(ArrayRef<int64_t> shape,
                                                const SearchGrid &grid);

uint64_t layoutKey(const ::loom::TensorLayout &l);

} // namespace mlir::loom::search

#endif // LOOM_LIB_PLAN_SPACE_H
