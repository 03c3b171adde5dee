#!/usr/bin/env python3
"""The buffers each function of a compiled step allocates for itself.

Runs `loom-opt` (from PATH) through the CPU lowering up to bufferization
(docs/lowering.md, steps 0 to 5) and counts, per function, the
`memref.alloc`/`memref.alloca` of static shape left: memory outside the
static memory plan's arenas and the weights' buffers, which the runtime
passes in. Results become out-parameters the runtime allocates, so they
are not counted.

    bench/step_allocations.py STEP.mlir [--without loom-fold-into-contractions]
        [--with 'loom-fold-into-contractions{allow-excess-precision=1}']

`--without PASS` drops one of our passes from the pipeline, to measure
what it saves; `--with 'PASS{OPTIONS}'` runs it with those options (as
`loom compile`'s flags would). PASSES mirrors passes/Lower/LowerToCPU.cpp's steps up to
bufferization; change both together.
"""
import argparse
import re
import subprocess
import sys
from collections import defaultdict

PASSES = [
    "loom-split-stages", "loom-weights-to-arguments", "loom-partition",
    "loom-stage-transfers", "loom-arena-buffers", "loom-to-linalg",
    "loom-fold-into-contractions", "loom-tile-narrow-contractions",
    "loom-collectives-to-runtime",
    "convert-shard-to-mpi", "canonicalize", "loom-clone-casts-for-fusion",
    "func.func(linalg-fuse-elementwise-ops)", "loom-write-back-updates",
    "eliminate-empty-tensors",
    "one-shot-bufferize{bufferize-function-boundaries=1 "
    "function-boundary-type-conversion=identity-layout-map}",
    "buffer-results-to-out-params{hoist-static-allocs=1 modify-public-functions=1}",
]
ELEMENT_BYTES = {"f64": 8, "i64": 8, "index": 8, "f32": 4, "i32": 4,
                 "f16": 2, "bf16": 2, "i16": 2, "i8": 1, "i1": 1}
FUNC = re.compile(r"\s*func\.func (?:private |public )?@([\w.$-]+)")
ALLOC = re.compile(r"memref\.alloca?\(\).*: memref<((?:\d+x)*)(\w+)>")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step")
    p.add_argument("--without", action="append", default=[],
                   help="a pass of the pipeline to leave out")
    p.add_argument("--with", dest="options", action="append", default=[],
                   help="a pass of the pipeline with options: 'PASS{OPTIONS}'")
    args = p.parse_args()
    options = {x.split("{", 1)[0]: x for x in args.options}
    unknown = [x for x in args.without + list(options) if x not in PASSES]
    if unknown:
        sys.exit(f"step_allocations.py: no pass {unknown[0]!r} in the pipeline")
    both = [x for x in options if x in args.without]
    if both:
        sys.exit(f"step_allocations.py: {both[0]!r} is both left out and given options")
    pipeline = ",".join(options.get(x, x) for x in PASSES if x not in args.without)
    try:
        run = subprocess.run(["loom-opt", args.step,
                              f"--pass-pipeline=builtin.module({pipeline})"],
                             capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("step_allocations.py: no loom-opt on PATH (build/bin)")
    if run.returncode:
        sys.exit(f"step_allocations.py: loom-opt failed on {args.step}:\n"
                 + run.stderr[-4000:])
    per = defaultdict(lambda: [0, 0, 0])  # count, bytes, largest
    func = None
    for line in run.stdout.splitlines():
        if m := FUNC.match(line):
            func = m.group(1)
            per[func]
        if func and (m := ALLOC.search(line)):
            n = 1
            for d in filter(None, m.group(1).split("x")):
                n *= int(d)
            if m.group(2) not in ELEMENT_BYTES:
                sys.exit(f"step_allocations.py: @{func} allocates "
                         f"{m.group(2)} elements, of a size this script "
                         "does not know")
            size = n * ELEMENT_BYTES[m.group(2)]
            f = per[func]
            f[0] += 1
            f[1] += size
            f[2] = max(f[2], size)
    for name, (count, total, largest) in per.items():
        print(f"{name}: {count} allocations, {total} bytes, largest {largest}")


if __name__ == "__main__":
    main()
