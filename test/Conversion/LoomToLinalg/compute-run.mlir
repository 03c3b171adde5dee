// Execution checks of the loom.matmul / conv / pool / attention lowerings:
// each case lowers through loom-lower-to-cpu, runs and prints; expected
// values come from numpy (the reference interpreter
// test/Conformance/loom_reference.py; attention follows its op definition),
// printed as %g.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)
func.func private @printMemrefI32(tensor<*xi32>)

func.func @main() {

  // matmul tensor<3x4xf32> x tensor<4x2xf32>
  %v1 = arith.constant dense<[[1.25, 1.75, 2.0, -1.5], [-0.25, 1.75, -0.75, -2.0], [0.25, 1.0, 1.0, 1.25]]> : tensor<3x4xf32>
  %v2 = arith.constant dense<[[0.5, -1.5], [1.5, -0.25], [1.5, 1.25], [2.0, -2.0]]> : tensor<4x2xf32>
  %v3 = loom.matmul %v1, %v2 : tensor<3x4xf32>, tensor<4x2xf32>
  %u4 = tensor.cast %v3 : tensor<3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [3, 2]
  // CHECK-NEXT: [3.25, 3.1875]
  // CHECK-NEXT: [-2.625, 3]
  // CHECK-NEXT: [5.625, -1.875]

  // matmul tensor<2x3x4xf32> x tensor<4x2xf32>
  %v5 = arith.constant dense<[[[1.5, 0.5, 0.0, 1.25], [2.0, 0.0, -1.75, 1.0], [-1.25, -1.25, -1.25, -1.25]], [[1.75, -0.5, -1.75, -1.25], [-0.5, -0.75, -0.75, 2.0], [1.5, 0.25, 2.0, -0.75]]]> : tensor<2x3x4xf32>
  %v6 = arith.constant dense<[[-1.5, -1.0], [-1.75, 2.0], [-1.25, -0.25], [-1.25, 2.0]]> : tensor<4x2xf32>
  %v7 = loom.matmul %v5, %v6 : tensor<2x3x4xf32>, tensor<4x2xf32>
  %u8 = tensor.cast %v7 : tensor<2x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [2, 3, 2]
  // CHECK-NEXT: [-4.6875, 2]
  // CHECK-NEXT: [-2.0625, 0.4375]
  // CHECK-NEXT: [7.1875, -3.4375]
  // CHECK-NEXT: [2, -4.8125]
  // CHECK-NEXT: [0.5, 3.1875]
  // CHECK-NEXT: [-4.25, -3]

  // matmul tensor<2x2x3xf32> x tensor<2x3x2xf32>
  %v9 = arith.constant dense<[[[-1.5, 0.0, 2.0], [0.0, 1.75, 1.75]], [[1.25, 1.0, 0.25], [0.25, 1.5, -0.25]]]> : tensor<2x2x3xf32>
  %v10 = arith.constant dense<[[[2.0, 1.5], [-0.5, -0.5], [1.0, 1.75]], [[-1.75, -1.75], [-1.0, -0.25], [-1.5, 0.0]]]> : tensor<2x3x2xf32>
  %v11 = loom.matmul %v9, %v10 : tensor<2x2x3xf32>, tensor<2x3x2xf32>
  %u12 = tensor.cast %v11 : tensor<2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [2, 2, 2]
  // CHECK-NEXT: [-1, 1.25]
  // CHECK-NEXT: [0.875, 2.1875]
  // CHECK-NEXT: [-3.5625, -2.4375]
  // CHECK-NEXT: [-1.5625, -0.8125]

  // matmul tensor<2x1x2x3xf32> x tensor<3x3x2xf32>
  %v13 = arith.constant dense<[[[[0.25, 2.0, 1.0], [-1.0, 1.25, 1.25]]], [[[0.75, 0.75, -0.75], [1.0, -1.5, 0.5]]]]> : tensor<2x1x2x3xf32>
  %v14 = arith.constant dense<[[[1.75, 2.0], [-0.75, -0.75], [0.5, -0.5]], [[1.0, -1.25], [-1.5, -2.0], [-0.25, -1.25]], [[-0.75, 1.75], [1.25, 1.5], [0.5, -1.75]]]> : tensor<3x3x2xf32>
  %v15 = loom.matmul %v13, %v14 : tensor<2x1x2x3xf32>, tensor<3x3x2xf32>
  %u16 = tensor.cast %v15 : tensor<2x3x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [2, 3, 2, 2]
  // CHECK-NEXT: [-0.5625, -1.5]
  // CHECK-NEXT: [-2.0625, -3.5625]
  // CHECK-NEXT: [-3, -5.5625]
  // CHECK-NEXT: [-3.1875, -2.8125]
  // CHECK-NEXT: [2.8125, 1.6875]
  // CHECK-NEXT: [2.9375, -2.0625]
  // CHECK-NEXT: [0.375, 1.3125]
  // CHECK-NEXT: [3.125, 2.875]
  // CHECK-NEXT: [-0.1875, -1.5]
  // CHECK-NEXT: [3.125, 1.125]
  // CHECK-NEXT: [0, 3.75]
  // CHECK-NEXT: [-2.375, -1.375]

  // matmul tensor<2x3xf32> x tensor<2x3x2xf32>
  %v17 = arith.constant dense<[[1.0, 0.5, 1.75], [0.0, -1.5, 0.5]]> : tensor<2x3xf32>
  %v18 = arith.constant dense<[[[-0.25, 0.75], [-0.5, -0.75], [-1.5, 2.0]], [[1.0, -0.25], [-1.25, 0.5], [-0.25, 0.5]]]> : tensor<2x3x2xf32>
  %v19 = loom.matmul %v17, %v18 : tensor<2x3xf32>, tensor<2x3x2xf32>
  %u20 = tensor.cast %v19 : tensor<2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u20) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [2, 2, 2]
  // CHECK-NEXT: [-3.125, 3.875]
  // CHECK-NEXT: [0, 2.125]
  // CHECK-NEXT: [-0.0625, 0.875]
  // CHECK-NEXT: [1.75, -0.5]

  // matmul tensor<2x3xi32> x tensor<3x2xi32>
  %v21 = arith.constant dense<[[-5, -3, 3], [-5, 2, -1]]> : tensor<2x3xi32>
  %v22 = arith.constant dense<[[-5, 3], [2, 3], [4, 3]]> : tensor<3x2xi32>
  %v23 = loom.matmul %v21, %v22 : tensor<2x3xi32>, tensor<3x2xi32>
  %u24 = tensor.cast %v23 : tensor<2x2xi32> to tensor<*xi32>
  call @printMemrefI32(%u24) : (tensor<*xi32>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [2, 2]
  // CHECK-NEXT: [31, -15]
  // CHECK-NEXT: [25, -12]

  // matmul tensor<2x2x3xi64> x tensor<1x3x2xi64>
  %v25 = arith.constant dense<[[[4, -4, 5], [5, 2, 3]], [[3, 4, 4], [0, 3, 5]]]> : tensor<2x2x3xi64>
  %v26 = arith.constant dense<[[[-2, -5], [-4, -5], [-1, -5]]]> : tensor<1x3x2xi64>
  %v27 = loom.matmul %v25, %v26 : tensor<2x2x3xi64>, tensor<1x3x2xi64>
  %u28 = tensor.cast %v27 : tensor<2x2x2xi64> to tensor<*xi64>
  call @printMemrefI64(%u28) : (tensor<*xi64>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [2, 2, 2]
  // CHECK-NEXT: [3, -25]
  // CHECK-NEXT: [-21, -50]
  // CHECK-NEXT: [-26, -55]
  // CHECK-NEXT: [-17, -40]

  // conv tensor<1x2x5x5xf32> tensor<3x2x3x3xf32> strides=[2, 2] pads=[1, 1, 1, 1] dilations=[1, 1] groups=1 bias=True
  %v29 = arith.constant dense<[[[[-0.5, -0.5, 0.5, -0.5, 1.0], [-0.75, 1.0, 0.25, -0.5, -1.0], [-0.5, 0.25, -1.0, -0.75, -0.75], [0.5, -1.0, -1.0, 0.0, -0.5], [0.25, 1.0, 0.75, 0.0, 0.25]], [[0.75, -0.25, 0.25, -0.75, 0.25], [-0.5, -0.75, 0.5, 0.25, -0.25], [-1.0, -0.5, 0.75, 0.0, 1.0], [1.0, 0.75, -1.0, -1.0, 0.25], [-0.25, 0.75, -0.5, -0.75, -0.75]]]]> : tensor<1x2x5x5xf32>
  %v30 = arith.constant dense<[[[[-0.5, 0.25, -0.75], [0.75, -0.5, -0.5], [0.25, 0.75, -0.25]], [[0.75, -0.5, -0.75], [0.75, 0.5, 0.5], [0.75, 0.0, -0.75]]], [[[0.25, 0.25, -0.25], [0.25, -0.5, 0.25], [0.75, -1.0, 0.0]], [[0.25, -1.0, 0.25], [1.0, 0.75, 0.5], [0.75, -0.25, -0.5]]], [[[-1.0, 0.5, -0.5], [0.75, 0.0, 1.0], [-0.75, -0.75, -0.25]], [[-1.0, 0.0, 0.25], [0.25, -0.75, -0.75], [0.25, 0.25, 1.0]]]]> : tensor<3x2x3x3xf32>
  %v31 = arith.constant dense<[1.0, -0.25, -0.75]> : tensor<3xf32>
  %v32 = loom.conv %v29, %v30, %v31 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>
  %u33 = tensor.cast %v32 : tensor<1x3x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u33) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 3, 3, 3]
  // CHECK-NEXT: [1.5, 0, -1]
  // CHECK-NEXT: [0.3125, 1.3125, 0.5]
  // CHECK-NEXT: [0.4375, 3.375, -1.0625]
  // CHECK-NEXT: [1.5625, -1.5, -0.5625]
  // CHECK-NEXT: [-2.1875, 1.5625, 0.3125]
  // CHECK-NEXT: [-0.375, 0.0625, -2.3125]
  // CHECK-NEXT: [-2.1875, -1.9375, -0.375]
  // CHECK-NEXT: [0.4375, -1.375, -2.125]
  // CHECK-NEXT: [0.8125, 0.625, 0.375]

  // conv tensor<2x2x4x5xf32> tensor<2x2x2x2xf32> strides=[1, 1] pads=[0, 1, 1, 0] dilations=[2, 1] groups=1 bias=False
  %v34 = arith.constant dense<[[[[-0.5, 0.75, 0.0, 1.0, 0.25], [0.25, -1.0, 0.25, -0.25, 0.75], [-0.75, -0.75, 0.25, 0.5, 0.75], [0.0, -0.25, -0.5, -0.25, 0.25]], [[0.0, -0.5, -0.75, 0.5, -0.5], [-0.75, -0.5, 0.75, 0.0, 0.25], [-1.0, -0.25, 0.5, 0.5, 0.25], [0.75, -0.5, -0.75, -1.0, -0.75]]], [[[0.5, 1.0, -0.75, 0.0, -0.75], [0.75, -0.75, 0.25, -1.0, 0.5], [1.0, 0.5, -0.5, 0.75, -0.5], [0.5, 0.75, 0.0, 0.25, 0.75]], [[-0.75, -1.0, -0.25, -0.75, 0.75], [0.75, -0.25, -0.5, 0.5, 0.0], [-1.0, 0.25, 0.5, -1.0, 0.5], [0.0, 0.75, 0.75, 0.5, -0.25]]]]> : tensor<2x2x4x5xf32>
  %v35 = arith.constant dense<[[[[-0.25, 0.5], [-1.0, -0.5]], [[0.0, 1.0], [0.5, 0.75]]], [[[-0.75, -0.5], [-0.5, 0.5]], [[0.0, -0.75], [0.5, 0.25]]]]> : tensor<2x2x2x2xf32>
  %v36 = loom.conv %v34, %v35 {strides = array<i64: 1, 1>, padding = array<i64: 0, 1, 1, 0>, dilations = array<i64: 2, 1>, groups = 1 : i64} : tensor<2x2x4x5xf32>, tensor<2x2x2x2xf32>
  %u37 = tensor.cast %v36 : tensor<2x2x3x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u37) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [2, 2, 3, 5]
  // CHECK-NEXT: [-0.625, 0.4375, -0.0625, 1.125, -1.0625]
  // CHECK-NEXT: [-0.0625, -0.9375, 0.8125, -0.6875, -0.25]
  // CHECK-NEXT: [-1.375, -0.4375, 0.8125, 0.6875, 0.5]
  // CHECK-NEXT: [-0.375, -0.1875, 0.5, -0.375, -0.0625]
  // CHECK-NEXT: [0.625, 0.8125, -0.5, -0.5625, -0.8125]
  // CHECK-NEXT: [1.125, 1.125, 0.0625, -0.8125, -0.9375]
  // CHECK-NEXT: [-1.75, -2.1875, -0.625, -0.9375, -0.25]
  // CHECK-NEXT: [0.875, -1.125, 0, 0.5625, -0.0625]
  // CHECK-NEXT: [-0.5, 0.25, 0.125, -0.5, 0.0625]
  // CHECK-NEXT: [0.5625, -0.8125, -0.4375, 1.75, -1.1875]
  // CHECK-NEXT: [-0.6875, 0.3125, 1, 0.5625, 0.9375]
  // CHECK-NEXT: [0.25, -1.1875, -0.5, 0.75, -0.6875]

  // conv tensor<1x2x7xf32> tensor<3x2x3xf32> strides=[2] pads=[1, 2] dilations=[1] groups=1 bias=True
  %v38 = arith.constant dense<[[[1.0, 0.25, -0.75, 0.75, -0.75, -1.0, 0.75], [0.0, 0.25, -0.75, 0.5, -0.25, 1.0, 0.25]]]> : tensor<1x2x7xf32>
  %v39 = arith.constant dense<[[[1.0, 0.75, 0.75], [-1.0, 0.5, 0.25]], [[-0.25, -0.5, 0.25], [-0.75, -0.75, 0.75]], [[0.5, 0.25, 0.5], [-0.5, 0.5, -0.75]]]> : tensor<3x2x3xf32>
  %v40 = arith.constant dense<[0.0, -0.75, -0.25]> : tensor<3xf32>
  %v41 = loom.conv %v38, %v39, %v40 {strides = array<i64: 2>, padding = array<i64: 1, 2>, dilations = array<i64: 1>, groups = 1 : i64} : tensor<1x2x7xf32>, tensor<3x2x3xf32>, tensor<3xf32>
  %u42 = tensor.cast %v41 : tensor<1x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u42) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 3, 4]
  // CHECK-NEXT: [1, -0.25, -0.9375, -1.3125]
  // CHECK-NEXT: [-1, 0.5, -0.25, -1.8125]
  // CHECK-NEXT: [-0.0625, -0.8125, -1.6875, -0.9375]

  // conv tensor<1x4x4x4xf32> tensor<6x2x3x3xf32> strides=[1, 1] pads=[1, 1, 1, 1] dilations=[1, 1] groups=2 bias=True
  %v43 = arith.constant dense<[[[[-0.25, -0.25, 0.0, -1.0], [-0.25, 0.75, -0.25, 0.0], [-1.0, -0.25, 1.0, 0.0], [-1.0, 0.5, 0.5, -0.25]], [[-1.0, 0.75, -0.5, 1.0], [-0.25, -0.25, 0.75, -0.75], [-1.0, 0.5, 1.0, 1.0], [-0.75, -0.75, -0.25, 0.5]], [[1.0, 0.75, -0.25, 1.0], [-0.5, -0.75, -0.25, -1.0], [0.5, 1.0, -1.0, -0.75], [-0.75, -0.75, 0.0, 0.25]], [[1.0, 0.0, 1.0, 0.5], [0.75, -0.75, 0.0, 1.0], [0.5, -0.75, 0.75, 0.5], [-0.75, -1.0, -0.5, 0.0]]]]> : tensor<1x4x4x4xf32>
  %v44 = arith.constant dense<[[[[-0.75, -1.0, -1.0], [-0.5, -0.25, -0.5], [0.0, 0.5, -0.5]], [[0.0, 0.5, -1.0], [1.0, 1.0, -0.5], [0.75, -0.5, 1.0]]], [[[0.25, -0.5, -1.0], [-0.25, 0.5, -0.5], [0.0, -0.75, -0.25]], [[-1.0, 1.0, 0.0], [0.75, -0.75, -0.75], [-0.75, 0.25, 0.75]]], [[[0.25, 0.0, 1.0], [-0.75, -0.75, 0.5], [0.75, -0.5, -0.5]], [[0.0, 0.75, -0.5], [0.75, 0.0, 0.5], [0.25, 0.0, 0.0]]], [[[1.0, -0.25, 1.0], [0.75, -0.75, 0.75], [-0.25, -0.75, -0.5]], [[-0.75, -0.25, -0.75], [0.0, 1.0, 1.0], [1.0, -0.5, -0.5]]], [[[0.5, 1.0, 0.75], [-0.75, 0.5, 0.0], [-0.25, 0.0, 0.0]], [[1.0, 0.75, -1.0], [0.5, -0.5, -0.25], [0.25, 1.0, -1.0]]], [[[0.0, -0.5, 1.0], [0.0, 0.75, 0.75], [-1.0, 0.5, 0.75]], [[0.75, 1.0, 0.5], [0.75, 0.5, -0.5], [0.75, 0.5, 0.5]]]]> : tensor<6x2x3x3xf32>
  %v45 = arith.constant dense<[1.0, 0.5, -0.25, -0.5, -0.5, -0.75]> : tensor<6xf32>
  %v46 = loom.conv %v43, %v44, %v45 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : tensor<1x4x4x4xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>
  %u47 = tensor.cast %v46 : tensor<1x6x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u47) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 6, 4, 4]
  // CHECK-NEXT: [-0.8125, 2.375, -0.0625, 2.6875]
  // CHECK-NEXT: [0.4375, 0.875, 2.875, 2.875]
  // CHECK-NEXT: [-1.375, -1.5625, 3.125, 1.75]
  // CHECK-NEXT: [0.875, -1, -1.8125, 0.8125]
  // CHECK-NEXT: [0.4375, -0.3125, 1.25, -1.875]
  // CHECK-NEXT: [0.6875, 3.875, -0.4375, 3.1875]
  // CHECK-NEXT: [-0.5, -2.25, 1.8125, -0.8125]
  // CHECK-NEXT: [0.625, 1.3125, -0.0625, -0.0625]
  // CHECK-NEXT: [-0.0625, -1.375, 1.125, 0.125]
  // CHECK-NEXT: [-0.5625, -1.1875, -3.6875, 2.25]
  // CHECK-NEXT: [1.5625, -1.375, 1.25, -0.4375]
  // CHECK-NEXT: [-0.875, 0.3125, -1.25, 0.375]
  // CHECK-NEXT: [1.0625, 2.4375, 2.125, -0.625]
  // CHECK-NEXT: [-1.1875, -2.0625, 0.0625, 1]
  // CHECK-NEXT: [1.1875, -1.8125, -0.875, -1.125]
  // CHECK-NEXT: [-0.9375, -3.5, -0.875, -2.1875]
  // CHECK-NEXT: [1, -1.0625, -2.8125, 1.5]
  // CHECK-NEXT: [2.625, -0.1875, 0.25, 1.875]
  // CHECK-NEXT: [0.1875, -1.4375, -6.3125, -0.5]
  // CHECK-NEXT: [2.125, -0.375, -1.9375, -0.75]
  // CHECK-NEXT: [0.25, 0, -0.125, 1.25]
  // CHECK-NEXT: [1.1875, -1.0625, -2.375, 1.1875]
  // CHECK-NEXT: [-0.9375, -2.125, -3.5, 0.75]
  // CHECK-NEXT: [-0.875, -3.625, -1.375, 0.5]

  // conv tensor<1x3x5x5xf32> tensor<3x1x3x3xf32> strides=[2, 1] pads=[1, 1, 1, 1] dilations=[1, 1] groups=3 bias=False
  %v48 = arith.constant dense<[[[[-1.0, 0.5, 0.75, -0.75, -0.25], [1.0, 0.75, 0.25, 1.0, -0.5], [0.75, 1.0, 0.25, -0.75, -0.5], [0.0, -0.5, -1.0, -0.75, 1.0], [-0.25, 0.25, -0.25, 0.75, -1.0]], [[-0.5, 0.25, 0.75, 0.0, 0.5], [0.75, 0.25, 0.75, 1.0, -0.75], [-0.25, -0.5, -0.25, -1.0, 0.5], [-0.5, 0.75, 0.5, -0.25, 0.0], [0.5, -0.25, -0.75, -1.0, 0.0]], [[0.0, 0.5, -0.75, -1.0, 0.5], [0.5, 0.75, -1.0, 0.25, 1.0], [0.5, 0.0, 0.0, -0.25, -1.0], [0.5, 0.0, 0.0, 1.0, 0.5], [1.0, -1.0, 1.0, 0.25, -0.25]]]]> : tensor<1x3x5x5xf32>
  %v49 = arith.constant dense<[[[[0.25, -1.0, 1.0], [0.25, -1.0, 1.0], [0.0, -0.75, 0.25]]], [[[-1.0, 0.0, 0.5], [-1.0, 0.75, 0.25], [-0.5, -0.75, -1.0]]], [[[-0.75, -0.5, 0.75], [0.0, -0.75, 0.5], [0.0, 0.75, 0.5]]]]> : tensor<3x1x3x3xf32>
  %v50 = loom.conv %v48, %v49 {strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 3 : i64} : tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>
  %u51 = tensor.cast %v50 : tensor<1x3x3x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u51) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 3, 3, 5]
  // CHECK-NEXT: [0.9375, -0.5, -1.3125, -0.1875, 0.4375]
  // CHECK-NEXT: [-0.125, -0.6875, 0.75, -0.3125, 0.3125]
  // CHECK-NEXT: [0, -1.0625, 1.1875, -0.3125, 0]
  // CHECK-NEXT: [-1.125, -0.4375, -1.375, -1, 0.4375]
  // CHECK-NEXT: [-0.5625, -1.375, -0.1875, -1.5625, 0.5]
  // CHECK-NEXT: [0.6875, -0.125, -1.4375, -0.5, 1.25]
  // CHECK-NEXT: [1, -0.6875, -0.5625, 1.6875, 0.375]
  // CHECK-NEXT: [0.3125, -1.5, 0.5, 2.0625, 0.4375]
  // CHECK-NEXT: [-1.5, 0.875, 0.125, -0.4375, -0.8125]

  // conv tensor<1x2x4x4xf32> tensor<4x1x2x2xf32> strides=[1, 1] pads=[0, 0, 0, 0] dilations=[1, 1] groups=2 bias=False
  %v52 = arith.constant dense<[[[[1.0, 0.5, -1.0, 0.0], [-0.25, 0.75, -0.75, 0.0], [0.75, 0.25, -1.0, 0.75], [-0.25, 0.5, 0.25, 0.25]], [[-0.25, -0.25, -1.0, 0.25], [-0.5, -0.25, -0.75, 0.5], [1.0, -0.25, -0.25, 0.0], [-1.0, 0.5, 0.75, 0.0]]]]> : tensor<1x2x4x4xf32>
  %v53 = arith.constant dense<[[[[-1.0, -0.25], [-0.75, 0.75]]], [[[0.75, -0.25], [-0.25, 0.75]]], [[[-1.0, 0.75], [1.0, 0.0]]], [[[0.5, 0.5], [1.0, -1.0]]]]> : tensor<4x1x2x2xf32>
  %v54 = loom.conv %v52, %v53 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : tensor<1x2x4x4xf32>, tensor<4x1x2x2xf32>
  %u55 = tensor.cast %v54 : tensor<1x4x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u55) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 4, 3, 3]
  // CHECK-NEXT: [-0.375, -1.375, 1.5625]
  // CHECK-NEXT: [-0.3125, -1.5, 2.0625]
  // CHECK-NEXT: [-0.25, -0.1875, 0.8125]
  // CHECK-NEXT: [1.25, -0.125, -0.5625]
  // CHECK-NEXT: [-0.375, -0.0625, 0.25]
  // CHECK-NEXT: [0.9375, 0.5, -0.8125]
  // CHECK-NEXT: [-0.4375, -0.75, 0.4375]
  // CHECK-NEXT: [1.3125, -0.5625, 0.875]
  // CHECK-NEXT: [-2.1875, 0.5625, 1]
  // CHECK-NEXT: [-0.5, -0.125, -1.625]
  // CHECK-NEXT: [0.875, -0.5, -0.375]
  // CHECK-NEXT: [-1.125, -0.5, 0.625]

  // conv tensor<1x2x3x4x4xf32> tensor<2x2x2x2x2xf32> strides=[1, 2, 1] pads=[0, 1, 0, 0, 0, 1] dilations=[1, 1, 1] groups=1 bias=False
  %v56 = arith.constant dense<[[[[[0.5, -0.25, 0.75, 0.75], [-0.5, 0.25, 0.0, 0.25], [0.75, 0.25, 0.5, 0.5], [-0.5, 0.25, -0.25, -0.25]], [[-0.75, -0.75, -0.25, -0.5], [0.25, -0.5, -0.5, -0.25], [0.25, 1.0, 0.0, -0.25], [-0.5, 0.0, 1.0, -0.25]], [[-0.5, 0.25, 0.5, 1.0], [-0.5, 1.0, 0.75, -0.25], [-0.25, -0.5, -0.5, 0.75], [-0.5, 0.0, 1.0, 0.5]]], [[[-0.75, -1.0, -0.5, 0.75], [-0.5, -0.5, 0.0, 0.0], [-1.0, -0.75, 1.0, -0.25], [-0.5, 0.75, 0.0, 0.75]], [[-0.75, 0.0, 0.75, 0.5], [0.5, 0.0, 0.75, -0.25], [0.25, 0.0, -0.5, -0.75], [0.0, -0.5, 0.0, 0.5]], [[0.75, 0.5, 0.0, -1.0], [-0.75, 0.5, 0.25, 0.75], [0.0, 0.0, -0.5, -1.0], [-0.75, 0.5, 0.25, -0.5]]]]]> : tensor<1x2x3x4x4xf32>
  %v57 = arith.constant dense<[[[[[-0.25, 0.25], [-0.25, -0.25]], [[-0.5, 0.25], [1.0, -0.5]]], [[[-0.5, 0.0], [-0.75, 0.0]], [[0.75, 0.25], [-0.75, -0.75]]]], [[[[-1.0, 1.0], [-0.25, -0.5]], [[0.75, -0.5], [-0.5, -0.5]]], [[[-0.25, -1.0], [0.25, -0.25]], [[1.0, 0.5], [-0.25, 0.5]]]]]> : tensor<2x2x2x2x2xf32>
  %v58 = loom.conv %v56, %v57 {strides = array<i64: 1, 2, 1>, padding = array<i64: 0, 1, 0, 0, 0, 1>, dilations = array<i64: 1, 1, 1>, groups = 1 : i64} : tensor<1x2x3x4x4xf32>, tensor<2x2x2x2x2xf32>
  %u59 = tensor.cast %v58 : tensor<1x2x2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u59) : (tensor<*xf32>) -> ()
  // CHECK: rank = 5 offset = 0 sizes = [1, 2, 2, 2, 4]
  // CHECK-NEXT: [0.6875, -0.5625, -0.9375, -1.625]
  // CHECK-NEXT: [0.625, 2.25, 0.8125, 0.25]
  // CHECK-NEXT: [-0.625, -0.125, 0.375, 1.5]
  // CHECK-NEXT: [-0.875, 0, 0.3125, 3]
  // CHECK-NEXT: [1, 0.4375, -0.4375, 0.125]
  // CHECK-NEXT: [1.25, -1.375, 0.4375, -0.5625]
  // CHECK-NEXT: [0.5625, -0.375, -0.875, 0]
  // CHECK-NEXT: [-2.375, 0.375, 1.3125, 0.625]

  // conv tensor<1x4x6xf32> tensor<2x2x3xf32> strides=[1] pads=[1, 0] dilations=[2] groups=2 bias=True
  %v60 = arith.constant dense<[[[0.75, -0.75, -0.75, -0.75, -1.0, -0.5], [0.75, 0.5, -0.25, 0.0, 0.5, 1.0], [-0.5, 0.25, 0.25, 0.25, 0.75, 0.5], [-0.25, 0.5, -1.0, -0.25, -0.75, -0.5]]]> : tensor<1x4x6xf32>
  %v61 = arith.constant dense<[[[1.0, -0.25, -1.0], [0.0, -1.0, -0.75]], [[-0.25, -0.25, -0.5], [0.25, 0.0, -0.75]]]> : tensor<2x2x3xf32>
  %v62 = arith.constant dense<[0.75, -0.75]> : tensor<2xf32>
  %v63 = loom.conv %v60, %v61, %v62 {strides = array<i64: 1>, padding = array<i64: 1, 0>, dilations = array<i64: 2>, groups = 2 : i64} : tensor<1x4x6xf32>, tensor<2x2x3xf32>, tensor<2xf32>
  %u64 = tensor.cast %v63 : tensor<1x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u64) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 2, 3]
  // CHECK-NEXT: [1.1875, 2.5625, -0.0625]
  // CHECK-NEXT: [-0.75, -0.5625, -0.625]

  // conv tensor<1x2x6xf32> tensor<2x1x2xf32> strides=[1] pads=[0, 0] dilations=[1] groups=2 bias=False
  %v65 = arith.constant dense<[[[-0.25, -0.75, 1.0, -0.5, 0.75, 1.0], [-0.75, -1.0, -1.0, -0.75, -0.25, -0.75]]]> : tensor<1x2x6xf32>
  %v66 = arith.constant dense<[[[1.0, 0.0]], [[0.75, -1.0]]]> : tensor<2x1x2xf32>
  %v67 = loom.conv %v65, %v66 {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 2 : i64} : tensor<1x2x6xf32>, tensor<2x1x2xf32>
  %u68 = tensor.cast %v67 : tensor<1x2x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u68) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 2, 5]
  // CHECK-NEXT: [-0.25, -0.75, 1, -0.5, 0.75]
  // CHECK-NEXT: [0.4375, 0.25, 0, -0.3125, 0.5625]

  // pool max tensor<1x2x5x5xf32> kernel=[3, 3] strides=[2, 2] pads=[1, 1, 1, 1] dilations=[1, 1] ceil_mode=False count_include_pad=False
  %v69 = arith.constant dense<[[[[-1.5, -0.25, -1.5, -1.5, -2.0], [-1.0, 1.0, 1.25, 0.0, -1.25], [-0.25, 0.5, -1.5, -0.5, 1.25], [-0.25, 0.0, 1.25, 0.75, -1.5], [0.5, 1.75, -1.25, 1.75, 0.25]], [[0.75, -0.75, -2.0, -2.0, 0.75], [2.0, 0.5, -0.5, 1.25, 2.0], [-1.25, -1.75, 2.0, -2.0, 1.75], [-1.5, -1.75, -1.0, -0.75, -0.75], [-2.0, 1.5, 1.5, 0.75, 1.75]]]]> : tensor<1x2x5x5xf32>
  %v70 = loom.pool max %v69 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x5x5xf32>
  %u71 = tensor.cast %v70 : tensor<1x2x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u71) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 2, 3, 3]
  // CHECK-NEXT: [1, 1.25, 0]
  // CHECK-NEXT: [1, 1.25, 1.25]
  // CHECK-NEXT: [1.75, 1.75, 1.75]
  // CHECK-NEXT: [2, 1.25, 2]
  // CHECK-NEXT: [2, 2, 2]
  // CHECK-NEXT: [1.5, 1.5, 1.75]

  // pool avg tensor<1x2x5x5xf32> kernel=[3, 3] strides=[2, 2] pads=[1, 1, 1, 1] dilations=[1, 1] ceil_mode=False count_include_pad=False
  %v72 = arith.constant dense<[[[[1.75, 2.0, -0.5, 0.5, 1.0], [0.75, 1.25, 0.75, -0.5, 0.25], [-1.25, 2.0, 1.75, 0.5, 1.25], [-0.75, -0.5, 0.0, -1.0, -2.0], [-0.5, 1.0, -1.0, 0.75, 0.5]], [[-0.25, 1.0, 1.5, 2.0, 1.0], [-1.75, -0.75, 0.0, -1.75, -0.25], [-1.5, 0.25, -1.25, -1.0, -0.75], [2.0, -0.25, 0.25, 1.75, -2.0], [-1.0, -0.25, 1.75, 1.0, 0.75]]]]> : tensor<1x2x5x5xf32>
  %v73 = loom.pool avg %v72 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x5x5xf32>
  %v74 = arith.constant dense<[[[[1.4375, 0.5833333134651184, 0.3125], [0.25, 0.4722222089767456, -0.25], [-0.1875, -0.125, -0.4375]], [[-0.4375, 0.3333333432674408, 0.25], [-0.3333333432674408, -0.3055555522441864, -0.6666666865348816], [0.125, 0.7083333134651184, 0.375]]]]> : tensor<1x2x3x3xf32>
  %zero75 = arith.constant 0 : i64
  %empty75 = tensor.empty() : tensor<i64>
  %init75 = linalg.fill ins(%zero75 : i64) outs(%empty75 : tensor<i64>) -> tensor<i64>
  %bad75 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v73, %v74 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) outs(%init75 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u75 = tensor.cast %bad75 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u75) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x2x3x3xf32> (the constant %v74):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // pool avg tensor<1x1x5x5xf32> kernel=[3, 3] strides=[2, 2] pads=[1, 1, 1, 1] dilations=[1, 1] ceil_mode=False count_include_pad=True
  %v76 = arith.constant dense<[[[[-0.5, 1.5, -1.25, -0.5, -0.5], [-2.0, -1.75, 1.25, 2.0, -1.0], [-1.75, -1.5, -2.0, 1.25, -2.0], [0.75, 1.25, -1.25, -1.25, -1.0], [1.0, 1.75, 1.0, -1.0, 1.0]]]]> : tensor<1x1x5x5xf32>
  %v77 = loom.pool avg %v76 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad} : tensor<1x1x5x5xf32>
  %v78 = arith.constant dense<[[[[-0.3055555522441864, 0.1388888955116272, 0.0], [-0.5555555820465088, -0.2222222238779068, -0.2222222238779068], [0.5277777910232544, 0.0555555559694767, -0.25]]]]> : tensor<1x1x3x3xf32>
  %zero79 = arith.constant 0 : i64
  %empty79 = tensor.empty() : tensor<i64>
  %init79 = linalg.fill ins(%zero79 : i64) outs(%empty79 : tensor<i64>) -> tensor<i64>
  %bad79 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v77, %v78 : tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) outs(%init79 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u79 = tensor.cast %bad79 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u79) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x1x3x3xf32> (the constant %v78):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // pool avg tensor<1x1x6x6xf32> kernel=[3, 3] strides=[2, 2] pads=[1, 0, 1, 0] dilations=[1, 1] ceil_mode=True count_include_pad=True
  %v80 = arith.constant dense<[[[[0.75, -0.25, -1.5, -0.75, 1.25, 0.0], [-1.75, 1.75, 0.0, -0.75, -2.0, 0.25], [0.25, -1.5, 1.5, 0.0, -1.75, -1.25], [-1.0, 1.0, 1.0, 1.25, 0.5, 1.75], [-0.75, 0.25, 0.5, -0.5, -0.25, 0.75], [1.5, 1.75, -1.0, 1.0, 1.0, 1.75]]]]> : tensor<1x1x6x6xf32>
  %v81 = loom.pool avg %v80 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, dilations = array<i64: 1, 1>, ceil_mode, count_include_pad} : tensor<1x1x6x6xf32>
  %v82 = arith.constant dense<[[[[-0.1111111119389534, -0.4166666567325592, -0.0833333358168602], [0.1388888955116272, -0.02777777798473835, -0.4166666567325592], [0.3611111044883728, 0.3888888955116272, 0.9166666865348816], [0.375, 0.1666666716337204, 0.6875]]]]> : tensor<1x1x4x3xf32>
  %zero83 = arith.constant 0 : i64
  %empty83 = tensor.empty() : tensor<i64>
  %init83 = linalg.fill ins(%zero83 : i64) outs(%empty83 : tensor<i64>) -> tensor<i64>
  %bad83 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v81, %v82 : tensor<1x1x4x3xf32>, tensor<1x1x4x3xf32>) outs(%init83 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u83 = tensor.cast %bad83 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u83) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x1x4x3xf32> (the constant %v82):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // pool avg tensor<1x1x6x6xf32> kernel=[2, 2] strides=[2, 2] pads=[0, 0, 0, 0] dilations=[1, 1] ceil_mode=False count_include_pad=False
  %v84 = arith.constant dense<[[[[0.5, -1.25, 1.0, -1.5, -0.5, 0.0], [1.0, -1.5, 0.75, -1.5, -0.5, -1.5], [-2.0, -0.75, 2.0, 0.25, 1.0, -1.25], [-1.25, 1.75, 1.0, 0.0, -1.0, 1.5], [-0.25, -2.0, 1.5, -0.25, -0.25, -0.5], [-1.0, 0.5, -0.75, 0.0, -1.75, 1.5]]]]> : tensor<1x1x6x6xf32>
  %v85 = loom.pool avg %v84 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x6x6xf32>
  %u86 = tensor.cast %v85 : tensor<1x1x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u86) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 1, 3, 3]
  // CHECK-NEXT: [-0.3125, -0.3125, -0.625]
  // CHECK-NEXT: [-0.5625, 0.8125, 0.0625]
  // CHECK-NEXT: [-0.6875, 0.125, -0.25]

  // pool max tensor<1x2x7xf32> kernel=[2] strides=[2] pads=[0, 0] dilations=[1] ceil_mode=True count_include_pad=False
  %v87 = arith.constant dense<[[[-1.25, 0.5, -1.0, -1.25, -1.5, 1.0, -1.75], [1.25, -0.25, -0.25, -1.25, -0.5, 1.0, 1.75]]]> : tensor<1x2x7xf32>
  %v88 = loom.pool max %v87 {kernel = array<i64: 2>, strides = array<i64: 2>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, ceil_mode} : tensor<1x2x7xf32>
  %u89 = tensor.cast %v88 : tensor<1x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u89) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 2, 4]
  // CHECK-NEXT: [0.5, -1, 1, -1.75]
  // CHECK-NEXT: [1.25, -0.25, 1, 1.75]

  // pool max tensor<1x1x6x6xf32> kernel=[2, 2] strides=[1, 2] pads=[0, 1, 0, 1] dilations=[2, 2] ceil_mode=False count_include_pad=False
  %v90 = arith.constant dense<[[[[1.75, 0.5, -1.0, -1.75, 0.25, 0.25], [0.0, 0.0, -1.75, -0.5, -1.5, 1.5], [1.75, 1.5, 0.0, 1.25, 1.25, -0.75], [-1.75, 1.5, 0.5, -0.25, 1.5, 2.0], [1.5, -2.0, -2.0, 0.0, 0.0, -1.25], [-0.5, 0.25, 1.0, 1.0, -1.75, -0.5]]]]> : tensor<1x1x6x6xf32>
  %v91 = loom.pool max %v90 {kernel = array<i64: 2, 2>, strides = array<i64: 1, 2>, padding = array<i64: 0, 1, 0, 1>, dilations = array<i64: 2, 2>} : tensor<1x1x6x6xf32>
  %u92 = tensor.cast %v91 : tensor<1x1x4x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u92) : (tensor<*xf32>) -> ()
  // CHECK: rank = 4 offset = 0 sizes = [1, 1, 4, 3]
  // CHECK-NEXT: [1.5, 1.5, 1.25]
  // CHECK-NEXT: [1.5, 1.5, 2]
  // CHECK-NEXT: [1.5, 1.5, 1.25]
  // CHECK-NEXT: [1.5, 1.5, 2]

  // pool avg tensor<1x1x3x4x4xf32> kernel=[2, 2, 2] strides=[1, 2, 2] pads=[0, 1, 0, 0, 0, 1] dilations=[1, 1, 1] ceil_mode=False count_include_pad=False
  %v93 = arith.constant dense<[[[[[-1.0, -1.0, 1.25, -0.25], [-0.25, 2.0, -0.25, 1.0], [2.0, 2.0, -0.75, -0.5], [-2.0, 1.0, -0.5, -2.0]], [[-1.5, -1.25, -1.75, -1.75], [0.25, -1.25, 2.0, 0.25], [0.25, 0.0, 0.75, 1.25], [-0.75, 0.5, 0.25, 0.75]], [[1.0, 1.0, 0.5, -1.75], [1.25, 2.0, 0.25, -0.25], [-1.25, -0.25, 0.25, 1.25], [0.0, -1.25, -1.5, 0.25]]]]]> : tensor<1x1x3x4x4xf32>
  %v94 = loom.pool avg %v93 {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 2, 2>, padding = array<i64: 0, 1, 0, 0, 0, 1>, dilations = array<i64: 1, 1, 1>} : tensor<1x1x3x4x4xf32>
  %u95 = tensor.cast %v94 : tensor<1x1x2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u95) : (tensor<*xf32>) -> ()
  // CHECK: rank = 5 offset = 0 sizes = [1, 1, 2, 2, 2]
  // CHECK-NEXT: [-1.1875, -0.625]
  // CHECK-NEXT: [0.625, 0.46875]
  // CHECK-NEXT: [-0.1875, -1.1875]
  // CHECK-NEXT: [0.125, 0.71875]

  // pool max tensor<1x1x3x4x4xf32> kernel=[2, 2, 2] strides=[2, 2, 2] pads=[0, 0, 0, 0, 0, 0] dilations=[1, 1, 1] ceil_mode=True count_include_pad=False
  %v96 = arith.constant dense<[[[[[0.5, 1.75, 1.25, 0.25], [-1.5, 1.5, 0.25, 1.5], [1.0, -0.75, -0.5, -0.25], [-1.0, 1.25, -0.5, 0.75]], [[0.25, -0.5, 0.75, -1.5], [0.25, -1.5, -1.75, 1.5], [1.25, 0.75, 1.75, 0.5], [-1.75, -0.5, -1.0, 1.0]], [[-1.5, 0.5, 1.5, -1.25], [1.75, 0.75, -2.0, 0.25], [-0.75, 0.75, -1.25, 0.0], [-0.25, 0.0, 1.75, 2.0]]]]]> : tensor<1x1x3x4x4xf32>
  %v97 = loom.pool max %v96 {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>, ceil_mode} : tensor<1x1x3x4x4xf32>
  %u98 = tensor.cast %v97 : tensor<1x1x2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u98) : (tensor<*xf32>) -> ()
  // CHECK: rank = 5 offset = 0 sizes = [1, 1, 2, 2, 2]
  // CHECK-NEXT: [1.75, 1.5]
  // CHECK-NEXT: [1.25, 1.75]
  // CHECK-NEXT: [1.75, 1.5]
  // CHECK-NEXT: [0.75, 2]

  // pool avg tensor<1x2x3x3xf32> kernel=[3, 3] strides=[1, 1] pads=[0, 0, 0, 0] dilations=[1, 1] ceil_mode=False count_include_pad=False
  %v99 = arith.constant dense<[[[[-1.75, 1.25, -1.5], [-1.5, 0.0, 2.0], [0.0, 0.25, 1.0]], [[0.0, -0.25, 0.75], [-1.5, 1.5, -0.5], [0.5, 2.0, 1.0]]]]> : tensor<1x2x3x3xf32>
  %v100 = loom.pool avg %v99 {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x3x3xf32>
  %v101 = arith.constant dense<[[[[-0.02777777798473835]], [[0.3888888955116272]]]]> : tensor<1x2x1x1xf32>
  %zero102 = arith.constant 0 : i64
  %empty102 = tensor.empty() : tensor<i64>
  %init102 = linalg.fill ins(%zero102 : i64) outs(%empty102 : tensor<i64>) -> tensor<i64>
  %bad102 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v100, %v101 : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) outs(%init102 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u102 = tensor.cast %bad102 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u102) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x2x1x1xf32> (the constant %v101):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // attention q=(1, 2, 3, 4) k=(1, 2, 3, 4) v=(1, 2, 3, 2) causal=False scale=None mask=None
  %v103 = arith.constant dense<[[[[0.5, 0.75, -0.75, -0.25], [0.75, -0.5, -0.5, 0.75], [0.75, -0.5, -1.0, 0.0]], [[0.75, 0.0, -0.75, 0.0], [0.0, 0.25, 0.25, -0.5], [0.0, 0.0, -0.75, 0.0]]]]> : tensor<1x2x3x4xf32>
  %v104 = arith.constant dense<[[[[-0.75, -0.75, -0.5, 1.0], [-1.0, 0.75, -0.75, 1.0], [-0.75, 0.25, 0.0, -0.5]], [[-0.25, -0.25, 0.25, 0.5], [-0.5, -0.25, -1.0, -0.5], [-0.5, 0.75, 0.5, 0.5]]]]> : tensor<1x2x3x4xf32>
  %v105 = arith.constant dense<[[[[-0.5, -0.75], [-0.25, -0.25], [0.5, 0.75]], [[-0.25, -0.75], [0.75, 0.0], [1.0, -0.25]]]]> : tensor<1x2x3x2xf32>
  %v106 = loom.attention %v103, %v104, %v105 : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x2xf32>
  %v107 = arith.constant dense<[[[[-0.05279151722788811, -0.026126181706786156], [-0.22876115143299103, -0.30267617106437683], [-0.1615154892206192, -0.20399509370326996]], [[0.5086060166358948, -0.2914894223213196], [0.533399760723114, -0.3189932405948639], [0.5298571586608887, -0.27864500880241394]]]]> : tensor<1x2x3x2xf32>
  %zero108 = arith.constant 0 : i64
  %empty108 = tensor.empty() : tensor<i64>
  %init108 = linalg.fill ins(%zero108 : i64) outs(%empty108 : tensor<i64>) -> tensor<i64>
  %bad108 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v106, %v107 : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) outs(%init108 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u108 = tensor.cast %bad108 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u108) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x2x3x2xf32> (the constant %v107):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // attention q=(2, 4, 3, 2) k=(2, 2, 4, 2) v=(2, 2, 4, 3) causal=True scale=None mask=None
  %v109 = arith.constant dense<[[[[-0.5, -1.0], [0.5, 0.0], [-0.5, 0.0]], [[-0.75, 1.0], [-0.25, -0.5], [0.25, 0.75]], [[1.0, 0.5], [-0.75, -0.25], [0.5, 0.75]], [[0.0, 0.75], [-0.75, -0.25], [1.0, -0.75]]], [[[0.5, -0.75], [-0.75, -0.75], [1.0, 1.0]], [[-1.0, 0.5], [-1.0, 0.75], [-0.5, -1.0]], [[1.0, 1.0], [-1.0, -0.25], [1.0, -0.25]], [[0.25, 0.75], [-1.0, 0.0], [0.25, 1.0]]]]> : tensor<2x4x3x2xf32>
  %v110 = arith.constant dense<[[[[0.0, 0.75], [0.25, -0.25], [0.5, 0.75], [0.5, 0.25]], [[1.0, 0.25], [-0.75, 1.0], [0.75, -0.25], [-0.25, 0.25]]], [[[0.75, 0.5], [1.0, -1.0], [1.0, 0.0], [-0.5, -0.75]], [[0.0, -0.5], [1.0, 0.0], [1.0, 0.5], [-0.25, -0.25]]]]> : tensor<2x2x4x2xf32>
  %v111 = arith.constant dense<[[[[1.0, 0.25, -0.25], [0.5, -0.25, -0.75], [0.5, -1.0, 0.0], [-0.25, 0.0, -0.75]], [[-0.25, -0.75, -0.25], [0.5, -0.75, -0.75], [-1.0, 0.75, 0.5], [-1.0, 0.25, 0.0]]], [[[0.5, -0.25, 0.75], [0.0, -0.5, 0.0], [-0.5, 0.0, -0.5], [-0.25, -0.5, 0.0]], [[0.5, 0.5, -0.25], [0.0, -0.5, -0.5], [0.25, 0.75, -0.75], [-0.5, -1.0, 1.0]]]]> : tensor<2x2x4x3xf32>
  %v112 = loom.attention %v109, %v110, %v111 {causal} : tensor<2x4x3x2xf32>, tensor<2x2x4x2xf32>, tensor<2x2x4x3xf32>
  %v113 = arith.constant dense<[[[[1.0, 0.25, -0.25], [0.7389586567878723, -0.01104135625064373, -0.5110413432121277], [0.681595504283905, -0.29666101932525635, -0.3401479721069336]], [[1.0, 0.25, -0.25], [0.7116355895996094, -0.03836442157626152, -0.5383644104003906], [0.684678316116333, -0.36793896555900574, -0.26270440220832825]], [[-0.25, -0.75, -0.25], [0.2667575180530548, -0.75, -0.5945050120353699], [-0.2201813906431198, -0.3293479084968567, -0.19977039098739624]], [[-0.25, -0.75, -0.25], [0.2667575180530548, -0.75, -0.5945050120353699], [-0.5442829728126526, -0.03361043334007263, 0.06558690965175629]]], [[[0.5, -0.25, 0.75], [0.17004281282424927, -0.41497859358787537, 0.2550642192363739], [0.03598909080028534, -0.20282487571239471, 0.14704382419586182]], [[0.5, -0.25, 0.75], [0.36278605461120605, -0.318606972694397, 0.5441790819168091], [-0.030686262995004654, -0.3177247941493988, 0.019843384623527527]], [[0.5, 0.5, -0.25], [0.3445050120353699, 0.18901002407073975, -0.32774749398231506], [0.20299936830997467, 0.18576355278491974, -0.5383827090263367]], [[0.5, 0.5, -0.25], [0.3348807692527771, 0.1697615534067154, -0.33255961537361145], [0.2158435434103012, 0.286236047744751, -0.5693526864051819]]]]> : tensor<2x4x3x3xf32>
  %zero114 = arith.constant 0 : i64
  %empty114 = tensor.empty() : tensor<i64>
  %init114 = linalg.fill ins(%zero114 : i64) outs(%empty114 : tensor<i64>) -> tensor<i64>
  %bad114 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v112, %v113 : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) outs(%init114 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u114 = tensor.cast %bad114 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u114) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x4x3x3xf32> (the constant %v113):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // attention q=(1, 3, 2, 2) k=(1, 1, 3, 2) v=(1, 1, 3, 2) causal=False scale=0.5 mask=(2, 3)
  %v115 = arith.constant dense<[[[[0.5, -0.75], [0.5, -0.5]], [[-0.5, 0.0], [0.25, 0.25]], [[-1.0, 0.5], [-0.25, 1.0]]]]> : tensor<1x3x2x2xf32>
  %v116 = arith.constant dense<[[[[0.25, 1.0], [-0.5, 0.25], [-0.25, 0.75]]]]> : tensor<1x1x3x2xf32>
  %v117 = arith.constant dense<[[[[0.25, 0.5], [0.25, 0.5], [-0.75, -0.5]]]]> : tensor<1x1x3x2xf32>
  %v118 = arith.constant dense<[[true, false, true], [false, true, true]]> : tensor<2x3xi1>
  %v119 = loom.attention %v115, %v116, %v117 mask %v118 {scale = 0.5 : f64} : tensor<1x3x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<2x3xi1>
  %v120 = arith.constant dense<[[[[-0.24218814074993134, 0.007811864372342825], [-0.2343800812959671, 0.015619915910065174]], [[-0.28120937943458557, -0.031209373846650124], [-0.2734203636646271, -0.02342034876346588]], [[-0.2967381477355957, -0.046738151460886], [-0.3044704794883728, -0.05447046458721161]]]]> : tensor<1x3x2x2xf32>
  %zero121 = arith.constant 0 : i64
  %empty121 = tensor.empty() : tensor<i64>
  %init121 = linalg.fill ins(%zero121 : i64) outs(%empty121 : tensor<i64>) -> tensor<i64>
  %bad121 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v119, %v120 : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) outs(%init121 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u121 = tensor.cast %bad121 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u121) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x3x2x2xf32> (the constant %v120):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // attention q=(1, 2, 2, 2) k=(1, 2, 3, 2) v=(1, 2, 3, 2) causal=True scale=None mask=(2, 1, 3)
  %v122 = arith.constant dense<[[[[-0.75, 0.5], [-0.5, 0.5]], [[-0.75, -0.75], [1.0, 0.25]]]]> : tensor<1x2x2x2xf32>
  %v123 = arith.constant dense<[[[[-0.5, 0.0], [0.25, -1.0], [1.0, 0.0]], [[1.0, 0.75], [-1.0, 0.75], [0.0, 0.75]]]]> : tensor<1x2x3x2xf32>
  %v124 = arith.constant dense<[[[[0.25, -0.5], [0.5, -0.5], [-0.25, 0.25]], [[-0.5, 1.0], [-1.0, -0.25], [-1.0, 0.5]]]]> : tensor<1x2x3x2xf32>
  %v125 = arith.constant dense<[[[0.5, -0.75, -1.0]], [[0.25, 1.0, -0.5]]]> : tensor<2x1x3xf32>
  %v126 = loom.attention %v122, %v123, %v124 mask %v125 {causal} : tensor<1x2x2x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<2x1x3xf32>
  %v127 = arith.constant dense<[[[[0.25, -0.5], [0.2834225296974182, -0.5]], [[-0.5, 1.0], [-0.6698968410491943, 0.5752578377723694]]]]> : tensor<1x2x2x2xf32>
  %zero128 = arith.constant 0 : i64
  %empty128 = tensor.empty() : tensor<i64>
  %init128 = linalg.fill ins(%zero128 : i64) outs(%empty128 : tensor<i64>) -> tensor<i64>
  %bad128 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v126, %v127 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) outs(%init128 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u128 = tensor.cast %bad128 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u128) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<1x2x2x2xf32> (the constant %v127):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]
  return
}
