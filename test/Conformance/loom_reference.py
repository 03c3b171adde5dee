#!/usr/bin/env python3
# test/Conformance/loom_reference.py - a numpy reference interpreter for imported loom IR.
"""Evaluates `func.func @main` of a loom-dialect module (printed in MLIR's generic form,
`loom-translate --mlir-print-op-generic`) on numpy inputs. It exists to check the ONNX importer
numerically: the conformance runner imports an ONNX backend node test, runs the result here on
the test's inputs and compares with the test's expected outputs.

The semantics implemented here are the dialect's documented ones (dialects/Loom/IR/LoomOps.td);
where the dialect leaves a detail open they are the ONNX/numpy ones the importer assumes
(integer div truncates, `mod` takes the divisor's sign, `round` is half-to-even, the first
extreme wins argmax/argmin and top-k ties, `hard_sigmoid` is PyTorch's relu6(x + 3) / 6).

Usage as a library: `run_module(text, inputs, model_dir) -> list of numpy arrays`.
"""

import math
import os
import re
import struct

import numpy as np

UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "relu", "gelu",
         "gelu_tanh", "silu", "sigmoid", "tanh", "erf", "sin", "cos", "hard_sigmoid",
         "hard_swish", "floor", "ceil", "round", "sign", "logical_not", "softplus", "identity"]
