// Indexing ops the CPU lowering rejects, with the reason.
// RUN: loom-opt %s --loom-to-linalg --split-input-file --verify-diagnostics

func.func @no_scatter_sub(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{reduction sub on 'f32' is not supported by the CPU lowering}}
  // expected-error @+1 {{failed to legalize operation 'loom.scatter'}}
  %0 = loom.scatter %d, %i, %u reduction sub {axis = 0 : i64} : tensor<4xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @no_scatter_wide_indices(%d: tensor<2x4xf32>, %i: tensor<3x1xi64>, %u: tensor<3x1xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{indices are larger than data in dim 0}}
  // expected-error @+1 {{failed to legalize operation 'loom.scatter'}}
  %0 = loom.scatter %d, %i, %u {axis = 1 : i64} : tensor<2x4xf32>, tensor<3x1xi64>, tensor<3x1xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @no_gather_empty_axis(%d: tensor<0x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+2 {{gathers from an empty axis}}
  // expected-error @+1 {{failed to legalize operation 'loom.gather'}}
  %0 = loom.gather %d, %i {axis = 0 : i64} : tensor<0x4xf32>, tensor<2xi64>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @no_topk_complex(%x: tensor<4xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2xi64>) {
  // expected-error @+2 {{top_k of 'complex<f32>' is not supported}}
  // expected-error @+1 {{failed to legalize operation 'loom.topk'}}
  %v, %i = loom.topk %x {k = 2 : i64, axis = 0 : i64} : tensor<4xcomplex<f32>>
  return %v, %i : tensor<2xcomplex<f32>>, tensor<2xi64>
}
