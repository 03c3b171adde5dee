// RUN: loom-opt %s --loom-weights-to-arguments --loom-partition | FileCheck %s
// A micro-batched step's gradient sums (`<w>.grad_sum`, as
// --loom-optimizer-step writes them) are reduced once a step where the
// step's all-reduce feeds nothing but the sum: loom-partition moves it into
// the update function reading the sum. `a`'s passes through a reshape and
// a transpose, which commute with it; `b`'s is a max, `c`'s sum is read by
// the step too, and `d`'s reduced gradient is returned as well: those stay.

shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> (tensor<64xf32> {loom.name = "a.grad_sum", loom.updates = "a.grad_sum"}, tensor<8xf32> {loom.name = "b.grad_sum", loom.updates = "b.grad_sum"}, tensor<8x8xf32> {loom.name = "c.grad_sum", loom.updates = "c.grad_sum"}, tensor<8x8xf32> {loom.name = "c.seen"}, tensor<8x8xf32> {loom.name = "d.grad_sum", loom.updates = "d.grad_sum"}, tensor<8x8xf32> {loom.name = "d.grad"}) attributes {loom.micro_batches = 2 : i64} {
  %a = loom.weight state "a.grad_sum" from ""[0] : tensor<64xf32>
  %b = loom.weight state "b.grad_sum" from ""[0] : tensor<8xf32>
  %c = loom.weight state "c.grad_sum" from ""[0] : tensor<8x8xf32>
  %d = loom.weight state "d.grad_sum" from ""[0] : tensor<8x8xf32>
  %split = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %whole = shard.sharding @g split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %split annotate_for_users : tensor<4x8xf32>
  %xt = loom.transpose %xs {permutation = array<i64: 1, 0>} : tensor<4x8xf32>
  %g = loom.matmul %xt, %xs : tensor<8x4xf32>, tensor<4x8xf32>
  %gw = shard.shard %g to %whole annotate_for_users : tensor<8x8xf32>
  %gt = loom.transpose %gw {permutation = array<i64: 1, 0>} : tensor<8x8xf32>
  %ga = loom.reshape %gt : tensor<8x8xf32> -> tensor<64xf32>
  %as = shard.shard %a to %whole : tensor<64xf32>
  %a1 = loom.binary add %as, %ga : tensor<64xf32>, tensor<64xf32>
  %m = loom.reduce max %xs {axes = array<i64: 0>, keep_dims = false} : tensor<4x8xf32>
  %mw = shard.shard %m to %whole annotate_for_users : tensor<8xf32>
  %bs = shard.shard %b to %whole : tensor<8xf32>
  %b1 = loom.binary add %bs, %mw : tensor<8xf32>, tensor<8xf32>
  %g2 = loom.matmul %xt, %xs : tensor<8x4xf32>, tensor<4x8xf32>
  %g2w = shard.shard %g2 to %whole annotate_for_users : tensor<8x8xf32>
  %cs = shard.shard %c to %whole : tensor<8x8xf32>
  %c1 = loom.binary add %cs, %g2w : tensor<8x8xf32>, tensor<8x8xf32>
  %seen = loom.binary mul %cs, %cs : tensor<8x8xf32>, tensor<8x8xf32>
  %g3 = loom.matmul %xt, %xs : tensor<8x4xf32>, tensor<4x8xf32>
  %g3w = shard.shard %g3 to %whole annotate_for_users : tensor<8x8xf32>
  %ds = shard.shard %d to %whole : tensor<8x8xf32>
  %d1 = loom.binary add %ds, %g3w : tensor<8x8xf32>, tensor<8x8xf32>
  return %a1, %b1, %c1, %seen, %d1, %g3w : tensor<64xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

func.func @main_update() -> (tensor<64xf32> {loom.name = "a.grad_sum", loom.updates = "a.grad_sum"}, tensor<8x8xf32> {loom.name = "w", loom.updates = "w"}, tensor<8xf32> {loom.name = "b.grad_sum", loom.updates = "b.grad_sum"}, tensor<8x8xf32> {loom.name = "c.grad_sum", loom.updates = "c.grad_sum"}, tensor<8x8xf32> {loom.name = "d.grad_sum", loom.updates = "d.grad_sum"}, tensor<8x8xf32> {loom.name = "v", loom.updates = "v"}) {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8x8xf32>
  %v = loom.weight parameter "v" from "w.bin"[256] : tensor<8x8xf32>
  %a = loom.weight state "a.grad_sum" from ""[0] : tensor<64xf32>
  %b = loom.weight state "b.grad_sum" from ""[0] : tensor<8xf32>
  %c = loom.weight state "c.grad_sum" from ""[0] : tensor<8x8xf32>
  %d = loom.weight state "d.grad_sum" from ""[0] : tensor<8x8xf32>
  %whole = shard.sharding @g split_axes = [[]] : !shard.sharding
  %as = shard.shard %a to %whole : tensor<64xf32>
  %bs = shard.shard %b to %whole : tensor<8xf32>
  %cs = shard.shard %c to %whole : tensor<8x8xf32>
  %ds = shard.shard %d to %whole : tensor<8x8xf32>
  %ws = shard.shard %w to %whole : tensor<8x8xf32>
  %vs = shard.shard %v to %whole : tensor<8x8xf32>
  %a2 = loom.reshape %as : tensor<64xf32> -> tensor<8x8xf32>
  %w1 = loom.binary sub %ws, %a2 : tensor<8x8xf32>, tensor<8x8xf32>
  %bc = loom.binary add %cs, %ds : tensor<8x8xf32>, tensor<8x8xf32>
  %b2 = loom.binary mul %bc, %bs : tensor<8x8xf32>, tensor<8xf32>
  %v1 = loom.binary sub %vs, %b2 : tensor<8x8xf32>, tensor<8x8xf32>
  %z = loom.constant dense<0.0> : tensor<8x8xf32>
  %za = loom.constant dense<0.0> : tensor<64xf32>
  %zb = loom.constant dense<0.0> : tensor<8xf32>
  return %za, %w1, %zb, %z, %z, %v1 : tensor<64xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// The step adds its own `a` (the transpose and the reshape read the
// matmul directly); `b`'s max, `c`'s and `d`'s all-reduces stay. The update
// function all-reduces `a`'s sum before its first reader, and a zero
// returned for two sums (`c`'s and `d`'s) is annotated once.
// CHECK-LABEL: func.func @main(
// CHECK-NOT: shard.all_reduce
// CHECK: %[[G:.*]] = loom.matmul
// CHECK-NEXT: %[[T:.*]] = loom.transpose %[[G]]
// CHECK-NEXT: %[[R:.*]] = loom.reshape %[[T]]
// CHECK-NEXT: loom.binary add %{{.*}}, %[[R]]
// CHECK: shard.all_reduce %{{.*}} on @g grid_axes = [0] reduction = max
// CHECK: shard.all_reduce %{{.*}} on @g grid_axes = [0] :
// CHECK: shard.all_reduce %{{.*}} on @g grid_axes = [0] :
// CHECK-NOT: shard.all_reduce
// CHECK-LABEL: func.func @main_update(
// CHECK-NOT: shard.all_reduce
// CHECK: %[[A:.*]] = shard.all_reduce %arg{{[0-9]+}} on @g grid_axes = [0] : tensor<64xf32>
// CHECK-NEXT: loom.reshape %[[A]]
// CHECK-NOT: shard.all_reduce
