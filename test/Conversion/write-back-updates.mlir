// RUN: loom-opt %s -split-input-file --loom-write-back-updates -verify-diagnostics | FileCheck %s

// Each result marked loom.updates is materialized into its weight argument
// (now writable) just before the return, and is no longer returned; the
// other results stay.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4xf32>, %[[W:.+]]: tensor<4xf32> {bufferization.writable = true, loom.weight = {file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}}, %[[M:.+]]: tensor<4xf32> {bufferization.writable = true, loom.weight = {file = "", name = "w.momentum_buffer", offset = 0 : i64, role = "state"}})
// CHECK-SAME: -> (tensor<4xf32> {loom.name = "y"})
// CHECK: %[[Y:.+]] = arith.addf
// CHECK: %[[B1:.+]] = arith.mulf
// CHECK: %[[W1:.+]] = arith.subf
// CHECK-NEXT: bufferization.materialize_in_destination %[[B1]] in %[[M]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[W1]] in %[[W]]
// CHECK-NEXT: return %[[Y]] : tensor<4xf32>
func.func @main(%x: tensor<4xf32>,
                %w: tensor<4xf32> {bufferization.writable = false, loom.weight = {file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}},
                %m: tensor<4xf32> {bufferization.writable = false, loom.weight = {file = "", name = "w.momentum_buffer", offset = 0 : i64, role = "state"}})
    -> (tensor<4xf32> {loom.name = "y"}, tensor<4xf32> {loom.updates = "w.momentum_buffer"}, tensor<4xf32> {loom.updates = "w"}) {
  %y = arith.addf %x, %w : tensor<4xf32>
  %b = arith.mulf %m, %x : tensor<4xf32>
  %w1 = arith.subf %w, %b : tensor<4xf32>
  return %y, %b, %w1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 updates weight 'v', which is no weight argument of the entry}}
func.func @main(%w: tensor<4xf32> {loom.weight = {file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}})
    -> (tensor<4xf32> {loom.updates = "v"}) {
  return %w : tensor<4xf32>
}

// -----

// A rank must write back exactly the slice it holds.
// expected-error @+1 {{'func.func' op result #0 updates weight 'w' of type 'tensor<4xf32>' with a value of type 'tensor<8xf32>'; a rank must write back the slice it holds}}
func.func @main(%w: tensor<4xf32> {loom.weight = {file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}}, %u: tensor<8xf32>)
    -> (tensor<8xf32> {loom.updates = "w"}) {
  return %u : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #1 updates weight 'w', which an earlier result updates too}}
func.func @main(%w: tensor<4xf32> {loom.weight = {file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}})
    -> (tensor<4xf32> {loom.updates = "w"}, tensor<4xf32> {loom.updates = "w"}) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}
