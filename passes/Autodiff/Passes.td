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

#endif // LOOM_PASSES_AUTODIFF_PASSES_TD
