// Graphs without a run of identical copies: no remark, no annotation, and
// nothing breaks on functions without a body or without compute ops.
// RUN: loom-opt %s -split-input-file --loom-fold="annotate=true" 2>&1 | FileCheck %s --implicit-check-not=remark --implicit-check-not=loom.fold

// Different ops throughout (a conv stem, pooling and a classifier).
// CHECK-LABEL: func.func @distinct
func.func @distinct(%img: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = loom.weight parameter "conv.weight" from "m.bin"[0] : tensor<4x3x3x3xf32>
  %c = loom.conv %img, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  %r = loom.unary relu %c : tensor<1x4x8x8xf32>
  %p = loom.pool max %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x4x8x8xf32>
  %m = loom.reduce mean %p {axes = array<i64: 2, 3>, keep_dims = false} : tensor<1x4x4x4xf32>
  %fc = loom.weight parameter "fc.weight" from "m.bin"[432] : tensor<4x10xf32>
  %y = loom.matmul %m, %fc : tensor<1x4xf32>, tensor<4x10xf32>
  %s = loom.softmax %y {axis = 1 : i64} : tensor<1x10xf32>
  return %s : tensor<1x10xf32>
}

// -----

// The same ops twice, but wired differently: the second residual add reads
// the first block's input instead of its own, so the copies are not
// identical (and a copy reading two copies back is no chain either).
// CHECK-LABEL: func.func @rewired
func.func @rewired(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "l0.fc.weight" from "m.bin"[0] : tensor<16x16xf32>
  %a1 = loom.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x16xf32>
  %g1 = loom.unary gelu %a1 : tensor<4x16xf32>
  %x1 = loom.binary add %x, %g1 : tensor<4x16xf32>, tensor<4x16xf32>
  %w2 = loom.weight parameter "l1.fc.weight" from "m.bin"[1024] : tensor<16x16xf32>
  %a2 = loom.matmul %x1, %w2 : tensor<4x16xf32>, tensor<16x16xf32>
  %g2 = loom.unary gelu %a2 : tensor<4x16xf32>
  %x2 = loom.binary add %x, %g2 : tensor<4x16xf32>, tensor<4x16xf32>
  return %x2 : tensor<4x16xf32>
}

// -----

// Three identical ops: a period of one op is below the default minimum of
// two ops per copy, and two-op copies do not fit twice.
// CHECK-LABEL: func.func @short
func.func @short(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.unary relu %x : tensor<4xf32>
  %b = loom.unary relu %a : tensor<4xf32>
  %c = loom.unary relu %b : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func private @declaration
func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @weights_only
func.func @weights_only() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.weight parameter "a" from "m.bin"[0] : tensor<4xf32>
  %b = loom.weight parameter "b" from "m.bin"[16] : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
