// Three copies of a pre-norm MLP with a residual connection: one run of
// three 7-op copies, chained by the residual stream alone.
// RUN: loom-opt %s -split-input-file --loom-fold -o /dev/null 2>&1 | FileCheck %s
// RUN: loom-opt %s -split-input-file --loom-fold="annotate=true" 2>/dev/null | FileCheck %s --check-prefix=ANNOT
// Fewer copies than asked for: no run, no remark, and the IR is untouched.
// RUN: loom-opt %s -split-input-file --loom-fold="min-copies=4 annotate=true" 2>&1 | FileCheck %s --check-prefix=MIN4 --implicit-check-not=remark --implicit-check-not=loom.fold


// Every op of every copy carries [block, copy, index]; the final tanh is
// outside the run.
// ANNOT-LABEL: func.func @mlp
// ANNOT: loom.layer_norm {{.*}}loom.fold = array<i64: 0, 0, 0>
// ANNOT: loom.matmul {{.*}}loom.fold = array<i64: 0, 0, 1>
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 0, 2>
// ANNOT: loom.unary gelu {{.*}}loom.fold = array<i64: 0, 0, 3>
// ANNOT: loom.matmul {{.*}}loom.fold = array<i64: 0, 0, 4>
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 0, 5>
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 0, 6>
// ANNOT: loom.layer_norm {{.*}}loom.fold = array<i64: 0, 1, 0>
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 2, 6>
// ANNOT-NEXT: loom.unary tanh
// ANNOT-NOT: loom.fold
// MIN4-LABEL: func.func @mlp
func.func @mlp(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "l0.ln.weight" from "m.bin"[0] : tensor<16xf32>
  %w2 = loom.weight parameter "l0.ln.bias" from "m.bin"[64] : tensor<16xf32>
  // CHECK: fold-mlp-chain.mlir:[[# @LINE + 1]]:9: remark: loom-fold: block 0: 3 copies of 7 ops (2.16 K parameters, 17.3 K FLOPs per copy); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 0, 7, 14
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
  %v40 = loom.unary tanh %v39 : tensor<4x16xf32>
  return %v40 : tensor<4x16xf32>
}
// CHECK: remark: loom-fold: 1 block; 22 compute ops fold to 8

// -----

// ALBERT-style sharing: every copy reads the same two weights, so they are
// inputs shared by all copies rather than weights of one copy.
// CHECK: remark: loom-fold: block 0: 3 copies of 4 ops (0 parameters, 16.7 K FLOPs per copy); 1 chained input, 2 shared inputs (2 weights), 1 output per copy; copies start at compute op 0, 4, 8
// ANNOT-LABEL: func.func @shared_weights
// ANNOT: loom.matmul {{.*}}loom.fold = array<i64: 0, 0, 0>
// MIN4-LABEL: func.func @shared_weights
func.func @shared_weights(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = loom.weight parameter "shared.fc1.weight" from "m.bin"[0] : tensor<16x64xf32>
  %w2 = loom.weight parameter "shared.fc2.weight" from "m.bin"[4096] : tensor<64x16xf32>
  %v3 = loom.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x64xf32>
  %v4 = loom.unary relu %v3 : tensor<4x64xf32>
  %v5 = loom.matmul %v4, %w2 : tensor<4x64xf32>, tensor<64x16xf32>
  %v6 = loom.binary add %x, %v5 : tensor<4x16xf32>, tensor<4x16xf32>
  %v7 = loom.matmul %v6, %w1 : tensor<4x16xf32>, tensor<16x64xf32>
  %v8 = loom.unary relu %v7 : tensor<4x64xf32>
  %v9 = loom.matmul %v8, %w2 : tensor<4x64xf32>, tensor<64x16xf32>
  %v10 = loom.binary add %v6, %v9 : tensor<4x16xf32>, tensor<4x16xf32>
  %v11 = loom.matmul %v10, %w1 : tensor<4x16xf32>, tensor<16x64xf32>
  %v12 = loom.unary relu %v11 : tensor<4x64xf32>
  %v13 = loom.matmul %v12, %w2 : tensor<4x64xf32>, tensor<64x16xf32>
  %v14 = loom.binary add %v10, %v13 : tensor<4x16xf32>, tensor<4x16xf32>
  return %v14 : tensor<4x16xf32>
}
