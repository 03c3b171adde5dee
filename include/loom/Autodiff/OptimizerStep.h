//===- OptimizerStep.h - the weights' update, in the IR ---------*- C++ -*-===//
//
// After --loom-autodiff a training step returns its weights' gradients; the
// optimizer step turns them into the update itself, in loom ops at the end
// of the step: SGD (with momentum), Adam or AdamW, as PyTorch defines them.
// The optimizer's state (moments, momentum buffers, the step count) becomes
// `loom.weight state` tensors that start at zero. Each new weight and new
// state is a result marked `loom.updates = "<weight>"`: the lowering writes
// it back into that weight's buffer (loom-write-back-updates), so a runtime
// that keeps the weights between calls trains by calling the step again.
//
// A step the runtime calls once per micro-batch (loom.micro_batches > 1,
// or a pipeline's stages) must update once, from the gradients summed over
// the step. There the step adds each gradient into a state holding the sum
// (`<weight>.grad_sum`, written back like an update), and the update is a
// function of its own, `<entry>_update` (in a pipeline one per device,
// `<entry>_update_stage<d>`, updating the weights its stages read), that
// takes no arguments, reads the sums and writes them back as zeros; the
// runtime calls it once the step's micro-batches are done (gradient
// accumulation as Megatron's main_grad buffers do it). The sums are in the
// update's layout (ZeRO-2/3: the gradient's shards), but whole under ZeRO-1
// where the gradients are not kept, so that the reduction is made once a
// step, in the update function (loom-partition moves it there). Where
// placement puts a weight's optimizer on the host, the update function
// spills the sum and the CPU updates as below; a streamed weight's sum is
// kept in host memory instead, each call spilling its gradient and adding
// it in on the host.
//
// On a planned module the update runs in the gradient's layout: a ZeRO
// gradient's shards (then the state is stored in them too, and each replica
// updates its shard of the weight before partitioning all-gathers the whole
// back into the weight's stored layout), else the weight's planned layout.
// Where memory placement puts a weight's optimizer on the host, the
// gradient is spilled to the host, the update's ops are marked
// `loom.on_host` (kOnHostAttr, LoomOps.h) and read the host's copy of the
// parameter, and a resident parameter's new value is reloaded onto the device.
// A 16-bit float parameter is updated in float32: from a master copy
// (`<weight>.master`), with float32 moments and its gradient widened; the
// parameter is the master copy rounded (as mixed-precision training does it,
// and as placement prices the state: 12 bytes per parameter).
// docs/autodiff.md, "The optimizer step".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_OPTIMIZERSTEP_H
#define LOOM_AUTODIFF_OPTIMIZERSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir::loom {

/// On a result: the name of the weight (or state) whose buffer the result
/// replaces at the end of the step.
inline constexpr llvm::StringLiteral kUpdatesAttr = "loom.updates";
/// On a function whose weights the step updates (or, micro-batched or
/// pipelined, sums the gradients of), and on its update functions: the
/// optimizer and its hyperparameters.
inline constexpr llvm::StringLiteral kOptimizerAttr = "loom.optimizer";
/// The function a micro-batched or pipelined step's update is written in,
/// for entry `entry` (stageFunctionName of it per pipeline device).
inline std::string updateFunctionName(llvm::StringRef entry) {
  return (entry + "_update").str();
}
/// The sum of a weight's gradients over a step's micro-batches, as the
/// suffix of the state that holds it.
inline constexpr llvm::StringLiteral kAccumulatorSuffix = ".grad_sum";
/// The shared step count of Adam's bias correction.
inline constexpr llvm::StringLiteral kStepCountName = "optimizer.step";
/// Appended to a weight's name: the host's copy of a resident parameter
/// whose update placement puts on the host (state loaded from the
/// parameter's own bytes), which the CPU updates and the device's copy is
/// refreshed from.
inline constexpr llvm::StringLiteral kHostCopySuffix = ".host_copy";
/// Appended to a 16-bit float parameter's name: its float32 master copy,
/// state loaded from the parameter's own bytes (widened at load), which the
/// optimizer updates, in float32 like the rest of its state, and the
/// parameter is rounded from (mixed-precision training). On the host where
/// placement puts the update there, it is the host's copy.
inline constexpr llvm::StringLiteral kMasterSuffix = ".master";
/// Whether a weight of `element` type is updated through a float32 master
/// copy: a 16-bit float (bf16, f16), which the runtime widens at load.
/// Memory placement decides by it what the program holds (reloads, host
/// copies), whatever precision it prices.
inline bool updatesThroughMasterCopy(mlir::Type element) {
  auto f = llvm::dyn_cast<mlir::FloatType>(element);
  return f && f.getWidth() == 16;
}

enum class OptimizerKind { sgd, adam, adamw };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adamw;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8; // Adam, AdamW
  double weightDecay = 0.0; // L2 for SGD and Adam, decoupled for AdamW
  double momentum = 0.0;    // SGD
  bool keepGradients = false;
};

/// `kind`'s optimizer, if it names one ("sgd", "adam", "adamw").
std::optional<OptimizerKind> parseOptimizerKind(llvm::StringRef kind);
llvm::StringRef stringifyOptimizerKind(OptimizerKind kind);

/// Why `config` is no optimizer PyTorch would run (a non-positive learning
/// rate, a beta outside [0, 1), ...), or empty.
std::string checkOptimizerConfig(const OptimizerConfig &config);

/// Appends the update of every weight `func` returns a gradient of (a
/// function `--loom-autodiff` differentiated) and rewrites its results:
/// the forward's outputs, the gradients where `keepGradients`, then each
/// updated weight and state (a micro-batched or pipelined step: each
/// gradient's sum), marked kUpdatesAttr. Fails, naming what is wrong, on a
/// function without its backward or with its update already, where a state
/// name is already a weight's, or, in a micro-batched or pipelined step, on
/// a streamed weight the device updates or in a pipeline or over a grid, or
/// a weight read on two pipeline devices other than a tied pair; the module
/// is then unchanged.
LogicalResult writeOptimizerStep(func::FuncOp func, const OptimizerConfig &config);

} // namespace mlir::loom

#endif // LOOM_AUTODIFF_OPTIMIZERSTEP_H
