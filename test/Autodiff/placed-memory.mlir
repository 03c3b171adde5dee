// RUN: loom-opt %s -split-input-file --loom-autodiff -verify-diagnostics | FileCheck %s

// The backward of a placed program carries out memory placement's
// decisions: streamed weights move as the chunk schedule says
// (loom.backward_movement and loom.rerun_movement, written by
// --loom-place-memory), and values the plan recomputes are re-run for the
// backward. test/Memory/
// place-memory-train-step.test runs such steps against unplaced ones.

// The backward of %z reads chunk 1's live copy; before the backward of %y,
// chunk 1 is released and chunk 0 fetched back, at its chunk's offset plus
// the weight's, and %y's rule reads that copy.
// CHECK-LABEL: func.func @main(
// CHECK: %[[W0:.+]] = loom.weight parameter "w0"
// CHECK: %[[D0:.+]] = loom.fetch %[[W0]] chunk 0 at 16
// CHECK: %[[Y:.+]] = loom.binary mul %[[D0]], %[[D0]] :
// CHECK-NEXT: loom.release %[[D0]]
// CHECK: %[[D1:.+]] = loom.fetch %{{.+}} chunk 1 at 0
// CHECK: %[[Z:.+]] = loom.binary mul %[[Y]], %[[D1]]
// CHECK: loom.binary mul %{{.+}}, %[[D1]]
// CHECK: loom.release %[[D1]]
// CHECK-NEXT: %[[B0:.+]] = loom.fetch %[[W0]] chunk 0 at 16
// CHECK-NOT: %[[D0]]{{[, ]}}
// CHECK: loom.binary mul %{{.+}}, %[[B0]]
// CHECK-NOT: %[[D0]]{{[, ]}}
// CHECK: return
// CHECK-NOT: loom.backward_movement
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w0 = loom.weight parameter "w0" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64, chunk_offset = 16 : i64}} : tensor<4xf32>
  %d0 = loom.fetch %w0 chunk 0 at 16 : tensor<4xf32>
  %y = loom.binary mul %d0, %d0 {loom.backward_movement = {release = array<i64: 1>, fetch = array<i64: 0>, at = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  loom.release %d0 : tensor<4xf32>
  %w1 = loom.weight parameter "w1" from "w.bin"[16] {loom.placement = {tier = "host", chunk = 1 : i64, chunk_offset = 0 : i64}} : tensor<4xf32>
  %d1 = loom.fetch %w1 chunk 1 at 0 : tensor<4xf32>
  %z = loom.binary mul %y, %d1 : tensor<4xf32>, tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Released after the forward and never fetched back: the backward cannot
// read it.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64}} : tensor<4xf32>
  %d = loom.fetch %w chunk 0 : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the backward reads streamed weight 'w' where the chunk schedule has released it and not fetched it back}}
  %y = loom.binary mul %d, %d : tensor<4xf32>, tensor<4xf32>
  loom.release %d : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64}} : tensor<4xf32>
  %d = loom.fetch %w chunk 0 : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: malformed loom.backward_movement (wants release, fetch and at arrays, `at` empty or one per fetch)}}
  %y = loom.binary mul %d, %x {loom.backward_movement = {release = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64}} : tensor<4xf32>
  %d = loom.fetch %w chunk 0 : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the chunk schedule fetches weight 'w' before this op's backward while its copy is live}}
  %y = loom.binary mul %d, %x {loom.backward_movement = {release = array<i64>, fetch = array<i64: 0>, at = array<i64>}} : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64}} : tensor<4xf32>
  %d = loom.fetch %w chunk 0 : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the chunk schedule fetches chunk 3, which no weight's loom.placement names}}
  %y = loom.binary mul %d, %x {loom.backward_movement = {release = array<i64: 0>, fetch = array<i64: 3>, at = array<i64>}} : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Recomputed values, by a mark (a user's, the search's, placement's
// segments) or by the static memory plan (a backward buffer without a host
// copy): the backward reads a copy re-run from the kept input at the turn
// of the value's last reader, and never the forward's.
// CHECK-LABEL: func.func @main(
// CHECK: %[[A:.+]] = loom.binary mul
// CHECK: %[[T:.+]] = loom.unary tanh %[[A]] {loom.recompute}
// CHECK: %[[S:.+]] = loom.unary sigmoid %[[T]] {loom.offsets = {backward = array<i64: 64>, forward = array<i64: 32>}}
// CHECK: %[[E:.+]] = loom.unary exp %[[S]] {loom.offsets = {forward = array<i64: 96>}}
// CHECK: %[[T2:.+]] = loom.unary tanh %[[A]] :
// The plan's backward place is where the re-run writes.
// CHECK-NEXT: %[[S2:.+]] = loom.unary sigmoid %[[T2]] {loom.offsets = {forward = array<i64: 64>}} :
// CHECK-NOT: %[[T]]{{[, ]}}
// CHECK-NOT: %[[S]]{{[, ]}}
// CHECK: return %[[E]],
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %a = loom.binary mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %t = loom.unary tanh %a {loom.recompute} : tensor<4xf32>
  %s = loom.unary sigmoid %t {loom.offsets = {forward = array<i64: 32>, backward = array<i64: 64>}} : tensor<4xf32>
  %e = loom.unary exp %s {loom.offsets = {forward = array<i64: 96>}} : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// A recomputed op that reads a streamed weight re-runs at the backward turn
// of its last reader (recomputePoints), after the movement the chunk
// schedule issues before that re-run (loom.rerun_movement): chunk 0, released
// in the forward, comes back for it, and %t's backward reads the re-run.
// CHECK-LABEL: func.func @main(
// CHECK: %[[W0:.+]] = loom.weight parameter "w0"
// CHECK: %[[D0:.+]] = loom.fetch %[[W0]] chunk 0 at 16
// CHECK: %[[A:.+]] = loom.binary mul %{{.+}}, %[[D0]] {loom.recompute}
// CHECK-NEXT: loom.release %[[D0]]
// CHECK: loom.binary mul %[[A]], %[[A]]
// CHECK: %[[B0:.+]] = loom.fetch %[[W0]] chunk 0 at 16
// CHECK-NEXT: %[[A2:.+]] = loom.binary mul %{{.+}}, %[[B0]] :
// CHECK-NOT: %[[A]]{{[, ]}}
// CHECK-NOT: %[[D0]]{{[, ]}}
// CHECK: loom.binary mul %{{.+}}, %[[A2]]
// CHECK: return
// CHECK-NOT: loom.rerun_movement
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w0 = loom.weight parameter "w0" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64, chunk_offset = 16 : i64}} : tensor<4xf32>
  %d0 = loom.fetch %w0 chunk 0 at 16 : tensor<4xf32>
  %a = loom.binary mul %x, %d0 {loom.recompute, loom.rerun_movement = {release = array<i64>, fetch = array<i64: 0>, at = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  loom.release %d0 : tensor<4xf32>
  %t = loom.binary mul %a, %a : tensor<4xf32>, tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// The step returns %t and so holds it until it ends: the backward reads it
// as it is, whatever its mark, and placement plans no re-run for it
// (resultsHeldByStep).
// CHECK-LABEL: func.func @main(
// CHECK: %[[T:.+]] = loom.unary tanh %{{.+}} {loom.recompute}
// CHECK-NOT: loom.unary tanh
// CHECK: loom.binary mul %[[T]], %[[T]]
// CHECK-NOT: loom.unary tanh
// CHECK: return %[[T]],
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %a = loom.binary mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %t = loom.unary tanh %a {loom.recompute} : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Movement for a re-run the backward does not make is an error: the chunk
// schedule and the backward would disagree on what is live.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host", chunk = 0 : i64}} : tensor<4xf32>
  %d = loom.fetch %w chunk 0 : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the chunk schedule moves weights for this op's re-run (loom.rerun_movement), but the plan does not recompute it}}
  %y = loom.binary mul %d, %x {loom.rerun_movement = {release = array<i64>, fetch = array<i64>, at = array<i64>}} : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An activation the plan offloads (a host place in loom.offsets) is spilled
// after its op and reloaded, into its backward place, before the first
// backward step that reads it (relu's reads its input).
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = loom.binary mul %arg0, %{{.*}} {loom.offsets
// CHECK-NEXT: %[[H:.*]] = loom.spill %[[A]] at 0 : tensor<4xf32>
// CHECK: loom.binary mul %arg1, %[[B:.*]] :
// CHECK: %[[R:.*]] = loom.reload %[[H]] at 16 : tensor<4xf32>
// CHECK-NEXT: loom.constant
// CHECK-NEXT: loom.constant
// CHECK-NEXT: loom.compare gt %[[R]]
// CHECK-NOT: loom.reload
// CHECK: return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %v = loom.weight parameter "v" from "w.bin"[16] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 0>, backward = array<i64: 16>, host = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  %b = loom.unary relu %a : tensor<4xf32>
  %t = loom.binary mul %b, %v : tensor<4xf32>, tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Offloaded and read by a re-run: the reload comes before the re-run at
// its point (the backward turn of %t, whose rule reads %b), not before
// the backward of its own reader; an offloaded argument is spilled on
// entry.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[X:.*]] = loom.spill %arg0 at 64 : tensor<4xf32>
// CHECK: %[[A:.*]] = loom.binary mul %arg0, %{{.*}} {loom.offsets
// CHECK-NEXT: %[[H:.*]] = loom.spill %[[A]] at 0 : tensor<4xf32>
// CHECK: %[[R:.*]] = loom.reload %[[H]] at 16 : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = loom.unary relu %[[R]] : tensor<4xf32>
// CHECK-NEXT: loom.binary mul %arg1, %[[B]]
// CHECK: loom.compare gt %[[R]]
// CHECK: %[[XR:.*]] = loom.reload %[[X]] at 80 : tensor<4xf32>
// CHECK-NEXT: loom.binary mul %{{.*}}, %[[XR]]
func.func @main(%x: tensor<4xf32> {loom.offsets = {forward = array<i64: 48>, backward = array<i64: 80>, host = array<i64: 64>}}) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %v = loom.weight parameter "v" from "w.bin"[16] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 0>, backward = array<i64: 16>, host = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  %b = loom.unary relu %a {loom.recompute} : tensor<4xf32>
  %t = loom.binary mul %b, %v : tensor<4xf32>, tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Without a static plan, a `loom.offload` mark spills the op's results
// with no place; what no backward reads is not spilled at all (the mul's
// rule reads %x and %w, tanh's its result).
// CHECK-LABEL: func.func @main
// CHECK: loom.binary mul %arg0, %{{.*}} {loom.offload}
// CHECK-NEXT: %[[T:.*]] = loom.unary tanh %{{.*}} {loom.offload}
// CHECK-NEXT: %[[H:.*]] = loom.spill %[[T]] : tensor<4xf32>
// CHECK: %[[R:.*]] = loom.reload %[[H]] : tensor<4xf32>
// CHECK-NEXT: loom.binary mul %[[R]], %[[R]]
// CHECK-NOT: loom.spill
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %v = loom.weight parameter "v" from "w.bin"[16] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.offload} : tensor<4xf32>, tensor<4xf32>
  %b = loom.unary tanh %a {loom.offload} : tensor<4xf32>
  %t = loom.binary add %b, %v : tensor<4xf32>, tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// What the step returns stays on the device: a plan offloading it is refused
// before anything is written.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the static memory plan offloads a result of this op to host memory, but the step returns it}}
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 0>, backward = array<i64: 16>, host = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// ZeRO-3: a weight stored in shards over its replicas is gathered again
// for the backward step that reads it (a new reader's annotation, numbered
// after the forward's), and its gradient is returned in the stored layout
// (for the return, marked like the rest of ZeRO-3's annotations), so
// partitioning reduce-scatters it; a weight without stored shards is
// returned as it was.
// CHECK-LABEL: func.func @main
// CHECK: %[[STORED:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] {loom.zero_shard}
// CHECK-NEXT: %[[Z:.+]] = shard.shard %{{.+}} to %[[STORED]] {loom.zero_shard}
// CHECK: %[[READ:.+]] = shard.sharding @grid split_axes = {{\[\[}}]] {loom.zero_shard}
// CHECK-NEXT: %[[U:.+]] = shard.shard %[[Z]] to %[[READ]] annotate_for_users {loom.zero_shard = 0 : i64}
// CHECK: loom.binary mul %{{.+}}, %[[U]]
// CHECK-NOT: %[[U]]{{[ ,]}}
// CHECK: %[[AGAIN:.+]] = shard.shard %[[Z]] to %[[READ]] annotate_for_users {loom.zero_shard = 1 : i64}
// CHECK: loom.binary mul %{{.+}}, %[[AGAIN]]
// CHECK: %[[G:.+]] = shard.shard %{{.+}} to %[[STORED]] annotate_for_users {loom.zero_shard}
// CHECK-NEXT: return %{{.+}}, %[[G]], %{{[0-9]+}} :
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8xf32>
  %s = shard.sharding @grid split_axes = [[0]] {loom.zero_shard} : !shard.sharding
  %z = shard.shard %w to %s {loom.zero_shard} : tensor<8xf32>
  %r = shard.sharding @grid split_axes = [[]] {loom.zero_shard} : !shard.sharding
  %u = shard.shard %z to %r annotate_for_users {loom.zero_shard = 0 : i64} : tensor<8xf32>
  %v = loom.weight parameter "v" from "w.bin"[32] : tensor<8xf32>
  %h = loom.binary add %x, %v : tensor<4x8xf32>, tensor<8xf32>
  %a = loom.binary mul %h, %u : tensor<4x8xf32>, tensor<8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// ZeRO-2: the weight stays whole and its gradient is returned in the
// layout its loom.zero_gradient gives (split axes per dimension).
// CHECK-LABEL: func.func @main
// CHECK: %[[LAYOUT:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] {loom.zero_shard}
// CHECK-NEXT: %[[G:.+]] = shard.shard %{{.+}} to %[[LAYOUT]] annotate_for_users {loom.zero_shard}
// CHECK-NEXT: return %{{.+}}, %[[G]] :
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.zero_gradient = [array<i16: 0>]} : tensor<8xf32>
  %a = loom.binary mul %x, %w : tensor<4x8xf32>, tensor<8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// A weight-gradient matmul makes the gradient in the layout the plan reads
// the weight in (column-parallel over tp here) before ZeRO's split, so
// partitioning sums it over dp and keeps a shard (a reduce-scatter) rather
// than moving the activations to compute the shard directly.
// CHECK-LABEL: func.func @main
// CHECK: loom.weight parameter "w"
// CHECK-NEXT: %[[PLAN:.+]] = shard.sharding @grid split_axes = {{\[\[}}], [1]] :
// CHECK-NEXT: shard.shard %{{.+}} to %[[PLAN]] annotate_for_users
// CHECK: loom.matmul
// CHECK: %[[DW:.+]] = loom.matmul
// CHECK-NEXT: %[[LAYOUT:.+]] = shard.sharding @grid split_axes = {{\[\[}}0], [1]] {loom.zero_shard}
// CHECK-NEXT: %[[WHOLE:.+]] = shard.shard %[[DW]] to %[[PLAN]] {loom.zero_shard}
// CHECK-NEXT: %[[G:.+]] = shard.shard %[[WHOLE]] to %[[LAYOUT]] annotate_for_users {loom.zero_shard}
// CHECK-NEXT: return %{{.+}}, %[[G]] :
shard.grid @grid(shape = 2x2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.zero_gradient = [array<i16: 0>, array<i16: 1>]} : tensor<8x16xf32>
  %c = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %u = shard.shard %w to %c annotate_for_users : tensor<8x16xf32>
  %a = loom.matmul %x, %u : tensor<4x8xf32>, tensor<8x16xf32>
  return %a : tensor<4x16xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{loom-autodiff: loom.zero_gradient gives a gradient layout, but the module has no shard.grid}}
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.zero_gradient = [array<i16: 0>]} : tensor<8xf32>
  %a = loom.binary mul %x, %w : tensor<4x8xf32>, tensor<8xf32>
  return %a : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{loom-autodiff: loom.zero_gradient must be an array of i16 arrays (split axes per dimension)}}
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.zero_gradient = [0]} : tensor<8xf32>
  %a = loom.binary mul %x, %w : tensor<4x8xf32>, tensor<8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// In a partitioned program a reader reads an offloaded value through its
