#!/usr/bin/env python3
# test/Integration/Inputs/make_weights.py - random weights and inputs for unplanned IR.
"""Usage: make_weights.py MODEL.mlir OUTDIR [--seed N]

bench/model_ir.py and bench/gpt_plan.py write loom IR whose `loom.weight` ops
point at byte offsets of a file that is never written. This writes that file
(each weight's bytes at its offset, relative files under OUTDIR) with
deterministic random values, and one `.npy` per entry input, named by the
input's `loom.name` or its SSA name (`%x` -> x.npy), so the model can be
compiled and run:

  * matrices: normal / sqrt(dim -2) (the fan-in of an [in, out] weight);
  * 1-D weights named like a norm's scale: 1 + 0.1 normal; other 1-D: 0.1 normal;
  * float inputs: standard normal; integer inputs that index an embedding
    (`loom.embedding %table, %arg`, also through `shard.shard`s of the table):
    uniform token ids below the table's first dim (other integer inputs: below 2).
A planned module (`--loom-plan`) of M micro-batches takes M times its batch
(the input's `loom.batch_dim`), as loom-run does. Float weights and inputs
may be f32, f16 or bf16 (bf16 rounded to nearest even from float32; a bf16
input's .npy holds its bit patterns as uint16, which loom-run reads as
bf16); i1 buffers take one byte per element (a square one is a causal mask,
lower triangular); other inputs may be i64 or i32.
"""
import argparse
import os
import re

import numpy as np

VALUE = r"%[A-Za-z0-9_$.\-]+"
WEIGHT_RE = re.compile(r'(' + VALUE + r') = loom\.weight (\w+) "([^"]*)" from "([^"]*)"\[(\d+)\].*: '
                       r'tensor<([^>]*)>')
FUNC_RE = re.compile(r'func\.func (?:public |private )?@main\((.*)\)\s*(->.*)?\{\s*$')
ARG_RE = re.compile(r'(' + VALUE + r'): tensor<([^>]*)>( \{[^}]*\})?')
DTYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32}
FLOATS = ("f32", "f16", "bf16")


def encode(data, dtype):
    """`data` as an array of the float type `dtype` (bf16: its bits)."""
    if dtype == "f16":
        return data.astype(np.float16)
    single = data.astype(np.float32)
    if dtype == "f32":
        return single
    u = single.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def parse_type(body):
    parts = body.split("x")
    return [int(d) for d in parts[:-1]], parts[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    text = open(args.model).read()
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)

    tables = {}  # weight value -> shape
    files = {}   # file -> {offset: bytes}
    for m in WEIGHT_RE.finditer(text):
        value, _, name, path, offset, ty = m.groups()
        shape, dtype = parse_type(ty)
        if os.path.isabs(path):
            raise SystemExit(f"make_weights.py: {name}: absolute weight file {path}")
        if dtype == "i1":
            mask = (np.tril(np.ones(shape, dtype=np.uint8)) if len(shape) == 2 and shape[0] == shape[1]
                    else rng.integers(0, 2, size=shape, dtype=np.uint8))
            files.setdefault(path, {})[int(offset)] = mask.tobytes()
            continue
        if dtype not in FLOATS:
            raise SystemExit(f"make_weights.py: {name}: only float weights ({', '.join(FLOATS)}) "
                             f"and i1 buffers are supported, not {dtype}")
        tables[value] = shape
        if len(shape) >= 2:
            data = rng.standard_normal(shape) / np.sqrt(shape[-2])
        elif re.search(r"(ln|norm|layernorm)[^.]*\.weight$", name):
            data = 1 + 0.1 * rng.standard_normal(shape)
        else:
            data = 0.1 * rng.standard_normal(shape)
        files.setdefault(path, {})[int(offset)] = encode(data, dtype).tobytes()
    for path, chunks in files.items():
        size = max(off + len(b) for off, b in chunks.items())
        blob = bytearray(size)
        for off, b in chunks.items():
            blob[off:off + len(b)] = b
        with open(os.path.join(args.out_dir, path), "wb") as f:
            f.write(blob)

    # A planned module's embedding reads its table and ids through shard.shard
    # ops: look through them.
    source = {}
    for m in re.finditer(r"(" + VALUE + r") = shard\.shard (" + VALUE + r") to", text):
        source[m.group(1)] = source.get(m.group(2), m.group(2))
    vocab = {}  # ids value -> rows of the table it indexes
    for m in re.finditer(r"loom\.embedding (" + VALUE + r"), (" + VALUE + r")", text):
        table, ids = (source.get(v, v) for v in m.groups())
        if table in tables:
            vocab[ids] = tables[table][0]
    line = next(line for line in text.splitlines() if FUNC_RE.search(line))
    func = FUNC_RE.search(line)
    m = re.search(r"loom\.micro_batches = (\d+)", line)
    micro_batches = int(m.group(1)) if m else 1
    for arg in ARG_RE.finditer(func.group(1)):
        value, ty, attrs = arg.group(1), arg.group(2), arg.group(3) or ""
        shape, dtype = parse_type(ty)
        m = re.search(r"loom\.batch_dim = (\d+)", attrs)
        if m:  # a planned step of several micro-batches takes them all at once
            shape[int(m.group(1))] *= micro_batches
        if dtype not in DTYPES and dtype not in FLOATS:
            raise SystemExit(f"make_weights.py: input {value}: unsupported dtype {dtype}")
        m = re.search(r'loom\.name = "([^"]*)"', attrs)
        name = m.group(1) if m else value[1:]
        if dtype in FLOATS:
            data = encode(rng.standard_normal(shape), dtype)
        else:
            data = rng.integers(0, vocab.get(value, 2), size=shape).astype(DTYPES[dtype])
        np.save(os.path.join(args.out_dir, name + ".npy"), data)


if __name__ == "__main__":
    main()
