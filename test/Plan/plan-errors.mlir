// RUN: loom-opt %s -split-input-file --loom-plan="cluster=dgx-a100-80g table=none" -verify-diagnostics
// RUN: not loom-opt %s -split-input-file --loom-plan="level=quick table=none" 2>&1 | FileCheck %s --check-prefix=LEVEL
// RUN: not loom-opt %s -split-input-file --loom-plan="cluster=nosuch table=none" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not loom-opt %s -split-input-file --loom-plan="schedules=1f1b,zigzag table=none" 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not loom-opt %s -split-input-file --loom-plan="global-batch=7 table=none" 2>&1 | FileCheck %s --check-prefix=BATCH

// LEVEL: loom-plan: level must be fast or thorough, not 'quick'
// CLUSTER: loom-plan: {{.*}}nosuch
// SCHED: loom-plan: unknown value 'zigzag' in schedules=
// BATCH: global-batch=7 is not a multiple of the IR's batch 4

// A plain function: options are checked against it.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = loom.unary relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Pinned stages must follow program order.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = loom.unary relu %x {loom.stage = 1 : i64} : tensor<4x8xf32>
  // expected-error @+1 {{pinned to stage 0 after an op pinned to stage 1}}
  %z = loom.unary relu %y {loom.stage = 0 : i64} : tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{loom.stage must be a non-negative integer}}
  %y = loom.unary relu %x {loom.stage = "first"} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A pin on the pipeline axis is not a sharding.
shard.grid @g(shape = 2x4) {loom.pipeline_axis = 0 : i64}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{a pinned sharding splits a tensor over the pipeline axis 0}}
  %a = shard.shard %x to %s : tensor<4x8xf32>
  %y = loom.unary relu %a : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{pinned grid @g has axis 1 of size ?; every axis must have a static positive size}}
shard.grid @g(shape = 8x?)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = loom.unary relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{pinned grid @g: loom.axis_names must name each of its 2 axes with a string}}
shard.grid @g(shape = 2x4) {loom.axis_names = ["dp"]}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = loom.unary relu %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A sharding over an axis the grid does not have.
shard.grid @g(shape = 8)
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @g split_axes = [[1]] : !shard.sharding
  // expected-error @+1 {{a pinned sharding names grid axis 1, which grid @g does not have}}
  %a = shard.shard %x to %s : tensor<8x8xf32>
  %y = loom.unary relu %a : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// The same value pinned two ways.
shard.grid @g(shape = 8)
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %s0 : tensor<8x8xf32>
  // expected-error @+1 {{value pinned twice with different shardings: [[0]] and [[], [0]]}}
  %b = shard.shard %x to %s1 : tensor<8x8xf32>
  %y = loom.binary add %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// A pinned grid no device count matches.
// expected-error @+1 {{no grid of 8 devices on 'dgx-a100-80g' matches the pinned grid and stages}}
module {
  shard.grid @g(shape = 3)
  func.func @main(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
    %y = loom.unary relu %x : tensor<6x8xf32>
    return %y : tensor<6x8xf32>
  }
}

// -----

// A pinned layout outside the search space: 6 rows do not split 8 ways.
// The error is at the annotation and names what it pins.
module {
  shard.grid @g(shape = 8)
  func.func @main(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
    %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
    // expected-error @+1 {{no strategy of input #0 honours its pinned shardings on any grid (result 0 [[0]])}}
    %a = shard.shard %x to %s : tensor<6x8xf32>
    %y = loom.unary relu %a : tensor<6x8xf32>
    return %y : tensor<6x8xf32>
  }
}

// -----

// Pins each possible alone, impossible together: [[0, 1]] -> [[1], [0]]
// swaps two axes between dimensions, which no partitioner step does.
// expected-error @+1 {{no plan honours the pinned shardings on any grid: each pin alone is possible}}
module {
  shard.grid @g(shape = 2x4)
  func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %rows = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
    %a = shard.shard %x to %rows : tensor<8x8xf32>
    %swapped = shard.sharding @g split_axes = [[1], [0]] : !shard.sharding
    %b = shard.shard %a to %swapped annotate_for_users : tensor<8x8xf32>
    %y = loom.unary relu %b : tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

// expected-error @+1 {{the function has no inputs to take the batch from}}
module {
  func.func @main() -> tensor<4x8xf32> {
    %c = loom.constant dense<1.0> : tensor<4x8xf32>
    %y = loom.unary relu %c : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
