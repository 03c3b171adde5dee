// Execution checks of the shape lowering (loom.reshape, transpose, concat,
// slice, pad, expand): collapse/expand and flattened reshapes, negative slice
// strides, every pad mode with cropping, numpy broadcasting. Expected values
// come from numpy via test/Conformance/loom_reference.py.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32> {bufferization.access = "read"})
func.func private @printMemrefF64(tensor<*xf64> {bufferization.access = "read"})
func.func private @printMemrefI32(tensor<*xi32> {bufferization.access = "read"})
func.func private @printMemrefI64(tensor<*xi64> {bufferization.access = "read"})

func.func @main() {
  %v1 = loom.constant dense<[[[-5.5, -4.5, -3.5, -2.5], [-1.5, -0.5, 0.5, 1.5], [2.5, 3.5, 4.5, 5.5]], [[6.5, 7.5, 8.5, 9.5], [10.5, 11.5, 12.5, 13.5], [14.5, 15.5, 16.5, 17.5]]]> : tensor<2x3x4xf32>
  // reshape: collapse, expand, and no reassociation (4x6 <- 6x4)
  %v2 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %v3 = tensor.collapse_shape %v2 [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  %v4 = tensor.cast %v3 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v4) : (tensor<*xf32>) -> ()
  %v5 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %v6 = tensor.collapse_shape %v5 [[0, 1]] : tensor<2x12xf32> into tensor<24xf32>
  %v7 = tensor.cast %v6 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v7) : (tensor<*xf32>) -> ()
  %v8 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<24xf32>
  %v9 = tensor.cast %v8 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v9) : (tensor<*xf32>) -> ()
  %v10 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %v11 = tensor.collapse_shape %v10 [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %v12 = tensor.cast %v11 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v12) : (tensor<*xf32>) -> ()
  %v13 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %v14 = tensor.collapse_shape %v13 [[0, 1, 2]] : tensor<3x2x4xf32> into tensor<24xf32>
  %v15 = tensor.cast %v14 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v15) : (tensor<*xf32>) -> ()
  %v16 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<1x2x12x1xf32>
  %v17 = tensor.collapse_shape %v16 [[0, 1, 2, 3]] : tensor<1x2x12x1xf32> into tensor<24xf32>
  %v18 = tensor.cast %v17 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v18) : (tensor<*xf32>) -> ()
  %v19 = loom.reshape %v1 : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %v20 = loom.reshape %v19 : tensor<6x4xf32> -> tensor<4x6xf32>
  %v21 = loom.transpose %v20 {permutation = array<i64: 1, 0>} : tensor<4x6xf32>
  %v22 = tensor.collapse_shape %v21 [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  %v23 = tensor.cast %v22 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v23) : (tensor<*xf32>) -> ()
  %v24 = loom.constant dense<3.5> : tensor<f32>
  %v25 = loom.reshape %v24 : tensor<f32> -> tensor<1x1xf32>
  %v26 = tensor.collapse_shape %v25 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %v27 = tensor.cast %v26 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%v27) : (tensor<*xf32>) -> ()
  // transpose
  %v28 = loom.transpose %v1 {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32>
  %v29 = tensor.collapse_shape %v28 [[0, 1, 2]] : tensor<4x2x3xf32> into tensor<24xf32>
  %v30 = tensor.cast %v29 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v30) : (tensor<*xf32>) -> ()
  %v31 = loom.transpose %v1 {permutation = array<i64: 1, 0, 2>} : tensor<2x3x4xf32>
  %v32 = tensor.collapse_shape %v31 [[0, 1, 2]] : tensor<3x2x4xf32> into tensor<24xf32>
  %v33 = tensor.cast %v32 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v33) : (tensor<*xf32>) -> ()
  %v34 = loom.transpose %v1 {permutation = array<i64: 0, 2, 1>} : tensor<2x3x4xf32>
  %v35 = tensor.collapse_shape %v34 [[0, 1, 2]] : tensor<2x4x3xf32> into tensor<24xf32>
  %v36 = tensor.cast %v35 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v36) : (tensor<*xf32>) -> ()
  %v37 = loom.constant dense<[[-3, -2, -1], [0, 1, 2]]> : tensor<2x3xsi8>
  %v38 = loom.transpose %v37 {permutation = array<i64: 1, 0>} : tensor<2x3xsi8>
  %v39 = loom.cast %v38 : tensor<3x2xsi8> to tensor<3x2xi32>
  %v40 = tensor.collapse_shape %v39 [[0, 1]] : tensor<3x2xi32> into tensor<6xi32>
  %v41 = tensor.cast %v40 : tensor<6xi32> to tensor<*xi32>
  call @printMemrefI32(%v41) : (tensor<*xi32>) -> ()
  // concat along each axis
  %v42 = loom.constant dense<[[[0.0, 10.0, 20.0, 30.0]], [[40.0, 50.0, 60.0, 70.0]]]> : tensor<2x1x4xf32>
  %v43 = loom.constant dense<[[[-0.0, -1.0, -2.0, -3.0], [-4.0, -5.0, -6.0, -7.0]], [[-8.0, -9.0, -10.0, -11.0], [-12.0, -13.0, -14.0, -15.0]]]> : tensor<2x2x4xf32>
  %v44 = loom.concat %v1, %v42, %v43 {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>
  %v45 = tensor.collapse_shape %v44 [[0, 1, 2]] : tensor<2x6x4xf32> into tensor<48xf32>
  %v46 = tensor.cast %v45 : tensor<48xf32> to tensor<*xf32>
  call @printMemrefF32(%v46) : (tensor<*xf32>) -> ()
  %v47 = loom.concat %v1, %v1 {axis = 0 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %v48 = tensor.collapse_shape %v47 [[0, 1, 2]] : tensor<4x3x4xf32> into tensor<48xf32>
  %v49 = tensor.cast %v48 : tensor<48xf32> to tensor<*xf32>
  call @printMemrefF32(%v49) : (tensor<*xf32>) -> ()
  %v50 = loom.constant dense<[[[100.0, 101.0], [102.0, 103.0], [104.0, 105.0]], [[106.0, 107.0], [108.0, 109.0], [110.0, 111.0]]]> : tensor<2x3x2xf32>
  %v51 = loom.concat %v50, %v1 {axis = 2 : i64} : tensor<2x3x2xf32>, tensor<2x3x4xf32>
  %v52 = tensor.collapse_shape %v51 [[0, 1, 2]] : tensor<2x3x6xf32> into tensor<36xf32>
  %v53 = tensor.cast %v52 : tensor<36xf32> to tensor<*xf32>
  call @printMemrefF32(%v53) : (tensor<*xf32>) -> ()
  %v54 = loom.constant dense<[true, false]> : tensor<2xi1>
  %v55 = loom.constant dense<[false, false, true]> : tensor<3xi1>
  %v56 = loom.concat %v54, %v55 {axis = 0 : i64} : tensor<2xi1>, tensor<3xi1>
  %v57 = loom.cast %v56 : tensor<5xi1> to tensor<5xi32>
  %v58 = tensor.cast %v57 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v58) : (tensor<*xi32>) -> ()
  // slice: positive, negative and mixed strides
  %v59 = loom.slice %v1 {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 2, 4>, strides = array<i64: 1, 1, 1>} : tensor<2x3x4xf32>
  %v60 = tensor.collapse_shape %v59 [[0, 1, 2]] : tensor<2x2x4xf32> into tensor<16xf32>
  %v61 = tensor.cast %v60 : tensor<16xf32> to tensor<*xf32>
  call @printMemrefF32(%v61) : (tensor<*xf32>) -> ()
  %v62 = loom.slice %v1 {offsets = array<i64: 1, 0, 1>, sizes = array<i64: 1, 2, 2>, strides = array<i64: 1, 2, 2>} : tensor<2x3x4xf32>
  %v63 = tensor.collapse_shape %v62 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %v64 = tensor.cast %v63 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%v64) : (tensor<*xf32>) -> ()
  %v65 = loom.slice %v1 {offsets = array<i64: 1, 2, 3>, sizes = array<i64: 2, 3, 4>, strides = array<i64: -1, -1, -1>} : tensor<2x3x4xf32>
  %v66 = tensor.collapse_shape %v65 [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
  %v67 = tensor.cast %v66 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v67) : (tensor<*xf32>) -> ()
  %v68 = loom.slice %v1 {offsets = array<i64: 0, 2, 3>, sizes = array<i64: 2, 2, 2>, strides = array<i64: 1, -2, -3>} : tensor<2x3x4xf32>
  %v69 = tensor.collapse_shape %v68 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %v70 = tensor.cast %v69 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v70) : (tensor<*xf32>) -> ()
  %v71 = loom.slice %v1 {offsets = array<i64: 1, 0, 0>, sizes = array<i64: 1, 3, 1>, strides = array<i64: -1, 1, 1>} : tensor<2x3x4xf32>
  %v72 = tensor.collapse_shape %v71 [[0, 1, 2]] : tensor<1x3x1xf32> into tensor<3xf32>
  %v73 = tensor.cast %v72 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%v73) : (tensor<*xf32>) -> ()
  // pad: every mode, with cropping
  %v74 = loom.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %v75 = loom.pad constant %v74 {padding = array<i64: 1, 2, 2, 1>, value = 9.5 : f64} : tensor<3x4xf32>
  %v76 = tensor.collapse_shape %v75 [[0, 1]] : tensor<6x7xf32> into tensor<42xf32>
  %v77 = tensor.cast %v76 : tensor<42xf32> to tensor<*xf32>
  call @printMemrefF32(%v77) : (tensor<*xf32>) -> ()
  %v78 = loom.pad reflect %v74 {padding = array<i64: 2, 1, 1, 3>} : tensor<3x4xf32>
  %v79 = tensor.collapse_shape %v78 [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %v80 = tensor.cast %v79 : tensor<48xf32> to tensor<*xf32>
  call @printMemrefF32(%v80) : (tensor<*xf32>) -> ()
  %v81 = loom.pad edge %v74 {padding = array<i64: 2, 3, 1, 2>} : tensor<3x4xf32>
  %v82 = tensor.collapse_shape %v81 [[0, 1]] : tensor<6x9xf32> into tensor<54xf32>
  %v83 = tensor.cast %v82 : tensor<54xf32> to tensor<*xf32>
  call @printMemrefF32(%v83) : (tensor<*xf32>) -> ()
  %v84 = loom.pad wrap %v74 {padding = array<i64: 2, 5, 3, 6>} : tensor<3x4xf32>
  %v85 = tensor.collapse_shape %v84 [[0, 1]] : tensor<8x15xf32> into tensor<120xf32>
  %v86 = tensor.cast %v85 : tensor<120xf32> to tensor<*xf32>
  call @printMemrefF32(%v86) : (tensor<*xf32>) -> ()
  %v87 = loom.pad constant %v74 {padding = array<i64: -1, 2, 1, -3>, value = -1.0 : f64} : tensor<3x4xf32>
  %v88 = tensor.collapse_shape %v87 [[0, 1]] : tensor<3x3xf32> into tensor<9xf32>
  %v89 = tensor.cast %v88 : tensor<9xf32> to tensor<*xf32>
  call @printMemrefF32(%v89) : (tensor<*xf32>) -> ()
  %v90 = loom.pad reflect %v74 {padding = array<i64: -1, 1, 1, 2>} : tensor<3x4xf32>
  %v91 = tensor.collapse_shape %v90 [[0, 1]] : tensor<3x7xf32> into tensor<21xf32>
  %v92 = tensor.cast %v91 : tensor<21xf32> to tensor<*xf32>
  call @printMemrefF32(%v92) : (tensor<*xf32>) -> ()
  %v93 = loom.pad edge %v74 {padding = array<i64: 1, -2, -1, 2>} : tensor<3x4xf32>
  %v94 = tensor.collapse_shape %v93 [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %v95 = tensor.cast %v94 : tensor<12xf32> to tensor<*xf32>
  call @printMemrefF32(%v95) : (tensor<*xf32>) -> ()
  %v96 = loom.pad wrap %v74 {padding = array<i64: -2, 1, 1, -1>} : tensor<3x4xf32>
  %v97 = tensor.collapse_shape %v96 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %v98 = tensor.cast %v97 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%v98) : (tensor<*xf32>) -> ()
  %v99 = loom.pad reflect %v74 {padding = array<i64: 0, 0, 0, 0>} : tensor<3x4xf32>
  %v100 = tensor.collapse_shape %v99 [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %v101 = tensor.cast %v100 : tensor<12xf32> to tensor<*xf32>
  call @printMemrefF32(%v101) : (tensor<*xf32>) -> ()
  // pad: integers, constant value cast as numpy does
  %v102 = loom.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xsi32>
  %v103 = loom.pad constant %v102 {padding = array<i64: 1, 0, 0, 1>, value = -7.0 : f64} : tensor<2x2xsi32>
  %v104 = loom.cast %v103 : tensor<3x3xsi32> to tensor<3x3xi32>
  %v105 = tensor.collapse_shape %v104 [[0, 1]] : tensor<3x3xi32> into tensor<9xi32>
  %v106 = tensor.cast %v105 : tensor<9xi32> to tensor<*xi32>
  call @printMemrefI32(%v106) : (tensor<*xi32>) -> ()
  %v107 = loom.constant dense<[200, 7]> : tensor<2xui8>
  %v108 = loom.pad edge %v107 {padding = array<i64: 2, 1>} : tensor<2xui8>
  %v109 = loom.cast %v108 : tensor<5xui8> to tensor<5xi32>
  %v110 = tensor.cast %v109 : tensor<5xi32> to tensor<*xi32>
  call @printMemrefI32(%v110) : (tensor<*xi32>) -> ()
  %v111 = loom.pad reflect %v107 {padding = array<i64: 1, 1>} : tensor<2xui8>
  %v112 = loom.cast %v111 : tensor<4xui8> to tensor<4xi32>
  %v113 = tensor.cast %v112 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v113) : (tensor<*xi32>) -> ()
  // expand: unit dims, new leading dims, scalars
  %v114 = loom.constant dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>
  %v115 = loom.expand %v114 : tensor<1x3x1xf32> -> tensor<2x3x2xf32>
  %v116 = tensor.collapse_shape %v115 [[0, 1, 2]] : tensor<2x3x2xf32> into tensor<12xf32>
  %v117 = tensor.cast %v116 : tensor<12xf32> to tensor<*xf32>
  call @printMemrefF32(%v117) : (tensor<*xf32>) -> ()
  %v118 = loom.constant dense<[5, -6, 7]> : tensor<3xsi32>
  %v119 = loom.expand %v118 : tensor<3xsi32> -> tensor<2x2x3xsi32>
  %v120 = loom.cast %v119 : tensor<2x2x3xsi32> to tensor<2x2x3xi32>
  %v121 = tensor.collapse_shape %v120 [[0, 1, 2]] : tensor<2x2x3xi32> into tensor<12xi32>
  %v122 = tensor.cast %v121 : tensor<12xi32> to tensor<*xi32>
  call @printMemrefI32(%v122) : (tensor<*xi32>) -> ()
  %v123 = loom.expand %v24 : tensor<f32> -> tensor<2x3xf32>
  %v124 = tensor.collapse_shape %v123 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v125 = tensor.cast %v124 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v125) : (tensor<*xf32>) -> ()
  %v126 = loom.constant dense<[[1.5], [-2.5]]> : tensor<2x1xf32>
  %v127 = loom.expand %v126 : tensor<2x1xf32> -> tensor<3x2x4xf32>
  %v128 = tensor.collapse_shape %v127 [[0, 1, 2]] : tensor<3x2x4xf32> into tensor<24xf32>
  %v129 = tensor.cast %v128 : tensor<24xf32> to tensor<*xf32>
  call @printMemrefF32(%v129) : (tensor<*xf32>) -> ()
  %v130 = loom.constant dense<[[8.0]]> : tensor<1x1xf32>
  %v131 = loom.expand %v130 : tensor<1x1xf32> -> tensor<2x3xf32>
  %v132 = tensor.collapse_shape %v131 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %v133 = tensor.cast %v132 : tensor<6xf32> to tensor<*xf32>
  call @printMemrefF32(%v133) : (tensor<*xf32>) -> ()
  %v134 = loom.expand %v54 : tensor<2xi1> -> tensor<2x2xi1>
  %v135 = loom.cast %v134 : tensor<2x2xi1> to tensor<2x2xi32>
  %v136 = tensor.collapse_shape %v135 [[0, 1]] : tensor<2x2xi32> into tensor<4xi32>
  %v137 = tensor.cast %v136 : tensor<4xi32> to tensor<*xi32>
  call @printMemrefI32(%v137) : (tensor<*xi32>) -> ()
  return
}

// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, 0.5, 6.5, 12.5, -4.5, 1.5, 7.5, 13.5, -3.5, 2.5, 8.5, 14.5, -2.5, 3.5, 9.5, 15.5, -1.5, 4.5, 10.5, 16.5, -0.5, 5.5, 11.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [1] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -1.5, 2.5, 6.5, 10.5, 14.5, -4.5, -0.5, 3.5, 7.5, 11.5, 15.5, -3.5, 0.5, 4.5, 8.5, 12.5, 16.5, -2.5, 1.5, 5.5, 9.5, 13.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, 6.5, 7.5, 8.5, 9.5, -1.5, -0.5, 0.5, 1.5, 10.5, 11.5, 12.5, 13.5, 2.5, 3.5, 4.5, 5.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -1.5, 2.5, -4.5, -0.5, 3.5, -3.5, 0.5, 4.5, -2.5, 1.5, 5.5, 6.5, 10.5, 14.5, 7.5, 11.5, 15.5, 8.5, 12.5, 16.5, 9.5, 13.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-3, 0, -2, 1, -1, 2]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [48] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 0, 10, 20, 30, -0, -1, -2, -3, -4, -5, -6, -7, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 40, 50, 60, 70, -8, -9, -10, -11, -12, -13, -14, -15]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [48] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, -5.5, -4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [36] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [100, 101, -5.5, -4.5, -3.5, -2.5, 102, 103, -1.5, -0.5, 0.5, 1.5, 104, 105, 2.5, 3.5, 4.5, 5.5, 106, 107, 6.5, 7.5, 8.5, 9.5, 108, 109, 10.5, 11.5, 12.5, 13.5, 110, 111, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 0, 0, 1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [16] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [7.5, 9.5, 15.5, 17.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [17.5, 16.5, 15.5, 14.5, 13.5, 12.5, 11.5, 10.5, 9.5, 8.5, 7.5, 6.5, 5.5, 4.5, 3.5, 2.5, 1.5, 0.5, -0.5, -1.5, -2.5, -3.5, -4.5, -5.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [5.5, 2.5, -2.5, -5.5, 17.5, 14.5, 9.5, 6.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [3] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [6.5, 10.5, 14.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [42] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 0, 1, 2, 3, 9.5, 9.5, 9.5, 4, 5, 6, 7, 9.5, 9.5, 9.5, 8, 9, 10, 11, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [48] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6, 7, 6, 5, 4, 1, 0, 1, 2, 3, 2, 1, 0, 5, 4, 5, 6, 7, 6, 5, 4, 9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6, 7, 6, 5, 4]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [54] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 0, 0, 0, 1, 2, 3, 3, 3, 0, 0, 0, 0, 1, 2, 3, 3, 3, 0, 0, 0, 0, 1, 2, 3, 3, 3, 4, 4, 4, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8, 9, 10, 11, 11, 11, 8, 8, 8, 8, 9, 10, 11, 11, 11]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [120] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [9] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-1, -1, 4, -1, -1, 8, -1, -1, -1]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [21] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [5, 4, 5, 6, 7, 6, 5, 9, 8, 9, 10, 11, 10, 9, 5, 4, 5, 6, 7, 6, 5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [12] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [2, 3, 3, 3, 2, 3, 3, 3, 6, 7, 7, 7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [8] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [10, 8, 9, 10, 10, 8, 9, 10]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [12] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [9] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [-7, -7, -7, 1, 2, -7, 3, 4, -7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [5] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [200, 200, 200, 7, 7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [7, 200, 7, 200]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [12] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [12] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [5, -6, 7, 5, -6, 7, 5, -6, 7, 5, -6, 7]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [3.5, 3.5, 3.5, 3.5, 3.5, 3.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [24] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1.5, 1.5, 1.5, 1.5, -2.5, -2.5, -2.5, -2.5, 1.5, 1.5, 1.5, 1.5, -2.5, -2.5, -2.5, -2.5, 1.5, 1.5, 1.5, 1.5, -2.5, -2.5, -2.5, -2.5]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [6] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [8, 8, 8, 8, 8, 8]
// CHECK: rank = 1 offset = {{[0-9]+}} sizes = [4] strides = [{{[0-9]+}}] data =
// CHECK-NEXT: [1, 0, 1, 0]
