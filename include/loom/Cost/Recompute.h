//===- Recompute.h - which activations training recomputes ------*- C++ -*-===//
//
// Activation recomputation policies shared by the estimator, the strategy
// search and memory placement, so the three price the same thing:
//
//  * none: every activation an op's backward reads is kept;
//  * selective: regions of cheap, weight-free ops (the attention core,
//    activation functions) are re-run in the backward from their kept inputs
//    instead of keeping what they produce (Megatron's selective activation
//    recomputation, found from the graph instead of named by hand);
//  * full: only the cut points between segments are kept, the rest re-runs.
//
// Ops with a `loom.recompute` attribute are recomputed under every policy.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_RECOMPUTE_H
#define LOOM_COST_RECOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::loom {

enum class RecomputeMode { None, Selective, Full };

std::optional<RecomputeMode> parseRecomputeMode(llvm::StringRef name);
llvm::StringRef recomputeModeName(RecomputeMode mode);

/// What the caller knows of the program's training facts (looked through
/// sharding annotations); what each backward reads comes from the ops'
/// CostOpInterface (`getSavedForBackward`).
struct RecomputeFacts {
  /// The op has a backward (an operand needs a gradient).
  llvm::function_ref<bool(Operation *)> hasBackward;
  /// The value depends on a function argument (not only weights/constants).
  llvm::function_ref<bool(Value)> isActivation;
  /// The value depends on a trainable parameter.
  llvm::function_ref<bool(Value)> needsGradient;
};

/// The ops training recomputes in the backward instead of keeping their
/// results, grouped into regions (connected by def-use), and the activations
/// kept so that they can be.
struct RecomputeRegions {
  /// Recomputed op -> its region, numbered from 0 in program order.
  llvm::DenseMap<Operation *, unsigned> regionOf;
  unsigned numRegions = 0;
  /// Activations read by a recomputed op and produced outside its region
  /// (by an op that is not recomputed, or a function argument): the
  /// backward re-runs the region from these, so they are kept.
  llvm::DenseSet<Value> keptInputs;

  bool recomputes(Operation *op) const { return regionOf.count(op); }
  /// Whether an activation `v` is kept for backward under these regions,
  /// given that the backward of some op reads it (`savedByBackward`).
  bool keeps(Value v, bool savedByBackward) const;
};

/// Selects the recomputed regions of `func` (ops in program order) for
/// `mode`. Under `selective`, a region is a maximal connected set of
/// candidate ops (with a backward, reading no parameter or value derived
/// from one only, producing activations); it is recomputed when that frees
/// more bytes than the inputs it must keep instead (sizes from the IR's
/// types, so every caller selects the same regions whatever the sharding).
/// Under every mode, ops marked `loom.recompute` are recomputed too. Under
/// `full` the caller's cut-point model applies and this returns only the
/// marked ops.
RecomputeRegions selectRecomputation(func::FuncOp func, RecomputeMode mode,
                                     const RecomputeFacts &facts);

} // namespace mlir::loom

#endif // LOOM_COST_RECOMPUTE_H
