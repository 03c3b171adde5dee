// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-split-stages

// expected-error @+3 {{is assigned to a pipeline stage, but no shard.grid has a loom.pipeline_axis}}
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = loom.unary relu %x {loom.stage = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is at the negative loom.stage -1}}
  %y = loom.unary relu %x {loom.stage = -1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.unary relu %x {loom.stage = 1 : i64} : tensor<4xf32>
  // expected-error @+1 {{at loom.stage 0 reads a value computed at the later stage 1}}
  %b = loom.unary tanh %a {loom.stage = 0 : i64} : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// A backward names a stage the forward does not have.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = loom.unary relu %x {loom.stage = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{is in the backward of loom.stage 3, but the forward's last stage is 0}}
  %g = loom.unary relu %y {loom.backward, loom.stage = 3 : i64} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// A weight's gradient sum (--loom-optimizer-step) in the backward of stage 1
// reading a value the backward of stage 0 computes later, on device 0: the
// sum would move to device 0 while device 1's update function reads it.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32> {loom.updates = "w.grad_sum"}) {
  %s = loom.weight state "w.grad_sum" from ""[0] : tensor<4xf32>
  %a = loom.unary relu %x {loom.stage = 0 : i64} : tensor<4xf32>
  %b = loom.unary tanh %a {loom.stage = 1 : i64} : tensor<4xf32>
  %g = loom.unary exp %b {loom.backward, loom.stage = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{updates 'w.grad_sum' in the backward of loom.stage 1, on pipeline device 1, but reads a value computed later, on device 0}}
  %sum = loom.binary add %s, %g {loom.backward, loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  return %b, %sum : tensor<4xf32>, tensor<4xf32>
}
