// An encoder stack and a decoder stack back to back, transformer-shaped:
// two runs. Every decoder layer's cross-attention reads the encoder output
// (after its final norm), an input shared by all decoder copies rather than
// chained from the previous one.
// RUN: loom-opt %s --loom-fold -o /dev/null 2>&1 | FileCheck %s
// RUN: loom-opt %s --loom-fold="annotate=true" 2>/dev/null | FileCheck %s --check-prefix=ANNOT

// Encoder layer: norm, q/k/v, attention, output projection, residual, then
// norm, fc1, relu, fc2, residual: 12 ops. The decoder layer adds a causal
// self-attention before the cross-attention: 19 ops.
// CHECK: remark: loom-fold: block 0: 3 copies of 12 ops (2.11 K parameters, 78.2 K FLOPs per copy); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 0, 12, 24
// CHECK: remark: loom-fold: block 1: 3 copies of 19 ops (3.17 K parameters, 122 K FLOPs per copy); 1 chained input, 1 shared input, 1 output per copy; copies start at compute op 37, 56, 75
// CHECK: remark: loom-fold: 2 blocks; 95 compute ops fold to 33

// The encoder's final norm sits between the runs; the decoder's first copy
// reads the same shared value as the others.
// ANNOT: loom.binary add {{.*}}loom.fold = array<i64: 0, 2, 11>
// ANNOT-NEXT: loom.weight parameter "enc.final_ln.weight"
// ANNOT-NEXT: loom.weight parameter "enc.final_ln.bias"
// ANNOT-NEXT: %[[MEM:.*]] = loom.layer_norm
// ANNOT-NOT: loom.fold
// ANNOT: loom.layer_norm %arg1 {{.*}}loom.fold = array<i64: 1, 0, 0>
// ANNOT: loom.matmul %[[MEM]], {{.*}}loom.fold = array<i64: 1, 0, [[K:[0-9]+]]>
// ANNOT: loom.matmul %[[MEM]], {{.*}}loom.fold = array<i64: 1, 1, [[K]]>
// ANNOT: loom.matmul %[[MEM]], {{.*}}loom.fold = array<i64: 1, 2, [[K]]>

