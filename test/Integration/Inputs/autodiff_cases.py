#!/usr/bin/env python3
# test/Integration/Inputs/autodiff_cases.py - one tiny model per gradient rule
# of --loom-autodiff, with PyTorch's gradients as the reference.
"""Usage: autodiff_cases.py OUTDIR [--list] [--only NAME,...]

Writes, for every case NAME (or those --only names), a directory OUTDIR/NAME:

  NAME.mlir       func.func @main(%x: tensor<...xf32> {loom.name = "x"})
                  -> (tensor<...> {loom.name = "y"}) in loom ops; it reads its
                  trainable weights with `loom.weight parameter "w" from
                  "NAME.bin"[offset]`, and the op under test lies between a
                  weight and the result
  NAME.bin        the weights, float32 little-endian at those offsets
  x.npy, cot.npy  the input and the cotangent of y (float32)
  ref/output.npy  y, and ref/<weight>.grad.npy, d sum(y * cot) / d weight,
                  from PyTorch autograd in float64, cast to float32
  case.json       the check's tolerances (check_gradients.py --rtol/--atol)

and OUTDIR/errors/*.mlir: functions where an op without a gradient rule lies
between a weight and the result (the op is named in the file name and in the
first line's comment), for a test of the diagnostic. --list prints the case
names and writes nothing.

Every case draws its values from numpy.random.RandomState(crc32(NAME)), so a
case does not change when others are added. Values are drawn where the op is
smooth: positive bases for log/sqrt/rsqrt/pow, nonzero divisors, no values
near relu/abs/sign's kink, clamp's bounds or floor/round's steps; max/min
operands are continuous random draws, so they have no ties. Two kinds of
case probe such points on purpose, where the function is still smooth in
the weight and PyTorch's gradient is the derivative: *_tied_copies (a max or
min over copies of one value), binary_{max,min}_same_value_ties and
binary_pow_zero_base_* (x^0 at x = 0, 0^e for e > 0).
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np

# ---------------------------------------------------------------------------
# Value samplers: (RandomState, shape) -> float64 array.


def normal(scale=1.0):
    return lambda rng, s: rng.standard_normal(s) * scale


def uniform(lo, hi):
    return lambda rng, s: rng.uniform(lo, hi, s)


def signed(lo, hi):
    """|v| in [lo, hi), either sign: away from a kink at 0."""
    return lambda rng, s: np.where(rng.uniform(size=s) < 0.5, -1.0, 1.0) * rng.uniform(lo, hi, s)


def away_from(points, margin=0.1, scale=1.0):
    """Normal values at least `margin` from every point (clamp bounds)."""
    def draw(rng, s):
        v = np.asarray(rng.standard_normal(s) * scale, dtype=np.float64)
        while True:
            bad = np.zeros(v.shape, dtype=bool)
            for p in points:
                bad |= np.abs(v - p) < margin
            if not bad.any():
                return v
            v[bad] = rng.standard_normal(int(bad.sum())) * scale
    return draw


def off_steps(rng, s):
    """k + f with f in [0.15, 0.35] or [0.65, 0.85]: away from floor/ceil's
    integers and round's halves."""
    k = rng.randint(-3, 3, s).astype(np.float64)
    f = rng.uniform(0.15, 0.35, s) + np.where(rng.uniform(size=s) < 0.5, 0.0, 0.5)
    return k + f


# ---------------------------------------------------------------------------
# Cases.


