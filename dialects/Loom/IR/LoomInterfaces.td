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
    Work done by one execution of an op on its full (unsharded) shapes:
    FLOPs, bytes moved, its roofline class, and what its backward needs.
    FLOPs count a multiply-add as 2. Contraction FLOPs (matmul, conv,
    attention) are reported separately because they dominate the time of
    real models and are what published "FLOPs per sample" figures count.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of the contractions in this op.",
      "double", "getContractionFlops", (ins), "", "return 0.0;">,
    InterfaceMethod<"All floating-point operations, contractions included.",
      "double", "getTotalFlops", (ins)>,
    InterfaceMethod<[{
        The roofline class of this op: which efficiency (fraction of peak
        compute and memory bandwidth) the cost model applies.
      }],
      "::loom::OpClass", "getCostClass", (ins), "",
      "return ::mlir::loom::detail::defaultCostClass($_op);">,
    InterfaceMethod<[{
        Bytes one execution reads and writes in memory, given the size in
        bytes of each operand or result value (`bytesOf`; the cost model
        passes local, per-device sizes under a sharding and its precision).
        Views (reshape, broadcast expand) move nothing; gathers read only
        the rows they fetch.
      }],
      "double", "getBytesAccessed",
      (ins "::llvm::function_ref<double(::mlir::Value)>":$bytesOf), "",
      "return ::mlir::loom::detail::defaultBytesAccessed($_op, bytesOf);">,
    InterfaceMethod<[{
        Values the backward pass of this op reads (inputs or outputs that
        must be kept, or recomputed, from the forward pass).
      }],
      "void", "getSavedForBackward",
      (ins "::llvm::SmallVectorImpl<::mlir::Value> &":$saved), "",
      "::mlir::loom::detail::defaultSavedForBackward($_op, saved);">,
  ];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
