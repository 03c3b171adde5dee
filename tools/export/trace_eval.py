# tools/export/trace_eval.py — reference interpreter for loom-trace JSON, written from the spec.
"""Executes a loom-trace document (docs/trace-format.md) op by op, reading weights from its
binary file, so that an export can be checked against the model it came from and the C++
importer has an executable statement of each op's semantics. Every op is implemented from the
documented attributes, not by replaying the original PyTorch call (slice uses start/end/step,
take uses its index shape, and so on). Used by make_models.py --check.

    /usr/bin/python3 tools/export/trace_eval.py out/gpt2.trace.json out/gpt2.inputs.npz
"""

import json
import math
import os
import sys
from typing import Dict

import numpy as np
import torch
import torch.nn.functional as F

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "i8": torch.int8,
                "u8": torch.uint8, "i1": torch.bool}
NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.int16, "f64": np.float64,
                "i64": np.int64, "i32": np.int32, "i8": np.int8, "u8": np.uint8, "i1": np.bool_}


def scalar(v):
    if isinstance(v, str):
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[v]
    return v


def load_tensor(entry: dict, base_dir: str) -> torch.Tensor:
    st = entry["storage"]
    with open(os.path.join(base_dir, st["file"]), "rb") as f:
        f.seek(st["offset"])
        raw = f.read(st["nbytes"])
    a = np.frombuffer(raw, dtype=np.dtype(NUMPY_DTYPES[entry["dtype"]]).newbyteorder("<"))
    t = torch.from_numpy(a.astype(a.dtype.newbyteorder("="))).reshape(entry["shape"])
    if entry["dtype"] == "bf16":
        t = t.view(torch.bfloat16)
    return t


def _pool_out(size, k, s, p, d, ceil):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + p:   # last window must start inside the input
        out -= 1
    return out


