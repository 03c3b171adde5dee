// RUN: loom-opt %s -split-input-file --loom-verify-movement -verify-diagnostics -o /dev/null

// Streamed movement as --loom-place-memory writes it, checked from the IR
// alone against loom.memory_plan's chunk sizes and budget. First a correct
// schedule: chunk 0 fetched, released after its last read to make room for
// chunk 1, which is released in turn: the step ends with nothing on the
// device, as it starts.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d1 : tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// The step runs again as written, so it ends with the chunks its carried
// fetches start with: here chunk 0, read first, stays.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d1 : tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// A step ending with a chunk it does not start with.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  // expected-error @+1 {{ends with chunk 1 on the device, which its next run does not start with (no loom.fetch of it is carried), so the step cannot repeat}}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// A step starting with a chunk it releases: the next run would read it
// absent (a plan whose resident set cycles over several iterations).
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  // expected-error @+1 {{starts with chunk 0 on the device (carried) but releases it, so the next run would find it absent}}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// A training forward whose backward's movement --loom-autodiff has still to
// write is not the whole step: what it ends with is not checked yet.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 {loom.backward_movement = {release = array<i64: 1>, fetch = array<i64: 0>, at = array<i64>}} : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// An op that computes nothing (the return) may take the master copy.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x8xf32>) {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    return %y, %w0 : tensor<2x8xf32>, tensor<8x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    // expected-error @+1 {{reads weight 'w0' after its device copy was released}}
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    // expected-error @+1 {{reads weight 'w0', placed in host memory, without a loom.fetch}}
    %y = loom.matmul %x, %w0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// Both chunks at once: 512 bytes in a budget of 256.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 256.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    // expected-error @+1 {{brings the streamed chunks on the device to 512 bytes, over the budget of 256}}
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 1024.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    // expected-error @+1 {{fetches weight 'w0' again while its copy from}}
    %d1 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    %y = loom.matmul %x, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 1024.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    // expected-error @+1 {{releases weight 'w0', whose copy is already released}}
    loom.release %d0 : tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 1024.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] : tensor<8x8xf32>
    // expected-error @+1 {{fetches chunk 3 of a plan with 1 chunks}}
    %d0 = loom.fetch %w0 chunk 3 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// expected-error @+1 {{has loom.fetch or loom.release ops but its loom.memory_plan gives no chunk_sizes and chunk_budget_bytes}}
