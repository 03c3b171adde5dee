// RUN: loom-opt %s | FileCheck %s
// RUN: loom-opt %s --verify-roundtrip
// RUN: loom-opt %s -mlir-print-op-generic | loom-opt | FileCheck %s
// RUN: loom-opt %s -cse | FileCheck %s --check-prefix=CSE

// CHECK-LABEL: func @sources
func.func @sources() -> (tensor<768x3072xf32>, tensor<64xf32>, tensor<2xf32>) {
  // CHECK: loom.weight parameter "h.0.mlp.fc.weight" from "gpt2.bin"[4096] : tensor<768x3072xf32>
  %w = loom.weight parameter "h.0.mlp.fc.weight" from "gpt2.bin"[4096] : tensor<768x3072xf32>
  // CHECK: loom.weight buffer "bn.running_mean" from "m.onnx"[0] : tensor<64xf32>
  %m = loom.weight buffer "bn.running_mean" from "m.onnx"[0] : tensor<64xf32>
  // A float32 master copy of a bf16 parameter, widened from its bytes.
  // CHECK: loom.weight state "h.0.ln.weight.master" from "gpt2.bin"[0] as bf16 : tensor<64xf32>
  %master = loom.weight state "h.0.ln.weight.master" from "gpt2.bin"[0] as bf16 : tensor<64xf32>
  // CHECK: loom.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %w, %m, %c : tensor<768x3072xf32>, tensor<64xf32>, tensor<2xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<2x8xf32>, %b: tensor<8xf32>, %i: tensor<2x8xi64>, %m: tensor<2x1xi1>) {
  // CHECK: loom.unary gelu %{{.*}} : tensor<2x8xf32>
  %0 = loom.unary gelu %x : tensor<2x8xf32>
  // CHECK: loom.unary neg %{{.*}} : tensor<2x8xi64>
  %1 = loom.unary neg %i : tensor<2x8xi64>
  // CHECK: loom.binary add %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8xf32>
  %2 = loom.binary add %x, %b : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: loom.compare lt %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8xf32>
  %3 = loom.compare lt %x, %b : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: loom.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x1xi1>, tensor<2x8xf32>, tensor<8xf32>
  %4 = loom.where %m, %x, %b : tensor<2x1xi1>, tensor<2x8xf32>, tensor<8xf32>
  // CHECK: loom.clamp %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x8xf32>
  %5 = loom.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x8xf32>
  // CHECK: loom.cast %{{.*}} : tensor<2x8xf32> to tensor<2x8xbf16>
  %6 = loom.cast %x : tensor<2x8xf32> to tensor<2x8xbf16>
  return
}

