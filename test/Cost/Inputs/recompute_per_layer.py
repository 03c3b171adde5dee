"""Activation bytes one transformer layer keeps for backward, in s*b*h.

Usage: recompute_per_layer.py S B H SHALLOW.json DEEP.json LAYERS_APART
Two estimate reports of the same GPT at two depths: their difference over
LAYERS_APART layers is one layer's share, printed in units of s*b*h bytes
(a 16-bit [s, b, h] tensor is 2 units), with the recomputed forward's share
of the stage's forward + backward time.
"""
import json
import sys

s, b, h = (int(x) for x in sys.argv[1:4])
shallow, deep = (json.load(open(p)) for p in sys.argv[4:6])
apart = int(sys.argv[6])
per_layer = (deep["stages"][0]["saved_activation_bytes"] -
             shallow["stages"][0]["saved_activation_bytes"]) / apart
stage = deep["stages"][0]
share = stage["recompute_s"] / (stage["forward_s"] + stage["backward_s"])
print("%s s=%d: %g sbh per layer, recomputed forward %.1f%% of the time"
      % (deep["recompute"], s, per_layer / (s * b * h), 100 * share))
