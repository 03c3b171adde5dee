// RUN: loom-opt %s --split-input-file --loom-split-stages | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-split-stages --loom-weights-to-arguments --loom-partition --loom-stage-transfers | FileCheck %s --check-prefix=XFER

// Three stages: a skip connection from stage 0 to stage 2, a weight used on
// two stages (cloned, not sent), an input read by stage 1 only.
shard.grid @g(shape = 3) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4x8xf32> {loom.name = "x"}, %bias: tensor<4x8xf32> {loom.name = "bias"})
    -> (tensor<4x8xf32> {loom.name = "y"}) {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8x8xf32>
  %a = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %b = loom.binary add %a, %bias {loom.stage = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  %c = loom.matmul %b, %w {loom.stage = 2 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %y = loom.binary add %c, %a {loom.stage = 2 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {loom.name = "x"}, %{{.*}}: tensor<4x8xf32> {loom.name = "bias"})
// CHECK-SAME: -> (tensor<4x8xf32> {loom.send_to = array<i64: 1, 2>, loom.tag = 0 : i64})
// CHECK-SAME: attributes {loom.pipeline_stage = 0 : i64}
// CHECK: %[[W:.*]] = loom.weight parameter "w"
// CHECK: %[[A:.*]] = loom.matmul %[[X]], %[[W]]
// CHECK-NOT: loom.stage
// A value nothing gave a sharding is sent replicated.
// CHECK: %[[R:.*]] = shard.sharding @g split_axes = {{\[\[\]\]}}
// CHECK: %[[AS:.*]] = shard.shard %[[A]] to %[[R]] :
// CHECK: return %[[AS]]
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: %[[BIAS:[^:]*]]: tensor<4x8xf32> {loom.name = "bias"}, %[[A1:.*]]: tensor<4x8xf32> {loom.recv_from = 0 : i64, loom.tag = 0 : i64})
// CHECK-SAME: -> (tensor<4x8xf32> {loom.send_to = array<i64: 2>, loom.tag = 1 : i64})
// The receiving side keeps the sender's annotation.
// CHECK: %[[A1S:.*]] = shard.shard %[[A1]] to
// CHECK: loom.binary add %[[A1S]], %[[BIAS]]
// CHECK-LABEL: func.func @main_stage2(
// CHECK-SAME: {loom.recv_from = 0 : i64, loom.tag = 0 : i64}
// CHECK-SAME: {loom.recv_from = 1 : i64, loom.tag = 1 : i64}
// CHECK-SAME: -> (tensor<4x8xf32> {loom.name = "y"})
// CHECK: loom.weight parameter "w"
// CHECK: loom.matmul
// CHECK: loom.binary add
// CHECK-NOT: func.func @main(

// Stage 0 sends to 1 then 2; stage 2 receives from 0 then 1.
// XFER-LABEL: func.func @main_stage0(
// XFER: loom.matmul
// XFER: shard.send %{{.*}} on @g grid_axes = [0] destination = [1] {loom.tag = 0 : i64}
// XFER: shard.send %{{.*}} on @g grid_axes = [0] destination = [2] {loom.tag = 0 : i64}
// XFER-NEXT: return
// XFER-LABEL: func.func @main_stage1(
// XFER: shard.recv %{{.*}} on @g grid_axes = [0] source = [0] {loom.tag = 0 : i64}
// XFER: loom.binary add
// XFER: shard.send %{{.*}} on @g grid_axes = [0] destination = [2] {loom.tag = 1 : i64}
// XFER-LABEL: func.func @main_stage2(
// XFER: shard.recv %{{.*}} source = [0] {loom.tag = 0 : i64}
// XFER-NEXT: tensor.empty
// XFER-NEXT: shard.recv %{{.*}} source = [1] {loom.tag = 1 : i64}

// -----

// Without loom.stage the pass leaves the module alone.
// CHECK-LABEL: func.func @main(
// XFER-LABEL: func.func @main(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = loom.unary relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
