// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition,canonicalize))' \
// RUN:   | FileCheck %s

// Upstream sharding propagation and shard-partition run on loom ops through
// their ShardingInterface iteration spaces.

// A Megatron MLP: the first weight split by columns, the second by rows. The
// column-parallel matmul and gelu run locally; the row-parallel matmul's
// contraction is split, so it ends in exactly one all-reduce.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func @megatron_mlp
func.func @megatron_mlp(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: %[[W1:.+]] = loom.weight parameter "fc1" from "w.bin"[0] : tensor<16x32xf32>
  %w1 = loom.weight parameter "fc1" from "w.bin"[0] : tensor<16x64xf32>
  // CHECK: %[[W2:.+]] = loom.weight parameter "fc2" from "w.bin"[4096] : tensor<32x16xf32>
  %w2 = loom.weight parameter "fc2" from "w.bin"[4096] : tensor<64x16xf32>
  %s1 = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 annotate_for_users : tensor<16x64xf32>
  // CHECK: %[[H:.+]] = loom.matmul %{{.*}}, %[[W1]] : tensor<4x16xf32>, tensor<16x32xf32>
  %h = loom.matmul %x, %w1s : tensor<4x16xf32>, tensor<16x64xf32>
  // CHECK: %[[G:.+]] = loom.unary gelu %[[H]] : tensor<4x32xf32>
  %g = loom.unary gelu %h : tensor<4x64xf32>
  %s2 = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 annotate_for_users : tensor<64x16xf32>
  // CHECK: %[[Y:.+]] = loom.matmul %[[G]], %[[W2]] : tensor<4x32xf32>, tensor<32x16xf32>
  // CHECK: %[[R:.+]] = shard.all_reduce %[[Y]] on @tp grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
  // CHECK-NOT: shard.all_reduce
  // CHECK: return %[[R]]
  %y = loom.matmul %g, %w2s : tensor<4x64xf32>, tensor<64x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Head-parallel attention: splitting heads is local, no collective.
shard.grid @tp(shape = 4)
// CHECK-LABEL: func @attention_heads
func.func @attention_heads(%q: tensor<2x8x16x32xf32>, %k: tensor<2x8x16x32xf32>,
                           %v: tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %s annotate_for_users : tensor<2x8x16x32xf32>
  // CHECK: loom.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : tensor<2x2x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x32xf32>
  // CHECK-NOT: shard.all_reduce
  %o = loom.attention %qs, %k, %v {causal}
      : tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>
  %os = shard.shard %o to %s : tensor<2x8x16x32xf32>
  return %os : tensor<2x8x16x32xf32>
}

// -----

// Vocab-parallel embedding: the vocabulary is a sum reduction. Each device
// looks up the rows it owns, from the offset of its block (its index along
// the axis times the block's rows), and zeros for the others' ids.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func @vocab_parallel_embedding
func.func @vocab_parallel_embedding(%ids: tensor<2x8xi64>) -> tensor<2x8x64xf32> {
  %t = loom.weight parameter "wte" from "w.bin"[0] : tensor<1000x64xf32>
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %ts = shard.shard %t to %s annotate_for_users : tensor<1000x64xf32>
  // CHECK-DAG: %[[ROWS:.+]] = arith.constant 500 : index
  // CHECK-DAG: %[[IDX:.+]] = shard.process_multi_index on @tp axes = [0] : index
  // CHECK: %[[OFF:.+]] = arith.muli %[[IDX]], %[[ROWS]] : index
  // CHECK: %[[E:.+]] = loom.embedding %{{.*}}, %{{.*}} offset %[[OFF]] {rows = 1000 : i64} : tensor<500x64xf32>, tensor<2x8xi64>
  // CHECK: shard.all_reduce %[[E]] on @tp grid_axes = [0]
  %e = loom.embedding %ts, %ids : tensor<1000x64xf32>, tensor<2x8xi64>
  return %e : tensor<2x8x64xf32>
}

// -----

// Split over two axes, the first major: the block index is i0 * 2 + i1.
shard.grid @g(shape = 3x2)
// CHECK-LABEL: func @vocab_over_two_axes
func.func @vocab_over_two_axes(%ids: tensor<4xi32>) -> tensor<4x8xf32> {
  %t = loom.weight parameter "wte" from "w.bin"[0] : tensor<60x8xf32>
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %ts = shard.shard %t to %s annotate_for_users : tensor<60x8xf32>
  // CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
  // CHECK-DAG: %[[C10:.+]] = arith.constant 10 : index
  // CHECK: %[[IDX:.+]]:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  // CHECK: %[[MAJOR:.+]] = arith.muli %[[IDX]]#0, %[[C2]] : index
  // CHECK: %[[BLOCK:.+]] = arith.addi %[[MAJOR]], %[[IDX]]#1 : index
  // CHECK: %[[OFF:.+]] = arith.muli %[[BLOCK]], %[[C10]] : index
  // CHECK: %[[E:.+]] = loom.embedding %{{.*}}, %{{.*}} offset %[[OFF]] {rows = 60 : i64} : tensor<10x8xf32>, tensor<4xi32>
  // CHECK: shard.all_reduce %[[E]] on @g grid_axes = [0, 1]
  %e = loom.embedding %ts, %ids : tensor<60x8xf32>, tensor<4xi32>
  return %e : tensor<4x8xf32>
}

// -----

// Splitting a softmax along its normalized axis is not block-local:
// propagation drops that split, so the input is gathered first and the
// result sliced after, instead of a wrong program.
shard.grid @tp(shape = 2)
// CHECK-LABEL: func @softmax_axis_gathered
func.func @softmax_axis_gathered(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x16xf32>
  // CHECK: %[[G:.*]] = shard.all_gather %{{.*}} on @tp grid_axes = [0] gather_axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  // CHECK: %[[Y:.*]] = loom.softmax %[[G]] {axis = 1 : i64} : tensor<4x16xf32>
  // CHECK: shard.all_slice %[[Y]] on @tp grid_axes = [0] slice_axis = 1 : tensor<4x16xf32> -> tensor<4x8xf32>
  %y = loom.softmax %xs {axis = 1 : i64} : tensor<4x16xf32>
  %ys = shard.shard %y to %s : tensor<4x16xf32>
  return %ys : tensor<4x16xf32>
}

// -----

// A fused QKV projection sliced along the sliced dimension while the batch
// dimension is split: the slice keeps the whole (split) batch dimension, so
// its sizes shrink to the local extent.
shard.grid @dp(shape = 2)
// CHECK-LABEL: func @slice_keeps_split_dim
func.func @slice_keeps_split_dim(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x6xf32>
  // CHECK: loom.slice %{{.*}} {offsets = array<i64: 0, 3>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 1>} : tensor<2x6xf32>
  %q = loom.slice %xs {offsets = array<i64: 0, 3>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 1>} : tensor<4x6xf32>
  %r = shard.shard %q to %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A router's gates scattered per token (ScatterElements along the expert
// axis) with the tokens split: each device scatters its own rows, no
// gather. The axis the scatter writes along stays whole.
shard.grid @dp(shape = 2)
// CHECK-LABEL: func @scatter_rows_local
func.func @scatter_rows_local(%d: tensor<4x8xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %ds = shard.shard %d to %s : tensor<4x8xf32>
  %is = shard.shard %i to %s : tensor<4x2xi64>
  %us = shard.shard %u to %s : tensor<4x2xf32>
  // CHECK-NOT: shard.all_gather
  // CHECK: loom.scatter %{{.*}}, %{{.*}}, %{{.*}} reduction add {axis = 1 : i64} : tensor<2x8xf32>, tensor<2x2xi64>, tensor<2x2xf32>
  // CHECK-NOT: shard.all_gather
  %y = loom.scatter %ds, %is, %us reduction add {axis = 1 : i64} : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>
  %r = shard.shard %y to %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Indices covering only part of a dimension off the axis: a block split of
// it would move writes between devices, so the data is gathered first.
shard.grid @dp(shape = 2)
// CHECK-LABEL: func @scatter_partial_rows_gathered
func.func @scatter_partial_rows_gathered(%d: tensor<4x8xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %ds = shard.shard %d to %s : tensor<4x8xf32>
  // CHECK: shard.all_gather
  // CHECK: loom.scatter %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<4x8xf32>, tensor<2x2xi64>, tensor<2x2xf32>
  %y = loom.scatter %ds, %i, %u {axis = 1 : i64} : tensor<4x8xf32>, tensor<2x2xi64>, tensor<2x2xf32>
  return %y : tensor<4x8xf32>
}
