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

With --execute, every test that imports also runs through the real compiled path:
`loom compile model.onnx -o DIR`, then `loom-run DIR --inputs input_*.pb --outputs ...`, and
each output is compared with the test's output_*.pb at onnx.backend.test's tolerances
(rtol=1e-3, atol=1e-7; bfloat16 at bfloat16 resolution; exact for integers, bools, strings;
same dtype and shape). Each test is then

  passed       every output matches
  wrong        compiled and ran, but an output differs (value, dtype, shape), or loom-run
               failed cleanly on an artifact loom compile produced
  unsupported  `loom compile` failed with a clean diagnostic (exit 1)
  crashed      a signal, an exit code >= 128 (or other than 0/1), "PLEASE submit a bug
               report" in stderr, or a timeout, of loom compile or loom-run
  skipped      does not import, or its test data is not plain tensors (sequences, optionals)

The executed set is compared with onnx_node_executed.txt (--update-executed rewrites it); the
run exits non-zero if anything crashed or a listed test no longer passes.

Run: /usr/bin/python3 test/Conformance/onnx_node_tests.py --loom-translate build/bin/loom-translate
     /usr/bin/python3 test/Conformance/onnx_node_tests.py --execute --loom build/bin/loom \
         --loom-run build/bin/loom-run --loom-translate build/bin/loom-translate
"""

import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DEFAULT_EXPECTED = os.path.join(HERE, "onnx_node_expected.txt")
DEFAULT_EXECUTED = os.path.join(HERE, "onnx_node_executed.txt")


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


# --- Execution through loom compile + loom-run ---------------------------------------------

# onnx.backend.test's defaults (onnx/backend/test/runner: rtol=1e-3, atol=1e-7).
RTOL, ATOL = 1e-3, 1e-7
# bfloat16 keeps 8 significant bits: ONNX 1.12's test data truncates where a compiled cast
# rounds to nearest, so bf16 outputs are compared at one bf16 ulp (2**-7 relative).
BF16_RTOL = 2.0 ** -7


def first_error(stderr):
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    return next((l for l in lines if "error" in l.lower()), lines[0] if lines else "")


def crash_detail(rc, stderr):
    """A short description if (rc, stderr) is a crash, else None."""
    if rc < 0:
        why = f"signal {-rc}"
    elif rc >= 128:
        why = f"exit code {rc}"
    elif "PLEASE submit a bug report" in stderr:
        why = f"exit code {rc}, 'PLEASE submit a bug report'"
    elif rc not in (0, 1):
        why = f"unexpected exit code {rc}"
    else:
        return None
    head = " | ".join(l.strip() for l in stderr.strip().splitlines()[:3])
    return f"{why}: {head}" if head else why


def run_tool(cmd, timeout, env=None):
    """(returncode or None on timeout, stderr, seconds)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout:g} s", time.perf_counter() - start
    except OSError as e:  # e.g. the tool is being relinked
        return None, f"cannot run {cmd[0]}: {e}", time.perf_counter() - start
    return proc.returncode, proc.stderr, time.perf_counter() - start


def compare_outputs(paths, expected_paths, infos):
    """'' if every written output matches the expected one, else why not."""
    import onnx
    from onnx import numpy_helper
    for i, (got_path, exp_path, info) in enumerate(zip(paths, expected_paths, infos)):
        tensors = []
        for path in (got_path, exp_path):
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            tensors.append(t)
        g_t, e_t = tensors
        # ONNX 1.12's data holds bfloat16 outputs as UINT16 tensors of the bits.
        bf16 = info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
        e_type = onnx.TensorProto.BFLOAT16 if bf16 else e_t.data_type
        if g_t.data_type != e_type:
            return (f"output {i} ('{info.name}') has dtype "
                    f"{onnx.TensorProto.DataType.Name(g_t.data_type)}, expected "
                    f"{onnx.TensorProto.DataType.Name(e_type)}")
        g, e = numpy_helper.to_array(g_t), numpy_helper.to_array(e_t)
        if bf16:  # to_array gives float32 for BFLOAT16, the bits for UINT16
            g, e = [np.asarray(x).view(np.uint16).astype(np.uint32).__lshift__(16)
                    .view(np.float32) if np.asarray(x).dtype.itemsize == 2 else x
                    for x in (g, e)]
        if g.shape != e.shape:
            return (f"output {i} ('{info.name}') has shape {list(g.shape)}, "
                    f"expected {list(e.shape)}")
        if e.dtype.kind in "fc":
            rtol = BF16_RTOL if bf16 else RTOL
            g64, e64 = g.astype(np.complex128 if e.dtype.kind == "c" else np.float64), \
                e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
            ok = np.allclose(g64, e64, rtol=rtol, atol=ATOL, equal_nan=True)
            if not ok:
                bad = ~np.isclose(g64, e64, rtol=rtol, atol=ATOL, equal_nan=True)
                with np.errstate(invalid="ignore"):
                    diff = np.abs(g64 - e64)[bad]  # nan where only one side is nan
                worst = np.nan if np.isnan(diff).any() else np.max(diff)
                at = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
                return (f"output {i} ('{info.name}') differs at {int(bad.sum())} of {bad.size} "
                        f"elements (max abs diff {worst:.3g}; "
                        f"first at {list(map(int, at))}: got {g[at]!r}, expected {e[at]!r})")
        elif not np.array_equal(g, e):
            bad = g != e
            at = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
            return (f"output {i} ('{info.name}') differs at {int(np.sum(bad))} of {bad.size} "
                    f"elements (first at {list(map(int, at))}: got {g[at]!r}, "
                    f"expected {e[at]!r})")
    return ""


