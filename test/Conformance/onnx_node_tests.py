#!/usr/bin/env python3
# test/Conformance/onnx_node_tests.py - run the ONNX backend node tests through the importer.
"""Imports every model of the ONNX backend node test suite (Debian's libonnx-testdata,
.../onnx/backend/test/data/node/<test>/model.onnx) with `loom-translate --import-onnx` and
classifies each one:

  imported     exit 0: the module was built and verified, and (unless --no-numerics) the
               numpy reference interpreter (loom_reference.py) run on the imported IR
               reproduces the test's expected outputs, or cannot evaluate it (noted)
  wrong        imported, but the reference run of the IR disagrees with the expected
               outputs: a semantic bug in a conversion
  unsupported  a clean error that says "unsupported" (an op, an opset, a run-time shape)
  failed       any other clean error (exit 1)
  crashed      a signal, an exit code other than 0/1, or the timeout

Prints the counts and the lists, writes a JSON summary (--json), and compares the imported set
with the committed expectation file (one test name per line). Exits non-zero if anything
crashed or if a test in the expectation file no longer imports; new imports are reported and
`--update` rewrites the expectation file.

Run: /usr/bin/python3 test/Conformance/onnx_node_tests.py --loom-translate build/bin/loom-translate
"""

import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DEFAULT_EXPECTED = os.path.join(HERE, "onnx_node_expected.txt")


def find_node_tests(explicit):
    """Directory holding <test>/model.onnx for the node tests."""
    if explicit:
        return explicit
    candidates = []
    try:
        out = subprocess.run(["dpkg", "-L", "libonnx-testdata"], capture_output=True,
                             text=True, check=False).stdout
        for line in out.splitlines():
            if line.endswith("/model.onnx") and "/node/" in line:
                candidates.append(os.path.dirname(os.path.dirname(line)))
                break
    except OSError:
        pass
    candidates += ["/usr/share/libonnx-testdata/data/node"]
    for c in candidates:
        if glob.glob(os.path.join(c, "*", "model.onnx")):
            return c
    return None


