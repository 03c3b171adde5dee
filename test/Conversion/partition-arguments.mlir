// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-partition | FileCheck %s

// Upstream shard-partition (22.1) reads each tensor argument's first user as
// its arrival annotation and crashed on one that was not a shard.shard.
// loom-partition annotates such an argument replicated.

// A grid, but nothing in the function has a sharding: a pipeline axis of one
// device, whose stage function receives nothing from another stage.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<4x8xf32> {loom.sharding = {grid = @g, shape = array<i64: 4, 8>, split = {{\[\[}}], []]}}
// CHECK-SAME: %arg1: tensor<2xf32> {loom.sharding = {grid = @g, shape = array<i64: 2>, split = {{\[\[}}]]}}
// CHECK-NEXT: loom.unary gelu %arg0
shard.grid @g(shape = 1)
func.func @main(%x: tensor<4x8xf32>, %unused: tensor<2xf32>) -> tensor<4x8xf32> {
  %y = loom.unary gelu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A replicated buffer read only by loom.fetch (a causal mask placement
// streams), whose copy propagation does not look through: it arrives whole
// and its reader slices the copy.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg1: tensor<4x4xi1> {loom.sharding = {grid = @g, shape = array<i64: 4, 4>, split = {{\[\[}}], []]}}
// CHECK: %[[M:.+]] = loom.fetch %arg1 chunk 0 at 0 : tensor<4x4xi1>
// CHECK: %[[S:.+]] = shard.all_slice %[[M]] on @g grid_axes = [0] slice_axis = 0 : tensor<4x4xi1> -> tensor<2x4xi1>
// CHECK: loom.where %[[S]]
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x4xf32>, %m: tensor<4x4xi1>) -> tensor<4x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xa = shard.shard %x to %s : tensor<4x4xf32>
  %mf = loom.fetch %m chunk 0 at 0 : tensor<4x4xi1>
  %y = loom.binary add %xa, %xa : tensor<4x4xf32>, tensor<4x4xf32>
  %z = loom.where %mf, %y, %xa : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}

// -----

// Read both through an annotation and directly: no one layout to give it.
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x4xf32>, %m: tensor<4x4xi1>) -> tensor<4x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xa = shard.shard %x to %s : tensor<4x4xf32>
  %ma = shard.shard %m to %s annotate_for_users : tensor<4x4xi1>
  // expected-error @+1 {{reads argument #1 of @main directly while other readers read it through a sharding annotation}}
  %mf = loom.fetch %m chunk 0 at 0 : tensor<4x4xi1>
  %y = loom.where %ma, %xa, %xa : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>
  %z = loom.where %mf, %y, %xa : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>
  return %z : tensor<4x4xf32>
}
