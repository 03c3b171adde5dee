// RUN: loom-opt %s -split-input-file --loom-split-fused-projections | FileCheck %s

// GPT-2's c_attn as exported from torch.nn.Linear: the weight stored
// [out, in] and read through its transpose, a bias, the result sliced into
// q, k and v. Each part gets its own matmul over a view of the same stored
// weight, retyped [3, 64, 32] (same name, file and offset), and its part of
// the bias.
// CHECK-LABEL: func.func @linear_qkv
// CHECK-DAG: %[[W:.*]] = loom.weight parameter "c_attn.weight" from "m.bin"[64] : tensor<3x64x32xf32>
// CHECK-DAG: %[[B:.*]] = loom.weight parameter "c_attn.bias" from "m.bin"[8256] : tensor<3x64xf32>
// CHECK: %[[W0:.*]] = loom.slice %[[W]] {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 1, 64, 32>, strides = array<i64: 1, 1, 1>}
// CHECK: %[[R0:.*]] = loom.reshape %[[W0]] : tensor<1x64x32xf32> -> tensor<64x32xf32>
// CHECK: %[[T0:.*]] = loom.transpose %[[R0]] {permutation = array<i64: 1, 0>}
// CHECK: %[[M0:.*]] = loom.matmul %arg0, %[[T0]] : tensor<2x8x32xf32>, tensor<32x64xf32>
// CHECK: %[[B0:.*]] = loom.slice %[[B]] {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 64>
// CHECK: %[[BR0:.*]] = loom.reshape %[[B0]] : tensor<1x64xf32> -> tensor<64xf32>
// CHECK: %[[Q:.*]] = loom.binary add %[[BR0]], %[[M0]]
// CHECK: loom.slice %[[W]] {offsets = array<i64: 1, 0, 0>
// CHECK: %[[K:.*]] = loom.binary add
// CHECK: loom.slice %[[W]] {offsets = array<i64: 2, 0, 0>
// CHECK: %[[V:.*]] = loom.binary add
// CHECK-NOT: tensor<2x8x192xf32>
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @linear_qkv(%x: tensor<2x8x32xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %w = loom.weight parameter "c_attn.weight" from "m.bin"[64] : tensor<192x32xf32>
  %b = loom.weight parameter "c_attn.bias" from "m.bin"[8256] : tensor<192xf32>
  %wt = loom.transpose %w {permutation = array<i64: 1, 0>} : tensor<192x32xf32>
  %y = loom.matmul %x, %wt : tensor<2x8x32xf32>, tensor<32x192xf32>
  %yb = loom.binary add %b, %y : tensor<192xf32>, tensor<2x8x192xf32>
  // Slices in any order.
  %v = loom.slice %yb {offsets = array<i64: 0, 0, 128>, sizes = array<i64: 2, 8, 64>, strides = array<i64: 1, 1, 1>} : tensor<2x8x192xf32>
  %q = loom.slice %yb {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 2, 8, 64>, strides = array<i64: 1, 1, 1>} : tensor<2x8x192xf32>
  %k = loom.slice %yb {offsets = array<i64: 0, 0, 64>, sizes = array<i64: 2, 8, 64>, strides = array<i64: 1, 1, 1>} : tensor<2x8x192xf32>
  return %q, %k, %v : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// -----

// HF GPT-2's Conv1D: the weight stored [in, out] and read directly, no bias;
// a gated MLP's fused gate/up (two parts). The weight becomes [32, 2, 128].
// A pinned stage on the projection stays on every part.
// CHECK-LABEL: func.func @direct_gate_up
// CHECK: %[[W:.*]] = loom.weight parameter "mlp.gate_up.weight" from "m.bin"[0] : tensor<32x2x128xbf16>
// CHECK: %[[G:.*]] = loom.slice %[[W]] {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 32, 1, 128>
// CHECK: %[[GR:.*]] = loom.reshape %[[G]] : tensor<32x1x128xbf16> -> tensor<32x128xbf16>
// CHECK: %[[GATE:.*]] = loom.matmul %arg0, %[[GR]] {loom.stage = 1 : i64}
// CHECK: %[[U:.*]] = loom.slice %[[W]] {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 32, 1, 128>
// CHECK: %[[UR:.*]] = loom.reshape %[[U]]
// CHECK: %[[UP:.*]] = loom.matmul %arg0, %[[UR]] {loom.stage = 1 : i64}
// CHECK: loom.binary mul %[[GATE]], %[[UP]]
func.func @direct_gate_up(%x: tensor<4x32xbf16>) -> tensor<4x128xbf16> {
  %w = loom.weight parameter "mlp.gate_up.weight" from "m.bin"[0] : tensor<32x256xbf16>
  %y = loom.matmul %x, %w {loom.stage = 1 : i64} : tensor<4x32xbf16>, tensor<32x256xbf16>
  %g = loom.slice %y {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 128>, strides = array<i64: 1, 1>} : tensor<4x256xbf16>
  %u = loom.slice %y {offsets = array<i64: 0, 128>, sizes = array<i64: 4, 128>, strides = array<i64: 1, 1>} : tensor<4x256xbf16>
  %o = loom.binary mul %g, %u : tensor<4x128xbf16>, tensor<4x128xbf16>
  return %o : tensor<4x128xbf16>
}

// -----

// Left alone: the projection has another reader, the parts are unequal, a
// slice cuts another dimension, and the weight has another reader.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-4: loom.weight parameter {{.*}} : tensor<32x128xf32>
// CHECK-NOT: tensor<32x2x64xf32>
func.func @not_fused(%x: tensor<4x32xf32>) -> (tensor<4x128xf32>, tensor<4x64xf32>, tensor<4x32xf32>, tensor<2x64xf32>, tensor<4x64xf32>, tensor<32x128xf32>) {
  %w1 = loom.weight parameter "a" from "m.bin"[0] : tensor<32x128xf32>
  %y1 = loom.matmul %x, %w1 : tensor<4x32xf32>, tensor<32x128xf32>
  %p1 = loom.slice %y1 {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 64>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %w2 = loom.weight parameter "b" from "m.bin"[0] : tensor<32x128xf32>
  %y2 = loom.matmul %x, %w2 : tensor<4x32xf32>, tensor<32x128xf32>
  %p2 = loom.slice %y2 {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 32>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %q2 = loom.slice %y2 {offsets = array<i64: 0, 32>, sizes = array<i64: 4, 96>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %w3 = loom.weight parameter "c" from "m.bin"[0] : tensor<32x128xf32>
  %y3 = loom.matmul %x, %w3 : tensor<4x32xf32>, tensor<32x128xf32>
  %p3 = loom.slice %y3 {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 64>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %q3 = loom.slice %y3 {offsets = array<i64: 0, 64>, sizes = array<i64: 4, 64>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %w4 = loom.weight parameter "d" from "m.bin"[0] : tensor<32x128xf32>
  %y4 = loom.matmul %x, %w4 : tensor<4x32xf32>, tensor<32x128xf32>
  %p4 = loom.slice %y4 {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 64>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  %q4 = loom.slice %y4 {offsets = array<i64: 0, 64>, sizes = array<i64: 4, 64>, strides = array<i64: 1, 1>} : tensor<4x128xf32>
  return %y1, %p1, %p2, %p3, %p4, %w4 : tensor<4x128xf32>, tensor<4x64xf32>, tensor<4x32xf32>, tensor<2x64xf32>, tensor<4x64xf32>, tensor<32x128xf32>
}
