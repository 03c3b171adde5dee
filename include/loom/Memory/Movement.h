//===- Movement.h - a chunk schedule as fetch and release ops ----*- C++ -*-===//
//
// Streamed parameters move as the chunk schedule (ChunkSchedule.h) decides;
// the lowering executes that schedule only if the IR says it. This writes
// the forward part of a placed chunk schedule into the function as
// `loom.fetch` (where each copy is issued; readers take its result) and
// `loom.release` (where a chunk is evicted), and checks such IR on its own
// terms: every read of a streamed weight comes from a live fetch, and the
// fetched chunks never exceed the budget. In training, the movement the
// schedule issues during the backward waits on the forward ops whose
// backward it precedes (kBackwardMovementAttr), or whose re-run for the
// backward it precedes (kRerunMovementAttr), until --loom-autodiff writes
// the backward and turns it into ops. docs/memory-placement.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_MOVEMENT_H
#define LOOM_MEMORY_MOVEMENT_H

#include "loom/Memory/ChunkSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace mlir::loom {

/// On a forward op of a streamed training program: the chunk schedule's
/// movement issued just before that op's backward step, as
/// `{release = array<i64: chunk...>, fetch = array<i64: chunk...>,
/// at = array<i64: offset...>}` (the chunks evicted, then the chunks
/// fetched with their copies' device offsets; `at` is empty where no static
/// memory plan was made). The weights of a chunk are those whose
/// `loom.placement` names it; each goes at its chunk's offset plus its
/// `chunk_offset`. --loom-autodiff writes these as loom.release and
/// loom.fetch ops when it writes that backward step.
inline constexpr llvm::StringLiteral kBackwardMovementAttr = "loom.backward_movement";

/// On a forward op the backward re-runs (recomputation): the chunk
/// schedule's movement issued just before that re-run, as
/// kBackwardMovementAttr. --loom-autodiff writes it before the re-run.
inline constexpr llvm::StringLiteral kRerunMovementAttr = "loom.rerun_movement";

/// A step of the chunk schedule after the forward ones: the backward of a
/// forward op, or (`rerun`) its re-run for the backward.
struct BackwardStep {
  Operation *op = nullptr;
  bool rerun = false;
};

/// The schedule to write: `weights[i]` (loom.weight ops) is in chunk
/// `chunkOf[i]`; the problem's first `forwardOps.size()` steps are those
/// ops, in program order, in `func`'s body, and the rest (training) are
/// `backwardSteps`.
struct MovementSchedule {
  std::vector<Operation *> weights;
  std::vector<int> chunkOf;
  std::vector<Operation *> forwardOps;
  std::vector<BackwardStep> backwardSteps;
  const ::loom::memory::ChunkProblem *problem = nullptr;
  const ::loom::memory::ChunkPlan *plan = nullptr;
  /// The static memory plan's device offsets (StaticMemoryPlan), written as
  /// each fetch's `at`; empty when none was planned. By index in the plan's
  /// fetches, by chunk for those resident at the start, by weight index.
  std::vector<int64_t> fetchOffsets, carriedOffsets, offsetInChunk;
};

/// Removes every loom.fetch (its readers read the source again) and
/// loom.release in `func`, and ZeRO-3's weight shards (ZeroShards.h): a
/// placement from an earlier run.
void removeMovement(func::FuncOp func);

/// Writes the first iteration of the plan's period: chunks resident at its
/// start as `loom.fetch ... carried` at the top, each fetch after the last
/// step that ends before the fetch starts (issueStep), the chunks the
/// fetches issued there evict released just before them; readers of a
/// streamed weight read the live fetch. Fetches issued during the forward
/// are ops, those for backward steps included; those issued during the
/// backward (training) are kBackwardMovementAttr on the forward op whose
/// backward step follows them, or kRerunMovementAttr on the one whose
/// re-run does. Weight ops move up to their first fetch.
/// Fails (naming the op) if a reader finds its weight not fetched.
LogicalResult writeMovement(func::FuncOp func, const MovementSchedule &schedule);

/// Replays `func`'s fetches and releases in program order against
/// `chunkBytes` (per chunk) and `budgetBytes`: an op that computes on a
/// weight whose loom.placement tier is not the device must read it through
/// a live loom.fetch, a fetch must not repeat a live one nor a release a released
/// one, and the chunks with a live fetch must fit the budget after every
/// fetch. Fetches with an `at` offset must all have one; a chunk's copy
/// then spans its chunk size from its first fetched weight's offset, holds
/// its other weights' offsets, lies inside `arenaBytes` (when >= 0) and
/// shares no byte with another live chunk's copy. A whole step (no
/// backward movement left for --loom-autodiff to write) must end with the
/// chunks its `carried` fetches start with, at their offsets, so that it
/// runs again as written. Errors name the op and the weight.
LogicalResult verifyMovement(func::FuncOp func, llvm::ArrayRef<int64_t> chunkBytes,
                             double budgetBytes, int64_t arenaBytes = -1);

/// Checks the sides of `func`'s host updates (ops marked kOnHostAttr): a
/// host op reads no device value but scalars (rank-0 tensors: a step count,
/// which a runtime passes as an argument), in particular no parameter the
/// device holds nor a fetched copy; a device op reads no host value but
/// through `loom.reload` (a `loom.spill` result is a host value too); and
/// a function result may be either. Looks through shard annotations.
/// Errors name the op and what it reads.
LogicalResult verifyHostUpdates(func::FuncOp func);

} // namespace mlir::loom

#endif // LOOM_MEMORY_MOVEMENT_H