func.func @encoder_decoder(%src: tensor<1x2x8x16xf32>, %tgt: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %w1 = loom.weight parameter "enc0.ln1.weight" from "m.bin"[0] : tensor<16xf32>
  %w2 = loom.weight parameter "enc0.ln1.bias" from "m.bin"[64] : tensor<16xf32>
  %v3 = loom.layer_norm %src scale %w1 bias %w2 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w4 = loom.weight parameter "enc0.self.q.weight" from "m.bin"[128] : tensor<16x16xf32>
  %v5 = loom.matmul %v3, %w4 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w6 = loom.weight parameter "enc0.self.k.weight" from "m.bin"[1152] : tensor<16x16xf32>
  %v7 = loom.matmul %v3, %w6 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w8 = loom.weight parameter "enc0.self.v.weight" from "m.bin"[2176] : tensor<16x16xf32>
  %v9 = loom.matmul %v3, %w8 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v10 = loom.attention %v5, %v7, %v9 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w11 = loom.weight parameter "enc0.self.o.weight" from "m.bin"[3200] : tensor<16x16xf32>
  %v12 = loom.matmul %v10, %w11 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v13 = loom.binary add %src, %v12 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w14 = loom.weight parameter "enc0.mlp.ln.weight" from "m.bin"[4224] : tensor<16xf32>
  %w15 = loom.weight parameter "enc0.mlp.ln.bias" from "m.bin"[4288] : tensor<16xf32>
  %v16 = loom.layer_norm %v13 scale %w14 bias %w15 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w17 = loom.weight parameter "enc0.mlp.fc1.weight" from "m.bin"[4352] : tensor<16x32xf32>
  %v18 = loom.matmul %v16, %w17 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v19 = loom.unary relu %v18 : tensor<1x2x8x32xf32>
  %w20 = loom.weight parameter "enc0.mlp.fc2.weight" from "m.bin"[6400] : tensor<32x16xf32>
  %v21 = loom.matmul %v19, %w20 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v22 = loom.binary add %v13, %v21 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w23 = loom.weight parameter "enc1.ln1.weight" from "m.bin"[8448] : tensor<16xf32>
  %w24 = loom.weight parameter "enc1.ln1.bias" from "m.bin"[8512] : tensor<16xf32>
  %v25 = loom.layer_norm %v22 scale %w23 bias %w24 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w26 = loom.weight parameter "enc1.self.q.weight" from "m.bin"[8576] : tensor<16x16xf32>
  %v27 = loom.matmul %v25, %w26 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w28 = loom.weight parameter "enc1.self.k.weight" from "m.bin"[9600] : tensor<16x16xf32>
  %v29 = loom.matmul %v25, %w28 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w30 = loom.weight parameter "enc1.self.v.weight" from "m.bin"[10624] : tensor<16x16xf32>
  %v31 = loom.matmul %v25, %w30 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v32 = loom.attention %v27, %v29, %v31 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w33 = loom.weight parameter "enc1.self.o.weight" from "m.bin"[11648] : tensor<16x16xf32>
  %v34 = loom.matmul %v32, %w33 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v35 = loom.binary add %v22, %v34 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w36 = loom.weight parameter "enc1.mlp.ln.weight" from "m.bin"[12672] : tensor<16xf32>
  %w37 = loom.weight parameter "enc1.mlp.ln.bias" from "m.bin"[12736] : tensor<16xf32>
  %v38 = loom.layer_norm %v35 scale %w36 bias %w37 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w39 = loom.weight parameter "enc1.mlp.fc1.weight" from "m.bin"[12800] : tensor<16x32xf32>
  %v40 = loom.matmul %v38, %w39 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v41 = loom.unary relu %v40 : tensor<1x2x8x32xf32>
  %w42 = loom.weight parameter "enc1.mlp.fc2.weight" from "m.bin"[14848] : tensor<32x16xf32>
  %v43 = loom.matmul %v41, %w42 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v44 = loom.binary add %v35, %v43 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w45 = loom.weight parameter "enc2.ln1.weight" from "m.bin"[16896] : tensor<16xf32>
  %w46 = loom.weight parameter "enc2.ln1.bias" from "m.bin"[16960] : tensor<16xf32>
  %v47 = loom.layer_norm %v44 scale %w45 bias %w46 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w48 = loom.weight parameter "enc2.self.q.weight" from "m.bin"[17024] : tensor<16x16xf32>
  %v49 = loom.matmul %v47, %w48 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w50 = loom.weight parameter "enc2.self.k.weight" from "m.bin"[18048] : tensor<16x16xf32>
  %v51 = loom.matmul %v47, %w50 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w52 = loom.weight parameter "enc2.self.v.weight" from "m.bin"[19072] : tensor<16x16xf32>
  %v53 = loom.matmul %v47, %w52 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v54 = loom.attention %v49, %v51, %v53 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w55 = loom.weight parameter "enc2.self.o.weight" from "m.bin"[20096] : tensor<16x16xf32>
  %v56 = loom.matmul %v54, %w55 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v57 = loom.binary add %v44, %v56 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w58 = loom.weight parameter "enc2.mlp.ln.weight" from "m.bin"[21120] : tensor<16xf32>
  %w59 = loom.weight parameter "enc2.mlp.ln.bias" from "m.bin"[21184] : tensor<16xf32>
  %v60 = loom.layer_norm %v57 scale %w58 bias %w59 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w61 = loom.weight parameter "enc2.mlp.fc1.weight" from "m.bin"[21248] : tensor<16x32xf32>
  %v62 = loom.matmul %v60, %w61 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v63 = loom.unary relu %v62 : tensor<1x2x8x32xf32>
  %w64 = loom.weight parameter "enc2.mlp.fc2.weight" from "m.bin"[23296] : tensor<32x16xf32>
  %v65 = loom.matmul %v63, %w64 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v66 = loom.binary add %v57, %v65 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w67 = loom.weight parameter "enc.final_ln.weight" from "m.bin"[25344] : tensor<16xf32>
  %w68 = loom.weight parameter "enc.final_ln.bias" from "m.bin"[25408] : tensor<16xf32>
  %v69 = loom.layer_norm %v66 scale %w67 bias %w68 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w70 = loom.weight parameter "dec0.ln1.weight" from "m.bin"[25472] : tensor<16xf32>
  %w71 = loom.weight parameter "dec0.ln1.bias" from "m.bin"[25536] : tensor<16xf32>
  %v72 = loom.layer_norm %tgt scale %w70 bias %w71 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w73 = loom.weight parameter "dec0.self.q.weight" from "m.bin"[25600] : tensor<16x16xf32>
  %v74 = loom.matmul %v72, %w73 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w75 = loom.weight parameter "dec0.self.k.weight" from "m.bin"[26624] : tensor<16x16xf32>
  %v76 = loom.matmul %v72, %w75 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w77 = loom.weight parameter "dec0.self.v.weight" from "m.bin"[27648] : tensor<16x16xf32>
  %v78 = loom.matmul %v72, %w77 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v79 = loom.attention %v74, %v76, %v78 {causal} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w80 = loom.weight parameter "dec0.self.o.weight" from "m.bin"[28672] : tensor<16x16xf32>
  %v81 = loom.matmul %v79, %w80 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v82 = loom.binary add %tgt, %v81 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w83 = loom.weight parameter "dec0.ln2.weight" from "m.bin"[29696] : tensor<16xf32>
  %w84 = loom.weight parameter "dec0.ln2.bias" from "m.bin"[29760] : tensor<16xf32>
  %v85 = loom.layer_norm %v82 scale %w83 bias %w84 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w86 = loom.weight parameter "dec0.cross.q.weight" from "m.bin"[29824] : tensor<16x16xf32>
  %v87 = loom.matmul %v85, %w86 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w88 = loom.weight parameter "dec0.cross.k.weight" from "m.bin"[30848] : tensor<16x16xf32>
  %v89 = loom.matmul %v69, %w88 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w90 = loom.weight parameter "dec0.cross.v.weight" from "m.bin"[31872] : tensor<16x16xf32>
  %v91 = loom.matmul %v69, %w90 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v92 = loom.attention %v87, %v89, %v91 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w93 = loom.weight parameter "dec0.cross.o.weight" from "m.bin"[32896] : tensor<16x16xf32>
  %v94 = loom.matmul %v92, %w93 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v95 = loom.binary add %v82, %v94 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w96 = loom.weight parameter "dec0.mlp.ln.weight" from "m.bin"[33920] : tensor<16xf32>
  %w97 = loom.weight parameter "dec0.mlp.ln.bias" from "m.bin"[33984] : tensor<16xf32>
  %v98 = loom.layer_norm %v95 scale %w96 bias %w97 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w99 = loom.weight parameter "dec0.mlp.fc1.weight" from "m.bin"[34048] : tensor<16x32xf32>
  %v100 = loom.matmul %v98, %w99 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v101 = loom.unary relu %v100 : tensor<1x2x8x32xf32>
  %w102 = loom.weight parameter "dec0.mlp.fc2.weight" from "m.bin"[36096] : tensor<32x16xf32>
  %v103 = loom.matmul %v101, %w102 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v104 = loom.binary add %v95, %v103 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w105 = loom.weight parameter "dec1.ln1.weight" from "m.bin"[38144] : tensor<16xf32>
  %w106 = loom.weight parameter "dec1.ln1.bias" from "m.bin"[38208] : tensor<16xf32>
  %v107 = loom.layer_norm %v104 scale %w105 bias %w106 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w108 = loom.weight parameter "dec1.self.q.weight" from "m.bin"[38272] : tensor<16x16xf32>
  %v109 = loom.matmul %v107, %w108 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w110 = loom.weight parameter "dec1.self.k.weight" from "m.bin"[39296] : tensor<16x16xf32>
  %v111 = loom.matmul %v107, %w110 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w112 = loom.weight parameter "dec1.self.v.weight" from "m.bin"[40320] : tensor<16x16xf32>
  %v113 = loom.matmul %v107, %w112 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v114 = loom.attention %v109, %v111, %v113 {causal} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w115 = loom.weight parameter "dec1.self.o.weight" from "m.bin"[41344] : tensor<16x16xf32>
  %v116 = loom.matmul %v114, %w115 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v117 = loom.binary add %v104, %v116 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w118 = loom.weight parameter "dec1.ln2.weight" from "m.bin"[42368] : tensor<16xf32>
  %w119 = loom.weight parameter "dec1.ln2.bias" from "m.bin"[42432] : tensor<16xf32>
  %v120 = loom.layer_norm %v117 scale %w118 bias %w119 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w121 = loom.weight parameter "dec1.cross.q.weight" from "m.bin"[42496] : tensor<16x16xf32>
  %v122 = loom.matmul %v120, %w121 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w123 = loom.weight parameter "dec1.cross.k.weight" from "m.bin"[43520] : tensor<16x16xf32>
  %v124 = loom.matmul %v69, %w123 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w125 = loom.weight parameter "dec1.cross.v.weight" from "m.bin"[44544] : tensor<16x16xf32>
  %v126 = loom.matmul %v69, %w125 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v127 = loom.attention %v122, %v124, %v126 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w128 = loom.weight parameter "dec1.cross.o.weight" from "m.bin"[45568] : tensor<16x16xf32>
  %v129 = loom.matmul %v127, %w128 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v130 = loom.binary add %v117, %v129 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w131 = loom.weight parameter "dec1.mlp.ln.weight" from "m.bin"[46592] : tensor<16xf32>
  %w132 = loom.weight parameter "dec1.mlp.ln.bias" from "m.bin"[46656] : tensor<16xf32>
  %v133 = loom.layer_norm %v130 scale %w131 bias %w132 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w134 = loom.weight parameter "dec1.mlp.fc1.weight" from "m.bin"[46720] : tensor<16x32xf32>
  %v135 = loom.matmul %v133, %w134 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v136 = loom.unary relu %v135 : tensor<1x2x8x32xf32>
  %w137 = loom.weight parameter "dec1.mlp.fc2.weight" from "m.bin"[48768] : tensor<32x16xf32>
  %v138 = loom.matmul %v136, %w137 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v139 = loom.binary add %v130, %v138 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w140 = loom.weight parameter "dec2.ln1.weight" from "m.bin"[50816] : tensor<16xf32>
  %w141 = loom.weight parameter "dec2.ln1.bias" from "m.bin"[50880] : tensor<16xf32>
  %v142 = loom.layer_norm %v139 scale %w140 bias %w141 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w143 = loom.weight parameter "dec2.self.q.weight" from "m.bin"[50944] : tensor<16x16xf32>
  %v144 = loom.matmul %v142, %w143 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w145 = loom.weight parameter "dec2.self.k.weight" from "m.bin"[51968] : tensor<16x16xf32>
  %v146 = loom.matmul %v142, %w145 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w147 = loom.weight parameter "dec2.self.v.weight" from "m.bin"[52992] : tensor<16x16xf32>
  %v148 = loom.matmul %v142, %w147 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v149 = loom.attention %v144, %v146, %v148 {causal} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w150 = loom.weight parameter "dec2.self.o.weight" from "m.bin"[54016] : tensor<16x16xf32>
  %v151 = loom.matmul %v149, %w150 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v152 = loom.binary add %v139, %v151 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w153 = loom.weight parameter "dec2.ln2.weight" from "m.bin"[55040] : tensor<16xf32>
  %w154 = loom.weight parameter "dec2.ln2.bias" from "m.bin"[55104] : tensor<16xf32>
  %v155 = loom.layer_norm %v152 scale %w153 bias %w154 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w156 = loom.weight parameter "dec2.cross.q.weight" from "m.bin"[55168] : tensor<16x16xf32>
  %v157 = loom.matmul %v155, %w156 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w158 = loom.weight parameter "dec2.cross.k.weight" from "m.bin"[56192] : tensor<16x16xf32>
  %v159 = loom.matmul %v69, %w158 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %w160 = loom.weight parameter "dec2.cross.v.weight" from "m.bin"[57216] : tensor<16x16xf32>
  %v161 = loom.matmul %v69, %w160 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v162 = loom.attention %v157, %v159, %v161 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w163 = loom.weight parameter "dec2.cross.o.weight" from "m.bin"[58240] : tensor<16x16xf32>
  %v164 = loom.matmul %v162, %w163 : tensor<1x2x8x16xf32>, tensor<16x16xf32>
  %v165 = loom.binary add %v152, %v164 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w166 = loom.weight parameter "dec2.mlp.ln.weight" from "m.bin"[59264] : tensor<16xf32>
  %w167 = loom.weight parameter "dec2.mlp.ln.bias" from "m.bin"[59328] : tensor<16xf32>
  %v168 = loom.layer_norm %v165 scale %w166 bias %w167 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %w169 = loom.weight parameter "dec2.mlp.fc1.weight" from "m.bin"[59392] : tensor<16x32xf32>
  %v170 = loom.matmul %v168, %w169 : tensor<1x2x8x16xf32>, tensor<16x32xf32>
  %v171 = loom.unary relu %v170 : tensor<1x2x8x32xf32>
  %w172 = loom.weight parameter "dec2.mlp.fc2.weight" from "m.bin"[61440] : tensor<32x16xf32>
  %v173 = loom.matmul %v171, %w172 : tensor<1x2x8x32xf32>, tensor<32x16xf32>
  %v174 = loom.binary add %v165, %v173 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %w175 = loom.weight parameter "dec.final_ln.weight" from "m.bin"[63488] : tensor<16xf32>
  %w176 = loom.weight parameter "dec.final_ln.bias" from "m.bin"[63552] : tensor<16xf32>
  %v177 = loom.layer_norm %v174 scale %w175 bias %w176 {axis = 3 : i64, epsilon = 1.000000e-05 : f64} : tensor<1x2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %v177 : tensor<1x2x8x16xf32>
}
