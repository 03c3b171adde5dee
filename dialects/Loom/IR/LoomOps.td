//===- LoomOps.td - loom dialect ops ------------------------*- tablegen -*-===//
//
// Graph-level ops with ONNX/ATen meaning. All ops are pure and value-semantic
// on ranked tensors; elementwise ops broadcast like numpy. Result types are
// inferred from operands and attributes, except for the few ops whose result
// shape *is* the information (reshape, expand, cast), which spell it out.
//
// Every op implements upstream `shard::ShardingInterface` (loop iterator types
// and indexing maps are defined per op in LoomShardingInterface.cpp) and
// Loom's `CostOpInterface` (FLOP counts in LoomCost.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

include "dialects/Loom/IR/LoomDialect.td"
include "dialects/Loom/IR/LoomInterfaces.td"
include "mlir/Dialect/Shard/Interfaces/ShardingInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

// Every loom op: pure, shardable through upstream's interface, costed.
class Loom_GraphOp<string mnemonic, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat(traits, [
        Pure,
        DeclareOpInterfaceMethods<ShardingInterface, [
          "getLoopIteratorTypes", "getReductionLoopIteratorKinds",
          "getIndexingMaps", "getShardingOption", "partition"]>,
        DeclareOpInterfaceMethods<Loom_CostOpInterface, [
          "getContractionFlops", "getTotalFlops"]>])>;

// Ops whose result types follow from operands and attributes.
class Loom_InferredOp<string mnemonic, list<Trait> traits = []>
    : Loom_GraphOp<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])>;

def Loom_Tensor : StaticShapeTensorOf<[AnyType]>;
def Loom_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Loom_IndexTensor : StaticShapeTensorOf<[AnySignlessInteger]>;

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