def T(shape, elt="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


class W:
    def __init__(self, name, shape, draw=None, role="parameter"):
        self.name, self.shape, self.draw, self.role = name, list(shape), draw or normal(), role


CASES = {}


def case(name, x, weights, body, ref, rtol=None, atol=None, result="%y"):
    """x: (shape, sampler); body: loom ops defining the result (%y) from %x
    and %<weight>; ref(x, w): y in torch from the float64 input and a dict of
    the weights."""
    assert name not in CASES, name
    CASES[name] = dict(x=(list(x[0]), x[1] if len(x) > 1 else normal()), weights=weights,
                       body=body, ref=ref, rtol=rtol, atol=atol, result=result)


def torch_fns():
    import torch
    import torch.nn.functional as F
    return torch, F


# Deferred so that --list needs no torch: the reference lambdas resolve
# these at call time.
torch = F = None

# --- unary -------------------------------------------------------------------

UNARY = {
    # kind: (torch function, weight sampler)
    "identity": (lambda t: t, normal()),
    "neg": (lambda t: -t, normal()),
    "abs": (lambda t: t.abs(), signed(0.2, 2.0)),
    "exp": (lambda t: t.exp(), normal()),
    "log": (lambda t: t.log(), uniform(0.5, 2.0)),
    "sqrt": (lambda t: t.sqrt(), uniform(0.5, 2.0)),
    "rsqrt": (lambda t: t.rsqrt(), uniform(0.5, 2.0)),
    "reciprocal": (lambda t: t.reciprocal(), signed(0.5, 2.0)),
    "relu": (lambda t: t.relu(), signed(0.2, 2.0)),
    "sigmoid": (lambda t: t.sigmoid(), normal(2.0)),
    "tanh": (lambda t: t.tanh(), normal()),
    "silu": (lambda t: F.silu(t), normal(2.0)),
    "softplus": (lambda t: F.softplus(t), normal(2.0)),
    "gelu": (lambda t: F.gelu(t), normal(2.0)),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"), normal(2.0)),
    "erf": (lambda t: torch.erf(t), normal()),
    "sin": (lambda t: t.sin(), normal(2.0)),
    "cos": (lambda t: t.cos(), normal(2.0)),
    # Piecewise constant: zero gradient, the weight's adjoint is never written.
    "floor": (lambda t: t.floor(), off_steps),
    "ceil": (lambda t: t.ceil(), off_steps),
    "round": (lambda t: t.round(), off_steps),
    "sign": (lambda t: t.sign(), signed(0.2, 2.0)),
}

for kind, (fn, draw) in UNARY.items():
    case(f"unary_{kind}", ([4, 8],), [W("w", [4, 8], draw)], f"""
%u = loom.unary {kind} %w : {T([4, 8])}
%y = loom.binary mul %u, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, fn=fn: fn(w["w"]) * x)

# --- binary ------------------------------------------------------------------

BINARY = {
    # kind: (torch function, lhs sampler, rhs sampler)
    "add": (lambda a, b: a + b, normal(), normal()),
    "sub": (lambda a, b: a - b, normal(), normal()),
    "mul": (lambda a, b: a * b, normal(), normal()),
    "div": (lambda a, b: a / b, normal(), signed(0.5, 2.0)),
    "max": (lambda a, b: torch.maximum(a, b), normal(), normal()),
    "min": (lambda a, b: torch.minimum(a, b), normal(), normal()),
    "pow": (lambda a, b: torch.pow(a, b), uniform(0.5, 2.0), uniform(-2.0, 2.0)),
}

for kind, (fn, lhs, rhs) in BINARY.items():
    # A weight on the left, broadcast against the activation on the right.
    case(f"binary_{kind}_w8_x4x8", ([4, 8], rhs), [W("w", [8], lhs)], f"""
%y = loom.binary {kind} %w, %x : {T([8])}, {T([4, 8])}
""", lambda x, w, fn=fn: fn(w["w"], x))
    # Only the right operand active (the rules that skip the left one).
    case(f"binary_{kind}_x4x8_w8", ([4, 8], lhs), [W("w", [8], rhs)], f"""
%y = loom.binary {kind} %x, %w : {T([4, 8])}, {T([8])}
""", lambda x, w, fn=fn: fn(x, w["w"]))
    # Both operands weights, both broadcast: [2,1,8] op [3,8] -> [2,3,8].
    case(f"binary_{kind}_w2x1x8_w3x8", ([2, 3, 8],), [W("a", [2, 1, 8], lhs), W("b", [3, 8], rhs)], f"""
%t = loom.binary {kind} %a, %b : {T([2, 1, 8])}, {T([3, 8])}
%y = loom.binary add %t, %x : {T([2, 3, 8])}, {T([2, 3, 8])}
""", lambda x, w, fn=fn: fn(w["a"], w["b"]) + x)
    # Both weights, unit dims on both sides: [4,1] op [1,8] -> [4,8].
    case(f"binary_{kind}_w4x1_w1x8", ([4, 8],), [W("a", [4, 1], lhs), W("b", [1, 8], rhs)], f"""
%t = loom.binary {kind} %a, %b : {T([4, 1])}, {T([1, 8])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, fn=fn: fn(w["a"], w["b"]) * x)
    # Same shapes, both operands from weights through activations.
    case(f"binary_{kind}_same_shape_active", ([4, 8], uniform(0.5, 1.5)),
         [W("a", [4, 8], lhs), W("b", [4, 8], rhs)], f"""
%p = loom.binary mul %a, %x : {T([4, 8])}, {T([4, 8])}
%q = loom.binary mul %b, %x : {T([4, 8])}, {T([4, 8])}
%y = loom.binary {kind} %p, %q : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, fn=fn: fn(w["a"] * x, w["b"] * x))

# A weight on both sides of one op: both adjoints add up into one.
case("binary_mul_same_value", ([4, 8],), [W("w", [4, 8])], f"""
%t = loom.binary mul %w, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["w"] * w["w"] * x)
case("binary_sub_same_value", ([4, 8],), [W("w", [4, 8])], f"""
%t = loom.binary sub %w, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.binary add %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: (w["w"] - w["w"]) + x)
# max/min of a value with itself ties everywhere: PyTorch gives each side
# half the adjoint, so the weight's gradient is the adjoint once (a rule
# giving each side all of it would double it).
for kind, fn in [("max", lambda a, b: torch.maximum(a, b)),
                 ("min", lambda a, b: torch.minimum(a, b))]:
    case(f"binary_{kind}_same_value_ties", ([4, 8],), [W("w", [4, 8])], f"""
%t = loom.binary {kind} %w, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, fn=fn: fn(w["w"], w["w"]) * x)
case("binary_pow_same_value", ([4, 8],), [W("w", [4, 8], uniform(0.5, 2.0))], f"""
%t = loom.binary pow %w, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: torch.pow(w["w"], w["w"]) * x)
# A rank-0 weight broadcast over everything: its adjoint sums all of it.
case("binary_mul_x4x8_scalar", ([4, 8],), [W("w", [])], f"""
%y = loom.binary mul %x, %w : {T([4, 8])}, {T([])}
""", lambda x, w: x * w["w"])
case("binary_div_scalar_x4x8", ([4, 8], signed(0.5, 2.0)), [W("w", [])], f"""
%y = loom.binary div %w, %x : {T([])}, {T([4, 8])}
""", lambda x, w: w["w"] / x)

# A negative base under a constant exponent (x^2, x^3 as in decomposed
# norms): the exponent's adjoint, which would need log(base), is not formed.
POW_EXPONENTS = [2.0, 3.0, 1.0, 0.0, -1.0, 2.0, 3.0, 4.0]
case("binary_pow_negative_base_const_exponent", ([4, 8],), [W("w", [4, 8], signed(0.5, 1.5))], f"""
%e = loom.constant dense<{POW_EXPONENTS}> : {T([8])}
%t = loom.binary pow %w, %e : {T([4, 8])}, {T([8])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: torch.pow(w["w"], torch.tensor(POW_EXPONENTS)) * x)
# A zero base where pow is smooth in the differentiated operand: x^0 = 1 for
# every x and 0^e = 0 for every e > 0, so both derivatives are 0 there
# (PyTorch masks them to 0).
POW_BASES = [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0]
case("binary_pow_zero_base_const_exponent", ([8],),
     [W("w", [8], lambda rng, s: np.concatenate([np.zeros(4), rng.uniform(0.5, 2.0, 4)]).reshape(s))], f"""
%e = loom.constant dense<{POW_EXPONENTS}> : {T([8])}
%t = loom.binary pow %w, %e : {T([8])}, {T([8])}
%y = loom.binary mul %t, %x : {T([8])}, {T([8])}
""", lambda x, w: torch.pow(w["w"], torch.tensor(POW_EXPONENTS)) * x)
case("binary_pow_zero_base_weight_exponent", ([8],), [W("w", [8], uniform(0.5, 2.0))], f"""
%b = loom.constant dense<{POW_BASES}> : {T([8])}
%t = loom.binary pow %b, %w : {T([8])}, {T([8])}
%y = loom.binary mul %t, %x : {T([8])}, {T([8])}
""", lambda x, w: torch.pow(torch.tensor(POW_BASES), w["w"]) * x)
# The adjoints are the cotangent itself: gradients that alias an input and
# each other.
case("binary_add_grads_are_cotangent", ([4, 8],), [W("a", [4, 8]), W("b", [4, 8])], f"""
%t = loom.binary add %a, %x : {T([4, 8])}, {T([4, 8])}
%y = loom.binary add %t, %b : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["a"] + x + w["b"])

# --- where, clamp, cast --------------------------------------------------------

WHERE_HEAD = f"""
%zero = loom.constant dense<0.0> : {T([])}
%c = loom.compare gt %x, %zero : {T([4, 8])}, {T([])}
"""
case("where_w8_w4x1", ([4, 8],), [W("a", [8]), W("b", [4, 1])], WHERE_HEAD + f"""
%y = loom.where %c, %a, %b : {T([4, 8], "i1")}, {T([8])}, {T([4, 1])}
""", lambda x, w: torch.where(x > 0, w["a"], w["b"]))
case("where_x_w", ([4, 8],), [W("w", [4, 8])], WHERE_HEAD + f"""
%y = loom.where %c, %x, %w : {T([4, 8], "i1")}, {T([4, 8])}, {T([4, 8])}
""", lambda x, w: torch.where(x > 0, x, w["w"]))
case("where_w_const", ([4, 8],), [W("w", [4, 8])], WHERE_HEAD + f"""
%t = loom.where %c, %w, %zero : {T([4, 8], "i1")}, {T([4, 8])}, {T([])}
%y = loom.binary mul %t, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: torch.where(x > 0, w["w"], torch.zeros((), dtype=x.dtype)) * x)
MASK = [True, False, False, True, True, False, True, False]
case("where_mask8_w4x8_x", ([4, 8],), [W("w", [4, 8])], f"""
%m = loom.constant dense<[{", ".join("true" if v else "false" for v in MASK)}]> : {T([8], "i1")}
%y = loom.where %m, %w, %x : {T([8], "i1")}, {T([4, 8])}, {T([4, 8])}
""", lambda x, w: torch.where(torch.tensor(MASK), w["w"], x))

for name, lo, hi in [("both", -0.5, 0.5), ("min", -0.25, None), ("max", None, 0.3)]:
    bounds = ", ".join(f"{k} = {v!r} : f64" for k, v in [("min", lo), ("max", hi)] if v is not None)
    points = [v for v in (lo, hi) if v is not None]
    case(f"clamp_{name}", ([4, 8],), [W("w", [4, 8], away_from(points, 0.05))], f"""
%c = loom.clamp %w {{{bounds}}} : {T([4, 8])}
%y = loom.binary mul %c, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, lo=lo, hi=hi: torch.clamp(w["w"], min=lo, max=hi) * x)

# Round trips through a narrower float: the adjoint is rounded the same way,
# so the tolerance is the narrow type's.
for elt, tdtype, rtol in [("f16", "float16", 2e-3), ("bf16", "bfloat16", 1.6e-2)]:
    case(f"cast_f32_{elt}_f32", ([4, 8],), [W("w", [4, 8])], f"""
%h = loom.cast %w : {T([4, 8])} to {T([4, 8], elt)}
%f = loom.cast %h : {T([4, 8], elt)} to {T([4, 8])}
%y = loom.binary mul %f, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w, d=tdtype: w["w"].to(getattr(torch, d)).to(x.dtype) * x, rtol=rtol, atol=rtol)
case("cast_f32_f64_exp", ([4, 8],), [W("w", [4, 8])], f"""
%d = loom.cast %w : {T([4, 8])} to {T([4, 8], "f64")}
%e = loom.unary exp %d : {T([4, 8], "f64")}
%f = loom.cast %e : {T([4, 8], "f64")} to {T([4, 8])}
%y = loom.binary mul %f, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["w"].exp() * x)

# --- matmul ------------------------------------------------------------------

case("matmul_x4x8_w8x6", ([4, 8],), [W("w", [8, 6])], f"""
%y = loom.matmul %x, %w : {T([4, 8])}, {T([8, 6])}
""", lambda x, w: x @ w["w"])
case("matmul_w4x8_x8x6", ([8, 6],), [W("w", [4, 8])], f"""
%y = loom.matmul %w, %x : {T([4, 8])}, {T([8, 6])}
""", lambda x, w: w["w"] @ x)
case("matmul_w4x8_w8x6", ([4, 6],), [W("a", [4, 8]), W("b", [8, 6])], f"""
%t = loom.matmul %a, %b : {T([4, 8])}, {T([8, 6])}
%y = loom.binary add %t, %x : {T([4, 6])}, {T([4, 6])}
""", lambda x, w: w["a"] @ w["b"] + x)
# Linear layers: a rank-2 weight under a batched activation.
case("matmul_linear_x2x3x8_w8x5", ([2, 3, 8],), [W("w", [8, 5])], f"""
%y = loom.matmul %x, %w : {T([2, 3, 8])}, {T([8, 5])}
""", lambda x, w: x @ w["w"])
case("matmul_linear_x2x2x3x8_w8x4", ([2, 2, 3, 8],), [W("w", [8, 4])], f"""
%y = loom.matmul %x, %w : {T([2, 2, 3, 8])}, {T([8, 4])}
""", lambda x, w: x @ w["w"])
case("matmul_linear_both_active", ([2, 3, 8],), [W("s", [8]), W("w", [8, 5])], f"""
%a = loom.binary mul %x, %s : {T([2, 3, 8])}, {T([8])}
%y = loom.matmul %a, %w : {T([2, 3, 8])}, {T([8, 5])}
""", lambda x, w: (x * w["s"]) @ w["w"])
# Batched, and batch dims broadcast on either side.
case("matmul_batched_w2x3x4_w2x4x5", ([2, 3, 5],), [W("a", [2, 3, 4]), W("b", [2, 4, 5])], f"""
%t = loom.matmul %a, %b : {T([2, 3, 4])}, {T([2, 4, 5])}
%y = loom.binary add %t, %x : {T([2, 3, 5])}, {T([2, 3, 5])}
""", lambda x, w: w["a"] @ w["b"] + x)
case("matmul_bcast_w2x1x3x4_w3x4x5", ([2, 3, 3, 5],), [W("a", [2, 1, 3, 4]), W("b", [3, 4, 5])], f"""
%t = loom.matmul %a, %b : {T([2, 1, 3, 4])}, {T([3, 4, 5])}
%y = loom.binary mul %t, %x : {T([2, 3, 3, 5])}, {T([2, 3, 3, 5])}
""", lambda x, w: (w["a"] @ w["b"]) * x)
case("matmul_bcast_x2x3x8_w1x8x5", ([2, 3, 8],), [W("w", [1, 8, 5])], f"""
%y = loom.matmul %x, %w : {T([2, 3, 8])}, {T([1, 8, 5])}
""", lambda x, w: x @ w["w"])
case("matmul_bcast_w3x8_x2x8x5", ([2, 8, 5],), [W("w", [3, 8])], f"""
%y = loom.matmul %w, %x : {T([3, 8])}, {T([2, 8, 5])}
""", lambda x, w: w["w"] @ x)

# --- layer_norm, rms_norm ----------------------------------------------------------

case("layer_norm_bias", ([4, 8],), [W("w", [4, 8]), W("g", [8]), W("b", [8])], f"""
%a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.layer_norm %a scale %g bias %b {{axis = 1 : i64, epsilon = 1.0e-05 : f64}} : {T([4, 8])}, {T([8])}, {T([8])}
""", lambda x, w: F.layer_norm(x * w["w"], [8], w["g"], w["b"], 1e-5))
case("layer_norm_no_bias", ([4, 8],), [W("w", [4, 8]), W("g", [8])], f"""
%a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.layer_norm %a scale %g {{axis = 1 : i64, epsilon = 1.0e-05 : f64}} : {T([4, 8])}, {T([8])}
""", lambda x, w: F.layer_norm(x * w["w"], [8], w["g"], None, 1e-5))
case("layer_norm_x2x3x4_axis1", ([2, 3, 4],), [W("w", [3, 4]), W("g", [3, 4]), W("b", [3, 4])], f"""
%a = loom.binary add %x, %w : {T([2, 3, 4])}, {T([3, 4])}
%y = loom.layer_norm %a scale %g bias %b {{axis = 1 : i64, epsilon = 1.0e-03 : f64}} : {T([2, 3, 4])}, {T([3, 4])}, {T([3, 4])}
""", lambda x, w: F.layer_norm(x + w["w"], [3, 4], w["g"], w["b"], 1e-3))
case("layer_norm_const_scale", ([4, 8],), [W("w", [4, 8])], f"""
%g = loom.constant dense<1.5> : {T([8])}
%a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.layer_norm %a scale %g {{axis = 1 : i64, epsilon = 1.0e-05 : f64}} : {T([4, 8])}, {T([8])}
""", lambda x, w: F.layer_norm(x * w["w"], [8], torch.full([8], 1.5, dtype=x.dtype), None, 1e-5))
case("layer_norm_affine_only", ([2, 3, 8],), [W("g", [8]), W("b", [8])], f"""
%y = loom.layer_norm %x scale %g bias %b {{axis = 2 : i64, epsilon = 1.0e-05 : f64}} : {T([2, 3, 8])}, {T([8])}, {T([8])}
""", lambda x, w: F.layer_norm(x, [8], w["g"], w["b"], 1e-5))


def rms_norm(t, scale, dims, eps):
    r = t / torch.sqrt((t * t).mean(dim=dims, keepdim=True) + eps)
    return r * scale if scale is not None else r


case("rms_norm_scale", ([4, 8],), [W("w", [4, 8]), W("g", [8])], f"""
%a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.rms_norm %a scale %g {{axis = 1 : i64, epsilon = 1.0e-06 : f64}} : {T([4, 8])}, {T([8])}
""", lambda x, w: rms_norm(x * w["w"], w["g"], [1], 1e-6))
case("rms_norm_no_scale", ([4, 8],), [W("w", [4, 8])], f"""
%a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
%y = loom.rms_norm %a {{axis = 1 : i64, epsilon = 1.0e-06 : f64}} : {T([4, 8])}
""", lambda x, w: rms_norm(x * w["w"], None, [1], 1e-6))
case("rms_norm_x2x3x4_axis1", ([2, 3, 4],), [W("w", [3, 4]), W("g", [3, 4])], f"""
%a = loom.binary add %x, %w : {T([2, 3, 4])}, {T([3, 4])}
%y = loom.rms_norm %a scale %g {{axis = 1 : i64, epsilon = 1.0e-03 : f64}} : {T([2, 3, 4])}, {T([3, 4])}
""", lambda x, w: rms_norm(x + w["w"], w["g"], [1, 2], 1e-3))
case("rms_norm_scale_only", ([2, 3, 8],), [W("g", [8])], f"""
%y = loom.rms_norm %x scale %g {{axis = 2 : i64, epsilon = 1.0e-06 : f64}} : {T([2, 3, 8])}, {T([8])}
""", lambda x, w: rms_norm(x, w["g"], [2], 1e-6))

# --- softmax -----------------------------------------------------------------

for log in (False, True):
    kind = "log_softmax" if log else "softmax"
    attr = ", log" if log else ""
    tfn = (lambda t, d: F.log_softmax(t, d)) if log else (lambda t, d: F.softmax(t, d))
    for shape, axis in [([4, 8], 1), ([4, 8], 0), ([2, 5, 3], 1)]:
        case(f"{kind}_{'x'.join(map(str, shape))}_axis{axis}", (shape,), [W("w", shape)], f"""
%a = loom.binary mul %x, %w : {T(shape)}, {T(shape)}
%y = loom.softmax %a {{axis = {axis} : i64{attr}}} : {T(shape)}
""", lambda x, w, axis=axis, tfn=tfn: tfn(x * w["w"], axis))

# --- reduce ------------------------------------------------------------------

REDUCE = {
    "sum": lambda t, d, k: t.sum(dim=d, keepdim=k),
    "mean": lambda t, d, k: t.mean(dim=d, keepdim=k),
    "max": lambda t, d, k: t.amax(dim=d, keepdim=k),
    "min": lambda t, d, k: t.amin(dim=d, keepdim=k),
    "sum_square": lambda t, d, k: (t * t).sum(dim=d, keepdim=k),
}
for kind, fn in REDUCE.items():
    for axes, keep in [([1], True), ([0, 2], False), ([2], False), ([0, 1, 2], True)]:
        suffix = "keep" if keep else "drop"
        case(f"reduce_{kind}_axes{''.join(map(str, axes))}_{suffix}", ([2, 3, 4],), [W("w", [2, 3, 4])], f"""
%a = loom.binary mul %x, %w : {T([2, 3, 4])}, {T([2, 3, 4])}
%y = loom.reduce {kind} %a {{axes = array<i64: {", ".join(map(str, axes))}>, keep_dims = {str(keep).lower()}}} : {T([2, 3, 4])}
""", lambda x, w, fn=fn, axes=axes, keep=keep: fn(x * w["w"], axes, keep))
# Ties that are copies of one value: max_j w[i] over 8 copies of w[i] is
# w[i], with derivative 1 (PyTorch's amax/amin split the adjoint evenly
# between tied elements); so is the min over w concatenated with itself.
case("reduce_max_tied_copies", ([4],), [W("w", [4, 1])], f"""
%e = loom.expand %w : {T([4, 1])} -> {T([4, 8])}
%m = loom.reduce max %e {{axes = array<i64: 1>, keep_dims = false}} : {T([4, 8])}
%y = loom.binary mul %m, %x : {T([4])}, {T([4])}
""", lambda x, w: w["w"].expand(4, 8).amax(1) * x)
case("reduce_min_tied_copies", ([4],), [W("w", [4, 2])], f"""
%c = loom.concat %w, %w {{axis = 1 : i64}} : {T([4, 2])}, {T([4, 2])}
%m = loom.reduce min %c {{axes = array<i64: 1>, keep_dims = false}} : {T([4, 4])}
%y = loom.binary mul %m, %x : {T([4])}, {T([4])}
""", lambda x, w: torch.cat([w["w"], w["w"]], 1).amin(1) * x)
# Everything into a rank-0 result.
case("reduce_sum_all_to_scalar", ([2, 3, 4],), [W("w", [2, 3, 4])], f"""
%a = loom.binary mul %x, %w : {T([2, 3, 4])}, {T([2, 3, 4])}
%y = loom.reduce sum %a {{axes = array<i64: 0, 1, 2>, keep_dims = false}} : {T([2, 3, 4])}
""", lambda x, w: (x * w["w"]).sum())

# --- shape ops ---------------------------------------------------------------

case("reshape_4x6_to_2x2x6", ([2, 2, 6],), [W("w", [4, 6])], f"""
%r = loom.reshape %w : {T([4, 6])} -> {T([2, 2, 6])}
%y = loom.binary mul %r, %x : {T([2, 2, 6])}, {T([2, 2, 6])}
""", lambda x, w: w["w"].reshape(2, 2, 6) * x)
case("reshape_2x3x4_to_24", ([24],), [W("w", [2, 3, 4])], f"""
%r = loom.reshape %w : {T([2, 3, 4])} -> {T([24])}
%y = loom.binary mul %r, %x : {T([24])}, {T([24])}
""", lambda x, w: w["w"].reshape(24) * x)
for shape, perm in [([4, 6], [1, 0]), ([2, 3, 4], [2, 0, 1]), ([2, 3, 4, 5], [0, 2, 3, 1])]:
    out = [shape[p] for p in perm]
    case(f"transpose_{'x'.join(map(str, shape))}_perm{''.join(map(str, perm))}", (out,), [W("w", shape)], f"""
%t = loom.transpose %w {{permutation = array<i64: {", ".join(map(str, perm))}>}} : {T(shape)}
%y = loom.binary mul %t, %x : {T(out)}, {T(out)}
""", lambda x, w, perm=perm: w["w"].permute(*perm) * x)
case("expand_3x1_to_2x3x4", ([2, 3, 4],), [W("w", [3, 1])], f"""
%e = loom.expand %w : {T([3, 1])} -> {T([2, 3, 4])}
%y = loom.binary mul %e, %x : {T([2, 3, 4])}, {T([2, 3, 4])}
""", lambda x, w: w["w"].expand(2, 3, 4) * x)
case("expand_scalar_to_4x8", ([4, 8],), [W("w", [])], f"""
%e = loom.expand %w : {T([])} -> {T([4, 8])}
%y = loom.binary mul %e, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["w"].expand(4, 8) * x)
case("slice_6x8_at_1_2", ([3, 4],), [W("w", [6, 8])], f"""
%s = loom.slice %w {{offsets = array<i64: 1, 2>, sizes = array<i64: 3, 4>, strides = array<i64: 1, 1>}} : {T([6, 8])}
%y = loom.binary mul %s, %x : {T([3, 4])}, {T([3, 4])}
""", lambda x, w: w["w"][1:4, 2:6] * x)
case("slice_2x5x4_middle", ([2, 3, 4],), [W("w", [2, 5, 4])], f"""
%s = loom.slice %w {{offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 1>}} : {T([2, 5, 4])}
%y = loom.binary mul %s, %x : {T([2, 3, 4])}, {T([2, 3, 4])}
""", lambda x, w: w["w"][:, 1:4, :] * x)
case("concat_w2x3_w2x5_axis1", ([2, 8],), [W("a", [2, 3]), W("b", [2, 5])], f"""
%c = loom.concat %a, %b {{axis = 1 : i64}} : {T([2, 3])}, {T([2, 5])}
%y = loom.binary mul %c, %x : {T([2, 8])}, {T([2, 8])}
""", lambda x, w: torch.cat([w["a"], w["b"]], 1) * x)
case("concat_same_value_twice", ([2, 8],), [W("w", [2, 4])], f"""
%c = loom.concat %w, %w {{axis = 1 : i64}} : {T([2, 4])}, {T([2, 4])}
%y = loom.binary mul %c, %x : {T([2, 8])}, {T([2, 8])}
""", lambda x, w: torch.cat([w["w"], w["w"]], 1) * x)
# An inactive input between two uses of one weight.
case("concat_w_x_w_axis0", ([3, 4],), [W("w", [2, 4])], f"""
%e = loom.unary exp %w : {T([2, 4])}
%y = loom.concat %w, %x, %e {{axis = 0 : i64}} : {T([2, 4])}, {T([3, 4])}, {T([2, 4])}
""", lambda x, w: torch.cat([w["w"], x, w["w"].exp()], 0))

# --- embedding ---------------------------------------------------------------

for name, ids, dtype in [
        ("embedding", [[1, 3, 3], [0, 9, 1]], "i64"),
        ("embedding_i32_ids", [[4, 4, 4], [2, 7, 5]], "i32"),
        # Negative ids count from the end (the op's description).
        ("embedding_negative_ids", [[-1, 3, -10], [9, -3, 0]], "i64"),
        # Ids past the table clamp to its last row (the op's description).
        ("embedding_clamped_ids", [[12, 3, 10], [9, 1, 100]], "i64")]:
    def ref(x, w, ids=ids):
        idx = torch.tensor(ids, dtype=torch.int64)
        idx = torch.where(idx < 0, idx + 10, idx).clamp(0, 9)
        return w["table"][idx] * x
    case(name, ([2, 3, 4],), [W("table", [10, 4])], f"""
%ids = loom.constant dense<{ids}> : {T([2, 3], dtype)}
%e = loom.embedding %table, %ids : {T([10, 4])}, {T([2, 3], dtype)}
%y = loom.binary mul %e, %x : {T([2, 3, 4])}, {T([2, 3, 4])}
""", ref)

# --- gather ------------------------------------------------------------------
# The adjoint's slices scatter-add where they were read; negative indices
# count from the end and past-the-end ones clamp, as for embedding.


def gather_ref(w, idx, axis, n):
    i = torch.tensor(idx, dtype=torch.int64)
    i = torch.where(i < 0, i + n, i).clamp(0, n - 1)
    return w[(slice(None),) * axis + (i,)]


for name, wshape, idx, ishape, axis, out in [
        ("gather_axis1_repeated_and_negative", [4, 8], [0, 2, 2, -1], [4], 1, [4, 4]),
        ("gather_axis0_matrix_indices", [6, 3], [[1, 5], [1, 0]], [2, 2], 0, [2, 2, 3]),
        ("gather_scalar_index", [5, 4], 3, [], 0, [4]),
        ("gather_rank3_axis2_clamped", [2, 3, 5], [4, 7, -2], [3], 2, [2, 3, 3])]:
    case(name, (out,), [W("w", wshape)], f"""
%i = loom.constant dense<{idx}> : {T(ishape, "i64")}
%g = loom.gather %w, %i {{axis = {axis} : i64}} : {T(wshape)}, {T(ishape, "i64")}
%y = loom.binary mul %g, %x : {T(out)}, {T(out)}
""", lambda x, w, idx=idx, axis=axis, n=wshape[axis]: gather_ref(w["w"], idx, axis, n) * x)

# --- pad ---------------------------------------------------------------------
# Constant pads cut back from the adjoint (negative pads crop, so their
# adjoint is zero-padded); reflect, edge and wrap add every padded element's
# adjoint to the element it copies. References: torch's F.pad where it has
# the mode, else the indices the padded elements copy, read with
# index_select: wrap is periodic (a torus, as ONNX defines it; numpy's wrap
# is not, past the dim's size), edge clamps. Reflect past the dim's size is
# refused by the verifier.


def pad_by_index(w, dim, before, after, mode):
    n = w.shape[dim]
    idx = np.arange(-before, n + after)
    idx = idx % n if mode == "wrap" else np.clip(idx, 0, n - 1)
    return w.index_select(dim, torch.tensor(idx, dtype=torch.int64))


for name, wshape, padding, out, ref in [
        ("pad_constant_2d", [3, 4], [1, 0, 2, 1], [6, 5],
         lambda w: F.pad(w, (0, 1, 1, 2))),
        ("pad_constant_crop", [3, 4], [-1, 2, 0, -1], [2, 5],
         lambda w: F.pad(w, (2, -1, -1, 0))),
        ("pad_reflect_4d", [1, 2, 5, 6], [0, 0, 2, 3, 0, 0, 1, 4], [1, 2, 8, 13],
         lambda w: F.pad(w, (3, 4, 2, 1), mode="reflect")),
        ("pad_edge_4d", [1, 2, 3, 4], [0, 0, 3, 5, 0, 0, 0, 2], [1, 2, 6, 11],
         lambda w: F.pad(w, (5, 2, 3, 0), mode="replicate")),
        ("pad_wrap_4d", [1, 2, 5, 6], [0, 0, 2, 3, 0, 0, 4, 1], [1, 2, 11, 10],
         lambda w: F.pad(w, (3, 1, 2, 4), mode="circular")),
        ("pad_reflect_crop_first", [1, 2, 5, 6], [0, 0, -1, 3, 0, 0, 2, 0], [1, 2, 6, 9],
         lambda w: F.pad(w[:, :, 1:, :], (3, 0, 0, 2), mode="reflect")),
        # Past the dim's size, wrap goes round again.
        ("pad_wrap_past_the_size", [3, 4], [7, 0, 2, 0], [12, 4],
         lambda w: pad_by_index(w, 0, 7, 2, "wrap")),
        ("pad_edge_length_one", [1, 4], [3, 0, 2, 0], [6, 4],
         lambda w: pad_by_index(w, 0, 3, 2, "edge"))]:
    mode = name.split("_")[1]
    attrs = f"padding = array<i64: {', '.join(map(str, padding))}>"
    case(name, (out,), [W("w", wshape)], f"""
%p = loom.pad {mode} %w {{{attrs}}} : {T(wshape)}
%y = loom.binary mul %p, %x : {T(out)}, {T(out)}
""", lambda x, w, ref=ref: ref(w["w"]) * x)

# --- graph structure ---------------------------------------------------------

# Read through a fetched copy.
case("fetch_identity", ([4, 8],), [W("w", [4, 8])], f"""
%d = loom.fetch %w chunk 0 : {T([4, 8])}
%y = loom.binary mul %d, %x : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["w"] * x)
# One weight on three paths: the adjoints add up.
case("fanout_accumulate", ([4, 8],), [W("w", [4, 8])], f"""
%e = loom.unary exp %w : {T([4, 8])}
%m = loom.binary mul %e, %x : {T([4, 8])}, {T([4, 8])}
%s = loom.unary sin %w : {T([4, 8])}
%t = loom.binary add %m, %s : {T([4, 8])}, {T([4, 8])}
%y = loom.binary mul %t, %w : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: (w["w"].exp() * x + w["w"].sin()) * w["w"])
# A weight that reaches no result gets a zero gradient; a buffer none.
case("unused_weight_and_buffer", ([4, 8],), [W("w", [4, 8]), W("unused", [8]), W("stat", [8], role="buffer")], f"""
%dead = loom.binary mul %x, %unused : {T([4, 8])}, {T([8])}
%s = loom.binary mul %x, %stat : {T([4, 8])}, {T([8])}
%y = loom.binary mul %s, %w : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: x * w["stat"] * w["w"])
# A piecewise-constant op after a smooth one: the smooth op is active but
# gets no adjoint; the weight's gradient comes from the other path only.
case("piecewise_after_exp", ([4, 8],), [W("w", [4, 8], normal(0.5))], f"""
%e = loom.unary exp %w : {T([4, 8])}
%f = loom.unary floor %e : {T([4, 8])}
%m = loom.binary mul %w, %x : {T([4, 8])}, {T([4, 8])}
%y = loom.binary add %f, %m : {T([4, 8])}, {T([4, 8])}
""", lambda x, w: w["w"].exp().floor() + w["w"] * x)
# The result is the weight itself; the input is not read.
case("weight_is_result", ([4, 8],), [W("w", [4, 8])], f"""
%y = loom.unary identity %w : {T([4, 8])}
""", lambda x, w: w["w"] * 1.0)
case("weight_returned_directly", ([4, 8],), [W("w", [4, 8])], "", lambda x, w: w["w"], result="%w")
# --- convolution, pooling, batch norm, strided slices -------------------------
# The input's adjoint is checked through a weight scaling it (%a = x * s);
# ONNX-order pads (begin..., end...) are applied with F.pad in the reference.


def torch_pads(pads):
    """ONNX (b1, .., bn, e1, .., en) -> F.pad's last-dim-first pairs."""
    n = len(pads) // 2
    out = []
    for i in reversed(range(n)):
        out += [pads[i], pads[n + i]]
    return out


def int_array(values):
    return f"array<i64: {', '.join(map(str, values))}>"


def conv_case(name, xs, ws, strides, pads, dils, bias=True):
    sp = len(xs) - 2
    scale = [xs[1]] + [1] * sp
    weights = [W("s", scale), W("w", ws, normal(0.5))]
    if bias:
        weights.append(W("b", [ws[0]]))
    attrs = (f"strides = {int_array(strides)}, padding = {int_array(pads)}, "
             f"dilations = {int_array(dils)}, groups = 1 : i64")
    body = f"""
%a = loom.binary mul %x, %s : {T(xs)}, {T(scale)}
%y = loom.conv %a, %w{', %b' if bias else ''} {{{attrs}}} : {T(xs)}, {T(ws)}{f', {T([ws[0]])}' if bias else ''}
"""

    def ref(x, w):
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[sp]
        a = F.pad(x * w["s"], torch_pads(pads))
        return conv(a, w["w"], w["b"] if bias else None, stride=strides, dilation=dils)
    case(name, (xs,), weights, body, ref)


conv_case("conv2d_3x3_bias", [2, 3, 6, 6], [4, 3, 3, 3], [1, 1], [0, 0, 0, 0], [1, 1])
conv_case("conv2d_stride2_pad1", [2, 3, 7, 7], [4, 3, 3, 3], [2, 2], [1, 1, 1, 1], [1, 1])
# The last row and column no window reaches; the weight's adjoint grid is
# larger than the kernel and cropped.
conv_case("conv2d_stride2_skips_last", [1, 2, 8, 8], [3, 2, 3, 3], [2, 2], [0, 0, 0, 0], [1, 1], bias=False)
conv_case("conv2d_dilated_uneven_pads", [1, 2, 7, 6], [2, 2, 3, 2], [1, 2], [1, 0, 2, 1], [2, 1])
conv_case("conv2d_7x7_stride2_stem", [1, 3, 12, 12], [4, 3, 7, 7], [2, 2], [3, 3, 3, 3], [1, 1])
conv_case("conv2d_1x1_stride2_downsample", [1, 4, 6, 6], [8, 4, 1, 1], [2, 2], [0, 0, 0, 0], [1, 1], bias=False)
conv_case("conv1d_stride3_pads", [2, 3, 10], [4, 3, 3], [3], [1, 2], [1])
conv_case("conv3d_2x2x2", [1, 2, 4, 4, 4], [2, 2, 2, 2, 2], [1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 1, 1])


def pool_case(name, kind, xs, kernel, strides, pads, dils, ceil=False, include_pad=False):
    sp = len(xs) - 2
    flags = (", ceil_mode" if ceil else "") + (", count_include_pad" if include_pad else "")
    attrs = (f"kernel = {int_array(kernel)}, strides = {int_array(strides)}, "
             f"padding = {int_array(pads)}, dilations = {int_array(dils)}{flags}")
    body = f"""
%a = loom.binary mul %x, %w : {T(xs)}, {T(xs)}
%y = loom.pool {kind} %a {{{attrs}}} : {T(xs)}
"""

    def ref(x, w):
        a = x * w["w"]
        assert pads[:sp] == pads[sp:], "PyTorch pools take symmetric pads"
        if kind == "max":
            fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[sp]
            return fn(a, kernel, strides, pads[:sp], dils, ceil_mode=ceil)
        assert all(d == 1 for d in dils), "PyTorch's average pools take no dilation"
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[sp]
        return fn(a, kernel, strides, pads[:sp], ceil_mode=ceil, count_include_pad=include_pad)
    case(name, (xs,), [W("w", xs)], body, ref)


pool_case("pool_max_2x2_stride2", "max", [2, 3, 6, 6], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1])
# ResNet's stem: overlapping windows, -inf padding.
pool_case("pool_max_3x3_stride2_pad1", "max", [1, 2, 8, 8], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1])
pool_case("pool_max_ceil_mode", "max", [1, 1, 5, 5], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], ceil=True)
pool_case("pool_max_dilated", "max", [1, 1, 5, 5], [2, 2], [1, 1], [0, 0, 0, 0], [2, 2])
pool_case("pool_max_1d_pad1", "max", [2, 3, 9], [3], [2], [1, 1], [1])
# A window whose maximum appears twice or three times routes the adjoint to
# the first one, as PyTorch does.
case("pool_max_tie_goes_to_first",
     ([1, 1, 2, 4], lambda rng, s: np.array([1., 3., 2., 2., 3., 0., 2., 1.]).reshape(s)),
     [W("w", [1, 1, 2, 4], lambda rng, s: np.ones(s))], f"""
%a = loom.binary mul %x, %w : {T([1, 1, 2, 4])}, {T([1, 1, 2, 4])}
%y = loom.pool max %a {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}} : {T([1, 1, 2, 4])}
""", lambda x, w: F.max_pool2d(x * w["w"], 2))
pool_case("pool_avg_2x2_stride2", "avg", [2, 3, 6, 6], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1])
pool_case("pool_avg_3x3_pad1_include_pad", "avg", [1, 2, 7, 7], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], include_pad=True)
pool_case("pool_avg_3x3_pad1_exclude_pad", "avg", [1, 2, 7, 7], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1])
pool_case("pool_avg_ceil_mode", "avg", [1, 1, 5, 5], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], ceil=True)
pool_case("pool_avg_global", "avg", [2, 3, 4, 4], [4, 4], [4, 4], [0, 0, 0, 0], [1, 1])


