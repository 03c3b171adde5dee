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

// -----

#id = affine_map<(d0) -> (d0)>

// A narrowing read twice is left alone: a copy before each reader would
// keep its wider input alive until the last of them.
// CHECK-LABEL: func @narrowing
// CHECK-COUNT-1: arith.truncf
// CHECK-NOT: arith.truncf
func.func @narrowing(%g: tensor<8xf32>, %m: tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xbf16>) {
  %e = tensor.empty() : tensor<8xbf16>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<8xf32>) outs(%e : tensor<8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %x = arith.truncf %a : f32 to bf16
    linalg.yield %x : bf16
  } -> tensor<8xbf16>
  %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %w : tensor<8xbf16>, tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %x = arith.addf %a, %b : bf16
    linalg.yield %x : bf16
  } -> tensor<8xbf16>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %w : tensor<8xbf16>, tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %x = arith.subf %a, %b : bf16
    linalg.yield %x : bf16
  } -> tensor<8xbf16>
  return %m1, %m2 : tensor<8xbf16>, tensor<8xbf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Two widenings in a row, the second read twice: the second is copied
// for each reader, then the first for each copy, and fusion folds both
// into each reader.
// CHECK-LABEL: func @chained
// CHECK-COUNT-2: arith.extf %{{.+}} : f16 to f32
// FUSED-LABEL: func @chained
// FUSED-COUNT-2: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8xf64>, tensor<8xf16>)
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @chained(%g: tensor<8xf16>, %m: tensor<8xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %e32 = tensor.empty() : tensor<8xf32>
  %e64 = tensor.empty() : tensor<8xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g : tensor<8xf16>) outs(%e32 : tensor<8xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e64 : tensor<8xf64>) {
  ^bb0(%x: f32, %o: f64):
    %y = arith.extf %x : f32 to f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %m1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %b : tensor<8xf64>, tensor<8xf64>) outs(%e64 : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %z = arith.addf %x, %y : f64
    linalg.yield %z : f64
  } -> tensor<8xf64>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %b : tensor<8xf64>, tensor<8xf64>) outs(%e64 : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %z = arith.subf %x, %y : f64
    linalg.yield %z : f64
  } -> tensor<8xf64>
  return %m1, %m2 : tensor<8xf64>, tensor<8xf64>
}
