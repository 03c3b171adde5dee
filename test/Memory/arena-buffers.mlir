// RUN: loom-opt %s -split-input-file --loom-arena-buffers -verify-diagnostics | FileCheck %s

// The static memory plan as --loom-place-memory writes it, made the
// program's allocation: the input, each planned result and the fetched
// weight are written at their offsets in one trailing arena argument. %r
// reuses %y's bytes: %y's last read is the op writing %z.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 1024 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32> {loom.offsets = {forward = array<i64: 512>}}, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
    %d = loom.fetch %w chunk 0 at 768 : tensor<8x8xf32>
    %y = loom.matmul %x, %d {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>, tensor<8x8xf32>
    loom.release %d : tensor<8x8xf32>
    %z = loom.unary relu %y {loom.offsets = {forward = array<i64: 256>}} : tensor<2x8xf32>
    %r = loom.unary relu %z {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8xf32> {{{.*}}}, %[[W:[a-z0-9]+]]: tensor<8x8xf32>, %[[ARENA:[a-z0-9]+]]: memref<1024xi8> {loom.arena = "device"})
// CHECK:      %[[C512:.*]] = arith.constant 512 : index
// CHECK:      %[[XV:.*]] = memref.view %[[ARENA]][%[[C512]]][] : memref<1024xi8> to memref<2x8xf32>
// CHECK:      %[[XD:.*]] = bufferization.to_tensor %[[XV]] restrict writable
// CHECK:      %[[XP:.*]] = bufferization.materialize_in_destination %[[X]] in %[[XD]]
// CHECK:      %[[C768:.*]] = arith.constant 768 : index
// CHECK:      %[[WV:.*]] = memref.view %[[ARENA]][%[[C768]]][] : memref<1024xi8> to memref<8x8xf32>
// CHECK:      %[[WD:.*]] = bufferization.to_tensor %[[WV]] restrict writable
// CHECK:      %[[WP:.*]] = bufferization.materialize_in_destination %[[W]] in %[[WD]]
// CHECK-NOT:  loom.fetch
// CHECK:      memref.view %[[ARENA]][%{{.*}}][] : memref<1024xi8> to memref<2x8xf32>
// CHECK:      %[[Y:.*]] = loom.matmul %[[XP]], %[[WP]]
// CHECK:      %[[YP:.*]] = bufferization.materialize_in_destination %[[Y]] in
// CHECK-NOT:  loom.release
// CHECK:      loom.unary relu %[[YP]]
// CHECK:      %[[R:.*]] = loom.unary relu
// CHECK:      %[[RP:.*]] = bufferization.materialize_in_destination %[[R]] in
// CHECK:      return %[[RP]]

// -----

// Without a static memory plan nothing changes.
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT:   memref.view
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = loom.unary relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

module attributes {loom.memory_plan = {arenas = {device = {bytes = 64 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{result #0 is planned at bytes [32, 96) but the device arena of the memory plan has 64 bytes}}
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 32>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{result #0 is planned at offset 2, not a multiple of its 4-byte elements}}
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 2>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// A plan that lets a buffer take bytes another still holds is wrong: %z is
// written over %y, which the add reads after it.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    // expected-note @+1 {{planned at [0, 64)}}
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    // expected-error @+1 {{result #0 is planned at bytes [32, 96), which result #0 of the op below still holds}}
    %z = loom.unary neg %y {loom.offsets = {forward = array<i64: 32>}} : tensor<2x8xf32>
    %s = loom.binary add %y, %z : tensor<2x8xf32>, tensor<2x8xf32>
    // The add's result may share %y's buffer after bufferization.
    // expected-note @+1 {{whose bytes are read until here (directly or through a value that may share them), after the write}}
    return %s : tensor<2x8xf32>
  }
}

// -----

// The same overlap through a reshape the plan gave no buffer: after
// bufferization the reshape is a view of %y's bytes.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<16xf32> {
    // expected-note @+1 {{planned at [0, 64)}}
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %v = loom.reshape %y : tensor<2x8xf32> -> tensor<16xf32>
    // expected-error @+1 {{which result #0 of the op below still holds}}
    %z = loom.unary neg %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %f = loom.reshape %z : tensor<2x8xf32> -> tensor<16xf32>
    %s = loom.binary add %v, %f : tensor<16xf32>, tensor<16xf32>
    // expected-note @+1 {{whose bytes are read until here}}
    return %s : tensor<16xf32>
  }
}

// -----

module attributes {loom.memory_plan = {placement = "everything on the device"}} {
  // expected-error @+1 {{has buffers placed by a static memory plan (loom.offsets or loom.fetch ... at) but the module's loom.memory_plan gives no device arena size}}
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// An offloaded activation: its spill is the copy into its host place (a
// second arena argument, after the device's), its reload the copy back
// into its device place; %y's device bytes are free once the spill has
// read them, and %b takes them.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}, host = {bytes = 128 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>, backward = array<i64: 64>, host = array<i64: 64>}} : tensor<2x8xf32>
    %h = loom.spill %y at 64 : tensor<2x8xf32>
    %z = loom.unary exp %x {loom.offsets = {forward = array<i64: 128>}} : tensor<2x8xf32>
    %b = loom.reload %h at 0 : tensor<2x8xf32>
    %r = loom.binary add %b, %z : tensor<2x8xf32>, tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[DEV:[a-z0-9]+]]: memref<256xi8> {loom.arena = "device"}, %[[HOST:[a-z0-9]+]]: memref<128xi8> {loom.arena = "host"})
// CHECK:      %[[Y:.*]] = loom.unary relu
// CHECK:      %[[YP:.*]] = bufferization.materialize_in_destination %[[Y]] in
// CHECK:      memref.view %[[HOST]][%{{.*}}][] : memref<128xi8> to memref<2x8xf32>
// CHECK:      %[[H:.*]] = bufferization.materialize_in_destination %[[YP]] in
// CHECK-NOT:  loom.spill
// CHECK:      memref.view %[[DEV]][%{{.*}}][] : memref<256xi8> to memref<2x8xf32>
// CHECK:      %[[B:.*]] = bufferization.materialize_in_destination %[[H]] in
// CHECK-NOT:  loom.reload
// CHECK:      loom.binary add %[[B]],

// -----

// A spill planned in a host arena the memory plan does not size.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    // expected-error @+1 {{the spilled activation's host copy is planned at offset 0 in the host arena, but the module's loom.memory_plan gives no host arena size}}
    %h = loom.spill %y at 0 : tensor<2x8xf32>
    %b = loom.reload %h at 64 : tensor<2x8xf32>
    return %b : tensor<2x8xf32>
  }
}

