// RUN: loom-opt %s --loom-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME: (%[[A:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<4x5xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<3x5xf32>)
// CHECK: %[[R:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK: return %[[R]]
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = loom.matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A batched activation times a weight folds the batch into M.
// CHECK-LABEL: func.func @matmul_linear
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<4x5xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[FLAT]], %[[B]] : tensor<6x4xf32>, tensor<4x5xf32>)
// CHECK: %[[R:.+]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 5]
// CHECK: return %[[R]]
func.func @matmul_linear(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = loom.matmul %a, %b : tensor<2x3x4xf32>, tensor<4x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_batch
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4x5xi32>, %[[B:.+]]: tensor<2x3x5x6xi32>)
// CHECK-DAG: %[[A3:.+]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x5xi32> into tensor<6x4x5xi32>
// CHECK-DAG: %[[B3:.+]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x5x6xi32> into tensor<6x5x6xi32>
// CHECK: %[[BMM:.+]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<6x4x5xi32>, tensor<6x5x6xi32>)
// CHECK: tensor.expand_shape %[[BMM]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 4, 6]
func.func @matmul_batch(%a: tensor<2x3x4x5xi32>, %b: tensor<2x3x5x6xi32>) -> tensor<2x3x4x6xi32> {
  %0 = loom.matmul %a, %b : tensor<2x3x4x5xi32>, tensor<2x3x5x6xi32>
  return %0 : tensor<2x3x4x6xi32>
}

// -----

// Broadcast batch dims read index 0 of the size-1 dim.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<2x1x3x4xf32>, %[[B:.+]]: tensor<5x4x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] :
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = loom.matmul %a, %b : tensor<2x1x3x4xf32>, tensor<5x4x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_i1
// CHECK: linalg.generic
// CHECK: arith.andi
// CHECK: arith.ori
func.func @matmul_i1(%a: tensor<2x3xi1>, %b: tensor<3x2xi1>) -> tensor<2x2xi1> {
  %0 = loom.matmul %a, %b : tensor<2x3xi1>, tensor<3x2xi1>
  return %0 : tensor<2x2xi1>
}

// -----

