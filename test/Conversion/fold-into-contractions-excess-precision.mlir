// RUN: loom-opt %s --loom-fold-into-contractions="allow-excess-precision=true" --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: loom-opt %s --loom-fold-into-contractions --split-input-file | FileCheck %s --check-prefix=ROUNDED

#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 weight's gradient, rounded from the matmul's float32 accumulator
// and widened again for the add into its float32 sum: under the option the
// sum reads the accumulator, and then the matmul accumulates into the sum
// itself, its bf16 operands widened by the named op. No bf16 copy is left.
// CHECK-LABEL: func @narrow_gradient_into_sum
// CHECK-SAME: (%[[SUM:.+]]: tensor<4x8xf32>, %[[X:.+]]: tensor<4x2xbf16>, %[[DY:.+]]: tensor<2x8xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: %[[G:.+]] = linalg.matmul ins(%[[X]], %[[DY]] : tensor<4x2xbf16>, tensor<2x8xbf16>) outs(%[[SUM]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
// Without it, the gradient is rounded to bf16 and widened before the add.
// ROUNDED-LABEL: func @narrow_gradient_into_sum
// ROUNDED: linalg.matmul
// ROUNDED: arith.truncf
// ROUNDED: arith.extf
// ROUNDED: arith.addf
func.func @narrow_gradient_into_sum(%sum: tensor<4x8xf32>, %x: tensor<4x2xbf16>, %dy: tensor<2x8xbf16>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = linalg.matmul ins(%x, %dy : tensor<4x2xbf16>, tensor<2x8xbf16>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %en = tensor.empty() : tensor<4x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<4x8xf32>) outs(%en : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ew = tensor.empty() : tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xbf16>) outs(%ew : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %t = arith.extf %a : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %es = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%es : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A kept gradient: the rounded value is also returned, so the rounding
// stays for it, and so does the sum's widening of it: reading the
// accumulator there would leave the accumulator whole beside the rounded
// copy (two readers, so loom-tile-narrow-contractions could not tile it).
// CHECK-LABEL: func @kept_narrow_gradient
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: arith.addf
func.func @kept_narrow_gradient(%sum: tensor<4x8xf32>, %x: tensor<4x2xbf16>, %dy: tensor<2x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = linalg.matmul ins(%x, %dy : tensor<4x2xbf16>, tensor<2x8xbf16>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %en = tensor.empty() : tensor<4x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<4x8xf32>) outs(%en : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ew = tensor.empty() : tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xbf16>) outs(%ew : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %t = arith.extf %a : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %es = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%es : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %s, %g : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A batched matmul's rows are collapsed for the contraction, rounded, and
// expanded back (the lowering of [B, S, K] x [K, N]): the widened reader
// takes the accumulator expanded the same way.
// CHECK-LABEL: func @expanded_accumulator
// CHECK: %[[ACC:.+]] = linalg.matmul
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.+]] = tensor.expand_shape %[[ACC]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[X]]
func.func @expanded_accumulator(%x: tensor<6x2xbf16>, %w: tensor<2x8xbf16>) -> tensor<2x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %acc = linalg.matmul ins(%x, %w : tensor<6x2xbf16>, tensor<2x8xbf16>) outs(%z : tensor<6x8xf32>) -> tensor<6x8xf32>
  %en = tensor.empty() : tensor<6x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<6x8xf32>) outs(%en : tensor<6x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<6x8xbf16>
  %g3 = tensor.expand_shape %g [[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xbf16> into tensor<2x3x8xbf16>
  %ew = tensor.empty() : tensor<2x3x8xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g3 : tensor<2x3x8xbf16>) outs(%ew : tensor<2x3x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %t = arith.extf %a : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<2x3x8xf32>
  return %r : tensor<2x3x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Negatives: a round trip of a value no contraction makes (an argument)
// is the program's own rounding and stays; so does one that widens to
// another type than the accumulator's, and one of a float32 product (its
// operands are not the rounded type: a rounding on purpose, say to model
// quantization).
// CHECK-LABEL: func @not_an_accumulator
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK-LABEL: func @other_width
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK-LABEL: func @float32_product
// CHECK: arith.truncf
// CHECK: arith.extf
func.func @not_an_accumulator(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %en = tensor.empty() : tensor<4x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%en : tensor<4x8xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ew = tensor.empty() : tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xbf16>) outs(%ew : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %t = arith.extf %x : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

func.func @other_width(%x: tensor<4x2xbf16>, %dy: tensor<2x8xbf16>) -> tensor<4x8xf64> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = linalg.matmul ins(%x, %dy : tensor<4x2xbf16>, tensor<2x8xbf16>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %en = tensor.empty() : tensor<4x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<4x8xf32>) outs(%en : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ew = tensor.empty() : tensor<4x8xf64>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xbf16>) outs(%ew : tensor<4x8xf64>) {
  ^bb0(%a: bf16, %o: f64):
    %t = arith.extf %a : bf16 to f64
    linalg.yield %t : f64
  } -> tensor<4x8xf64>
  return %w : tensor<4x8xf64>
}

func.func @float32_product(%x: tensor<4x2xf32>, %dy: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = linalg.matmul ins(%x, %dy : tensor<4x2xf32>, tensor<2x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %en = tensor.empty() : tensor<4x8xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<4x8xf32>) outs(%en : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ew = tensor.empty() : tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xbf16>) outs(%ew : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %t = arith.extf %a : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}
