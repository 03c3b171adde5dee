#!/usr/bin/env python3
# test/Integration/Inputs/check_gradients.py - run a training step's artifact
# and check its outputs and gradients against PyTorch's.
"""Usage: check_gradients.py ARTIFACT --inputs A.npy[,B.npy...]
                            (--reference DIR | --reference-artifact ART)
                            [--reference-micro-batches M]
                            --out DIR [--ranks N [--gathered]] [--steps S]
                            [--rtol R] [--atol A]

ARTIFACT is a `loom compile`d module that `--loom-autodiff` differentiated:
its manifest names the forward's output and then one `<weight>.grad` output
per trainable weight (none for a step that updates its weights without
keep-gradients, whose forward output is compared alone). Runs loom-run (under mpirun with N ranks, every rank
writing its outputs) and compares each output with DIR/<name>.npy, the
forward's (one) output with DIR/output.npy, as torch_gradients.py writes them:
|out - ref| <= atol * max(1, max|ref|) + rtol * |ref| elementwise. With
--reference-artifact the reference is another step's artifact (the same
model unplaced), run on one rank: each output against its namesake. With
--gathered, the N ranks write one set of outputs, split ones gathered (a
ZeRO gradient, which each rank holds a shard of), instead of each its own.
With --reference-micro-batches M, the reference artifact is a step of one
micro-batch: it runs once per micro-batch (each input cut into M along its
first dimension), the forward's outputs are concatenated and the gradients
summed, as a step of M micro-batches (loom-run) sums them.
With --steps S, loom-run calls the step S times (no warm-up) and the S-th
call's outputs are compared: a step that updates its weights
(--loom-optimizer-step) against torch_gradients.py --steps S.
Prints a line per output and exits 1 if any differs or is missing.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np


def compare(path, ref, rtol, atol):
    out = np.load(path)
    if out.dtype != ref.dtype or out.shape != ref.shape:
        return f"MISMATCH {out.dtype}{list(out.shape)} vs {ref.dtype}{list(ref.shape)}"
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    # Float32 sums of many terms: the absolute slack grows with the tensor's
    # largest magnitude.
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    bound = atol * scale + rtol * np.abs(ref.astype(np.float64))
    bad = ~(diff <= bound)  # NaN is out of tolerance
    if not bad.any():
        return None
    worst = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(diff - bound, nan=np.inf), -np.inf)), diff.shape)
    return (f"MISMATCH at {list(worst)}: {out[worst]} vs {ref[worst]} "
            f"({np.count_nonzero(bad)} of {diff.size} out of tolerance)")


def run_reference(args, names):
    """Runs the reference artifact into args.reference, once per micro-batch:
    each input cut along the tested artifact's batch_dim (whole where it has
    none), each output concatenated along its batch_dim or, marked
    sum_over_micro_batches, summed, as loom-run assembles them."""
    m = args.reference_micro_batches
    def run(inputs, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        subprocess.run(["loom-run", args.reference_artifact, "--inputs", inputs,
                        "--outputs", ",".join(os.path.join(out_dir, n + ".npy") for n in names),
                        "--quiet", "--steps", str(args.steps), "--warmup", "0"], check=True)
    if m == 1:
        run(args.inputs, args.reference)
        return
    with open(os.path.join(args.artifact, "manifest.json")) as f:
        manifest = json.load(f)
    inputs = [np.load(path) for path in args.inputs.split(",")]
    cut = [i.get("batch_dim") for i in manifest["inputs"]]
    outputs = {o["name"]: o for o in manifest["outputs"]}
    runs = []
    for k in range(m):
        run_dir = os.path.join(args.reference, "micro-batch%d" % k)
        os.makedirs(run_dir, exist_ok=True)
        paths = []
        for i, x in enumerate(inputs):
            paths.append(os.path.join(run_dir, "input%d.npy" % i))
            np.save(paths[-1], x if cut[i] is None else np.split(x, m, axis=cut[i])[k])
        run(",".join(paths), run_dir)
        runs.append([np.load(os.path.join(run_dir, n + ".npy")) for n in names])
    for i, n in enumerate(names):
        outs = [r[i] for r in runs]
        if outputs[n].get("sum_over_micro_batches"):
            combined = sum(outs[1:], outs[0])
        elif outputs[n].get("batch_dim") is not None:
            combined = np.concatenate(outs, axis=outputs[n]["batch_dim"])
        else:
            combined = outs[-1]
        np.save(os.path.join(args.reference, n + ".npy"), combined)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("artifact")
    p.add_argument("--inputs", required=True)
    refs = p.add_mutually_exclusive_group(required=True)
    refs.add_argument("--reference")
    refs.add_argument("--reference-artifact")
    p.add_argument("--out", required=True)
    p.add_argument("--ranks", type=int, default=0)
    p.add_argument("--gathered", action="store_true")
    p.add_argument("--reference-micro-batches", type=int, default=1)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    args = p.parse_args()

    with open(os.path.join(args.artifact, "manifest.json")) as f:
        names = [o["name"] for o in json.load(f)["outputs"]]
    forward = [n for n in names if not n.endswith(".grad")]
    # (A step that updates its weights returns no gradients unless asked.)
    if len(forward) != 1:
        sys.exit(f"{args.artifact}: expected one forward output (and gradients), got {names}")
    os.makedirs(args.out, exist_ok=True)
    if args.reference_artifact:
        with open(os.path.join(args.reference_artifact, "manifest.json")) as f:
            ref_names = [o["name"] for o in json.load(f)["outputs"]]
        # The same outputs, in any order (placement may move the weights a
        # step returns gradients for); each is compared with its namesake.
        if sorted(ref_names) != sorted(names):
            sys.exit(f"{args.reference_artifact} returns {ref_names}, not {names}")
        args.reference = os.path.join(args.out, "reference")
        os.makedirs(args.reference, exist_ok=True)
        run_reference(args, ref_names)
    paths = [os.path.join(args.out, n + ".npy") for n in names]
    cmd = ["loom-run", args.artifact, "--inputs", args.inputs,
           "--outputs", ",".join(paths), "--quiet", "--steps", str(args.steps), "--warmup", "0"]
    if args.ranks:
        # (Open MPI's session directory in our own output, not lit's shared
        # TMPDIR, where another test's job ending can remove it under us.)
        session = os.path.join(args.out, "ompi")
        os.makedirs(session, exist_ok=True)
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "orte_tmpdir_base",
               session, "-np", str(args.ranks)] + cmd + ([] if args.gathered else ["--every-rank"])
    subprocess.run(cmd, check=True)

    ranks = [f".rank{r}" for r in range(args.ranks)] if args.ranks and not args.gathered else [""]
    failed = 0
    for name, path in zip(names, paths):
        ref_name = "output" if name in forward and not args.reference_artifact else name
        ref = np.load(os.path.join(args.reference, ref_name + ".npy"))
        for suffix in ranks:
            got = path[:-4] + suffix + ".npy"
            error = compare(got, ref, args.rtol, args.atol) if os.path.exists(got) else "missing"
            print(f"{name}{suffix}: {error or 'OK'}")
            failed += error is not None
    # A gradient PyTorch has and the step does not return is a failure too.
    for ref_file in sorted(os.listdir(args.reference)):
        if ref_file.endswith(".grad.npy") and ref_file[:-4] not in names:
            print(f"{ref_file[:-4]}: missing from the step's outputs")
            failed += 1
    print(f"{len(names) * len(ranks) - failed} of {len(names) * len(ranks)} outputs match")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
