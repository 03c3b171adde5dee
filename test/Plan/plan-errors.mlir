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

// A pinned choice is refused, naming the op (pinning is not supported yet).
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{the input already carries a plan here}}
  %y = loom.unary relu %x {loom.stage = 0 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
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
