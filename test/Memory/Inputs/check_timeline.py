#!/usr/bin/env python3
"""Checks a --loom-place-memory timeline (Chrome trace-event JSON).

Each pipeline device is a process and each of its resources a lane, so a
lane's events must not overlap. A device's steps lie between its
iteration's start and its next iteration's (its "next iteration" mark); the
update's transfers and CPU work may run into the next iteration (resident
parameters wait for each weight's upload, not for all of them), but in the
steady state each lane must be done before its first event comes round
again, one iteration later. The fetches counted in `otherData` are the
fetch events. Prints one line per lane with its events and busy time, then
the iteration's length, and exits non-zero naming the first violation.
"""
import json
import sys


def main():
    path = sys.argv[1]
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    meta = trace["otherData"]
    devices = {}  # pid -> name
    lanes = {}  # (pid, tid) -> name
    ends = {}  # pid -> the next iteration's start, microseconds
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            devices[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            lanes[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "i":
            ends[e["pid"]] = e["ts"]
    spans = {lane: [] for lane in lanes}
    for e in events:
        if e["ph"] != "X":
            continue
        lane = (e["pid"], e["tid"])
        if lane not in spans:
            sys.exit(f"{path}: event '{e['name']}' on unnamed lane {lane}")
        spans[lane].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    if meta["devices"] != len(devices) or set(ends) != set(devices):
        sys.exit(f"{path}: {len(devices)} devices, {len(ends)} with their next "
                 f"iteration marked, the placement says {meta['devices']}")
    for (pid, tid), name in sorted(lanes.items()):
        end = ends[pid]
        tolerance = 1e-6 * max(1.0, end)
        busy = 0.0
        ordered = sorted(spans[(pid, tid)])
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
        prefix = f"device {pid} " if len(devices) > 1 else ""
        print(f"{prefix}{name}: {len(ordered)} events, busy {busy / 1e3:.3f} ms")
    fetches = sum(1 for e in events
                  if e["ph"] == "X" and e["name"].startswith("fetch chunk"))
    if fetches != meta["fetches"]:
        sys.exit(f"{path}: {fetches} fetch events, the placement says "
                 f"{meta['fetches']}")
    print(f"iteration: {meta['next_iteration_ms']:.3f} ms; step: "
          f"{meta['step_ms']:.3f} ms; {fetches} fetches; placement: "
          f"{meta['placement']}")


if __name__ == "__main__":
    main()
