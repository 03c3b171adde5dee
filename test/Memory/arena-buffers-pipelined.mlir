// RUN: loom-opt %s -split-input-file --loom-arena-buffers -verify-diagnostics | FileCheck %s

// (The stage functions are found as loom-split-stages names them,
// @main_stage0, @main_stage1, ...)

// A stage function of a pipelined program (loom-split-stages has kept its
// own device's offsets, one per micro-batch and result) allocates from its
// pipeline device's arena. Where the micro-batches' places differ, the
// entry takes the micro-batch it runs after the arena and reads each such
// buffer's place from a table by it; a place shared by every micro-batch
// stays a constant.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 64 : i64}}, {device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    return %x : tensor<2x8xf32>
  }
  func.func @main_stage1(%x: tensor<2x8xf32> {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 192, 192>}}) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 1 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 0, 64>}} : tensor<2x8xf32>
    %z = loom.unary neg %y {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 64, 128>}} : tensor<2x8xf32>
    return %z : tensor<2x8xf32>
  }
}
// CHECK:      memref.global "private" constant @main_stage1_micro_batch_offsets : memref<2x2xi64> = dense<{{\[\[}}0, 64], [64, 128]]>
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8xf32> {{{.*}}}, %[[ARENA:[a-z0-9]+]]: memref<256xi8> {loom.arena = "device"}, %[[MB:[a-z0-9]+]]: memref<1xi64> {loom.micro_batch_places = 2 : i64})
// CHECK:      %[[TABLE:.*]] = memref.get_global @main_stage1_micro_batch_offsets
// CHECK:      %[[K:.*]] = memref.load %[[MB]][%{{.*}}] : memref<1xi64>
// CHECK:      %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK:      %[[C192:.*]] = arith.constant 192 : index
// CHECK:      memref.view %[[ARENA]][%[[C192]]][] : memref<256xi8> to memref<2x8xf32>
// CHECK:      %[[ROW0:.*]] = arith.constant 0 : index
// CHECK:      %[[AT0:.*]] = memref.load %[[TABLE]][%[[ROW0]], %[[KI]]] : memref<2x2xi64>
// CHECK:      %[[SHIFT0:.*]] = arith.index_cast %[[AT0]] : i64 to index
// CHECK:      memref.view %[[ARENA]][%[[SHIFT0]]][] : memref<256xi8> to memref<2x8xf32>
// CHECK:      loom.unary relu
// CHECK:      %[[ROW1:.*]] = arith.constant 1 : index
// CHECK:      memref.load %[[TABLE]][%[[ROW1]], %[[KI]]] : memref<2x2xi64>
// CHECK:      loom.unary neg

// -----

// Every micro-batch in the same places (an inference pipeline's device):
// no micro-batch index.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 4 : i64, loom.pipeline_stage = 0 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 64, 64, 64, 64>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
// CHECK-NOT:  memref.global
// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2x8xf32>, %[[ARENA:[a-z0-9]+]]: memref<256xi8> {loom.arena = "device"}) -> tensor<2x8xf32>
// CHECK:      %[[C64:.*]] = arith.constant 64 : index
// CHECK:      memref.view %[[ARENA]][%[[C64]]][] : memref<256xi8> to memref<2x8xf32>

// -----

