// RUN: loom-opt %s --loom-autodiff -o %t.step.mlir
// RUN: FileCheck %s < %t.step.mlir
// RUN: not loom-opt %t.step.mlir --loom-estimate 2>&1 | FileCheck %s --check-prefix=ESTIMATE
// RUN: not loom-opt %t.step.mlir --loom-plan="cluster=dgx-a100-80g devices=2" 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: not loom-opt %t.step.mlir --loom-autodiff 2>&1 | FileCheck %s --check-prefix=AGAIN

// A data-parallel plan whose integer result comes first: the float result's
// cotangent (of result 1) takes the layout propagation gives that result,
// split along the batch, so the backward starts where the forward ended.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<8x16xf32>, %[[G:.+]]: tensor<8x32xf32> {loom.cotangent_of = 1 : i64, loom.name = "y.grad"})
// CHECK: %[[S:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: %[[GS:.+]] = shard.shard %[[G]] to %[[S]] annotate_for_users : tensor<8x32xf32>
// CHECK: loom.matmul %{{.+}}, %[[GS]] : tensor<16x8xf32>, tensor<8x32xf32>
shard.grid @grid(shape = 2) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<8x16xf32>) -> (tensor<8xi64>, tensor<8x32xf32> {loom.name = "y"}) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<8x16xf32>
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<16x32xf32>
  %y = loom.matmul %xs, %w : tensor<8x16xf32>, tensor<16x32xf32>
  %i = loom.reduce argmax %y {axes = array<i64: 1>, keep_dims = false} : tensor<8x32xf32>
  return %i, %y : tensor<8xi64>, tensor<8x32xf32>
}

// The planners price a forward's backward themselves and refuse a step.
// ESTIMATE: error: loom-estimate: 'main' already holds its backward (loom-autodiff); plan the forward, and differentiate the planned module
// PLAN: error: loom-plan: 'main' already holds its backward (loom-autodiff); plan the forward, and differentiate the planned module
// AGAIN: error: loom-autodiff: 'main' already returns its gradients