def batch_norm_ref(a, w, eps):
    shape = [1, -1] + [1] * (a.dim() - 2)
    return ((a - w["m"].reshape(shape)) / (w["v"].reshape(shape) + eps).sqrt() * w["g"].reshape(shape)
            + w["b"].reshape(shape))


# The running statistics are weights here too, so their adjoints are checked.
for xs in ([2, 3, 4, 4], [4, 3, 5]):
    c, scale = xs[1], [xs[1]] + [1] * (len(xs) - 2)
    case(f"batch_norm_{'x'.join(map(str, xs))}", (xs,),
         [W("s", scale), W("g", [c]), W("b", [c]), W("m", [c]), W("v", [c], uniform(0.5, 2.0))], f"""
%a = loom.binary mul %x, %s : {T(xs)}, {T(scale)}
%y = loom.batch_norm %a, %g, %b, %m, %v {{epsilon = 1.0e-05 : f64}} : {T(xs)}, {T([c])}, {T([c])}, {T([c])}, {T([c])}
""", lambda x, w: batch_norm_ref(x * w["s"], w, 1e-5))

# Strided slices: the adjoint lands every `stride` elements.
case("slice_stride2_cols", ([4, 4],), [W("w", [4, 8])], f"""
%s = loom.slice %w {{offsets = array<i64: 0, 0>, sizes = array<i64: 4, 4>, strides = array<i64: 1, 2>}} : {T([4, 8])}
%y = loom.binary mul %s, %x : {T([4, 4])}, {T([4, 4])}
""", lambda x, w: w["w"][:, 0::2] * x)
case("slice_stride3_offset_both_dims", ([2, 2],), [W("w", [7, 8])], f"""
%s = loom.slice %w {{offsets = array<i64: 1, 2>, sizes = array<i64: 2, 2>, strides = array<i64: 3, 3>}} : {T([7, 8])}
%y = loom.binary mul %s, %x : {T([2, 2])}, {T([2, 2])}
""", lambda x, w: w["w"][1:7:3, 2:8:3] * x)

