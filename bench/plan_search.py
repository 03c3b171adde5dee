#!/usr/bin/python3
"""Time the strategy search (`loom-opt --loom-plan`) on GPT-3-width models.

The benchmark the strategy-search issue asks for: search time for GPT-style
models of 24, 48, 96 and 192 layers on 8, 64, 1024 and 4096 devices, both
levels (fast, thorough), with folding on and off, in one run. Targets, on one
core: 96 layers on 1024 devices under 10 s thorough and under 1 s fast, and
192 layers at most 1.25x the time of 96 (the folded search must not grow with
depth).

Models: `bench/gpt_plan.py --no-plan` at GPT-3 175B width (hidden 12288,
96 heads, seq 2048, vocab 51200, bf16), generated once per layer count into a
temporary directory. The IR batch (dim 0 of the tokens) defaults to the
global batch, 1536 (Megatron-LM's GPT-3 175B batch): the whole step, which
the planner divides into data-parallel replicas and micro-batches; it only
appears in tensor types, so it does not change the size of the IR. Devices D
map to `a100-80g-cluster:nodes=D/8` (docs/cluster-spec.md); a D that is not a
multiple of 8 takes ceil(D/8) nodes and `devices=D`.

Each cell runs `taskset -c 0 loom-opt IR --loom-plan="cluster=... mode=train
global-batch=... level=L fold=F table=none report=R.json" -o /dev/null` under
a timeout and reads `search_seconds` and `total_seconds` from the JSON report
(searched for anywhere in the report); without a report the cell has only the
wall time of the whole process (parsing and printing included). A timed-out
cell prints as `>T s`, a failing one as `error` (its message follows the
table); a search that ends without a plan fitting memory (loom-opt exits 1
but writes its report) prints its times with `(no fit)`. With `--repeat N`
each cell runs N times and keeps the best time of each kind (timing noise on
a shared machine only ever slows a run). The pass/fail lines use `--metric` (default: total_seconds, else
wall). Standard library only.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TARGET_S = {"fast": 1.0, "thorough": 10.0}  # 96 layers, 1024 devices
TARGET_LAYERS, TARGET_DEVICES, DEEP_LAYERS, MAX_RATIO = 96, 1024, 192, 1.25


def int_list(text):
    return [int(t) for t in text.split(",") if t.strip()]


def str_list(text, allowed):
    out = [t.strip() for t in text.split(",") if t.strip()]
    for t in out:
        if t not in allowed:
            raise argparse.ArgumentTypeError("%r is not one of %s" % (t, ", ".join(allowed)))
    return out


def cluster_for(devices, base, per_node):
    """(cluster option, devices option or None) for `devices` devices."""
    nodes = -(-devices // per_node)
    return "%s:nodes=%d" % (base, nodes), (None if devices == nodes * per_node else devices)


def find_key(obj, key):
    """The first value of `key` anywhere in a JSON value (breadth first)."""
    queue = [obj]
    while queue:
        o = queue.pop(0)
        if isinstance(o, dict):
            if key in o and isinstance(o[key], (int, float)) and not isinstance(o[key], bool):
                return float(o[key])
            queue.extend(o.values())
        elif isinstance(o, list):
            queue.extend(o)
    return None


def run_cmd(cmd, timeout):
    """(rc or None on timeout, stderr text, wall seconds); kills the process group on timeout."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, err = p.communicate()
        rc = None
    return rc, err.decode("utf-8", "replace"), time.monotonic() - t0


def fmt_s(x):
    if x is None:
        return "-"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


