#!/usr/bin/env python3
# bench/onnx_import_gpt3.py - time and memory of importing a GPT-3-175B ONNX graph.
"""Builds a GPT-3-175B-shaped decoder (96 layers, d_model 12288, 96 heads, vocab 50257,
sequence 2048) as an ONNX graph the way exporters write it (opset 17: LayerNormalization,
MatMul + Add, Reshape/Transpose heads, Erf-based GELU), with every weight stored as external
data in one fp16 file. The weights file is sparse (truncate), so the benchmark needs no disk and
the importer must never read it. Then runs `loom summarize --json` on it several times and
prints wall time, peak RSS and the parameter count Loom reports.

Target (issue #2): under 5 s and under 1 GB.
Run: /usr/bin/python3 bench/onnx_import_gpt3.py [--loom build/bin/loom] [--layers 96] [--repeat 3]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

FP16 = TensorProto.FLOAT16


class WeightFile:
    """Lays out external-data initializers back to back in one file."""

    def __init__(self, name):
        self.name = name
        self.offset = 0
        self.initializers = []

    def add(self, name, dims, dtype=FP16, elem_bytes=2):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        n = 1
        for d in dims:
            n *= d
        for k, v in (("location", self.name), ("offset", str(self.offset)),
                     ("length", str(n * elem_bytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += (n * elem_bytes + 63) // 64 * 64
        self.initializers.append(t)
        return name


def const_i64(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def build(layers, d, heads, vocab, seq, batch):
    w = WeightFile("gpt3.weights")
    nodes, consts = [], []
    hd = d // heads
    consts += [const_i64("shape_heads", [batch, seq, heads, hd]),
               const_i64("shape_model", [batch, seq, d]),
               helper.make_tensor("scale", FP16, [], [1.0 / hd ** 0.5]),
               helper.make_tensor("sqrt2", FP16, [], [2 ** 0.5]),
               helper.make_tensor("one", FP16, [], [1.0]),
               helper.make_tensor("half", FP16, [], [0.5]),
               helper.make_tensor("causal_mask", FP16, [1, 1, seq, seq],
                                  [0.0] * (seq * seq)),
               const_i64("split_qkv", [d, d, d])]
    n = lambda op, ins, outs, name, **kw: nodes.append(
        helper.make_node(op, ins, outs, name=name, **kw))
    n("Gather", [w.add("wte", [vocab, d]), "input_ids"], ["tok"], "wte")
    n("Gather", [w.add("wpe", [seq, d]), "positions"], ["pos"], "wpe")
    n("Add", ["tok", "pos"], ["h0"], "embed_add")
    x = "h0"
    for i in range(layers):
        p = f"h.{i}."
        n("LayerNormalization", [x, w.add(p + "ln_1.weight", [d]), w.add(p + "ln_1.bias", [d])],
          [p + "ln1"], p + "ln_1", axis=-1, epsilon=1e-5)
        n("MatMul", [p + "ln1", w.add(p + "attn.c_attn.weight", [d, 3 * d])], [p + "qkv0"], p + "qkv_mm")
        n("Add", [p + "qkv0", w.add(p + "attn.c_attn.bias", [3 * d])], [p + "qkv"], p + "qkv_add")
        n("Split", [p + "qkv", "split_qkv"], [p + "q0", p + "k0", p + "v0"], p + "split", axis=2)
        for t in "qkv":
            n("Reshape", [p + t + "0", "shape_heads"], [p + t + "1"], p + t + "_reshape")
            perm = [0, 2, 3, 1] if t == "k" else [0, 2, 1, 3]
            n("Transpose", [p + t + "1"], [p + t], p + t + "_transpose", perm=perm)
        n("MatMul", [p + "q", p + "k"], [p + "s0"], p + "scores")
        n("Mul", [p + "s0", "scale"], [p + "s1"], p + "scale")
        n("Add", [p + "s1", "causal_mask"], [p + "s2"], p + "mask")
        n("Softmax", [p + "s2"], [p + "pr"], p + "softmax", axis=-1)
        n("MatMul", [p + "pr", p + "v"], [p + "o0"], p + "context")
        n("Transpose", [p + "o0"], [p + "o1"], p + "o_transpose", perm=[0, 2, 1, 3])
        n("Reshape", [p + "o1", "shape_model"], [p + "o2"], p + "o_reshape")
        n("MatMul", [p + "o2", w.add(p + "attn.c_proj.weight", [d, d])], [p + "o3"], p + "proj_mm")
        n("Add", [p + "o3", w.add(p + "attn.c_proj.bias", [d])], [p + "o4"], p + "proj_add")
        n("Add", [x, p + "o4"], [p + "r1"], p + "residual_1")
        n("LayerNormalization", [p + "r1", w.add(p + "ln_2.weight", [d]), w.add(p + "ln_2.bias", [d])],
          [p + "ln2"], p + "ln_2", axis=-1, epsilon=1e-5)
        n("MatMul", [p + "ln2", w.add(p + "mlp.c_fc.weight", [d, 4 * d])], [p + "f0"], p + "fc_mm")
        n("Add", [p + "f0", w.add(p + "mlp.c_fc.bias", [4 * d])], [p + "f1"], p + "fc_add")
        n("Div", [p + "f1", "sqrt2"], [p + "g0"], p + "gelu_div")
        n("Erf", [p + "g0"], [p + "g1"], p + "gelu_erf")
        n("Add", [p + "g1", "one"], [p + "g2"], p + "gelu_add")
        n("Mul", [p + "f1", p + "g2"], [p + "g3"], p + "gelu_mul")
        n("Mul", [p + "g3", "half"], [p + "g4"], p + "gelu_half")
        n("MatMul", [p + "g4", w.add(p + "mlp.c_proj.weight", [4 * d, d])], [p + "m0"], p + "mproj_mm")
        n("Add", [p + "m0", w.add(p + "mlp.c_proj.bias", [d])], [p + "m1"], p + "mproj_add")
        n("Add", [p + "r1", p + "m1"], [p + "out"], p + "residual_2")
        x = p + "out"
    n("LayerNormalization", [x, w.add("ln_f.weight", [d]), w.add("ln_f.bias", [d])], ["hf"],
      "ln_f", axis=-1, epsilon=1e-5)
    n("MatMul", ["hf", w.add("lm_head.weight", [d, vocab])], ["logits"], "lm_head")
    graph = helper.make_graph(
        nodes, "gpt3_175b",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("logits", FP16, [batch, seq, vocab])],
        initializer=w.initializers + consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="loom-bench")
    return model, w


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "loom"))
    ap.add_argument("--layers", type=int, default=96)
    ap.add_argument("--d-model", type=int, default=12288)
    ap.add_argument("--heads", type=int, default=96)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="loom-gpt3-") as tmp:
        t0 = time.perf_counter()
        model, weights = build(args.layers, args.d_model, args.heads, args.vocab, args.seq, 1)
        path = os.path.join(tmp, "gpt3.onnx")
        onnx.save(model, path)
        with open(os.path.join(tmp, weights.name), "wb") as f:
            f.truncate(weights.offset)  # sparse: no blocks are written
        gen = time.perf_counter() - t0
        print(f"generated {path}: {os.path.getsize(path) / 1e6:.2f} MB graph, "
              f"{weights.offset / 1e9:.1f} GB sparse weights file, {len(model.graph.node)} nodes "
              f"({gen:.1f} s)")

        times, rss = [], []
        summary = None
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.perf_counter()
            out = subprocess.run([args.loom, "summarize", "--json", path],
                                 capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if out.returncode != 0:
                sys.exit("loom failed:\n" + out.stderr[-4000:])
            # ru_maxrss of children is the max over all children so far (KiB).
            rss.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            summary = json.loads(out.stdout)
        best = min(times)
        peak_mb = max(rss) / 1024
        params = summary["parameters"]
        print(f"{'model':<14}{'layers':>7}{'params':>16}{'import s (best/median)':>26}{'peak RSS MB':>13}")
        med = sorted(times)[len(times) // 2]
        print(f"{'gpt3-175b':<14}{args.layers:>7}{params:>16,}{best:>15.2f} / {med:<8.2f}{peak_mb:>13.0f}")
        ok = best < 5.0 and peak_mb < 1024
        print(f"target: < 5 s and < 1024 MB -> {'met' if ok else 'NOT met'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
