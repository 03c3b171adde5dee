// Three row-parallel matmuls for test/Integration/reduce-scatter.test: the
// first two sums are read once, sliced over the reduction axes; the third
// is read by two ops.
shard.grid @plan(shape = 2x2) {loom.axis_names = ["tp0", "tp1"]}
func.func @main(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %rep = shard.sharding @plan split_axes = [[]] : !shard.sharding
  %hid1 = shard.sharding @plan split_axes = [[], [], [1]] : !shard.sharding
  %rows1 = shard.sharding @plan split_axes = [[1]] : !shard.sharding
  %seq1 = shard.sharding @plan split_axes = [[], [1]] : !shard.sharding
  %hid01 = shard.sharding @plan split_axes = [[], [], [0, 1]] : !shard.sharding
  %rows01 = shard.sharding @plan split_axes = [[0, 1]] : !shard.sharding
  %seq01 = shard.sharding @plan split_axes = [[], [0, 1]] : !shard.sharding
  // Row-parallel over tp1, its one reader splits the sequence over tp1.
  %w1 = loom.weight parameter "w1" from "model.bin"[0] : tensor<16x16xf32>
  %w1s = shard.shard %w1 to %rows1 annotate_for_users : tensor<16x16xf32>
  %xs = shard.shard %x to %hid1 annotate_for_users : tensor<4x8x16xf32>
  %y1 = loom.matmul %xs, %w1s : tensor<4x8x16xf32>, tensor<16x16xf32>
  %y1r = shard.shard %y1 to %rep : tensor<4x8x16xf32>
  %y1s = shard.shard %y1r to %seq1 annotate_for_users : tensor<4x8x16xf32>
  %g1 = loom.unary gelu %y1s : tensor<4x8x16xf32>
  %g1r = shard.shard %g1 to %seq1 : tensor<4x8x16xf32>
  // Row-parallel over both axes, its one reader splits the sequence over both.
  %w2 = loom.weight parameter "w2" from "model.bin"[1024] : tensor<16x16xf32>
  %w2s = shard.shard %w2 to %rows01 annotate_for_users : tensor<16x16xf32>
  %g1s = shard.shard %g1r to %hid01 annotate_for_users : tensor<4x8x16xf32>
  %y2 = loom.matmul %g1s, %w2s : tensor<4x8x16xf32>, tensor<16x16xf32>
  %y2r = shard.shard %y2 to %rep : tensor<4x8x16xf32>
  %y2s = shard.shard %y2r to %seq01 annotate_for_users : tensor<4x8x16xf32>
  %g2 = loom.unary gelu %y2s : tensor<4x8x16xf32>
  %g2r = shard.shard %g2 to %seq01 : tensor<4x8x16xf32>
  // Row-parallel over tp1 read by two ops: the sum is all-reduced.
  %w3 = loom.weight parameter "w3" from "model.bin"[2048] : tensor<16x16xf32>
  %w3s = shard.shard %w3 to %rows1 annotate_for_users : tensor<16x16xf32>
  %g2s = shard.shard %g2r to %hid1 annotate_for_users : tensor<4x8x16xf32>
  %y3 = loom.matmul %g2s, %w3s : tensor<4x8x16xf32>, tensor<16x16xf32>
  %y3r = shard.shard %y3 to %rep : tensor<4x8x16xf32>
  %y3a = shard.shard %y3r to %seq1 annotate_for_users : tensor<4x8x16xf32>
  %g3 = loom.unary gelu %y3a : tensor<4x8x16xf32>
  %y3b = shard.shard %y3r to %seq1 annotate_for_users : tensor<4x8x16xf32>
  %out = loom.binary add %g3, %y3b : tensor<4x8x16xf32>, tensor<4x8x16xf32>
  return %out : tensor<4x8x16xf32>
}