// CHECK-LABEL: func.func @conv2d_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 2, 1]
// CHECK: tensor<1x3x8x8xf32> to tensor<1x3x11x10xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x4x5x6xf32>
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%[[E]] : tensor<1x4x5x6xf32>) dimensions = [0, 2, 3]
// CHECK: %[[R:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x3x11x10xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x5x6xf32>)
// CHECK: return %[[R]]
func.func @conv2d_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x5x6xf32> {
  %0 = loom.conv %x, %w, %b {strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 2, 1>, dilations = array<i64: 1, 2>, groups = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  return %0 : tensor<1x4x5x6xf32>
}

// -----

// CHECK-LABEL: func.func @conv1d
// CHECK: linalg.conv_1d_ncw_fcw
func.func @conv1d(%x: tensor<1x2x7xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x5xf32> {
  %0 = loom.conv %x, %w {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : tensor<1x2x7xf32>, tensor<3x2x3xf32>
  return %0 : tensor<1x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @conv3d
// CHECK: linalg.conv_3d_ncdhw_fcdhw
func.func @conv3d(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>) -> tensor<1x3x3x3x3xf32> {
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1, 1>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>, groups = 1 : i64} : tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>
  return %0 : tensor<1x3x3x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x6x6xf32>, %[[W:.+]]: tensor<3x1x3x3xf32>)
// CHECK: %[[W2:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1], [2], [3]] : tensor<3x1x3x3xf32> into tensor<3x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[X]], %[[W2]] : tensor<1x3x6x6xf32>, tensor<3x3x3xf32>)
func.func @conv_depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 3 : i64} : tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_grouped
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x5x5xf32>, %[[W:.+]]: tensor<6x2x3x3xf32>)
// CHECK-DAG: %[[XG:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 5, 5]
// CHECK-DAG: %[[WG:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK: %[[G:.+]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[XG]], %[[WG]] : tensor<1x2x2x5x5xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.+}} : tensor<1x2x3x3x3xf32>)
// CHECK: tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
func.func @conv_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// Grouped 1-D has no named op: a generic over (n, g, f, o | c, k).
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 2)>
// CHECK-DAG: #[[FILT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv_grouped_1d
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FILT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
func.func @conv_grouped_1d(%x: tensor<1x4x9xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x3xf32> {
  %0 = loom.conv %x, %w {strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 2>, groups = 2 : i64} : tensor<1x4x9xf32>, tensor<2x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @pool_max
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x5x5xf32>)
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]]
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<1x2x3x3xf32>)
// CHECK: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[R:.+]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x3x3xf32>)
// CHECK: return %[[R]]
func.func @pool_max(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = loom.pool max %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Without count_include_pad the border windows count fewer elements: the
// divisors are a constant over the output's spatial dims.
// CHECK-DAG: #[[SP:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @pool_avg
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum
// CHECK: %[[CNT:.+]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[SP]], #{{.+}}], {{.*}} ins(%[[SUM]], %[[CNT]] :
// CHECK: arith.divf
func.func @pool_avg(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = loom.pool avg %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// count_include_pad with every window inside the declared padding: one divisor.
// CHECK-LABEL: func.func @pool_avg_include_pad
// CHECK: linalg.pooling_ncw_sum
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: arith.divf
func.func @pool_avg_include_pad(%x: tensor<1x2x6xf32>) -> tensor<1x2x3xf32> {
  %0 = loom.pool avg %x {kernel = array<i64: 3>, strides = array<i64: 2>, padding = array<i64: 1, 0>, dilations = array<i64: 1>, count_include_pad} : tensor<1x2x6xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// Ceil mode pads the overhang of the last window (here one more column).
// CHECK-LABEL: func.func @pool_max_ceil_3d
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 0, 0] high[0, 0, 1, 1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: arith.maximumf
func.func @pool_max_ceil_3d(%x: tensor<1x1x3x5x5xf32>) -> tensor<1x1x2x3x3xf32> {
  %0 = loom.pool max %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>, ceil_mode} : tensor<1x1x3x5x5xf32>
  return %0 : tensor<1x1x2x3x3xf32>
}

// -----

// Two query heads per kv head: q regrouped to [B * Hkv, G * Sq, D].
// CHECK-LABEL: func.func @attention_gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x3x8xf32>, %[[K:.+]]: tensor<2x2x5x8xf32>, %[[V:.+]]: tensor<2x2x5x6xf32>)
// CHECK: %[[QE:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 3, 8]
// CHECK: %[[Q3:.+]] = tensor.collapse_shape %[[QE]] {{\[\[}}0, 1], [2, 3], [4]] : tensor<2x2x2x3x8xf32> into tensor<4x6x8xf32>
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[K]] : tensor<2x2x5x8xf32>) outs(%{{.+}} : tensor<2x2x8x5xf32>) permutation = [0, 1, 3, 2]
// CHECK: %[[K3:.+]] = tensor.collapse_shape %[[KT]] {{\[\[}}0, 1], [2], [3]]
// CHECK: %[[S:.+]] = linalg.batch_matmul ins(%[[Q3]], %[[K3]] : tensor<4x6x8xf32>, tensor<4x8x5xf32>)
// CHECK: linalg.generic
// CHECK: arith.constant 0.353553385 : f32
// CHECK: arith.mulf
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: arith.cmpi ugt
// CHECK: arith.select
// CHECK: linalg.reduce
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.reduce
// CHECK: arith.divf
// CHECK: %[[V3:.+]] = tensor.collapse_shape %[[V]] {{\[\[}}0, 1], [2], [3]] : tensor<2x2x5x6xf32> into tensor<4x5x6xf32>
// CHECK: %[[O:.+]] = linalg.batch_matmul ins(%{{.+}}, %[[V3]] : tensor<4x6x5xf32>, tensor<4x5x6xf32>)
// CHECK: %[[OE:.+]] = tensor.expand_shape %[[O]] {{\[\[}}0, 1], [2, 3], [4]] output_shape [2, 2, 2, 3, 6]
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[OE]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x2x3x6xf32> into tensor<2x4x3x6xf32>
// CHECK: return %[[R]]
func.func @attention_gqa_causal(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x6xf32>) -> tensor<2x4x3x6xf32> {
  %0 = loom.attention %q, %k, %v {causal} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>
  return %0 : tensor<2x4x3x6xf32>
}

// -----

// An i1 mask selects -inf where false; it broadcasts from [Sq, Skv].
// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @attention_bool_mask
// CHECK-SAME: %[[M:[^:]+]]: tensor<3x4xi1>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], #{{.+}}], {{.*}} ins(%{{.+}}, %[[M]] : tensor<1x2x3x4xf32>, tensor<3x4xi1>)
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.select
func.func @attention_bool_mask(%q: tensor<1x2x3x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>, %m: tensor<3x4xi1>) -> tensor<1x2x3x2xf32> {
  %0 = loom.attention %q, %k, %v mask %m {scale = 0.5 : f64} : tensor<1x2x3x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<3x4xi1>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// A float mask is added.
// CHECK-LABEL: func.func @attention_float_mask
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @attention_float_mask(%q: tensor<1x2x3x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>, %m: tensor<1x1x3x4xf32>) -> tensor<1x2x3x2xf32> {
  %0 = loom.attention %q, %k, %v mask %m : tensor<1x2x3x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x1x3x4xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// A bf16 matmul accumulates in float32 (linalg.matmul extends its operands
// to the accumulator's type) and rounds the result once.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-SAME: (%[[A:.+]]: tensor<3x4xbf16>, %[[B:.+]]: tensor<4x5xbf16>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<3x5xf32>)
// CHECK: %[[SUM:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xbf16>, tensor<4x5xbf16>) outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<3x5xf32>) outs(%{{.+}} : tensor<3x5xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %[[R]]
func.func @matmul_bf16(%a: tensor<3x4xbf16>, %b: tensor<4x5xbf16>) -> tensor<3x5xbf16> {
  %0 = loom.matmul %a, %b : tensor<3x4xbf16>, tensor<4x5xbf16>
  return %0 : tensor<3x5xbf16>
}