# Ops without a rule off the path from a weight to the result: a grouped
# conv with a buffer kernel and a hard swish, on the input only, then a
# pool and a product with a weight.
case("no_rule_ops_off_the_path", ([1, 2, 6, 6],), [W("k", [2, 1, 3, 3], role="buffer"), W("w", [1, 2, 2, 2])], f"""
%c = loom.conv %x, %k {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64}} : {T([1, 2, 6, 6])}, {T([2, 1, 3, 3])}
%h = loom.unary hard_swish %c : {T([1, 2, 4, 4])}
%p = loom.pool max %h {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}} : {T([1, 2, 4, 4])}
%y = loom.binary mul %p, %w : {T([1, 2, 2, 2])}, {T([1, 2, 2, 2])}
""", lambda x, w: F.max_pool2d(F.hardswish(F.conv2d(x, w["k"], groups=2)), 2) * w["w"])
# A small MLP: linear, gelu, linear, residual, layer norm.
case("mlp_block", ([2, 3, 8],), [W("w1", [8, 16], normal(0.3)), W("b1", [16]), W("w2", [16, 8], normal(0.3)),
                                  W("g", [8]), W("b", [8])], f"""
%h = loom.matmul %x, %w1 : {T([2, 3, 8])}, {T([8, 16])}
%hb = loom.binary add %h, %b1 : {T([2, 3, 16])}, {T([16])}
%a = loom.unary gelu %hb : {T([2, 3, 16])}
%o = loom.matmul %a, %w2 : {T([2, 3, 16])}, {T([16, 8])}
%r = loom.binary add %o, %x : {T([2, 3, 8])}, {T([2, 3, 8])}
%y = loom.layer_norm %r scale %g bias %b {{axis = 2 : i64, epsilon = 1.0e-05 : f64}} : {T([2, 3, 8])}, {T([8])}, {T([8])}
""", lambda x, w: F.layer_norm(F.gelu(x @ w["w1"] + w["b1"]) @ w["w2"] + x, [8], w["g"], w["b"], 1e-5))

