#!/usr/bin/env python3
# test/Integration/Inputs/make_mlp.py - a two-layer MLP under hand-written plans.
"""Writes into OUTDIR: the MLP's weights (w.bin, raw f32), an input x.npy, the
expected output (numpy/torch, fp64 then cast) and one loom-dialect module per
plan, each the same program with different shard annotations:

  single   no grid
  dp       x split on the batch over 4 ranks (weights replicated)
  tp       Megatron: fc1 column-parallel, fc2 row-parallel (one all-reduce), 4 ranks
  dptp     2 x 2 grid: batch over axis 0, Megatron over axis 1
  sp       x split on the sequence over 2 ranks
  gather   fc1 column-parallel, fc2 replicated: an all-gather between them, 2 ranks
  a2a      batch-split input resharded onto the sequence before fc1: all-to-all, 2 ranks
"""
import os
import sys

import numpy as np

B, S, H, F = 4, 8, 16, 32


def module(grid, x_split, w1_split, w2_split, mid_split=None):
    lines = []
    if grid:
        lines.append(f"shard.grid @g(shape = {grid})")
    lines.append(f"func.func @main(%x: tensor<{B}x{S}x{H}xf32> {{loom.name = \"x\"}}) "
                 f"-> (tensor<{B}x{S}x{H}xf32> {{loom.name = \"y\"}}) {{")
    lines.append(f'  %w1 = loom.weight parameter "fc1" from "w.bin"[0] : tensor<{H}x{F}xf32>')
    lines.append(f'  %w2 = loom.weight parameter "fc2" from "w.bin"[{H * F * 4}] : tensor<{F}x{H}xf32>')
    x, w1, w2 = "%x", "%w1", "%w2"
    if grid:
        def annotate(name, value, split, ty):
            lines.append(f"  %s_{name} = shard.sharding @g split_axes = {split} : !shard.sharding")
            lines.append(f"  %{name}_s = shard.shard {value} to %s_{name} annotate_for_users : {ty}")
            return f"%{name}_s"
        x = annotate("x", x, x_split, f"tensor<{B}x{S}x{H}xf32>")
        w1 = annotate("w1", w1, w1_split, f"tensor<{H}x{F}xf32>")
        w2 = annotate("w2", w2, w2_split, f"tensor<{F}x{H}xf32>")
    if grid and mid_split:
        lines.append(f"  %s_mid = shard.sharding @g split_axes = {mid_split} : !shard.sharding")
        lines.append(f"  %xp = shard.shard {x} to %s_x : tensor<{B}x{S}x{H}xf32>")
        lines.append(f"  %xm = shard.shard %xp to %s_mid annotate_for_users : tensor<{B}x{S}x{H}xf32>")
        x = "%xm"
    lines.append(f"  %h = loom.matmul {x}, {w1} : tensor<{B}x{S}x{H}xf32>, tensor<{H}x{F}xf32>")
    lines.append(f"  %g = loom.unary gelu %h : tensor<{B}x{S}x{F}xf32>")
    lines.append(f"  %y = loom.matmul %g, {w2} : tensor<{B}x{S}x{F}xf32>, tensor<{F}x{H}xf32>")
    lines.append(f"  return %y : tensor<{B}x{S}x{H}xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


PLANS = {
    "single": module(None, None, None, None),
    "dp": module("4", "[[0]]", "[[]]", "[[]]"),
    "tp": module("4", "[[]]", "[[], [0]]", "[[0]]"),
    "dptp": module("2x2", "[[0]]", "[[], [1]]", "[[1]]"),
    "sp": module("2", "[[], [0]]", "[[]]", "[[]]"),
    "gather": module("2", "[[]]", "[[], [0]]", "[[]]"),
    "a2a": module("2", "[[0]]", "[[]]", "[[]]", mid_split="[[], [0]]"),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((H, F), dtype=np.float32) / 4
    w2 = rng.standard_normal((F, H), dtype=np.float32) / 4
    x = rng.standard_normal((B, S, H), dtype=np.float32)
    with open(os.path.join(out, "w.bin"), "wb") as f:
        f.write(w1.tobytes() + w2.tobytes())
    np.save(os.path.join(out, "x.npy"), x)
    import math
    h = x.astype(np.float64) @ w1.astype(np.float64)
    erf = np.vectorize(math.erf)
    g = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    np.save(os.path.join(out, "expected.npy"), (g @ w2.astype(np.float64)).astype(np.float32))
    for name, text in PLANS.items():
        with open(os.path.join(out, f"mlp-{name}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
