# tools/export/test_trace_export.py — tests for the trace exporter, evaluator and ONNX folder.
"""Each test exports a module to loom-trace, runs the result with trace_eval.py (written from
docs/trace-format.md, not from PyTorch's calls) and compares with PyTorch. Covered: the six zoo
models, a set of modules that exercise every op and rewrite (indexing, split, pooling edge cases,
MultiheadAttention variants, promotion), the refusal paths (unknown target, data-dependent
values, in-place hazards), the weights file layout and the ONNX constant folder.

    /usr/bin/python3 -m unittest discover -s tools/export -p 'test_*.py'
"""

import importlib.util
import json
import os
import sys
import tempfile
import unittest

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as zoo  # noqa: E402
import trace_eval  # noqa: E402
import trace_export as te  # noqa: E402

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


class ExportCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def roundtrip(self, model, inputs, atol=1e-5, name="m", **kw):
        model = model.eval()
        path = os.path.join(self.dir, f"{name}.trace.json")
        doc = te.export_trace(model, inputs, path, model_name=name, **kw)
        with open(path) as f:
            self.assertEqual(json.load(f), doc)
        te.validate(doc)
        with torch.no_grad():
            want = model(**inputs)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        got = trace_eval.run(doc, self.dir, inputs)
        self.assertEqual(len(got), len(want))
        for (k, g), w in zip(got.items(), want):
            self.assertEqual(tuple(g.shape), tuple(w.shape), k)
            self.assertEqual(g.dtype, w.dtype, k)
            if g.dtype.is_floating_point:
                torch.testing.assert_close(g, w, atol=atol, rtol=1e-4, equal_nan=True)
            else:
                self.assertTrue(torch.equal(g, w), k)
        return doc

    @staticmethod
    def ops(doc):
        return [n["op"] for n in doc["nodes"]]


class ZooTest(ExportCase):
    def test_small_models(self):
        for name in zoo.ZOO:
            with self.subTest(model=name):
                model = zoo.build(name, "small")
                inputs = zoo.example_inputs(name, "small")
                tr = te.trace(model, inputs)
                doc = self.roundtrip(model, inputs, atol=1e-4, name=name, traced=tr,
                                     output_names=zoo.ZOO[name].output_names)
                self.assertEqual(doc["outputs"], zoo.ZOO[name].output_names)
                self.assertEqual(te.trace_flops(doc), te.fx_flops(tr))
                n_params = sum(p.numel() for p in model.parameters())
                self.assertEqual(sum(_numel(p["shape"]) for p in doc["parameters"]), n_params)

    def test_bert_without_optional_inputs(self):
        model = zoo.build("bert", "small")
        ids = zoo.example_inputs("bert", "small")["input_ids"]
        doc = self.roundtrip(model, {"input_ids": ids}, atol=1e-4)
        self.assertEqual([i["name"] for i in doc["inputs"]], ["input_ids"])
        self.assertIn("full", self.ops(doc))          # zeros_like(input_ids), folded

    def test_moe_is_static_dense_dispatch(self):
        doc = self.roundtrip(zoo.build("moe", "small"), zoo.example_inputs("moe", "small"),
                             atol=1e-4)
        ops = set(self.ops(doc))
        self.assertTrue({"topk", "scatter", "matmul"} <= ops)
        topk = next(n for n in doc["nodes"] if n["op"] == "topk")
        self.assertEqual([o["dtype"] for o in topk["outputs"]], ["f32", "i64"])


class Indexing(nn.Module):
    def forward(self, x, idx):
        a = x[..., 1:-1:2]
        b = x[:, None, 0]
        c = x[-1]
        d = x[:, idx]
        e = x.narrow(2, 1, 2)
        f = torch.index_select(x, 1, idx[0])
        g, h = x.split([1, 3], dim=1)
        parts = torch.chunk(x, 2, dim=-1)
        u = torch.unbind(x, dim=0)
        s = torch.stack([u[0], u[1]], dim=1)
        return a, b, c, d, e, f, g, h, parts[1], s, x.T, x.transpose(0, 2).contiguous()


class Reductions(nn.Module):
    def forward(self, x, labels):
        v, i = torch.max(x, dim=1)
        m = x.amin(dim=(0, 2), keepdim=True)
        am = x.argmax()
        s = x.sum()
        w = torch.where(x > 0.0, x, 0.5)
        lt = labels < 2.5                     # i64 vs float scalar: promoted compare
        oh = F.one_hot(labels, num_classes=5)
        g = torch.gather(x, 2, labels.clamp(max=3).unsqueeze(1).expand(2, 3, 2))
        sc = torch.zeros(2, 3, 4).scatter(2, labels.clamp(max=3).unsqueeze(1).expand(2, 3, 2), 1.0)
        mix = labels[:, :1] + x.mean(dim=2)   # i64 + f32 -> cast
        c = torch.clamp(x, max=0.3) + F.relu6(x * 10) + F.hardtanh(x)
        ls = F.log_softmax(x, dim=1)
        mx = torch.maximum(x, x * 0.5)
        return v, i, m, am, s, w, lt, oh, g, sc, mix, c, ls, mx


