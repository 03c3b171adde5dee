// RUN: loom-opt %s --loom-fold-into-contractions --split-input-file --allow-unregistered-dialect --mlir-print-local-scope | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// The backward's dX = dY W^T reads W through the matmul's maps; the
// transpose goes.
// CHECK-LABEL: func @transposed_rhs
// CHECK-SAME: (%[[DY:.+]]: tensor<2x8xf32>, %[[W:.+]]: tensor<4x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%[[DY]], %[[W]] : tensor<2x8xf32>, tensor<4x8xf32>)
func.func @transposed_rhs(%dy: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = linalg.matmul ins(%dy, %t : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// The weight gradient dW = X^T dY, added into its sum: the matmul reads X
// through its maps and accumulates into the sum where it stood; no fill,
// no add.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @gradient_into_sum
// CHECK-SAME: (%[[SUM:[^:]+]]: tensor<4x8xf32>, %[[X:[^:]+]]: tensor<2x4xf32>, %[[DY:[^:]+]]: tensor<2x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.+]] = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%[[X]], %[[DY]] : tensor<2x4xf32>, tensor<2x8xf32>) outs(%[[SUM]] : tensor<4x8xf32>)
// CHECK: %[[L:.+]] = "test.later"
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]], %[[L]]
func.func @gradient_into_sum(%sum: tensor<4x8xf32>, %x: tensor<2x4xf32>, %dy: tensor<2x8xf32>) -> (tensor<4x8xf32>, i1) {
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = linalg.matmul ins(%t, %dy : tensor<4x2xf32>, tensor<2x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %later = "test.later"() : () -> i1
  %e3 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %q, %p : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %s, %later : tensor<4x8xf32>, i1
}

// -----

// A batched contraction: its operand's last two dims transposed, and the
// sum added in first position.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @batched
// CHECK-SAME: (%[[SUM:[^:]+]]: tensor<3x2x4xf32>, %[[A:[^:]+]]: tensor<3x2x5xf32>, %[[B:[^:]+]]: tensor<3x4x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[R:.+]] = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%[[A]], %[[B]] : tensor<3x2x5xf32>, tensor<3x4x5xf32>) outs(%[[SUM]] : tensor<3x2x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @batched(%sum: tensor<3x2x4xf32>, %a: tensor<3x2x5xf32>, %b: tensor<3x4x5xf32>) -> tensor<3x2x4xf32> {
  %e = tensor.empty() : tensor<3x5x4xf32>
  %t = linalg.transpose ins(%b : tensor<3x4x5xf32>) outs(%e : tensor<3x5x4xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<3x2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %g = linalg.batch_matmul ins(%a, %t : tensor<3x2x5xf32>, tensor<3x5x4xf32>) outs(%z : tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %e3 = tensor.empty() : tensor<3x2x4xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum, %g : tensor<3x2x4xf32>, tensor<3x2x4xf32>) outs(%e3 : tensor<3x2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<3x2x4xf32>
  return %s : tensor<3x2x4xf32>
}

// -----

// A batched matmul's left operand transposed (attention's dV = P^T dO).
// CHECK-LABEL: func @batched_lhs
// CHECK-SAME: (%[[P:[^:]+]]: tensor<3x4x2xf32>, %[[DO:[^:]+]]: tensor<3x4x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%[[P]], %[[DO]] : tensor<3x4x2xf32>, tensor<3x4x5xf32>)
func.func @batched_lhs(%p: tensor<3x4x2xf32>, %do: tensor<3x4x5xf32>) -> tensor<3x2x5xf32> {
  %e = tensor.empty() : tensor<3x2x4xf32>
  %t = linalg.transpose ins(%p : tensor<3x4x2xf32>) outs(%e : tensor<3x2x4xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<3x2x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
  %g = linalg.batch_matmul ins(%t, %do : tensor<3x2x4xf32>, tensor<3x4x5xf32>) outs(%z : tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
  return %g : tensor<3x2x5xf32>
}

// -----

// Attention's backward: a 4-D batched matmul, which the lowering collapses
// to rank 3, of a transposed operand. Its operand is collapsed instead,
// and read through the maps; one transpose that two matmuls read goes once.
// CHECK-LABEL: func @collapsed
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x3x4x5xf32>, %[[K:[^:]+]]: tensor<2x3x6x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[KC:.+]] = tensor.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x6x5xf32> into tensor<6x6x5xf32>
// CHECK: linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%{{.+}}, %[[KC]] : tensor<6x4x5xf32>, tensor<6x6x5xf32>)
// CHECK: linalg.batch_matmul indexing_maps
func.func @collapsed(%q: tensor<2x3x4x5xf32>, %k: tensor<2x3x6x5xf32>) -> (tensor<6x4x6xf32>, tensor<6x4x6xf32>) {
  %e = tensor.empty() : tensor<2x3x5x6xf32>
  %t = linalg.transpose ins(%k : tensor<2x3x6x5xf32>) outs(%e : tensor<2x3x5x6xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %t3 = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x5x6xf32> into tensor<6x5x6xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<6x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  %s = linalg.batch_matmul ins(%q3, %t3 : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs(%z : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  %s2 = linalg.batch_matmul ins(%q3, %t3 : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs(%z : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  return %s, %s2 : tensor<6x4x6xf32>, tensor<6x4x6xf32>
}

// -----

// Left alone: a transpose another op reads too stays for it (the matmul
// still folds it); a gradient also returned (keep-gradients); a sum the
// step computes; a broadcast add; a fill two matmuls share; a sum made
// after the matmul; an add of a matmul into a nonzero init; a multiply; a
// collapse merging a transposed dim; a transpose of other dims.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @kept
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK: linalg.matmul indexing_maps
// CHECK: linalg.generic
// CHECK: return %[[T]],
func.func @kept(%sum: tensor<2x4xf32>, %dy: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %t : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %t, %g, %s : tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A sum the step computes may be planned: left alone.
// CHECK-LABEL: func @sum_computed
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @sum_computed(%dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %sum = "test.sum"() : () -> tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// A broadcast add (a bias) is no accumulation into the matmul's result.
// CHECK-LABEL: func @broadcast
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d1)>
func.func @broadcast(%bias: tensor<4xf32>, %dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%bias, %g : tensor<4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// A zero fill two matmuls share stays theirs.
// CHECK-LABEL: func @shared_fill
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @shared_fill(%sum: tensor<2x4xf32>, %dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s, %h : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func @sum_after
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: "test.sum"
// CHECK: linalg.generic
func.func @sum_after(%dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = "test.sum"() : () -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// CHECK-LABEL: func @nonzero_init
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @nonzero_init(%sum: tensor<2x4xf32>, %dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %one = arith.constant 1.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%one : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// CHECK-LABEL: func @multiply
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @multiply(%sum: tensor<2x4xf32>, %dy: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%dy, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum, %g : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %v = arith.mulf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// A collapse that merges a transposed dim does not commute with it.
// CHECK-LABEL: func @merged_dims
// CHECK: linalg.transpose
// CHECK: tensor.collapse_shape
// CHECK: linalg.matmul ins
func.func @merged_dims(%a: tensor<2x6xf32>, %b: tensor<3x4x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<3x2x4xf32>
  %t = linalg.transpose ins(%b : tensor<3x4x2xf32>) outs(%e : tensor<3x2x4xf32>) permutation = [0, 2, 1]
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x2x4xf32> into tensor<6x4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.matmul ins(%a, %c : tensor<2x6xf32>, tensor<6x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = tensor.extract_slice %g[0, 0] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// CHECK-LABEL: func @other_dims
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins
func.func @other_dims(%a: tensor<3x2x5xf32>, %b: tensor<5x3x4xf32>) -> tensor<3x2x4xf32> {
  %e = tensor.empty() : tensor<3x5x4xf32>
  %t = linalg.transpose ins(%b : tensor<5x3x4xf32>) outs(%e : tensor<3x5x4xf32>) permutation = [1, 0, 2]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<3x2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %g = linalg.batch_matmul ins(%a, %t : tensor<3x2x5xf32>, tensor<3x5x4xf32>) outs(%z : tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  return %g : tensor<3x2x4xf32>
}
