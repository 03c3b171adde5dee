// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json annotate-ops table=none" | FileCheck %s
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json overlap-grad-sync=false table=none" | FileCheck %s --check-prefix=NOOVERLAP
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=1 table=none report=%t.json" | FileCheck %s --check-prefix=ZERO1
// RUN: FileCheck %s --check-prefix=ZERO1-JSON < %t.json
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=1 global-batch=128 table=none" | FileCheck %s --check-prefix=ZERO1-MICRO
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=2 global-batch=128 table=none report=%t.zero2.json" | FileCheck %s --check-prefix=ZERO2-MICRO
// RUN: FileCheck %s --check-prefix=ZERO2-MICRO-JSON < %t.zero2.json
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=2 global-batch=128 overlap-grad-sync=false table=none" | FileCheck %s --check-prefix=ZERO2-MICRO-NOOVERLAP
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=3 global-batch=128 table=none" | FileCheck %s --check-prefix=ZERO3-MICRO

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
// Four micro-batches (global batch 128): ZeRO-1 sums whole gradients and
// synchronises once a step, as above:
//   step = 4 * 0.6144 + 2.048 + 0.28672 = 4.79232 us.
// ZeRO-2 keeps a shard of each micro-batch's gradient: four reduce-scatters
// (1.2288 us each) and one all-gather. The first three micro-batches'
// backwards hide 0.4096 us of their own (0.8192 us exposed each), the last
// one's of its own and the all-gather (2.048 us exposed):
//   step = 2.4576 + 3 * 0.8192 + 2.048 + 0.28672 = 7.24992 us.
// Without overlap all 6.144 us of it is exposed: 8.88832 us.
// ZeRO-3 also gathers the weight for each micro-batch's forward and
// backward, about one micro-batch's synchronisation (2.4576 us), of which
// 0.6144 us hides behind that micro-batch's compute: 4 * (0.6144 + 1.8432)
// + 3 * 0.8192 + 2.048 + 0.28672 = 14.62272 us.

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
// ZERO1-MICRO: step_time_s = {{4.79232[0-9]*(e-06|E-6)|4.79231[0-9]*(e-06|E-6)}}
// ZERO2-MICRO: step_time_s = {{7.24992[0-9]*(e-06|E-6)|7.24991[0-9]*(e-06|E-6)}}
// ZERO2-MICRO-NOOVERLAP: step_time_s = {{8.88832[0-9]*(e-06|E-6)|8.88831[0-9]*(e-06|E-6)}}
// ZERO3-MICRO: step_time_s = {{14.62272[0-9]*(e-06|E-6)|14.62271[0-9]*(e-06|E-6)|1.462272[0-9]*(e-05|E-5)|1.462271[0-9]*(e-05|E-5)}}
// ZERO2-MICRO-JSON: "reduce_scatter": {
// ZERO2-MICRO-JSON-NEXT:   "bytes": 65536,
// ZERO2-MICRO-JSON-NEXT:   "count": 4,

shard.grid @grid(shape = 4) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<32x64xf32>
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %y = loom.matmul %xs, %w : tensor<32x64xf32>, tensor<64x64xf32>
  return %y : tensor<32x64xf32>
}