class Contractions(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4, 5))
        self.b = nn.Parameter(torch.randn(5))
        self.conv = nn.Conv2d(4, 6, 3, padding="same", groups=2)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, dilation=2, bias=False)

    def forward(self, x, img):
        e = torch.einsum("bij,bjk", x, self.w)
        m = torch.bmm(x, self.w)
        a = torch.addmm(self.b, x[0], self.w[0])
        v = x[0, 0] @ self.w[0]               # 1-D @ 2-D
        conv = self.conv(img)
        conv2 = self.conv2(img)
        mp = F.max_pool2d(img, 3, stride=2, padding=1, dilation=1, ceil_mode=True)
        mp2 = F.max_pool2d(img, 2, dilation=2)
        ap = F.avg_pool2d(img, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        ad = F.adaptive_avg_pool2d(img, (3, 2))
        return e, m, a, v, conv, conv2, mp, mp2, ap, ad


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        self.ln = nn.LayerNorm([3, 4], elementwise_affine=False)
        self.register_buffer("half_table", torch.randn(4).to(torch.bfloat16))
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = self.bn(x.transpose(1, 2)).transpose(1, 2)
        z = self.ln(x)
        r = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return y, z + self.half_table.float(), r, torch.sigmoid(x) * torch.tanh(x) + x.exp().log()


class AttentionModules(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(8, 2, batch_first=False)
        self.cross = nn.MultiheadAttention(8, 2, kdim=6, vdim=6, batch_first=True, bias=False)

    def forward(self, x, mem, pad):
        L = x.shape[0]
        causal = torch.ones(L, L, dtype=torch.bool).triu(1)
        a, w = self.self_attn(x, x, x, attn_mask=causal, key_padding_mask=pad)
        q = a.transpose(0, 1)
        c, _ = self.cross(q, mem, mem, need_weights=False)
        return a, w, c


class OpCoverage(ExportCase):
    def test_indexing_and_split(self):
        x = torch.randn(3, 4, 6)
        idx = torch.tensor([[2, 0], [1, 3]])
        doc = self.roundtrip(Indexing(), {"x": x, "idx": idx})
        self.assertTrue({"slice", "select", "take", "cat", "permute", "reshape"}
                        <= set(self.ops(doc)))

    def test_reductions_and_promotion(self):
        x = torch.randn(2, 3, 4)
        labels = torch.tensor([[0, 4], [3, 1]])
        doc = self.roundtrip(Reductions(), {"x": x, "labels": labels})
        ops = set(self.ops(doc))
        self.assertTrue({"amax", "argmax", "amin", "sum", "where", "lt", "one_hot", "gather",
                         "scatter", "cast", "clamp", "log_softmax"} <= ops)
        lt = next(n for n in doc["nodes"] if n["op"] == "lt")
        self.assertEqual(lt["inputs"][1], 2.5)

    def test_contractions_and_pooling(self):
        torch.manual_seed(0)
        x = torch.randn(3, 2, 4)
        img = torch.randn(2, 4, 7, 9)
        doc = self.roundtrip(Contractions(), {"x": x, "img": img}, atol=1e-4)
        ein = next(n for n in doc["nodes"] if n["op"] == "einsum")
        self.assertEqual(ein["attrs"]["equation"], "bij,bjk->ik")   # b is summed
        conv = next(n for n in doc["nodes"] if n["op"] == "conv2d")
        self.assertEqual(conv["attrs"]["padding"], [1, 1])
        self.assertEqual(conv["attrs"]["groups"], 2)

    def test_norms_and_bf16_constant(self):
        torch.manual_seed(0)
        doc = self.roundtrip(Norms(), {"x": torch.randn(2, 3, 4)})
        self.assertIn("batch_norm", self.ops(doc))
        ln = next(n for n in doc["nodes"] if n["op"] == "layer_norm")
        self.assertEqual(len(ln["inputs"]), 1)        # no affine: trailing inputs omitted
        self.assertEqual(ln["attrs"]["normalized_shape"], [3, 4])
        self.assertIn("bf16", {c["dtype"] for c in doc["constants"]})

    def test_multihead_attention(self):
        torch.manual_seed(0)
        x = torch.randn(5, 2, 8)                      # [L, B, E], batch_first=False
        mem = torch.randn(2, 3, 6)
        pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
        doc = self.roundtrip(AttentionModules(), {"x": x, "mem": mem, "pad": pad})
        self.assertNotIn("MultiheadAttention", json.dumps(doc))
        self.assertIn("masked_fill", self.ops(doc))

    @unittest.skipUnless(hasattr(F, "scaled_dot_product_attention"), "needs PyTorch >= 2.0")
    def test_sdpa(self):
        class Sdpa(nn.Module):
            def forward(self, q, k, v, m):
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                b = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)
                return a, b
        q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 3)
        m = torch.rand(5, 6) > 0.3
        m[:, 0] = True
        doc = self.roundtrip(Sdpa(), {"q": q, "k": k, "v": v, "m": m})
        self.assertEqual(self.ops(doc).count("scaled_dot_product_attention"), 2)
        self.assertGreater(te.trace_flops(doc), 0)

    def test_output_names_and_scalar_encoding(self):
        class M(nn.Module):
            def forward(self, x):
                return x.masked_fill(x > 0, float("-inf")), 1.0 - x
        doc = self.roundtrip(M(), {"x": torch.randn(3)}, output_names=["neg_inf", "one_minus"])
        self.assertEqual(doc["outputs"], ["neg_inf", "one_minus"])
        mf = next(n for n in doc["nodes"] if n["op"] == "masked_fill")
        self.assertEqual(mf["attrs"]["value"], "-inf")
        sub = next(n for n in doc["nodes"] if n["op"] == "sub")
        self.assertEqual(sub["inputs"], [1.0, "x"])


