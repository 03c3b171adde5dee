// How grid axes land on the hierarchy is part of the plan. The unit cluster
// has 2 nodes ("net", 1 GB/s) of 4 devices ("link", 10 GB/s). Row-major by
// default: the last axis (tp, 4) fills a node and dp (2) crosses nodes.
// With loom.device_order = [0, 1] dp is innermost: it stays inside a node
// and tp spans link:2 x net:2, so tp's all-reduce crosses the slow network.
// RUN: loom-opt %s --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer table=%t.txt" -o /dev/null
// RUN: FileCheck %s --check-prefix=ROWMAJOR < %t.txt
// RUN: sed -e 's/loom.axis_names/loom.device_order = [0, 1], loom.axis_names/' %s | loom-opt --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer table=%t.2.txt" -o /dev/null
// RUN: FileCheck %s --check-prefix=DPINNER < %t.2.txt

// ROWMAJOR: axis dp: net:2
// ROWMAJOR: axis tp: link:4
// The all-reduce of 2048 bytes over tp: ring at 10 GB/s = 0.3072 us.
// ROWMAJOR: all_reduce 1 x 0.002048 MB 0.0003072 ms

// DPINNER: axis dp: link:2
// DPINNER: axis tp: link:2 x net:2
// Now hierarchical: reduce-scatter over 2 on the link (1/2 * 2048 / 10e9 =
// 0.1024 us), all-reduce of the 1024-byte half over the network
// (2 * 1/2 * 1024 / 1e9 = 1.024 us), all-gather on the link (0.1024 us):
// 1.2288 us, four times the in-node ring.
// DPINNER: all_reduce 1 x 0.002048 MB 0.001229 ms

shard.grid @grid(shape = 2x4) {loom.axis_names = ["dp", "tp"]}
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %sx = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %sx : tensor<16x64xf32>
  %w1 = loom.weight parameter "fc1" from "w.bin"[0] : tensor<64x256xf32>
  %w2 = loom.weight parameter "fc2" from "w.bin"[65536] : tensor<256x64xf32>
  %s1 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 annotate_for_users : tensor<64x256xf32>
  %h = loom.matmul %xs, %w1s : tensor<16x64xf32>, tensor<64x256xf32>
  %s2 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 annotate_for_users : tensor<256x64xf32>
  // Keep the batch split into the row-parallel matmul (propagation alone
  // would gather it: it follows the weight's annotation first).
  %sh = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %hs = shard.shard %h to %sh annotate_for_users : tensor<16x256xf32>
  %y = loom.matmul %hs, %w2s : tensor<16x256xf32>, tensor<256x64xf32>
  return %y : tensor<16x64xf32>
}
