// RUN: loom-opt %s --loom-weights-to-arguments --loom-partition | FileCheck %s
// A collective over grid axes of one device each is its operand: the
// contraction split over `tp` (size 1, as in a Megatron plan without
// tensor parallelism) needs no all-reduce, and the columns split over it
// no all-gather; the outputs' gathers over `dp` stay.

shard.grid @g(shape = 2x1) {loom.axis_names = ["dp", "tp"]}
func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<16x32xf32>
  %v = loom.weight parameter "v" from "w.bin"[2048] : tensor<16x32xf32>
  %sx = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %sx annotate_for_users : tensor<8x16xf32>
  %sw = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %ws = shard.shard %w to %sw annotate_for_users : tensor<16x32xf32>
  %y = loom.matmul %xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>
  %sv = shard.sharding @g split_axes = [[], [1]] : !shard.sharding
  %vs = shard.shard %v to %sv annotate_for_users : tensor<16x32xf32>
  %sx2 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs2 = shard.shard %xs to %sx2 annotate_for_users : tensor<8x16xf32>
  %z = loom.matmul %xs2, %vs : tensor<8x16xf32>, tensor<16x32xf32>
  return %y, %z : tensor<8x32xf32>, tensor<8x32xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-NOT: grid_axes = [1]
// CHECK: %[[Y:.*]] = loom.matmul
// CHECK: shard.all_gather %[[Y]] on @g grid_axes = [0] gather_axis = 0
// CHECK: %[[Z:.*]] = loom.matmul
// CHECK-NEXT: shard.all_gather %[[Z]] on @g grid_axes = [0] gather_axis = 0
// CHECK-NOT: grid_axes = [1]
