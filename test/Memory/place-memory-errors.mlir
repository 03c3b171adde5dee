// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-place-memory="table=none"
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="memory-fraction=0" 2>&1 | FileCheck %s --check-prefix=FRACTION
// FRACTION: loom-place-memory: memory-fraction must be in (0, 1], not 0
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="mode=eval" 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: loom-place-memory: mode must be train or infer, not 'eval'
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="cluster=no-such-cluster" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// CLUSTER: no-such-cluster
// RUN: not loom-opt %S/Inputs/mlp6.mlir --loom-place-memory="global-batch=8" 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: loom-place-memory: global-batch 8 makes 2 micro-batches; placement plans a step of one (the IR's batch), so leave global-batch at 0 or the IR's batch

// A partitioned program is refused, not placed as if it were one device.
// expected-error @+1 {{'shard.grid' op spans 2 devices; memory placement plans one device's program (the placement of partitioned programs is not implemented yet)}}
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<8x8xf32>
  %y = loom.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  return %y : tensor<4x8xf32>
}
