"""Compares two --loom-plan JSON reports with the time the pass itself took
left out (the wall-clock keys below; every predicted time stays); prints a
line, exits 1 if they differ, naming the first difference. `--ignore KEY`
(repeatable) leaves out more keys, e.g. a counter that differs by design."""
import json
import sys

WALL_CLOCK = {"fold_seconds", "search_seconds", "search_phase_seconds", "verify_seconds",
              "place_seconds", "total_seconds", "estimate_wall_s"}


def strip(node, path=""):
    if isinstance(node, dict):
        return {k: strip(v, f"{path}.{k}") for k, v in node.items()
                if k not in WALL_CLOCK}
    if isinstance(node, list):
        return [strip(v, f"{path}[{i}]") for i, v in enumerate(node)]
    return node


def first_difference(a, b, path="report"):
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length)"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else path


args = sys.argv[1:]
while "--ignore" in args:
    at = args.index("--ignore")
    WALL_CLOCK.add(args[at + 1])
    del args[at:at + 2]
a, b = (strip(json.load(open(p))) for p in args[:2])
where = first_difference(a, b)
if where:
    print(f"reports differ at {where}")
    sys.exit(1)
print(f"same plan and report ({len(a.get('runners_up', []))} runners-up), timings aside")
