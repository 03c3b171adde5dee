// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer annotate-ops table=none" | FileCheck %s --check-prefix=INFER
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=train annotate-ops table=none" --loom-report=%t.json | FileCheck %s --check-prefix=TRAIN
// RUN: FileCheck %s --check-prefix=JSON < %t.json

// A Megatron MLP on tp=4 inside one node of the unit cluster (10 GB/s per
// device, no latency; 1 TFLOP/s, 100 GB/s memory). Per device:
//   fc1 (column-parallel) 8x64 * 64x64: 65536 FLOPs, (2048 + 16384 + 2048)
//     bytes = 20480 -> 0.2048 us, memory-bound.
//   gelu on 8x64: 512 FLOPs, 4096 bytes -> 0.04096 us.
//   fc2 (row-parallel) 8x64 * 64x64: 0.2048 us, then an all-reduce of the
//     8x64 f32 result (2048 bytes) over 4 devices, ring:
//     2 * 3/4 * 2048 / 10e9 = 0.3072 us.
//   forward = 0.75776 us.
// Training adds backward: fc1 needs only dW1 (its input is data): 65536
// FLOPs, 2 * 20480 bytes -> 0.4096 us; gelu 0.08192 us; fc2 needs dG and
// dW2: 131072 FLOPs, 40960 bytes -> 0.4096 us; no collectives (x needs no
// gradient, and no loop a weight does not index is split). Adam: 8192
// parameters per device * 28 bytes / 100 GB/s = 2.29376 us.
//   step = 0.75776 + (0.4096 + 0.08192 + 0.4096) + 2.29376 = 3.95264 us.
// Memory per device (f32): weights 2 * 16384, gradients the same, Adam
// moments 8 bytes per parameter = 65536; activations kept for backward:
// x, h and g, and the result y (the step returns it after the backward),
// 2048 bytes each = 8192; largest backward working set (fc1's operands and
// result) 20480; communication buffer 2048. Total 161792.

shard.grid @grid(shape = 4) {loom.axis_names = ["tp"]}

// INFER: loom.estimate = {{.*}}devices = 4 : i64{{.*}}step_time_s = 7.577600e-07 : f64
// INFER: loom.matmul {{.*}}loom.cost = {bytes = 2.048000e+04 : f64, class = "matmul", comm_us = 0.000000e+00 : f64, flops = 6.553600e+04 : f64, time_us = {{2.048000e-01|0.2048[0-9]*}} : f64}
// INFER: loom.unary gelu {{.*}}time_us = {{4.096000e-02|0.04095[0-9]*|0.04096[0-9]*}} : f64
// INFER: loom.matmul {{.*}}loom.cost = {bytes = 2.048000e+04 : f64, class = "matmul", comm_us = {{3.072000e-01|0.3072[0-9]*}} : f64, flops = 6.553600e+04 : f64, time_us = {{2.048000e-01|0.2048[0-9]*}} : f64}

// TRAIN: loom.estimate = {{.*}}step_time_s = 3.952640e-06
// TRAIN: loom.matmul {{.*}}bwd_comm_us = 0.000000e+00 : f64, bwd_flops = 6.553600e+04 : f64, bwd_time_us = {{4.096000e-01|0.4096[0-9]*}} : f64
// TRAIN: loom.unary gelu {{.*}}bwd_flops = 1.024000e+03 : f64, bwd_time_us = {{8.192000e-02|0.08191[0-9]*|0.08192[0-9]*}} : f64
// TRAIN: loom.matmul {{.*}}bwd_comm_us = 0.000000e+00 : f64, bwd_flops = 1.310720e+05 : f64, bwd_time_us = {{4.096000e-01|0.4096[0-9]*}} : f64

// JSON:      "collectives": {
// JSON-NEXT:   "all_reduce": {
// JSON-NEXT:     "bytes": 2048,
// JSON-NEXT:     "count": 1,
// JSON:      "devices": [
// JSON:          "memory": {
// JSON-NEXT:       "activations": 8192,
// JSON-NEXT:       "comm_buffers": 2048,
// JSON-NEXT:       "gradients": 32768,
// JSON-NEXT:       "optimizer": 65536,
// JSON-NEXT:       "temporaries": 20480,
// JSON-NEXT:       "total": 161792,
// JSON-NEXT:       "weights": 32768
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w1 = loom.weight parameter "fc1" from "w.bin"[0] : tensor<64x256xf32>
  %w2 = loom.weight parameter "fc2" from "w.bin"[65536] : tensor<256x64xf32>
  %s1 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 annotate_for_users : tensor<64x256xf32>
  %h = loom.matmul %x, %w1s : tensor<8x64xf32>, tensor<64x256xf32>
  %g = loom.unary gelu %h : tensor<8x256xf32>
  %s2 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 annotate_for_users : tensor<256x64xf32>
  %y = loom.matmul %g, %w2s : tensor<8x256xf32>, tensor<256x64xf32>
  return %y : tensor<8x64xf32>
}
