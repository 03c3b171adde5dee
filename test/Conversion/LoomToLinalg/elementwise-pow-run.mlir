// Float pow with an exponent that is not a constant when math-expand-ops runs
// (it rewrites math.powf to exp(b * log(a)) then, NaN for every negative
// base): @pow's operands are function arguments. Expected values are numpy's
// np.power in float32 (C's pow): negative bases with integer exponents keep
// their sign, other finite negative bases give NaN, x^0, 1^y and (-1)^inf are
// 1 even for NaN, signed zeros and infinities as C. A LLaMA RMSNorm's x^2 gave
// NaN on every negative activation whenever its exponent was not folded into
// the elementwise body before the expansion.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32> {bufferization.access = "read"})

func.func @pow(%a: tensor<20xf32>, %b: tensor<20xf32>) -> tensor<20xf32> {
  %r = loom.binary pow %a, %b : tensor<20xf32>, tensor<20xf32>
  return %r : tensor<20xf32>
}

func.func @pow_scalar_exponent(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = loom.binary pow %a, %b : tensor<2x3xf32>, tensor<f32>
  return %r : tensor<2x3xf32>
}

func.func @main() {
  %a = loom.constant dense<[-2.0, -2.0, -2.0, -8.0, -3.0, 0.0, 0x7FC00000, 1.0, 0.0, -0.0, -0.0, 0xFF800000, 0xFF800000, 0xFF800000, 2.0, 4.0, -1.5, -1.0, 0.5, -2.0]> : tensor<20xf32>
  %b = loom.constant dense<[2.0, 3.0, -1.0, 0.33333334, 0.0, 0.0, 0.0, 0x7FC00000, -1.0, -1.0, 3.0, 3.0, 2.0, 0.5, 10.0, 0.5, -2.0, 0x7F800000, 0x7F800000, 0x7FC00000]> : tensor<20xf32>
  %r = call @pow(%a, %b) : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xf32>
  %ru = tensor.cast %r : tensor<20xf32> to tensor<*xf32>
  call @printMemrefF32(%ru) : (tensor<*xf32>) -> ()
  // CHECK: [4, -8, -0.5, nan, 1, 1, 1, 1, inf, -inf, -0, -inf, inf, inf, 1024, 2, 0.444444, 1, 0, nan]

  // x^2 of an RMSNorm: one exponent broadcast over the tensor.
  %x = loom.constant dense<[[-3.0, -0.5, 0.0], [0.25, 2.0, -1.0]]> : tensor<2x3xf32>
  %two = loom.constant dense<2.0> : tensor<f32>
  %s = call @pow_scalar_exponent(%x, %two) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %su = tensor.cast %s : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  // CHECK: [9, 0.25, 0],
  // CHECK-NEXT: [0.0625, 4, 1]
  return
}
