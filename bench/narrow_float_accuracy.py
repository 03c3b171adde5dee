#!/usr/bin/env python3
# bench/narrow_float_accuracy.py - how far a bf16 step's outputs and
# gradients are from PyTorch's bf16 autograd and from float64.
"""For each activation of --activations (relu, tanh, gelu, ...: a `loom.unary`
kind that torch has under the same name), writes the bf16 MLP

    y = act(x @ w0) @ w1     x [N, K], w0 and w1 [K, K]

in loom ops, differentiates it (loom-opt --loom-autodiff), compiles it
(loom compile -O 0), runs one step with a cotangent (loom-run), and compares
y and both weight gradients with

  * torch: the same model in bf16 autograd (its matmuls accumulate in float32
    and round once),
  * float64: the same inputs and weights widened, in float64 autograd,

each as max |a - b| / max |float64|, and prints torch's own distance from
float64 beside them, plus how many elements equal torch's. loom-opt, loom
and loom-run are taken from build/bin unless --bin names another directory
(an older build, for a before/after).

  /usr/bin/python3 bench/narrow_float_accuracy.py [--k 64] [--n 64]
                   [--activations relu,tanh] [--bin DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bits(t):
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


def from_bits(a):
    return torch.from_numpy(a.astype(np.uint16).view(np.int16)).view(torch.bfloat16)


def run_case(bindir, act, n, k, workdir):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, k, generator=g).bfloat16()
    w0 = (torch.randn(k, k, generator=g) / k ** 0.5).bfloat16()
    w1 = (torch.randn(k, k, generator=g) / k ** 0.5).bfloat16()
    cot = torch.randn(n, k, generator=g).bfloat16()
    with open(os.path.join(workdir, "model.bin"), "wb") as f:
        f.write(bits(w0).tobytes() + bits(w1).tobytes())
    np.save(os.path.join(workdir, "x.npy"), bits(x))
    np.save(os.path.join(workdir, "cot.npy"), bits(cot))
    T, W = f"tensor<{n}x{k}xbf16>", f"tensor<{k}x{k}xbf16>"
    with open(os.path.join(workdir, "model.mlir"), "w") as f:
        f.write(f"""func.func @main(%x: {T} {{loom.name = "x"}}) -> ({T} {{loom.name = "y"}}) {{
  %w0 = loom.weight parameter "w0" from "model.bin"[0] : {W}
  %w1 = loom.weight parameter "w1" from "model.bin"[{k * k * 2}] : {W}
  %h = loom.matmul %x, %w0 : {T}, {W}
  %a = loom.unary {act} %h : {T}
  %y = loom.matmul %a, %w1 : {T}, {W}
  return %y : {T}
}}
""")
    tool = lambda name: os.path.join(bindir, name)
    for cmd in ([tool("loom-opt"), "model.mlir", "--loom-autodiff", "-o", "step.mlir"],
                [tool("loom"), "compile", "step.mlir", "-o", "art", "-O", "0"]):
        subprocess.run(cmd, cwd=workdir, check=True)
    with open(os.path.join(workdir, "art", "manifest.json")) as f:
        names = [o["name"] for o in json.load(f)["outputs"]]
    subprocess.run([tool("loom-run"), "art", "--inputs", "x.npy,cot.npy", "--outputs",
                    ",".join(nm + ".out.npy" for nm in names), "--quiet", "--steps", "1",
                    "--warmup", "0"], cwd=workdir, check=True)
    f = getattr(torch, act, None) or getattr(torch.nn.functional, act)
    refs = {}
    for dtype in (torch.bfloat16, torch.float64):
        p0 = w0.to(dtype).detach().clone().requires_grad_()
        p1 = w1.to(dtype).detach().clone().requires_grad_()
        y = f(x.to(dtype) @ p0) @ p1
        y.backward(cot.to(dtype))
        refs[dtype] = {"y": y.detach(), "w0.grad": p0.grad, "w1.grad": p1.grad}
    rows = []
    for nm in names:
        got = from_bits(np.load(os.path.join(workdir, nm + ".out.npy"))).double()
        ref = refs[torch.bfloat16][nm].double()
        exact = refs[torch.float64][nm]
        scale = exact.abs().max().item()
        dist = lambda a, b: (a - b).abs().max().item() / scale
        rows.append((act, nm, dist(got, ref), dist(got, exact), dist(ref, exact),
                     int((got == ref).sum()), got.numel()))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--k", type=int, default=64)
    p.add_argument("--activations", default="relu,tanh")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    a = p.parse_args()
    print("| activation | output | Loom vs torch bf16 | Loom vs float64 | torch bf16 vs float64 "
          "| elements equal to torch's |")
    print("|---|---|---|---|---|---|")
    for act in a.activations.split(","):
        with tempfile.TemporaryDirectory(prefix="loom-nf-") as d:
            for act_, nm, lt, lx, tx, same, total in run_case(a.bin, act, a.n, a.k, d):
                print(f"| {act_} | {nm} | {lt:.4f} | {lx:.4f} | {tx:.4f} | {same} of {total} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