// sharding annotation: the backward reads the annotation again, on the
// reload (and partitioning shards the spill and reload as their operand).
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.+]] = loom.binary mul %arg0, %{{.+}} {loom.offsets
// CHECK-NEXT: %[[H:.+]] = loom.spill %[[A]] at 0 : tensor<4x8xf32>
// CHECK: %[[S:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]]
// CHECK: %[[R:.+]] = loom.reload %[[H]] at 128 : tensor<4x8xf32>
// CHECK-NEXT: %[[RS:.+]] = shard.shard %[[R]] to %[[S]] annotate_for_users
// CHECK: loom.compare gt %[[RS]]
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8xf32>
  %v = loom.weight parameter "v" from "w.bin"[32] : tensor<8xf32>
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 0>, backward = array<i64: 128>, host = array<i64: 0>}} : tensor<4x8xf32>, tensor<8xf32>
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %as = shard.shard %a to %s annotate_for_users : tensor<4x8xf32>
  %b = loom.unary relu %as : tensor<4x8xf32>
  %t = loom.binary mul %b, %v : tensor<4x8xf32>, tensor<8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Activations' gradients where the plan holds them (`gradient` of
// loom.offsets): the op computing a result's final adjoint writes it at
// that place. %e's gradient is the sum of %h's two contributions, %a's the
// sum of %s's (passed on unchanged by the add's rule) and exp's: both adds
// are placed. %h's and %s's gradients are the cotangent itself, an
// argument, and stay where they are.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[COT:[a-z0-9]+]]: tensor<4xf32> {loom.cotangent_of = 0
// CHECK:      %[[E:.+]] = loom.unary exp
// CHECK:      %[[C1:.+]] = loom.binary mul %[[COT]], %[[E]] : tensor<4xf32>
// CHECK:      %[[C2:.+]] = loom.binary mul %[[COT]], %[[E]] : tensor<4xf32>
// CHECK:      %[[GE:.+]] = loom.binary add %[[C2]], %[[C1]] {loom.offsets = {forward = array<i64: 192>}}
// CHECK:      %[[C3:.+]] = loom.binary mul %[[GE]], %[[E]] : tensor<4xf32>
// CHECK:      loom.binary add %[[COT]], %[[C3]] {loom.offsets = {forward = array<i64: 64>}}
// CHECK-NOT:  forward = array<i64: 128>
// CHECK-NOT:  forward = array<i64: 0>
// CHECK:      return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 256>, gradient = array<i64: 64>}} : tensor<4xf32>, tensor<4xf32>
  %e = loom.unary exp %a {loom.offsets = {forward = array<i64: 272>, gradient = array<i64: 192>}} : tensor<4xf32>
  %h = loom.binary mul %e, %e {loom.offsets = {forward = array<i64: 288>, gradient = array<i64: 128>}} : tensor<4xf32>, tensor<4xf32>
  %s = loom.binary add %h, %a {loom.offsets = {forward = array<i64: 304>, gradient = array<i64: 0>}} : tensor<4xf32>, tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A gradient the rule passes on unchanged is another value's adjoint too,
