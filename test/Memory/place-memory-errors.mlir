// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-place-memory="table=none"
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="memory-fraction=0" 2>&1 | FileCheck %s --check-prefix=FRACTION
// FRACTION: loom-place-memory: memory-fraction must be in (0, 1], not 0
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="mode=eval" 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: loom-place-memory: mode must be train or infer, not 'eval'
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="cluster=no-such-cluster" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// CLUSTER: no-such-cluster
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="global-batch=6" 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: global-batch=6 is not a multiple of micro-batch x data-parallel = 4
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="zero=0,4" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: loom-place-memory: unknown value '4' in zero= (ZeRO stages 0-3)
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: loom-place-memory: unknown schedule 'zigzag' (gpipe, 1f1b, interleaved, kfkb)
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="schedule=kfkb kfkb-group=0" 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUP: loom-place-memory: kfkb-group must be >= 1, not 0

// A plan whose stages outnumber its pipeline devices needs the interleaved
// schedule; the estimator's error names the function.
shard.grid @g(shape = 2) {loom.axis_names = ["pp"], loom.pipeline_axis = 0 : i64}
// expected-error @+1 {{4 stages on 2 pipeline devices need schedule=interleaved}}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8x8xf32>
  %a = loom.matmul %x, %w {loom.stage = 0 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %b = loom.matmul %a, %w {loom.stage = 1 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %c = loom.matmul %b, %w {loom.stage = 2 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  %d = loom.matmul %c, %w {loom.stage = 3 : i64} : tensor<4x8xf32>, tensor<8x8xf32>
  return %d : tensor<4x8xf32>
}
