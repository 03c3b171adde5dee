//===- Passes.td - differentiation passes -------------------*- tablegen -*-===//

#ifndef LOOM_PASSES_AUTODIFF_PASSES_TD
#define LOOM_PASSES_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomAutodiff : Pass<"loom-autodiff", "::mlir::ModuleOp"> {
  let summary = "Write the backward of a forward function: one training step";
  let description = [{
    Rewrites the entry function into one training step's forward and
    backward, in loom ops: after its inputs it takes a cotangent per float
    result (`loom.name = "<result>.grad"`, `loom.cotangent_of = i`), the
    gradient of the loss with respect to that result; after its outputs it
    returns the gradient of every trainable `loom.weight parameter` in
    program order (`loom.name = "<weight>.grad"`, `loom.gradient_of`). The
    function is marked `loom.differentiated`.

    Shard annotations and `loom.fetch` are read through, so a planned module
    keeps its plan: its backward carries none of its own, and upstream
    sharding propagation gives it the layouts the forward's annotations
    imply. An op between a trainable parameter and a result without a
    gradient rule is an error naming it; docs/autodiff.md lists the rules.

    ```
    loom-opt model.mlir --loom-autodiff -o step.mlir
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The function to differentiate">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def LoomOptimizerStep : Pass<"loom-optimizer-step", "::mlir::ModuleOp"> {
  let summary = "Append the weights' update (SGD, Adam, AdamW) to a training step";
  let description = [{
    Runs on a step `--loom-autodiff` wrote. Each weight's gradient becomes
    its update, in loom ops at the end of the step, as PyTorch's optimizer
    computes it (a gradient marked `loom.no_gradient`, of a weight no result
    depends on through float values, none: the weight keeps its value and
    has no state, as torch.optim skips a parameter whose `.grad` is None); the optimizer's state (Adam's moments and step count, SGD's
    momentum buffers) becomes `loom.weight state` tensors that start at
    zero. The new weights and state are results marked
    `loom.updates = "<name>"`, which the lowering writes back into their
    buffers, so each call of the compiled step is one training step. The
    gradients are no longer returned unless `keep-gradients`.

    A step the runtime calls once per micro-batch (`loom.micro_batches` > 1,
    or a pipeline's stages) instead adds each gradient into a state
    `<weight>.grad_sum`, and the update is written in a function of its own,
    `@main_update` (one per pipeline device, `@main_update_stage<d>`), that
    the runtime calls once a step after the micro-batches: it reads the sums
    and writes them back as zeros (where placement puts a weight's
    optimizer on the host, from the sum spilled there; a streamed weight's
    sum is the host's, each call's gradient spilled and added into it).
    Streamed weights the device updates, streamed weights in a pipeline or
    over a device grid, and weights shared by stages other than with the
    last device (a tied embedding) are refused there.

    On a planned module the update runs in each gradient's layout: under
    ZeRO-2 and ZeRO-3 the state is stored in the gradient's shards, each
    replica updates its shard, and partitioning gathers the weight back into
    its stored layout.

    ```
    loom-opt model.mlir --loom-autodiff \
      --loom-optimizer-step="kind=adamw lr=3e-4 weight-decay=0.01" -o step.mlir
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The training step's function">,
    Option<"kind", "kind", "std::string", "\"adamw\"", "sgd, adam or adamw">,
    Option<"lr", "lr", "double", "1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", "0.9", "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", "0.999", "Adam's second-moment decay">,
    Option<"eps", "eps", "double", "1e-8", "Adam's denominator term">,
    Option<"weightDecay", "weight-decay", "double", "0.0",
           "L2 penalty (SGD, Adam) or decoupled decay (AdamW)">,
    Option<"momentum", "momentum", "double", "0.0", "SGD's momentum">,
    Option<"keepGradients", "keep-gradients", "bool", "false",
           "Return the gradients too">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::shard::ShardDialect"];
}

#endif // LOOM_PASSES_AUTODIFF_PASSES_TD