// Each call is checked with its micro-batch's places: %z takes %y's bytes
// in micro-batch 1 while %y is still read.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-note @+1 {{planned at [128, 192)}}
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 128>}} : tensor<2x8xf32>
    // expected-error @+1 {{result #0 is planned at bytes [128, 192) in micro-batch 1, which result #0 of the op below still holds}}
    %z = loom.unary neg %y {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 64, 128>}} : tensor<2x8xf32>
    %s = loom.binary add %y, %z : tensor<2x8xf32>, tensor<2x8xf32>
    // expected-note @+1 {{whose bytes are read until here}}
    return %s : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}, {device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{result #0 carries loom.pipeline_offsets of pipeline device 1, but its function runs on pipeline device 0}}
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 0, 64>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 4 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{result #0 has 2 forward offsets in loom.pipeline_offsets, not one per micro-batch (4, the function's loom.micro_batches) and result (1): was it placed for another micro-batch count?}}
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 64>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{result #0 has a forward offset in some micro-batches but not in others}}
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, -1>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// A place past the arena is refused in whichever micro-batch it is.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 128 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{result #0 is planned at bytes [128, 192) but the device arena of the memory plan has 128 bytes}}
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 128>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// The plan sizes no arena for this pipeline device.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 128 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    return %x : tensor<2x8xf32>
  }
  // expected-error @+1 {{has buffers placed by a static memory plan (loom.pipeline_offsets or loom.fetch ... at) but the module's loom.memory_plan gives no device arena size for its pipeline device 1 (its pipeline_arenas entry)}}
  func.func @main_stage1(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 1 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 0, 64>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// The table takes a fresh name where its own is taken.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  memref.global "private" constant @main_stage0_micro_batch_offsets : memref<1xi64> = dense<7>
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 64>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
// CHECK:      memref.global "private" constant @main_stage0_micro_batch_offsets_0 : memref<1x2xi64>
// CHECK:      memref.global "private" constant @main_stage0_micro_batch_offsets : memref<1xi64>
// CHECK:      memref.get_global @main_stage0_micro_batch_offsets_0

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  // expected-error @+1 {{loom.micro_batches must be a positive integer, not 0 : i64}}
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 0 : i64, loom.pipeline_stage = 0 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{result #0 has a malformed loom.pipeline_offsets (7 : i64): a dictionary whose `forward` is an array<i64>}}
    %y = loom.unary relu %x {loom.pipeline_offsets = 7} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// A spill and its reload in a pipelined stage (--loom-autodiff writes the
// plan's offload so): the host copy at the host arena's places of each
// micro-batch (`host`), the reload at the device's (`forward`), both read
// from the table by the micro-batch.
module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}, host = {bytes = 128 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    %y = loom.unary relu %x {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 0>}} : tensor<2x8xf32>
    %h = loom.spill %y {loom.pipeline_offsets = {device = 0 : i64, host = array<i64: 0, 64>}} : tensor<2x8xf32>
    %z = loom.unary neg %y {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 64, 64>}} : tensor<2x8xf32>
    %r = loom.reload %h {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 128, 192>}} : tensor<2x8xf32>
    %s = loom.binary add %r, %z : tensor<2x8xf32>, tensor<2x8xf32>
    return %s : tensor<2x8xf32>
  }
}
// CHECK:      memref.global "private" constant @main_stage0_micro_batch_offsets : memref<2x2xi64> = dense<{{\[\[}}0, 64], [128, 192]]>
// CHECK:      func.func @main_stage0(%{{[a-z0-9]+}}: tensor<2x8xf32>, %[[DEV:[a-z0-9]+]]: memref<256xi8> {loom.arena = "device"}, %[[HOST:[a-z0-9]+]]: memref<128xi8> {loom.arena = "host"}, %{{[a-z0-9]+}}: memref<1xi64> {loom.micro_batch_places = 2 : i64})
// CHECK:      loom.unary relu
// CHECK:      %[[ROW0:.*]] = arith.constant 0 : index
// CHECK:      memref.load %{{.*}}[%[[ROW0]], %{{.*}}] : memref<2x2xi64>
// CHECK:      %[[HV:.*]] = memref.view %[[HOST]][%{{.*}}][] : memref<128xi8> to memref<2x8xf32>
// CHECK:      %[[HT:.*]] = bufferization.to_tensor %[[HV]]
// CHECK:      bufferization.materialize_in_destination %{{.*}} in %[[HT]]
// CHECK:      loom.unary neg
// CHECK:      %[[ROW1:.*]] = arith.constant 1 : index
// CHECK:      memref.load %{{.*}}[%[[ROW1]], %{{.*}}] : memref<2x2xi64>
// CHECK:      %[[RV:.*]] = memref.view %[[DEV]][%{{.*}}][] : memref<256xi8> to memref<2x8xf32>
// CHECK-NOT:  loom.spill
// CHECK-NOT:  loom.reload

// -----

module attributes {loom.memory_plan = {pipeline_arenas = [{device = {bytes = 256 : i64}, host = {bytes = 128 : i64}}]}} {
  func.func @main_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {loom.micro_batches = 2 : i64, loom.pipeline_stage = 0 : i64} {
    // expected-error @+1 {{the spilled activation's host copy has a host offset in some micro-batches but not in others}}
    %h = loom.spill %x {loom.pipeline_offsets = {device = 0 : i64, host = array<i64: 0, -1>}} : tensor<2x8xf32>
    %r = loom.reload %h : tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
