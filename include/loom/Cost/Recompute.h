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
// Ops with a `loom.recompute` attribute are recomputed under every policy:
// a user's unit mark, the strategy search's "selective" regions, memory
// placement's integer segments (partial recomputation).
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

/// The attribute marking ops every policy recomputes: a user's unit mark,
/// the strategy search's "selective", memory placement's integer segments.
constexpr llvm::StringLiteral kRecomputeMark = "loom.recompute";

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
  /// Ops recomputed as if marked `loom.recompute = N : i64` (memory
  /// placement prices recomputing segment N before it writes the marks);
  /// may be null.
  const llvm::DenseMap<Operation *, int64_t> *alsoRecomputed = nullptr;
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

/// A stretch of the program between two cut points (after each, one
/// activation carries everything onward), as full recomputation re-runs it
/// from the checkpoint before it.
struct RecomputeSegment {
  /// The ops a mark would recompute (those with a backward producing
  /// activations), in program order; not `checkpoint`.
  llvm::SmallVector<Operation *> ops;
  /// The stretch's last op where its result alone carries the program
  /// onward: the next stretch's checkpoint. Where the next stretch is
  /// recomputed too, it is kept, so each re-runs on its own where the
  /// backward reaches this op (recomputed, it would have to re-run for the
  /// next stretch's re-run, and consecutive recomputed stretches would all
  /// re-run at the last one and be held until their own backward); where
  /// not, it re-runs with its stretch. Offloading the stretch's kept
  /// activations moves its result too. Null where there is none.
  Operation *checkpoint = nullptr;
  /// What recomputing it frees: the activations its ops produce that some
  /// backward reads and `base` does not already recompute (IR types).
  double freedBytes = 0;
  /// The same of `checkpoint`'s results (what offload moves beside them).
  double checkpointBytes = 0;
  /// Its forward FLOPs, re-run in the backward.
  double flops = 0;
};

/// `func`'s segments in the order partial recomputation takes them (the
/// most bytes freed per FLOP re-run first, Checkmate's greedy order; equal
/// ratios, as in repeated layers, in program order; those whose
/// recomputation frees nothing last), leaving out those neither
/// recomputing nor offloading frees anything from. `base`: the regions
/// the policy already recomputes.
llvm::SmallVector<RecomputeSegment>
rankRecomputeSegments(func::FuncOp func, const RecomputeFacts &facts,
                      const RecomputeRegions &base);

/// Selects the recomputed regions of `func` (ops in program order) for
/// `mode`. Under `selective`, a region is a maximal connected set of
/// candidate ops (with a backward, reading no parameter or value derived
/// from one only, producing activations); it is recomputed when that frees
/// more bytes than the inputs it must keep instead (sizes from the IR's
/// types, so every caller selects the same regions whatever the sharding).
/// Under every mode, ops marked `loom.recompute` (or in the facts'
/// `alsoRecomputed`) are recomputed too; ops with equal marks connected by
/// def-use form one region (so each segment placement marks with its own
/// integer re-runs on its own, from the checkpoint before it). Under
/// `full` the caller's cut-point model applies and this returns only the
/// marked ops.
RecomputeRegions selectRecomputation(func::FuncOp func, RecomputeMode mode,
                                     const RecomputeFacts &facts);

/// Whether the step hands back every result of `op` (a `func.return`
/// reads each, directly or through sharding annotations). The step holds
/// such results until it ends, so the backward reads them as they are and
/// never re-runs `op`, whatever marks it carries; recomputing it frees
/// nothing.
bool resultsHeldByStep(Operation *op);

/// Where the backward re-runs each op of `body` that `recomputed` says it
/// recomputes: at the backward turn of the last op after it in program
/// order that reads one of its results (an op nested in a region counts as
/// its ancestor in `body`; the terminator does not count), where a
/// recomputed reader counts as its own point, since re-running it reads
/// the op's results there; at its own turn when no later op reads them.
/// The backward walks the program in reverse, so that is the first turn
/// that can read the results. Memory placement reads each streamed weight
/// of a recomputed op there, and autodiff re-runs the op there, so the
/// two agree on when its weights must be on the device.
llvm::DenseMap<Operation *, Operation *>
recomputePoints(Block &body, llvm::function_ref<bool(Operation *)> recomputed);

} // namespace mlir::loom

#endif // LOOM_COST_RECOMPUTE_H
