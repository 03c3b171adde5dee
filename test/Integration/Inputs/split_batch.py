#!/usr/bin/env python3
# test/Integration/Inputs/split_batch.py - per-sample inputs and their joined outputs.
"""Reference outputs for micro-batched plans from a single-device artifact
compiled at batch 1:

  split_batch.py split IN.npy OUTDIR      writes OUTDIR/sample<i>.npy, one per row
  split_batch.py join OUT.npy A.npy ...   concatenates the files along dim 0
"""
import os
import sys

import numpy as np


def main():
    mode = sys.argv[1]
    if mode == "split":
        x = np.load(sys.argv[2])
        for i in range(x.shape[0]):
            np.save(os.path.join(sys.argv[3], f"sample{i}.npy"), x[i:i + 1])
    elif mode == "join":
        np.save(sys.argv[2], np.concatenate([np.load(p) for p in sys.argv[3:]]))
    else:
        sys.exit(f"split_batch.py: unknown mode '{mode}'")


if __name__ == "__main__":
    main()