def load_pb_tensors(test_dir, prefix):
    import onnx
    from onnx import numpy_helper
    out = []
    data = os.path.join(test_dir, "test_data_set_0")
    i = 0
    while os.path.exists(os.path.join(data, f"{prefix}_{i}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(data, f"{prefix}_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        out.append(numpy_helper.to_array(t))
        i += 1
    return out


def check_numerics(ir, model):
    """'ok', 'skipped: why' or 'wrong: why' for the imported IR of a node test."""
    import loom_reference as ref
    import onnx
    test_dir = os.path.dirname(model)
    try:
        inputs = load_pb_tensors(test_dir, "input")
        expected = load_pb_tensors(test_dir, "output")
    except Exception as e:  # sequences, optionals, ...
        return f"skipped: test data: {e}"
    # numpy has no bfloat16: the test data holds the raw bits (uint16); the
    # reference interpreter computes bf16 as float32 rounded to bf16.
    graph = onnx.load(model, load_external_data=False).graph
    declared = [i for i in graph.input if i.name not in {t.name for t in graph.initializer}]

    def bf16(values, infos):
        return [np.asarray(v).astype(np.uint32).__lshift__(16).view(np.float32)
                if info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 else v
                for v, info in zip(values, infos)]
    inputs = bf16(inputs, declared)
    expected = bf16(expected, graph.output)
    # ONNX 1.12's test data truncates to bf16 where the importer's cast rounds
    # to nearest: compare bf16 outputs at bf16 precision.
    low_precision = [o.type.tensor_type.elem_type in (onnx.TensorProto.BFLOAT16,
                                                      onnx.TensorProto.FLOAT16)
                     for o in graph.output]
    if not expected:
        return "skipped: no test data"
    try:
        got = ref.run_module(ir, inputs, test_dir)
    except ref.Unsupported as e:
        return f"skipped: reference interpreter: {e}"
    except Exception as e:
        return f"wrong: reference run failed: {type(e).__name__}: {e}"
    if len(got) != len(expected):
        return f"wrong: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e, low) in enumerate(zip(got, expected, low_precision)):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return f"wrong: output {i} has shape {list(g.shape)}, expected {list(e.shape)}"
        if e.dtype.kind in "fc":
            tol = 1e-2 if low else 1e-3
            ok = np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=tol,
                             atol=tol * 1e-2, equal_nan=True)
        else:
            ok = np.array_equal(g, e)
        if not ok:
            with np.errstate(invalid="ignore"):
                diff = np.abs(g.astype(np.float64) - e.astype(np.float64))
            return f"wrong: output {i} differs (max abs diff {np.nanmax(diff):.3g})"
    return "ok"


def classify(tool, model, timeout, numerics):
    start = time.perf_counter()
    try:
        proc = subprocess.run([tool, "--import-onnx", model, "--mlir-print-op-generic"],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crashed", f"timeout after {timeout} s", time.perf_counter() - start
    elapsed = time.perf_counter() - start
    err = proc.stderr.strip()
    first = next((l for l in err.splitlines() if "error:" in l), err[:300])
    if proc.returncode == 0:
        if not numerics:
            return "imported", "", elapsed
        verdict = check_numerics(proc.stdout, model)
        if verdict.startswith("wrong"):
            return "wrong", verdict[len("wrong: "):], elapsed
        return "imported", "" if verdict == "ok" else verdict, elapsed
    if proc.returncode != 1:
        return "crashed", f"exit code {proc.returncode}: {err[-300:]}", elapsed
    if "unsupported" in err:
        return "unsupported", first, elapsed
    return "failed", first, elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom-translate", default=shutil.which("loom-translate") or "loom-translate")
    ap.add_argument("--testdata", help="directory with <test>/model.onnx (default: from dpkg)")
    ap.add_argument("--expected", default=DEFAULT_EXPECTED)
    ap.add_argument("--json", help="write the per-test results here")
    ap.add_argument("--update", action="store_true", help="rewrite the expectation file")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--filter", default="", help="only tests whose name contains this")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    ap.add_argument("--no-numerics", action="store_true",
                    help="do not run the imported IR with the reference interpreter")
    args = ap.parse_args()

    root = find_node_tests(args.testdata)
    if not root:
        print("onnx node tests not found (install libonnx-testdata)")
        return 2
    models = sorted(glob.glob(os.path.join(root, "*", "model.onnx")))
    models = [m for m in models if args.filter in os.path.basename(os.path.dirname(m))]
    names = [os.path.basename(os.path.dirname(m)) for m in models]

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(classify, args.loom_translate, m, args.timeout,
                               not args.no_numerics): n
                   for n, m in zip(names, models)}
        for fut in concurrent.futures.as_completed(futures):
            status, detail, secs = fut.result()
            results[futures[fut]] = {"status": status, "detail": detail,
                                     "seconds": round(secs, 3)}

    by = {k: sorted(n for n, r in results.items() if r["status"] == k)
          for k in ("imported", "wrong", "unsupported", "failed", "crashed")}
    if not args.quiet:
        for kind in ("crashed", "wrong", "failed", "unsupported"):
            if by[kind]:
                print(f"== {kind} ({len(by[kind])})")
                for n in by[kind]:
                    print(f"  {n}: {results[n]['detail']}")
        print(f"== imported ({len(by['imported'])})")
        for n in by["imported"]:
            d = results[n]["detail"]
            print(f"  {n}" + (f"  ({d})" if d else ""))
    total = len(results)
    checked = sum(1 for n in by["imported"] if not results[n]["detail"])
    print(f"onnx node tests: {total} total, {len(by['imported'])} imported "
          f"({checked} checked numerically), {len(by['wrong'])} wrong, "
          f"{len(by['unsupported'])} unsupported, {len(by['failed'])} failed, "
          f"{len(by['crashed'])} crashed")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"testdata": root, "total": total,
                       "counts": {k: len(v) for k, v in by.items()},
                       "tests": results}, f, indent=1, sort_keys=True)

    expected = set()
    if os.path.exists(args.expected):
        with open(args.expected) as f:
            expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    if args.filter:
        expected = {e for e in expected if args.filter in e}
    imported = set(by["imported"])
    regressions = sorted((expected & set(names)) - imported)
    new = sorted(imported - expected)
    if new:
        print(f"new imports ({len(new)}), not yet in {os.path.basename(args.expected)}:")
        for n in new:
            print(f"  {n}")
    if regressions:
        print(f"REGRESSIONS ({len(regressions)}): expected to import, but did not:")
        for n in regressions:
            print(f"  {n}: {results[n]['status']}: {results[n]['detail']}")
    if args.update and not args.filter:
        with open(args.expected, "w") as f:
            f.write("# ONNX backend node tests that loom-translate --import-onnx imports.\n"
                    "# Regenerate with test/Conformance/onnx_node_tests.py --update.\n")
            for n in by["imported"]:
                f.write(n + "\n")
        print(f"wrote {args.expected} ({len(by['imported'])} tests)")
        regressions = []
    if by["crashed"]:
        print(f"FAIL: {len(by['crashed'])} crashed")
    return 1 if by["crashed"] or regressions else 0


if __name__ == "__main__":
    sys.exit(main())
