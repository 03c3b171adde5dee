// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer global-batch=32 schedule=gpipe table=none report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=train global-batch=32 schedule=1f1b table=none report=%t.train.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=TRAIN < %t.train.json

// Two stages on pp=2 (neighbours on the unit cluster's 10 GB/s link), four
// micro-batches of 8 (global batch 32 over an IR batch of 8). Each stage is
// one 8x64 * 64x64 matmul: 20480 bytes -> 0.2048 us. Stage 0 sends its
// 8x64 f32 result (2048 bytes) to stage 1: 0.2048 us.
// Inference makespan = (m + p - 1) * F + send = 5 * 0.2048 + 0.2048 = 1.2288 us.
// Training, 1F1B: stage 1 keeps one micro-batch's input (its matmul reads
// it for dW... and its own backward needs it) and its result y, which the
// step returns after the backward: 4096 bytes; stage 0 keeps its input x
// for two micro-batches in flight (p - 0 = 2).

// CHECK: step_time_s = 1.228800e-06

// JSON: "micro_batches": 4,
// JSON: "collectives": {
// JSON-NEXT: "send_recv": {
// JSON-NEXT:   "bytes": 8192,
// JSON-NEXT:   "count": 4,
// JSON: "pipeline": {
// JSON-NEXT: "bubble_fraction":
// JSON-NEXT: "devices": 2,
// JSON-NEXT: "makespan_s": {{1.2288[0-9]*e-06|1.22879[0-9]*e-06}},
// JSON-NEXT: "schedule": "gpipe",
// JSON-NEXT: "stages": 2,
// JSON:      "send_forward_s": {{2.048[0-9]*e-07|2.0479[0-9]*e-07}},

// TRAIN:      "devices": [
// TRAIN:          "activations": 4096,
// TRAIN:        "micro_batches_in_flight": 2,
// TRAIN:          "activations": 4096,
// TRAIN:        "micro_batches_in_flight": 1,

shard.grid @grid(shape = 2) {loom.axis_names = ["pp"], loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w1 = loom.weight parameter "w1" from "w.bin"[0] : tensor<64x64xf32>
  %w2 = loom.weight parameter "w2" from "w.bin"[16384] : tensor<64x64xf32>
  %h = loom.matmul %x, %w1 {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %y = loom.matmul %h, %w2 {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %y : tensor<8x64xf32>
}
