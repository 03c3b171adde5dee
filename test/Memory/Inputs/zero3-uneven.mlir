shard.grid @g(shape = 2) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<4x8x15xf32> {loom.name = "x"}) -> (tensor<4x8x15xf32> {loom.name = "y"}) {
  %s_x = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x_s = shard.shard %x to %s_x annotate_for_users : tensor<4x8x15xf32>
  %w1 = loom.weight parameter "odd" from "w.bin"[0] : tensor<15x15xf32>
  %w2 = loom.weight parameter "even" from "w.bin"[900] : tensor<15x16xf32>
  %w3 = loom.weight parameter "back" from "w.bin"[1860] : tensor<16x15xf32>
  %h = loom.matmul %x_s, %w1 : tensor<4x8x15xf32>, tensor<15x15xf32>
  %g = loom.matmul %h, %w2 : tensor<4x8x15xf32>, tensor<15x16xf32>
  %y = loom.matmul %g, %w3 : tensor<4x8x16xf32>, tensor<16x15xf32>
  return %y : tensor<4x8x15xf32>
}