def execute_one(tools, model, timeouts):
    """(status, detail, {phase: seconds}, [op types], stderr head) for one node test."""
    stderr = []
    status, detail, times, ops = execute_phases(tools, model, timeouts, stderr)
    return status, detail, times, ops, "\n".join(stderr[-1].splitlines()[:20]) \
        if stderr and status in ("wrong", "crashed", "unsupported") else ""


def execute_phases(tools, model, timeouts, stderr):
    import onnx
    loom_translate, loom, loom_run = tools
    import_timeout, compile_timeout, run_timeout = timeouts
    test_dir = os.path.dirname(model)
    times = {}
    try:
        graph = onnx.load(model, load_external_data=False).graph
    except Exception as e:
        return "skipped", f"model does not load: {e}", times, []
    ops = sorted({n.op_type for n in graph.node})

    # Only tests that import (the import lit test accounts for the rest).
    rc, err, times["import"] = run_tool([loom_translate, "--import-onnx", model], import_timeout)
    if rc != 0:
        why = "timeout" if rc is None else ("crash" if crash_detail(rc, err) else first_error(err))
        why = why.split("error: ", 1)[-1]
        return "skipped", f"does not import: {why}", times, ops

    inits = {t.name for t in graph.initializer}
    declared = [i for i in graph.input if i.name not in inits]
    if any(not v.type.HasField("tensor_type") for v in list(declared) + list(graph.output)):
        return "skipped", "test data is not plain tensors", times, ops
    data = os.path.join(test_dir, "test_data_set_0")
    inputs = sorted(glob.glob(os.path.join(data, "input_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    expected = sorted(glob.glob(os.path.join(data, "output_*.pb")),
                      key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    if not expected or len(expected) != len(graph.output):
        return "skipped", f"{len(expected)} output files for {len(graph.output)} outputs", \
            times, ops
    # The artifact is compiled for the model's declared shapes; a few tests' data does not
    # have them (ONNX 1.12's bfloat16 CastLike tests feed `like` as [1], declared [3, 4]).
    if len(inputs) != len(declared):
        return "skipped", f"{len(inputs)} input files for {len(declared)} inputs", times, ops
    for path, info in zip(inputs, declared):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in info.type.tensor_type.shape.dim]
        if len(dims) != len(t.dims) or any(d is not None and d != v
                                           for d, v in zip(dims, t.dims)):
            return "skipped", (f"test data does not match the model: input '{info.name}' "
                               f"is {list(t.dims)}, declared {dims}"), times, ops

    with tempfile.TemporaryDirectory(prefix="loom-node-") as tmp:
        artifact = os.path.join(tmp, "artifact")
        rc, err, times["compile"] = run_tool([loom, "compile", model, "-o", artifact],
                                             compile_timeout)
        err = err.replace(tmp, "$TMP")  # details stable across runs
        stderr.append(err)
        if rc is None:
            return "crashed", f"loom compile: {err}", times, ops
        crash = crash_detail(rc, err)
        if crash:
            return "crashed", f"loom compile: {crash}", times, ops
        if rc != 0:
            return "unsupported", first_error(err), times, ops

        outputs = [os.path.join(tmp, f"output_{i}.pb") for i in range(len(expected))]
        rc, err, times["run"] = run_tool(
            [loom_run, artifact, "--inputs", ",".join(inputs), "--outputs", ",".join(outputs),
             "--quiet", "--timeout", f"{run_timeout:g}"], run_timeout + 15,
            # Open MPI 4.1's singleton init races on mkdir of its session directory
            # ($TMPDIR/ompi.HOST.UID, removed again at exit): concurrent loom-runs
            # sharing one TMPDIR fail now and then with "File exists".
            env=dict(os.environ, TMPDIR=tmp))
        err = err.replace(tmp, "$TMP")  # details stable across runs
        stderr.append(err)
        if rc is None:
            return "crashed", f"loom-run: {err}", times, ops
        crash = crash_detail(rc, err)
        if crash:
            return "crashed", f"loom-run: {crash}", times, ops
        if rc != 0:
            return "wrong", f"loom-run failed: {first_error(err)}", times, ops
        try:
            why = compare_outputs(outputs, expected, graph.output)
        except Exception as e:
            why = f"cannot compare the outputs: {type(e).__name__}: {e}"
        return ("wrong", why, times, ops) if why else ("passed", "", times, ops)


def check_list(path, achieved, names, results, what, header, update, name_filter):
    """Compares the tests that `achieved` something with the list at `path`:
    prints new ones and regressions (listed tests among `names` that did not),
    and with `update` rewrites the list (under `header`). Returns the
    regressions ([] after an update)."""
    expected = set()
    if os.path.exists(path):
        with open(path) as f:
            expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    if name_filter:
        expected = {e for e in expected if name_filter in e}
    regressions = sorted((expected & set(names)) - set(achieved))
    new = sorted(set(achieved) - expected)
    if new:
        print(f"new {what} ({len(new)}), not yet in {os.path.basename(path)}:")
        for n in new:
            print(f"  {n}")
    if regressions:
        print(f"REGRESSIONS ({len(regressions)}): expected {what}, but did not:")
        for n in regressions:
            print(f"  {n}: {results[n]['status']}: {results[n]['detail']}")
    if update and not name_filter:
        with open(path, "w") as f:
            f.write(header)
            for n in achieved:
                f.write(n + "\n")
        print(f"wrote {path} ({len(achieved)} tests)")
        return []
    return regressions


def main_execute(args, root, models, names):
    tools = (args.loom_translate, args.loom, args.loom_run)
    timeouts = (args.timeout, args.compile_timeout, args.run_timeout)
    results = {}
    start = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(execute_one, tools, m, timeouts): n
                   for n, m in zip(names, models)}
        for fut in concurrent.futures.as_completed(futures):
            status, detail, times, ops, stderr = fut.result()
            results[futures[fut]] = {"status": status, "detail": detail, "ops": ops,
                                     "seconds": {k: round(v, 3) for k, v in times.items()}}
            if stderr:
                results[futures[fut]]["stderr"] = stderr
    wall = time.perf_counter() - start

    kinds = ("passed", "wrong", "unsupported", "crashed", "skipped")
    by = {k: sorted(n for n, r in results.items() if r["status"] == k) for k in kinds}
    if not args.quiet:
        for kind in ("crashed", "wrong", "unsupported", "skipped", "passed"):
            if by[kind]:
                print(f"== {kind} ({len(by[kind])})")
                for n in by[kind]:
                    d = results[n]["detail"]
                    print(f"  {n}" + (f": {d}" if d else ""))
        print(f"wall time {wall:.1f} s with {args.jobs} workers")
    total = len(results)
    print(f"onnx node tests (executed): {total} total, {len(by['passed'])} passed, "
          f"{len(by['wrong'])} wrong, {len(by['unsupported'])} unsupported, "
          f"{len(by['crashed'])} crashed, {len(by['skipped'])} skipped")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"testdata": root, "total": total, "wall_seconds": round(wall, 1),
                       "counts": {k: len(v) for k, v in by.items()},
                       "tests": results}, f, indent=1, sort_keys=True)

    regressions = check_list(
        args.executed, by["passed"], names, results, "passes when executed",
        "# ONNX backend node tests that pass through loom compile + loom-run.\n"
        "# Regenerate with test/Conformance/onnx_node_tests.py --execute --update-executed.\n",
        args.update_executed, args.filter)
    if by["crashed"]:
        print(f"FAIL: {len(by['crashed'])} crashed")
    return 1 if by["crashed"] or regressions else 0


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
    ap.add_argument("--execute", action="store_true",
                    help="compile every test that imports with `loom compile`, run it with "
                         "loom-run and compare its outputs")
    ap.add_argument("--loom", default=shutil.which("loom") or "loom")
    ap.add_argument("--loom-run", default=shutil.which("loom-run") or "loom-run")
    ap.add_argument("--executed", default=DEFAULT_EXECUTED,
                    help="tests that must pass when executed (with --execute)")
    ap.add_argument("--update-executed", action="store_true",
                    help="rewrite the --executed file (with --execute)")
    ap.add_argument("--compile-timeout", type=float, default=120.0)
    ap.add_argument("--run-timeout", type=float, default=60.0)
    args = ap.parse_args()

    root = find_node_tests(args.testdata)
    if not root:
        print("onnx node tests not found (install libonnx-testdata)")
        return 2
    models = sorted(glob.glob(os.path.join(root, "*", "model.onnx")))
    models = [m for m in models if args.filter in os.path.basename(os.path.dirname(m))]
    names = [os.path.basename(os.path.dirname(m)) for m in models]
    if args.execute:
        return main_execute(args, root, models, names)

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

    regressions = check_list(
        args.expected, by["imported"], names, results, "imports",
        "# ONNX backend node tests that loom-translate --import-onnx imports.\n"
        "# Regenerate with test/Conformance/onnx_node_tests.py --update.\n",
        args.update, args.filter)
    if by["crashed"]:
        print(f"FAIL: {len(by['crashed'])} crashed")
    return 1 if by["crashed"] or regressions else 0


if __name__ == "__main__":
    sys.exit(main())
