#!/usr/bin/env python3
"""Checks a --loom-place-memory timeline (Chrome trace-event JSON).

Each lane is one resource, so its events must not overlap. The device's
steps lie between the iteration's start and the next iteration's; the
update's transfers and CPU work may run into the next iteration (resident
parameters wait for each weight's upload, not for all of them), but in the
steady state each lane must be done before its first event comes round
again, one iteration later. The fetches counted
in `otherData` are the fetch events. Prints one line per lane with its
events and busy time, then the iteration's length, and exits non-zero
naming the first violation.
"""
import json
import sys


def main():
    path = sys.argv[1]
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    meta = trace["otherData"]
    lanes = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            lanes[e["tid"]] = e["args"]["name"]
    spans = {tid: [] for tid in lanes}
    for e in events:
        if e["ph"] != "X":
            continue
        if e["tid"] not in spans:
            sys.exit(f"{path}: event '{e['name']}' on unnamed lane {e['tid']}")
        spans[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    end = meta["next_iteration_ms"] * 1e3  # microseconds
    tolerance = 1e-6 * max(1.0, end)
    for tid, name in sorted(lanes.items()):
        busy = 0.0
        ordered = sorted(spans[tid])
        for k, (start, stop, what) in enumerate(ordered):
            last = end if tid == 0 else end + ordered[0][0]
            if start < -tolerance or stop > last + tolerance:
                sys.exit(f"{path}: '{what}' on {name} runs over [{start:.3f}, "
                         f"{stop:.3f}] us, beyond the iteration [0, {end:.3f}] "
                         f"and its lane's first event in the next")
            if k and start + tolerance < ordered[k - 1][1]:
                sys.exit(f"{path}: '{what}' on {name} starts at {start:.3f} us "
                         f"while '{ordered[k - 1][2]}' runs until "
                         f"{ordered[k - 1][1]:.3f} us")
            busy += stop - start
        print(f"{name}: {len(ordered)} events, busy {busy / 1e3:.3f} ms")
    fetches = sum(1 for e in events
                  if e["ph"] == "X" and e["name"].startswith("fetch chunk"))
    if fetches != meta["fetches"]:
        sys.exit(f"{path}: {fetches} fetch events, the placement says "
                 f"{meta['fetches']}")
    print(f"iteration: {end / 1e3:.3f} ms; step: {meta['step_ms']:.3f} ms; "
          f"{fetches} fetches; placement: {meta['placement']}")


if __name__ == "__main__":
    main()
