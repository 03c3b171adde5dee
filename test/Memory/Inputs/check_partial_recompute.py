"""Checks partial recomputation against the two policies it lies between
(JSON reports of --loom-estimate on one stage): the IR placement marked,
estimated under selective recomputation, keeps fewer activation bytes than
selective recomputation alone and more than full recomputation, and
re-runs more forward time than the first and less than the second. Each
marked segment re-runs on its own, so the bytes re-run at once stay below
selective recomputation's whole kept set."""
import json
import sys

selective, partial, full = (json.load(open(p)) for p in sys.argv[1:4])


def stage(report):
    (s,) = report["stages"]
    return s


kept = [stage(r)["saved_activation_bytes"] for r in (selective, partial, full)]
rerun = [stage(r)["recompute_s"] for r in (selective, partial, full)]
assert kept[0] > kept[1] > kept[2], kept
assert rerun[0] < rerun[1] < rerun[2], rerun
peak = [r["devices"][0]["memory"]["activations"] for r in (selective, partial, full)]
assert peak[0] > peak[1] > peak[2], peak
print("kept per micro-batch: selective %.1f MiB > partial %.1f MiB > full %.1f MiB"
      % tuple(k / 2**20 for k in kept))
print("re-run per micro-batch: selective %.3f ms < partial %.3f ms < full %.3f ms"
      % tuple(t * 1e3 for t in rerun))