class Bench:
    def __init__(self, a):
        self.a = a
        self.results = []
        self.errors = []
        self.ir = {}

    def log(self, text):
        if not self.a.quiet:
            print(text, file=sys.stderr, flush=True)

    def gen_cmd(self, layers, path):
        a = self.a
        return [sys.executable, a.gpt_plan, "--no-plan", "--layers", str(layers), "--hidden", str(a.hidden),
                "--heads", str(a.heads), "--seq", str(a.seq), "--vocab", str(a.vocab), "--dtype", a.dtype,
                "--micro-batch", str(a.ir_batch), "--dp", "1", "-o", path]

    def plan_cmd(self, ir, devices, level, fold, report):
        a = self.a
        cluster, dev = cluster_for(devices, a.cluster, a.gpus_per_node)
        opts = ["cluster=%s" % cluster, "mode=%s" % a.mode, "global-batch=%d" % a.global_batch,
                "level=%s" % level, "fold=%s" % ("true" if fold == "on" else "false"), "table=none",
                "report=%s" % report]
        if dev is not None:
            opts.append("devices=%d" % dev)
        if a.pass_options:
            opts.append(a.pass_options)
        cmd = []
        if a.cpu >= 0 and self.taskset:
            cmd = [self.taskset, "-c", str(a.cpu)]
        return cmd + [a.loom_opt, ir, "--loom-plan=%s" % " ".join(opts), "-o", "/dev/null"]

    def generate(self, workdir):
        a = self.a
        for layers in a.layers:
            path = os.path.join(workdir, "gpt-%dl.mlir" % layers)
            cmd = self.gen_cmd(layers, path)
            if a.dry_run:
                print(" ".join(quote(c) for c in cmd))
                self.ir[layers] = {"path": path}
                continue
            t0 = time.monotonic()
            r = subprocess.run(cmd, stderr=subprocess.PIPE)
            if r.returncode != 0:
                sys.exit("plan_search.py: generating %d layers failed: %s" % (layers, r.stderr.decode().strip()))
            info = {"path": path, "bytes": os.path.getsize(path), "generate_s": time.monotonic() - t0}
            # Parsing alone: the floor under every wall time of this model.
            pcmd = ([self.taskset, "-c", str(a.cpu)] if a.cpu >= 0 and self.taskset else []) + \
                [a.loom_opt, path, "-o", "/dev/null"]
            rc, err, wall = run_cmd(pcmd, a.timeout)
            info["parse_s"] = wall if rc == 0 else None
            if rc != 0:
                self.errors.append(("parsing %d layers" % layers, first_line(err) if rc is not None else "timeout"))
            self.ir[layers] = info
            self.log("generated %d layers: %d bytes in %.2f s; parse + print %s s"
                     % (layers, info["bytes"], info["generate_s"], fmt_s(info["parse_s"])))

    def run(self, workdir):
        a = self.a
        for layers in a.layers:
            for devices in a.devices:
                for level in a.levels:
                    for fold in a.fold:
                        report = os.path.join(workdir, "report-%dl-%dd-%s-fold%s.json" % (layers, devices, level, fold))
                        cmd = self.plan_cmd(self.ir[layers]["path"], devices, level, fold, report)
                        rec = {"layers": layers, "devices": devices, "level": level, "fold": fold,
                               "command": cmd}
                        if a.dry_run:
                            print(" ".join(quote(c) for c in cmd))
                            rec["status"] = "dry-run"
                            self.results.append(rec)
                            continue
                        # The best of --repeat runs: this machine's timing
                        # noise is one-sided (other load only slows a run).
                        where = "%d layers, %d devices, %s, fold %s" % (layers, devices, level, fold)
                        rec["runs"] = 0
                        for attempt in range(max(1, a.repeat)):
                            one = self.run_once(cmd, report, where, record_error=(attempt == 0))
                            rec["runs"] += 1
                            if attempt == 0:
                                rec.update(one)
                            if one["status"] not in ("ok", "no-fit"):
                                break
                            for key in ("search_seconds", "total_seconds", "wall_seconds"):
                                if one.get(key) is not None and rec.get(key) is not None:
                                    rec[key] = min(rec[key], one[key])
                        rec["metric_seconds"] = self.metric(rec)
                        self.results.append(rec)
                        self.log("%4d layers %5d devices %-8s fold %-3s: %s" % (
                            layers, devices, level, fold, self.cell(rec)))

    def run_once(self, cmd, report, where, record_error):
        """One loom-opt run of a cell; `where` names the cell in errors."""
        a = self.a
        rec = {}
        if os.path.exists(report):
            os.remove(report)
        rc, err, wall = run_cmd(cmd, a.timeout)
        rec["wall_seconds"] = wall
        # A search that finds no plan fitting memory still ran to the end and
        # wrote its report: its time counts.
        no_fit = rc not in (None, 0) and "no plan fits" in err and os.path.exists(report)
        if rc is None:
            rec["status"] = "timeout"
        elif rc != 0 and not no_fit:
            rec["status"] = "error"
            rec["error"] = err.strip()
            if record_error:
                self.errors.append((where, first_line(err) or "exit status %d" % rc))
        else:
            rec["status"] = "no-fit" if no_fit else "ok"
            rep = None
            if os.path.exists(report):
                try:
                    with open(report) as f:
                        rep = json.load(f)
                except ValueError as e:
                    rec["report_error"] = str(e)
            rec["search_seconds"] = find_key(rep, "search_seconds") if rep is not None else None
            rec["total_seconds"] = find_key(rep, "total_seconds") if rep is not None else None
            rec["report"] = rep is not None
        return rec

    def metric(self, rec):
        """The seconds the targets are checked on; records where they came from."""
        if rec.get("status") not in ("ok", "no-fit"):
            return None
        for key in (self.a.metric, "total_seconds", "wall_seconds"):
            if rec.get(key) is not None:
                rec["metric_source"] = key
                return rec[key]
        return None

    def cell(self, rec):
        st = rec.get("status")
        if st == "dry-run":
            return ""
        if st == "timeout":
            return ">%s s" % fmt_s(self.a.timeout)
        if st == "error":
            return "error"
        return "%s / %s / %s%s" % (fmt_s(rec.get("search_seconds")), fmt_s(rec.get("total_seconds")),
                                   fmt_s(rec.get("wall_seconds")), " (no fit)" if st == "no-fit" else "")

    def find(self, layers, devices, level, fold):
        for r in self.results:
            if (r["layers"], r["devices"], r["level"], r["fold"]) == (layers, devices, level, fold):
                return r
        return None

    def table(self):
        a = self.a
        cols = [(lv, fd) for lv in a.levels for fd in a.fold]
        out = []
        out.append("Strategy search time on one core, GPT-3 width (h=%d, %d heads, s=%d, V=%d, %s), "
                   "IR batch %d, global batch %d, mode %s, %s x %d GPUs per node."
                   % (a.hidden, a.heads, a.seq, a.vocab, a.dtype, a.ir_batch, a.global_batch, a.mode,
                      a.cluster, a.gpus_per_node))
        out.append("Cells: search_seconds / total_seconds (from the JSON report; '-' when absent) / "
                   "wall seconds of loom-opt.")
        out.append("")
        out.append("| layers | devices | " + " | ".join("%s, fold %s" % c for c in cols) + " |")
        out.append("|---:|---:|" + "---|" * len(cols))
        for layers in a.layers:
            for devices in a.devices:
                cells = [self.cell(self.find(layers, devices, lv, fd) or {}) for lv, fd in cols]
                out.append("| %d | %d | %s |" % (layers, devices, " | ".join(cells)))
        if not a.dry_run and self.ir:
            out.append("")
            out.append("IR (parse + print with loom-opt, no pass): " + "; ".join(
                "%d layers %.1f MB %s s" % (l, i["bytes"] / 1e6, fmt_s(i.get("parse_s")))
                for l, i in sorted(self.ir.items())))
        out.append("")
        out.extend(self.verdicts())
        if self.errors:
            # One line per distinct message, with the cells that gave it.
            groups = {}
            for where, msg in self.errors:
                groups.setdefault(msg, []).append(where)
            out.append("")
            out.append("Errors:")
            for msg, wheres in groups.items():
                more = " (and %d more cells)" % (len(wheres) - 1) if len(wheres) > 1 else ""
                out.append("- %s%s: %s" % (wheres[0], more, msg))
        return "\n".join(out) + "\n"

    def verdicts(self):
        a = self.a
        lines = []
        metric = a.metric
        for level in a.levels:
            for fold in a.fold:
                parts = []
                base = self.find(TARGET_LAYERS, TARGET_DEVICES, level, fold)
                deep = self.find(DEEP_LAYERS, TARGET_DEVICES, level, fold)
                t = self.value(base)
                if base is not None:
                    lim = TARGET_S[level]
                    parts.append("%d layers on %d devices %s (target < %g s: %s)" % (
                        TARGET_LAYERS, TARGET_DEVICES, self.value_text(base), lim,
                        "n/a" if t is None else ("PASS" if t < lim else "FAIL")))
                if base is not None and deep is not None:
                    d = self.value(deep)
                    if t is not None and d is not None and t > 0:
                        r = d / t
                        parts.append("%d/%d ratio %.2f (target <= %.2f: %s)" % (
                            DEEP_LAYERS, TARGET_LAYERS, r, MAX_RATIO, "PASS" if r <= MAX_RATIO else "FAIL"))
                    else:
                        parts.append("%d/%d ratio n/a" % (DEEP_LAYERS, TARGET_LAYERS))
                if parts:
                    lines.append("%s, fold %s [%s]: %s" % (level, fold, metric, "; ".join(parts)))
        if not lines:
            lines.append("(no target cells: include %d and %d layers and %d devices to check the targets)"
                         % (TARGET_LAYERS, DEEP_LAYERS, TARGET_DEVICES))
        return lines

    def value(self, rec):
        return None if rec is None else rec.get("metric_seconds")

    def value_text(self, rec):
        st = rec.get("status")
        if st == "timeout":
            return "timed out (>%s s)" % fmt_s(self.a.timeout)
        if st == "error":
            return "failed"
        if st == "dry-run":
            return "not run"
        v = self.value(rec)
        if v is None:
            return "-"
        src = rec.get("metric_source")
        return "%s s%s" % (fmt_s(v), "" if src == self.a.metric else " (%s)" % src)


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def quote(s):
    if s and all(c.isalnum() or c in "-_./=:,@%+" for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int_list, default=[24, 48, 96, 192], help="comma-separated layer counts")
    ap.add_argument("--devices", type=int_list, default=[8, 64, 1024, 4096], help="comma-separated device counts")
    ap.add_argument("--levels", type=lambda t: str_list(t, ["fast", "thorough"]), default=["fast", "thorough"])
    ap.add_argument("--fold", type=lambda t: str_list(t, ["on", "off"]), default=["on", "off"])
    ap.add_argument("--loom-opt", default=os.path.join(ROOT, "build", "bin", "loom-opt"))
    ap.add_argument("--gpt-plan", default=os.path.join(HERE, "gpt_plan.py"), help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per loom-opt run")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per cell; times are the best of them (default 1)")
    ap.add_argument("--json", help="write every cell (times, status, command, error) here")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--cpu", type=int, default=0, help="core to pin to with taskset (-1: no pinning)")
    ap.add_argument("--cluster", default="a100-80g-cluster", help="preset resized with :nodes=N")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--mode", choices=["train", "infer"], default="train")
    ap.add_argument("--global-batch", type=int, default=1536)
    ap.add_argument("--ir-batch", type=int, default=0, help="dim 0 of the IR's tokens (default: the global batch)")
    ap.add_argument("--hidden", type=int, default=12288)
    ap.add_argument("--heads", type=int, default=96)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=51200)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--pass-options", default="", help="more --loom-plan options, e.g. 'verify=false max-pp=64'")
    ap.add_argument("--metric", choices=["total_seconds", "search_seconds", "wall_seconds"],
                    default="total_seconds",
                    help="what the targets are checked on (falls back to total, then wall seconds)")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep the IR and reports")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    a = ap.parse_args(argv)
    if not a.ir_batch:
        a.ir_batch = a.global_batch
    if a.global_batch % a.ir_batch:
        ap.error("--global-batch must be a multiple of --ir-batch")
    b = Bench(a)
    b.taskset = shutil.which("taskset")
    if a.cpu >= 0 and not b.taskset and not a.dry_run:
        print("plan_search.py: warning: taskset not found; running unpinned", file=sys.stderr)
    if not a.dry_run and not os.access(a.loom_opt, os.X_OK):
        sys.exit("plan_search.py: no loom-opt at %s (--loom-opt)" % a.loom_opt)
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        workdir, tmp = a.keep, None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="loom-plan-search-")
        workdir = tmp.name
    try:
        b.generate(workdir)
        b.run(workdir)
        if a.dry_run:
            print()
        sys.stdout.write(b.table())
        if a.json:
            doc = {"settings": {k: v for k, v in vars(a).items() if k not in ("json",)},
                   "ir": {str(k): {kk: vv for kk, vv in v.items() if kk != "path"} for k, v in b.ir.items()},
                   "targets": {"layers": TARGET_LAYERS, "devices": TARGET_DEVICES, "seconds": TARGET_S,
                               "deep_layers": DEEP_LAYERS, "max_ratio": MAX_RATIO},
                   "results": b.results, "verdicts": b.verdicts()}
            with open(a.json, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
                f.write("\n")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