def run_node(op: str, ins: list, a: dict, outs: list):
    """Evaluate one node; `ins` holds tensors or Python scalars, `outs` the declared outputs."""
    odt = [TORCH_DTYPES[o["dtype"]] for o in outs]
    oshape = [tuple(o["shape"]) for o in outs]
    x = ins[0] if ins else None
    if op == "linear":
        y = torch.matmul(x, ins[1].transpose(0, 1))
        return y + ins[2] if len(ins) > 2 and ins[2] is not None else y
    if op in ("matmul", "bmm"):
        return torch.matmul(ins[0], ins[1])
    if op == "einsum":
        return torch.einsum(a["equation"], *ins)
    if op == "conv2d":
        b = ins[2] if len(ins) > 2 else None
        return F.conv2d(x, ins[1], b, a["stride"], a["padding"], a["dilation"], a["groups"])
    if op == "scaled_dot_product_attention":
        q, k, v = ins[:3]
        s = torch.matmul(q, k.transpose(-2, -1)) * a["scale"]
        L, S = q.shape[-2], k.shape[-2]
        if a["is_causal"]:
            keep = torch.ones(L, S, dtype=torch.bool).tril()
            s = s.masked_fill(~keep, -math.inf)
        if len(ins) > 3 and ins[3] is not None:
            m = ins[3]
            s = s.masked_fill(~m, -math.inf) if m.dtype == torch.bool else s + m
        return torch.matmul(torch.softmax(s, -1), v)
    if op == "max_pool2d":
        k, st, p, d = a["kernel_size"], a["stride"], a["padding"], a["dilation"]
        H, W = x.shape[-2:]
        oh = _pool_out(H, k[0], st[0], p[0], d[0], a["ceil_mode"])
        ow = _pool_out(W, k[1], st[1], p[1], d[1], a["ceil_mode"])
        xp = F.pad(x, (p[1], p[1] + st[1] * ow, p[0], p[0] + st[0] * oh), value=-math.inf)
        best = None
        for i in range(k[0]):
            for j in range(k[1]):
                win = xp[..., i * d[0]: i * d[0] + st[0] * oh: st[0],
                         j * d[1]: j * d[1] + st[1] * ow: st[1]]
                best = win if best is None else torch.maximum(best, win)
        return best
    if op == "avg_pool2d":
        k, st, p = a["kernel_size"], a["stride"], a["padding"]
        H, W = x.shape[-2:]
        oh = _pool_out(H, k[0], st[0], p[0], 1, a["ceil_mode"])
        ow = _pool_out(W, k[1], st[1], p[1], 1, a["ceil_mode"])
        out = torch.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
        for i in range(oh):
            for j in range(ow):
                h0, w0 = i * st[0] - p[0], j * st[1] - p[1]
                h1, w1 = min(h0 + k[0], H + p[0]), min(w0 + k[1], W + p[1])
                pad_count = (h1 - h0) * (w1 - w0)
                hs, ws, he, we = max(h0, 0), max(w0, 0), min(h1, H), min(w1, W)
                total = x[..., hs:he, ws:we].sum(dim=(-2, -1))
                n = pad_count if a["count_include_pad"] else (he - hs) * (we - ws)
                out[..., i, j] = total / n
        return out
    if op == "adaptive_avg_pool2d":
        oh, ow = a["output_size"]
        H, W = x.shape[-2:]
        out = torch.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
        for i in range(oh):
            h0, h1 = (i * H) // oh, -(-((i + 1) * H) // oh)
            for j in range(ow):
                w0, w1 = (j * W) // ow, -(-((j + 1) * W) // ow)
                out[..., i, j] = x[..., h0:h1, w0:w1].mean(dim=(-2, -1))
        return out
    if op == "batch_norm":
        shape = (1, -1) + (1,) * (x.dim() - 2)
        y = (x - ins[1].reshape(shape)) / torch.sqrt(ins[2].reshape(shape) + a["eps"])
        if len(ins) > 3 and ins[3] is not None:
            y = y * ins[3].reshape(shape)
        if len(ins) > 4 and ins[4] is not None:
            y = y + ins[4].reshape(shape)
        return y
    if op == "layer_norm":
        dims = tuple(range(x.dim() - len(a["normalized_shape"]), x.dim()))
        mu = x.mean(dim=dims, keepdim=True)
        var = ((x - mu) ** 2).mean(dim=dims, keepdim=True)
        y = (x - mu) / torch.sqrt(var + a["eps"])
        if len(ins) > 1 and ins[1] is not None:
            y = y * ins[1]
        if len(ins) > 2 and ins[2] is not None:
            y = y + ins[2]
        return y
    if op == "gelu":
        if a["approximate"] == "tanh":
            return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    unary = {"relu": lambda t: torch.clamp(t, min=0), "silu": lambda t: t * torch.sigmoid(t),
             "sigmoid": torch.sigmoid, "tanh": torch.tanh, "neg": torch.neg, "exp": torch.exp,
             "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "abs": torch.abs,
             "erf": torch.erf, "reciprocal": torch.reciprocal, "sin": torch.sin,
             "cos": torch.cos, "logical_not": torch.logical_not}
    if op in unary:
        return unary[op](x)
    if op in ("softmax", "log_softmax"):
        m = x.amax(dim=a["dim"], keepdim=True)
        e = torch.exp(x - m)
        s = e.sum(dim=a["dim"], keepdim=True)
        return e / s if op == "softmax" else x - m - torch.log(s)
    if op == "clamp":
        lo, hi = scalar(a.get("min")), scalar(a.get("max"))
        return torch.clamp(x, min=lo, max=hi)
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
              "pow": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum,
              "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
              "ge": torch.ge, "logical_and": torch.logical_and, "logical_or": torch.logical_or}
    if op in binary:
        l, r = ins
        dt = odt[0] if op not in ("eq", "ne", "lt", "le", "gt", "ge") else None
        ref = l if isinstance(l, torch.Tensor) else r
        l = l if isinstance(l, torch.Tensor) else torch.tensor(l, dtype=ref.dtype)
        r = r if isinstance(r, torch.Tensor) else torch.tensor(r, dtype=ref.dtype)
        assert dt is None or (l.dtype == dt and r.dtype == dt), (op, l.dtype, r.dtype, dt)
        assert l.dtype == r.dtype, (op, l.dtype, r.dtype)
        return binary[op](l, r)
    if op == "where":
        c, l, r = ins
        l = l if isinstance(l, torch.Tensor) else torch.tensor(l, dtype=odt[0])
        r = r if isinstance(r, torch.Tensor) else torch.tensor(r, dtype=odt[0])
        return torch.where(c, l, r)
    if op == "masked_fill":
        return torch.where(ins[1], torch.tensor(scalar(a["value"]), dtype=x.dtype), x)
    if op == "cast":
        return x.to(TORCH_DTYPES[a["dtype"]])
    if op == "full":
        return torch.full(oshape[0], scalar(a["value"]), dtype=odt[0])
    if op in ("sum", "mean", "amax", "amin"):
        fn = {"sum": torch.sum, "mean": torch.mean, "amax": torch.amax, "amin": torch.amin}[op]
        if not a["dims"]:
            return x.clone()
        return fn(x, dim=tuple(a["dims"]), keepdim=a["keepdim"])
    if op in ("argmax", "argmin"):
        fn = torch.argmax if op == "argmax" else torch.argmin
        return fn(x, dim=a["dim"], keepdim=a["keepdim"])
    if op == "reshape":
        return x.reshape(a["shape"])
    if op == "permute":
        return x.permute(a["dims"])
    if op == "expand":
        return x.expand(a["shape"])
    if op == "cat":
        return torch.cat(ins, dim=a["dim"])
    if op == "slice":
        idx = [slice(None)] * x.dim()
        idx[a["dim"]] = slice(a["start"], a["end"], a["step"])
        return x[tuple(idx)]
    if op == "select":
        return x.select(a["dim"], a["index"])
    if op == "take":
        d, idx = a["dim"], ins[1].long()
        flat = torch.index_select(x, d, idx.reshape(-1) % x.shape[d])
        return flat.reshape(x.shape[:d] + idx.shape + x.shape[d + 1:])
    if op == "embedding":
        w, idx = ins
        return w[idx.long()]
    if op == "gather":
        return torch.gather(x, a["dim"], ins[1].long())
    if op == "scatter":
        src = ins[2]
        if isinstance(src, torch.Tensor):
            return torch.scatter(x, a["dim"], ins[1].long(), src)
        return torch.scatter(x, a["dim"], ins[1].long(), scalar(src))
    if op == "topk":
        v, i = torch.topk(x, a["k"], dim=a["dim"], largest=a["largest"], sorted=a["sorted"])
        return (v, i)
    if op == "one_hot":
        return F.one_hot(x.long(), a["num_classes"])
    raise NotImplementedError(op)


