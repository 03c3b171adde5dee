// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=1 table=none report=%t1.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=ZERO1 < %t1.json
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json zero=3 table=none report=%t3.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=ZERO3 < %t3.json

// ZeRO shards each parameter over its own replicas, the devices its
// gradient is all-reduced over, not over one data-parallel size. On a
// dp=2 x ep=2 grid (both data axes, so data_parallel is 4):
//   "dense" (64x64 f32, replicated) reads the batch split over both axes;
//   its gradient is all-reduced over dp and ep: 4 replicas.
//   "expert" (64x64 f32) has its columns split over ep, like an expert
//   weight split by expert, and reads the batch split over dp only; its
//   gradient is all-reduced over dp: 2 replicas, 2048 local parameters.
// Adam state of f32 parameters is two f32 moments, 8 bytes per parameter:
//   ZeRO-1: 4096 * 8 / 4 + 2048 * 8 / 2 = 8192 + 8192 = 16384 bytes
//   (dividing both by 4 would give 12288, too little for the expert).
// ZeRO-3 also shards the parameters and (ZeRO-2) the gradients:
//   16384 / 4 + 8192 / 2 = 8192 bytes each.

// ZERO1: "data_parallel": 4,
// ZERO1: "gradients": 24576,
// ZERO1-NEXT: "optimizer": 16384,
// ZERO1: "weights": 24576

// ZERO3: "gradients": 8192,
// ZERO3-NEXT: "optimizer": 16384,
// ZERO3: "weights": 8192

shard.grid @grid(shape = 2x2) {loom.axis_names = ["dp", "ep"], loom.data_axes = [0, 1]}
func.func @main(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %both = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %dp = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %xs = shard.shard %x to %both : tensor<32x64xf32>
  %dense = loom.weight parameter "dense" from "w.bin"[0] : tensor<64x64xf32>
  %h = loom.matmul %xs, %dense : tensor<32x64xf32>, tensor<64x64xf32>
  %hs = shard.shard %h to %both : tensor<32x64xf32>
  %hd = shard.shard %hs to %dp annotate_for_users : tensor<32x64xf32>
  %expert = loom.weight parameter "expert" from "w.bin"[16384] : tensor<64x64xf32>
  %es = shard.shard %expert to %cols annotate_for_users : tensor<64x64xf32>
  %y = loom.matmul %hd, %es : tensor<32x64xf32>, tensor<64x64xf32>
  return %y : tensor<32x64xf32>
}
