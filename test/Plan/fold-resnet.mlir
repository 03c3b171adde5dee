// A ResNet-shaped chain: a stem, then two stages of bottlenecks whose first
// block downsamples (a strided conv and a projection shortcut) and differs
// from the rest. Each stage's remaining blocks form their own run: the
// stages differ in width, so they cannot share one.
// RUN: loom-opt %s --loom-fold -o /dev/null 2>&1 | FileCheck %s
// RUN: loom-opt %s --loom-fold="annotate=true" 2>/dev/null | FileCheck %s --check-prefix=ANNOT

// A bottleneck is conv/batch_norm/relu twice, conv/batch_norm, add, relu:
// 10 ops. Parameters are the convs and the batch-norm scale and bias; the
// running statistics are buffers and do not count.
// CHECK: remark: loom-fold: block 0: 2 copies of 10 ops (320 parameters, 647 K FLOPs per copy); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 15, 25
// CHECK: remark: loom-fold: block 1: 3 copies of 10 ops (1.18 K parameters, 602 K FLOPs per copy); 1 chained input, 0 shared inputs, 1 output per copy; copies start at compute op 47, 57, 67
// CHECK: remark: loom-fold: 2 blocks; 80 compute ops fold to 50

// The downsampling blocks (with their shortcut conv) are outside the runs.
// ANNOT: loom.weight parameter "layer1.0.downsample.conv.weight"
// ANNOT-NEXT: loom.conv
// ANNOT-NOT: loom.fold
// ANNOT: loom.conv {{.*}}loom.fold = array<i64: 0, 0, 0>
// ANNOT: loom.unary relu {{.*}}loom.fold = array<i64: 0, 1, 9>
// ANNOT-NOT: loom.fold
// ANNOT: loom.weight parameter "layer2.0.downsample.conv.weight"
// ANNOT-NOT: loom.fold
// ANNOT: loom.conv {{.*}}loom.fold = array<i64: 1, 0, 0>
// ANNOT: loom.unary relu {{.*}}loom.fold = array<i64: 1, 2, 9>
// ANNOT-NOT: loom.fold

