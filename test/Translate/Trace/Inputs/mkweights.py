# test/Translate/Trace/Inputs/mkweights.py — writes the weights files a test trace names.
"""Reads a loom-trace JSON and writes, next to it, every storage file its parameters and
constants refer to, so that handwritten traces need no checked-in binaries. Element k of a
tensor holds k + 0.5 (floats), k (integers, wrapped to the dtype) or k % 2 (i1), so inline
constants have recognizable values. Malformed entries (used by error tests) are skipped.

    %python mkweights.py TRACE.json [--truncate BYTES]

--truncate cuts every file it writes to BYTES bytes (for "storage too short" tests).
"""

import json
import os
import struct
import sys

FORMATS = {"f32": "<f", "f64": "<d", "f16": "<e", "i64": "<q", "i32": "<i", "i8": "<b",
           "u8": "<B", "i1": "<B", "bf16": "<H"}


def element(dtype, k):
    if dtype in ("f32", "f64", "f16"):
        return struct.pack(FORMATS[dtype], k + 0.5)
    if dtype == "bf16":                       # upper half of the f32 bit pattern
        return struct.pack("<H", struct.unpack("<I", struct.pack("<f", k + 0.5))[0] >> 16)
    if dtype == "i1":
        return struct.pack("<B", k % 2)
    bits = {"i64": 64, "i32": 32, "i8": 8, "u8": 8}[dtype]
    v = k % (1 << bits)
    if dtype != "u8" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return struct.pack(FORMATS[dtype], v)


def main(argv):
    path = argv[0]
    truncate = int(argv[2]) if len(argv) > 2 and argv[1] == "--truncate" else None
    with open(path) as f:
        doc = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    files = {}
    for entry in doc.get("parameters", []) + doc.get("constants", []):
        try:
            st = entry["storage"]
            n = 1
            for d in entry["shape"]:
                n *= d
            data = b"".join(element(entry["dtype"], k) for k in range(n))
            buf = files.setdefault(st["file"], bytearray())
            end = st["offset"] + len(data)
            if len(buf) < end:
                buf.extend(b"\0" * (end - len(buf)))
            buf[st["offset"]:end] = data
        except (KeyError, TypeError, ValueError, struct.error):
            continue
    for name, buf in files.items():
        if os.path.isabs(name):
            continue
        if truncate is not None:
            buf = buf[:truncate]
        with open(os.path.join(base, name), "wb") as f:
            f.write(bytes(buf))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
