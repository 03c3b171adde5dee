// Choices already in the input pin the plan: the search keeps a shard.grid's
// axes, every shard.shard layout and every loom.stage, and searches the rest.

// A partial pin: one weight of a residual MLP pinned column-split (dim 1)
// over the only axis of an 8-device grid; the other weights are searched.
// RUN: loom-opt %s --loom-plan="cluster=dgx-a100-80g mode=train global-batch=16 table=%t.txt" -o %t.mlir
// RUN: FileCheck %s --check-prefix=MLP < %t.mlir
// RUN: FileCheck %s --check-prefix=MLPTEXT < %t.txt
// RUN: loom-opt %t.mlir --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition,canonicalize))' -o /dev/null

// Megatron-LM's hand plan for a 4-layer GPT on dp=2 x pp=2 x tp=2 (every
// weight annotated, every op staged): the grid, the weights' layouts (the
// attention output projection stays row-parallel) and the stages come back
// unchanged; unannotated activations are searched.
// RUN: %python %loom_src/bench/gpt_plan.py --layers 4 --hidden 512 --heads 8 --seq 128 --vocab 1024 --micro-batch 1 --dp 2 --tp 2 --pp 2 -o %t.gpt.mlir
// RUN: loom-opt %t.gpt.mlir --loom-plan="cluster=dgx-a100-80g mode=train global-batch=16 table=%t.gpt.txt" -o %t.gpt.planned.mlir
// RUN: FileCheck %s --check-prefix=GPT < %t.gpt.planned.mlir
// RUN: FileCheck %s --check-prefix=GPTTEXT < %t.gpt.txt
// RUN: loom-opt %t.gpt.planned.mlir --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition,canonicalize))' -o /dev/null
// The pinned grid's own axis names stay, in the report and on the planned
// grid (the pipeline axis moves last); which axes are data parallel still
// follows what they split.
// RUN: sed 's/loom.axis_names = \["dp", "pp", "tp"\]/loom.axis_names = ["data", "stage", "model"]/' %t.gpt.mlir > %t.named.mlir
// RUN: loom-opt %t.named.mlir --loom-plan="cluster=dgx-a100-80g mode=train global-batch=16 table=%t.named.txt" -o %t.named.planned.mlir
// RUN: FileCheck %s --check-prefix=NAMED < %t.named.txt
// RUN: FileCheck %s --check-prefix=NAMED-IR < %t.named.planned.mlir
// NAMED: plan:   grid data=2xmodel=2xstage=2,
// NAMED: loom.matmul at {{.*}}: result [data, -, model] weight [-, model]
// NAMED-IR: shard.grid @plan(shape = 2x2x2) {loom.axis_names = ["data", "model", "stage"], loom.data_axes = [0],

// GShard's hand plan for an 8-layer MoE on dp=2 x ep=4: tokens group-split
// over both axes as dispatched, expert-split for the expert matmuls, and
// back. [[dp, ep]] -> [[dp], [ep]] is one all-to-all over ep that upstream
// shard-partition does not do in one step; the plan spells it as the two
// steps it does (drop ep, split dim 1 on it), upstream partitions that, and
// loom-partition fuses it back into the all-to-all: 2 per MoE layer.
// RUN: %python %loom_src/bench/model_ir.py --kind moe --layers 8 --moe-every 2 --hidden 1024 --heads 16 --ffn 4096 --seq 256 --vocab 8192 --batch 16 --experts 16 --top-k 2 --dtype bf16 -o %t.moe.mlir
// RUN: %python %loom_src/test/Integration/Inputs/annotate_plans.py %t.moe.mlir -o %t.moe.d --name moe dp2xep4
// RUN: loom-opt %t.moe.d/moe-dp2xep4.mlir --loom-plan="cluster=dgx-a100-80g mode=train global-batch=16 table=none" -o %t.moe.planned.mlir
// RUN: FileCheck %s --check-prefix=MOE < %t.moe.planned.mlir
// RUN: loom-opt %t.moe.planned.mlir --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition,canonicalize))' -o /dev/null
// RUN: loom-opt %t.moe.planned.mlir --pass-pipeline="builtin.module(loom-partition)" -o %t.moe.part.mlir
// RUN: FileCheck %s --check-prefix=MOE-PART < %t.moe.part.mlir

