"""Checks an estimate with activations offloaded to the host against the
same estimate keeping them on the device (JSON reports of --loom-estimate):
each pipeline device's host memory holds its micro-batches in flight times
its stages' offloaded bytes, the device keeps only the staging buffers and
what the step returns (held on the device until the step ends), and each
stage's time grows by exactly its stalls."""
import json
import sys

device, host = (json.load(open(p)) for p in sys.argv[1:3])
for kept, moved in zip(device["stages"], host["stages"]):
    assert moved["saved_activation_bytes"] < kept["saved_activation_bytes"], (kept, moved)
    assert (moved["offloaded_activation_bytes"] + moved["saved_activation_bytes"] ==
            kept["saved_activation_bytes"]), (kept, moved)
    for phase in ("forward", "backward"):
        grown = moved[phase + "_s"] - kept[phase + "_s"]
        stall = moved["offload_%s_stall_s" % phase]
        assert abs(grown - stall) < 1e-12, (phase, grown, stall)
for d, (kept, moved) in enumerate(zip(device["devices"], host["devices"])):
    stage = host["stages"][d]
    n = moved["micro_batches_in_flight"]
    assert moved["host_activation_bytes"] == n * stage["offloaded_activation_bytes"]
    assert moved["memory"]["activations"] < kept["memory"]["activations"]
    print("device %d: %d in flight, %.1f MiB to the host, %.1f MiB kept on the "
          "device instead of %.1f MiB, stalls %.3f + %.3f ms"
          % (d, n, moved["host_activation_bytes"] / 2**20,
             moved["memory"]["activations"] / 2**20,
             kept["memory"]["activations"] / 2**20,
             stage["offload_forward_stall_s"] * 1e3,
             stage["offload_backward_stall_s"] * 1e3))
print("step %.2f%% longer" % (100 * (host["totals"]["step_time_s"] /
                                     device["totals"]["step_time_s"] - 1)))