module {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// Offsets in the device arena (loom.memory_plan's arenas): chunk 1's copy
// may take chunk 0's bytes once chunk 0 is released; chunk 0 is fetched
// back to where the next run expects it.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 512 : i64, live_bound = 512 : i64}}, chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried at 256 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 at 256 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d1 : tensor<8x8xf32>
    %e0 = loom.fetch %w0 chunk 0 at 256 : tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// ... and not elsewhere.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 512 : i64, live_bound = 512 : i64}}, chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  // expected-error @+1 {{ends with chunk 0 at offset 0, but its next run starts with it at 256}}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried at 256 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d0 : tensor<8x8xf32>
    %d1 = loom.fetch %w1 chunk 1 at 256 : tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d1 : tensor<8x8xf32>
    %e0 = loom.fetch %w0 chunk 0 at 0 : tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {arenas = {device = {bytes = 512 : i64, live_bound = 512 : i64}}, chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried at 0 : tensor<8x8xf32>
    // expected-error @+1 {{puts chunk 1 at [128, 384), over live chunk 0 at [0, 256)}}
    %d1 = loom.fetch %w1 chunk 1 at 128 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {arenas = {device = {bytes = 512 : i64, live_bound = 512 : i64}}, chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    // expected-error @+1 {{puts chunk 0 at [384, 640), past the device arena's 512 bytes}}
    %d0 = loom.fetch %w0 chunk 0 carried at 384 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// A chunk of two weights: the second must lie inside the first's copy.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 512>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried at 0 : tensor<8x8xf32>
    // expected-error @+1 {{puts weight 'w1' at 512, outside its chunk's copy at [0, 512)}}
    %d1 = loom.fetch %w1 chunk 0 carried at 512 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256, 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    %w1 = loom.weight parameter "w1" from "m.bin"[256] {loom.placement = {chunk = 1 : i64, tier = "host"}} : tensor<8x8xf32>
    %d0 = loom.fetch %w0 chunk 0 carried at 0 : tensor<8x8xf32>
    // expected-error @+1 {{fetches weight 'w1' without an arena offset, unlike the function's first fetch}}
    %d1 = loom.fetch %w1 chunk 1 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    %z = loom.matmul %y, %d1 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

// An offset whose chunk would end past the largest byte address.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 512.0 : f64}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host"}} : tensor<8x8xf32>
    // expected-error @+1 {{puts chunk 0 at 9223372036854775807, past any arena}}
    %d0 = loom.fetch %w0 chunk 0 carried at 9223372036854775807 : tensor<8x8xf32>
    %y = loom.matmul %x, %d0 : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// The optimizer's part on the host (loom.on_host, --loom-optimizer-step
// where placement offloads it): a correct one reads the spilled gradient,
// host state and the host copy, and the device reads its result through a
// reload; a scalar (the step size) may cross.
module {
  func.func @main(%g: tensor<4x4xf32>, %lr: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %h = loom.weight state "w.host_copy" from "m.bin"[0] {loom.placement = {tier = "host"}} : tensor<4x4xf32>
    %down = loom.spill %g at 0 : tensor<4x4xf32>
    %s = loom.binary mul %down, %lr {loom.on_host} : tensor<4x4xf32>, tensor<f32>
    %n = loom.binary sub %h, %s {loom.on_host} : tensor<4x4xf32>, tensor<4x4xf32>
    %up = loom.reload %n : tensor<4x4xf32>
    return %n, %up : tensor<4x4xf32>, tensor<4x4xf32>
  }
}

// -----

// The host cannot read the device's copy of a parameter.
module {
  func.func @main(%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %w = loom.weight parameter "w" from "m.bin"[0] {loom.placement = {optimizer = "host", tier = "device"}} : tensor<4x4xf32>
    %down = loom.spill %g at 0 : tensor<4x4xf32>
    // expected-error @+1 {{'loom.binary' op runs on the host (loom.on_host) but reads weight 'w', which is in device memory}}
    %n = loom.binary sub %w, %down {loom.on_host} : tensor<4x4xf32>, tensor<4x4xf32>
    return %n : tensor<4x4xf32>
  }
}

// -----

// Nor the gradient before it is sent down.
module {
  func.func @main(%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %h = loom.weight state "w.host_copy" from "m.bin"[0] {loom.placement = {tier = "host"}} : tensor<4x4xf32>
    %t = loom.transpose %g {permutation = array<i64: 1, 0>} : tensor<4x4xf32>
    // expected-error @+1 {{'loom.binary' op runs on the host (loom.on_host) but reads the result of 'loom.transpose', which is in device memory}}
    %n = loom.binary sub %h, %t {loom.on_host} : tensor<4x4xf32>, tensor<4x4xf32>
    return %n : tensor<4x4xf32>
  }
}

// -----

// The device reads the host's result only through a reload.
module {
  func.func @main(%g: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %h = loom.weight state "w.host_copy" from "m.bin"[0] {loom.placement = {tier = "host"}} : tensor<4x4xf32>
    %down = loom.spill %g at 0 : tensor<4x4xf32>
    %n = loom.binary sub %h, %down {loom.on_host} : tensor<4x4xf32>, tensor<4x4xf32>
    // expected-error @+1 {{'loom.matmul' op runs on the device but reads the result of 'loom.binary', a host value, without a loom.reload}}
    %y = loom.matmul %x, %n : tensor<2x4xf32>, tensor<4x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// Nor state the plan keeps on the host.
module {
  func.func @main(%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %m = loom.weight state "w.exp_avg" from ""[0] {loom.placement = {tier = "host"}} : tensor<4x4xf32>
    // expected-error @+1 {{'loom.binary' op runs on the device but reads weight 'w.exp_avg', a host value, without a loom.reload}}
    %n = loom.binary add %m, %g : tensor<4x4xf32>, tensor<4x4xf32>
    return %n : tensor<4x4xf32>
  }
}

// -----

// Streamed in ZeRO-3 shards: the fetch copies the stored shard, and a
// reader's gather reads the copy. A gather after the release reads nothing.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 256.0 : f64}} {
  shard.grid @grid(shape = 2) {loom.axis_names = ["dp"]}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host", zero_shards = 2 : i64}} : tensor<8x8xf32>
    %z = shard.sharding @grid split_axes = [[0]] {loom.zero_shard} : !shard.sharding
    %s = shard.shard %w0 to %z {loom.zero_shard} : tensor<8x8xf32>
    %f = loom.fetch %s chunk 0 : tensor<8x8xf32>
    %c = shard.shard %f to %z {loom.zero_shard} : tensor<8x8xf32>
    %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %g = shard.shard %c to %r annotate_for_users {loom.zero_shard = 0 : i64} : tensor<8x8xf32>
    %y = loom.matmul %x, %g : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %c : tensor<8x8xf32>
    // expected-error @+1 {{reads weight 'w0' after its device copy was released}}
    %g2 = shard.shard %c to %r annotate_for_users {loom.zero_shard = 1 : i64} : tensor<8x8xf32>
    %z2 = loom.matmul %y, %g2 : tensor<2x8xf32>, tensor<8x8xf32>
    return %z2 : tensor<2x8xf32>
  }
}

// -----

// Nor does a reader's gather of the stored shard no fetch copied: the shard
// lives in host memory.
module attributes {loom.memory_plan = {chunk_sizes = array<i64: 256>, chunk_budget_bytes = 256.0 : f64}} {
  shard.grid @grid(shape = 2) {loom.axis_names = ["dp"]}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w0 = loom.weight parameter "w0" from "m.bin"[0] {loom.placement = {chunk = 0 : i64, tier = "host", zero_shards = 2 : i64}} : tensor<8x8xf32>
    %z = shard.sharding @grid split_axes = [[0]] {loom.zero_shard} : !shard.sharding
    %s = shard.shard %w0 to %z {loom.zero_shard} : tensor<8x8xf32>
    %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %g = shard.shard %s to %r annotate_for_users {loom.zero_shard = 0 : i64} : tensor<8x8xf32>
    // expected-error @+1 {{reads weight 'w0', placed in host memory, without a loom.fetch}}
    %y = loom.matmul %x, %g : tensor<2x8xf32>, tensor<8x8xf32>
    return %y : tensor<2x8xf32>
  }
}
