// Near-identical copies: one copy differs from its neighbours in a single
// attribute, so the run breaks at that copy and the copies on either side
// form separate runs (or none, where fewer than two are left).
// RUN: loom-opt %s -split-input-file --loom-fold -o /dev/null 2>&1 | FileCheck %s
// RUN: loom-opt %s -split-input-file --loom-fold="annotate=true" 2>/dev/null | FileCheck %s --check-prefix=ANNOT

// Six copies; copy 3 normalizes with epsilon 1e-6 instead of 1e-5 (its
// first op): copies 0-2 and 4-5 fold, copy 3 stays out.
// CHECK: remark: loom-fold: block 0: 3 copies of 7 ops ({{.*}}); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 0, 7, 14
// CHECK: remark: loom-fold: block 1: 2 copies of 7 ops ({{.*}}); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 28, 35
// CHECK: remark: loom-fold: 2 blocks; 42 compute ops fold to 21
// ANNOT-LABEL: func.func @odd_epsilon
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 2, 6>
// ANNOT-NOT: loom.fold
// ANNOT: loom.layer_norm {{.*}}epsilon = 9.9999999999999995E-7 : f64}
// ANNOT-NOT: loom.fold
// ANNOT: loom.layer_norm {{.*}}loom.fold = array<i64: 1, 0, 0>
func.func @odd_epsilon(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "l0.ln.weight" from "m.bin"[0] : tensor<16xf32>
  %w2 = loom.weight parameter "l0.ln.bias" from "m.bin"[64] : tensor<16xf32>
  %v3 = loom.layer_norm %x scale %w1 bias %w2 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w4 = loom.weight parameter "l0.fc1.weight" from "m.bin"[128] : tensor<16x64xf32>
  %v5 = loom.matmul %v3, %w4 : tensor<4x16xf32>, tensor<16x64xf32>
  %w6 = loom.weight parameter "l0.fc1.bias" from "m.bin"[4224] : tensor<64xf32>
  %v7 = loom.binary add %v5, %w6 : tensor<4x64xf32>, tensor<64xf32>
  %v8 = loom.unary gelu %v7 : tensor<4x64xf32>
  %w9 = loom.weight parameter "l0.fc2.weight" from "m.bin"[4480] : tensor<64x16xf32>
  %v10 = loom.matmul %v8, %w9 : tensor<4x64xf32>, tensor<64x16xf32>
  %w11 = loom.weight parameter "l0.fc2.bias" from "m.bin"[8576] : tensor<16xf32>
  %v12 = loom.binary add %v10, %w11 : tensor<4x16xf32>, tensor<16xf32>
  %v13 = loom.binary add %x, %v12 : tensor<4x16xf32>, tensor<4x16xf32>
  %w14 = loom.weight parameter "l1.ln.weight" from "m.bin"[8640] : tensor<16xf32>
  %w15 = loom.weight parameter "l1.ln.bias" from "m.bin"[8704] : tensor<16xf32>
  %v16 = loom.layer_norm %v13 scale %w14 bias %w15 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w17 = loom.weight parameter "l1.fc1.weight" from "m.bin"[8768] : tensor<16x64xf32>
  %v18 = loom.matmul %v16, %w17 : tensor<4x16xf32>, tensor<16x64xf32>
  %w19 = loom.weight parameter "l1.fc1.bias" from "m.bin"[12864] : tensor<64xf32>
  %v20 = loom.binary add %v18, %w19 : tensor<4x64xf32>, tensor<64xf32>
  %v21 = loom.unary gelu %v20 : tensor<4x64xf32>
  %w22 = loom.weight parameter "l1.fc2.weight" from "m.bin"[13120] : tensor<64x16xf32>
  %v23 = loom.matmul %v21, %w22 : tensor<4x64xf32>, tensor<64x16xf32>
  %w24 = loom.weight parameter "l1.fc2.bias" from "m.bin"[17216] : tensor<16xf32>
  %v25 = loom.binary add %v23, %w24 : tensor<4x16xf32>, tensor<16xf32>
  %v26 = loom.binary add %v13, %v25 : tensor<4x16xf32>, tensor<4x16xf32>
  %w27 = loom.weight parameter "l2.ln.weight" from "m.bin"[17280] : tensor<16xf32>
  %w28 = loom.weight parameter "l2.ln.bias" from "m.bin"[17344] : tensor<16xf32>
  %v29 = loom.layer_norm %v26 scale %w27 bias %w28 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w30 = loom.weight parameter "l2.fc1.weight" from "m.bin"[17408] : tensor<16x64xf32>
  %v31 = loom.matmul %v29, %w30 : tensor<4x16xf32>, tensor<16x64xf32>
  %w32 = loom.weight parameter "l2.fc1.bias" from "m.bin"[21504] : tensor<64xf32>
  %v33 = loom.binary add %v31, %w32 : tensor<4x64xf32>, tensor<64xf32>
  %v34 = loom.unary gelu %v33 : tensor<4x64xf32>
  %w35 = loom.weight parameter "l2.fc2.weight" from "m.bin"[21760] : tensor<64x16xf32>
  %v36 = loom.matmul %v34, %w35 : tensor<4x64xf32>, tensor<64x16xf32>
  %w37 = loom.weight parameter "l2.fc2.bias" from "m.bin"[25856] : tensor<16xf32>
  %v38 = loom.binary add %v36, %w37 : tensor<4x16xf32>, tensor<16xf32>
  %v39 = loom.binary add %v26, %v38 : tensor<4x16xf32>, tensor<4x16xf32>
  %w40 = loom.weight parameter "l3.ln.weight" from "m.bin"[25920] : tensor<16xf32>
  %w41 = loom.weight parameter "l3.ln.bias" from "m.bin"[25984] : tensor<16xf32>
  %v42 = loom.layer_norm %v39 scale %w40 bias %w41 {axis = 1 : i64, epsilon = 1.000000e-06 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w43 = loom.weight parameter "l3.fc1.weight" from "m.bin"[26048] : tensor<16x64xf32>
  %v44 = loom.matmul %v42, %w43 : tensor<4x16xf32>, tensor<16x64xf32>
  %w45 = loom.weight parameter "l3.fc1.bias" from "m.bin"[30144] : tensor<64xf32>
  %v46 = loom.binary add %v44, %w45 : tensor<4x64xf32>, tensor<64xf32>
  %v47 = loom.unary gelu %v46 : tensor<4x64xf32>
  %w48 = loom.weight parameter "l3.fc2.weight" from "m.bin"[30400] : tensor<64x16xf32>
  %v49 = loom.matmul %v47, %w48 : tensor<4x64xf32>, tensor<64x16xf32>
  %w50 = loom.weight parameter "l3.fc2.bias" from "m.bin"[34496] : tensor<16xf32>
  %v51 = loom.binary add %v49, %w50 : tensor<4x16xf32>, tensor<16xf32>
  %v52 = loom.binary add %v39, %v51 : tensor<4x16xf32>, tensor<4x16xf32>
  %w53 = loom.weight parameter "l4.ln.weight" from "m.bin"[34560] : tensor<16xf32>
  %w54 = loom.weight parameter "l4.ln.bias" from "m.bin"[34624] : tensor<16xf32>
  %v55 = loom.layer_norm %v52 scale %w53 bias %w54 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w56 = loom.weight parameter "l4.fc1.weight" from "m.bin"[34688] : tensor<16x64xf32>
  %v57 = loom.matmul %v55, %w56 : tensor<4x16xf32>, tensor<16x64xf32>
  %w58 = loom.weight parameter "l4.fc1.bias" from "m.bin"[38784] : tensor<64xf32>
  %v59 = loom.binary add %v57, %w58 : tensor<4x64xf32>, tensor<64xf32>
  %v60 = loom.unary gelu %v59 : tensor<4x64xf32>
  %w61 = loom.weight parameter "l4.fc2.weight" from "m.bin"[39040] : tensor<64x16xf32>
  %v62 = loom.matmul %v60, %w61 : tensor<4x64xf32>, tensor<64x16xf32>
  %w63 = loom.weight parameter "l4.fc2.bias" from "m.bin"[43136] : tensor<16xf32>
  %v64 = loom.binary add %v62, %w63 : tensor<4x16xf32>, tensor<16xf32>
  %v65 = loom.binary add %v52, %v64 : tensor<4x16xf32>, tensor<4x16xf32>
  %w66 = loom.weight parameter "l5.ln.weight" from "m.bin"[43200] : tensor<16xf32>
  %w67 = loom.weight parameter "l5.ln.bias" from "m.bin"[43264] : tensor<16xf32>
  %v68 = loom.layer_norm %v65 scale %w66 bias %w67 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w69 = loom.weight parameter "l5.fc1.weight" from "m.bin"[43328] : tensor<16x64xf32>
  %v70 = loom.matmul %v68, %w69 : tensor<4x16xf32>, tensor<16x64xf32>
  %w71 = loom.weight parameter "l5.fc1.bias" from "m.bin"[47424] : tensor<64xf32>
  %v72 = loom.binary add %v70, %w71 : tensor<4x64xf32>, tensor<64xf32>
  %v73 = loom.unary gelu %v72 : tensor<4x64xf32>
  %w74 = loom.weight parameter "l5.fc2.weight" from "m.bin"[47680] : tensor<64x16xf32>
  %v75 = loom.matmul %v73, %w74 : tensor<4x64xf32>, tensor<64x16xf32>
  %w76 = loom.weight parameter "l5.fc2.bias" from "m.bin"[51776] : tensor<16xf32>
  %v77 = loom.binary add %v75, %w76 : tensor<4x16xf32>, tensor<16xf32>
  %v78 = loom.binary add %v65, %v77 : tensor<4x16xf32>, tensor<4x16xf32>
  return %v78 : tensor<4x16xf32>
}

// -----

// Five copies; copy 2 uses the tanh approximation of GELU (an op in the
// middle of the copy): copies 0-1 and 3-4 fold.
// CHECK: remark: loom-fold: block 0: 2 copies of 7 ops ({{.*}}); {{.*}}; copies start at compute op 0, 7
// CHECK: remark: loom-fold: block 1: 2 copies of 7 ops ({{.*}}); {{.*}}; copies start at compute op 21, 28
// CHECK: remark: loom-fold: 2 blocks; 35 compute ops fold to 21
// ANNOT-LABEL: func.func @odd_activation
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 1, 6>
// ANNOT-NOT: loom.fold
// ANNOT: loom.unary gelu_tanh
// ANNOT-NOT: loom.fold
// ANNOT: loom.layer_norm {{.*}}loom.fold = array<i64: 1, 0, 0>
func.func @odd_activation(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "l0.ln.weight" from "m.bin"[0] : tensor<16xf32>
  %w2 = loom.weight parameter "l0.ln.bias" from "m.bin"[64] : tensor<16xf32>
  %v3 = loom.layer_norm %x scale %w1 bias %w2 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w4 = loom.weight parameter "l0.fc1.weight" from "m.bin"[128] : tensor<16x64xf32>
  %v5 = loom.matmul %v3, %w4 : tensor<4x16xf32>, tensor<16x64xf32>
  %w6 = loom.weight parameter "l0.fc1.bias" from "m.bin"[4224] : tensor<64xf32>
  %v7 = loom.binary add %v5, %w6 : tensor<4x64xf32>, tensor<64xf32>
  %v8 = loom.unary gelu %v7 : tensor<4x64xf32>
  %w9 = loom.weight parameter "l0.fc2.weight" from "m.bin"[4480] : tensor<64x16xf32>
  %v10 = loom.matmul %v8, %w9 : tensor<4x64xf32>, tensor<64x16xf32>
  %w11 = loom.weight parameter "l0.fc2.bias" from "m.bin"[8576] : tensor<16xf32>
  %v12 = loom.binary add %v10, %w11 : tensor<4x16xf32>, tensor<16xf32>
  %v13 = loom.binary add %x, %v12 : tensor<4x16xf32>, tensor<4x16xf32>
  %w14 = loom.weight parameter "l1.ln.weight" from "m.bin"[8640] : tensor<16xf32>
  %w15 = loom.weight parameter "l1.ln.bias" from "m.bin"[8704] : tensor<16xf32>
  %v16 = loom.layer_norm %v13 scale %w14 bias %w15 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w17 = loom.weight parameter "l1.fc1.weight" from "m.bin"[8768] : tensor<16x64xf32>
  %v18 = loom.matmul %v16, %w17 : tensor<4x16xf32>, tensor<16x64xf32>
  %w19 = loom.weight parameter "l1.fc1.bias" from "m.bin"[12864] : tensor<64xf32>
  %v20 = loom.binary add %v18, %w19 : tensor<4x64xf32>, tensor<64xf32>
  %v21 = loom.unary gelu %v20 : tensor<4x64xf32>
  %w22 = loom.weight parameter "l1.fc2.weight" from "m.bin"[13120] : tensor<64x16xf32>
  %v23 = loom.matmul %v21, %w22 : tensor<4x64xf32>, tensor<64x16xf32>
  %w24 = loom.weight parameter "l1.fc2.bias" from "m.bin"[17216] : tensor<16xf32>
  %v25 = loom.binary add %v23, %w24 : tensor<4x16xf32>, tensor<16xf32>
  %v26 = loom.binary add %v13, %v25 : tensor<4x16xf32>, tensor<4x16xf32>
  %w27 = loom.weight parameter "l2.ln.weight" from "m.bin"[17280] : tensor<16xf32>
  %w28 = loom.weight parameter "l2.ln.bias" from "m.bin"[17344] : tensor<16xf32>
  %v29 = loom.layer_norm %v26 scale %w27 bias %w28 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w30 = loom.weight parameter "l2.fc1.weight" from "m.bin"[17408] : tensor<16x64xf32>
  %v31 = loom.matmul %v29, %w30 : tensor<4x16xf32>, tensor<16x64xf32>
  %w32 = loom.weight parameter "l2.fc1.bias" from "m.bin"[21504] : tensor<64xf32>
  %v33 = loom.binary add %v31, %w32 : tensor<4x64xf32>, tensor<64xf32>
  %v34 = loom.unary gelu_tanh %v33 : tensor<4x64xf32>
  %w35 = loom.weight parameter "l2.fc2.weight" from "m.bin"[21760] : tensor<64x16xf32>
  %v36 = loom.matmul %v34, %w35 : tensor<4x64xf32>, tensor<64x16xf32>
  %w37 = loom.weight parameter "l2.fc2.bias" from "m.bin"[25856] : tensor<16xf32>
  %v38 = loom.binary add %v36, %w37 : tensor<4x16xf32>, tensor<16xf32>
  %v39 = loom.binary add %v26, %v38 : tensor<4x16xf32>, tensor<4x16xf32>
  %w40 = loom.weight parameter "l3.ln.weight" from "m.bin"[25920] : tensor<16xf32>
  %w41 = loom.weight parameter "l3.ln.bias" from "m.bin"[25984] : tensor<16xf32>
  %v42 = loom.layer_norm %v39 scale %w40 bias %w41 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w43 = loom.weight parameter "l3.fc1.weight" from "m.bin"[26048] : tensor<16x64xf32>
  %v44 = loom.matmul %v42, %w43 : tensor<4x16xf32>, tensor<16x64xf32>
  %w45 = loom.weight parameter "l3.fc1.bias" from "m.bin"[30144] : tensor<64xf32>
  %v46 = loom.binary add %v44, %w45 : tensor<4x64xf32>, tensor<64xf32>
  %v47 = loom.unary gelu %v46 : tensor<4x64xf32>
  %w48 = loom.weight parameter "l3.fc2.weight" from "m.bin"[30400] : tensor<64x16xf32>
  %v49 = loom.matmul %v47, %w48 : tensor<4x64xf32>, tensor<64x16xf32>
  %w50 = loom.weight parameter "l3.fc2.bias" from "m.bin"[34496] : tensor<16xf32>
  %v51 = loom.binary add %v49, %w50 : tensor<4x16xf32>, tensor<16xf32>
  %v52 = loom.binary add %v39, %v51 : tensor<4x16xf32>, tensor<4x16xf32>
  %w53 = loom.weight parameter "l4.ln.weight" from "m.bin"[34560] : tensor<16xf32>
  %w54 = loom.weight parameter "l4.ln.bias" from "m.bin"[34624] : tensor<16xf32>
  %v55 = loom.layer_norm %v52 scale %w53 bias %w54 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w56 = loom.weight parameter "l4.fc1.weight" from "m.bin"[34688] : tensor<16x64xf32>
  %v57 = loom.matmul %v55, %w56 : tensor<4x16xf32>, tensor<16x64xf32>
  %w58 = loom.weight parameter "l4.fc1.bias" from "m.bin"[38784] : tensor<64xf32>
  %v59 = loom.binary add %v57, %w58 : tensor<4x64xf32>, tensor<64xf32>
  %v60 = loom.unary gelu %v59 : tensor<4x64xf32>
  %w61 = loom.weight parameter "l4.fc2.weight" from "m.bin"[39040] : tensor<64x16xf32>
  %v62 = loom.matmul %v60, %w61 : tensor<4x64xf32>, tensor<64x16xf32>
  %w63 = loom.weight parameter "l4.fc2.bias" from "m.bin"[43136] : tensor<16xf32>
  %v64 = loom.binary add %v62, %w63 : tensor<4x16xf32>, tensor<16xf32>
  %v65 = loom.binary add %v52, %v64 : tensor<4x16xf32>, tensor<4x16xf32>
  return %v65 : tensor<4x16xf32>
}

// -----

// Three copies where the last differs: two are left, which fold by
// default; with min-copies=3 only the three copies of @odd_epsilon do.
// RUN: loom-opt %s -split-input-file --loom-fold="min-copies=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MIN3
// CHECK: remark: loom-fold: block 0: 2 copies of 7 ops ({{.*}}); {{.*}}; copies start at compute op 0, 7
// CHECK-NOT: block 1
// CHECK: remark: loom-fold: 1 block; 21 compute ops fold to 14
// MIN3: remark: loom-fold: block 0: 3 copies of 7 ops ({{.*}}); {{.*}}; copies start at compute op 0, 7, 14
// MIN3: remark: loom-fold: 1 block; 42 compute ops fold to 28
// MIN3-NOT: remark
func.func @odd_last(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "l0.ln.weight" from "m.bin"[0] : tensor<16xf32>
  %w2 = loom.weight parameter "l0.ln.bias" from "m.bin"[64] : tensor<16xf32>
  %v3 = loom.layer_norm %x scale %w1 bias %w2 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w4 = loom.weight parameter "l0.fc1.weight" from "m.bin"[128] : tensor<16x64xf32>
  %v5 = loom.matmul %v3, %w4 : tensor<4x16xf32>, tensor<16x64xf32>
  %w6 = loom.weight parameter "l0.fc1.bias" from "m.bin"[4224] : tensor<64xf32>
  %v7 = loom.binary add %v5, %w6 : tensor<4x64xf32>, tensor<64xf32>
  %v8 = loom.unary gelu %v7 : tensor<4x64xf32>
  %w9 = loom.weight parameter "l0.fc2.weight" from "m.bin"[4480] : tensor<64x16xf32>
  %v10 = loom.matmul %v8, %w9 : tensor<4x64xf32>, tensor<64x16xf32>
  %w11 = loom.weight parameter "l0.fc2.bias" from "m.bin"[8576] : tensor<16xf32>
  %v12 = loom.binary add %v10, %w11 : tensor<4x16xf32>, tensor<16xf32>
  %v13 = loom.binary add %x, %v12 : tensor<4x16xf32>, tensor<4x16xf32>
  %w14 = loom.weight parameter "l1.ln.weight" from "m.bin"[8640] : tensor<16xf32>
  %w15 = loom.weight parameter "l1.ln.bias" from "m.bin"[8704] : tensor<16xf32>
  %v16 = loom.layer_norm %v13 scale %w14 bias %w15 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w17 = loom.weight parameter "l1.fc1.weight" from "m.bin"[8768] : tensor<16x64xf32>
  %v18 = loom.matmul %v16, %w17 : tensor<4x16xf32>, tensor<16x64xf32>
  %w19 = loom.weight parameter "l1.fc1.bias" from "m.bin"[12864] : tensor<64xf32>
  %v20 = loom.binary add %v18, %w19 : tensor<4x64xf32>, tensor<64xf32>
  %v21 = loom.unary gelu %v20 : tensor<4x64xf32>
  %w22 = loom.weight parameter "l1.fc2.weight" from "m.bin"[13120] : tensor<64x16xf32>
  %v23 = loom.matmul %v21, %w22 : tensor<4x64xf32>, tensor<64x16xf32>
  %w24 = loom.weight parameter "l1.fc2.bias" from "m.bin"[17216] : tensor<16xf32>
  %v25 = loom.binary add %v23, %w24 : tensor<4x16xf32>, tensor<16xf32>
  %v26 = loom.binary add %v13, %v25 : tensor<4x16xf32>, tensor<4x16xf32>
  %w27 = loom.weight parameter "l2.ln.weight" from "m.bin"[17280] : tensor<16xf32>
  %w28 = loom.weight parameter "l2.ln.bias" from "m.bin"[17344] : tensor<16xf32>
  %v29 = loom.layer_norm %v26 scale %w27 bias %w28 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w30 = loom.weight parameter "l2.fc1.weight" from "m.bin"[17408] : tensor<16x64xf32>
  %v31 = loom.matmul %v29, %w30 : tensor<4x16xf32>, tensor<16x64xf32>
  %w32 = loom.weight parameter "l2.fc1.bias" from "m.bin"[21504] : tensor<64xf32>
  %v33 = loom.binary add %v31, %w32 : tensor<4x64xf32>, tensor<64xf32>
  %v34 = loom.unary gelu_tanh %v33 : tensor<4x64xf32>
  %w35 = loom.weight parameter "l2.fc2.weight" from "m.bin"[21760] : tensor<64x16xf32>
  %v36 = loom.matmul %v34, %w35 : tensor<4x64xf32>, tensor<64x16xf32>
  %w37 = loom.weight parameter "l2.fc2.bias" from "m.bin"[25856] : tensor<16xf32>
  %v38 = loom.binary add %v36, %w37 : tensor<4x16xf32>, tensor<16xf32>
  %v39 = loom.binary add %v26, %v38 : tensor<4x16xf32>, tensor<4x16xf32>
  return %v39 : tensor<4x16xf32>
}