// -----

// A reload into device bytes a live buffer holds is refused like any clash.
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}, host = {bytes = 64 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %h = loom.spill %y at 0 : tensor<2x8xf32>
    // expected-note @+1 {{planned at [64, 128)}}
    %z = loom.unary exp %x {loom.offsets = {forward = array<i64: 64>}} : tensor<2x8xf32>
    // expected-error @+1 {{the reloaded activation is planned at bytes [64, 128), which result #0 of the op below still holds}}
    %b = loom.reload %h at 64 : tensor<2x8xf32>
    %r = loom.binary add %b, %z : tensor<2x8xf32>, tensor<2x8xf32>
    // expected-note @+1 {{whose bytes are read until here}}
    return %r : tensor<2x8xf32>
  }
}

// -----

// A placed spill whose reload has no place: the spill is the copy into the
// host arena, the reload its operand (no reload is left reading a copy).
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}, host = {bytes = 64 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %h = loom.spill %y at 0 : tensor<2x8xf32>
    %b = loom.reload %h : tensor<2x8xf32>
    %r = loom.binary add %b, %x : tensor<2x8xf32>, tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK:      memref.view %{{.*}} : memref<64xi8> to memref<2x8xf32>
// CHECK:      %[[H:.*]] = bufferization.materialize_in_destination %{{.*}} in
// CHECK-NOT:  loom.reload
// CHECK:      loom.binary add %[[H]],

// -----

// A weight kept at its place lives throughout: a spill into its bytes (an
// update function's sum sent to the host, say) is refused, naming it, even
// where the function itself never reads the weight; here the second
// moment, slot 1 of its region, at [320, 384).
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}, host = {bytes = 512 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    // expected-error @+1 {{the spilled activation's host copy is planned at bytes [352, 416) of the host arena, where weight 'w.exp_avg_sq' lives throughout, at [320, 384)}}
    %h = loom.spill %y at 352 : tensor<2x8xf32>
    %b = loom.reload %h at 64 : tensor<2x8xf32>
    return %b : tensor<2x8xf32>
  }
  func.func @main_update(%m: tensor<2x8xf32> {loom.weight = {arena_offset = 256 : i64, arena_slot = 1 : i64, file = "", name = "w.exp_avg_sq", offset = 0 : i64, role = "state", tier = "host"}}) -> tensor<2x8xf32> {
    return %m : tensor<2x8xf32>
  }
}

