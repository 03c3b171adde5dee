#!/usr/bin/python3
"""Measures the host link, GEMM rate and CPU Adam rate that Loom's
memory-placement cost model assumes, and compares them with a cluster preset.

Memory placement (lib/Memory/Placement.cpp) moves parameters, gradients and
optimizer state between device and host. It assumes that host<->device
copies run at the host link's rated per-direction bandwidth, in both
directions at once, overlapped fully with compute, and that a CPU Adam step
streams optimizer state at the preset's host.cpu_adam_GBps. This script
builds bench/gpu/host_link_probe.cu, runs it (one JSON object), saves the
JSON and prints a markdown table of measured against assumed figures.

Usage:
  bench/gpu_host_link.py [--out FILE] [--build-dir DIR] [--binary PATH]
                         [--cluster clusters/dgx-h100.json]
                         [--cpu-only] [--adam-params N] [--repeats R]
  bench/gpu_host_link.py --build-only        # compile, run nothing
  bench/gpu_host_link.py --model-only        # the preset's figures only
  bench/gpu_host_link.py --from-json FILE    # table from a saved run

Needs only Python's standard library; building needs nvcc (default
/usr/local/cuda/bin/nvcc), running a prebuilt --binary does not.
"""

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(REPO, "bench", "gpu", "host_link_probe.cu")
CUDA = "/usr/local/cuda"

# Per-lane PCIe bandwidth, GB/s per direction after line encoding, as
# pcieLaneGBps() in lib/Cost/Cluster.cpp has it. SpecReader::readHost() sets
# host.link's bandwidth to pcieLaneGBps(gen) * width (unless the spec gives
# bandwidth_GBps), and Placement.cpp uses that figure for H2D and for D2H
# alike. No bus_efficiency applies to the host link: bus_efficiency belongs
# to the levels, and only collectives (lib/Cost/Collectives.cpp) apply it.
PCIE_LANE_GBPS = {3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}

# PCIe generation by link speed as Linux's sysfs reports it ("32.0 GT/s PCIe").
PCIE_GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}

# Loom's accounting of Adam state per parameter (adamStateBytesPerParameter,
# include/loom/Cost/Estimate.h): fp32 master copy + m + v for bf16 parameters.
ADAM_STATE_BYTES = 12
# What the probe's Adam step reads and writes per parameter: reads p, g, m, v,
# writes p, m, v, all fp32.
ADAM_TRAFFIC_BYTES = 28


def model_figures(cluster_path):
    """The figures Loom derives from a cluster spec, as its C++ derives them."""
    with open(cluster_path) as f:
        spec = json.load(f)
    dev, host = spec["device"], spec["host"]
    link = host["link"]
    if "bandwidth_GBps" in link:  # an override, or a c2c link
        link_gbps = float(link["bandwidth_GBps"])
        link_how = "bandwidth_GBps given in the spec"
    else:
        gen, width = int(link["gen"]), int(link["width"])
        link_gbps = PCIE_LANE_GBPS[gen] * width
        link_how = "PCIe gen%d x%d: %.3f GB/s/lane x %d" % (
            gen, width, PCIE_LANE_GBPS[gen], width)
    # Efficiency defaults to 1 when the spec leaves it out (struct Efficiency
    # in include/loom/Cost/Cluster.h).
    matmul_eff = float(dev.get("efficiency", {}).get("matmul", {})
                       .get("compute", 1.0))
    peak_bf16 = float(dev["peak_TFLOPs"]["bf16"])
    # ClusterSpec::devicesPerNode(): the fanouts of the levels inside a node
    # (everything before the first network level).
    per_node = 1
    for level in spec.get("levels", []):
        if level["kind"] in ("infiniband", "roce", "ethernet"):
            break
        per_node *= int(level["fanout"])
    adam_node = float(host.get("cpu_adam_GBps", 0))
    return {
        "cluster": spec["name"],
        "device_name": dev["name"],
        "link_GBps": link_gbps,
        "link_how": link_how,
        "link_latency_us": float(link.get("latency_us", 0)),
        "peak_bf16_TFLOPs": peak_bf16,
        "matmul_compute_eff": matmul_eff,
        "gemm_TFLOPs": peak_bf16 * matmul_eff,
        "kernel_overhead_us": float(dev.get("kernel_overhead_us", 0)),
        "devices_per_node": per_node,
        "cpu_cores": int(host.get("cpu_cores", 0)),
        "cpu_adam_GBps_node": adam_node,
        # Placement.cpp: adamRate = host.cpuAdamBandwidth / perNode.
        "cpu_adam_GBps_device": adam_node / per_node,
    }


