#!/usr/bin/env python3
"""Checks a compiled training step of the 6-layer MLP (Inputs/mlp6.mlir,
keep-gradients=true, AdamW) whose plan delays the host's parameter update
(ZeRO-Offload's delayed parameter update) against torch: the weights the
host updates reach the device one update late (each call's forward reads
them as they were before the previous call's update), the others at once.

    delayed_update_reference.py ARTIFACT --weights mlp.bin --inputs x.npy,g.npy
        --host 2,3,4,5 --steps N --lr LR --weight-decay WD --out DIR [--no-delay]

Runs ARTIFACT for N calls with loom-run and compares the last call's
output and gradients with torch's. --no-delay makes the reference update
every weight at once (a delayed artifact must then fail). Prints "N of N
outputs match" or names the first that differs and exits non-zero."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch


def reference(weights, x, g, host, steps, lr, wd, delay):
    n = 512 * 512
    raw = np.fromfile(weights, dtype=np.float32)
    master = [torch.nn.Parameter(torch.from_numpy(raw[i * n:(i + 1) * n].reshape(512, 512).copy()))
              for i in range(6)]
    device = [p.detach().clone() for p in master]
    opt = torch.optim.AdamW(master, lr=lr, weight_decay=wd)
    for _ in range(steps):
        params = [d.clone().requires_grad_(True) for d in device]
        y = torch.from_numpy(x)
        for p in params:
            y = torch.relu(y @ p)
        y.backward(torch.from_numpy(g))
        outputs = [y.detach().numpy()] + [p.grad.numpy() for p in params]
        before = [p.detach().clone() for p in master]
        for p, q in zip(master, params):
            p.grad = q.grad.clone()
        opt.step()
        device = [before[i] if (delay and i in host) else master[i].detach().clone()
                  for i in range(6)]
    return outputs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("artifact")
    p.add_argument("--weights", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--out", required=True)
    p.add_argument("--no-delay", action="store_true")
    a = p.parse_args()
    names = [o["name"] for o in json.load(open(os.path.join(a.artifact, "manifest.json")))["outputs"]]
    os.makedirs(a.out, exist_ok=True)
    files = [os.path.join(a.out, "%d.npy" % i) for i in range(len(names))]
    subprocess.run(["loom-run", a.artifact, "--inputs", a.inputs, "--outputs", ",".join(files),
                    "--steps", str(a.steps), "--warmup", "0", "--quiet"], check=True)
    xf, gf = a.inputs.split(",")
    host = {int(i) for i in a.host.split(",")}
    expected = reference(a.weights, np.load(xf), np.load(gf), host, a.steps, a.lr,
                         a.weight_decay, not a.no_delay)
    want = ["result"] + ["layers.%d.weight.grad" % i for i in range(6)]
    if len(names) != len(want) or any(not n.endswith(w) and n != w for n, w in zip(names[1:], want[1:])):
        sys.exit("unexpected outputs %s" % names)
    for name, f, e in zip(names, files, expected):
        got = np.load(f)
        scale = max(float(np.max(np.abs(e))), 1e-30)
        err = float(np.max(np.abs(got.astype(np.float64) - e))) / scale
        if err > 1e-4:
            sys.exit("%s differs from torch (max error %.3g of its largest magnitude)" % (name, err))
    print("%d of %d outputs match" % (len(names), len(names)))


if __name__ == "__main__":
    main()
