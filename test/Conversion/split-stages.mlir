// RUN: loom-opt %s --split-input-file --loom-split-stages | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-split-stages --loom-weights-to-arguments --loom-partition --loom-stage-transfers | FileCheck %s --check-prefix=XFER

// Three stages: a skip connection from stage 0 to stage 2, a weight used on
// two stages (cloned, not sent), an input read by stage 1 only.
shard.grid @g(shape = 3) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4x8xf32> {loom.name = "x"}, %bias: tensor<4x8xf32> {loom.name = "bias"})
    -> (tensor<4x8xf32> {loom.name = "y"}) {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8x8xf32>
  %a = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %b = loom.binary add %a, %bias {loom.stage = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  %c = loom.matmul %b, %w {loom.stage = 2 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %y = loom.binary add %c, %a {loom.stage = 2 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {loom.name = "x"}, %{{.*}}: tensor<4x8xf32> {loom.name = "bias"})
// CHECK-SAME: -> (tensor<4x8xf32> {loom.send_to = array<i64: 1, 2>, loom.tag = 0 : i64})
// CHECK-SAME: attributes {loom.pipeline_stage = 0 : i64}
// CHECK: %[[W:.*]] = loom.weight parameter "w"
// CHECK: %[[A:.*]] = loom.matmul %[[X]], %[[W]]
// CHECK-NOT: loom.stage
// A value nothing gave a sharding is sent replicated.
// CHECK: %[[R:.*]] = shard.sharding @g split_axes = {{\[\[\]\]}}
// CHECK: %[[AS:.*]] = shard.shard %[[A]] to %[[R]] :
// CHECK: return %[[AS]]
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: %[[BIAS:[^:]*]]: tensor<4x8xf32> {loom.name = "bias"}, %[[A1:.*]]: tensor<4x8xf32> {loom.recv_from = 0 : i64, loom.tag = 0 : i64})
// CHECK-SAME: -> (tensor<4x8xf32> {loom.send_to = array<i64: 2>, loom.tag = 1 : i64})
// The receiving side keeps the sender's annotation.
// CHECK: %[[A1S:.*]] = shard.shard %[[A1]] to
// CHECK: loom.binary add %[[A1S]], %[[BIAS]]
// CHECK-LABEL: func.func @main_stage2(
// CHECK-SAME: {loom.recv_from = 0 : i64, loom.tag = 0 : i64}
// CHECK-SAME: {loom.recv_from = 1 : i64, loom.tag = 1 : i64}
// CHECK-SAME: -> (tensor<4x8xf32> {loom.name = "y"})
// CHECK: loom.weight parameter "w"
// CHECK: loom.matmul
// CHECK: loom.binary add
// CHECK-NOT: func.func @main(

// A value is sent as soon as it is computed (to 1, then 2) and received
// just before its first use: stage 2 receives from 1 before its matmul and
// from 0 before the add.
// XFER-LABEL: func.func @main_stage0(
// XFER: %[[A:.*]] = loom.matmul
// XFER-NEXT: shard.send %[[A]] on @g grid_axes = [0] destination = [1] {loom.tag = 0 : i64}
// XFER-NEXT: shard.send %[[A]] on @g grid_axes = [0] destination = [2] {loom.tag = 0 : i64}
// XFER-NEXT: return
// XFER-LABEL: func.func @main_stage1(
// XFER: shard.recv %{{.*}} on @g grid_axes = [0] source = [0] {loom.tag = 0 : i64}
// XFER: loom.binary add
// XFER: shard.send %{{.*}} on @g grid_axes = [0] destination = [2] {loom.tag = 1 : i64}
// XFER-LABEL: func.func @main_stage2(
// XFER: shard.recv %{{.*}} source = [1] {loom.tag = 1 : i64}
// XFER-NEXT: loom.matmul
// XFER-NEXT: tensor.empty
// XFER-NEXT: shard.recv %{{.*}} source = [0] {loom.tag = 0 : i64}
// XFER-NEXT: loom.binary add

// -----

// Interleaved: four stages on two devices, stage k on device k mod 2. Device
// 0 runs stages 0 and 2, device 1 stages 1 and 3. %a goes to device 1 once
// (stage 1 and stage 3 both read it) and stays a value for stage 2 on its
// own device; %b and %c cross back and forth.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.unary relu %x {loom.stage = 0 : i64} : tensor<4xf32>
  %b = loom.unary tanh %a {loom.stage = 1 : i64} : tensor<4xf32>
  %c = loom.binary mul %b, %a {loom.stage = 2 : i64} : tensor<4xf32>, tensor<4xf32>
  %y = loom.binary add %c, %a {loom.stage = 3 : i64} : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32> {loom.recv_from = 1 : i64, loom.tag = 1 : i64})
// CHECK-SAME: -> (tensor<4xf32> {loom.send_to = array<i64: 1>, loom.tag = 0 : i64}, tensor<4xf32> {loom.send_to = array<i64: 1>, loom.tag = 2 : i64})
// CHECK-SAME: attributes {loom.pipeline_stage = 0 : i64, loom.virtual_stages = array<i64: 0, 2>}
// CHECK: %[[A:.*]] = loom.unary relu %[[X]]
// CHECK: loom.binary mul %{{.*}}, %{{.*}}
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: {loom.recv_from = 0 : i64, loom.tag = 0 : i64}, %{{.*}}: tensor<4xf32> {loom.recv_from = 0 : i64, loom.tag = 2 : i64})
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xf32> {loom.send_to = array<i64: 0>, loom.tag = 1 : i64})
// CHECK-SAME: loom.virtual_stages = array<i64: 1, 3>
// CHECK: loom.unary tanh
// CHECK: loom.binary add