def build(build_dir, nvcc):
    """Compiles the probe unless an up-to-date binary is already there."""
    os.makedirs(build_dir, exist_ok=True)
    binary = os.path.join(build_dir, "host_link_probe")
    if (os.path.exists(binary)
            and os.path.getmtime(binary) >= os.path.getmtime(SOURCE)
            and os.path.getmtime(binary) >= os.path.getmtime(__file__)):
        return binary
    cmd = [nvcc, "-O3", "-arch=sm_90",
           # Lets GCC vectorize sqrtf in the Adam loop (no errno to set).
           "-Xcompiler", "-fno-math-errno",
           # cuBLAS is linked dynamically (its static archives are far too
           # big to carry); the rpath finds it without LD_LIBRARY_PATH.
           "-Xlinker", "-rpath," + os.path.join(CUDA, "lib64"),
           "-o", binary, SOURCE, "-lcublas"]
    print("building: " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    return binary


def run_probe(binary, args):
    cmd = [binary]
    if args.cpu_only:
        cmd.append("--cpu-only")
    if args.adam_params:
        cmd += ["--adam-params", str(args.adam_params)]
    if args.repeats:
        cmd += ["--repeats", str(args.repeats)]
    if args.gemm_iters:
        cmd += ["--gemm-iters", str(args.gemm_iters)]
    print("running: " + " ".join(cmd), file=sys.stderr)
    # The probe's progress goes straight to our stderr; its stdout is JSON.
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        sys.exit("host_link_probe exited with status %d" % proc.returncode)
    return json.loads(proc.stdout)


def fmt(x, digits=1):
    return "—" if x is None else "%.*f" % (digits, x)


def ratio(measured, model):
    if measured is None or not model:
        return "—"
    return "%.2f" % (measured / model)


def size_row(rows, nbytes):
    for r in rows or []:
        if r["bytes"] == nbytes:
            return r["GBps"]
    return None


def measured_link(device):
    """The GPU's PCIe link from sysfs, and Loom's formula applied to it."""
    link = device.get("pcie_link") or {}
    speed, width = link.get("max_link_speed", ""), link.get("max_link_width")
    try:
        gen = PCIE_GEN_BY_GTS.get(float(speed.split()[0]))
        width = int(width)
    except (ValueError, IndexError, TypeError, AttributeError):
        return None, None
    if gen not in PCIE_LANE_GBPS:
        return None, None
    return "gen%d x%d" % (gen, width), PCIE_LANE_GBPS[gen] * width


def print_model(m):
    print("Loom's figures for `%s` (%s):\n" % (m["cluster"], m["device_name"]))
    print("| quantity | value | how Loom gets it |")
    print("|---|---:|---|")
    print("| host link, per direction (GB/s) | %.2f | %s; no bus_efficiency "
          "(that applies to collectives on levels); H2D and D2H each get it "
          "at once |" % (m["link_GBps"], m["link_how"]))
    print("| host link latency (µs) | %.1f | host.link.latency_us |"
          % m["link_latency_us"])
    print("| bf16 GEMM (TFLOP/s) | %.1f | peak_TFLOPs.bf16 %.1f x "
          "efficiency.matmul.compute %.2f (rooflineSeconds) |"
          % (m["gemm_TFLOPs"], m["peak_bf16_TFLOPs"], m["matmul_compute_eff"]))
    print("| CPU Adam, per node (GB/s of state) | %.1f | host.cpu_adam_GBps "
          "(%d cores) |" % (m["cpu_adam_GBps_node"], m["cpu_cores"]))
    print("| CPU Adam, per device (GB/s of state) | %.2f | cpu_adam_GBps / "
          "%d devices per node (Placement.cpp) |"
          % (m["cpu_adam_GBps_device"], m["devices_per_node"]))
    print("| CPU Adam, memory traffic implied (GB/s) | %.1f | per node, "
          "x %d/%d: Loom counts %d B of state per parameter, the step moves "
          "%d B |" % (m["cpu_adam_GBps_node"] * ADAM_TRAFFIC_BYTES
                      / ADAM_STATE_BYTES, ADAM_TRAFFIC_BYTES, ADAM_STATE_BYTES,
                      ADAM_STATE_BYTES, ADAM_TRAFFIC_BYTES))


def print_comparison(m, r):
    dev = r.get("device", {})
    host = dev.get("host", {})
    rows = []  # (quantity, Loom, measured, ratio, note)

    def add(q, model, meas, note, digits=1):
        rows.append((q, fmt(model, digits), fmt(meas, digits),
                     ratio(meas, model), note))

    if "skipped" not in r:
        big = 1024 << 20
        link_name, link_formula = measured_link(dev)
        add("pinned H2D, 1 GiB (GB/s)", m["link_GBps"],
            size_row(r.get("h2d_GBps"), big), "Loom: %s" % m["link_how"])
        add("pinned D2H, 1 GiB (GB/s)", m["link_GBps"],
            size_row(r.get("d2h_GBps"), big), "")
        if link_formula is not None:
            add("Loom's formula on this GPU's link (GB/s)", m["link_GBps"],
                link_formula, "sysfs max link %s: what a spec for this "
                "machine would assume (formula, not a measurement)" % link_name)
        bi = r.get("bidirectional", {})
        add("H2D while D2H, 256 MiB each (GB/s)", m["link_GBps"],
            bi.get("h2d_GBps"), "Loom: both directions at full rate at once")
        add("D2H while H2D, 256 MiB each (GB/s)", m["link_GBps"],
            bi.get("d2h_GBps"), "")
        add("pageable H2D, 256 MiB (GB/s)", m["link_GBps"],
            (r.get("pageable_h2d_GBps") or {}).get("GBps"),
            "for contrast; offload buffers are pinned")
        g = r.get("gemm", {})
        n = g.get("m_n_k")
        add("bf16 GEMM %sx%sx%s alone (TFLOP/s)" % (n, n, n), m["gemm_TFLOPs"],
            g.get("tflops_alone"), "Loom: bf16 peak %.1f x matmul compute "
            "eff %.2f; preset is %s, measured on %s"
            % (m["peak_bf16_TFLOPs"], m["matmul_compute_eff"],
               m["device_name"], dev.get("name", "?")))
        u = g.get("under_h2d_copy", {})
        add("bf16 GEMM during H2D copies (TFLOP/s)", m["gemm_TFLOPs"],
            u.get("tflops"), "Loom: copies do not slow compute; "
            "%s of alone" % fmt(u.get("tflops_ratio_to_alone"), 3))
        add("H2D during the GEMM (GB/s)", m["link_GBps"], u.get("h2d_GBps"),
            "Loom: copies run at link rate beside compute"
            + ("" if u.get("copies_covered_gemm_window", True)
               else "; WARNING: copies did not cover the GEMM window"))
        ub = g.get("under_h2d_and_d2h_copies", {})
        add("bf16 GEMM during H2D+D2H copies (TFLOP/s)", m["gemm_TFLOPs"],
            ub.get("tflops"), "%s of alone"
            % fmt(ub.get("tflops_ratio_to_alone"), 3))
        add("H2D during GEMM and D2H (GB/s)", m["link_GBps"],
            ub.get("h2d_GBps"), "")
        add("D2H during GEMM and H2D (GB/s)", m["link_GBps"],
            ub.get("d2h_GBps"), "")

    adam = r.get("cpu_adam")
    if adam:
        runs = {x["threads"]: x for x in adam["runs"]}
        most = max(runs)
        cores = m["cpu_cores"] or 112
        full = runs[most]
        add("CPU Adam, %d threads (GB/s of state)" % most,
            m["cpu_adam_GBps_node"], full["loom_state_GBps"],
            "%.3g params/s x %d B (Loom's count); Loom: per node, %d cores; "
            "N=%d" % (full["params_per_s"], ADAM_STATE_BYTES, cores,
                      adam["params"]))
        add("  same, against the per-device share", m["cpu_adam_GBps_device"],
            full["loom_state_GBps"], "Loom: cpu_adam_GBps / %d devices; this "
            "host has %s CPUs for its GPU(s)" % (m["devices_per_node"],
                                                host.get("nproc", "?")))
        add("  same, as memory traffic (GB/s)",
            m["cpu_adam_GBps_node"] * ADAM_TRAFFIC_BYTES / ADAM_STATE_BYTES,
            full["optimizer_state_GBps"], "%d B/param read+written; Loom's "
            "figure converted the same way" % ADAM_TRAFFIC_BYTES)
        add("CPU Adam per thread x %d cores (SCALED, not measured)" % cores,
            m["cpu_adam_GBps_node"], full["per_thread_loom_state_GBps"] * cores,
            "the %d-thread rate / %d x %d; DRAM bandwidth, not cores, bounds "
            "it, so this is an optimistic scaling" % (most, most, cores))
        if 1 in runs and most != 1:
            add("CPU Adam 1 thread x %d cores (SCALED, not measured)" % cores,
                m["cpu_adam_GBps_node"],
                runs[1]["loom_state_GBps"] * cores,
                "single-thread rate x %d: an upper bound" % cores)

    print("Measured (%s) against `%s`:\n"
          % (dev.get("name", r.get("skipped", "?")), m["cluster"]))
    if "skipped" in r:
        print("GPU part skipped: %s.\n" % r["skipped"])
    print("| quantity | Loom | measured | measured / Loom | note |")
    print("|---|---:|---:|---:|---|")
    for q, a, b, c, note in rows:
        print("| %s | %s | %s | %s | %s |" % (q, a, b, c, note))
    print()
    if host:
        print("Host: %s CPUs (%s), %.0f GiB." % (
            host.get("nproc"), host.get("cpu_model", "?"),
            host.get("memory_GiB", 0)))
    if dev.get("name"):
        print("GPU: %s, %s SMs, %.1f GiB, PCIe %s; driver %s, runtime %s, "
              "cuBLAS %s." % (
                  dev["name"], dev.get("sm_count"), dev.get("memory_GiB", 0),
                  measured_link(dev)[0] or "?", dev.get("driver_version"),
                  dev.get("runtime_version"), dev.get("cublas_version")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster",
                    default=os.path.join(REPO, "clusters", "dgx-h100.json"))
    ap.add_argument("--build-dir", default="build/bench-gpu",
                    help="where the probe is compiled (relative to the "
                         "current directory)")
    ap.add_argument("--binary", help="a prebuilt host_link_probe: no build")
    ap.add_argument("--nvcc", default=os.path.join(CUDA, "bin", "nvcc"))
    ap.add_argument("--out", help="save the probe's JSON here")
    ap.add_argument("--model-only", action="store_true",
                    help="print the preset's figures and stop")
    ap.add_argument("--build-only", action="store_true",
                    help="compile the probe and stop")
    ap.add_argument("--from-json", help="compare a saved run; run nothing")
    ap.add_argument("--cpu-only", action="store_true",
                    help="skip the GPU part (the probe's --cpu-only)")
    ap.add_argument("--adam-params", type=int,
                    help="parameters in the CPU Adam step (default 256M)")
    ap.add_argument("--repeats", type=int,
                    help="timed repeats per copy/GEMM point (>= 5; default 7)")
    ap.add_argument("--gemm-iters", type=int,
                    help="GEMMs per timed loop (default 50)")
    args = ap.parse_args()

    model = model_figures(args.cluster)
    if args.model_only:
        print_model(model)
        return

    if args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)
    else:
        binary = args.binary or build(args.build_dir, args.nvcc)
        if args.build_only:
            print(binary)
            return
        result = run_probe(binary, args)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
                f.write("\n")
            print("saved %s" % args.out, file=sys.stderr)

    print_model(model)
    print()
    print_comparison(model, result)


if __name__ == "__main__":
    main()
