#!/usr/bin/env python3
# test/Integration/Inputs/make_mlp.py - a two-layer MLP under hand-written plans.
"""Writes into OUTDIR: the MLP's weights (w.bin, raw f32), an input x.npy, the
expected output (numpy/torch, fp64 then cast) and one loom-dialect module per
plan, each the same program with different shard annotations:

  single   no grid
  single-micro  the same in 2 micro-batches
  dp       x split on the batch over 4 ranks (weights replicated)
  dp-micro the batch over 2 ranks, in 2 micro-batches
  tp       Megatron: fc1 column-parallel, fc2 row-parallel (one all-reduce), 4 ranks
  dptp     2 x 2 grid: batch over axis 0, Megatron over axis 1
  sp       x split on the sequence over 2 ranks
  gather   fc1 column-parallel, fc2 replicated: an all-gather between them, 2 ranks
  a2a      batch-split input resharded onto the sequence before fc1: all-to-all, 2 ranks
  pp       two pipeline stages (fc1 | gelu, fc2), 2 ranks
  pp-micro the same with 4 micro-batches
  dppp     2 x 2 grid: batch over axis 0, stages over axis 1
  pptp     2 x 2 grid: stages over axis 0, Megatron over axis 1, 2 micro-batches
  dptppp   2 x 2 x 2 grid: batch, Megatron, stages; 2 micro-batches, 8 ranks
  tp2d     2-D tensor parallelism on a 2 x 2 grid: each weight split by rows
           over one axis and by columns over the other, 4 ranks
  tp3d     the same over three axes of 2: rows over two, columns over one, 8 ranks
"""
import os
import sys

import numpy as np

B, S, H, F = 4, 8, 16, 32


def module(grid, x_split, w1_split, w2_split, mid_split=None, pipeline_axis=None,
           stages=None, micro_batches=1):
    """One plan of the MLP. `stages` gives the loom.stage of fc1, gelu and fc2
    (with `pipeline_axis` naming the grid's pipeline axis); with
    `micro_batches` the program computes B / micro_batches samples and the
    runtime feeds it the batch in that many slices."""
    b = B // micro_batches
    x_ty, h_ty, y_ty = (f"tensor<{b}x{S}x{H}xf32>", f"tensor<{b}x{S}x{F}xf32>",
                        f"tensor<{b}x{S}x{H}xf32>")
    lines = []
    if grid:
        pipeline = f" {{loom.pipeline_axis = {pipeline_axis} : i64}}" if stages else ""
        lines.append(f"shard.grid @g(shape = {grid}){pipeline}")
    batch = " loom.batch_dim = 0 : i64," if micro_batches > 1 else ""
    func_attrs = (f" attributes {{loom.micro_batches = {micro_batches} : i64}}"
                  if micro_batches > 1 else "")
    lines.append(f"func.func @main(%x: {x_ty} {{{batch} loom.name = \"x\"}}) "
                 f"-> ({y_ty} {{{batch} loom.name = \"y\"}}){func_attrs} {{")
    lines.append(f'  %w1 = loom.weight parameter "fc1" from "w.bin"[0] : tensor<{H}x{F}xf32>')
    lines.append(f'  %w2 = loom.weight parameter "fc2" from "w.bin"[{H * F * 4}] : tensor<{F}x{H}xf32>')
    x, w1, w2 = "%x", "%w1", "%w2"
    if grid:
        def annotate(name, value, split, ty):
            lines.append(f"  %s_{name} = shard.sharding @g split_axes = {split} : !shard.sharding")
            lines.append(f"  %{name}_s = shard.shard {value} to %s_{name} annotate_for_users : {ty}")
            return f"%{name}_s"
        x = annotate("x", x, x_split, x_ty)
        w1 = annotate("w1", w1, w1_split, f"tensor<{H}x{F}xf32>")
        w2 = annotate("w2", w2, w2_split, f"tensor<{F}x{H}xf32>")
    if grid and mid_split:
        lines.append(f"  %s_mid = shard.sharding @g split_axes = {mid_split} : !shard.sharding")
        lines.append(f"  %xp = shard.shard {x} to %s_x : {x_ty}")
        lines.append(f"  %xm = shard.shard %xp to %s_mid annotate_for_users : {x_ty}")
        x = "%xm"
    at = [f" {{loom.stage = {s} : i64}}" for s in stages] if stages else ["", "", ""]
    lines.append(f"  %h = loom.matmul {x}, {w1}{at[0]} : {x_ty}, tensor<{H}x{F}xf32>")
    lines.append(f"  %g = loom.unary gelu %h{at[1]} : {h_ty}")
    lines.append(f"  %y = loom.matmul %g, {w2}{at[2]} : {h_ty}, tensor<{F}x{H}xf32>")
    lines.append(f"  return %y : {y_ty}")
    lines.append("}")
    return "\n".join(lines) + "\n"


PLANS = {
    "single": module(None, None, None, None),
    "single-micro": module(None, None, None, None, micro_batches=2),
    "dp": module("4", "[[0]]", "[[]]", "[[]]"),
    "dp-micro": module("2", "[[0]]", "[[]]", "[[]]", micro_batches=2),
    "tp": module("4", "[[]]", "[[], [0]]", "[[0]]"),
    "dptp": module("2x2", "[[0]]", "[[], [1]]", "[[1]]"),
    "sp": module("2", "[[], [0]]", "[[]]", "[[]]"),
    "gather": module("2", "[[]]", "[[], [0]]", "[[]]"),
    "a2a": module("2", "[[0]]", "[[]]", "[[]]", mid_split="[[], [0]]"),
    # Pipelines: fc1 on stage 0, gelu and fc2 on stage 1.
    "pp": module("2", "[[]]", "[[]]", "[[]]", pipeline_axis=0, stages=(0, 1, 1)),
    # 4 micro-batches of 1 sample flowing through 2 stages.
    "pp-micro": module("2", "[[]]", "[[]]", "[[]]", pipeline_axis=0, stages=(0, 1, 1),
                       micro_batches=4),
    # dp x pp: each data-parallel replica is a 2-stage pipeline.
    "dppp": module("2x2", "[[0]]", "[[]]", "[[]]", pipeline_axis=1, stages=(0, 0, 1)),
    # pp x tp: the column-parallel fc1 output crosses the stage boundary
    # split over tp, so each rank sends and receives only its shard.
    "pptp": module("2x2", "[[]]", "[[], [1]]", "[[1]]", pipeline_axis=0, stages=(0, 1, 1),
                   micro_batches=2),
    # 8 ranks: dp x tp x pp, 2 micro-batches.
    "dptppp": module("2x2x2", "[[0]]", "[[], [1]]", "[[1]]", pipeline_axis=2,
                     stages=(0, 0, 1), micro_batches=2),
    # fc1's contraction split over axis 0 and its columns over axis 1; fc2
    # the transpose, so fc1's column split is fc2's contraction split.
    "tp2d": module("2x2", "[[], [], [0]]", "[[0], [1]]", "[[1], [0]]"),
    "tp3d": module("2x2x2", "[[], [], [0, 1]]", "[[0, 1], [2]]", "[[2], [0, 1]]"),
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