// MLP: shard.grid @plan(shape = 8)
// MLP: %[[COL:.*]] = shard.sharding @plan split_axes = {{\[\[\], \[0\]\]}}
// MLP: loom.weight parameter "layers.1.weight"
// MLP-NEXT: shard.shard %{{.*}} to %[[COL]] : tensor<64x64xf32>
// Layers 0 and 1 fold into one block: copies share one plan, so the pin on
// layer 1 holds for layer 0 too.
// MLPTEXT: plan:   grid tp=8,
// MLPTEXT: block 0: 2 copies x 2 ops
// MLPTEXT-NEXT: loom.matmul at plan-pins.mlir:{{[0-9]+}}: result [-, tp] weight [-, tp]

// MOE: shard.grid @plan(shape = 2x4) {loom.axis_names = ["dp", "ep"]
// MOE-DAG: %[[GROUPS:.*]] = shard.sharding @plan split_axes = {{\[\[0, 1\]\]}}
// MOE-DAG: %[[DP:.*]] = shard.sharding @plan split_axes = {{\[\[0\]\]}}
// MOE-DAG: %[[EXPERTS:.*]] = shard.sharding @plan split_axes = {{\[\[0\], \[1\]\]}}
// MOE: loom.moe_dispatch
// MOE-NEXT: shard.shard %{{.*}} to %[[GROUPS]] : tensor<16x16x40x1024xbf16>
// MOE: %[[STEP:.*]] = shard.shard %{{.*}} to %[[DP]] annotate_for_users : tensor<16x16x40x1024xbf16>
// MOE-NEXT: %[[READ:.*]] = shard.shard %[[STEP]] to %[[EXPERTS]] annotate_for_users
// MOE: loom.matmul %[[READ]],
// MOE-PART-COUNT-8: shard.all_to_all {{.*}} grid_axes = [1]
// MOE-PART-NOT: shard.all_slice {{.*}} : tensor<{{.*}}x40x1024xbf16>

// GPT: shard.grid @plan(shape = 2x2x2) {loom.axis_names = ["dp", "tp", "pp"]
// GPT-SAME: loom.pipeline_axis = 2
// GPT: %[[ROW:.*]] = shard.sharding @plan split_axes = {{\[\[1\]\]}}
// GPT: loom.weight parameter "layers.1.attention.dense.weight" {{.*}} {loom.stage = 0 : i64}
// GPT-NEXT: shard.shard %{{.*}} to %[[ROW]]
// GPT: loom.weight parameter "layers.2.attention.dense.weight" {{.*}} {loom.stage = 1 : i64}
// GPT-NEXT: shard.shard %{{.*}} to %[[ROW]]
// GPTTEXT: plan:   grid dp=2xtp=2xpp=2
// GPTTEXT: stage 0 (device 0): 4 units, loom.embedding .. block 0 copy 1
// GPTTEXT: stage 1 (device 1): 5 units, block 0 copy 2 .. loom.matmul

shard.grid @g(shape = 8)
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %w1 = loom.weight parameter "layers.0.weight" from "model.bin"[0] : tensor<64x64xf32>
  %v2 = loom.matmul %x, %w1 : tensor<16x64xf32>, tensor<64x64xf32>
  %v3 = loom.unary gelu %v2 : tensor<16x64xf32>
  %w4 = loom.weight parameter "layers.1.weight" from "model.bin"[16384] : tensor<64x64xf32>
  %col = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %w4s = shard.shard %w4 to %col annotate_for_users : tensor<64x64xf32>
  %v5 = loom.matmul %v3, %w4s : tensor<16x64xf32>, tensor<64x64xf32>
  %v6 = loom.unary gelu %v5 : tensor<16x64xf32>
  %w7 = loom.weight parameter "layers.2.weight" from "model.bin"[32768] : tensor<64x64xf32>
  %v8 = loom.matmul %v6, %w7 : tensor<16x64xf32>, tensor<64x64xf32>
  return %v8 : tensor<16x64xf32>
}
