#!/usr/bin/env python3
"""Writes a 16-bit copy of Inputs/mlp6.mlir into OUTDIR: mlp6.mlir (every
f32 tensor bf16 or f16, the weights' offsets halved), its weights (mlp.bin)
and the inputs x.npy and g.npy (the step's input and its output's
cotangent, as 16-bit bit patterns in uint16 arrays, which loom-run reads as
the manifest's 16-bit type).

    mlp6_16bit.py OUTDIR [--type bf16|f16]"""
import argparse
import os
import re

import numpy as np


def to_bits(a, kind):
    a = np.asarray(a, dtype=np.float32)
    if kind == "f16":
        return a.astype(np.float16).view(np.uint16)
    # bf16: round to nearest even from float32's upper half
    u = a.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--type", choices=["bf16", "f16"], default="bf16")
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp6.mlir")).read()
    src = src.replace("xf32>", "x%s>" % a.type)
    src = re.sub(r"\[(\d+)\]", lambda m: "[%d]" % (int(m.group(1)) // 2), src)
    open(os.path.join(a.outdir, "mlp6.mlir"), "w").write(src)
    rng = np.random.RandomState(0)
    w = rng.randn(6 * 512 * 512) * 0.05
    open(os.path.join(a.outdir, "mlp.bin"), "wb").write(to_bits(w, a.type).tobytes())
    np.save(os.path.join(a.outdir, "x.npy"), to_bits(rng.randn(4, 512), a.type))
    np.save(os.path.join(a.outdir, "g.npy"), to_bits(rng.randn(4, 512), a.type))


if __name__ == "__main__":
    main()
