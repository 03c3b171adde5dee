// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer annotate-ops table=none report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE

// Unannotated IR is one device. The unit cluster: 1 TFLOP/s fp32, 100 GB/s
// memory, efficiency 1, no kernel overhead.
//   matmul 8x64 * 64x32: 2*8*32*64 = 32768 FLOPs;
//   bytes (8*64 + 64*32 + 8*32) * 4 = 11264;
//   time = max(32768 / 1e12, 11264 / 1e11) = 0.11264 us (memory-bound).
//   relu on 8x32: 256 FLOPs, 2 * 1024 bytes -> 0.02048 us.

// CHECK: module attributes {loom.estimate = {{.*}}devices = 1 : i64{{.*}}step_time_s = 1.331200e-07 : f64
// CHECK: func.func @main
// CHECK: loom.matmul {{.*}}loom.cost = {bytes = 1.126400e+04 : f64, class = "matmul", comm_us = 0.000000e+00 : f64, flops = 3.276800e+04 : f64, time_us = {{1.126400e-01|0.11263[0-9]*|0.11264[0-9]*}} : f64}
// CHECK: loom.unary relu {{.*}}loom.cost = {bytes = 2.048000e+03 : f64, class = "elementwise", comm_us = 0.000000e+00 : f64, flops = 2.560000e+02 : f64, time_us = {{2.048000e-02|0.02047[0-9]*|0.02048[0-9]*}} : f64}

// JSON: "mode": "infer"
// JSON: "notes": [
// JSON-NEXT: "no shard.grid: estimated as a single device"
// JSON: "step_time_s": {{1.3312[0-9]*e-07|1.33119[0-9]*e-07}}

// TABLE: loom-estimate: inference step on {{.*}}unit-cluster.json (8 x unit-device)
// TABLE: grid        single=1  (1 devices)
// TABLE: matmul             1    3.277e-05    0.01126  0.0001126
// TABLE: step time              1.331e-07 s
module {
  func.func @main(%x: tensor<8x64xf32>) -> tensor<8x32xf32> {
    %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x32xf32>
    %y = loom.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32>
    %r = loom.unary relu %y : tensor<8x32xf32>
    return %r : tensor<8x32xf32>
  }
}
