#!/usr/bin/env python3
# bench/cpu_e2e.py - the GPT-2-style model on CPU: Loom's compiled program vs PyTorch, and partitioned.
"""Builds the zoo's GPT-2-style model (tools/export/models.py) at a chosen config
and batch, exports it to ONNX, and in one run prints:

  * PyTorch eager forward time on CPU (torch.set_num_threads(--threads)),
  * Loom's compiled single-rank time (loom compile + loom-run, same batch),
  * Loom's time on 2 and 4 MPI ranks under the strategy search's plans
    (loom compile --plan "devices=N mode=infer max-pp=1"),
  * with --pipeline, the same ranks under pipelined plans: the model exported
    at batch 1, planned for the global batch with tensor parallelism capped
    (max-tp=1), so the search picks pipeline stages fed one sample per
    micro-batch,

each the median of --steps steps after a warm-up, plus the ratios. Every
Loom output is checked against PyTorch's (rtol 1e-4) before it is timed, so a
fast wrong program never makes the table. OMP/MKL threads are pinned to
--threads for PyTorch; Loom's code is single-threaded per rank.

Usage: /usr/bin/python3 bench/cpu_e2e.py [--config tiny|small] [--batch B]
       [--steps N] [--threads T] [--ranks 2,4] [--pipeline]
"""
import argparse
import json
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
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))


def loom_time(artifact, inputs, out, ranks, steps):
    cmd = [os.path.join(BIN, "loom-run"), artifact, "--inputs", inputs, "--outputs", out,
           "--steps", str(steps), "--warmup", "1"]
    if ranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)] + cmd
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", text).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="tiny")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--pipeline", action="store_true",
                    help="also time the search's pipelined plans on --ranks")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import torch
    import make_models
    torch.set_num_threads(args.threads)

    work = tempfile.mkdtemp(prefix="loom-cpu-e2e-")
    ref = make_models.make_one("gpt2", args.config, work, ["onnx"], batch=args.batch,
                               basename="gpt2", fold=False)
    onnx = os.path.join(work, "gpt2.onnx")
    ids_path = os.path.join(work, "gpt2.input.input_ids.npy")
    expected = np.load(os.path.join(work, "gpt2.expected.npy"))

    import models as zoo
    model = zoo.build("gpt2", args.config, seed=0).eval()
    inputs = {"input_ids": torch.from_numpy(np.load(ids_path))}
    with torch.no_grad():
        model(**inputs)
        times = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            model(**inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    torch_ms = statistics.median(times)

    rows = [("PyTorch eager", 1, torch_ms, None)]
    plans = [(1, None)] + [(int(n), f"cluster=dgx-a100-80g devices={n} mode=infer max-pp=1 table=none")
                           for n in args.ranks.split(",") if n]
    runs = [(ranks, plan, onnx, f"art{ranks}") for ranks, plan in plans]
    if args.pipeline:
        one = os.path.join(work, "one")
        os.makedirs(one, exist_ok=True)
        make_models.make_one("gpt2", args.config, one, ["onnx"], batch=1, basename="gpt2",
                             fold=False)
        runs += [(int(n), f"cluster=dgx-a100-80g devices={n} mode=infer max-tp=1 "
                          f"global-batch={args.batch} table=none",
                  os.path.join(one, "gpt2.onnx"), f"pp{n}")
                 for n in args.ranks.split(",") if n]
    for ranks, plan, model_file, name in runs:
        art = os.path.join(work, name)
        cmd = [os.path.join(BIN, "loom"), "compile", model_file, "-o", art]
        if plan:
            cmd += ["--plan", plan]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        compile_s = time.perf_counter() - t0
        out = os.path.join(work, f"out-{name}.npy")
        ms = loom_time(art, ids_path, out, ranks, args.steps)
        got = np.load(out)
        if not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
            sys.exit(f"cpu_e2e: {name} ({ranks} ranks) output differs from PyTorch's")
        manifest = json.load(open(os.path.join(art, "manifest.json")))
        grid = manifest["grid"]["shape"]
        micro = manifest.get("micro_batches", 1)
        kind = f"{len(manifest['stages'])} stages, {micro} micro-batches, " if "stages" in manifest else ""
        rows.append((f"Loom {ranks} rank{'s' if ranks > 1 else ''} (grid {grid}, {kind}compile {compile_s:.1f} s)",
                     ranks, ms, None))

    params = ref.get("parameters", "?")
    print(f"GPT-2-style '{args.config}' ({params} parameters), batch {args.batch}, "
          f"{args.threads} thread(s) per process, median of {args.steps} steps")
    print(f"{'':75} {'ranks':>5} {'ms/step':>9} {'vs PyTorch':>10}")
    for name, ranks, ms, _ in rows:
        print(f"{name:75} {ranks:5d} {ms:9.2f} {torch_ms / ms:9.2f}x")


if __name__ == "__main__":
    main()
