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

// A static memory plan's buffers stay: composing would drop the outer op's
// place and read the inner op's input after the plan freed it.
// CHECK-LABEL: func @planned_not_composed
// CHECK: %[[A:.+]] = loom.transpose %{{.*}} {loom.offsets
// CHECK-NEXT: %[[B:.+]] = loom.transpose %[[A]] {permutation
// CHECK: %[[C:.+]] = loom.transpose %{{.*}} {permutation
// CHECK-NEXT: %[[D:.+]] = loom.transpose %[[C]] {loom.pipeline_offsets
// CHECK: %[[E:.+]] = loom.transpose %{{.*}} {permutation
// CHECK-NEXT: %[[F:.+]] = loom.transpose %[[E]] {permutation
// CHECK: %[[R:.+]] = loom.reshape %{{.*}} {loom.offsets
// CHECK-NEXT: loom.reshape %[[R]]
func.func @planned_not_composed(%x: tensor<2x3xf32>, %y: tensor<2x3xf32> {loom.offsets = {forward = array<i64: 0>}}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>) {
  %0 = loom.transpose %x {loom.offsets = {forward = array<i64: 64>}, permutation = array<i64: 1, 0>} : tensor<2x3xf32>
  %1 = loom.transpose %0 {permutation = array<i64: 1, 0>} : tensor<3x2xf32>
  %2 = loom.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32>
  %3 = loom.transpose %2 {loom.pipeline_offsets = {device = 0 : i64, forward = array<i64: 0>}, permutation = array<i64: 1, 0>} : tensor<3x2xf32>
  %4 = loom.transpose %y {permutation = array<i64: 1, 0>} : tensor<2x3xf32>
  %5 = loom.transpose %4 {permutation = array<i64: 1, 0>} : tensor<3x2xf32>
  %6 = loom.reshape %x {loom.offsets = {forward = array<i64: 128>}} : tensor<2x3xf32> -> tensor<3x2xf32>
  %7 = loom.reshape %6 : tensor<3x2xf32> -> tensor<6xf32>
  return %1, %3, %5, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>
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
