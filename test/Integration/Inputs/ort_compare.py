#!/usr/bin/env python3
# test/Integration/Inputs/ort_compare.py - check loom-run outputs against onnxruntime.
"""Usage: ort_compare.py MODEL.onnx --inputs A.npy[,B.npy...] --outputs X.npy[,Y.npy...]
                         [--rtol R] [--atol A] [--python VENV_PYTHON]

Runs MODEL.onnx with onnxruntime (CPU, one thread) on the inputs, given in the
model's graph-input order as loom-run takes them, writes each of its outputs
beside loom-run's as <X>.ort.npy, and checks every loom-run output against
onnxruntime's (graph-output order) with ../compare_outputs.py at the given
tolerances. Exits 1 if any differs.

onnxruntime is optional: when this interpreter cannot import it, the script
re-runs itself under --python (scripts/setup.sh installs onnxruntime into
build/onnxruntime-venv) if that exists, and otherwise prints one SKIP line and
exits 0.
"""
import argparse
import os
import subprocess
import sys

COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compare_outputs.py")
# Set when this script re-runs itself under --python: the first interpreter,
# which also runs compare_outputs.py (its numpy is the one the tests use).
PARENT = "LOOM_ORT_COMPARE_PARENT_PYTHON"


def load_onnxruntime(fallback_python, argv):
    """onnxruntime and numpy, or None after a SKIP line; may exec `fallback_python`."""
    try:
        import numpy
        import onnxruntime
        return onnxruntime, numpy
    except ImportError as e:
        reason = str(e)
    if (fallback_python and os.path.exists(fallback_python)
            and not os.environ.get(PARENT)):
        os.environ[PARENT] = sys.executable
        os.execv(fallback_python, [fallback_python, os.path.abspath(__file__)] + argv)
    print(f"ort_compare: SKIP: onnxruntime not available ({reason}); "
          f"scripts/setup.sh installs it into build/onnxruntime-venv", flush=True)
    return None


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--inputs", required=True, help="comma-separated .npy, graph-input order")
    parser.add_argument("--outputs", required=True, help="comma-separated .npy, graph-output order")
    parser.add_argument("--rtol", default="1e-4")
    parser.add_argument("--atol", default="1e-5")
    parser.add_argument("--python",
                        help="an interpreter with onnxruntime, tried if this one has none")
    args = parser.parse_args(argv)
    loaded = load_onnxruntime(args.python, argv)
    if loaded is None:
        return 0
    ort, np = loaded

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    in_paths, out_paths = args.inputs.split(","), args.outputs.split(",")
    graph_inputs, graph_outputs = session.get_inputs(), session.get_outputs()
    if len(in_paths) != len(graph_inputs) or len(out_paths) != len(graph_outputs):
        print(f"ort_compare: {args.model} has {len(graph_inputs)} inputs and "
              f"{len(graph_outputs)} outputs; given {len(in_paths)} and {len(out_paths)}")
        return 1
    refs = session.run(None, {g.name: np.load(p) for g, p in zip(graph_inputs, in_paths)})
    print(f"ort_compare: onnxruntime {ort.__version__} on {args.model}:", flush=True)
    status = 0
    for path, ref in zip(out_paths, refs):
        expected = os.path.splitext(path)[0] + ".ort.npy"
        np.save(expected, ref)
        status |= subprocess.call([os.environ.get(PARENT, sys.executable), COMPARE,
                                   "--expected", expected, "--rtol", args.rtol,
                                   "--atol", args.atol, path])
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
