// A hand-written pp=2 plan whose stages are not in program order: %c (stage
// 0) follows %b (stage 1). The gradient of %a sums contributions from both
// stages' backwards (test/Integration/pipeline-train-step.test).
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32> {loom.batch_dim = 0 : i64}) -> (tensor<4xf32> {loom.batch_dim = 0 : i64}) attributes {loom.micro_batches = 2 : i64} {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %b = loom.binary mul %a, %w {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  %c = loom.binary mul %a, %a {loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %d = loom.binary add %b, %c {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  return %d : tensor<4xf32>
}