// even where that value's adjoint is summed later: the sub hands %d's
// gradient to %a, whose exp reader's backward adds to it after %d's own
// backward, where the plan has freed %d's gradient. So %d's gradient (at
// 192) is not placed; %a's final sum (at 64) is.
// CHECK-LABEL: func.func @main(
// CHECK:      loom.unary tanh
// CHECK:      %[[GD:[0-9]+]] = loom.binary mul %arg1, %{{[0-9]+}} : tensor<4xf32>, tensor<4xf32>
// CHECK-NOT:  forward = array<i64: 192>
// CHECK:      loom.binary add %[[GD]], %{{[0-9]+}} {loom.offsets = {forward = array<i64: 64>}}
// CHECK-NOT:  forward = array<i64: 192>
// CHECK:      return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %a = loom.binary mul %x, %w {loom.offsets = {forward = array<i64: 256>, gradient = array<i64: 64>}} : tensor<4xf32>, tensor<4xf32>
  %e = loom.unary exp %a {loom.offsets = {forward = array<i64: 272>, gradient = array<i64: 128>}} : tensor<4xf32>
  %d = loom.binary sub %a, %e {loom.offsets = {forward = array<i64: 288>, gradient = array<i64: 192>}} : tensor<4xf32>, tensor<4xf32>
  %r = loom.unary tanh %d {loom.offsets = {forward = array<i64: 304>, gradient = array<i64: 0>}} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A pipelined plan's offload (places by micro-batch): %y is spilled by its
