#!/usr/bin/python3
"""The largest GPT the strategy search plans on one node, with and without
memory placement inside the search (--loom-plan place-memory=true).

For each setup (a node of GPUs with its host memory, from
bench/memory_placement.py's setups and the cluster presets) and each width,
the deepest GPT of bench/gpt_plan.py's family that --loom-plan can train
is found by bisection on the layer count, once with the search alone (every
plan must fit device memory: ZeRO and recomputation are its only tools)
and once with place-memory=true (plans over device memory are priced with
optimizer offload). The largest model of each is reported with its plan,
its placement, the predicted step and the planning time.

Usage: bench/plan_placement.py [--setups a,b] [--widths 4096,8192]
       [--seq 1024] [--global-batch 64] [--loom-opt PATH]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from memory_placement import SETUPS as PLACEMENT_SETUPS, deepest  # noqa: E402

HEADS = {2048: 16, 4096: 32, 5120: 40, 6144: 48, 8192: 64, 12288: 96}

SETUPS = {
    # PatrickStar's node: 8 V100-32GB sharing 240 GB of host memory.
    "8xv100-32g-240": (PLACEMENT_SETUPS["8xv100-32g-240"], "f16"),
    # One DGX A100 (8 x 80 GB, 2 TB host) as shipped.
    "dgx-a100-80g": (lambda: json.load(open(os.path.join(ROOT, "clusters", "dgx-a100-80g.json"))),
                     "bf16"),
}


def plan(loom_opt, cluster_path, dtype, hidden, layers, args, tmp, place):
    ir = os.path.join(tmp, "gpt.mlir")
    subprocess.run([sys.executable, os.path.join(HERE, "gpt_plan.py"), "--no-plan",
                    "--layers", str(layers), "--hidden", str(hidden),
                    "--heads", str(HEADS[hidden]), "--seq", str(args.seq),
                    "--vocab", "51200", "--micro-batch", "1", "--dp", "8",
                    "--dtype", dtype, "-o", ir], check=True)
    report = os.path.join(tmp, "plan.json")
    if os.path.exists(report):
        os.remove(report)
    t0 = time.perf_counter()
    out = subprocess.run([loom_opt, ir, "--loom-plan=cluster=%s mode=train global-batch=%d "
                          "place-memory=%s table=none report=%s"
                          % (cluster_path, args.global_batch, "true" if place else "false",
                             report), "-o", os.devnull],
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if not os.path.exists(report):
        sys.exit(f"loom-opt wrote no report on {layers}x{hidden}:\n{out.stderr}")
    r = json.load(open(report))
    if r["feasible"] != (out.returncode == 0):
        sys.exit(f"loom-opt's exit status disagrees with its report on {layers}x{hidden}")
    best = r["best"]
    return {"layers": layers, "hidden": hidden, "fits": r["feasible"], "seconds": seconds,
            "plan": best["plan"], "placement": best.get("placement"),
            "step": best.get("placed_step_time_s",
                             best.get("estimated_step_time_s", best["step_time_s"])),
            "params": 12 * layers * hidden ** 2 + (51200 + args.seq) * hidden,
            "placed": r.get("plans_placed", 0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--setups", default=",".join(SETUPS))
    ap.add_argument("--widths", default="4096,6144,8192")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--global-batch", type=int, default=64)
    ap.add_argument("--max-layers", type=int, default=256)
    ap.add_argument("--loom-opt", default=os.path.join(ROOT, "build", "bin", "loom-opt"))
    args = ap.parse_args()
    print(f"GPT, sequence {args.seq}, global batch {args.global_batch}, Adam; deepest "
          f"model --loom-plan trains per width, by bisection on the layer count")
    with tempfile.TemporaryDirectory() as tmp:
        for setup in args.setups.split(","):
            make, dtype = SETUPS[setup]
            spec = make()
            cluster_path = os.path.join(tmp, setup + ".json")
            with open(cluster_path, "w") as f:
                json.dump(spec, f)
            print(f"\n{setup}: {spec['description']}")
            for place in (False, True):
                best, times = None, []
                for hidden in [int(w) for w in args.widths.split(",")]:
                    def run(layers):
                        r = plan(args.loom_opt, cluster_path, dtype, hidden, layers, args,
                                 tmp, place)
                        times.append(r["seconds"])
                        return r
                    r = deepest(run, args.max_layers)
                    if r and (best is None or r["params"] > best["params"]):
                        best = r
                label = "search + placement" if place else "search alone      "
                if best is None:
                    print(f"  {label}: nothing fits")
                    continue
                print(f"  {label}: {best['params'] / 1e9:.1f}B ({best['layers']} x "
                      f"{best['hidden']}), {best['plan']}"
                      + (f", {best['placement']}" if best["placement"] else "")
                      + f"; {best['step']:.2f} s per step, "
                      f"{args.global_batch / best['step']:.2f} samples/s")
                print(f"    planning: {max(times):.2f} s at most, "
                      f"{sum(times) / len(times):.2f} s on average over {len(times)} runs")
                if best["layers"] == args.max_layers:
                    print(f"    (the depth limit, --max-layers {args.max_layers}: larger "
                          f"models may fit)")


if __name__ == "__main__":
    main()