# ---------------------------------------------------------------------------
# Error cases: an op without a rule between a weight and the result. The
# diagnostic names the op.

ERRORS = {
    "conv_grouped": ("loom.conv", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([2, 1, 3, 3])}
  %y = loom.conv %x, %w {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64}} : {T([1, 2, 4, 4])}, {T([2, 1, 3, 3])}
""", [1, 2, 4, 4], [1, 2, 2, 2]),
    "slice_reversed": ("loom.slice", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([4, 8])}
  %y = loom.slice %w {{offsets = array<i64: 3, 0>, sizes = array<i64: 4, 8>, strides = array<i64: -1, 1>}} : {T([4, 8])}
""", [4, 8], [4, 8]),
    "unary_hard_swish": ("loom.unary", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([4, 8])}
  %a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
  %y = loom.unary hard_swish %a : {T([4, 8])}
""", [4, 8], [4, 8]),
    "reduce_prod": ("loom.reduce", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([4, 8])}
  %a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
  %y = loom.reduce prod %a {{axes = array<i64: 1>, keep_dims = false}} : {T([4, 8])}
""", [4, 8], [4]),
    "scatter": ("loom.scatter", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([4, 8])}
  %i = loom.constant dense<[[0], [2], [1], [7]]> : {T([4, 1], "i64")}
  %u = loom.slice %x {{offsets = array<i64: 0, 0>, sizes = array<i64: 4, 1>, strides = array<i64: 1, 1>}} : {T([4, 8])}
  %y = loom.scatter %w, %i, %u {{axis = 1 : i64}} : {T([4, 8])}, {T([4, 1], "i64")}, {T([4, 1])}
