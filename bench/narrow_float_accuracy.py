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

With --model gpt2, the model is instead the model zoo's GPT-2 tiny
(tools/export/models.py: 2 layers, width 64, vocabulary 256, 32 tokens),
exported to ONNX and imported (make_models.py, loom-translate), its types
and weights turned into bf16 (weights rounded to nearest even, as
torch's .to(torch.bfloat16)); torch runs the zoo model with the same bf16
weights. It prints the same columns for the logits and, over the 28 weight
gradients, the largest and the median distance.
"""
import argparse
import json
import os
import re
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


def run_step(bindir, workdir, inputs):
    """Differentiates, compiles and runs workdir/model.mlir once on `inputs`
    (.npy names); returns its outputs' names (each in NAME.out.npy)."""
    tool = lambda name: os.path.join(bindir, name)
    for cmd in ([tool("loom-opt"), "model.mlir", "--loom-autodiff", "-o", "step.mlir"],
                [tool("loom"), "compile", "step.mlir", "-o", "art", "-O", "0"]):
        subprocess.run(cmd, cwd=workdir, check=True)
    with open(os.path.join(workdir, "art", "manifest.json")) as f:
        names = [o["name"] for o in json.load(f)["outputs"]]
    subprocess.run([tool("loom-run"), "art", "--inputs", ",".join(inputs), "--outputs",
                    ",".join(nm + ".out.npy" for nm in names), "--quiet", "--steps", "1",
                    "--warmup", "0"], cwd=workdir, check=True)
    return names


def compare(workdir, names, refs):
    """Per output: (Loom vs torch bf16, Loom vs float64, torch bf16 vs
    float64, elements equal to torch's, elements), the distances as max
    |difference| over max |float64 value|; `refs` maps torch.bfloat16 and
    torch.float64 to each output's reference."""
    rows = {}
    for nm in names:
        got = from_bits(np.load(os.path.join(workdir, nm + ".out.npy"))).double()
        ref, exact = refs[torch.bfloat16][nm].double(), refs[torch.float64][nm].double()
        scale = exact.abs().max().item()
        dist = lambda a, b: (a - b).abs().max().item() / scale
        rows[nm] = (dist(got, ref), dist(got, exact), dist(ref, exact),
                    int((got == ref).sum()), got.numel())
    return rows


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
    names = run_step(bindir, workdir, ["x.npy", "cot.npy"])
    f = getattr(torch, act, None) or getattr(torch.nn.functional, act)
    refs = {}
    for dtype in (torch.bfloat16, torch.float64):
        p0 = w0.to(dtype).detach().clone().requires_grad_()
        p1 = w1.to(dtype).detach().clone().requires_grad_()
        y = f(x.to(dtype) @ p0) @ p1
        y.backward(cot.to(dtype))
        refs[dtype] = {"y": y.detach(), "w0.grad": p0.grad, "w1.grad": p1.grad}
    rows = compare(workdir, names, refs)
    return [(act, nm) + r for nm, r in rows.items()], rows


def to_bf16_bits(a):
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_module(src, workdir):
    """The imported float32 module `src` in bf16: every f32 type bf16, each
    weight's bytes (read from the file the import points into) rounded into
    w16.bin. Returns the module's text and the float32 weights by name."""
    weight = re.compile(r'loom\.weight parameter "([^"]+)" from "([^"]+)"\[(\d+)\] : tensor<([0-9x]+)xf32>')
    blob, weights = bytearray(), {}

    def rewrite(m):
        name, path, offset, dims = m.groups()
        shape = [int(d) for d in dims.split("x")]
        count = int(np.prod(shape))
        with open(os.path.join(workdir, path), "rb") as f:
            f.seek(int(offset))
            weights[name] = np.frombuffer(f.read(4 * count), dtype="<f4").reshape(shape)
        at = len(blob)
        blob.extend(to_bf16_bits(weights[name]).tobytes())
        return f'loom.weight parameter "{name}" from "w16.bin"[{at}] : tensor<{dims}xf32>'

    text = weight.sub(rewrite, src)
    # A hex float32 constant (-inf) becomes its bf16 bits.
    text = re.sub(r"dense<0x([0-9A-Fa-f]{8})> : tensor<([0-9x]*)f32>",
                  lambda m: "dense<0x%04X> : tensor<%sbf16>" % (
                      to_bf16_bits(np.array([int(m.group(1), 16)], np.uint32).view(np.float32))[0],
                      m.group(2)), text)
    text = text.replace("xf32>", "xbf16>").replace("tensor<f32>", "tensor<bf16>")
    with open(os.path.join(workdir, "w16.bin"), "wb") as f:
        f.write(bytes(blob))
    return text, weights


def run_gpt2(bindir, workdir):
    translate = os.path.join(bindir, "loom-translate")
    if not os.path.exists(translate):  # an older build's tools need not have it
        translate = os.path.join(ROOT, "build", "bin", "loom-translate")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "export", "make_models.py"),
                    "--out", workdir, "--models", "gpt2", "--config", "tiny", "--formats", "onnx",
                    "--no-fold"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([translate, "--import-onnx", os.path.join(workdir, "gpt2.onnx"), "-o",
                    os.path.join(workdir, "gpt2.mlir")], check=True)
    with open(os.path.join(workdir, "gpt2.mlir")) as f:
        text, weights = bf16_module(f.read(), workdir)
    with open(os.path.join(workdir, "model.mlir"), "w") as f:
        f.write(text)
    ids = np.load(os.path.join(workdir, "gpt2.input.input_ids.npy"))
    cot = torch.randn((ids.shape[0], ids.shape[1], 256), generator=torch.Generator().manual_seed(7))
    cot = cot.bfloat16()
    np.save(os.path.join(workdir, "ids.npy"), ids)
    np.save(os.path.join(workdir, "cot.npy"), bits(cot))
    names = run_step(bindir, workdir, ["ids.npy", "cot.npy"])

    sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
    import models as zoo
    refs = {}
    for dtype in (torch.bfloat16, torch.float64):
        model = zoo.build("gpt2", "tiny")
        params = dict(model.named_parameters())
        with torch.no_grad():
            for name, w in weights.items():
                if tuple(params[name].shape) != w.shape:
                    sys.exit(f"{name}: the IR holds {w.shape}, torch {tuple(params[name].shape)}")
                params[name].copy_(torch.from_numpy(w.copy()))
        model = model.to(torch.bfloat16).to(dtype)  # the same rounded weights
        logits = model(torch.from_numpy(ids))
        logits.backward(cot.to(dtype))
        refs[dtype] = {"logits": logits.detach()}
        refs[dtype].update({n + ".grad": p.grad for n, p in model.named_parameters()})
    rows = compare(workdir, names, refs)
    grads = sorted((r for n, r in rows.items() if n != "logits"), key=lambda r: r[0])
    out = [("logits", rows["logits"])]
    out.append((f"worst of {len(grads)} gradients", grads[-1]))
    out.append((f"median of {len(grads)} gradients", grads[len(grads) // 2]))
    return [("gpt2-tiny", what) + r for what, r in out], rows


def check(rows, ratio):
    """Names of the outputs farther from float64 than `ratio` times torch's
    bf16 (plus 1e-4 of the scale)."""
    return [nm for nm, (_, lx, tx, _, _) in rows.items() if lx > ratio * tx + 1e-4]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--k", type=int, default=64)
    p.add_argument("--activations", default="relu,tanh")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--model", choices=("mlp", "gpt2"), default="mlp")
    p.add_argument("--check", type=float, metavar="RATIO",
                   help="exit 1 unless every output is within RATIO times torch's bf16 "
                        "distance from float64")
    a = p.parse_args()
    print("| activation | output | Loom vs torch bf16 | Loom vs float64 | torch bf16 vs float64 "
          "| elements equal to torch's |")
    print("|---|---|---|---|---|---|")
    runs = ([lambda d: run_gpt2(a.bin, d)] if a.model == "gpt2" else
            [lambda d, act=act: run_case(a.bin, act, a.n, a.k, d)
             for act in a.activations.split(",")])
    far = []
    for run in runs:
        with tempfile.TemporaryDirectory(prefix="loom-nf-") as d:
            table, rows = run(d)
        for model, what, lt, lx, tx, same, total in table:
            print(f"| {model} | {what} | {lt:.4f} | {lx:.4f} | {tx:.4f} | {same} of {total} |")
        if a.check is not None:
            far += [f"{table[0][0]} {nm}" for nm in check(rows, a.check)]
    if a.check is None:
        return 0
    if far:
        print(f"farther from float64 than {a.check} x torch's bf16: {', '.join(far)}")
        return 1
    print(f"every output within {a.check} x torch's bf16 distance from float64")
    return 0


if __name__ == "__main__":
    sys.exit(main())