def run(doc: dict, base_dir: str, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    env: Dict[str, torch.Tensor] = {}
    for e in doc["inputs"]:
        t = inputs[e["name"]]
        assert list(t.shape) == e["shape"] and t.dtype == TORCH_DTYPES[e["dtype"]], e
        env[e["name"]] = t
    for e in doc["parameters"] + doc["constants"]:
        env[e["name"]] = load_tensor(e, base_dir)
    with torch.no_grad():
        for node in doc["nodes"]:
            ins = [env[v] if isinstance(v, str) and v in env else
                   (None if v is None else scalar(v)) for v in node["inputs"]]
            res = run_node(node["op"], ins, node["attrs"], node["outputs"])
            res = res if isinstance(res, tuple) else (res,)
            for o, r in zip(node["outputs"], res):
                want = (tuple(o["shape"]), TORCH_DTYPES[o["dtype"]])
                if (tuple(r.shape), r.dtype) != want:
                    raise AssertionError(f"node {node['name']} ({node['op']}): got "
                                         f"{tuple(r.shape)} {r.dtype}, declared {want}")
                env[o["name"]] = r
    return {name: env[name] for name in doc["outputs"]}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: trace_eval.py MODEL.trace.json INPUTS.npz", file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        doc = json.load(f)
    data = np.load(argv[1])
    inputs = {k: torch.from_numpy(data[k]) for k in data.files}
    outs = run(doc, os.path.dirname(os.path.abspath(argv[0])), inputs)
    for name, t in outs.items():
        print(f"{name}: shape {list(t.shape)} {t.dtype} mean|x| {t.float().abs().mean():.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
