// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json annotate-ops table=none" | FileCheck %s
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json overlap-grad-sync=false table=none" | FileCheck %s --check-prefix=NOOVERLAP
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=1 table=none report=%t.json" | FileCheck %s --check-prefix=ZERO1
// RUN: FileCheck %s --check-prefix=ZERO1-JSON < %t.json

// Data parallelism over dp=4 (one node of the unit cluster: 10 GB/s, no
// latency; 1 TFLOP/s; 100 GB/s memory). Per device, batch 8 of 32:
//   forward 8x64 * 64x64: 20480 bytes -> 0.2048 us;
//   backward: only dW (x is data): 0.4096 us;
//   the weight's gradient is partial over dp (the batch loop is split and
//   the weight does not index it): a ring all-reduce of 16384 bytes over 4,
//   2 * 3/4 * 16384 / 10e9 = 2.4576 us, once per step; 0.4096 us of it hides
//   behind the backward, 2.048 us is exposed;
//   Adam: 4096 parameters * 28 bytes / 100 GB/s = 1.14688 us.
//   step = 0.2048 + 0.4096 + 2.048 + 1.14688 = 3.80928 us.
// Without overlap the whole 2.4576 us is exposed: 4.21888 us.
// ZeRO-1: reduce-scatter + all-gather (1.2288 us each, the same 2.4576 us)
// and a quarter of the optimizer step and state: 0.28672 us, 8192 bytes.
//   step = 0.2048 + 0.4096 + 2.048 + 0.28672 = 2.94912 us.

// CHECK: step_time_s = {{3.80928[0-9]*(e-06|E-6)|3.80927[0-9]*(e-06|E-6)}}
// CHECK: loom.matmul {{.*}}grad_sync_us = {{2.457600e\+00|2.4576[0-9]*|2.45759[0-9]*}} : f64
// NOOVERLAP: step_time_s = {{4.21888[0-9]*(e-06|E-6)|4.21887[0-9]*(e-06|E-6)}}
// ZERO1: step_time_s = {{2.94912[0-9]*(e-06|E-6)|2.94911[0-9]*(e-06|E-6)}}
// ZERO1-JSON: "data_parallel": 4,
// ZERO1-JSON: "collectives": {
// ZERO1-JSON-NEXT: "all_gather": {
// ZERO1-JSON-NEXT:   "bytes": 16384,
// ZERO1-JSON-NEXT:   "count": 1,
// ZERO1-JSON:      "reduce_scatter": {
// ZERO1-JSON-NEXT:   "bytes": 16384,
// ZERO1-JSON-NEXT:   "count": 1,
// ZERO1-JSON:      "optimizer": 8192,

shard.grid @grid(shape = 4) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<32x64xf32>
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %y = loom.matmul %xs, %w : tensor<32x64xf32>, tensor<64x64xf32>
  return %y : tensor<32x64xf32>
}
