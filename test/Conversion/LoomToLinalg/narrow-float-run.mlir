// Execution checks that narrow floats (bf16, f16) accumulate in float32:
// every op that sums (matmul in its four lowerings, the sum-like
// reductions, softmax, the norms, average pooling, conv, attention,
// scatter-add) sums 512 (f16: 4096) terms whose running sum passes 256
// (2048), where the narrow type's spacing is 2, so a sum kept in bf16 (f16)
// stops at 256 (2048). The result is rounded to the narrow type once. Each
// comment names what the lowering printed when it accumulated in the narrow
// type (max is exact either way).
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %v1 = loom.constant dense<1.0> : tensor<2x512xbf16>
  %v2 = loom.constant dense<1.0> : tensor<512x3xbf16>
  %v3 = loom.matmul %v1, %v2 : tensor<2x512xbf16>, tensor<512x3xbf16>
  %v4 = loom.cast %v3 : tensor<2x3xbf16> to tensor<2x3xf32>
  %u5 = tensor.cast %v4 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // matmul, 2-D; accumulated in the narrow type: [[256, 256, 256], [256, 256, 256]]
  // CHECK: rank = 2 offset = 0 sizes = [2, 3]
  // CHECK-NEXT: [512, 512, 512]
  // CHECK-NEXT: [512, 512, 512]

  %v6 = loom.constant dense<1.0> : tensor<2x1x512xbf16>
  %v7 = loom.constant dense<1.0> : tensor<512x2xbf16>
  %v8 = loom.matmul %v6, %v7 : tensor<2x1x512xbf16>, tensor<512x2xbf16>
  %v9 = loom.cast %v8 : tensor<2x1x2xbf16> to tensor<2x1x2xf32>
  %u10 = tensor.cast %v9 : tensor<2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
  // matmul, a batched lhs times a 2-D weight; accumulated in the narrow type: [[[256, 256]], [[256, 256]]]
  // CHECK: rank = 3 offset = 0 sizes = [2, 1, 2]
  // CHECK-NEXT: [512, 512]
  // CHECK-NEXT: [512, 512]

  %v11 = loom.constant dense<1.0> : tensor<2x512x1xbf16>
  %v12 = loom.matmul %v6, %v11 : tensor<2x1x512xbf16>, tensor<2x512x1xbf16>
  %v13 = loom.cast %v12 : tensor<2x1x1xbf16> to tensor<2x1x1xf32>
  %u14 = tensor.cast %v13 : tensor<2x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
  // batch matmul; accumulated in the narrow type: [[[256]], [[256]]]
  // CHECK: rank = 3 offset = 0 sizes = [2, 1, 1]
  // CHECK-NEXT: [512]
  // CHECK-NEXT: [512]

  %v15 = loom.constant dense<1.0> : tensor<1x1x512xbf16>
  %v16 = loom.matmul %v15, %v11 : tensor<1x1x512xbf16>, tensor<2x512x1xbf16>
  %v17 = loom.cast %v16 : tensor<2x1x1xbf16> to tensor<2x1x1xf32>
  %u18 = tensor.cast %v17 : tensor<2x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u18) : (tensor<*xf32>) -> ()
  // matmul with broadcast batch dims (a generic); accumulated in the narrow type: [[[256]], [[256]]]
  // CHECK: rank = 3 offset = 0 sizes = [2, 1, 1]
  // CHECK-NEXT: [512]
  // CHECK-NEXT: [512]

  %v19 = loom.constant dense<1.0> : tensor<1x4096xf16>
  %v20 = loom.constant dense<1.0> : tensor<4096x1xf16>
  %v21 = loom.matmul %v19, %v20 : tensor<1x4096xf16>, tensor<4096x1xf16>
  %v22 = loom.cast %v21 : tensor<1x1xf16> to tensor<1x1xf32>
  %u23 = tensor.cast %v22 : tensor<1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u23) : (tensor<*xf32>) -> ()
  // f16 matmul; accumulated in the narrow type: [[2048]]
  // CHECK: rank = 2 offset = 0 sizes = [1, 1]
  // CHECK-NEXT: [4096]

  %v24 = loom.constant dense<1.0> : tensor<2x512xbf16>
  %v25 = loom.reduce sum %v24 {axes = array<i64: 1>, keep_dims = false} : tensor<2x512xbf16>
  %v26 = loom.cast %v25 : tensor<2xbf16> to tensor<2xf32>
  %u27 = tensor.cast %v26 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u27) : (tensor<*xf32>) -> ()
  // reduce sum; accumulated in the narrow type: [256, 256]
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [512, 512]

  %v28 = loom.reduce mean %v24 {axes = array<i64: 1>, keep_dims = false} : tensor<2x512xbf16>
  %v29 = loom.cast %v28 : tensor<2xbf16> to tensor<2xf32>
  %u30 = tensor.cast %v29 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u30) : (tensor<*xf32>) -> ()
  // reduce mean; accumulated in the narrow type: [0.5, 0.5]
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [1, 1]

  %v31 = loom.reduce sum_square %v24 {axes = array<i64: 1>, keep_dims = false} : tensor<2x512xbf16>
  %v32 = loom.cast %v31 : tensor<2xbf16> to tensor<2xf32>
  %u33 = tensor.cast %v32 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u33) : (tensor<*xf32>) -> ()
  // reduce sum_square; accumulated in the narrow type: [256, 256]
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [512, 512]

  %v34 = loom.reduce l2 %v24 {axes = array<i64: 1>, keep_dims = false} : tensor<2x512xbf16>
  %v35 = loom.cast %v34 : tensor<2xbf16> to tensor<2xf32>
  %u36 = tensor.cast %v35 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u36) : (tensor<*xf32>) -> ()
  // reduce l2; accumulated in the narrow type: [16, 16]
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [22.625, 22.625]

  %v37 = loom.reduce max %v24 {axes = array<i64: 1>, keep_dims = false} : tensor<2x512xbf16>
  %v38 = loom.cast %v37 : tensor<2xbf16> to tensor<2xf32>
  %u39 = tensor.cast %v38 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u39) : (tensor<*xf32>) -> ()
  // reduce max; the same in the narrow type
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [1, 1]

  %v40 = loom.constant dense<0.0> : tensor<1x512xbf16>
  %v41 = loom.softmax %v40 {axis = 1 : i64} : tensor<1x512xbf16>
  %v42 = tensor.extract_slice %v41[0, 0] [1, 2] [1, 1] : tensor<1x512xbf16> to tensor<1x2xbf16>
  %v43 = loom.cast %v42 : tensor<1x2xbf16> to tensor<1x2xf32>
  %u44 = tensor.cast %v43 : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u44) : (tensor<*xf32>) -> ()
  // softmax; accumulated in the narrow type: [[0.00390625, 0.00390625]]
  // CHECK: rank = 2 offset = 0 sizes = [1, 2]
  // CHECK-NEXT: [0.00195312, 0.00195312]

  %v45 = loom.softmax %v40 {axis = 1 : i64, log} : tensor<1x512xbf16>
  %v46 = tensor.extract_slice %v45[0, 0] [1, 2] [1, 1] : tensor<1x512xbf16> to tensor<1x2xbf16>
  %v47 = loom.cast %v46 : tensor<1x2xbf16> to tensor<1x2xf32>
  %u48 = tensor.cast %v47 : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u48) : (tensor<*xf32>) -> ()
  // log softmax; accumulated in the narrow type: [[-5.53125, -5.53125]]
  // CHECK: rank = 2 offset = 0 sizes = [1, 2]
  // CHECK-NEXT: [-6.25, -6.25]

  %v49 = loom.constant dense<[[1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0]]> : tensor<1x512xbf16>
  %v50 = loom.constant dense<1.0> : tensor<512xbf16>
  %v51 = loom.constant dense<0.0> : tensor<512xbf16>
  %v52 = loom.layer_norm %v49 scale %v50 bias %v51 {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<1x512xbf16>, tensor<512xbf16>, tensor<512xbf16>
  %v53 = tensor.extract_slice %v52[0, 0] [1, 4] [1, 1] : tensor<1x512xbf16> to tensor<1x4xbf16>
  %v54 = loom.cast %v53 : tensor<1x4xbf16> to tensor<1x4xf32>
  %u55 = tensor.cast %v54 : tensor<1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u55) : (tensor<*xf32>) -> ()
  // layer_norm of 1, 3, 1, 3, ... (mean 2, variance 1); accumulated in the narrow type: [[-1.41406, 1.41406, -1.41406, 1.41406]]
  // CHECK: rank = 2 offset = 0 sizes = [1, 4]
  // CHECK-NEXT: [-1, 1, -1, 1]

  %v56 = loom.rms_norm %v24 scale %v50 {axis = 1 : i64, epsilon = 1.0e-6 : f64} : tensor<2x512xbf16>, tensor<512xbf16>
  %v57 = tensor.extract_slice %v56[0, 0] [1, 2] [1, 1] : tensor<2x512xbf16> to tensor<1x2xbf16>
  %v58 = loom.cast %v57 : tensor<1x2xbf16> to tensor<1x2xf32>
  %u59 = tensor.cast %v58 : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u59) : (tensor<*xf32>) -> ()
  // rms_norm; accumulated in the narrow type: [[1.41406, 1.41406]]
  // CHECK: rank = 2 offset = 0 sizes = [1, 2]
  // CHECK-NEXT: [1, 1]

  %v60 = loom.constant dense<1.0> : tensor<1x1x512xbf16>
  %v61 = loom.pool avg %v60 {kernel = array<i64: 512>, strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>} : tensor<1x1x512xbf16>
  %v62 = loom.cast %v61 : tensor<1x1x1xbf16> to tensor<1x1x1xf32>
  %u63 = tensor.cast %v62 : tensor<1x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u63) : (tensor<*xf32>) -> ()
  // average pooling; accumulated in the narrow type: [[[0.5]]]
  // CHECK: rank = 3 offset = 0 sizes = [1, 1, 1]
  // CHECK-NEXT: [1]

  %v64 = loom.constant dense<1.0> : tensor<1x512x1xbf16>
  %v65 = loom.constant dense<1.0> : tensor<2x512x1xbf16>
  %v66 = loom.conv %v64, %v65 {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : tensor<1x512x1xbf16>, tensor<2x512x1xbf16>
  %v67 = loom.cast %v66 : tensor<1x2x1xbf16> to tensor<1x2x1xf32>
  %u68 = tensor.cast %v67 : tensor<1x2x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u68) : (tensor<*xf32>) -> ()
  // conv; accumulated in the narrow type: [[[256], [256]]]
  // CHECK: rank = 3 offset = 0 sizes = [1, 2, 1]
  // CHECK-NEXT: [512]
  // CHECK-NEXT: [512]

  %v69 = loom.constant dense<1.0> : tensor<1x1024x1xbf16>
  %v70 = loom.constant dense<4.0> : tensor<2xbf16>
  %v71 = loom.conv %v69, %v65, %v70 {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 2 : i64} : tensor<1x1024x1xbf16>, tensor<2x512x1xbf16>, tensor<2xbf16>
  %v72 = loom.cast %v71 : tensor<1x2x1xbf16> to tensor<1x2x1xf32>
  %u73 = tensor.cast %v72 : tensor<1x2x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u73) : (tensor<*xf32>) -> ()
  // grouped conv (a generic), bias 4; accumulated in the narrow type: [[[256], [256]]]
  // CHECK: rank = 3 offset = 0 sizes = [1, 2, 1]
  // CHECK-NEXT: [516]
  // CHECK-NEXT: [516]

  %v74 = loom.constant dense<1.0> : tensor<1x1x1x4xbf16>
  %v75 = loom.constant dense<1.0> : tensor<1x1x256x4xbf16>
  %v76 = loom.constant dense<0.0> : tensor<1x1x256x4xbf16>
  %v77 = loom.concat %v75, %v76 {axis = 2 : i64} : tensor<1x1x256x4xbf16>, tensor<1x1x256x4xbf16>
  %v78 = loom.constant dense<1.0> : tensor<1x1x256x2xbf16>
  %v79 = loom.constant dense<0.0> : tensor<1x1x256x2xbf16>
  %v80 = loom.concat %v78, %v79 {axis = 2 : i64} : tensor<1x1x256x2xbf16>, tensor<1x1x256x2xbf16>
  %v81 = loom.attention %v74, %v77, %v80 : tensor<1x1x1x4xbf16>, tensor<1x1x512x4xbf16>, tensor<1x1x512x2xbf16>
  %v82 = loom.cast %v81 : tensor<1x1x1x2xbf16> to tensor<1x1x1x2xf32>
  %u83 = tensor.cast %v82 : tensor<1x1x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u83) : (tensor<*xf32>) -> ()
  // attention: 256 keys score 2 (value 1), 256 score 0 (value 0); accumulated in the narrow type: [[[[1, 1]]]]
  // CHECK: rank = 4 offset = 0 sizes = [1, 1, 1, 2]
  // CHECK-NEXT: [0.878906, 0.878906]
  // scatter add: 512 rows of ones into row 0 of a zero table (an
  // embedding's gradient); accumulated in the narrow type: [256, 256], [0, 0]
  %t0 = loom.constant dense<0.0> : tensor<2x2xbf16>
  %ids = loom.constant dense<0> : tensor<512x2xi64>
  %rows = loom.constant dense<1.0> : tensor<512x2xbf16>
  %sc = loom.scatter %t0, %ids, %rows reduction add {axis = 0 : i64} : tensor<2x2xbf16>, tensor<512x2xi64>, tensor<512x2xbf16>
  %scf = loom.cast %sc : tensor<2x2xbf16> to tensor<2x2xf32>
  %scu = tensor.cast %scf : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%scu) : (tensor<*xf32>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [2, 2]
  // CHECK-NEXT: [512, 512]
  // CHECK-NEXT: [0, 0]
  // pow, which the lowering expands into exp(y * log(x)): 3 ^ 2.5 = 15.588
  // rounds to 15.5625; rounded after each step in bf16 it was 15.625
  %px = loom.constant dense<3.0> : tensor<2xbf16>
  %py = loom.constant dense<2.5> : tensor<2xbf16>
  %pw = loom.binary pow %px, %py : tensor<2xbf16>, tensor<2xbf16>
  %pwf = loom.cast %pw : tensor<2xbf16> to tensor<2xf32>
  %pwu = tensor.cast %pwf : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%pwu) : (tensor<*xf32>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [15.5625, 15.5625]
  return
}
