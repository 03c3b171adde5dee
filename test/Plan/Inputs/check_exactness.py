#!/usr/bin/env python3
# test/Plan/Inputs/check_exactness.py - runs --loom-plan with check-exact on
# every graph random_graphs.py wrote and sums up.
"""For each DIR/graph-N.mlir, runs LOOM_OPT --loom-plan with the options in
graph-N.options plus check-exact=true, which makes the pass compare every
exact solve of every grid's strategy graph with brute-force enumeration of
the same graph (failing on a difference). Prints one summary line:

  G graphs, C solves checked against brute force (K under the memory cap;
  S too large), D differ; N with no plan that fits

and, for each graph whose check failed or that failed otherwise, its error.
Exits 1 if any solve differs, any run fails for another reason than no plan
fitting memory, or fewer than --min-checks solves were checked."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("loom_opt")
    parser.add_argument("dir")
    parser.add_argument("--cluster", default="dgx-a100-80g")
    parser.add_argument("--min-checks", type=int, default=1)
    args = parser.parse_args()

    graphs = sorted(glob.glob(os.path.join(args.dir, "graph-*.mlir")),
                    key=lambda p: int(re.search(r"graph-(\d+)", p).group(1)))
    checks = capped = skipped = differ = nofit = 0
    problems = []
    for path in graphs:
        options = open(path[:-len(".mlir")] + ".options").read().strip()
        report = path[:-len(".mlir")] + ".json"
        if os.path.exists(report):
            os.remove(report)
        cmd = [args.loom_opt, path,
               f"--loom-plan=cluster={args.cluster} {options} check-exact=true "
               f"table=none report={report}", "-o", os.devnull]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        name = os.path.basename(path)
        if "check-exact:" in run.stderr:
            differ += 1
            problems.append(f"{name} ({options}): {run.stderr.strip()}")
            continue
        if run.returncode != 0:
            # No plan fitting the memory cap is an answer (the report is
            # written); anything else is a failure of the test.
            if "no plan fits" in run.stderr or "does not fit" in run.stderr:
                nofit += 1
            else:
                problems.append(f"{name} ({options}): exit {run.returncode}: "
                                f"{run.stderr.strip()[:400]}")
                continue
        if not os.path.exists(report):
            if run.returncode == 0:
                problems.append(f"{name}: no report written")
            continue
        r = json.load(open(report))
        checks += r["brute_force_checks"]
        capped += r["brute_force_capped_checks"]
        skipped += r["brute_force_skipped"]

    print(f"{len(graphs)} graphs, {checks} solves checked against brute force "
          f"({capped} under the memory cap; {skipped} too large), {differ} differ; "
          f"{nofit} with no plan that fits")
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems or checks < args.min_checks else 0)


if __name__ == "__main__":
    main()
