// RUN: loom-opt %s -split-input-file --loom-autodiff --loom-optimizer-step="kind=sgd lr=0.5 momentum=0.9" | FileCheck %s
// RUN: loom-opt %s -split-input-file --loom-autodiff --loom-optimizer-step="kind=sgd lr=0.5 momentum=0.9" | loom-opt -split-input-file --loom-verify-movement -o /dev/null

// Memory placement put the optimizer of `a` on the host (ZeRO-Offload's
// CPU optimizer) and kept `b`'s on the device. `a`'s gradient is sent down
// into its planned host buffer as soon as the backward completes it; the
// CPU updates a host copy of the parameter (state loaded from the
// parameter's own bytes) with state held on the host, every op of it
// marked loom.on_host; the device's copy is refreshed from the result by a
// reload. `b` updates on the device as without a plan.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: {loom.name = "a.momentum_buffer", loom.updates = "a.momentum_buffer"}, tensor<4x4xf32> {loom.name = "a.host_copy", loom.updates = "a.host_copy"}, tensor<4x4xf32> {loom.name = "a", loom.updates = "a"}, tensor<4x4xf32> {loom.name = "b.momentum_buffer", loom.updates = "b.momentum_buffer"}, tensor<4x4xf32> {loom.name = "b", loom.updates = "b"})
// CHECK: %[[HOSTA:.+]] = loom.weight state "a.host_copy" from "m.bin"[0] {loom.placement = {offset = 128 : i64, slot = 0 : i64, tier = "host"}}
// CHECK-NEXT: %[[BUFA:.+]] = loom.weight state "a.momentum_buffer" from ""[0] {loom.placement = {offset = {{[0-9]+}} : i64, slot = 0 : i64, tier = "host"}}
// CHECK-NEXT: %[[BUFB:.+]] = loom.weight state "b.momentum_buffer" from ""[0] {loom.placement = {offset = 128 : i64, slot = 0 : i64}} : tensor<4x4xf32>
// The gradient of `b` is computed in its planned device buffer (the
// step's own, in a step of one call); that of `a` (x^T times the gradient
// of h) is the last one made.
// CHECK: loom.matmul %{{.+}}, %arg1 {loom.offsets = {forward = array<i64: 64>}} : tensor<4x2xf32>, tensor<2x4xf32>
// CHECK: %[[GA:.+]] = loom.matmul %{{.+}}, %{{.+}} : tensor<4x2xf32>, tensor<2x4xf32>
// CHECK-NEXT: %[[DOWN:.+]] = loom.spill %[[GA]] at 64 : tensor<4x4xf32>
// CHECK-NEXT: loom.constant {loom.on_host}
// CHECK-NEXT: %[[DECAYED:.+]] = loom.binary mul %[[BUFA]], %{{.+}} {loom.on_host}
// CHECK-NEXT: %[[STEPA:.+]] = loom.binary add %[[DECAYED]], %[[DOWN]] {loom.on_host}
// CHECK-NEXT: loom.constant {loom.on_host}
// CHECK-NEXT: %[[SCALED:.+]] = loom.binary mul %[[STEPA]], %{{.+}} {loom.on_host}
// CHECK-NEXT: %[[NEWA:.+]] = loom.binary sub %[[HOSTA]], %[[SCALED]] {loom.on_host}
// CHECK-NEXT: %[[UP:.+]] = loom.reload %[[NEWA]] : tensor<4x4xf32>
// CHECK-NOT: loom.on_host
// CHECK: return %{{.+}}, %[[STEPA]], %[[NEWA]], %[[UP]], %{{.+}}, %{{.+}} :
module attributes {loom.memory_plan = {fits = true, placement = "parameters on the device, optimizer 50% device / host"}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %a = loom.weight parameter "a" from "m.bin"[0] {loom.placement = {copy_offset = 128 : i64, gradient_offset = 64 : i64, offset = 0 : i64, optimizer = "host", optimizer_offset = 0 : i64, tier = "device"}} : tensor<4x4xf32>
    %b = loom.weight parameter "b" from "m.bin"[64] {loom.placement = {gradient_offset = 64 : i64, offset = 64 : i64, optimizer = "device", optimizer_offset = 128 : i64, tier = "device"}} : tensor<4x4xf32>
    %h = loom.matmul %x, %a : tensor<2x4xf32>, tensor<4x4xf32>
    %y = loom.matmul %h, %b : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// A streamed parameter's home copy is on the host: the CPU updates the
// weight itself (the next step fetches the new value), so nothing goes back
// up and there is no host copy.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<4x4xf32> {loom.name = "c.momentum_buffer", loom.updates = "c.momentum_buffer"}, tensor<4x4xf32> {loom.name = "c", loom.updates = "c"})
// CHECK: %[[C:.+]] = loom.weight parameter "c"
// CHECK: %[[DOWN:.+]] = loom.spill %{{.+}} at 0 : tensor<4x4xf32>
// CHECK: %[[NEWC:.+]] = loom.binary sub %[[C]], %{{.+}} {loom.on_host}
// CHECK-NOT: loom.reload
// CHECK: return %{{.+}}, %{{.+}}, %[[NEWC]] :
module attributes {loom.memory_plan = {chunk_budget_bytes = 64.0 : f64, chunk_sizes = array<i64: 64>, fits = true, placement = "parameters streamed, optimizer on the host"}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %c = loom.weight parameter "c" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, gradient_offset = 0 : i64, optimizer = "host", tier = "host"}} : tensor<4x4xf32>
    %d = loom.fetch %c chunk 0 carried : tensor<4x4xf32>
    %y = loom.matmul %x, %d : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// ZeRO-Offload's delayed parameter update (the plan's delayed_update): the
// device's copy of `a` is refreshed with the host copy as this step found
// it, written back before the new host copy, so the next step's forward
// reads `a` one update behind while the CPU's update overlaps it.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: {loom.name = "a.momentum_buffer", loom.updates = "a.momentum_buffer"}, tensor<4x4xf32> {loom.name = "a", loom.updates = "a"}, tensor<4x4xf32> {loom.name = "a.host_copy", loom.updates = "a.host_copy"})
// CHECK: %[[HOSTA:.+]] = loom.weight state "a.host_copy" from "m.bin"[0] {loom.placement = {offset = 128 : i64, slot = 0 : i64, tier = "host"}}
// CHECK: %[[NEWA:.+]] = loom.binary sub %[[HOSTA]], %{{.+}} {loom.on_host}
// CHECK-NEXT: %[[UP:.+]] = loom.reload %[[HOSTA]] : tensor<4x4xf32>
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[UP]], %[[NEWA]] :
module attributes {loom.memory_plan = {delayed_update = true, fits = true, placement = "parameters on the device, optimizer on the host"}} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %a = loom.weight parameter "a" from "m.bin"[0] {loom.placement = {copy_offset = 128 : i64, gradient_offset = 64 : i64, offset = 0 : i64, optimizer = "host", optimizer_offset = 0 : i64, tier = "device"}} : tensor<4x4xf32>
    %y = loom.matmul %x, %a : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}