BINARY = ["add", "sub", "mul", "div", "pow", "max", "min", "logical_and", "logical_or",
          "logical_xor", "mod"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCE = ["sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square", "argmax", "argmin"]
POOL = ["max", "avg"]
PAD = ["constant", "reflect", "edge", "wrap"]

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "bf16": np.float32,
          "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
          "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}


class Unsupported(Exception):
    pass


# --- parsing ---------------------------------------------------------------------------------

def split_top(s, sep=","):
    """Splits `s` at `sep` outside brackets and quotes."""
    parts, depth, cur, quote = [], 0, [], False
    i = 0
    while i < len(s):
        ch = s[i]
        if quote:
            cur.append(ch)
            if ch == "\\":
                cur.append(s[i + 1])
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
            cur.append(ch)
        elif ch in "<[({":
            depth += 1
            cur.append(ch)
        elif ch in ">])}":
            depth -= 1
            cur.append(ch)
        elif ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_tensor_type(t):
    m = re.fullmatch(r"tensor<(.*)>", t.strip())
    if not m:
        raise Unsupported(f"type {t}")
    parts = m.group(1).split("x")
    elem = parts[-1]
    shape = [int(p) for p in parts[:-1]]
    if elem not in DTYPES:
        raise Unsupported(f"element type {elem}")
    return shape, elem


def hex_to_float(h, elem):
    bits = int(h, 16)
    if elem == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if elem == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if elem == "f16":
        return float(np.frombuffer(struct.pack("<H", bits), np.float16)[0])
    if elem == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    raise Unsupported(elem)


def parse_scalar(tok, elem):
    tok = tok.strip()
    if tok in ("true", "false"):
        return tok == "true"
    if tok.startswith("0x") and elem.startswith(("f", "bf")):
        return hex_to_float(tok, elem)
    if elem.startswith(("f", "bf")):
        return float(tok)
    return int(tok, 0)


def parse_dense(body, type_str):
    shape, elem = parse_tensor_type(type_str)
    body = body.strip()
    dtype = DTYPES[elem]
    if not body:
        return np.zeros(shape, dtype)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if elem == "bf16":
            u16 = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            arr = u16.view(np.float32)
        elif elem == "i1":
            # i1 data is bit-packed, least significant bit first.
            n = int(np.prod(shape)) if shape else 1
            if len(raw) == 1 and n > 1:
                return np.full(shape, raw[0] != 0, np.bool_)
            bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")
            return bits[:n].astype(np.bool_).reshape(shape)
        else:
            arr = np.frombuffer(raw, dtype)
        n = int(np.prod(shape)) if shape else 1
        if arr.size == 1 and n != 1:
            return np.full(shape, arr[0], dtype)
        return arr.reshape(shape).copy()
    if not body.startswith("["):
        return np.full(shape, parse_scalar(body, elem), dtype)
    flat = [parse_scalar(t, elem) for t in re.split(r"[\[\],\s]+", body) if t]
    arr = np.array(flat, dtype=dtype)
    n = int(np.prod(shape)) if shape else 1
    if arr.size == 0 and n == 0:
        return np.zeros(shape, dtype)
    return arr.reshape(shape)


def parse_attr_value(v):
    v = v.strip()
    if v.startswith('"'):
        return bytes(v[1:-1], "utf-8").decode("unicode_escape")
    if v in ("true", "false"):
        return v == "true"
    if v.startswith("array<"):
        inner = v[len("array<"):-1]
        if ":" not in inner:
            return []
        return [int(x) for x in inner.split(":", 1)[1].split(",") if x.strip()]
    if v.startswith("dense<"):
        close = v.rindex("> :")
        return parse_dense(v[len("dense<"):close], v[close + 3:])
    m = re.fullmatch(r"(\S+) : (\S+)", v)
    if m:
        val, ty = m.groups()
        if ty.startswith("f"):
            return parse_scalar(val, ty)
        return int(val)
    raise Unsupported(f"attribute value {v}")


def parse_attrs(s):
    attrs = {}
    for entry in split_top(s):
        if "=" in entry and not entry.startswith('"'):
            k, v = entry.split("=", 1)
            attrs[k.strip()] = parse_attr_value(v)
        else:
            attrs[entry.strip()] = True
    return attrs


OP_RE = re.compile(r'^\s*(?:(%[\w]+)(?::(\d+))? = )?"([\w.]+)"\((.*?)\)\s*(.*)$')


def parse_module(text):
    """Returns (arg names, ops, return operands) of @main."""
    args, ops, rets = [], [], []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("^bb0("):
            for a in split_top(s[len("^bb0("):s.rindex(")")]):
                args.append(a.split(":", 1)[0].strip())
            continue
        m = OP_RE.match(line)
        if not m:
            continue
        res, nres, name, operands, rest = m.groups()
        operands = [o.strip() for o in operands.split(",") if o.strip()]
        if name == "func.return":
            rets = operands
            continue
        if not name.startswith("loom."):
            continue
        attrs = {}
        if rest.startswith("{"):
            depth, end = 0, 0
            for i, ch in enumerate(rest):
                depth += ch == "{"
                depth -= ch == "}"
                if depth == 0:
                    end = i
                    break
            attrs = parse_attrs(rest[1:end])
            rest = rest[end + 1:]
        result_types = rest.rsplit("->", 1)[1].strip()
        if result_types.startswith("("):
            result_types = split_top(result_types[1:-1])
        else:
            result_types = [result_types]
        names = [res] if not nres else [f"{res}#{i}" for i in range(int(nres))]
        ops.append((names, name[len("loom."):], operands, attrs, result_types))
    return args, ops, rets


# --- semantics -------------------------------------------------------------------------------

def round_bf16(x):
    """Rounds float32 values to bfloat16 (nearest even), kept as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def unary(kind, x):
    f = {
        "neg": lambda: -x, "abs": lambda: np.abs(x), "exp": lambda: np.exp(x),
        "log": lambda: np.log(x), "sqrt": lambda: np.sqrt(x),
        "rsqrt": lambda: 1 / np.sqrt(x), "reciprocal": lambda: 1 / x,
        "relu": lambda: np.maximum(x, 0).astype(x.dtype),
        "gelu": lambda: x * 0.5 * (1 + erf(x / np.sqrt(2).astype(x.dtype))),
        "gelu_tanh": lambda: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                                  (x + 0.044715 * x ** 3))),
        "silu": lambda: x / (1 + np.exp(-x)), "sigmoid": lambda: 1 / (1 + np.exp(-x)),
        "tanh": lambda: np.tanh(x), "erf": lambda: erf(x), "sin": lambda: np.sin(x),
        "cos": lambda: np.cos(x),
        "hard_sigmoid": lambda: np.clip(x / 6 + 0.5, 0, 1),
        "hard_swish": lambda: x * np.clip(x / 6 + 0.5, 0, 1),
        "floor": lambda: np.floor(x), "ceil": lambda: np.ceil(x),
        "round": lambda: np.round(x), "sign": lambda: np.sign(x),
        "logical_not": lambda: np.logical_not(x), "softplus": lambda: np.log1p(np.exp(x)),
        "identity": lambda: x,
    }[kind]
    return np.asarray(f()).astype(x.dtype)


def binary(kind, a, b):
    if kind == "div" and np.issubdtype(a.dtype, np.integer):
        with np.errstate(all="ignore"):
            q = np.trunc(a.astype(np.float64) / b.astype(np.float64))
        return q.astype(a.dtype)
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "pow": np.power, "max": np.maximum, "min": np.minimum,
         "logical_and": np.logical_and, "logical_or": np.logical_or,
         "logical_xor": np.logical_xor, "mod": np.mod}[kind]
    with np.errstate(all="ignore"):
        return np.asarray(f(a, b)).astype(a.dtype)


def conv(x, w, bias, a):
    groups = a["groups"]
    strides, pads, dil = a["strides"], a["padding"], a["dilations"]
    kernel = list(w.shape[2:])
    spatial = len(kernel)
    cg, fg = x.shape[1] // groups, w.shape[0] // groups
    padw = [(0, 0), (0, 0)] + [(pads[i], pads[spatial + i]) for i in range(spatial)]
    xp = np.pad(x.astype(np.float64), padw)
    out_shape = [(xp.shape[2 + i] - (dil[i] * (kernel[i] - 1) + 1)) // strides[i] + 1
                 for i in range(spatial)]
    y = np.zeros([x.shape[0], w.shape[0]] + out_shape)
    for g in range(groups):
        wg = w[g * fg:(g + 1) * fg].astype(np.float64)
        for pos in np.ndindex(*out_shape):
            idx = tuple(slice(pos[i] * strides[i],
                              pos[i] * strides[i] + dil[i] * (kernel[i] - 1) + 1, dil[i])
                        for i in range(spatial))
            win = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]  # [N, cg, k...]
            y[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] = np.tensordot(
                win, wg, axes=(list(range(1, win.ndim)), list(range(1, wg.ndim))))
    if bias is not None:
        y = y + bias.reshape([1, -1] + [1] * (y.ndim - 2))
    return y.astype(x.dtype)


def pool(kind, x, a):
    kernel, strides, pads, dil = a["kernel"], a["strides"], a["padding"], a["dilations"]
    ceil = a.get("ceil_mode", False)
    cip = a.get("count_include_pad", False)
    spatial = len(kernel)
    out = []
    extra = []
    for i in range(spatial):
        n = x.shape[2 + i]
        eff = dil[i] * (kernel[i] - 1) + 1
        span = n + pads[i] + pads[spatial + i] - eff
        o = (-(-span // strides[i]) if ceil else span // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= n + pads[i]:
            o -= 1
        out.append(o)
        extra.append(max(0, (o - 1) * strides[i] + eff - (n + pads[i] + pads[spatial + i])))
    xf = x.astype(np.float64)
    padw = [(0, 0), (0, 0)] + [(pads[i], pads[spatial + i] + extra[i]) for i in range(spatial)]
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(xf, padw, constant_values=fill)
    valid = np.pad(np.ones(x.shape[2:]), [(pads[i], pads[spatial + i] + extra[i])
                                          for i in range(spatial)])
    # count_include_pad counts the declared padding but not ceil-mode overhang
    declared = np.pad(np.ones(x.shape[2:]), [(pads[i], pads[spatial + i])
                                             for i in range(spatial)],
                      constant_values=1)
    declared = np.pad(declared, [(0, extra[i]) for i in range(spatial)])
    y = np.zeros(list(x.shape[:2]) + out)
    for pos in np.ndindex(*out):
        idx = tuple(slice(pos[i] * strides[i],
                          pos[i] * strides[i] + dil[i] * (kernel[i] - 1) + 1, dil[i])
                    for i in range(spatial))
        win = xp[(slice(None), slice(None)) + idx]
        axes = tuple(range(2, 2 + spatial))
        if kind == "max":
            y[(slice(None), slice(None)) + pos] = win.max(axis=axes)
        else:
            cnt = (declared if cip else valid)[idx].sum()
            y[(slice(None), slice(None)) + pos] = win.sum(axis=axes) / cnt
    return y.astype(x.dtype)


def reduce(kind, x, axes, keep):
    axes = tuple(axes)
    if kind in ("argmax", "argmin"):
        f = np.argmax if kind == "argmax" else np.argmin
        r = f(x, axis=axes[0])
        if keep:
            r = np.expand_dims(r, axes[0])
        return r.astype(np.int64)
    xf = x
    r = {"sum": lambda: np.sum(xf, axis=axes, keepdims=keep),
         "mean": lambda: np.mean(xf, axis=axes, keepdims=keep),
         "max": lambda: np.max(xf, axis=axes, keepdims=keep),
         "min": lambda: np.min(xf, axis=axes, keepdims=keep),
         "prod": lambda: np.prod(xf, axis=axes, keepdims=keep),
         "l1": lambda: np.sum(np.abs(xf), axis=axes, keepdims=keep),
         "l2": lambda: np.sqrt(np.sum(xf * xf, axis=axes, keepdims=keep)),
         "sum_square": lambda: np.sum(xf * xf, axis=axes, keepdims=keep)}[kind]()
    return np.asarray(r).astype(x.dtype)


def topk(x, k, axis, largest):
    key = -x if largest else x
    idx = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(idx, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


def scatter(data, idx, upd, axis, red):
    out = data.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        i = idx[pos]
        tgt[axis] = i + data.shape[axis] if i < 0 else i
        tgt = tuple(tgt)
        if red is None:
            out[tgt] = upd[pos]
        else:
            out[tgt] = binary(BINARY[red], np.asarray(out[tgt]), np.asarray(upd[pos]))
    return out


def evaluate(kind, operands, a, result_types, model_dir):
    x = operands[0] if operands else None
    if kind == "constant":
        return [a["value"]]
    if kind == "weight":
        shape, elem = parse_tensor_type(result_types[0])
        dtype = np.dtype(DTYPES[elem]).newbyteorder("<")
        n = int(np.prod(shape)) if shape else 1
        path = a["file"] if os.path.isabs(a["file"]) else os.path.join(model_dir, a["file"])
        with open(path, "rb") as f:
            f.seek(a["offset"])
            raw = f.read(n * dtype.itemsize)
        return [np.frombuffer(raw, dtype).reshape(shape).copy()]
    if kind == "unary":
        return [unary(UNARY[a["kind"]], x)]
    if kind == "binary":
        return [binary(BINARY[a["kind"]], operands[0], operands[1])]
    if kind == "compare":
        f = [np.equal, np.not_equal, np.less, np.less_equal, np.greater,
             np.greater_equal][a["predicate"]]
        return [f(operands[0], operands[1])]
    if kind == "where":
        return [np.where(*operands).astype(operands[1].dtype)]
    if kind == "clamp":
        y = x
        if "min" in a:
            y = np.maximum(y, a["min"])
        if "max" in a:
            y = np.minimum(y, a["max"])
        return [y.astype(x.dtype)]
    if kind == "cast":
        _, elem = parse_tensor_type(result_types[0])
        with np.errstate(all="ignore"):
            y = x.astype(DTYPES[elem])
        if elem == "bf16":
            y = round_bf16(y)
        return [y]
    if kind == "matmul":
        return [np.matmul(operands[0], operands[1])]
    if kind == "conv":
        return [conv(operands[0], operands[1], operands[2] if len(operands) > 2 else None, a)]
    if kind == "pool":
        return [pool(POOL[a["kind"]], x, a)]
    if kind in ("layer_norm", "rms_norm"):
        axes = tuple(range(a["axis"], x.ndim))
        xf = x.astype(np.float64)
        if kind == "layer_norm":
            mean = xf.mean(axis=axes, keepdims=True)
            var = ((xf - mean) ** 2).mean(axis=axes, keepdims=True)
            y = (xf - mean) / np.sqrt(var + a["epsilon"])
        else:
            y = xf / np.sqrt((xf * xf).mean(axis=axes, keepdims=True) + a["epsilon"])
        if len(operands) > 1:
            y = y * operands[1]
        if len(operands) > 2:
            y = y + operands[2]
        return [y.astype(x.dtype)]
    if kind == "batch_norm":
        _, s, b, m, v = operands
        sh = [1, -1] + [1] * (x.ndim - 2)
        y = (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + a["epsilon"]) * s.reshape(sh) + \
            b.reshape(sh)
        return [y.astype(x.dtype)]
    if kind == "softmax":
        xf = x.astype(np.float64)
        m = xf.max(axis=a["axis"], keepdims=True)
        e = np.exp(xf - m)
        s = e.sum(axis=a["axis"], keepdims=True)
        y = (xf - m - np.log(s)) if a.get("log") else e / s
        return [y.astype(x.dtype)]
    if kind == "reduce":
        return [reduce(REDUCE[a["kind"]], x, a["axes"], a["keep_dims"])]
    if kind in ("reshape", "expand"):
        shape, _ = parse_tensor_type(result_types[0])
        return [x.reshape(shape) if kind == "reshape" else np.broadcast_to(x, shape).copy()]
    if kind == "transpose":
        return [np.transpose(x, a["permutation"])]
    if kind == "concat":
        return [np.concatenate(operands, axis=a["axis"])]
    if kind == "slice":
        idx = []
        for o, n, s in zip(a["offsets"], a["sizes"], a["strides"]):
            idx.append(np.arange(n) * s + o)
        y = x
        for d, ix in enumerate(idx):
            y = np.take(y, ix, axis=d)
        return [y]
    if kind == "gather":
        idx = operands[1]
        idx = np.where(idx < 0, idx + x.shape[a["axis"]], idx)
        return [np.take(x, idx, axis=a["axis"])]
    if kind == "embedding":
        return [operands[0][operands[1]]]
    if kind == "scatter":
        return [scatter(operands[0], operands[1], operands[2], a["axis"], a.get("reduction"))]
    if kind == "pad":
        r = x.ndim
        p = a["padding"]
        mode = PAD[a["mode"]]
        crop = [slice(max(0, -p[d]), x.shape[d] - max(0, -p[r + d])) for d in range(r)]
        y = x[tuple(crop)]
        width = [(max(0, p[d]), max(0, p[r + d])) for d in range(r)]
        if mode == "constant":
            return [np.pad(y, width, constant_values=a.get("value", 0.0)).astype(x.dtype)]
        return [np.pad(y, width, mode=mode)]
    if kind == "topk":
        return list(topk(x, a["k"], a["axis"], a.get("largest", True)))
    raise Unsupported(f"loom.{kind}")


def run_module(text, inputs, model_dir="."):
    args, ops, rets = parse_module(text)
    if len(args) != len(inputs):
        raise Unsupported(f"{len(args)} arguments but {len(inputs)} inputs")
    env = dict(zip(args, inputs))
    for names, kind, operands, attrs, result_types in ops:
        vals = evaluate(kind, [env[o] for o in operands], attrs, result_types, model_dir)
        for n, v, ty in zip(names, vals, result_types):
            shape, _ = parse_tensor_type(ty)
            v = np.asarray(v)
            if list(v.shape) != shape:
                raise AssertionError(f"loom.{kind} produced shape {list(v.shape)}, "
                                     f"type says {shape}")
            env[n] = v
    return [env[r] for r in rets]
