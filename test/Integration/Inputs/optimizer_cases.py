#!/usr/bin/env python3
# test/Integration/Inputs/optimizer_cases.py - the optimizer step in the IR
# against torch.optim, in float64.
"""Usage: optimizer_cases.py OUTDIR [--steps N] [--only NAME,...]

For every case (an optimizer and its hyperparameters), in OUTDIR/NAME:
writes a float64 two-layer perceptron in loom ops (x[4,8] -> matmul w1
[8,16] + b1 -> tanh -> gated by g[16] > 0.5 -> matmul w2[16,3] -> y, its
weights in mlp.bin), then

  loom-opt mlp.mlir --loom-autodiff
           --loom-optimizer-step="<the case's options> keep-gradients=true"
  loom compile step.mlir -o art -O 0
  loom-run art --inputs x.npy,cot.npy --steps N --warmup 0

so the outputs are the N-th call's: y and the gradients, computed from the
weights the N - 1 updates before it wrote back. PyTorch trains the same
model N steps with the same torch.optim optimizer (loss = sum(y * cot)), in
float64, and each output must agree within rtol 1e-9, atol 1e-12. The gate
g reaches y only through a comparison, so it has no gradient: torch.optim
skips it (its .grad is None), and so must Loom's step, though some of g
lie just above 0.5, where the weight decay of three updates would close
their gates. Prints
"NAME: OK" or what differs per case, then "<n> of <m> cases match"; exits 1
if any differs. loom-opt, loom and loom-run are found on PATH.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

CASES = {
    "sgd": ("kind=sgd lr=0.1", dict(kind="sgd", lr=0.1)),
    "sgd_momentum_decay": ("kind=sgd lr=0.05 momentum=0.9 weight-decay=0.01",
                           dict(kind="sgd", lr=0.05, momentum=0.9, weight_decay=0.01)),
    "adam": ("kind=adam lr=0.01", dict(kind="adam", lr=0.01)),
    "adam_l2": ("kind=adam lr=0.01 weight-decay=0.1 beta1=0.8 beta2=0.99 eps=1e-6",
                dict(kind="adam", lr=0.01, weight_decay=0.1, betas=(0.8, 0.99), eps=1e-6)),
    "adamw": ("kind=adamw lr=0.01 weight-decay=0.1",
              dict(kind="adamw", lr=0.01, weight_decay=0.1)),
}
SHAPES = {"w1": (8, 16), "b1": (16,), "w2": (16, 3), "g": (16,)}
GATE = np.array([0.501, 0.3] * 8)
RTOL, ATOL = 1e-9, 1e-12

MLIR = """func.func @main(%x: tensor<4x8xf64> {{loom.name = "x"}}) -> (tensor<4x3xf64> {{loom.name = "y"}}) {{
  %w1 = loom.weight parameter "w1" from "mlp.bin"[{w1}] : tensor<8x16xf64>
  %b1 = loom.weight parameter "b1" from "mlp.bin"[{b1}] : tensor<16xf64>
  %w2 = loom.weight parameter "w2" from "mlp.bin"[{w2}] : tensor<16x3xf64>
  %h = loom.matmul %x, %w1 : tensor<4x8xf64>, tensor<8x16xf64>
  %hb = loom.binary add %h, %b1 : tensor<4x16xf64>, tensor<16xf64>
  %t = loom.unary tanh %hb : tensor<4x16xf64>
  %g = loom.weight parameter "g" from "mlp.bin"[{g}] : tensor<16xf64>
  %half = loom.constant dense<0.5> : tensor<f64>
  %open = loom.compare gt %g, %half : tensor<16xf64>, tensor<f64>
  %zero = loom.constant dense<0.0> : tensor<f64>
  %a = loom.where %open, %t, %zero : tensor<16xi1>, tensor<4x16xf64>, tensor<f64>
  %y = loom.matmul %a, %w2 : tensor<4x16xf64>, tensor<16x3xf64>
  return %y : tensor<4x3xf64>
}}
"""


def reference(weights, x, cot, options, steps):
    """y and the gradients of the `steps`-th step, trained by torch.optim."""
    import torch
    params = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in weights.items()}
    kind = options.pop("kind")
    make = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind]
    if kind == "adamw":
        options.setdefault("weight_decay", 0.0)  # torch's default is 0.01, Loom's 0
    optimizer = make(list(params.values()), **options)
    xt, ct = torch.tensor(x), torch.tensor(cot)
    for step in range(steps):
        if step:
            optimizer.step()
        optimizer.zero_grad()
        t = torch.tanh(xt @ params["w1"] + params["b1"])
        y = torch.where(params["g"] > 0.5, t, torch.zeros((), dtype=torch.float64)) @ params["w2"]
        (y * ct).sum().backward()
    out = {"y": y.detach().numpy()}
    out.update({n + ".grad": p.grad.numpy() if p.grad is not None else np.zeros(p.shape)
                for n, p in params.items()})
    return out


def run_case(outdir, name, flags, options, steps):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(11)
    weights, offsets, blob = {}, {}, bytearray()
    for n, shape in SHAPES.items():
        weights[n] = GATE if n == "g" else rng.standard_normal(shape) * 0.5
        offsets[n] = len(blob)
        blob += weights[n].astype("<f8").tobytes()
    with open(os.path.join(d, "mlp.bin"), "wb") as f:
        f.write(bytes(blob))
    with open(os.path.join(d, "mlp.mlir"), "w") as f:
        f.write(MLIR.format(**offsets))
    x = rng.standard_normal((4, 8))
    cot = rng.standard_normal((4, 3))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "cot.npy"), cot)
    names = ["y"] + [n + ".grad" for n in SHAPES]
    commands = [
        ["loom-opt", "mlp.mlir", "--loom-autodiff",
         f"--loom-optimizer-step={flags} keep-gradients=true", "-o", "step.mlir"],
        ["loom", "compile", "step.mlir", "-o", "art", "-O", "0"],
        ["loom-run", "art", "--inputs", "x.npy,cot.npy", "--steps", str(steps), "--warmup", "0",
         "--quiet", "--outputs", ",".join(n + ".npy" for n in names)],
    ]
    for cmd in commands:
        p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            return f"{cmd[0]} failed (exit {p.returncode}): {p.stdout.strip()}"
    want = reference(weights, x, cot, dict(options), steps)
    for n in names:
        got = np.load(os.path.join(d, n + ".npy"))
        diff = np.abs(got - want[n])
        bad = ~(diff <= ATOL + RTOL * np.abs(want[n]))
        if bad.any():
            at = np.unravel_index(np.argmax(np.where(bad, diff, -1)), diff.shape)
            return f"{n} differs at {list(at)}: {got[at]!r} vs {want[n][at]!r}"
    return None


def run_cases(cases, run, parser):
    """Parses OUTDIR and --only NAME,... (besides what `parser` has), runs
    run(args, name) for each case named (all of `cases` by default), which
    returns what differs or None, and a note for a match; prints a line per
    case and "<n> of <m> cases match". Returns the exit status."""
    parser.add_argument("outdir")
    parser.add_argument("--only")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(cases)
    unknown = [n for n in names if n not in cases]
    if unknown:
        parser.error(f"unknown cases {unknown} (have: {', '.join(cases)})")
    failed = 0
    for name in names:
        error, note = run(args, name)
        print(f"{name}: {error or 'OK' + note}")
        failed += error is not None
    print(f"{len(names) - failed} of {len(names)} cases match")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4)
    return run_cases(
        CASES, lambda args, name: (run_case(args.outdir, name, *CASES[name], args.steps), ""), p)


if __name__ == "__main__":
    sys.exit(main())
