// Uses of one weight (the same name, file and offset) become one argument,
// loaded once: they must read it alike, in its type and, for a master copy
// widened from a narrower file, in the file's element type; and hold it
// alike, in its role and its placement's tier and place (where the runtime
// keeps it).
// RUN: not loom-opt %s --split-input-file --loom-weights-to-arguments 2>&1 | FileCheck %s

// CHECK: error: 'loom.weight' op reads weight 'w' as 'tensor<4xf32>' but another use reads it as 'tensor<4xf64>'
func.func @main() -> (tensor<4xf64>, tensor<4xf32>) {
  %a = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf64>
  %b = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  return %a, %b : tensor<4xf64>, tensor<4xf32>
}

// -----

// CHECK: error: 'loom.weight' op reads weight 'w' from its file as 'f32' but another use reads it as 'bf16'
func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.weight state "w" from "w.bin"[0] as bf16 : tensor<4xf32>
  %b = loom.weight state "w" from "w.bin"[0] : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK: error: 'loom.weight' op reads weight 'w' as a state but another use reads it as a parameter
func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.weight parameter "w" from "w.bin"[0] : tensor<4xf32>
  %b = loom.weight state "w" from "w.bin"[0] : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK: error: 'loom.weight' op reads weight 'w' placed in nvme memory but another use reads it placed in host memory
func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "host"}} : tensor<4xf32>
  %b = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {tier = "nvme"}} : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK: error: 'loom.weight' op reads weight 'w' at another place in its arena than another use
func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {offset = 0 : i64, tier = "host"}} : tensor<4xf32>
  %b = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {offset = 256 : i64, tier = "host"}} : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