""", [4, 8], [4, 8]),
    "topk": ("loom.topk", f"""
  %w = loom.weight parameter "w" from "w.bin"[0] : {T([4, 8])}
  %a = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
  %y, %i = loom.topk %a {{k = 2 : i64, axis = 1 : i64}} : {T([4, 8])}
""", [4, 8], [4, 2]),
}


def write_errors(outdir):
    d = os.path.join(outdir, "errors")
    os.makedirs(d, exist_ok=True)
    for name, (op, body, xs, ys) in ERRORS.items():
        with open(os.path.join(d, name + ".mlir"), "w") as f:
            f.write(f"// No gradient rule: {op}\n"
                    f'func.func @main(%x: {T(xs)} {{loom.name = "x"}}) -> ({T(ys)} {{loom.name = "y"}}) {{\n'
                    f"{body.lstrip(chr(10))}  return %y : {T(ys)}\n}}\n")


# ---------------------------------------------------------------------------


def write_case(outdir, name, c):
    rng = np.random.RandomState(zlib.crc32(name.encode()))
    d = os.path.join(outdir, name)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)

    def draw(shape, sampler):
        return np.asarray(sampler(rng, tuple(shape)), dtype=np.float64).astype(np.float32).reshape(shape)

    blob = bytearray()
    lines = []
    values = {}
    for w in c["weights"]:
        blob += bytes(-len(blob) % 64)  # 64-byte aligned offsets
        v = draw(w.shape, w.draw)
        values[w.name] = (w, v)
        lines.append(f'%{w.name} = loom.weight {w.role} "{w.name}" from "{name}.bin"[{len(blob)}] : {T(w.shape)}')
        blob += v.astype("<f4").tobytes()
    x = draw(*c["x"])

    xt = torch.tensor(x, dtype=torch.float64)
    leaves = {n: torch.tensor(v, dtype=torch.float64, requires_grad=(w.role == "parameter"))
              for n, (w, v) in values.items()}
    y = c["ref"](xt, leaves)
    cot = draw(list(y.shape), normal())
    loss = (y * torch.tensor(cot, dtype=torch.float64)).sum()
    if loss.requires_grad:
        loss.backward()

    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "cot.npy"), cot)
    np.save(os.path.join(d, "ref", "output.npy"), y.detach().numpy().astype(np.float32))
    for n, (w, v) in values.items():
        if w.role != "parameter":
            continue
        g = leaves[n].grad
        g = np.zeros(v.shape) if g is None else g.numpy()
        np.save(os.path.join(d, "ref", n + ".grad.npy"), g.astype(np.float32))
    with open(os.path.join(d, name + ".bin"), "wb") as f:
        f.write(bytes(blob))
    yt = T(list(y.shape))
    body = [l.strip() for l in c["body"].strip().splitlines()]
    with open(os.path.join(d, name + ".mlir"), "w") as f:
        f.write(f'func.func @main(%x: {T(list(x.shape))} {{loom.name = "x"}}) -> ({yt} {{loom.name = "y"}}) {{\n')
        for l in lines + body:
            f.write("  " + l + "\n")
        f.write(f"  return {c['result']} : {yt}\n}}\n")
    tol = {k: c[k] for k in ("rtol", "atol") if c[k] is not None}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(tol, f)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir", nargs="?")
    p.add_argument("--list", action="store_true", help="print the case names and exit")
    p.add_argument("--only", help="comma-separated case names")
    args = p.parse_args()
    names = list(CASES)
    if args.only:
        names = [n for n in args.only.split(",") if n]
        unknown = [n for n in names if n not in CASES]
        if unknown:
            p.error(f"unknown cases: {', '.join(unknown)}")
    if args.list:
        print("\n".join(names))
        return
    if not args.outdir:
        p.error("OUTDIR is required")
    global torch, F
    torch, F = torch_fns()
    torch.set_default_dtype(torch.float64)
    os.makedirs(args.outdir, exist_ok=True)
    for n in names:
        write_case(args.outdir, n, CASES[n])
    write_errors(args.outdir)
    print(f"wrote {len(names)} cases and {len(ERRORS)} error cases to {args.outdir}")


if __name__ == "__main__":
    main()
