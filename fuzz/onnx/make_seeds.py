#!/usr/bin/env python3
# fuzz/onnx/make_seeds.py - writes the seed corpus of the ONNX importer fuzzer.
"""Usage: make_seeds.py [OUT_DIR]   (default: fuzz/onnx/corpus next to this script)

Seeds are small, valid models that reach many importer paths: every case of
test/Translate/ONNX/Inputs/make_onnx.py that needs no side file, plus the smallest ONNX
backend node test model (opset 13 or later) of each op type found in Debian's libonnx-testdata (if installed).
Each seed is written as seed-<name>.onnx; files over 16 KB are skipped so the corpus stays
small enough to commit. Inputs found by fuzzing (crashes, once fixed) live next to the seeds as
crash-*.onnx and are kept by this script.
"""

import glob
import importlib.util
import io
import os
import sys
import contextlib

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_ONNX = os.path.join(HERE, "..", "..", "test", "Translate", "ONNX", "Inputs",
                         "make_onnx.py")
MAX_BYTES = 16 * 1024
SKIP_CASES = {"external_weight", "external_missing", "external_short", "truncated"}


def load_make_onnx():
    spec = importlib.util.spec_from_file_location("make_onnx", MAKE_ONNX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(out_dir, name, data):
    if len(data) > MAX_BYTES:
        return False
    with open(os.path.join(out_dir, f"seed-{name}.onnx"), "wb") as f:
        f.write(data)
    return True


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "seed-*.onnx")):
        os.remove(old)
    count = 0
    mk = load_make_onnx()
    for name in sorted(mk.CASES):
        if name in SKIP_CASES:
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            m = mk.CASES[name](os.path.join(out_dir, "unused.onnx"))
        if m is not None and write(out_dir, name, m.SerializeToString()):
            count += 1
    # The smallest node test of each op type.
    best = {}
    for path in glob.glob("/usr/share/libonnx-testdata/data/node/*/model.onnx"):
        size = os.path.getsize(path)
        try:
            m = onnx.load(path)
        except Exception:
            continue
        opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
                    default=0)
        if opset < 13:
            continue  # rejected before any node is looked at
        ops = tuple(sorted({n.op_type for n in m.graph.node}))
        if ops and (ops not in best or size < best[ops][0]):
            best[ops] = (size, path)
    for ops, (size, path) in sorted(best.items()):
        if len(ops) > 1:
            continue
        with open(path, "rb") as f:
            if write(out_dir, os.path.basename(os.path.dirname(path)), f.read()):
                count += 1
    print(f"wrote {count} seeds to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
