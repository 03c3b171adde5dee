#!/usr/bin/env python3
"""Runs two compiled programs (loom compile artifacts) on the same inputs and
checks that every output of the second equals the first's, bit for bit: a
placed training step must compute exactly what the unplaced one does, since
placement only decides where buffers live and when weights move.

    same_step.py PLAIN PLACED --inputs a.npy,b.npy --out DIR [--ranks N] [--steps N]

With --steps N each program runs N calls (a training step with its optimizer
update trains between them) and the last call's outputs are compared.
Outputs are matched by their manifest names, in whatever order each program
returns them. Prints "N outputs identical" or names the first output that
differs and exits non-zero."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np


def run(artifact, inputs, out, ranks, steps):
    names = [o["name"] for o in json.load(open(os.path.join(artifact, "manifest.json")))["outputs"]]
    os.makedirs(out, exist_ok=True)
    files = [os.path.join(out, "%d.npy" % i) for i in range(len(names))]
    cmd = ["loom-run", artifact, "--inputs", inputs, "--outputs", ",".join(files), "--quiet"]
    if steps:
        cmd += ["--steps", str(steps), "--warmup", "0"]
    if ranks:
        # (Open MPI's session directory in our own output, not lit's shared
        # TMPDIR, where another test's job ending can remove it under us.)
        session = os.path.join(out, "ompi")
        os.makedirs(session, exist_ok=True)
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "orte_tmpdir_base",
               session, "-np", str(ranks)] + cmd
    subprocess.run(cmd, check=True)
    return names, [np.load(f) for f in files]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plain")
    p.add_argument("placed")
    p.add_argument("--inputs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--ranks", type=int, default=0)
    p.add_argument("--steps", type=int, default=0)
    a = p.parse_args()
    names, expected = run(a.plain, a.inputs, os.path.join(a.out, "plain"), a.ranks, a.steps)
    placed_names, got = run(a.placed, a.inputs, os.path.join(a.out, "placed"), a.ranks, a.steps)
    if sorted(names) != sorted(placed_names) or len(set(names)) != len(names):
        sys.exit("the programs return different outputs: %s against %s" % (placed_names, names))
    by_name = dict(zip(placed_names, got))
    for name, e in zip(names, expected):
        g = by_name[name]
        if e.shape != g.shape or not np.array_equal(e, g):
            err = np.max(np.abs(e.astype(np.float64) - g)) if e.shape == g.shape else "shape"
            sys.exit("%s differs from the unplaced step (max abs error %s)" % (name, err))
    print("%d outputs identical" % len(names))


if __name__ == "__main__":
    main()
