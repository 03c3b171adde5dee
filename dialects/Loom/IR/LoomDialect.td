//===- LoomDialect.td - loom dialect definition ------------*- tablegen -*-===//
//
// The `loom` dialect holds model graphs at ONNX/ATen level: tensor ops whose
// meaning a planner can reason about (matmul, conv, attention, norms, MoE
// routing), weights by reference, and the attributes that planning attaches.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Loom_Dialect : Dialect {
  let name = "loom";
  let cppNamespace = "::mlir::loom";
  let summary = "Graph-level tensor ops for auto-parallel planning";
  let description = [{
    The `loom` dialect represents a model graph imported from ONNX or from a
    traced PyTorch graph. Ops are value-semantic on ranked tensors, carry the
    meaning of their ONNX/ATen counterparts, infer their result types and
    implement upstream `shard::ShardingInterface` so that sharding propagation,
    `shard-partition` and Loom's planner all read an op's parallel dimensions
    from one place. Large weights are referenced by `loom.weight` (file,
    offset) and never copied into the IR.
  }];
  // Partitioning a vocab-split embedding computes its row offset in arith.
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
  // Attributes live in the dictionary, not properties: the generated parsers
  // infer result types from the attribute dictionary before properties exist.
  let usePropertiesForAttributes = 0;
}

class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, traits>;


// A 64-bit integer attribute read as signed: upstream I64Attr returns
// uint64_t, which would silently turn negative axes and offsets positive.
def Loom_I64Attr : SignlessIntegerAttrBase<I64, "64-bit signed integer"> {
  let returnType = "int64_t";
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Loom_UnaryKind : I32EnumAttr<"UnaryKind", "elementwise unary function", [
  I32EnumAttrCase<"neg", 0>, I32EnumAttrCase<"abs", 1>,
  I32EnumAttrCase<"exp", 2>, I32EnumAttrCase<"log", 3>,
  I32EnumAttrCase<"sqrt", 4>, I32EnumAttrCase<"rsqrt", 5>,
  I32EnumAttrCase<"reciprocal", 6>, I32EnumAttrCase<"relu", 7>,
  I32EnumAttrCase<"gelu", 8>, I32EnumAttrCase<"gelu_tanh", 9>,
  I32EnumAttrCase<"silu", 10>, I32EnumAttrCase<"sigmoid", 11>,
  I32EnumAttrCase<"tanh", 12>, I32EnumAttrCase<"erf", 13>,
  I32EnumAttrCase<"sin", 14>, I32EnumAttrCase<"cos", 15>,
  I32EnumAttrCase<"hard_sigmoid", 16>, I32EnumAttrCase<"hard_swish", 17>,
  I32EnumAttrCase<"floor", 18>, I32EnumAttrCase<"ceil", 19>,
  I32EnumAttrCase<"round", 20>, I32EnumAttrCase<"sign", 21>,
  I32EnumAttrCase<"logical_not", 22>, I32EnumAttrCase<"softplus", 23>,
  I32EnumAttrCase<"identity", 24>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_BinaryKind : I32EnumAttr<"BinaryKind", "elementwise binary function", [
  I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
  I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"div", 3>,
  I32EnumAttrCase<"pow", 4>, I32EnumAttrCase<"max", 5>,
  I32EnumAttrCase<"min", 6>, I32EnumAttrCase<"logical_and", 7>,
  I32EnumAttrCase<"logical_or", 8>, I32EnumAttrCase<"logical_xor", 9>,
  I32EnumAttrCase<"mod", 10>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_ComparePredicate : I32EnumAttr<"ComparePredicate", "comparison", [
  I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
  I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
  I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
  I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
  I32EnumAttrCase<"prod", 4>, I32EnumAttrCase<"l1", 5>,
  I32EnumAttrCase<"l2", 6>, I32EnumAttrCase<"sum_square", 7>,
  I32EnumAttrCase<"argmax", 8>, I32EnumAttrCase<"argmin", 9>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_PoolKind : I32EnumAttr<"PoolKind", "pooling", [
  I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_PadMode : I32EnumAttr<"PadMode", "padding mode", [
  I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
  I32EnumAttrCase<"edge", 2>, I32EnumAttrCase<"wrap", 3>
]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_WeightRole : I32EnumAttr<"WeightRole", "what a stored tensor is", [
  I32EnumAttrCase<"parameter", 0>, I32EnumAttrCase<"buffer", 1>,
  I32EnumAttrCase<"state", 2>
]> {
  let cppNamespace = "::mlir::loom";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