// -----

// A training step's readers of planned bytes get private buffers, so that
// fusion moves none of their reads past a later buffer's write: here the
// exp of %a, whose bytes %b takes later. Not a transpose only matmuls read
// (they read its operand through their maps, loom-fold-into-contractions,
// and compute where they stand), nor a reader of bytes nothing planned
// later takes (%k's, kept to the end).
// CHECK-LABEL: func.func @main(%arg0: tensor<2x8xf32>, %arg1: memref<1024xi8> {loom.arena = "device"}) -> (tensor<8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) attributes {loom.differentiated}
// CHECK:      bufferization.alloc_tensor
// CHECK-NEXT: loom.unary exp
// CHECK-NOT:  bufferization.alloc_tensor
// CHECK:      return
module attributes {loom.memory_plan = {arenas = {device = {bytes = 1024 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> (tensor<8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) attributes {loom.differentiated} {
    %a = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %e = loom.unary exp %a : tensor<2x8xf32>
    %t = loom.transpose %a {permutation = array<i64: 1, 0>} : tensor<2x8xf32>
    %g = loom.matmul %t, %e : tensor<8x2xf32>, tensor<2x8xf32>
    %b = loom.unary exp %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %k = loom.unary relu %b {loom.offsets = {forward = array<i64: 512>}} : tensor<2x8xf32>
    %r = loom.unary exp %k : tensor<2x8xf32>
    return %g, %b, %r : tensor<8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
  }
}

// -----

// A transpose read through by a matmul that runs after a planned buffer
// takes its operand's bytes (%b over %a) gets a private buffer where it
// stands after all: following it would have %a read after %b's write.
// CHECK-LABEL: func.func @main
// CHECK:      bufferization.alloc_tensor
// CHECK-NEXT: loom.transpose
module attributes {loom.memory_plan = {arenas = {device = {bytes = 1024 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<8x8xf32>, tensor<2x8xf32>) attributes {loom.differentiated} {
    %a = loom.unary relu %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %t = loom.transpose %a {permutation = array<i64: 1, 0>} : tensor<2x8xf32>
    %b = loom.unary exp %x {loom.offsets = {forward = array<i64: 0>}} : tensor<2x8xf32>
    %g = loom.matmul %t, %y : tensor<8x2xf32>, tensor<2x8xf32>
    return %g, %b : tensor<8x8xf32>, tensor<2x8xf32>
  }
}

// -----

// An update function that spills a sum rounded to go down takes the
// step's arenas after its arguments (the runtime passes the step's own),
// and the rounding, made just before the spill and read only there, gets
// the spill's host view before it, so that it computes in its place; the
// step, which places nothing, takes none. A sum with a device place of its
// own is copied (above).
module attributes {loom.memory_plan = {arenas = {device = {bytes = 256 : i64}, host = {bytes = 128 : i64}}}} {
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
  func.func @main_update(%sum: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %r = loom.cast %sum : tensor<2x8xf32> to tensor<2x8xbf16>
    %h = loom.spill %r at 64 : tensor<2x8xbf16>
    %w = loom.cast %h {loom.on_host} : tensor<2x8xbf16> to tensor<2x8xf32>
    return %w : tensor<2x8xf32>
  }
}
// CHECK-LABEL: func.func @main(%{{[a-z0-9]+}}: tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-LABEL: func.func @main_update(
// CHECK-SAME: %[[SUM:[a-z0-9]+]]: tensor<2x8xf32>, %{{[a-z0-9]+}}: memref<256xi8> {loom.arena = "device"}, %[[HOST:[a-z0-9]+]]: memref<128xi8> {loom.arena = "host"})
// CHECK:      %[[VIEW:.*]] = memref.view %[[HOST]][%{{.*}}][] : memref<128xi8> to memref<2x8xbf16>
// CHECK:      %[[DEST:.*]] = bufferization.to_tensor %[[VIEW]]
// CHECK:      %[[R:.*]] = loom.cast %[[SUM]]
// CHECK-NEXT: %[[H:.*]] = bufferization.materialize_in_destination %[[R]] in %[[DEST]]
// CHECK-NOT:  loom.spill
// CHECK:      loom.cast %[[H]] {loom.on_host}
