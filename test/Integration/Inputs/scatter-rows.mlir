// ScatterElements of a router's gates per token, tokens split over dp (used by
// test/Integration/scatter-split.test).
shard.grid @plan(shape = 2) {loom.axis_names = ["dp"]}
func.func @main(%d: tensor<4x8xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @plan split_axes = [[0]] : !shard.sharding
  %ds = shard.shard %d to %s annotate_for_users : tensor<4x8xf32>
  %is = shard.shard %i to %s annotate_for_users : tensor<4x2xi64>
  %us = shard.shard %u to %s annotate_for_users : tensor<4x2xf32>
  %y = loom.scatter %ds, %is, %us reduction add {axis = 1 : i64} : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>
  %r = shard.shard %y to %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
