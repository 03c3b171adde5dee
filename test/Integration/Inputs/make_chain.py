#!/usr/bin/env python3
# test/Integration/Inputs/make_chain.py - a residual chain under interleaved
# pipeline plans.
"""Usage: make_chain.py OUTDIR

Writes into OUTDIR a chain of LAYERS residual layers (x + gelu(x @ w_i)), the
last one also adding the first layer's output (a skip connection across
every stage), as one loom module per plan:

  chain-single.mlir   no grid
  chain-pp2x4.mlir    8 stages (layer i at stage i) on a 2-device pipeline
                      axis: 4 virtual stages per device, 4 micro-batches
  chain-pp4x2.mlir    the same on 4 devices, 2 virtual stages each, over a
                      2 x 4 grid whose first axis splits the batch

with w.bin (raw f32 weights) and x.npy. Each message between stages is
MB x S x H floats (256 KiB for a micro-batch), well past MPI's eager limit,
so a schedule that relied on sends completing without their receiver would
deadlock.
"""
import os
import sys

import numpy as np

LAYERS, B, S, H = 8, 8, 128, 256


def module(grid=None, pipeline_axis=None, batch_axis=None, micro_batches=1):
    b = B // micro_batches
    ty = f"tensor<{b}x{S}x{H}xf32>"
    wty = f"tensor<{H}x{H}xf32>"
    lines = []
    if grid:
        lines.append(f"shard.grid @g(shape = {grid}) "
                     f"{{loom.pipeline_axis = {pipeline_axis} : i64}}")
    batch = " loom.batch_dim = 0 : i64," if micro_batches > 1 else ""
    attrs = (f" attributes {{loom.micro_batches = {micro_batches} : i64}}"
             if micro_batches > 1 else "")
    lines.append(f"func.func @main(%x: {ty} {{{batch} loom.name = \"x\"}}) "
                 f"-> ({ty} {{{batch} loom.name = \"y\"}}){attrs} {{")
    x = "%x"
    if grid and batch_axis is not None:
        lines.append(f"  %sx = shard.sharding @g split_axes = [[{batch_axis}]] "
                     ": !shard.sharding")
        lines.append(f"  %xs = shard.shard %x to %sx annotate_for_users : {ty}")
        x = "%xs"
    first = None
    for i in range(LAYERS):
        st = f" {{loom.stage = {i} : i64}}" if grid else ""
        lines.append(f'  %w{i} = loom.weight parameter "w{i}" from "w.bin"'
                     f"[{i * H * H * 4}] : {wty}")
        lines.append(f"  %m{i} = loom.matmul {x}, %w{i}{st} : {ty}, {wty}")
        lines.append(f"  %g{i} = loom.unary gelu %m{i}{st} : {ty}")
        lines.append(f"  %r{i} = loom.binary add {x}, %g{i}{st} : {ty}, {ty}")
        x = f"%r{i}"
        if i == 0:
            first = x
        if i == LAYERS - 1:
            lines.append(f"  %y = loom.binary add {x}, {first}{st} : {ty}, {ty}")
            x = "%y"
    lines.append(f"  return {x} : {ty}")
    lines.append("}")
    return "\n".join(lines) + "\n"


PLANS = {
    "single": module(),
    "pp2x4": module("2", pipeline_axis=0, micro_batches=4),
    "pp4x2": module("2x4", pipeline_axis=1, batch_axis=0, micro_batches=4),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    w = rng.standard_normal((LAYERS, H, H), dtype=np.float32) / (4 * np.sqrt(H))
    w.tofile(os.path.join(out, "w.bin"))
    np.save(os.path.join(out, "x.npy"), rng.standard_normal((B, S, H), dtype=np.float32))
    for name, text in PLANS.items():
        with open(os.path.join(out, f"chain-{name}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
