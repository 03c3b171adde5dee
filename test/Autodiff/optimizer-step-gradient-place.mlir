// RUN: loom-opt %s -split-input-file --loom-autodiff --loom-optimizer-step="kind=sgd lr=0.5" | FileCheck %s

// A step of one call on one device, updating on the device: the op
// computing each weight's gradient computes it at the plan's
// gradient_offset, where loom-arena-buffers then puts it (and the update
// reads it there). `w`'s gradient is x^T times the output's gradient.
// CHECK-LABEL: func.func @main(
// CHECK: loom.matmul %{{[0-9]+}}, %arg1 {loom.offsets = {forward = array<i64: 256>}} : tensor<4x2xf32>, tensor<2x4xf32>
module attributes {loom.memory_plan = {fits = true, placement = "everything on the device"}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = loom.weight parameter "w" from "m.bin"[0] {loom.placement = {gradient_offset = 256 : i64, offset = 0 : i64, optimizer = "device", optimizer_offset = 512 : i64, tier = "device"}} : tensor<4x4xf32>
    %y = loom.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// Not on a device grid: the op makes the local part of what a collective
// then reduces (or scatters into a ZeRO shard).
// CHECK-LABEL: func.func @main(
// CHECK-NOT: loom.offsets
// CHECK: return
module attributes {loom.memory_plan = {fits = true, placement = "everything on the device"}} {
  shard.grid @grid(shape = 2)
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = loom.weight parameter "w" from "m.bin"[0] {loom.placement = {gradient_offset = 256 : i64, offset = 0 : i64, optimizer = "device", optimizer_offset = 512 : i64, tier = "device"}} : tensor<4x4xf32>
    %y = loom.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}
