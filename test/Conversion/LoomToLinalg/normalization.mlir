// RUN: loom-opt %s --loom-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @reduce_mean_keep
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<3xf32>)
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<3xf32>) dimensions = [0, 2]
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<3xf32>)
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: arith.divf
// CHECK: %[[R:.+]] = tensor.expand_shape %[[MEAN]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK: return %[[R]]
func.func @reduce_mean_keep(%x: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
  %0 = loom.reduce mean %x {axes = array<i64: 0, 2>, keep_dims = true} : tensor<2x3x4xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_l2
// CHECK: linalg.reduce
// CHECK: %[[SQ:.+]] = arith.mulf %[[IN:.+]], %[[IN]] : f32
// CHECK: arith.addf %[[SQ]]
// CHECK: linalg.generic
// CHECK: math.sqrt
func.func @reduce_l2(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = loom.reduce l2 %x {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xf32>
  return %0 : tensor<2xf32>
}

// -----

// Unsigned max reads its signedness from the loom type.
// CHECK-LABEL: func.func @reduce_max_unsigned
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xi8>) -> tensor<2xi8>
// CHECK: %[[MIN:.+]] = arith.constant 0 : i8
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[MIN]] : i8)
// CHECK: linalg.reduce ins(%[[X]] : tensor<2x3xi8>) outs(%[[INIT]] : tensor<2xi8>) dimensions = [1]
// CHECK: arith.maxui
func.func @reduce_max_unsigned(%x: tensor<2x3xui8>) -> tensor<2xui8> {
  %0 = loom.reduce max %x {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xui8>
  return %0 : tensor<2xui8>
}

// -----

// CHECK-LABEL: func.func @reduce_min_signed
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.minsi
func.func @reduce_min_signed(%x: tensor<4xsi32>) -> tensor<si32> {
  %0 = loom.reduce min %x {axes = array<i64: 0>, keep_dims = false} : tensor<4xsi32>
  return %0 : tensor<si32>
}

// -----

// CHECK-LABEL: func.func @reduce_prod_int
// CHECK: arith.constant 1 : i64
// CHECK: arith.muli
func.func @reduce_prod_int(%x: tensor<4x2xi64>) -> tensor<2xi64> {
  %0 = loom.reduce prod %x {axes = array<i64: 0>, keep_dims = false} : tensor<4x2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @reduce_l1
// CHECK: math.absf
// CHECK: arith.addf
func.func @reduce_l1(%x: tensor<4x2xf32>) -> tensor<4x1xf32> {
  %0 = loom.reduce l1 %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x2xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// First extreme wins: strict comparison, NaN counts as the maximum.
// CHECK-LABEL: func.func @reduce_argmax
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32>)
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[VALS:.+]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[IDXS:.+]] = linalg.fill ins(%{{.+}} : i64)
// CHECK: %[[R:.+]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<3x4xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<4xf32>, tensor<4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.index 0
// CHECK: %[[E:.+]] = tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
// CHECK: return %[[E]]
func.func @reduce_argmax(%x: tensor<3x4xf32>) -> tensor<1x4xi64> {
  %0 = loom.reduce argmax %x {axes = array<i64: 0>, keep_dims = true} : tensor<3x4xf32>
  return %0 : tensor<1x4xi64>
}

// -----

// CHECK-LABEL: func.func @reduce_argmin_unsigned
// CHECK: arith.constant -1 : i16
// CHECK: arith.cmpi ult
func.func @reduce_argmin_unsigned(%x: tensor<3x4xui16>) -> tensor<3xi64> {
  %0 = loom.reduce argmin %x {axes = array<i64: 1>, keep_dims = false} : tensor<3x4xui16>
  return %0 : tensor<3xi64>
}

// -----

// i1 sums are logical or.
// CHECK-LABEL: func.func @reduce_sum_i1
// CHECK: arith.constant false
// CHECK: arith.ori
func.func @reduce_sum_i1(%x: tensor<3x4xi1>) -> tensor<3xi1> {
  %0 = loom.reduce sum %x {axes = array<i64: 1>, keep_dims = false} : tensor<3x4xi1>
  return %0 : tensor<3xi1>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[MAX:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2x4xf32>) dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%[[EXP]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2x4xf32>) dimensions = [1]
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.divf
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = loom.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf32>)
// CHECK: %[[MAX:.+]] = linalg.reduce ins(%[[X]]
// CHECK: %[[SUM:.+]] = linalg.reduce
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.subf
// CHECK: math.log
// CHECK: arith.subf
func.func @log_softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = loom.softmax %x {axis = 1 : i64, log} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2x3xf32>) dimensions = [2]
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3xf32>)
// CHECK: %[[VAR:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>)
// CHECK: %[[DEN:.+]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<2x3xf32>)
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.sqrt
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[COL]], #[[COL]], #[[ID]]], {{.*}} ins(%[[X]], %[[MEAN]], %[[DEN]], %[[G]], %[[B]] :
// CHECK: arith.subf
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = loom.layer_norm %x scale %g bias %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<3x4xf32>)
// CHECK: %[[SS:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2xf32>) dimensions = [1, 2]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[DEN:.+]] = linalg.generic {{.*}} ins(%[[SS]] : tensor<2xf32>)
// CHECK: arith.constant 1.200000e+01 : f32
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[DEN]], %[[G]] : tensor<2x3x4xf32>, tensor<2xf32>, tensor<3x4xf32>)
// CHECK: arith.divf
// CHECK: arith.mulf
func.func @rms_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = loom.rms_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-6 : f64} : tensor<2x3x4xf32>, tensor<3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x2x2xf32>, %[[S:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>, %[[M:.+]]: tensor<3xf32>, %[[V:.+]]: tensor<3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]], {{.*}} ins(%[[X]], %[[M]], %[[V]], %[[S]], %[[B]] :
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batch_norm(%x: tensor<1x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = loom.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64} : tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// A bf16 sum is taken in float32, each element extended as the loop reads
// it, and rounded once; a maximum is exact in bf16 and stays there.
// CHECK-LABEL: func.func @reduce_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xbf16>)
// CHECK: %[[MAX:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3xbf16>) outs(%{{.+}} : tensor<2xbf16>)
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : bf16
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xbf16>) outs(%{{.+}} : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[W]], %[[ACC]] : f32
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2xf32>) outs(%{{.+}} : tensor<2xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %[[MAX]], %[[R]]
func.func @reduce_bf16(%x: tensor<2x3xbf16>) -> (tensor<2xbf16>, tensor<2xbf16>) {
  %0 = loom.reduce max %x {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xbf16>
  %1 = loom.reduce sum %x {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xbf16>
  return %0, %1 : tensor<2xbf16>, tensor<2xbf16>
}
