#!/usr/bin/env python3
# bench/train_step_cpu.py - one training step (forward + backward) on CPU:
# Loom's compiled step vs PyTorch eager autograd, on zoo models.
"""For each --models NAME (tools/export/models.py, --config), exports the model
to ONNX, imports it, writes its backward (loom-opt --loom-autodiff), compiles
the step (loom compile, -O --opt), checks every gradient against PyTorch
autograd (test/Integration/Inputs/check_gradients.py, the same references as
train-step.test) and only then times it, and prints per model:

  * PyTorch eager: forward, then backward of sum(y * cotangent), on
    --threads threads (eval mode, as the exported graph),
  * Loom: loom-run's median step over --steps steps (single-threaded),

with the ratio. With --optimizer sgd|adam|adamw (--lr), the step includes
the weights' update: Loom's from --loom-optimizer-step (checked after three
calls against torch.optim's third step), PyTorch's optimizer.step() after
the backward. Usage: /usr/bin/python3 bench/train_step_cpu.py
[--models resnet50,vit_b_16,gpt2] [--config small] [--steps N] [--threads T]
[--opt 2] [--optimizer adamw] [--lr 1e-4]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
INPUTS = os.path.join(ROOT, "test", "Integration", "Inputs")
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,vit_b_16,gpt2")
    ap.add_argument("--config", default="small")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--opt", type=int, default=2, help="loom compile -O level")
    ap.add_argument("--optimizer", choices=("sgd", "adam", "adamw"),
                    help="include the weights' update in the step")
    ap.add_argument("--lr", type=float, default=1e-4)
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import torch
    import make_models
    import models as zoo
    torch.set_num_threads(args.threads)

    print(f"{'model':<10} {'params':>10} {'torch fwd+bwd':>14} {'loom step':>10} {'loom/torch':>10}")
    for name in args.models.split(","):
        work = tempfile.mkdtemp(prefix=f"loom-train-{name}-")
        make_models.make_one(name, args.config, work, ["onnx"], basename=name, fold=False)
        mlir, step, art = (os.path.join(work, f) for f in ("model.mlir", "step.mlir", "art"))
        run([os.path.join(BIN, "loom-translate"), "--import-onnx",
             os.path.join(work, f"{name}.onnx"), "-o", mlir])
        update = []
        if args.optimizer:
            update = [f"--loom-optimizer-step=kind={args.optimizer} lr={args.lr} keep-gradients=true"]
        run([os.path.join(BIN, "loom-opt"), mlir, "--loom-autodiff"] + update + ["-o", step])
        run([os.path.join(BIN, "loom"), "compile", step, "-o", art, f"-O{args.opt}"])
        ref, cot = os.path.join(work, "ref"), os.path.join(work, "cot.npy")
        checked = ["--steps", "3", "--optimizer", args.optimizer, "--lr", str(args.lr)] \
            if args.optimizer else []
        run([sys.executable, os.path.join(INPUTS, "torch_gradients.py"), "--models", name,
             "--config", args.config, "--inputs", os.path.join(work, f"{name}.inputs.npz"),
             "--expected", os.path.join(work, f"{name}.expected.npy"),
             "--write-cotangent", cot, "--out", ref] + checked)
        npz = np.load(os.path.join(work, f"{name}.inputs.npz"))
        inputs = ",".join(os.path.join(work, f"{name}.input.{k}.npy") for k in npz.files) + "," + cot
        check = run([sys.executable, os.path.join(INPUTS, "check_gradients.py"), art,
                     "--inputs", inputs, "--reference", ref, "--out", os.path.join(work, "out")]
                    + checked[:2],
                    env=dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"]))
        matched = re.search(r"(\d+) of (\d+) outputs match", check)
        if not matched or matched.group(1) != matched.group(2):
            sys.exit(f"{name}: the step's gradients do not match PyTorch's:\n{check}")

        outs = ",".join(os.path.join(work, "out", f"t{i}.npy") for i in range(int(matched.group(2))))
        text = run([os.path.join(BIN, "loom-run"), art, "--inputs", inputs, "--outputs", outs,
                    "--steps", str(args.steps), "--warmup", "1"])
        loom_ms = float(re.search(r"median ([0-9.]+) ms", text).group(1))

        model = zoo.build(name, args.config, seed=0).eval()
        feeds = {k: torch.from_numpy(npz[k]) for k in npz.files}
        cotangent = torch.from_numpy(np.load(cot))
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = None
        if args.optimizer:
            kind = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
                    "adamw": torch.optim.AdamW}[args.optimizer]
            optimizer = kind(params, lr=args.lr, **({} if args.optimizer == "sgd" else {"weight_decay": 0.0}))

        def step():
            for p in params:
                p.grad = None
            y = model(**feeds)
            y = y[0] if isinstance(y, (tuple, list)) else getattr(y, "logits", y)
            (y * cotangent).sum().backward()
            if optimizer:
                optimizer.step()
        step()
        times = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        torch_ms = statistics.median(times)
        count = sum(p.numel() for p in params)
        print(f"{name:<10} {count:>10,} {torch_ms:>11.2f} ms {loom_ms:>7.2f} ms {loom_ms / torch_ms:>9.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
