// RUN: loom-opt %s --loom-to-linalg -split-input-file -verify-diagnostics

// Integer masks other than i1 have no meaning the lowering could pick.
func.func @no_int_mask(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>, %v: tensor<1x1x2x2xf32>, %m: tensor<2x2xi32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+2 {{'loom.attention' op mask must be i1 or float, got 'i32'}}
  // expected-error @+1 {{failed to legalize operation 'loom.attention'}}
  %0 = loom.attention %q, %k, %v mask %m : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<2x2xi32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @no_mixed_conv(%x: tensor<1x1x3xf32>, %w: tensor<1x1x2xf16>) -> tensor<1x1x2xf32> {
  // expected-error @+2 {{'loom.conv' op lowering needs one element type for input, weight, bias and result}}
  // expected-error @+1 {{failed to legalize operation 'loom.conv'}}
  %0 = loom.conv %x, %w {strides = array<i64: 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1>, groups = 1 : i64} : tensor<1x1x3xf32>, tensor<1x1x2xf16>
  return %0 : tensor<1x1x2xf32>
}
