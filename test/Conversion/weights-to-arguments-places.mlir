// A weight the static memory plan places keeps its place as an argument:
// `loom.placement`'s `offset` (and a state's `slot` in it,
// --loom-optimizer-step) become the argument's `arena_offset` and
// `arena_slot`, which the manifest turns into a byte offset the runtime
// keeps the weight at. In a pipeline stage function a weight's places are
// one per pipeline device (`pipeline_offsets`); the function takes its own
// device's (`loom.pipeline_stage`), and a device with none leaves the
// weight a buffer of its own.
// RUN: loom-opt %s --split-input-file --loom-weights-to-arguments | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: loom.weight = {arena_offset = 4096 : i64, file = "w.bin", name = "w", offset = 0 : i64, role = "parameter", tier = "host"}
// CHECK-SAME: loom.weight = {arena_offset = 512 : i64, arena_slot = 1 : i64, file = "", name = "w.exp_avg_sq", offset = 0 : i64, role = "state"}
// CHECK-SAME: loom.weight = {file = "", name = "optimizer.step", offset = 0 : i64, role = "state"}
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<f64>) {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {offset = 4096 : i64, tier = "host"}} : tensor<4xf32>
  %v = loom.weight state "w.exp_avg_sq" from ""[0] {loom.placement = {offset = 512 : i64, slot = 1 : i64}} : tensor<4xf32>
  %n = loom.weight state "optimizer.step" from ""[0] : tensor<f64>
  return %w, %v, %n : tensor<4xf32>, tensor<4xf32>, tensor<f64>
}

// -----

// CHECK-LABEL: func.func @main_stage0(
// CHECK-SAME: loom.weight = {arena_offset = 256 : i64, file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}
// CHECK-LABEL: func.func @main_stage1(
// CHECK-SAME: loom.weight = {arena_offset = 768 : i64, file = "w.bin", name = "w", offset = 0 : i64, role = "parameter"}
// CHECK-SAME: loom.weight = {file = "w.bin", name = "u", offset = 16 : i64, role = "parameter"}
func.func @main_stage0() -> tensor<4xf32> attributes {loom.pipeline_stage = 0 : i64} {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {pipeline_offsets = [{device = 0 : i64, offset = 256 : i64}, {device = 1 : i64, offset = 768 : i64}]}} : tensor<4xf32>
  return %w : tensor<4xf32>
}
func.func @main_stage1() -> (tensor<4xf32>, tensor<4xf32>) attributes {loom.pipeline_stage = 1 : i64} {
  %w = loom.weight parameter "w" from "w.bin"[0] {loom.placement = {pipeline_offsets = [{device = 0 : i64, offset = 256 : i64}, {device = 1 : i64, offset = 768 : i64}]}} : tensor<4xf32>
  %u = loom.weight parameter "u" from "w.bin"[16] {loom.placement = {pipeline_offsets = [{device = 0 : i64, offset = 0 : i64}]}} : tensor<4xf32>
  return %w, %u : tensor<4xf32>, tensor<4xf32>
}