// Device 0 sends %a, then receives %b for stage 2, then sends %c; device 1
// receives %a, sends %b, then receives %c for stage 3.
// XFER-LABEL: func.func @main_stage0(
// XFER: loom.unary relu
// XFER-NEXT: shard.send %{{.*}} destination = [1] {loom.tag = 0 : i64}
// XFER: shard.recv %{{.*}} source = [1] {loom.tag = 1 : i64}
// XFER-NEXT: loom.binary mul
// XFER-NEXT: shard.send %{{.*}} destination = [1] {loom.tag = 2 : i64}
// XFER-NEXT: return
// XFER-LABEL: func.func @main_stage1(
// XFER: shard.recv %{{.*}} source = [0] {loom.tag = 0 : i64}
// XFER-NEXT: loom.unary tanh
// XFER-NEXT: shard.send %{{.*}} destination = [0] {loom.tag = 1 : i64}
// XFER: shard.recv %{{.*}} source = [0] {loom.tag = 2 : i64}
// XFER-NEXT: loom.binary add
// XFER-NEXT: return

// -----

// Without loom.stage the pass leaves the module alone.
// CHECK-LABEL: func.func @main(
// XFER-LABEL: func.func @main(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = loom.unary relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A static memory plan's offsets follow each value to its device: the
// input's are the first device's own and the second's received ones, the
// value sent to the second device enters it (and its shard.recv) with the
// places that device's plan gave it, and no stage keeps another device's.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4x8xf32> {loom.name = "x", loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 128>}, loom.received_offsets = [{device = 1 : i64, forward = array<i64: 256, 384>}]})
    -> (tensor<4x8xf32> {loom.name = "y"}) attributes {loom.micro_batches = 2 : i64} {
  %a = loom.unary relu %x {loom.stage = 0 : i64, loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 512, 640>}, loom.received_offsets = [{device = 1 : i64, forward = array<i64: 768, 896>}]} : tensor<4x8xf32>
  %y = loom.binary add %a, %x {loom.stage = 1 : i64, loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 0, 128>}} : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: {loom.name = "x", loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 128>}})
// CHECK: loom.unary relu %{{.*}} {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 512, 640>}}
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: {loom.name = "x", loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 256, 384>}}
// CHECK-SAME: {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 768, 896>}, loom.recv_from = 0 : i64, loom.tag = 0 : i64})
// CHECK: loom.binary add %{{.*}}, %{{.*}} {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 0, 128>}}
// CHECK-NOT: received_offsets
// XFER-LABEL: func.func @main_stage1(
// XFER: shard.recv %{{.*}} source = [0] {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 768, 896>}, loom.tag = 0 : i64}