def Loom_WeightOp : Loom_GraphOp<"weight"> {
  let summary = "a stored tensor referenced by file and byte offset";
  let description = [{
    A model parameter (or buffer such as batch-norm running statistics) whose
    bytes live in a file: `file` (relative to the directory of the imported
    model, or absolute) and `offset` in bytes; the dtype and shape are the
    result type, stored contiguously, little-endian, row-major. Importing never
    reads these bytes, so a model of any size imports in seconds. `role`
    separates trainable parameters from non-trainable buffers and from
    `state`: the optimizer's moments and step count that
    `--loom-optimizer-step` adds. A state weight may name no file (`from ""`):
    it then starts at zero, and the program updates it in place every step.
    With `as`, the file holds the elements in the narrower float type
    `file_type`, which the runtime widens to the result's at load: the
    float32 master copy of a 16-bit parameter starts from the parameter's
    own bytes.

    ```mlir
    %w = loom.weight parameter "h.0.mlp.fc.weight" from "gpt2.bin"[4096]
        : tensor<768x3072xf32>
    %m = loom.weight state "h.0.mlp.fc.weight.master" from "gpt2.bin"[4096]
        as bf16 : tensor<768x3072xf32>
    ```
  }];
  let arguments = (ins Loom_WeightRole:$role, StrAttr:$name,
                       StrAttr:$file, Loom_I64Attr:$offset,
                       OptionalAttr<TypeAttr>:$file_type);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $role $name `from` $file `[` $offset `]` (`as` $file_type^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ConstantOp : Loom_GraphOp<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a small constant tensor held inline";
  let description = [{
    A constant small enough to keep in the IR (shapes, masks, scalars).
    Large initializers become `loom.weight` instead.

    ```mlir
    %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Loom_UnaryOp : Loom_InferredOp<"unary"> {
  let summary = "elementwise unary function";
  let description = [{
    Applies `kind` to every element. Float kinds need a float tensor;
    `logical_not` needs `i1`; `neg`, `abs` and `sign` also take integers.
    `round` rounds half to even; `hard_sigmoid` is `relu6(x + 3) / 6` and
    `hard_swish` is `x * hard_sigmoid(x)`; `gelu` is the exact (erf) form and
    `gelu_tanh` the tanh approximation.

    ```mlir
    %y = loom.unary gelu %x : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Loom_UnaryKind:$kind, Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Loom_BinaryOp : Loom_InferredOp<"binary"> {
  let summary = "elementwise binary function with numpy broadcasting";
  let description = [{
    Applies `kind` to pairs of elements after broadcasting both operands to
    a common shape (numpy rules). Operands have the same element type.
    Integer `div` truncates toward zero; `mod` takes the sign of the divisor
    (Python/numpy `%`).

    ```mlir
    %y = loom.binary add %x, %b : tensor<2x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Loom_BinaryKind:$kind, Loom_Tensor:$lhs,
                       Loom_Tensor:$rhs);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Loom_CompareOp : Loom_InferredOp<"compare"> {
  let summary = "elementwise comparison with broadcasting, yielding i1";
  let description = [{
    ```mlir
    %m = loom.compare lt %a, %b : tensor<4xi64>, tensor<4xi64>
    ```
  }];
  let arguments = (ins Loom_ComparePredicate:$predicate, Loom_Tensor:$lhs,
                       Loom_Tensor:$rhs);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def Loom_WhereOp : Loom_InferredOp<"where"> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    `result[i] = condition[i] ? on_true[i] : on_false[i]` after broadcasting
    all three operands to a common shape.

    ```mlir
    %y = loom.where %m, %a, %b : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I1]>:$condition, Loom_Tensor:$on_true,
                       Loom_Tensor:$on_false);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false)
  }];
}

def Loom_ClampOp : Loom_InferredOp<"clamp"> {
  let summary = "elementwise clamp to [min, max]";
  let description = [{
    Either bound may be absent. ReLU6 is `clamp {min = 0.0, max = 6.0}`.

    ```mlir
    %y = loom.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Loom_CastOp : Loom_GraphOp<"cast"> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Float to integer truncates toward zero; any nonzero value casts to `i1`
    true, and `i1` casts to 0 or 1.

    ```mlir
    %y = loom.cast %x : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Loom_MatmulOp : Loom_InferredOp<"matmul"> {
  let summary = "matrix product with broadcast batch dimensions";
  let description = [{
    `lhs[..., M, K] x rhs[..., K, N] -> [..., M, N]`: both operands have rank
    at least 2 and their batch dimensions broadcast (numpy `matmul`). A linear
    layer is a matmul with a `[K, N]` weight; batched attention scores are a
    matmul of rank-4 tensors.

    ```mlir
    %y = loom.matmul %x, %w : tensor<2x16x64xf32>, tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$lhs, Loom_Tensor:$rhs);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Loom_ConvOp : Loom_InferredOp<"conv"> {
  let summary = "N-d convolution, channels-first, with groups";
  let description = [{
    `input[N, C, *spatial]`, `weight[F, C / groups, *kernel]`, optional
    `bias[F]`. `padding` holds the begin pads of every spatial dim followed by
    the end pads (ONNX order). Depthwise convolution is `groups = C`.

    ```mlir
    %y = loom.conv %x, %w {strides = array<i64: 2, 2>,
        padding = array<i64: 3, 3, 3, 3>, dilations = array<i64: 1, 1>,
        groups = 1 : i64} : tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$weight,
                       Optional<Loom_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, Loom_I64Attr:$groups);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)?
  }];
}

def Loom_AttentionOp : Loom_InferredOp<"attention"> {
  let summary = "scaled dot-product attention, with grouped-query heads";
  let description = [{
    `softmax(q k^T * scale + mask) v` per head. `query[B, Hq, Sq, D]`,
    `key[B, Hkv, Skv, D]`, `value[B, Hkv, Skv, Dv]` with `Hq % Hkv == 0`
    (grouped-query and multi-query attention share key/value heads). The
    optional `mask` broadcasts to `[B, Hq, Sq, Skv]`: `i1` keeps where true,
    a float mask is added. `causal` masks keys after the query position.
    `scale` defaults to `1/sqrt(D)`. Kept whole because it carries planning
    meaning (head and sequence parallelism) and kernel meaning (fused
    attention).

    ```mlir
    %o = loom.attention %q, %k, %v {causal}
        : tensor<2x8x128x64xf32>, tensor<2x2x128x64xf32>, tensor<2x2x128x64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value, Optional<Loom_Tensor>:$mask,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` type($query) `,`
    type($key) `,` type($value) (`,` type($mask)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Pooling, normalization, softmax, reductions
//===----------------------------------------------------------------------===//

def Loom_PoolOp : Loom_InferredOp<"pool"> {
  let summary = "N-d max or average pooling, channels-first";
  let description = [{
    Pools `input[N, C, *spatial]` with window `kernel`. `padding` is begin
    pads then end pads. Average pooling divides by the window size including
    padding when `count_include_pad` is set.

    ```mlir
    %y = loom.pool max %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Loom_PoolKind:$kind, Loom_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilations,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Loom_LayerNormOp : Loom_InferredOp<"layer_norm"> {
  let summary = "layer normalization over the trailing dims from `axis`";
  let description = [{
    Normalizes over dims `[axis, rank)` to zero mean and unit variance, then
    multiplies by `scale` and adds the optional `bias`, both shaped like the
    normalized dims. A norm without affine parameters takes a splat
    `loom.constant` of ones as its scale.

    ```mlir
    %y = loom.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-5 : f64}
        : tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Optional<Loom_FloatTensor>:$bias,
                       Loom_I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `scale` $scale (`bias` $bias^)? attr-dict `:` type($input) `,`
    type($scale) (`,` type($bias)^)?
  }];
}

def Loom_RmsNormOp : Loom_InferredOp<"rms_norm"> {
  let summary = "root-mean-square normalization (LLaMA) from `axis`";
  let description = [{
    `x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale`.

    ```mlir
    %y = loom.rms_norm %x scale %g {axis = 2 : i64, epsilon = 1.0e-6 : f64}
        : tensor<2x16x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$scale,
                       Loom_I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? attr-dict `:` type($input) (`,` type($scale)^)?
  }];
}

def Loom_BatchNormOp : Loom_InferredOp<"batch_norm"> {
  let summary = "batch normalization with running statistics (inference form)";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel (dim 1).

    ```mlir
    %y = loom.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-5 : f64}
        : tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
          tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Loom_FloatTensor:$bias, Loom_FloatTensor:$mean,
                       Loom_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale) `,` type($bias) `,` type($mean) `,`
    type($variance)
  }];
}

def Loom_SoftmaxOp : Loom_InferredOp<"softmax"> {
  let summary = "softmax (or log-softmax) along one axis";
  let description = [{
    ```mlir
    %p = loom.softmax %x {axis = 3 : i64} : tensor<2x8x16x16xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_I64Attr:$axis, UnitAttr:$log);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Loom_ReduceOp : Loom_InferredOp<"reduce"> {
  let summary = "reduction over a set of axes";
  let description = [{
    Reduces `axes` (sorted, unique, non-negative) with `kind`; reduced dims are
    kept as size 1 when `keep_dims` is set. `argmax`/`argmin` take exactly one
    axis and yield `i64` indices; ties pick the lowest index.

    ```mlir
    %m = loom.reduce mean %x {axes = array<i64: 2, 3>, keep_dims = true}
        : tensor<1x2048x7x7xf32>
    ```
  }];
  let arguments = (ins Loom_ReduceKind:$kind, Loom_Tensor:$input,
                       DenseI64ArrayAttr:$axes, BoolAttr:$keep_dims);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def Loom_ReshapeOp : Loom_GraphOp<"reshape"> {
  let summary = "reinterpret a tensor with a new static shape";
  let description = [{
    Same elements in row-major order; the element count is preserved.

    ```mlir
    %y = loom.reshape %x : tensor<2x16x768xf32> -> tensor<2x16x12x64xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Loom_TransposeOp : Loom_InferredOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %y = loom.transpose %x {permutation = array<i64: 0, 2, 1, 3>}
        : tensor<2x16x12x64xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Loom_ConcatOp : Loom_InferredOp<"concat"> {
  let summary = "concatenate tensors along one axis";
  let description = [{
    ```mlir
    %y = loom.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Loom_Tensor>:$inputs, Loom_I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Loom_SliceOp : Loom_InferredOp<"slice"> {
  let summary = "strided static slice";
  let description = [{
    `result[i...] = input[offsets + i * strides]` with `sizes` elements per
    dim; a negative stride walks backwards from `offsets`.

    ```mlir
    %y = loom.slice %x {offsets = array<i64: 0, 64>, sizes = array<i64: 16, 64>,
        strides = array<i64: 1, 1>} : tensor<16x192xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Loom_GatherOp : Loom_InferredOp<"gather"> {
  let summary = "gather slices along one axis by index (ONNX Gather)";
  let description = [{
    `result.shape = data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end.

    ```mlir
    %y = loom.gather %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<3xi64>
    ```
  }];
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       Loom_I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices)
  }];
}

def Loom_ScatterOp : Loom_InferredOp<"scatter"> {
  let summary = "scatter updates into a copy of data (ONNX ScatterElements)";
  let description = [{
    For every index position `p` of `indices`, `result[p with p[axis] =
    indices[p]] = updates[p]` (combined with `reduction` when set: `add`,
    `mul`, `max`, `min`).

    ```mlir
    %y = loom.scatter %d, %i, %u reduction add {axis = 1 : i64}
        : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       Loom_Tensor:$updates, Loom_I64Attr:$axis,
                       OptionalAttr<Loom_BinaryKind>:$reduction);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates (`reduction` $reduction^)? attr-dict `:`
    type($data) `,` type($indices) `,` type($updates)
  }];
}

def Loom_PadOp : Loom_InferredOp<"pad"> {
  let summary = "pad each dim with a constant or by reflection/edge/wrap";
  let description = [{
    `padding` holds the begin pads of every dim followed by the end pads;
    negative pads crop.

    ```mlir
    %y = loom.pad constant %x {padding = array<i64: 0, 1, 0, 1>, value = 0.0 : f64}
        : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Loom_PadMode:$mode, Loom_Tensor:$input,
                       DenseI64ArrayAttr:$padding,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$mode $input attr-dict `:` type($input)";
}

def Loom_ExpandOp : Loom_GraphOp<"expand"> {
  let summary = "broadcast to a larger static shape";
  let description = [{
    The input broadcasts (numpy rules) to exactly the result shape.

    ```mlir
    %y = loom.expand %x : tensor<1x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Embeddings, top-k and mixture-of-experts routing
//===----------------------------------------------------------------------===//

def Loom_EmbeddingOp : Loom_InferredOp<"embedding"> {
  let summary = "look up rows of an embedding table";
  let description = [{
    `table[V, H]`, integer `indices[...]` -> `[..., H]`. Separate from
    `gather` because a planner shards it by vocabulary (Megatron's
    vocab-parallel embedding) and by hidden size.

    Ids index rows like `gather` (negative ids count from the end, the rest
    clamp to the table).

    With `rows` R and a `row_offset` o, the table holds rows [o, o + V) of a
    whole R-row table, and ids whose (wrapped, clamped) row falls outside that
    range look up zero rows. Partitioning along the vocabulary produces this
    form: each device looks up the rows it owns and an all-reduce sums them.

    ```mlir
    %e = loom.embedding %table, %ids : tensor<50257x768xf32>, tensor<2x16xi64>
    %p = loom.embedding %half, %ids offset %o {rows = 50258 : i64}
        : tensor<25129x768xf32>, tensor<2x16xi64>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$table, Loom_IndexTensor:$indices,
                       Optional<Index>:$row_offset,
                       OptionalAttr<I64Attr>:$rows);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices (`offset` $row_offset^)? attr-dict `:` type($table)
    `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Loom_TopKOp : Loom_InferredOp<"topk"> {
  let summary = "the k largest (or smallest) values along an axis, and indices";
  let description = [{
    Results are sorted (largest first, or smallest first when `largest` is
    false); ties pick the lowest index.

    ```mlir
    %v, %i = loom.topk %logits {k = 2 : i64, axis = 1 : i64} : tensor<32x8xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$input, Loom_I64Attr:$k, Loom_I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Loom_Tensor:$values, StaticShapeTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Loom_MoeDispatchOp : Loom_InferredOp<"moe_dispatch"> {
  let summary = "route tokens to per-expert capacity slots";
  let description = [{
    `tokens[T, H]` and the chosen `experts[T, K]` (from `topk` over the router)
    give `[E, C, H]`: each expert receives its tokens, in token order, into
    `capacity` slots; assignments past the capacity are dropped and unused
    slots are zero.

    The grouped form (GShard's) routes `tokens[G, S, H]` with
    `experts[G, S, K]` to `[G, E, C, H]`: each group fills its own capacity
    slots, so groups are independent. Split over a data axis by group, the
    result moves that split from groups to experts with one all-to-all: that
    is expert parallelism.

    ```mlir
    %d = loom.moe_dispatch %x, %idx {num_experts = 8 : i64, capacity = 16 : i64}
        : tensor<64x512xf32>, tensor<64x2xi64>
    %g = loom.moe_dispatch %xs, %idxs {num_experts = 8 : i64, capacity = 4 : i64}
        : tensor<16x64x512xf32>, tensor<16x64x2xi64>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$tokens, Loom_IndexTensor:$experts,
                       Loom_I64Attr:$num_experts, Loom_I64Attr:$capacity);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $tokens `,` $experts attr-dict `:` type($tokens) `,` type($experts)
  }];
}

def Loom_MoeCombineOp : Loom_InferredOp<"moe_combine"> {
  let summary = "gather expert outputs back to tokens, weighted by gates";
  let description = [{
    Inverse of `moe_dispatch` for the same `experts[T, K]`: token `t` receives
    `sum_k gates[t, k] * expert_outputs[experts[t, k], slot(t, k)]`, with
    dropped assignments contributing zero. The grouped form takes
    `[G, E, C, H]` with `experts` and `gates` `[G, S, K]` and gives `[G, S, H]`.

    ```mlir
    %y = loom.moe_combine %eo, %idx, %g
        : tensor<8x16x512xf32>, tensor<64x2xi64>, tensor<64x2xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$expert_outputs,
                       Loom_IndexTensor:$experts, Loom_FloatTensor:$gates);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $expert_outputs `,` $experts `,` $gates attr-dict `:`
    type($expert_outputs) `,` type($experts) `,` type($gates)
  }];
}

//===----------------------------------------------------------------------===//
// Memory movement (written by --loom-place-memory)
//===----------------------------------------------------------------------===//

// Not graph ops: they compute nothing, so they have no cost, and their side
// effects keep CSE from merging two fetches of one weight and passes from
// moving them across the reads they bracket. A fetch is sharded as its
// source (a ZeRO-3 shard fetched from the host stays a shard; its readers'
// annotations gather it after), so partitioning copies each rank's slice.

def Loom_FetchOp : Loom_Op<"fetch", [AllTypesMatch<["source", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<ShardingInterface, [
      "getLoopIteratorTypes", "getReductionLoopIteratorKinds",
      "getIndexingMaps", "getShardingOption", "partition"]>]> {
  let summary = "a weight's copy in device memory, fetched from its tier";
  let description = [{
    Memory placement streams parameters the device cannot hold from host
    memory in chunks (docs/memory-placement.md). `loom.fetch` is where the
    plan issues the copy of one weight of chunk `chunk` into device memory;
    the copy overlaps the ops between it and the first op reading the
    result, which waits for it. `carried` marks a weight whose chunk is
    already on the device when the step starts (left there by the previous
    step's backward or forward in the plan's steady state), so nothing moves.
    The device copy lives until its `loom.release`, or past the forward
    when it has none. `at` is the copy's byte offset in the device's arena
    of the static memory plan, where placement planned one: the chunk's
    copy starts at its first weight's offset, the others follow in order.
    On a CPU, where the tiers are one memory, it is the source itself.

    ```mlir
    %w = loom.weight parameter "layers.3.weight" from "model.bin"[0] : tensor<512x512xf32>
    %d = loom.fetch %w chunk 3 at 1048576 : tensor<512x512xf32>
    %y = loom.matmul %x, %d : tensor<8x512xf32>, tensor<512x512xf32>
    loom.release %d : tensor<512x512xf32>
    ```

    Streamed in ZeRO-3 shards over data parallelism, a fetch copies the
    weight's stored shard (each device uploads its own); the copy keeps the
    shard's layout, and each reader's annotation gathers it just before the
    reader, as for a resident ZeRO-3 weight:

    ```mlir
    %z = shard.sharding @grid split_axes = [[0]] {loom.zero_shard} : !shard.sharding
    %s = shard.shard %w to %z {loom.zero_shard} : tensor<512x512xf32>
    %f = loom.fetch %s chunk 3 : tensor<512x512xf32>
    %d = shard.shard %f to %z {loom.zero_shard} : tensor<512x512xf32>
    %g = shard.shard %d to %r annotate_for_users {loom.zero_shard = 0 : i64} : tensor<512x512xf32>
    %y = loom.matmul %x, %g : tensor<8x512xf32>, tensor<512x512xf32>
    loom.release %d : tensor<512x512xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$source, Loom_I64Attr:$chunk,
                       UnitAttr:$carried, OptionalAttr<Loom_I64Attr>:$offset);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $source `chunk` $chunk (`carried` $carried^)? (`at` $offset^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ReleaseOp : Loom_Op<"release", [MemoryEffects<[MemWrite]>,
    DeclareOpInterfaceMethods<ShardingInterface, [
      "getLoopIteratorTypes", "getReductionLoopIteratorKinds",
      "getIndexingMaps", "getShardingOption", "partition"]>]> {
  let summary = "drops a fetched weight's device copy";
  let description = [{
    The device memory of a `loom.fetch` result is free from here: the plan
    evicts its chunk to make room for another. Nothing is written back (the
    master copy stays in its tier). The value must not be read after it.
  }];
  let arguments = (ins Loom_Tensor:$fetched);
  let assemblyFormat = "$fetched attr-dict `:` type($fetched)";
  let extraClassDeclaration = [{
    /// The fetch whose copy this drops, through the sharding annotations
    /// propagation puts between them.
    FetchOp getFetch();
  }];
  let hasVerifier = 1;
}

def Loom_SpillOp : Loom_Op<"spill", [AllTypesMatch<["activation", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<ShardingInterface, [
      "getLoopIteratorTypes", "getReductionLoopIteratorKinds",
      "getIndexingMaps", "getShardingOption", "partition"]>]> {
  let summary = "an activation's copy in host memory, kept for the backward";
  let description = [{
    Activation offload (ZeRO-Offload's, Elixir's): an activation the
    backward reads goes to host memory after the forward writes it, and
    its device bytes are free for others until `loom.reload` brings it back
    (docs/memory-placement.md). `loom.spill` is where the copy down is
    issued; its result is the host copy, read only by `loom.reload` (or, for
    a gradient sent to the host's optimizer, by the ops of that update,
    marked `loom.on_host`). `at`
    is the copy's byte offset in the host arena of the static memory plan,
    where placement planned one (in a partitioned program, of the device's
    shard: it is sharded as its operand). Written by --loom-autodiff from
    the plan's `loom.offsets` host places. In a pipelined program the places
    are one per micro-batch instead, in the op's `loom.pipeline_offsets`
    (`{device, host}` on a spill, `{device, forward}` on a reload), and
    `at` is absent.

    ```mlir
    %h = loom.spill %a at 4096 : tensor<8x512xf32>
    ...
    %b = loom.reload %h at 65536 : tensor<8x512xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$activation, OptionalAttr<Loom_I64Attr>:$offset);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$activation (`at` $offset^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Loom_ReloadOp : Loom_Op<"reload", [AllTypesMatch<["spilled", "result"]>,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<ShardingInterface, [
      "getLoopIteratorTypes", "getReductionLoopIteratorKinds",
      "getIndexingMaps", "getShardingOption", "partition"]>]> {
  let summary = "a host value's copy back in device memory";
  let description = [{
    Brings a `loom.spill` host copy back to the device for the backward (or
    a re-run) that reads it, or a parameter the host's optimizer updated
    (a result of ops marked `loom.on_host`) back to its device copy; the
    copy overlaps the ops between it and its first reader. `at` is its byte
    offset in the device arena of the static memory plan (the plan's
    `backward` place), where placement planned one.
    On a CPU, where the tiers are one memory, an unplaced spill and reload
    are their operand.
  }];
  let arguments = (ins Loom_Tensor:$spilled, OptionalAttr<Loom_I64Attr>:$offset);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$spilled (`at` $offset^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
