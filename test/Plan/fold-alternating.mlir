// Dense and mixture-of-experts layers alternating (A, B, A, B, A, B): the
// repeating unit is a pair of layers, so one run of three two-layer copies.
// RUN: loom-opt %s --loom-fold -o /dev/null 2>&1 | FileCheck %s
// RUN: loom-opt %s --loom-fold="annotate=true" 2>/dev/null | FileCheck %s --check-prefix=ANNOT

// Dense layer: 7 ops; MoE layer (router, top-2, gates, dispatch, expert
// MLP, combine, residual): 10 ops.
// CHECK: remark: loom-fold: block 0: 3 copies of 17 ops (20.8 K parameters, 410 K FLOPs per copy); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 0, 17, 34
// CHECK-NOT: block 1
// CHECK: remark: loom-fold: 1 block; 51 compute ops fold to 17

// ANNOT: loom.layer_norm {{.*}}loom.fold = array<i64: 0, 0, 0>
// ANNOT: loom.moe_dispatch {{.*}}loom.fold = array<i64: 0, 0, 11>
// ANNOT: loom.moe_dispatch {{.*}}loom.fold = array<i64: 0, 1, 11>
// ANNOT: loom.moe_dispatch {{.*}}loom.fold = array<i64: 0, 2, 11>
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 2, 16>

