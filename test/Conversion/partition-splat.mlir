// RUN: loom-opt %s --loom-partition | FileCheck %s

// A splat constant annotated in shards (a ZeRO-sharded gradient sum written
// back as zeros, --loom-optimizer-step) is the same splat on every device,
// at the local shape; a constant of other values stays whole and is sliced.
// CHECK-LABEL: func.func @main(
// CHECK: %[[WHOLE:.+]] = loom.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00
// CHECK-SAME: tensor<4x4xf32>
// CHECK: loom.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK: shard.all_slice %[[WHOLE]] {{.*}} -> tensor<2x4xf32>
shard.grid @g(shape = 2)
func.func @main() -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %zero = loom.constant dense<0.0> : tensor<4x4xf32>
  %z = shard.shard %zero to %s : tensor<4x4xf32>
  %r = loom.constant dense<[[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]]> : tensor<4x4xf32>
  %rr = shard.shard %r to %s : tensor<4x4xf32>
  %zz = shard.shard %z to %s annotate_for_users : tensor<4x4xf32>
  %rrr = shard.shard %rr to %s annotate_for_users : tensor<4x4xf32>
  return %zz, %rrr : tensor<4x4xf32>, tensor<4x4xf32>
}