// -----

// A malformed entry among the received offsets is skipped, not followed.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4x8xf32> {loom.name = "x", loom.received_offsets = [1 : i64, {device = 1 : i64, forward = array<i64: 256>}]})
    -> (tensor<4x8xf32> {loom.name = "y"}) {
  %a = loom.unary relu %x {loom.stage = 0 : i64, loom.received_offsets = [7 : i64]} : tensor<4x8xf32>
  %y = loom.binary add %a, %x {loom.stage = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: {loom.name = "x", loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 256>}}
// CHECK-SAME: {loom.recv_from = 0 : i64, loom.tag = 0 : i64})

// -----

// A training step (--loom-autodiff): each stage's backward (loom.backward)
// runs on the stage's device after every forward stage, the last stage's
// first. Device 0 sends y forward, then receives y's gradient back; the
// weight's gradient, summed on device 0, goes to device 1, which returns
// the outputs.
shard.grid @g(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32> {loom.batch_dim = 0 : i64}, %g: tensor<4xf32> {loom.batch_dim = 0 : i64, loom.cotangent_of = 0 : i64, loom.name = "result0.grad"}) -> (tensor<4xf32> {loom.batch_dim = 0 : i64}, tensor<4xf32> {loom.gradient_of = "w", loom.name = "w.grad"}) attributes {loom.differentiated, loom.micro_batches = 2 : i64} {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %y = loom.binary mul %x, %w {loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %z = loom.binary mul %y, %w {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  %gw1 = loom.binary mul %g, %y {loom.backward, loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  %gy = loom.binary mul %g, %w {loom.backward, loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  %gw0 = loom.binary mul %gy, %x {loom.backward, loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %gw = loom.binary add %gw1, %gw0 {loom.backward, loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  return %z, %gw : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: {loom.recv_from = 1 : i64, loom.tag = 1 : i64}, %{{.*}}: tensor<4xf32> {loom.recv_from = 1 : i64, loom.tag = 2 : i64})
// CHECK-SAME: -> (tensor<4xf32> {loom.send_to = array<i64: 1>, loom.tag = 0 : i64}, tensor<4xf32> {loom.send_to = array<i64: 1>, loom.tag = 3 : i64})
// CHECK-NOT: loom.backward
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: -> (tensor<4xf32> {loom.batch_dim = 0 : i64}, tensor<4xf32> {loom.gradient_of = "w", loom.name = "w.grad"}, tensor<4xf32> {loom.send_to = array<i64: 0>, loom.tag = 1 : i64}, tensor<4xf32> {loom.send_to = array<i64: 0>, loom.tag = 2 : i64})
// XFER-LABEL: func.func @main_stage0(%arg0: tensor<4xf32>
// XFER: %[[Y:.+]] = loom.binary mul
// XFER-NEXT: shard.send %[[Y]] {{.*}} destination = [1] {loom.tag = 0 : i64}
// XFER: %[[GY:.+]] = shard.recv {{.*}} source = [1] {loom.tag = 2 : i64}
// XFER-NEXT: %[[GW0:.+]] = loom.binary mul %[[GY]]
// XFER: %[[GW1:.+]] = shard.recv {{.*}} source = [1] {loom.tag = 1 : i64}
// XFER-NEXT: %[[GW:.+]] = loom.binary add %[[GW1]], %[[GW0]]
// XFER-NEXT: shard.send %[[GW]] {{.*}} destination = [1] {loom.tag = 3 : i64}
// XFER-LABEL: func.func @main_stage1(%arg0: tensor<4xf32>
// XFER: shard.recv {{.*}} source = [0] {loom.tag = 0 : i64}
// XFER: %[[W:.+]] = shard.recv {{.*}} source = [0] {loom.tag = 3 : i64}
// XFER-NEXT: return %{{.*}}, %[[W]]
