// RUN: loom-opt %s --loom-strided-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func @into_view
// CHECK-SAME: (%[[A:.+]]: memref<2x3xf32>, %[[B:.+]]: memref<2x6xf32>)
// CHECK: %[[V:.+]] = memref.subview %[[B]]
// CHECK: linalg.copy ins(%[[A]] : memref<2x3xf32>) outs(%[[V]] : memref<2x3xf32, strided<[6, 1], offset: 3>>)
// CHECK-NOT: memref.copy
func.func @into_view(%a: memref<2x3xf32>, %b: memref<2x6xf32>) {
  %v = memref.subview %b[0, 3] [2, 3] [1, 1] : memref<2x6xf32> to memref<2x3xf32, strided<[6, 1], offset: 3>>
  memref.copy %a, %v : memref<2x3xf32> to memref<2x3xf32, strided<[6, 1], offset: 3>>
  return
}

// Contiguous copies stay memcpy-able.
// CHECK-LABEL: func @no_contiguous
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @no_contiguous(%a: memref<2x3xf32>, %b: memref<2x3xf32>) {
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  return
}
