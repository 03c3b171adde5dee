#!/usr/bin/env python3
# test/Integration/compare_outputs.py - check loom-run outputs against a reference.
"""Usage: compare_outputs.py --expected REF.npy [--rtol R] [--atol A] OUT.npy...

Every OUT must have REF's dtype and shape and match it elementwise within
|out - ref| <= atol + rtol * |ref| (numpy.allclose). Prints one line per file
and exits 1 if any differs, naming the file, the worst element and its error.
"""
import argparse
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expected", required=True)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("outputs", nargs="+")
    args = parser.parse_args()
    ref = np.load(args.expected)
    ok = True
    for path in args.outputs:
        out = np.load(path)
        if out.dtype != ref.dtype or out.shape != ref.shape:
            print(f"{path}: MISMATCH {out.dtype}{list(out.shape)} vs expected "
                  f"{ref.dtype}{list(ref.shape)}")
            ok = False
            continue
        diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
        bound = args.atol + args.rtol * np.abs(ref.astype(np.float64))
        if np.all(diff <= bound):
            print(f"{path}: OK (max abs error {diff.max():.3g})")
            continue
        worst = np.unravel_index(np.argmax(diff - bound), diff.shape)
        print(f"{path}: MISMATCH at {list(worst)}: {out[worst]} vs {ref[worst]} "
              f"({np.count_nonzero(diff > bound)} of {diff.size} elements out of tolerance)")
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
