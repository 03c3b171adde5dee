// Bad plans and options: one clear error naming what is wrong, non-zero
// exit, and no report file left behind.
// RUN: rm -f %t.json
// RUN: not loom-opt %s -split-input-file --loom-estimate="cluster=%S/Inputs/unit-cluster.json table=none report=%t.json" 2>&1 | FileCheck %s
// RUN: not test -e %t.json
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=no-such-cluster" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=fly" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json precision=fp4" 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json global-batch=12" 2>&1 | FileCheck %s --check-prefix=GBATCH
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json micro-batch=4" 2>&1 | FileCheck %s --check-prefix=MBATCH
// RUN: not loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json calibration=%t.missing" 2>&1 | FileCheck %s --check-prefix=CALIB

// CLUSTER: unknown cluster 'no-such-cluster'
// MODE: mode must be train or infer, not 'fly'
// SCHED: unknown schedule 'zigzag'
// PREC: unknown precision 'fp4'
// GBATCH: global-batch=12 is not a multiple of micro-batch x data-parallel = 8
// MBATCH: micro-batch=4 but the IR's batch is 8 over 1 data-parallel devices
// CALIB: error: loom-estimate: {{.*}}missing

// CHECK: error: loom-estimate: ops are assigned to 2 stages but the grid has no loom.pipeline_axis
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %h = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %y = loom.matmul %h, %w {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// The unit cluster has 8 devices.
// CHECK: error: loom-estimate: grid {{.*}}16{{.*}} 8
shard.grid @grid(shape = 4x4)
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  return %x : tensor<8x64xf32>
}

// -----

// CHECK: error: loom-estimate: 3 stages do not divide evenly over 2 pipeline devices
shard.grid @grid(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %a = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %b = loom.matmul %a, %w {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %c = loom.matmul %b, %w {loom.stage = 2 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %c : tensor<8x64xf32>
}

// -----

// CHECK: error: loom-estimate: 4 stages on 2 pipeline devices need schedule=interleaved
shard.grid @grid(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %a = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %b = loom.matmul %a, %w {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %c = loom.matmul %b, %w {loom.stage = 2 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %d = loom.matmul %c, %w {loom.stage = 3 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %d : tensor<8x64xf32>
}

// -----

// CHECK: error: loom-estimate: loom.axis_names has 1 names for 2 axes
shard.grid @grid(shape = 2x2) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  return %x : tensor<8x64xf32>
}

// -----

// CHECK: error: loom-estimate: the first input must be a tensor with a static batch dimension
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// CHECK: error: loom-estimate: the first input's batch dimension is 0; nothing to estimate
func.func @main(%x: tensor<0x64xf32>) -> tensor<0x64xf32> {
  return %x : tensor<0x64xf32>
}

// -----

shard.grid @grid(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %h = loom.matmul %x, %w {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  // CHECK: error: loom-estimate: at loom.stage 0 reads a value computed at the later stage 1
  %y = loom.matmul %h, %w {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

shard.grid @grid(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x64xf32>
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  // CHECK: error: loom-estimate: a tensor is split on the pipeline axis 0
  %h = loom.matmul %xs, %w {loom.stage = 0 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  %y = loom.matmul %h, %w {loom.stage = 1 : i64} : tensor<8x64xf32>, tensor<64x64xf32>
  return %y : tensor<8x64xf32>
}