func.func @dense_moe(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %w1 = loom.weight parameter "l0.ln.weight" from "m.bin"[0] : tensor<32xf32>
  %w2 = loom.weight parameter "l0.ln.bias" from "m.bin"[128] : tensor<32xf32>
  %v3 = loom.layer_norm %x scale %w1 bias %w2 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w4 = loom.weight parameter "l0.fc1.weight" from "m.bin"[256] : tensor<32x64xf32>
  %v5 = loom.matmul %v3, %w4 : tensor<16x32xf32>, tensor<32x64xf32>
  %w6 = loom.weight parameter "l0.fc1.bias" from "m.bin"[8448] : tensor<64xf32>
  %v7 = loom.binary add %v5, %w6 : tensor<16x64xf32>, tensor<64xf32>
  %v8 = loom.unary gelu %v7 : tensor<16x64xf32>
  %w9 = loom.weight parameter "l0.fc2.weight" from "m.bin"[8704] : tensor<64x32xf32>
  %v10 = loom.matmul %v8, %w9 : tensor<16x64xf32>, tensor<64x32xf32>
  %w11 = loom.weight parameter "l0.fc2.bias" from "m.bin"[16896] : tensor<32xf32>
  %v12 = loom.binary add %v10, %w11 : tensor<16x32xf32>, tensor<32xf32>
  %v13 = loom.binary add %x, %v12 : tensor<16x32xf32>, tensor<16x32xf32>
  %w14 = loom.weight parameter "l1.ln.weight" from "m.bin"[17024] : tensor<32xf32>
  %w15 = loom.weight parameter "l1.ln.bias" from "m.bin"[17152] : tensor<32xf32>
  %v16 = loom.layer_norm %v13 scale %w14 bias %w15 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w17 = loom.weight parameter "l1.router.weight" from "m.bin"[17280] : tensor<32x4xf32>
  %v18 = loom.matmul %v16, %w17 : tensor<16x32xf32>, tensor<32x4xf32>
  %v19, %v20 = loom.topk %v18 {k = 2 : i64, axis = 1 : i64} : tensor<16x4xf32>
  %v21 = loom.softmax %v19 {axis = 1 : i64} : tensor<16x2xf32>
  %v22 = loom.moe_dispatch %v16, %v20 {num_experts = 4 : i64, capacity = 8 : i64} : tensor<16x32xf32>, tensor<16x2xi64>
  %w23 = loom.weight parameter "l1.experts.fc1" from "m.bin"[17792] : tensor<4x32x64xf32>
  %v24 = loom.matmul %v22, %w23 : tensor<4x8x32xf32>, tensor<4x32x64xf32>
  %v25 = loom.unary gelu %v24 : tensor<4x8x64xf32>
  %w26 = loom.weight parameter "l1.experts.fc2" from "m.bin"[50560] : tensor<4x64x32xf32>
  %v27 = loom.matmul %v25, %w26 : tensor<4x8x64xf32>, tensor<4x64x32xf32>
  %v28 = loom.moe_combine %v27, %v20, %v21 : tensor<4x8x32xf32>, tensor<16x2xi64>, tensor<16x2xf32>
  %v29 = loom.binary add %v13, %v28 : tensor<16x32xf32>, tensor<16x32xf32>
  %w30 = loom.weight parameter "l2.ln.weight" from "m.bin"[83328] : tensor<32xf32>
  %w31 = loom.weight parameter "l2.ln.bias" from "m.bin"[83456] : tensor<32xf32>
  %v32 = loom.layer_norm %v29 scale %w30 bias %w31 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w33 = loom.weight parameter "l2.fc1.weight" from "m.bin"[83584] : tensor<32x64xf32>
  %v34 = loom.matmul %v32, %w33 : tensor<16x32xf32>, tensor<32x64xf32>
  %w35 = loom.weight parameter "l2.fc1.bias" from "m.bin"[91776] : tensor<64xf32>
  %v36 = loom.binary add %v34, %w35 : tensor<16x64xf32>, tensor<64xf32>
  %v37 = loom.unary gelu %v36 : tensor<16x64xf32>
  %w38 = loom.weight parameter "l2.fc2.weight" from "m.bin"[92032] : tensor<64x32xf32>
  %v39 = loom.matmul %v37, %w38 : tensor<16x64xf32>, tensor<64x32xf32>
  %w40 = loom.weight parameter "l2.fc2.bias" from "m.bin"[100224] : tensor<32xf32>
  %v41 = loom.binary add %v39, %w40 : tensor<16x32xf32>, tensor<32xf32>
  %v42 = loom.binary add %v29, %v41 : tensor<16x32xf32>, tensor<16x32xf32>
  %w43 = loom.weight parameter "l3.ln.weight" from "m.bin"[100352] : tensor<32xf32>
  %w44 = loom.weight parameter "l3.ln.bias" from "m.bin"[100480] : tensor<32xf32>
  %v45 = loom.layer_norm %v42 scale %w43 bias %w44 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w46 = loom.weight parameter "l3.router.weight" from "m.bin"[100608] : tensor<32x4xf32>
  %v47 = loom.matmul %v45, %w46 : tensor<16x32xf32>, tensor<32x4xf32>
  %v48, %v49 = loom.topk %v47 {k = 2 : i64, axis = 1 : i64} : tensor<16x4xf32>
  %v50 = loom.softmax %v48 {axis = 1 : i64} : tensor<16x2xf32>
  %v51 = loom.moe_dispatch %v45, %v49 {num_experts = 4 : i64, capacity = 8 : i64} : tensor<16x32xf32>, tensor<16x2xi64>
  %w52 = loom.weight parameter "l3.experts.fc1" from "m.bin"[101120] : tensor<4x32x64xf32>
  %v53 = loom.matmul %v51, %w52 : tensor<4x8x32xf32>, tensor<4x32x64xf32>
  %v54 = loom.unary gelu %v53 : tensor<4x8x64xf32>
  %w55 = loom.weight parameter "l3.experts.fc2" from "m.bin"[133888] : tensor<4x64x32xf32>
  %v56 = loom.matmul %v54, %w55 : tensor<4x8x64xf32>, tensor<4x64x32xf32>
  %v57 = loom.moe_combine %v56, %v49, %v50 : tensor<4x8x32xf32>, tensor<16x2xi64>, tensor<16x2xf32>
  %v58 = loom.binary add %v42, %v57 : tensor<16x32xf32>, tensor<16x32xf32>
  %w59 = loom.weight parameter "l4.ln.weight" from "m.bin"[166656] : tensor<32xf32>
  %w60 = loom.weight parameter "l4.ln.bias" from "m.bin"[166784] : tensor<32xf32>
  %v61 = loom.layer_norm %v58 scale %w59 bias %w60 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w62 = loom.weight parameter "l4.fc1.weight" from "m.bin"[166912] : tensor<32x64xf32>
  %v63 = loom.matmul %v61, %w62 : tensor<16x32xf32>, tensor<32x64xf32>
  %w64 = loom.weight parameter "l4.fc1.bias" from "m.bin"[175104] : tensor<64xf32>
  %v65 = loom.binary add %v63, %w64 : tensor<16x64xf32>, tensor<64xf32>
  %v66 = loom.unary gelu %v65 : tensor<16x64xf32>
  %w67 = loom.weight parameter "l4.fc2.weight" from "m.bin"[175360] : tensor<64x32xf32>
  %v68 = loom.matmul %v66, %w67 : tensor<16x64xf32>, tensor<64x32xf32>
  %w69 = loom.weight parameter "l4.fc2.bias" from "m.bin"[183552] : tensor<32xf32>
  %v70 = loom.binary add %v68, %w69 : tensor<16x32xf32>, tensor<32xf32>
  %v71 = loom.binary add %v58, %v70 : tensor<16x32xf32>, tensor<16x32xf32>
  %w72 = loom.weight parameter "l5.ln.weight" from "m.bin"[183680] : tensor<32xf32>
  %w73 = loom.weight parameter "l5.ln.bias" from "m.bin"[183808] : tensor<32xf32>
  %v74 = loom.layer_norm %v71 scale %w72 bias %w73 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %w75 = loom.weight parameter "l5.router.weight" from "m.bin"[183936] : tensor<32x4xf32>
  %v76 = loom.matmul %v74, %w75 : tensor<16x32xf32>, tensor<32x4xf32>
  %v77, %v78 = loom.topk %v76 {k = 2 : i64, axis = 1 : i64} : tensor<16x4xf32>
  %v79 = loom.softmax %v77 {axis = 1 : i64} : tensor<16x2xf32>
  %v80 = loom.moe_dispatch %v74, %v78 {num_experts = 4 : i64, capacity = 8 : i64} : tensor<16x32xf32>, tensor<16x2xi64>
  %w81 = loom.weight parameter "l5.experts.fc1" from "m.bin"[184448] : tensor<4x32x64xf32>
  %v82 = loom.matmul %v80, %w81 : tensor<4x8x32xf32>, tensor<4x32x64xf32>
  %v83 = loom.unary gelu %v82 : tensor<4x8x64xf32>
  %w84 = loom.weight parameter "l5.experts.fc2" from "m.bin"[217216] : tensor<4x64x32xf32>
  %v85 = loom.matmul %v83, %w84 : tensor<4x8x64xf32>, tensor<4x64x32xf32>
  %v86 = loom.moe_combine %v85, %v78, %v79 : tensor<4x8x32xf32>, tensor<16x2xi64>, tensor<16x2xf32>
  %v87 = loom.binary add %v71, %v86 : tensor<16x32xf32>, tensor<16x32xf32>
  return %v87 : tensor<16x32xf32>
}