// own stage at its host places and reloaded by that stage's backward at its
// backward places; the copy device 1 receives and offloads (its
// loom.received_offsets entry) is spilled by stage 1 before its reader
// there, and reloaded by stage 1's backward.
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32> {loom.cotangent_of = 0 : i64, loom.name = "result0.grad"}) -> (tensor<4xf32>, tensor<4xf32> {loom.gradient_of = "w0"
// CHECK:      %[[Y:.+]] = loom.binary mul
// CHECK-NEXT: %[[H0:.+]] = loom.spill %[[Y]] {loom.pipeline_offsets = {device = 0 : i64, host = array<i64: 0, 16>}, loom.stage = 0 : i64}
// CHECK-NEXT: loom.binary mul %[[Y]], %{{.+}} {loom.stage = 0 : i64}
// CHECK-NEXT: %[[H1:.+]] = loom.spill %[[Y]] {loom.pipeline_offsets = {device = 1 : i64, host = array<i64: 64, 80>}, loom.stage = 1 : i64}
// CHECK-NEXT: loom.binary mul %[[Y]], %{{.+}} {loom.stage = 1 : i64}
// CHECK:      %[[R1:.+]] = loom.reload %[[H1]] {loom.backward, loom.pipeline_offsets = {device = 1 : i64, forward = array<i64: 32, 48>}, loom.stage = 1 : i64}
// CHECK-NEXT: loom.binary mul %{{.+}}, %[[R1]] {loom.backward, loom.stage = 1 : i64}
// CHECK:      %[[R0:.+]] = loom.reload %[[H0]] {loom.backward, loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 32, 48>}, loom.stage = 0 : i64}
// CHECK-NEXT: loom.binary mul %{{.+}}, %[[R0]] {loom.backward, loom.stage = 0 : i64}
shard.grid @pp(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {loom.micro_batches = 2 : i64} {
  %w0 = loom.weight parameter "w0" from "w.bin"[0] : tensor<4xf32>
  %w1 = loom.weight parameter "w1" from "w.bin"[16] : tensor<4xf32>
  %w2 = loom.weight parameter "w2" from "w.bin"[32] : tensor<4xf32>
  %y = loom.binary mul %x, %w0 {loom.stage = 0 : i64, loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 16>, backward = array<i64: 32, 48>, host = array<i64: 0, 16>}, loom.received_offsets = [{device = 1 : i64, forward = array<i64: 0, 16>, backward = array<i64: 32, 48>, host = array<i64: 64, 80>}]} : tensor<4xf32>, tensor<4xf32>
  %e = loom.binary mul %y, %w1 {loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %z = loom.binary mul %y, %w2 {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  %s = loom.binary add %z, %e {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

shard.grid @pp(shape = 2) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {loom.micro_batches = 2 : i64} {
  %w0 = loom.weight parameter "w0" from "w.bin"[0] : tensor<4xf32>
  %w1 = loom.weight parameter "w1" from "w.bin"[16] : tensor<4xf32>
  // expected-error @+1 {{loom-autodiff: the static memory plan offloads result #0 of 'loom.binary' in some micro-batches but not in others (loom.pipeline_offsets `host`: array<i64: 0, -1>)}}
  %y = loom.binary mul %x, %w0 {loom.stage = 0 : i64, loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0, 16>, backward = array<i64: 32, -1>, host = array<i64: 0, -1>}} : tensor<4xf32>, tensor<4xf32>
  %z = loom.binary mul %y, %w1 {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  return %z : tensor<4xf32>
}
