#!/usr/bin/env python3
# test/Integration/Inputs/run_autodiff_cases.py - differentiate, compile, run
# and check every case autodiff_cases.py wrote.
"""Usage: run_autodiff_cases.py OUTDIR [--only NAME,...] [--jobs N]

For every case directory OUTDIR/NAME (one holding NAME.mlir; OUTDIR/errors
is not a case), in that directory:

  loom-opt NAME.mlir --loom-autodiff -o step.mlir
  loom compile step.mlir -o art -O 0
  check_gradients.py art --inputs x.npy,cot.npy --reference ref --out out
                     [--rtol R --atol A from case.json]

with loom-opt, loom and (through check_gradients.py) loom-run found on PATH.
Cases run --jobs at a time (default: twice the CPU count, at most 8).
Prints "NAME: OK" or "NAME: FAILED (<step>, exit <rc>)" and the failing
step's output per case, in name order, then "<n> cases: <p> passed, <f>
failed"; exits 1 if any failed, after printing the failures and the summary
again on stderr.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_gradients.py")


def run_case(outdir, name):
    d = os.path.join(outdir, name)
    tol = []
    cfg = os.path.join(d, "case.json")
    if os.path.exists(cfg):
        with open(cfg) as f:
            for k, v in json.load(f).items():
                tol += [f"--{k}", repr(v)]
    steps = [
        ("loom-opt", ["loom-opt", name + ".mlir", "--loom-autodiff", "-o", "step.mlir"]),
        ("loom compile", ["loom", "compile", "step.mlir", "-o", "art", "-O", "0"]),
        ("check_gradients", [sys.executable, CHECK, "art", "--inputs", "x.npy,cot.npy",
                             "--reference", "ref", "--out", "out"] + tol),
    ]
    # A temporary directory of its own per case: Open MPI creates its session
    # directory under TMPDIR, and singleton loom-runs started at once race
    # for the same one ("orte_session_dir failed"). Short, under the system
    # temp, as the session's socket paths must be.
    tmp = tempfile.mkdtemp(prefix="loom-ad-")
    try:
        for step, cmd in steps:
            try:
                p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=120, env=dict(os.environ, TMPDIR=tmp))
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"FAILED ({step}: {e})", ""
            if p.returncode != 0:
                return f"FAILED ({step}, exit {p.returncode})", p.stdout
        return "OK", ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--only", help="comma-separated case names")
    # loom-run spends most of its time waiting, not computing: twice as many
    # jobs as cores keeps them busy.
    p.add_argument("--jobs", type=int, default=min(8, 2 * (os.cpu_count() or 1)))
    args = p.parse_args()
    names = sorted(n for n in os.listdir(args.outdir)
                   if os.path.isfile(os.path.join(args.outdir, n, n + ".mlir")))
    if args.only:
        wanted = [n for n in args.only.split(",") if n]
        missing = [n for n in wanted if n not in names]
        if missing:
            sys.exit(f"run_autodiff_cases.py: no such cases in {args.outdir}: {', '.join(missing)}")
        names = wanted
    if not names:
        sys.exit(f"run_autodiff_cases.py: no cases in {args.outdir}")
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda n: run_case(args.outdir, n), names))
    failed, failures = 0, []
    for name, (status, log) in zip(names, results):
        report = [f"{name}: {status}"] + [f"  | {line}" for line in log.rstrip().splitlines()]
        print("\n".join(report))
        if status != "OK":
            failed += 1
            failures += report
    summary = f"{len(names)} cases: {len(names) - failed} passed, {failed} failed"
    print(summary)
    # The failures once more on stderr, which a FileCheck on stdout leaves
    # in the test's log whole.
    if failed:
        sys.stdout.flush()
        print("\n".join(failures + [summary]), file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
