//===- Differentiate.h - the backward of a loom function ---------*- C++ -*-===//
//
// Reverse-mode differentiation of a forward function written in loom ops:
// the function becomes one training step's forward and backward. It takes a
// cotangent per float result (the gradient of the loss with respect to that
// result) after its inputs, and returns the gradient of every trainable
// `loom.weight parameter` after its outputs, in the weights' program order.
// The backward is written in loom ops, so it plans, partitions and lowers
// like the forward. docs/autodiff.md has the rules and the limits.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_DIFFERENTIATE_H
#define LOOM_AUTODIFF_DIFFERENTIATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::loom {

/// Set on a function once its backward is written.
inline constexpr llvm::StringLiteral kDifferentiatedAttr = "loom.differentiated";
/// Why the planners refuse a differentiated function: they price a forward
/// program's backward themselves, and would count this one twice.
inline constexpr llvm::StringLiteral kHoldsBackwardMessage =
    "already holds its backward (loom-autodiff); plan the forward, and differentiate "
    "the planned module";
/// On a gradient result: the name of the weight it is the gradient of.
inline constexpr llvm::StringLiteral kGradientOfAttr = "loom.gradient_of";
/// On a gradient result: no result depends on the weight through float
/// values (none at all, or only through a comparison or an argmax), so its
/// gradient is zeros and --loom-optimizer-step leaves the weight as it is,
/// as torch.optim skips a parameter whose `.grad` is None. (A weight read
/// only through floor, round or sign has zeros for a gradient and is
/// updated, weight decay included, as in PyTorch.)
inline constexpr llvm::StringLiteral kNoGradientAttr = "loom.no_gradient";
/// On a cotangent argument: the number of the result it is the cotangent of.
inline constexpr llvm::StringLiteral kCotangentOfAttr = "loom.cotangent_of";

/// Appends the backward of `func` (one block, loom ops, `shard.shard`
/// annotations and `loom.fetch` read through) and rewrites its signature as
/// described above. Fails, naming the op, where an op on a path from a
/// parameter to a result has no gradient rule; `func` is then unchanged.
/// On a placed module it carries out memory placement's decisions: the
/// backward's fetches and releases of streamed weights, recomputation, the
/// offloaded activations' spills and reloads, and the activations'
/// gradients' places. A plan it refuses up front (an activation offloaded
/// that the step returns or recomputes, or in only some micro-batches;
/// movement for a re-run it does not make) also leaves `func` unchanged;
/// one it finds it cannot
/// carry out while writing the backward (a weight read where the schedule
/// has no copy of it, a malformed loom.backward_movement) fails naming the
/// op, with the backward partly written.
LogicalResult differentiate(func::FuncOp func);

} // namespace mlir::loom

#endif // LOOM_AUTODIFF_DIFFERENTIATE_H
