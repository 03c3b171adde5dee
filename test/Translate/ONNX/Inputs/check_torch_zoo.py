#!/usr/bin/env python3
# test/Translate/ONNX/Inputs/check_torch_zoo.py - import real PyTorch exports and check values.
"""Usage: check_torch_zoo.py LOOM_TRANSLATE OUT_DIR MODEL...

For each zoo model (tools/export/models.py, `small` config): exports it with torch.onnx at
opset 17 exactly as the exporter writes it (shape arithmetic left in), imports it with
`loom-translate --import-onnx`, runs the imported loom IR with the numpy reference interpreter
(test/Conformance/loom_reference.py) on the zoo's example inputs, and compares with PyTorch's
output. Prints `<model>: ok (...)` or `<model>: MISMATCH (...)` and exits 1 on any mismatch.
"""

import io
import os
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
sys.path.insert(0, os.path.join(ROOT, "test", "Conformance"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import loom_reference  # noqa: E402
import models  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tool, out_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    ok = True
    for name in names:
        model = models.build(name, "small")
        inputs = models.example_inputs(name, "small")
        path = os.path.join(out_dir, name + ".onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs),
                              output_names=models.ZOO[name].output_names, opset_version=17,
                              do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE)
        with torch.no_grad():
            expected = model(*inputs.values()).numpy()
        proc = subprocess.run([tool, "--import-onnx", path, "--mlir-print-op-generic"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{name}: IMPORT FAILED\n{proc.stderr}")
            ok = False
            continue
        ops = sorted({l.split('"')[1] for l in proc.stdout.splitlines()
                      if '"loom.' in l})
        got = loom_reference.run_module(proc.stdout, [v.numpy() for v in inputs.values()],
                                        out_dir)[0]
        err = float(np.max(np.abs(got - expected)) / max(1e-6, np.max(np.abs(expected))))
        good = got.shape == expected.shape and err < 1e-4
        ok &= good
        print(f"{name}: {'ok' if good else 'MISMATCH'} (max relative error {err:.1e}; "
              f"{' '.join(ops)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
