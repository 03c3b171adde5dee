//===- LoomInterfaces.td - loom op interfaces ---------------*- tablegen -*-===//
//
// Interfaces every loom op implements next to upstream's ShardingInterface:
// the cost interface reports the work an op does, so the summary, the cost
// model and the planner share one definition of FLOPs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
#define LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD

include "mlir/IR/OpBase.td"

def Loom_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    Work done by one execution of an op on its full (unsharded) shapes.
    FLOPs count a multiply-add as 2. Contraction FLOPs (matmul, conv,
    attention) are reported separately because they dominate the time of
    real models and are what published "FLOPs per sample" figures count.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of the contractions in this op.",
      "double", "getContractionFlops", (ins), "", "return 0.0;">,
    InterfaceMethod<"All floating-point operations, contractions included.",
      "double", "getTotalFlops", (ins)>,
  ];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