func.func @resnet(%img: tensor<1x3x32x32xf32>) -> tensor<1x10xf32> {
  %w1 = loom.weight parameter "stem.conv.weight" from "m.bin"[0] : tensor<8x3x3x3xf32>
  %v2 = loom.conv %img, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>
  %w3 = loom.weight parameter "stem.bn.weight" from "m.bin"[864] : tensor<8xf32>
  %w4 = loom.weight parameter "stem.bn.bias" from "m.bin"[896] : tensor<8xf32>
  %w5 = loom.weight buffer "stem.bn.running_mean" from "m.bin"[928] : tensor<8xf32>
  %w6 = loom.weight buffer "stem.bn.running_var" from "m.bin"[960] : tensor<8xf32>
  %v7 = loom.batch_norm %v2, %w3, %w4, %w5, %w6 {epsilon = 1.000000e-05 : f64} : tensor<1x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v8 = loom.unary relu %v7 : tensor<1x8x32x32xf32>
  %w9 = loom.weight parameter "layer1.0.1.conv.weight" from "m.bin"[992] : tensor<4x8x1x1xf32>
  %v10 = loom.conv %v8, %w9 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x32x32xf32>, tensor<4x8x1x1xf32>
  %w11 = loom.weight parameter "layer1.0.1.bn.weight" from "m.bin"[1120] : tensor<4xf32>
  %w12 = loom.weight parameter "layer1.0.1.bn.bias" from "m.bin"[1136] : tensor<4xf32>
  %w13 = loom.weight buffer "layer1.0.1.bn.running_mean" from "m.bin"[1152] : tensor<4xf32>
  %w14 = loom.weight buffer "layer1.0.1.bn.running_var" from "m.bin"[1168] : tensor<4xf32>
  %v15 = loom.batch_norm %v10, %w11, %w12, %w13, %w14 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v16 = loom.unary relu %v15 : tensor<1x4x32x32xf32>
  %w17 = loom.weight parameter "layer1.0.2.conv.weight" from "m.bin"[1184] : tensor<4x4x3x3xf32>
  %v18 = loom.conv %v16, %w17 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<4x4x3x3xf32>
  %w19 = loom.weight parameter "layer1.0.2.bn.weight" from "m.bin"[1760] : tensor<4xf32>
  %w20 = loom.weight parameter "layer1.0.2.bn.bias" from "m.bin"[1776] : tensor<4xf32>
  %w21 = loom.weight buffer "layer1.0.2.bn.running_mean" from "m.bin"[1792] : tensor<4xf32>
  %w22 = loom.weight buffer "layer1.0.2.bn.running_var" from "m.bin"[1808] : tensor<4xf32>
  %v23 = loom.batch_norm %v18, %w19, %w20, %w21, %w22 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v24 = loom.unary relu %v23 : tensor<1x4x32x32xf32>
  %w25 = loom.weight parameter "layer1.0.3.conv.weight" from "m.bin"[1824] : tensor<16x4x1x1xf32>
  %v26 = loom.conv %v24, %w25 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<16x4x1x1xf32>
  %w27 = loom.weight parameter "layer1.0.3.bn.weight" from "m.bin"[2080] : tensor<16xf32>
  %w28 = loom.weight parameter "layer1.0.3.bn.bias" from "m.bin"[2144] : tensor<16xf32>
  %w29 = loom.weight buffer "layer1.0.3.bn.running_mean" from "m.bin"[2208] : tensor<16xf32>
  %w30 = loom.weight buffer "layer1.0.3.bn.running_var" from "m.bin"[2272] : tensor<16xf32>
  %v31 = loom.batch_norm %v26, %w27, %w28, %w29, %w30 {epsilon = 1.000000e-05 : f64} : tensor<1x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %w32 = loom.weight parameter "layer1.0.downsample.conv.weight" from "m.bin"[2336] : tensor<16x8x1x1xf32>
  %v33 = loom.conv %v8, %w32 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x32x32xf32>, tensor<16x8x1x1xf32>
  %w34 = loom.weight parameter "layer1.0.downsample.bn.weight" from "m.bin"[2848] : tensor<16xf32>
  %w35 = loom.weight parameter "layer1.0.downsample.bn.bias" from "m.bin"[2912] : tensor<16xf32>
  %w36 = loom.weight buffer "layer1.0.downsample.bn.running_mean" from "m.bin"[2976] : tensor<16xf32>
  %w37 = loom.weight buffer "layer1.0.downsample.bn.running_var" from "m.bin"[3040] : tensor<16xf32>
  %v38 = loom.batch_norm %v33, %w34, %w35, %w36, %w37 {epsilon = 1.000000e-05 : f64} : tensor<1x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %v39 = loom.binary add %v31, %v38 : tensor<1x16x32x32xf32>, tensor<1x16x32x32xf32>
  %v40 = loom.unary relu %v39 : tensor<1x16x32x32xf32>
  %w41 = loom.weight parameter "layer1.1.1.conv.weight" from "m.bin"[3104] : tensor<4x16x1x1xf32>
  %v42 = loom.conv %v40, %w41 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x16x32x32xf32>, tensor<4x16x1x1xf32>
  %w43 = loom.weight parameter "layer1.1.1.bn.weight" from "m.bin"[3360] : tensor<4xf32>
  %w44 = loom.weight parameter "layer1.1.1.bn.bias" from "m.bin"[3376] : tensor<4xf32>
  %w45 = loom.weight buffer "layer1.1.1.bn.running_mean" from "m.bin"[3392] : tensor<4xf32>
  %w46 = loom.weight buffer "layer1.1.1.bn.running_var" from "m.bin"[3408] : tensor<4xf32>
  %v47 = loom.batch_norm %v42, %w43, %w44, %w45, %w46 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v48 = loom.unary relu %v47 : tensor<1x4x32x32xf32>
  %w49 = loom.weight parameter "layer1.1.2.conv.weight" from "m.bin"[3424] : tensor<4x4x3x3xf32>
  %v50 = loom.conv %v48, %w49 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<4x4x3x3xf32>
  %w51 = loom.weight parameter "layer1.1.2.bn.weight" from "m.bin"[4000] : tensor<4xf32>
  %w52 = loom.weight parameter "layer1.1.2.bn.bias" from "m.bin"[4016] : tensor<4xf32>
  %w53 = loom.weight buffer "layer1.1.2.bn.running_mean" from "m.bin"[4032] : tensor<4xf32>
  %w54 = loom.weight buffer "layer1.1.2.bn.running_var" from "m.bin"[4048] : tensor<4xf32>
  %v55 = loom.batch_norm %v50, %w51, %w52, %w53, %w54 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v56 = loom.unary relu %v55 : tensor<1x4x32x32xf32>
  %w57 = loom.weight parameter "layer1.1.3.conv.weight" from "m.bin"[4064] : tensor<16x4x1x1xf32>
  %v58 = loom.conv %v56, %w57 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<16x4x1x1xf32>
  %w59 = loom.weight parameter "layer1.1.3.bn.weight" from "m.bin"[4320] : tensor<16xf32>
  %w60 = loom.weight parameter "layer1.1.3.bn.bias" from "m.bin"[4384] : tensor<16xf32>
  %w61 = loom.weight buffer "layer1.1.3.bn.running_mean" from "m.bin"[4448] : tensor<16xf32>
  %w62 = loom.weight buffer "layer1.1.3.bn.running_var" from "m.bin"[4512] : tensor<16xf32>
  %v63 = loom.batch_norm %v58, %w59, %w60, %w61, %w62 {epsilon = 1.000000e-05 : f64} : tensor<1x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %v64 = loom.binary add %v63, %v40 : tensor<1x16x32x32xf32>, tensor<1x16x32x32xf32>
  %v65 = loom.unary relu %v64 : tensor<1x16x32x32xf32>
  %w66 = loom.weight parameter "layer1.2.1.conv.weight" from "m.bin"[4576] : tensor<4x16x1x1xf32>
  %v67 = loom.conv %v65, %w66 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x16x32x32xf32>, tensor<4x16x1x1xf32>
  %w68 = loom.weight parameter "layer1.2.1.bn.weight" from "m.bin"[4832] : tensor<4xf32>
  %w69 = loom.weight parameter "layer1.2.1.bn.bias" from "m.bin"[4848] : tensor<4xf32>
  %w70 = loom.weight buffer "layer1.2.1.bn.running_mean" from "m.bin"[4864] : tensor<4xf32>
  %w71 = loom.weight buffer "layer1.2.1.bn.running_var" from "m.bin"[4880] : tensor<4xf32>
  %v72 = loom.batch_norm %v67, %w68, %w69, %w70, %w71 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v73 = loom.unary relu %v72 : tensor<1x4x32x32xf32>
  %w74 = loom.weight parameter "layer1.2.2.conv.weight" from "m.bin"[4896] : tensor<4x4x3x3xf32>
  %v75 = loom.conv %v73, %w74 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<4x4x3x3xf32>
  %w76 = loom.weight parameter "layer1.2.2.bn.weight" from "m.bin"[5472] : tensor<4xf32>
  %w77 = loom.weight parameter "layer1.2.2.bn.bias" from "m.bin"[5488] : tensor<4xf32>
  %w78 = loom.weight buffer "layer1.2.2.bn.running_mean" from "m.bin"[5504] : tensor<4xf32>
  %w79 = loom.weight buffer "layer1.2.2.bn.running_var" from "m.bin"[5520] : tensor<4xf32>
  %v80 = loom.batch_norm %v75, %w76, %w77, %w78, %w79 {epsilon = 1.000000e-05 : f64} : tensor<1x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %v81 = loom.unary relu %v80 : tensor<1x4x32x32xf32>
  %w82 = loom.weight parameter "layer1.2.3.conv.weight" from "m.bin"[5536] : tensor<16x4x1x1xf32>
  %v83 = loom.conv %v81, %w82 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x4x32x32xf32>, tensor<16x4x1x1xf32>
  %w84 = loom.weight parameter "layer1.2.3.bn.weight" from "m.bin"[5792] : tensor<16xf32>
  %w85 = loom.weight parameter "layer1.2.3.bn.bias" from "m.bin"[5856] : tensor<16xf32>
  %w86 = loom.weight buffer "layer1.2.3.bn.running_mean" from "m.bin"[5920] : tensor<16xf32>
  %w87 = loom.weight buffer "layer1.2.3.bn.running_var" from "m.bin"[5984] : tensor<16xf32>
  %v88 = loom.batch_norm %v83, %w84, %w85, %w86, %w87 {epsilon = 1.000000e-05 : f64} : tensor<1x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %v89 = loom.binary add %v88, %v65 : tensor<1x16x32x32xf32>, tensor<1x16x32x32xf32>
  %v90 = loom.unary relu %v89 : tensor<1x16x32x32xf32>
  %w91 = loom.weight parameter "layer2.0.1.conv.weight" from "m.bin"[6048] : tensor<8x16x1x1xf32>
  %v92 = loom.conv %v90, %w91 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x16x32x32xf32>, tensor<8x16x1x1xf32>
  %w93 = loom.weight parameter "layer2.0.1.bn.weight" from "m.bin"[6560] : tensor<8xf32>
  %w94 = loom.weight parameter "layer2.0.1.bn.bias" from "m.bin"[6592] : tensor<8xf32>
  %w95 = loom.weight buffer "layer2.0.1.bn.running_mean" from "m.bin"[6624] : tensor<8xf32>
  %w96 = loom.weight buffer "layer2.0.1.bn.running_var" from "m.bin"[6656] : tensor<8xf32>
  %v97 = loom.batch_norm %v92, %w93, %w94, %w95, %w96 {epsilon = 1.000000e-05 : f64} : tensor<1x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v98 = loom.unary relu %v97 : tensor<1x8x32x32xf32>
  %w99 = loom.weight parameter "layer2.0.2.conv.weight" from "m.bin"[6688] : tensor<8x8x3x3xf32>
  %v100 = loom.conv %v98, %w99 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x32x32xf32>, tensor<8x8x3x3xf32>
  %w101 = loom.weight parameter "layer2.0.2.bn.weight" from "m.bin"[8992] : tensor<8xf32>
  %w102 = loom.weight parameter "layer2.0.2.bn.bias" from "m.bin"[9024] : tensor<8xf32>
  %w103 = loom.weight buffer "layer2.0.2.bn.running_mean" from "m.bin"[9056] : tensor<8xf32>
  %w104 = loom.weight buffer "layer2.0.2.bn.running_var" from "m.bin"[9088] : tensor<8xf32>
  %v105 = loom.batch_norm %v100, %w101, %w102, %w103, %w104 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v106 = loom.unary relu %v105 : tensor<1x8x16x16xf32>
  %w107 = loom.weight parameter "layer2.0.3.conv.weight" from "m.bin"[9120] : tensor<32x8x1x1xf32>
  %v108 = loom.conv %v106, %w107 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %w109 = loom.weight parameter "layer2.0.3.bn.weight" from "m.bin"[10144] : tensor<32xf32>
  %w110 = loom.weight parameter "layer2.0.3.bn.bias" from "m.bin"[10272] : tensor<32xf32>
  %w111 = loom.weight buffer "layer2.0.3.bn.running_mean" from "m.bin"[10400] : tensor<32xf32>
  %w112 = loom.weight buffer "layer2.0.3.bn.running_var" from "m.bin"[10528] : tensor<32xf32>
  %v113 = loom.batch_norm %v108, %w109, %w110, %w111, %w112 {epsilon = 1.000000e-05 : f64} : tensor<1x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %w114 = loom.weight parameter "layer2.0.downsample.conv.weight" from "m.bin"[10656] : tensor<32x16x1x1xf32>
  %v115 = loom.conv %v90, %w114 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x16x32x32xf32>, tensor<32x16x1x1xf32>
  %w116 = loom.weight parameter "layer2.0.downsample.bn.weight" from "m.bin"[12704] : tensor<32xf32>
  %w117 = loom.weight parameter "layer2.0.downsample.bn.bias" from "m.bin"[12832] : tensor<32xf32>
  %w118 = loom.weight buffer "layer2.0.downsample.bn.running_mean" from "m.bin"[12960] : tensor<32xf32>
  %w119 = loom.weight buffer "layer2.0.downsample.bn.running_var" from "m.bin"[13088] : tensor<32xf32>
  %v120 = loom.batch_norm %v115, %w116, %w117, %w118, %w119 {epsilon = 1.000000e-05 : f64} : tensor<1x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %v121 = loom.binary add %v113, %v120 : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
  %v122 = loom.unary relu %v121 : tensor<1x32x16x16xf32>
  %w123 = loom.weight parameter "layer2.1.1.conv.weight" from "m.bin"[13216] : tensor<8x32x1x1xf32>
  %v124 = loom.conv %v122, %w123 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>
  %w125 = loom.weight parameter "layer2.1.1.bn.weight" from "m.bin"[14240] : tensor<8xf32>
  %w126 = loom.weight parameter "layer2.1.1.bn.bias" from "m.bin"[14272] : tensor<8xf32>
  %w127 = loom.weight buffer "layer2.1.1.bn.running_mean" from "m.bin"[14304] : tensor<8xf32>
  %w128 = loom.weight buffer "layer2.1.1.bn.running_var" from "m.bin"[14336] : tensor<8xf32>
  %v129 = loom.batch_norm %v124, %w125, %w126, %w127, %w128 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v130 = loom.unary relu %v129 : tensor<1x8x16x16xf32>
  %w131 = loom.weight parameter "layer2.1.2.conv.weight" from "m.bin"[14368] : tensor<8x8x3x3xf32>
  %v132 = loom.conv %v130, %w131 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %w133 = loom.weight parameter "layer2.1.2.bn.weight" from "m.bin"[16672] : tensor<8xf32>
  %w134 = loom.weight parameter "layer2.1.2.bn.bias" from "m.bin"[16704] : tensor<8xf32>
  %w135 = loom.weight buffer "layer2.1.2.bn.running_mean" from "m.bin"[16736] : tensor<8xf32>
  %w136 = loom.weight buffer "layer2.1.2.bn.running_var" from "m.bin"[16768] : tensor<8xf32>
  %v137 = loom.batch_norm %v132, %w133, %w134, %w135, %w136 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v138 = loom.unary relu %v137 : tensor<1x8x16x16xf32>
  %w139 = loom.weight parameter "layer2.1.3.conv.weight" from "m.bin"[16800] : tensor<32x8x1x1xf32>
  %v140 = loom.conv %v138, %w139 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %w141 = loom.weight parameter "layer2.1.3.bn.weight" from "m.bin"[17824] : tensor<32xf32>
  %w142 = loom.weight parameter "layer2.1.3.bn.bias" from "m.bin"[17952] : tensor<32xf32>
  %w143 = loom.weight buffer "layer2.1.3.bn.running_mean" from "m.bin"[18080] : tensor<32xf32>
  %w144 = loom.weight buffer "layer2.1.3.bn.running_var" from "m.bin"[18208] : tensor<32xf32>
  %v145 = loom.batch_norm %v140, %w141, %w142, %w143, %w144 {epsilon = 1.000000e-05 : f64} : tensor<1x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %v146 = loom.binary add %v145, %v122 : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
  %v147 = loom.unary relu %v146 : tensor<1x32x16x16xf32>
  %w148 = loom.weight parameter "layer2.2.1.conv.weight" from "m.bin"[18336] : tensor<8x32x1x1xf32>
  %v149 = loom.conv %v147, %w148 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>
  %w150 = loom.weight parameter "layer2.2.1.bn.weight" from "m.bin"[19360] : tensor<8xf32>
  %w151 = loom.weight parameter "layer2.2.1.bn.bias" from "m.bin"[19392] : tensor<8xf32>
  %w152 = loom.weight buffer "layer2.2.1.bn.running_mean" from "m.bin"[19424] : tensor<8xf32>
  %w153 = loom.weight buffer "layer2.2.1.bn.running_var" from "m.bin"[19456] : tensor<8xf32>
  %v154 = loom.batch_norm %v149, %w150, %w151, %w152, %w153 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v155 = loom.unary relu %v154 : tensor<1x8x16x16xf32>
  %w156 = loom.weight parameter "layer2.2.2.conv.weight" from "m.bin"[19488] : tensor<8x8x3x3xf32>
  %v157 = loom.conv %v155, %w156 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %w158 = loom.weight parameter "layer2.2.2.bn.weight" from "m.bin"[21792] : tensor<8xf32>
  %w159 = loom.weight parameter "layer2.2.2.bn.bias" from "m.bin"[21824] : tensor<8xf32>
  %w160 = loom.weight buffer "layer2.2.2.bn.running_mean" from "m.bin"[21856] : tensor<8xf32>
  %w161 = loom.weight buffer "layer2.2.2.bn.running_var" from "m.bin"[21888] : tensor<8xf32>
  %v162 = loom.batch_norm %v157, %w158, %w159, %w160, %w161 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v163 = loom.unary relu %v162 : tensor<1x8x16x16xf32>
  %w164 = loom.weight parameter "layer2.2.3.conv.weight" from "m.bin"[21920] : tensor<32x8x1x1xf32>
  %v165 = loom.conv %v163, %w164 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %w166 = loom.weight parameter "layer2.2.3.bn.weight" from "m.bin"[22944] : tensor<32xf32>
  %w167 = loom.weight parameter "layer2.2.3.bn.bias" from "m.bin"[23072] : tensor<32xf32>
  %w168 = loom.weight buffer "layer2.2.3.bn.running_mean" from "m.bin"[23200] : tensor<32xf32>
  %w169 = loom.weight buffer "layer2.2.3.bn.running_var" from "m.bin"[23328] : tensor<32xf32>
  %v170 = loom.batch_norm %v165, %w166, %w167, %w168, %w169 {epsilon = 1.000000e-05 : f64} : tensor<1x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %v171 = loom.binary add %v170, %v147 : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
  %v172 = loom.unary relu %v171 : tensor<1x32x16x16xf32>
  %w173 = loom.weight parameter "layer2.3.1.conv.weight" from "m.bin"[23456] : tensor<8x32x1x1xf32>
  %v174 = loom.conv %v172, %w173 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>
  %w175 = loom.weight parameter "layer2.3.1.bn.weight" from "m.bin"[24480] : tensor<8xf32>
  %w176 = loom.weight parameter "layer2.3.1.bn.bias" from "m.bin"[24512] : tensor<8xf32>
  %w177 = loom.weight buffer "layer2.3.1.bn.running_mean" from "m.bin"[24544] : tensor<8xf32>
  %w178 = loom.weight buffer "layer2.3.1.bn.running_var" from "m.bin"[24576] : tensor<8xf32>
  %v179 = loom.batch_norm %v174, %w175, %w176, %w177, %w178 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v180 = loom.unary relu %v179 : tensor<1x8x16x16xf32>
  %w181 = loom.weight parameter "layer2.3.2.conv.weight" from "m.bin"[24608] : tensor<8x8x3x3xf32>
  %v182 = loom.conv %v180, %w181 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %w183 = loom.weight parameter "layer2.3.2.bn.weight" from "m.bin"[26912] : tensor<8xf32>
  %w184 = loom.weight parameter "layer2.3.2.bn.bias" from "m.bin"[26944] : tensor<8xf32>
  %w185 = loom.weight buffer "layer2.3.2.bn.running_mean" from "m.bin"[26976] : tensor<8xf32>
  %w186 = loom.weight buffer "layer2.3.2.bn.running_var" from "m.bin"[27008] : tensor<8xf32>
  %v187 = loom.batch_norm %v182, %w183, %w184, %w185, %w186 {epsilon = 1.000000e-05 : f64} : tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %v188 = loom.unary relu %v187 : tensor<1x8x16x16xf32>
  %w189 = loom.weight parameter "layer2.3.3.conv.weight" from "m.bin"[27040] : tensor<32x8x1x1xf32>
  %v190 = loom.conv %v188, %w189 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %w191 = loom.weight parameter "layer2.3.3.bn.weight" from "m.bin"[28064] : tensor<32xf32>
  %w192 = loom.weight parameter "layer2.3.3.bn.bias" from "m.bin"[28192] : tensor<32xf32>
  %w193 = loom.weight buffer "layer2.3.3.bn.running_mean" from "m.bin"[28320] : tensor<32xf32>
  %w194 = loom.weight buffer "layer2.3.3.bn.running_var" from "m.bin"[28448] : tensor<32xf32>
  %v195 = loom.batch_norm %v190, %w191, %w192, %w193, %w194 {epsilon = 1.000000e-05 : f64} : tensor<1x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %v196 = loom.binary add %v195, %v172 : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
  %v197 = loom.unary relu %v196 : tensor<1x32x16x16xf32>
  %v198 = loom.reduce mean %v197 {axes = array<i64: 2, 3>, keep_dims = false} : tensor<1x32x16x16xf32>
  %w199 = loom.weight parameter "fc.weight" from "m.bin"[28576] : tensor<32x10xf32>
  %v200 = loom.matmul %v198, %w199 : tensor<1x32xf32>, tensor<32x10xf32>
  %w201 = loom.weight parameter "fc.bias" from "m.bin"[29856] : tensor<10xf32>
  %v202 = loom.binary add %v200, %w201 : tensor<1x10xf32>, tensor<10xf32>
  return %v202 : tensor<1x10xf32>
}
