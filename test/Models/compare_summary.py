#!/usr/bin/env python3
# test/Models/compare_summary.py - check `loom summarize --json` against PyTorch's numbers.
"""Usage: compare_summary.py REFERENCE.json SUMMARY.json [SUMMARY.json ...]

REFERENCE is written by tools/export/make_models.py from the PyTorch model: parameter count
(sum of p.numel() over model.parameters()) and forward FLOPs per sample (2 x multiply-adds of
contractions, counted on the fx graph). Each SUMMARY is Loom's summary of the same model
imported from ONNX or from the trace. Parameters must match exactly; FLOPs per sample must
match to 1e-6 relative, since both count the same contractions. Prints one row per summary
and exits 1 on any mismatch.
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    ref = json.load(open(argv[1]))
    ok = True
    print(f"{'source':<40}{'parameters':>14}{'torch':>14}{'FLOPs/sample':>16}{'torch':>16}")
    for path in argv[2:]:
        got = json.load(open(path))
        params_ok = got["parameters"] == ref["parameters"]
        f, rf = got["forward_flops_per_sample"], ref["forward_flops_per_sample"]
        flops_ok = abs(f - rf) <= 1e-6 * max(abs(rf), 1.0)
        print(f"{path.split('/')[-1]:<40}{got['parameters']:>14,}{ref['parameters']:>14,}"
              f"{f:>16,.0f}{rf:>16,.0f}  {'ok' if params_ok and flops_ok else 'MISMATCH'}")
        ok &= params_ok and flops_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
