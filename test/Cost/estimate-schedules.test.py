"""Compares the reports of estimate-schedules.test (lit runs this, not a test)."""
import json
import sys

gpipe, ofob, kfkb, inter = (json.load(open(p)) for p in sys.argv[1:5])
print("micro-batches", ofob["batch"]["micro_batches"])
t = lambda r: r["totals"]["step_time_s"]
assert abs(t(gpipe) - t(ofob)) <= 1e-9 * t(ofob), (t(gpipe), t(ofob))
print("gpipe == 1f1b time: ok")
held = lambda r: r["devices"][0]["micro_batches_in_flight"]
assert held(gpipe) > held(kfkb) > held(ofob), (held(gpipe), held(kfkb), held(ofob))
print("in flight: gpipe %d > kfkb %d > 1f1b %d" % (held(gpipe), held(kfkb), held(ofob)))
b = lambda r: r["pipeline"]["bubble_fraction"]
assert b(inter) < b(ofob), (b(inter), b(ofob))
print("interleaved bubble < 1f1b bubble: ok")
