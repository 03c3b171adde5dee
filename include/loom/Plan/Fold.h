//===- Fold.h - repeated blocks of a model graph (TAP folding) --*- C++ -*-===//
//
// Finds runs of structurally identical, consecutive subgraphs (transformer
// layers, ResNet bottlenecks of one stage, encoder and decoder stacks, MoE
// layers) by canonical structural hashing, so that the strategy search
// solves one representative per run and its cost follows the number of
// unique blocks rather than the depth. Unfolding a decided plan is the
// correspondence ops[c][j] <-> ops[0][j].
//
// Two ops are structurally identical when they have the same name,
// attributes (the location and weight names/offsets aside), operand and
// result types, and their operands come from corresponding places: the op
// at the same position of the same copy, the corresponding input of the
// copy, or a weight/constant of the same type and role read only by that
// copy.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLAN_FOLD_H
#define LOOM_PLAN_FOLD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace mlir::loom {

struct FoldOptions {
  unsigned minCopies = 2;     // a run needs at least this many copies
  unsigned minOpsPerCopy = 2; // and this many compute ops per copy
};

/// One run of consecutive, structurally identical copies.
struct RepeatedBlock {
  unsigned copies() const { return static_cast<unsigned>(ops.size()); }
  unsigned opsPerCopy() const { return ops.empty() ? 0 : ops[0].size(); }

  /// ops[c][j]: the j-th compute op (program order; weights and constants
  /// excluded) of copy c. ops[c][j] corresponds to ops[0][j].
  std::vector<SmallVector<Operation *>> ops;
  /// Weights and constants read only by copy c, in order of first use;
  /// weights[c][k] corresponds to weights[0][k].
  std::vector<SmallVector<Operation *>> weights;
  /// Values defined outside copy c that it reads, in order of first use;
  /// inputs[c][k] corresponds to inputs[0][k]. For c > 0 each is either an
  /// output of copy c-1 (the chain) or the same value for every copy (a
  /// shared input such as an encoder output or a mask).
  std::vector<SmallVector<Value>> inputs;
  /// Values of copy c read after it (by copy c+1 or the rest of the
  /// program), in program order; correspond across copies.
  std::vector<SmallVector<Value>> outputs;
  /// For each input k: the index of the output of the previous copy that
  /// feeds it (copies c > 0), or -1 for a shared input.
  SmallVector<int> chainedFrom;

  uint64_t hash = 0;       // canonical structural hash of one copy
  double parameters = 0;   // elements of the weights of one copy
  double forwardFlops = 0; // of one copy
};

struct FoldedFunction {
  func::FuncOp func;
  /// Compute ops (everything but weights and constants), program order.
  SmallVector<Operation *> ops;
  /// Runs in program order; they never overlap.
  std::vector<RepeatedBlock> blocks;

  struct Position {
    unsigned block, copy, index;
  };
  /// Where a compute op sits in a run; absent for ops outside every run.
  DenseMap<Operation *, Position> position;

  /// Compute ops left when every run is reduced to its first copy: the
  /// number the folded search works on.
  size_t foldedOpCount() const;
};

/// Finds the runs. Never fails: a graph with no repetition has no blocks.
FoldedFunction foldRepeatedBlocks(func::FuncOp func, const FoldOptions &options = {});

/// One remark per run, at its first op: copies, ops per copy, parameters
/// and FLOPs per copy, and the ops where each copy starts.
void emitFoldRemarks(const FoldedFunction &folded);

} // namespace mlir::loom

#endif // LOOM_PLAN_FOLD_H
