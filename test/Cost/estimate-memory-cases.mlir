// Memory cases on the unit cluster (f32).
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json global-batch=64 table=none report=%t.json" -o /dev/null
// RUN: FileCheck %s < %t.json

// A buffer (not trained) is held but has no gradient or Adam state: 4096
// parameters -> gradients 16384 bytes, Adam moments 32768; weights hold
// both tensors, 16384 + 1048576. Gradient accumulation over 8 micro-batches
// on one device holds one micro-batch's activations (1F1B), not eight: the
// matmul's input and the result, which the step returns after the backward
// (2048 bytes each).
// CHECK:        "activations": 4096,
// CHECK:        "gradients": 16384,
// CHECK-NEXT:   "optimizer": 32768,
// CHECK:        "weights": 1064960
// CHECK:      "micro_batches_in_flight": 1,
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<64x64xf32>
  %b = loom.weight buffer "b" from "w.bin"[16384] : tensor<4096x64xf32>
  %h = loom.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32>
  %r = loom.reduce sum %b {axes = array<i64: 0>, keep_dims = false} : tensor<4096x64xf32>
  %y = loom.binary add %h, %r : tensor<8x64xf32>, tensor<64xf32>
  return %y : tensor<8x64xf32>
}
