#!/usr/bin/env python3
"""Checks that each update function's spills land in its device's planned
host gradient buffers.

    check_spill_places.py STEP.mlir

STEP.mlir is a step --loom-optimizer-step wrote from a placed module. In
each update function (`@<entry>_update`, or `@<entry>_update_stage<d>` on
pipeline device d), every `loom.spill ... at N` must be one of the
`gradient_offset`s the weights' `loom.placement` gives that device (the
top-level one in a plan of one device, the `pipeline_offsets` entry of
device d in a pipelined plan). Prints how many spills it checked; exits 1
naming the first that lands elsewhere or has no place.
"""
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    offsets = {}  # device (None: the plan of one device) -> gradient offsets
    for line in text.splitlines():
        at = line.find("loom.placement = {")
        if at < 0:
            continue
        placement = line[at + len("loom.placement = {"):]
        on_devices = re.match(r"(.*?)pipeline_offsets = \[((?:\{[^{}]*\}(?:, )?)*)\]",
                              placement)
        if on_devices:
            for entry in re.findall(r"\{([^{}]*)\}", on_devices.group(2)):
                device = re.search(r"device = (\d+) : i64", entry)
                grad = re.search(r"gradient_offset = (\d+)", entry)
                if device and grad:
                    offsets.setdefault(int(device.group(1)), set()).add(int(grad.group(1)))
            placement = placement.replace(on_devices.group(0), on_devices.group(1), 1)
        grad = re.search(r"gradient_offset = (\d+)", placement[:placement.find("}")])
        if grad:
            offsets.setdefault(None, set()).add(int(grad.group(1)))
    functions = re.split(r"\n  func\.func ", text)
    checked = 0
    for body in functions[1:]:
        name = re.match(r"(?:private )?@([\w.$-]+)", body)
        m = re.fullmatch(r".*_update(?:_stage(\d+))?", name.group(1)) if name else None
        if not m:
            continue
        device = int(m.group(1)) if m.group(1) is not None else None
        for spill in re.finditer(r"loom\.spill %[\w#]+(?: at (\d+))?", body):
            if spill.group(1) is None or int(spill.group(1)) not in offsets.get(device, set()):
                where = "no place" if spill.group(1) is None else f"offset {spill.group(1)}"
                sys.exit(f"check_spill_places.py: @{name.group(1)} spills at {where}, "
                         f"not a gradient_offset of its device "
                         f"({sorted(offsets.get(device, set()))})")
            checked += 1
    print(f"{checked} spills at their device's gradient_offset")


if __name__ == "__main__":
    main()
