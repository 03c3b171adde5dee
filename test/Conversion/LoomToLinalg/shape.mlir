// IR checks of the shape lowering: reshapes as collapse/expand_shape,
// transpose as linalg.transpose, concat as an insert_slice chain, slices as
// extract_slice (reversed by a linalg.generic for negative strides), pads as
// fill + insert_slice or an index-gathering linalg.generic, expand as
// collapse_shape + linalg.broadcast.
// RUN: loom-opt %s --loom-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @reshape_collapse_expand
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf32> into tensor<2x3x2x2xf32>
// CHECK: return %[[C]], %[[E]]
func.func @reshape_collapse_expand(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x2x2xf32>) {
  %0 = loom.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = loom.reshape %x : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  return %0, %1 : tensor<6x4xf32>, tensor<2x3x2x2xf32>
}

// -----

// No reassociation relates 6x4 and 4x6: through a flat tensor.
// CHECK-LABEL: func.func @reshape_general
// CHECK-SAME: (%[[X:.+]]: tensor<6x4xi8>)
// CHECK: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<6x4xi8> into tensor<24xi8>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xi8> into tensor<4x6xi8>
// CHECK: return %[[E]]
func.func @reshape_general(%x: tensor<6x4xui8>) -> tensor<4x6xui8> {
  %0 = loom.reshape %x : tensor<6x4xui8> -> tensor<4x6xui8>
  return %0 : tensor<4x6xui8>
}

// -----

// CHECK-LABEL: func.func @reshape_scalar
// CHECK: tensor.expand_shape %{{.+}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %{{.+}} [] : tensor<1x1xf32> into tensor<f32>
func.func @reshape_scalar(%x: tensor<f32>, %y: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<f32>) {
  %0 = loom.reshape %x : tensor<f32> -> tensor<1x1xf32>
  %1 = loom.reshape %y : tensor<1x1xf32> -> tensor<f32>
  return %0, %1 : tensor<1x1xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: return %[[T]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = loom.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x5xf32>, %[[C:.+]]: tensor<2x1xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x9xf32>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 5] [1, 1]
// CHECK: %[[I2:.+]] = tensor.insert_slice %[[C]] into %[[I1]][0, 8] [2, 1] [1, 1]
// CHECK: return %[[I2]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> tensor<2x9xf32> {
  %0 = loom.concat %a, %b, %c {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>
  return %0 : tensor<2x9xf32>
}

// -----

// CHECK-LABEL: func.func @slice_positive
// CHECK-SAME: (%[[X:.+]]: tensor<16x192xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[X]][0, 64] [8, 64] [2, 1] : tensor<16x192xf32> to tensor<8x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[S]]
func.func @slice_positive(%x: tensor<16x192xf32>) -> tensor<8x64xf32> {
  %0 = loom.slice %x {offsets = array<i64: 0, 64>, sizes = array<i64: 8, 64>, strides = array<i64: 2, 1>} : tensor<16x192xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// x[3:0:-1, ::2]: elements 3, 2, 1 of dim 0 read forwards from 1, reversed.
// CHECK: #[[REV:.+]] = affine_map<(d0, d1) -> (-d0 + 2, d1)>
// CHECK-LABEL: func.func @slice_negative
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[X]][1, 0] [3, 2] [1, 2] : tensor<4x4xf32> to tensor<3x2xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[REV]], #{{.+}}]
// CHECK-SAME: ins(%[[S]] : tensor<3x2xf32>)
// CHECK: return %[[R]]
func.func @slice_negative(%x: tensor<4x4xf32>) -> tensor<3x2xf32> {
  %0 = loom.slice %x {offsets = array<i64: 3, 0>, sizes = array<i64: 3, 2>, strides = array<i64: -1, 2>} : tensor<4x4xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @pad_constant
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK: %[[C:.+]] = tensor.extract_slice %[[X]][1, 0] [3, 4] [1, 1] : tensor<4x4xf32> to tensor<3x4xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[V:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: %[[F:.+]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: %[[I:.+]] = tensor.insert_slice %[[C]] into %[[F]][0, 0] [3, 4] [1, 1]
// CHECK: return %[[I]]
func.func @pad_constant(%x: tensor<4x4xf32>) -> tensor<3x5xf32> {
  %0 = loom.pad constant %x {padding = array<i64: -1, 0, 0, 1>, value = 2.5 : f64} : tensor<4x4xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Integer pad values truncate toward zero.
// CHECK-LABEL: func.func @pad_constant_int
// CHECK: arith.constant -3 : i32
// CHECK: linalg.fill
func.func @pad_constant_int(%x: tensor<4xsi32>) -> tensor<6xsi32> {
  %0 = loom.pad constant %x {padding = array<i64: 1, 1>, value = -3.7 : f64} : tensor<4xsi32>
  return %0 : tensor<6xsi32>
}

// -----

// Reflect: period 2 * (n - 1), mirrored past n.
// CHECK-LABEL: func.func @pad_reflect
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<7xf32>)
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = arith.subi %[[I]], %{{.+}} : index
// CHECK: arith.remsi %[[J]]
// CHECK: arith.select
// CHECK: arith.cmpi sge
// CHECK: %[[SRC:.+]] = arith.select
// CHECK-NEXT: tensor.extract %[[X]][%[[SRC]]] : tensor<4xf32>
func.func @pad_reflect(%x: tensor<4xf32>) -> tensor<7xf32> {
  %0 = loom.pad reflect %x {padding = array<i64: 2, 1>} : tensor<4xf32>
  return %0 : tensor<7xf32>
}

// -----

// Edge clamps; wrap is a positive modulo; unpadded dims read linalg.index.
// CHECK-LABEL: func.func @pad_edge_wrap
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32>)
// CHECK: linalg.generic
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: arith.maxsi
// CHECK: %[[S0:.+]] = arith.minsi
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: tensor.extract %[[X]][%[[S0]], %[[I1]]]
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: tensor.extract
func.func @pad_edge_wrap(%x: tensor<3x4xf32>) -> (tensor<6x4xf32>, tensor<3x9xf32>) {
  %0 = loom.pad edge %x {padding = array<i64: 1, 0, 2, 0>} : tensor<3x4xf32>
  %1 = loom.pad wrap %x {padding = array<i64: 0, 5, 0, 0>} : tensor<3x4xf32>
  return %0, %1 : tensor<6x4xf32>, tensor<3x9xf32>
}

// -----

// Unit dims that broadcast are collapsed away, then linalg.broadcast adds
// every broadcast dim.
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x1xi32>, %[[Y:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<1x3x1xi32> into tensor<3xi32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3x5xi32>
// CHECK: %[[B:.+]] = linalg.broadcast ins(%[[C]] : tensor<3xi32>) outs(%[[E]] : tensor<2x3x5xi32>) dimensions = [0, 2]
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[B2:.+]] = linalg.broadcast ins(%[[Y]] : tensor<4xf32>) outs(%[[E2]] : tensor<2x4xf32>) dimensions = [0]
// CHECK: return %[[B]], %[[B2]]
func.func @expand(%x: tensor<1x3x1xsi32>, %y: tensor<4xf32>) -> (tensor<2x3x5xsi32>, tensor<2x4xf32>) {
  %0 = loom.expand %x : tensor<1x3x1xsi32> -> tensor<2x3x5xsi32>
  %1 = loom.expand %y : tensor<4xf32> -> tensor<2x4xf32>
  return %0, %1 : tensor<2x3x5xsi32>, tensor<2x4xf32>
}