class Refusals(ExportCase):
    def export(self, model, inputs):
        return te.export_trace(model.eval(), inputs, os.path.join(self.dir, "r.trace.json"))

    def test_unknown_target_names_node(self):
        class M(nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0)
        with self.assertRaisesRegex(te.ExportError, r"cumsum.*torch\.cumsum"):
            self.export(M(), {"x": torch.randn(3)})

    def test_data_dependent_value(self):
        class M(nn.Module):
            def forward(self, x):
                return x * x.sum().item()
        with self.assertRaisesRegex(te.ExportError, "depends on tensor data"):
            self.export(M(), {"x": torch.randn(3)})

    def test_boolean_mask_indexing(self):
        class M(nn.Module):
            def forward(self, x):
                return x[x > 0]
        with self.assertRaisesRegex(te.ExportError, "data-dependent shape"):
            self.export(M(), {"x": torch.randn(3)})

    def test_inplace_hazard(self):
        class M(nn.Module):
            def forward(self, x):
                a = x * 2
                b = a.add_(1)
                return a + b
        with self.assertRaisesRegex(te.ExportError, "in-place"):
            self.export(M(), {"x": torch.randn(3)})

    def test_training_mode(self):
        with self.assertRaisesRegex(te.ExportError, "eval mode"):
            te.trace(nn.Linear(2, 2).train(), {"input": torch.randn(1, 2)})


class WeightsFile(ExportCase):
    def test_layout(self):
        model = zoo.build("gpt2", "small")
        path = os.path.join(self.dir, "g.trace.json")
        doc = te.export_trace(model, zoo.example_inputs("gpt2", "small"), path)
        size = os.path.getsize(os.path.join(self.dir, "g.bin"))
        offsets = set()
        for e in doc["parameters"] + doc["constants"]:
            st = e["storage"]
            self.assertEqual(st["file"], "g.bin")
            self.assertEqual(st["offset"] % te.ALIGNMENT, 0)
            self.assertLessEqual(st["offset"] + st["nbytes"], size)
            offsets.add(st["offset"])
        masks = [c for c in doc["constants"] if c["name"].endswith("causal_mask")]
        self.assertEqual(len(masks), 2)
        self.assertEqual(masks[0]["storage"], masks[1]["storage"])   # deduplicated bytes
        self.assertEqual(doc["parameters"][0]["name"], "wte.weight")  # tied head: once


class OnnxFold(ExportCase):
    def test_fold_keeps_numerics(self):
        if importlib.util.find_spec("onnx") is None:
            self.skipTest("onnx not installed")
        import make_models
        ref = make_models.make_one("llama", "small", self.dir, {"onnx"})
        self.assertNotIn("Shape", ref["onnx"]["op_types"])
        self.assertNotIn("ConstantOfShape", ref["onnx"]["op_types"])
        try:
            from onnx.reference import ReferenceEvaluator
        except ImportError:
            return                                    # onnx < 1.13: structure only
        import numpy as np
        inputs = dict(np.load(os.path.join(self.dir, "llama.inputs.npz")))
        got = ReferenceEvaluator(os.path.join(self.dir, "llama.onnx")).run(None, inputs)[0]
        want = np.load(os.path.join(self.dir, "llama.expected.npy"))
        self.assertLess(float(np.abs(got - want).max()), 1e-4)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


if __name__ == "__main__":
    unittest.main()
