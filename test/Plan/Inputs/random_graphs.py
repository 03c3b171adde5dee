#!/usr/bin/env python3
# test/Plan/Inputs/random_graphs.py - random small loom programs for the
# strategy search's exactness property test.
"""Writes OUTDIR/graph-SEED.mlir for each seed: a random DAG of 2 to 12
loom compute ops over [batch, seq, hidden] activations (matmuls against
weights, activation-by-activation matmuls, residual adds and products,
biases, layer norms, softmaxes, unary ops, transposes), with one or two
results, and OUTDIR/graph-SEED.options holding the --loom-plan options to
run it with: devices (2, 4 or 8), mode, and sometimes a memory fraction
small enough that the memory cap binds. Deterministic per seed."""
import argparse
import os
import random


def graph(seed):
    rng = random.Random(seed)
    batch = rng.choice([4, 8])
    seq = rng.choice([8, 16, 32])
    widths = [16, 32, 48, 64]
    lines = []
    names = iter(range(10**6))
    offset = [0]

    def fresh(prefix="v"):
        return f"%{prefix}{next(names)}"

    def ty(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    def weight(shape):
        name = fresh("w")
        lines.append(f'  {name} = loom.weight parameter "p{name[2:]}" from "g.bin"'
                     f'[{offset[0]}] : {ty(shape)}')
        size = 4
        for d in shape:
            size *= d
        offset[0] += size
        return name

    hidden = rng.choice(widths)
    x = "%x"
    pool = [(x, [batch, seq, hidden])]  # values ops may read
    ops = rng.randint(2, 12)
    for _ in range(ops):
        v, shape = rng.choice(pool[-3:])  # mostly recent values: chains with joins
        kind = rng.choice(["linear", "linear", "bias", "residual", "norm", "unary",
                           "softmax", "scores", "transpose"])
        out = fresh()
        if kind == "linear" and len(shape) == 3:
            n = rng.choice(widths)
            w = weight([shape[2], n])
            lines.append(f"  {out} = loom.matmul {v}, {w} : {ty(shape)}, {ty([shape[2], n])}")
            shape = shape[:2] + [n]
        elif kind == "bias":
            b = weight([shape[-1]])
            lines.append(f"  {out} = loom.binary add {v}, {b} : {ty(shape)}, {ty([shape[-1]])}")
        elif kind == "residual":
            same = [p for p in pool if p[1] == shape and p[0] != v]
            if not same:
                continue
            other = rng.choice(same)[0]
            op = rng.choice(["add", "mul"])
            lines.append(f"  {out} = loom.binary {op} {v}, {other} : {ty(shape)}, {ty(shape)}")
        elif kind == "norm":
            s, b = weight([shape[-1]]), weight([shape[-1]])
            lines.append(f"  {out} = loom.layer_norm {v} scale {s} bias {b} {{axis = "
                         f"{len(shape) - 1} : i64, epsilon = 1.000000e-05 : f64}} : "
                         f"{ty(shape)}, {ty([shape[-1]])}, {ty([shape[-1]])}")
        elif kind == "unary":
            fn = rng.choice(["gelu", "relu", "tanh"])
            lines.append(f"  {out} = loom.unary {fn} {v} : {ty(shape)}")
        elif kind == "softmax":
            lines.append(f"  {out} = loom.softmax {v} {{axis = {len(shape) - 1} : i64}} : "
                         f"{ty(shape)}")
        elif kind == "scores" and len(shape) == 3:
            # [b, s, h] x [b, h, s] -> [b, s, s], as attention's scores.
            t = fresh()
            tshape = [shape[0], shape[2], shape[1]]
            lines.append(f"  {t} = loom.transpose {v} {{permutation = array<i64: 0, 2, 1>}} : "
                         f"{ty(shape)}")
            lines.append(f"  {out} = loom.matmul {v}, {t} : {ty(shape)}, {ty(tshape)}")
            shape = [shape[0], shape[1], shape[1]]
        elif kind == "transpose" and len(shape) == 3:
            lines.append(f"  {out} = loom.transpose {v} {{permutation = array<i64: 0, 2, 1>}} : "
                         f"{ty(shape)}")
            shape = [shape[0], shape[2], shape[1]]
        else:
            continue
        pool.append((out, shape))
    if len(pool) == 1:  # nothing applied: one linear layer
        w = weight([hidden, hidden])
        lines.append(f"  %v = loom.matmul %x, {w} : {ty(pool[0][1])}, {ty([hidden, hidden])}")
        pool.append(("%v", [batch, seq, hidden]))
    results = [pool[-1]]
    if len(pool) > 3 and rng.random() < 0.4:
        results.insert(0, rng.choice(pool[1:-1]))
    header = (f"func.func @main(%x: {ty([batch, seq, hidden])}) -> ("
              + ", ".join(ty(s) for _, s in results) + ") {")
    body = "\n".join(lines)
    ret = ("  return " + ", ".join(v for v, _ in results) + " : "
           + ", ".join(ty(s) for _, s in results))
    text = f"// random graph, seed {seed}\n{header}\n{body}\n{ret}\n}}\n"

    options = [f"devices={rng.choice([2, 4, 8])}",
               f"mode={rng.choice(['train', 'train', 'infer'])}"]
    if rng.random() < 0.3:
        # The graphs hold kilobytes: a fraction of 80 GB around that binds
        # the memory cap on some grids and not on others.
        options.append(f"memory-fraction={10 ** rng.uniform(-8, -6):.3g}")
    return text, " ".join(options)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("outdir")
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--first", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for seed in range(args.first, args.first + args.seeds):
        text, options = graph(seed)
        with open(os.path.join(args.outdir, f"graph-{seed}.mlir"), "w") as f:
            f.write(text)
        with open(os.path.join(args.outdir, f"graph-{seed}.options"), "w") as f:
            f.write(options + "\n")


if __name__ == "__main__":
    main()
