// RUN: loom-opt %s -split-input-file --loom-autodiff -verify-diagnostics | FileCheck %s

// What gets differentiated. The float result gets a cotangent (named after
// its position when it has no name); the integer result gets none. The
// trainable weights get gradients in program order: the unused one zeros,
// marked loom.no_gradient (so --loom-optimizer-step leaves it alone), the
// buffer none. The convolution reads only the input, never a weight,
// so it needs no rule; the argmax yields integers and is never active.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<1x2x4x4xf32>, %[[G:.+]]: tensor<2x4xf32> {loom.cotangent_of = 0 : i64, loom.name = "result0.grad"})
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<2xi64>, tensor<4x4xf32> {loom.gradient_of = "w", loom.name = "w.grad"}, tensor<3xf32> {loom.gradient_of = "unused", loom.name = "unused.grad", loom.no_gradient})
// CHECK-SAME: attributes {loom.differentiated}
func.func @main(%x: tensor<1x2x4x4xf32>) -> (tensor<2x4xf32>, tensor<2xi64>) {
  %k = loom.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = loom.conv %x, %k {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>
  %r = loom.reshape %c : tensor<1x2x4x4xf32> -> tensor<2x16xf32>
  %s = loom.slice %r {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>} : tensor<2x16xf32>
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4x4xf32>
  %unused = loom.weight parameter "unused" from "w.bin"[64] : tensor<3xf32>
  %stat = loom.weight buffer "stat" from "w.bin"[76] : tensor<4xf32>
  %y = loom.matmul %s, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %z = loom.binary add %y, %stat : tensor<2x4xf32>, tensor<4xf32>
  %i = loom.reduce argmax %z {axes = array<i64: 1>, keep_dims = false} : tensor<2x4xf32>
  // The weight's gradient: the input's rows against the cotangent.
  // CHECK: %[[ST:.+]] = loom.transpose %[[S:.+]] {permutation = array<i64: 1, 0>} : tensor<2x4xf32>
  // CHECK-NEXT: %[[DW:.+]] = loom.matmul %[[ST]], %[[G]] : tensor<4x2xf32>, tensor<2x4xf32>
  // CHECK: %[[ZERO:.+]] = loom.constant dense<0.000000e+00> : tensor<3xf32>
  // CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[DW]], %[[ZERO]] :
  return %z, %i : tensor<2x4xf32>, tensor<2xi64>
}

// -----

// An op without a rule between a weight and a result is an error naming it;
// so is an active op with several results.

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4x8xf32>
  %y = loom.binary mul %x, %w : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-error @+1 {{loom-autodiff: no gradient rule for 'loom.topk', which lies between a trainable parameter and a result (it has several results)}}
  %v, %i = loom.topk %y {k = 2 : i64, axis = 1 : i64} : tensor<4x8xf32>
  return %v : tensor<4x2xf32>
}

// -----

// The function is found by name (`entry`, main by default).
// expected-error @+1 {{loom-autodiff: no function 'main' to differentiate}}
module {
  func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A pipelined plan: each forward op's backward step is in the backward of
// its stage (loom.stage, loom.backward), which loom-split-stages runs on the
// stage's devices after the forward. The cotangent is cut into micro-batches
// as its result is (loom.batch_dim).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4xf32> {loom.batch_dim = 0 : i64}, %[[G:.+]]: tensor<4xf32> {loom.batch_dim = 0 : i64, loom.cotangent_of = 0 : i64, loom.name = "result0.grad"})
// CHECK: %[[Y:.+]] = loom.binary mul %[[X]], %[[W:.+]] {loom.stage = 0 : i64}
// CHECK-NEXT: loom.binary mul %[[Y]], %[[W]] {loom.stage = 1 : i64}
// CHECK-NEXT: %[[GW1:.+]] = loom.binary mul %[[G]], %[[Y]] {loom.backward, loom.stage = 1 : i64}
// CHECK-NEXT: %[[GY:.+]] = loom.binary mul %[[G]], %[[W]] {loom.backward, loom.stage = 1 : i64}
// CHECK-NEXT: %[[GW0:.+]] = loom.binary mul %[[GY]], %[[X]] {loom.backward, loom.stage = 0 : i64}
// CHECK-NEXT: loom.binary add %[[GW1]], %[[GW0]] {loom.backward, loom.stage = 0 : i64}
func.func @main(%x: tensor<4xf32> {loom.batch_dim = 0 : i64}) -> (tensor<4xf32> {loom.batch_dim = 0 : i64}) attributes {loom.micro_batches = 2 : i64} {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %y = loom.binary mul %x, %w {loom.stage = 0 : i64} : tensor<4xf32>, tensor<4xf32>
  %z = loom.binary mul %y, %w {loom.stage = 1 : i64} : tensor<4xf32>, tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// After loom-split-stages the entry is its stage functions: too late.
// expected-error @+1 {{loom-autodiff: 'main' is split into 2 pipeline stage functions; differentiate the pipelined plan before loom-split-stages}}
module {
  func.func @main_stage0(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @main_stage1(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Which weights have a gradient, as PyTorch's autograd gives a leaf one: a
// weight a result reads through a rounding op has zeros (its update still
// applies weight decay); one read only through a comparison (a gate) or an
// argmax has none (loom.no_gradient: --loom-optimizer-step leaves it alone).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<4xf32> {loom.gradient_of = "rounded", loom.name = "rounded.grad"},
// CHECK-SAME: tensor<4xf32> {loom.gradient_of = "gate", loom.name = "gate.grad", loom.no_gradient},
// CHECK-SAME: tensor<4xf32> {loom.gradient_of = "picked", loom.name = "picked.grad", loom.no_gradient})
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>) {
  %r = loom.weight parameter "rounded" from "w.bin"[0] : tensor<4xf32>
  %g = loom.weight parameter "gate" from "w.bin"[16] : tensor<4xf32>
  %p = loom.weight parameter "picked" from "w.bin"[32] : tensor<4xf32>
  %rr = loom.unary round %r : tensor<4xf32>
  %y = loom.binary mul %x, %rr : tensor<4xf32>, tensor<4xf32>
  %zero = loom.constant dense<0.0> : tensor<f32>
  %open = loom.compare gt %g, %zero : tensor<4xf32>, tensor<f32>
  %z = loom.where %open, %y, %zero : tensor<4xi1>, tensor<4xf32>, tensor<f32>
  %i = loom.reduce argmax %p {axes = array<i64: 0>, keep_dims = false} : tensor<4xf32>
  return %z, %i : tensor<4xf32>, tensor<i64>
}
