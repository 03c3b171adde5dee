// RUN: loom-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func @identity_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.transpose %x {permutation = array<i64: 0, 1>} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @transposes_compose
// CHECK: %[[T:.+]] = loom.transpose %{{.*}} {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @transposes_compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = loom.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<2x3x4xf32>
  %1 = loom.transpose %0 {permutation = array<i64: 2, 1, 0>} : tensor<3x2x4xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func @transposes_cancel
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transposes_cancel(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32>
  %1 = loom.transpose %0 {permutation = array<i64: 1, 0>} : tensor<3x2xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reshapes_compose
// CHECK: %[[R:.+]] = loom.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshapes_compose(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = loom.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = loom.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  return %1 : tensor<24xf32>
}

// -----

// CHECK-LABEL: func @reshape_constant
// CHECK: %[[C:.+]] = loom.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x2xi64> {
  %c = loom.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = loom.reshape %c : tensor<4xi64> -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func @noop_cast_and_expand
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @noop_cast_and_expand(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %1 = loom.expand %0 : tensor<2x3xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Ops whose result is unused are pure and go away.
// CHECK-LABEL: func @no_dead_ops_kept
// CHECK-NEXT: return
func.func @no_dead_ops_kept(%x: tensor<2x3xf32>) {
  %0 = loom.unary relu %x : tensor<2x3xf32>
  return
}
