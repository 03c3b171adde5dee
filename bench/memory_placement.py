#!/usr/bin/python3
"""The largest GPT that trains on one GPU or one node under --loom-place-memory.

For each setup (GPUs and their host memory and NVMe), the GPT family of
bench/gpt_plan.py is searched: at each width (hidden, heads) the deepest
model whose placement fits is found by bisection on the layer count, and
the largest of those is reported with its placement, its predicted
throughput as a fraction of the same model without memory limits, the
host-to-device bytes per step against their lower bound, and the time
loom-opt took to place it.

The setups are one-node clusters derived from the presets; the one-GPU
ones keep one device per node, so the node's host memory, CPU Adam rate and
NVMe serve one GPU:

  a100-80g-2tb  A100-SXM4-80GB, 2 TiB host memory (ZeRO-Infinity's class
                of single-GPU box)
  a100-40g      A100-SXM4-40GB, 1 TiB host (the DGX A100 320GB's), Elixir's
                GPU
  v100-32g-240  V100-SXM2-32GB with 240 GB host (PatrickStar's node has
                8 such GPUs sharing it; this is one GPU with all of it);
                fp16, since V100 has no bf16
  8xv100-32g-240  PatrickStar's node itself: 8 V100-SXM2-32GB sharing
                240 GB of host memory and the node's CPU, the model data
                parallel over the 8 (Megatron's dp=8 layout from
                bench/gpt_plan.py), so placement also chooses the ZeRO stage

For the largest model it also prints the chosen placement's static memory
plan: each tier's arena against the most bytes live at once (one-GPU
setups; the data-parallel node's plan covers one GPU too). `--model
LAYERSxHIDDEN` places that one model per setup instead of searching.
`--grad-accum N` makes a step N micro-batches (gradient accumulation: the
IR's `loom.micro_batches`), over which streamed parameters are fetched
again each micro-batch and their gradients summed on the host.

Usage: bench/memory_placement.py [--setups a,b] [--seq 1024]
       [--micro-batch 4] [--grad-accum 1] [--loom-opt PATH] [--model 295x2048]
       [--widths 5120,6144] [--max-layers 512]
       [--place-options "partial-recompute=false"]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WIDTHS = [(2048, 16), (2560, 32), (4096, 32), (5120, 40), (6144, 48),
          (8192, 64), (12288, 96), (16384, 128), (25600, 160)]


def one_node_cluster(preset, name, description, device_gib=None, host_gib=None,
                     gpus=1):
    with open(os.path.join(ROOT, "clusters", preset + ".json")) as f:
        spec = json.load(f)
    spec["name"] = name
    spec["description"] = description
    spec["sources"] = spec.get("sources", []) + [
        f"bench/memory_placement.py: derived from {preset}, one node of {gpus} device(s)"]
    spec["levels"] = [dict(spec["levels"][0], fanout=gpus)]
    if device_gib:
        spec["device"]["memory_GiB"] = device_gib
    if host_gib:
        spec["host"]["memory_GiB"] = host_gib
    return spec


DTYPE = {"v100-32g-240": "f16", "8xv100-32g-240": "f16"}  # the rest bf16
DATA_PARALLEL = {"8xv100-32g-240": 8}  # the rest one GPU

SETUPS = {
    "a100-80g-2tb": lambda: one_node_cluster(
        "dgx-a100-80g", "a100-80g-2tb", "one A100-SXM4-80GB, 2 TiB host",
        host_gib=2048),
    "a100-40g": lambda: one_node_cluster(
        "dgx-a100-40g", "a100-40g", "one A100-SXM4-40GB, 1 TiB host"),
    "v100-32g-240": lambda: one_node_cluster(
        "dgx1-v100", "v100-32g-240", "one V100-SXM2-32GB, 240 GB host",
        device_gib=32, host_gib=240 * 1e9 / 2**30),
    "8xv100-32g-240": lambda: one_node_cluster(
        "dgx1-v100", "8xv100-32g-240", "8 V100-SXM2-32GB data parallel, 240 GB host",
        device_gib=32, host_gib=240 * 1e9 / 2**30, gpus=8),
}

# What the anchors report for the same class of setup (docs/benchmarks.md
# cites them).
PUBLISHED = {
    "a100-80g-2tb": "ZeRO-Infinity: trillion-parameter fine-tuning on one DGX-2 node (NVMe)",
    "a100-40g": "Elixir: 84% of pure-GPU efficiency beyond GPU memory",
    "v100-32g-240": "ZeRO-Offload: 13B on one V100-32GB",
    "8xv100-32g-240": "PatrickStar: 12B on 8xV100 + 240 GB, 2x prior art",
}


def place(loom_opt, cluster_path, dtype, hidden, heads, layers, args, tmp, extra="",
          dp=1):
    ir = os.path.join(tmp, "gpt.mlir")
    plan = ["--dp", str(dp)] if dp > 1 else ["--no-plan"]
    subprocess.run([sys.executable, os.path.join(HERE, "gpt_plan.py"), *plan,
                    "--layers", str(layers), "--hidden", str(hidden),
                    "--heads", str(heads), "--seq", str(args.seq),
                    "--vocab", "51200", "--micro-batch", str(args.micro_batch),
                    "--dtype", dtype, "-o", ir], check=True)
    if args.grad_accum > 1:
        # The entry's batch dimension is the tokens' and the logits' first.
        text = open(ir).read()
        header = re.search(r"func\.func @main\(%tokens: (tensor<[^>]*>)\) -> (tensor<[^>]*>) \{",
                           text)
        if not header:
            sys.exit("gpt_plan.py wrote an entry this bench cannot micro-batch")
        batched = ('func.func @main(%%tokens: %s {loom.batch_dim = 0 : i64}) -> '
                   '(%s {loom.batch_dim = 0 : i64}) attributes {loom.micro_batches = %d : i64} {'
                   % (header.group(1), header.group(2), args.grad_accum))
        with open(ir, "w") as f:
            f.write(text[:header.start()] + batched + text[header.end():])
    table = os.path.join(tmp, "table.txt")
    t0 = time.perf_counter()
    options = "cluster=%s mode=train table=%s%s" % (cluster_path, table, extra)
    if args.place_options:
        options += " " + args.place_options
    out = subprocess.run([loom_opt, ir, "--loom-place-memory=" + options,
                          "-o", os.path.join(tmp, "placed.mlir")],
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"loom-opt failed on {layers}x{hidden}:\n{out.stderr}")
    text = open(table).read()
    if args.verbose:
        chosen = re.search(r"chosen: (.*): ([0-9.]+ ms) per step", text)
        refusals = text.count("refused after its replay")
        print(f"  {layers}x{hidden}: {seconds:.2f} s, "
              + (f"{chosen.group(1)}, {chosen.group(2)}" if chosen else "nothing fits")
              + (f", {refusals} refused after replay" if refusals else ""),
              file=sys.stderr, flush=True)
    result = {"layers": layers, "hidden": hidden, "heads": heads, "seconds": seconds,
              "fits": "nothing fits" not in text, "table": text}
    m = re.search(r"parameters ([0-9.]+) (\w+), gradients", text)
    units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    result["param_bytes"] = float(m.group(1)) * units[m.group(2)]
    m = re.search(r"chosen: (.*): ([0-9.]+) ms per step, ([0-9.]+)% of the unlimited", text)
    if m:
        result.update(placement=m.group(1), step_ms=float(m.group(2)),
                      fraction=float(m.group(3)) / 100)
        # (A plan that releases chunks also gives the bound among plans
        # releasing those: "...x; Y, Rx releasing the N chunks it releases)".)
        m = re.search(r"host->device ([0-9.]+ \w+) \(lower bound ([0-9.]+ \w+), ([0-9.]+)x[;)]", text)
        result.update(h2d=m.group(1), bound=m.group(2), ratio=float(m.group(3)))
    result["arenas"] = re.findall(
        r"(device|host|NVMe) arena: (\d+) buffers in ([0-9.]+ \w+), ([0-9.]+)% over the "
        r"([0-9.]+ \w+) most live", text)
    return result


def deepest(run, max_layers):
    """The deepest model that fits, by bisection on the layer count: `run`
    takes a layer count and returns a result with "fits". Returns that
    model's result, or None when not even one layer fits."""
    lo, hi = 0, max_layers + 1  # lo fits (0: none), hi does not
    fit_at = {}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = run(mid)
        if r["fits"]:
            lo, fit_at[mid] = mid, r
        else:
            hi = mid
    return fit_at.get(lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--setups", default=",".join(SETUPS))
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--grad-accum", type=int, default=1,
                    help="micro-batches per step (gradient accumulation)")
    ap.add_argument("--max-layers", type=int, default=512)
    ap.add_argument("--loom-opt", default=os.path.join(ROOT, "build", "bin", "loom-opt"))
    ap.add_argument("--model", help="LAYERSxHIDDEN: place this model only")
    ap.add_argument("--widths", help="comma-separated hidden sizes to search (default: all of "
                    + "/".join(str(h) for h, _ in WIDTHS) + ")")
    ap.add_argument("--place-options", default="",
                    help="more --loom-place-memory options, e.g. partial-recompute=false")
    ap.add_argument("--verbose", action="store_true",
                    help="print each placement's model, time and choice to stderr")
    args = ap.parse_args()
    only = None
    if args.model:
        m = re.fullmatch(r"(\d+)x(\d+)", args.model)
        heads = dict(WIDTHS).get(int(m.group(2))) if m else None
        if not heads:
            sys.exit("--model wants LAYERSxHIDDEN with a hidden size of %s, not '%s'"
                     % ("/".join(str(h) for h, _ in WIDTHS), args.model))
        only = (int(m.group(1)), int(m.group(2)), heads)
    accum = (f", {args.grad_accum} micro-batches a step" if args.grad_accum > 1 else "")
    print(f"GPT, sequence {args.seq}, micro-batch {args.micro_batch}{accum}, 16-bit, Adam; "
          f"deepest fitting model per width by bisection")
    with tempfile.TemporaryDirectory() as tmp:
        for setup in args.setups.split(","):
            spec = SETUPS[setup]()
            dp = DATA_PARALLEL.get(setup, 1)
            cluster_path = os.path.join(tmp, setup + ".json")
            with open(cluster_path, "w") as f:
                json.dump(spec, f)
            best, seconds = None, []
            if only:
                layers, hidden, heads = only
                best = place(args.loom_opt, cluster_path, DTYPE.get(setup, "bf16"),
                             hidden, heads, layers, args, tmp, dp=dp)
                seconds.append(best["seconds"])
                if not best["fits"]:
                    best = None
            widths = WIDTHS
            if args.widths:
                wanted = [int(w) for w in args.widths.split(",")]
                widths = [(h, n) for h, n in WIDTHS if h in wanted]
                if len(widths) != len(wanted):
                    sys.exit("--widths takes hidden sizes from %s, not '%s'"
                             % ("/".join(str(h) for h, _ in WIDTHS), args.widths))
            for hidden, heads in widths if not only else []:
                def run(layers):
                    r = place(args.loom_opt, cluster_path, DTYPE.get(setup, "bf16"),
                              hidden, heads, layers, args, tmp, dp=dp)
                    seconds.append(r["seconds"])
                    return r
                r = deepest(run, args.max_layers)
                if r and (best is None or r["param_bytes"] > best["param_bytes"]):
                    best = r
            runs = len(seconds)
            print(f"\n{setup}: {spec['description']}")
            if best is None:
                print("  nothing fits")
                continue
            params = best["param_bytes"] / 2 / 1e9  # 16-bit
            print(f"  largest: {params:.1f}B parameters ({best['layers']} layers x "
                  f"{best['hidden']} hidden, {best['heads']} heads)")
            print(f"  placement: {best['placement']}")
            print(f"  predicted: {best['step_ms']:.0f} ms per step, {best['fraction']:.1%} "
                  f"of the same model without memory limits")
            print(f"  host->device per step: {best['h2d']} (lower bound {best['bound']}, "
                  f"{best['ratio']:.2f}x)")
            print(f"  placement time: {max(seconds):.2f} s at most, {sum(seconds) / len(seconds):.2f} s "
                  f"on average over {runs} placements (loom-opt, including the estimate)")
            for tier, buffers, size, over, bound in best["arenas"]:
                print(f"  {tier} arena: {buffers} buffers in {size}, {over}% over the "
                      f"{bound} most live at once")
            if only:
                continue
            if best["layers"] == args.max_layers:
                print(f"  (the search's depth limit, --max-layers {args.max_layers}: "
                      f"larger models may fit)")
            # Model state (16 bytes per parameter with Adam) twice the GPUs'
            # memory, at 4096 hidden: TARGETS.md's 90% bar.
            device = spec["device"]["memory_GiB"] * 2**30 * dp
            layers = max(1, round(2 * device / 16 / (12 * 4096 ** 2)))
            r = place(args.loom_opt, cluster_path, DTYPE.get(setup, "bf16"),
                      4096, 32, layers, args, tmp, dp=dp)
            state = r["param_bytes"] * 8 / device
            if r["fits"]:
                print(f"  model state {state:.1f}x GPU memory ({layers} x 4096): "
                      f"{r['fraction']:.1%} of the unlimited throughput, {r['placement']}")
                # The same with ZeRO-Offload's delayed parameter update
                # (opt-in: the forward reads parameters one update behind).
                d = place(args.loom_opt, cluster_path, DTYPE.get(setup, "bf16"),
                          4096, 32, layers, args, tmp, " delayed-update=true", dp=dp)
                print(f"    with the delayed parameter update: {d['fraction']:.1%}, "
                      f"{d['placement']}")
            else:
                print(f"  model state {state:.1f}x GPU memory ({layers} x 4096): does not fit")
            print(f"  published: {PUBLISHED[setup]}")


if __name__ == "__main__":
    main()