// CHECK-LABEL: func @contractions
func.func @contractions(%x: tensor<2x16x64xf32>, %w: tensor<64x256xf32>,
                        %img: tensor<1x3x32x32xf32>, %k: tensor<8x3x3x3xf32>, %kb: tensor<8xf32>,
                        %q: tensor<2x8x16x32xf32>, %kv: tensor<2x2x16x32xf32>, %mask: tensor<16x16xi1>) {
  // CHECK: loom.matmul %{{.*}}, %{{.*}} : tensor<2x16x64xf32>, tensor<64x256xf32>
  %0 = loom.matmul %x, %w : tensor<2x16x64xf32>, tensor<64x256xf32>
  // CHECK: loom.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %1 = loom.conv %img, %k, %kb {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,
      dilations = array<i64: 1, 1>, groups = 1 : i64}
      : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>
  // CHECK: loom.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {causal}
  %2 = loom.attention %q, %kv, %kv mask %mask {causal}
      : tensor<2x8x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x32xf32>, tensor<16x16xi1>
  return
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %img: tensor<1x8x4x4xf32>, %c: tensor<8xf32>) {
  // CHECK: loom.layer_norm %{{.*}} scale %{{.*}} bias %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64}
  %0 = loom.layer_norm %x scale %g bias %g {axis = 2 : i64, epsilon = 1.0e-5 : f64}
      : tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>
  // CHECK: loom.layer_norm %{{.*}} scale %{{.*}} {axis = 2 : i64
  %1 = loom.layer_norm %x scale %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x16x64xf32>, tensor<64xf32>
  // CHECK: loom.rms_norm %{{.*}} scale %{{.*}}
  %2 = loom.rms_norm %x scale %g {axis = 2 : i64, epsilon = 1.0e-6 : f64} : tensor<2x16x64xf32>, tensor<64xf32>
  // CHECK: loom.batch_norm
  %3 = loom.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f64}
      : tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: loom.softmax %{{.*}} {axis = 2 : i64, log}
  %4 = loom.softmax %x {axis = 2 : i64, log} : tensor<2x16x64xf32>
  // CHECK: loom.reduce mean %{{.*}} {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x8x4x4xf32>
  %5 = loom.reduce mean %img {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x8x4x4xf32>
  // CHECK: loom.reduce argmax %{{.*}} {axes = array<i64: 2>, keep_dims = false} : tensor<2x16x64xf32>
  %6 = loom.reduce argmax %x {axes = array<i64: 2>, keep_dims = false} : tensor<2x16x64xf32>
  // CHECK: loom.pool max %{{.*}} {ceil_mode
  %7 = loom.pool max %img {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x8x4x4xf32>
  return
}

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<2x16x768xf32>, %a: tensor<2x3xf32>, %b: tensor<2x5xf32>,
                  %i: tensor<3xi64>, %ids: tensor<2x16xi64>, %t: tensor<1000x64xf32>) {
  // CHECK: loom.reshape %{{.*}} : tensor<2x16x768xf32> -> tensor<2x16x12x64xf32>
  %0 = loom.reshape %x : tensor<2x16x768xf32> -> tensor<2x16x12x64xf32>
  // CHECK: loom.transpose %{{.*}} {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x16x12x64xf32>
  %1 = loom.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x16x12x64xf32>
  // CHECK: loom.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x5xf32>
  %2 = loom.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x5xf32>
  // CHECK: loom.slice %{{.*}} {offsets = array<i64: 0, 4>, sizes = array<i64: 2, 2>, strides = array<i64: 1, -2>}
  %3 = loom.slice %b {offsets = array<i64: 0, 4>, sizes = array<i64: 2, 2>, strides = array<i64: 1, -2>} : tensor<2x5xf32>
  // CHECK: loom.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x5xf32>, tensor<3xi64>
  %4 = loom.gather %b, %i {axis = 1 : i64} : tensor<2x5xf32>, tensor<3xi64>
  // CHECK: loom.pad reflect %{{.*}} {padding = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32>
  %5 = loom.pad reflect %a {padding = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32>
  // CHECK: loom.expand %{{.*}} : tensor<2x3xf32> -> tensor<4x2x3xf32>
  %6 = loom.expand %a : tensor<2x3xf32> -> tensor<4x2x3xf32>
  // CHECK: loom.embedding %{{.*}}, %{{.*}} : tensor<1000x64xf32>, tensor<2x16xi64>
  %7 = loom.embedding %t, %ids : tensor<1000x64xf32>, tensor<2x16xi64>
  return
}

// CHECK-LABEL: func @routing
func.func @routing(%logits: tensor<64x8xf32>, %x: tensor<64x32xf32>, %d: tensor<4x8xf32>,
                   %di: tensor<4x2xi64>, %du: tensor<4x2xf32>) {
  // CHECK: %[[V:.+]], %[[I:.+]] = loom.topk %{{.*}} {axis = 1 : i64, k = 2 : i64} : tensor<64x8xf32>
  %v, %i = loom.topk %logits {k = 2 : i64, axis = 1 : i64} : tensor<64x8xf32>
  // CHECK: loom.moe_dispatch %{{.*}}, %[[I]] {capacity = 16 : i64, num_experts = 8 : i64}
  %disp = loom.moe_dispatch %x, %i {num_experts = 8 : i64, capacity = 16 : i64}
      : tensor<64x32xf32>, tensor<64x2xi64>
  // CHECK: loom.moe_combine %{{.*}}, %[[I]], %[[V]]
  %comb = loom.moe_combine %disp, %i, %v : tensor<8x16x32xf32>, tensor<64x2xi64>, tensor<64x2xf32>
  // Grouped (GShard) form: groups route independently.
  // CHECK: loom.moe_dispatch {{.*}} : tensor<4x16x32xf32>, tensor<4x16x2xi64>
  %xg = loom.reshape %x : tensor<64x32xf32> -> tensor<4x16x32xf32>
  %ig = loom.reshape %i : tensor<64x2xi64> -> tensor<4x16x2xi64>
  %vg = loom.reshape %v : tensor<64x2xf32> -> tensor<4x16x2xf32>
  %dg = loom.moe_dispatch %xg, %ig {num_experts = 8 : i64, capacity = 4 : i64} : tensor<4x16x32xf32>, tensor<4x16x2xi64>
  // CHECK: loom.moe_combine {{.*}} : tensor<4x8x4x32xf32>, tensor<4x16x2xi64>, tensor<4x16x2xf32>
  %cg = loom.moe_combine %dg, %ig, %vg : tensor<4x8x4x32xf32>, tensor<4x16x2xi64>, tensor<4x16x2xf32>
  // CHECK: loom.scatter %{{.*}}, %{{.*}}, %{{.*}} reduction add {axis = 1 : i64}
  %s = loom.scatter %d, %di, %du reduction add {axis = 1 : i64}
      : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>
  return
}

// CHECK-LABEL: func @movement
func.func @movement(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = loom.weight parameter "w" from "m.bin"[0] : tensor<8x8xf32>
  // CHECK: %[[C:.*]] = loom.fetch %{{.*}} chunk 0 carried : tensor<8x8xf32>
  %c = loom.fetch %w chunk 0 carried : tensor<8x8xf32>
  // CHECK: loom.release %[[C]] : tensor<8x8xf32>
  loom.release %c : tensor<8x8xf32>
  // CHECK: %[[D:.*]] = loom.fetch %{{.*}} chunk 0 : tensor<8x8xf32>
  %d = loom.fetch %w chunk 0 : tensor<8x8xf32>
  %y = loom.matmul %x, %d : tensor<2x8xf32>, tensor<8x8xf32>
  loom.release %d : tensor<8x8xf32>
  // The copy's offset in the device arena of the static memory plan.
  // CHECK: loom.fetch %{{.*}} chunk 0 carried at 4096 : tensor<8x8xf32>
  %e = loom.fetch %w chunk 0 carried at 4096 : tensor<8x8xf32>
  // CHECK: loom.fetch %{{.*}} chunk 0 at 0 : tensor<8x8xf32>
  %f = loom.fetch %w chunk 0 at 0 : tensor<8x8xf32>
  return %y : tensor<2x8xf32>
}

// An activation offloaded for the backward: its host copy, and the copy
// back, each with or without an arena place.
// CHECK-LABEL: func @spill_reload
func.func @spill_reload(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[H:.*]] = loom.spill %{{.*}} at 4096 : tensor<2x8xf32>
  %h = loom.spill %x at 4096 : tensor<2x8xf32>
  // CHECK: loom.reload %[[H]] at 64 : tensor<2x8xf32>
  %b = loom.reload %h at 64 : tensor<2x8xf32>
  // CHECK: %[[G:.*]] = loom.spill %{{.*}} : tensor<2x8xf32>
  %g = loom.spill %x : tensor<2x8xf32>
  // CHECK: loom.reload %[[G]] : tensor<2x8xf32>
  %c = loom.reload %g : tensor<2x8xf32>
  return %b, %c : tensor<2x8xf32>, tensor<2x8xf32>
}

// Two fetches of one weight are two copies: CSE must not merge them.
// CSE-LABEL: func @movement_copies
// CSE-COUNT-2: loom.fetch %{{.*}} chunk 0 :
func.func @movement_copies(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = loom.weight parameter "w" from "m.bin"[0] : tensor<8x8xf32>
  %a = loom.fetch %w chunk 0 : tensor<8x8xf32>
  %y = loom.matmul %x, %a : tensor<2x8xf32>, tensor<8x8xf32>
  loom.release %a : tensor<8x8xf32>
  %b = loom.fetch %w chunk 0 : tensor<8x8xf32>
  %z = loom.matmul %y, %b : tensor<2x8xf32>, tensor<8x8xf32>
  return %z : tensor<2x8xf32>
}
