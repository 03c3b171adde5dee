// RUN: loom-opt %s --loom-clone-casts-for-fusion --split-input-file | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(loom-clone-casts-for-fusion,func.func(linalg-fuse-elementwise-ops))" --split-input-file | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0) -> (d0)>

// A bf16 gradient widened for both of Adam's moments: the second reader
// gets its own widening, and fusion then folds one into each reader, so
// no float32 copy of the gradient is left.
// CHECK-LABEL: func @two_readers
// CHECK: %[[W1:.+]] = linalg.generic {{.*}} ins(%[[G:.+]] : tensor<8xbf16>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[W1]] :
// CHECK: %[[W2:.+]] = linalg.generic {{.*}} ins(%[[G]] : tensor<8xbf16>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[W2]] :
// FUSED-LABEL: func @two_readers
// FUSED-COUNT-2: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8xf32>, tensor<8xbf16>)
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @two_readers(%g: tensor<8xbf16>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<8xbf16>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %x = arith.extf %a : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%v, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %b, %b : f32
    %x = arith.addf %a, %s : f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  return %m1, %v1 : tensor<8xf32>, tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A reader that elementwise fusion does not take (a matmul) keeps the
// widened buffer whatever happens: nothing is cloned.
// CHECK-LABEL: func @unfusable_reader
// CHECK-COUNT-1: arith.extf
// CHECK-NOT: arith.extf
func.func @unfusable_reader(%g: tensor<4x4xbf16>, %m: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %x = arith.extf %a : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %m1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%m, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %p = linalg.matmul ins(%w, %m : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %p : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A cast that computes more than the cast (here a scale), and a scalar's
// cast, are left alone.
// CHECK-LABEL: func @not_only_a_cast
// CHECK-COUNT-1: arith.extf
// CHECK-NOT: arith.extf
// CHECK-LABEL: func @scalar
// CHECK-COUNT-1: arith.truncf
// CHECK-NOT: arith.truncf
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<() -> ()>
func.func @not_only_a_cast(%g: tensor<8xbf16>, %m: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %c = arith.constant 2.0 : f32
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<8xbf16>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.subf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  return %m1, %m2 : tensor<8xf32>, tensor<8xf32>
}

func.func @scalar(%s: tensor<f64>, %m: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %e = tensor.empty() : tensor<f32>
  %w = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%s : tensor<f64>) outs(%e : tensor<f32>) {
  ^bb0(%a: f64, %o: f32):
    %x = arith.truncf %a : f64 to f32
    linalg.yield %x : f32
  } -> tensor<f32>
  %m1 = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%m, %w : tensor<f32>, tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<f32>
  %m2 = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%m, %w : tensor<f32>, tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.subf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<f32>
  return %m1, %m2 : tensor<f32>, tensor<f32>
}
