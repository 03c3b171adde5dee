// RUN: loom-opt %s --loom-tile-narrow-contractions --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 matmul's 512 x 512 float32 accumulator (1 MiB) is rounded 32 rows
// at a time: the fill and the matmul come into the loop, on a 32 x 512
// accumulator of their own, and the rounding writes each tile into the
// result. The operands' producers stay outside.
// CHECK-LABEL: func @rows
// CHECK-SAME: (%[[A:.+]]: tensor<512x64xbf16>, %[[B:.+]]: tensor<64x512xbf16>)
// CHECK-NOT: linalg.matmul
// CHECK-NOT: tensor<512x512xf32>
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<512x512xbf16>
// CHECK: %[[R:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[OUT]]) -> (tensor<512x512xbf16>) {
// CHECK: %[[AS:.+]] = tensor.extract_slice %[[A]][%[[I]], 0] [32, 64] [1, 1]
// CHECK: %[[T:.+]] = tensor.empty() : tensor<32x512xf32>
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : tensor<32x512xf32>)
// CHECK: %[[M:.+]] = linalg.matmul ins(%[[AS]], %{{.+}} : tensor<32x64xbf16>, tensor<64x512xbf16>) outs(%[[Z]] : tensor<32x512xf32>)
// CHECK: %[[RS:.+]] = linalg.generic {{.*}} ins(%[[M]] : tensor<32x512xf32>)
// CHECK: arith.truncf
// CHECK: tensor.insert_slice %[[RS]] into %[[ACC]][%[[I]], 0] [32, 512] [1, 1]
// CHECK: return %[[R]]
func.func @rows(%a: tensor<512x64xbf16>, %b: tensor<64x512xbf16>) -> tensor<512x512xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<512x64xbf16>, tensor<64x512xbf16>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  %en = tensor.empty() : tensor<512x512xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<512x512xf32>) outs(%en : tensor<512x512xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<512x512xbf16>
  return %r : tensor<512x512xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// 100 rows: a tile takes 25 (the most that divide 100 within 64 KiB), so
// every tile has one static shape.
// CHECK-LABEL: func @rows_that_divide
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[STEP:.+]] iter_args
// CHECK: tensor.empty() : tensor<25x512xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<25x64xbf16>, tensor<64x512xbf16>) outs(%{{.+}} : tensor<25x512xf32>)
func.func @rows_that_divide(%a: tensor<100x64xbf16>, %b: tensor<64x512xbf16>) -> tensor<100x512xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<100x512xf32>) -> tensor<100x512xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<100x64xbf16>, tensor<64x512xbf16>) outs(%z : tensor<100x512xf32>) -> tensor<100x512xf32>
  %en = tensor.empty() : tensor<100x512xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<100x512xf32>) outs(%en : tensor<100x512xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<100x512xbf16>
  return %r : tensor<100x512xbf16>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Batched (attention scores): one batch entry a tile, its 16 rows whole.
// CHECK-LABEL: func @batch
// CHECK: scf.for
// CHECK: tensor.empty() : tensor<1x16x16xf32>
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x16x8xf16>, tensor<1x8x16xf16>) outs(%{{.+}} : tensor<1x16x16xf32>)
// CHECK: arith.truncf
func.func @batch(%q: tensor<8x16x8xf16>, %k: tensor<8x8x16xf16>) -> tensor<8x16x16xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %acc = linalg.batch_matmul ins(%q, %k : tensor<8x16x8xf16>, tensor<8x8x16xf16>) outs(%z : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %en = tensor.empty() : tensor<8x16x16xf16>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%acc : tensor<8x16x16xf32>) outs(%en : tensor<8x16x16xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<8x16x16xf16>
  return %r : tensor<8x16x16xf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Left alone: an accumulator of one tile (16 x 512 floats, 32 KiB); an
// accumulator something else reads too (it stays whole for that reader);
// a float32 matmul, which nothing rounds.
// CHECK-LABEL: func @one_tile
// CHECK-NOT: scf.for
// CHECK-LABEL: func @read_twice
// CHECK-NOT: scf.for
// CHECK-LABEL: func @wide
// CHECK-NOT: scf.for
func.func @one_tile(%a: tensor<16x64xbf16>, %b: tensor<64x512xbf16>) -> tensor<16x512xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x512xf32>) -> tensor<16x512xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<16x64xbf16>, tensor<64x512xbf16>) outs(%z : tensor<16x512xf32>) -> tensor<16x512xf32>
  %en = tensor.empty() : tensor<16x512xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<16x512xf32>) outs(%en : tensor<16x512xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x512xbf16>
  return %r : tensor<16x512xbf16>
}

func.func @read_twice(%a: tensor<512x64xbf16>, %b: tensor<64x512xbf16>) -> (tensor<512x512xbf16>, tensor<512x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<512x64xbf16>, tensor<64x512xbf16>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  %en = tensor.empty() : tensor<512x512xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<512x512xf32>) outs(%en : tensor<512x512xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<512x512xbf16>
  return %r, %acc : tensor<512x512xbf16>, tensor<512x512xf32>
}

func.func @wide(%a: tensor<512x64xf32>, %b: tensor<64x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<512x64xf32>, tensor<64x512xf32>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %acc : tensor<512x512xf32>
}
