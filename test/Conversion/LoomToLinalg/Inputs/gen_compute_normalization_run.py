#!/usr/bin/env python3
# gen_compute_normalization_run.py - writes compute-run.mlir and normalization-run.mlir.
"""Generates the execution tests of the Compute.cpp / Normalization.cpp lowerings.
Expected values come from numpy (test/Conformance/loom_reference.py; attention from
its op definition). Exactly printable results are checked as printed (%g); others
through an in-IR count of elements off by more than 1e-5 relative.

Usage (from test/Conversion/LoomToLinalg):
  /usr/bin/python3 Inputs/gen_compute_normalization_run.py normalization-run.mlir compute-run.mlir
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Conformance"))
import loom_reference as ref

rng = np.random.default_rng(7)

def rnd(shape, lo=-2, hi=2, step=0.25):
    return (rng.integers(int(lo / step), int(hi / step) + 1, size=shape) * step).astype(np.float32)

def ty(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"

def dense(arr, elem):
    def fmt(v):
        if elem == "i1":
            return "true" if v else "false"
        if elem.startswith(("f", "bf")):
            return repr(float(v))
        return str(int(v))
    def rec(a):
        if a.ndim == 0:
            return fmt(a.item())
        return "[" + ", ".join(rec(x) for x in a) + "]"
    return f"dense<{rec(np.asarray(arr))}>"

def gfmt(v, elem):
    if elem.startswith("f"):
        v = float(np.float32(v))
        if math.isnan(v):
            return "nan"
        return "%g" % v
    return str(int(v))

def checks(arr, elem):
    arr = np.asarray(arr)
    lines = [f"// CHECK: rank = {arr.ndim} offset = 0 sizes = [{', '.join(str(d) for d in arr.shape)}]"]
    if arr.ndim == 0:
        lines.append(f"// CHECK-NEXT: [{gfmt(arr.item(), elem)}]")
        return lines
    rows = arr.reshape(-1, arr.shape[-1]) if arr.size else []
    for r in rows:
        lines.append("// CHECK-NEXT: [" + ", ".join(gfmt(v, elem) for v in r) + "]")
    return lines

class Module:
    def __init__(self):
        self.body = []
        self.n = 0
    def const(self, arr, elem, loom=False):
        key = (np.asarray(arr).tobytes(), np.asarray(arr).shape, elem, loom)
        if not hasattr(self, "cache"):
            self.cache = {}
        if key in self.cache:
            return self.cache[key]
        self.n += 1
        self.cache[key] = f"%v{self.n}"
        name = f"%v{self.n}"
        arr = np.asarray(arr)
        t = ty(arr.shape, elem)
        if loom:
            self.body.append(f"  {name} = loom.constant {dense(arr, elem)} : {t}")
        else:
            self.body.append(f"  {name} = arith.constant {dense(arr, elem)} : {t}")
        return name
    def op(self, text):
        self.n += 1
        name = f"%v{self.n}"
        self.body.append(f"  {name} = {text}")
        return name
    def comment(self, text):
        self.body.append("")
        self.body.append(f"  // {text}")
    def show(self, value, shape, elem, expected, src_elem=None):
        """Prints `value` (of element type src_elem or elem) and checks it."""
        src_elem = src_elem or elem
        if src_elem != elem:
            value = self.op(f"loom.cast {value} : {ty(shape, src_elem)} to {ty(shape, elem)}")
        expected = np.asarray(expected)
        if elem == "f32" and not all(
                float("%g" % float(np.float32(v))) == float(np.float32(v))
                for v in expected.flat):
            self.tolerance(value, shape, expected)
            return
        self.n += 1
        u = f"%u{self.n}"
        fn = {"f32": "F32", "i64": "I64", "i32": "I32"}[elem]
        self.body.append(f"  {u} = tensor.cast {value} : {ty(shape, elem)} to tensor<*x{elem}>")
        self.body.append(f"  call @printMemref{fn}({u}) : (tensor<*x{elem}>) -> ()")
        self.body.extend("  " + c for c in checks(expected, elem))
    def tolerance(self, value, shape, expected):
        """Counts elements off by more than 1e-5 relative (+1e-6 absolute)
        from numpy's values (NaN counts as off) and checks the count is 0."""
        t = ty(shape, "f32")
        e = self.const(expected.astype(np.float32), "f32")
        rank = len(shape)
        dims = ", ".join(f"d{i}" for i in range(rank))
        idm = f"affine_map<({dims}) -> ({dims})>"
        scal = f"affine_map<({dims}) -> ()>"
        red = ", ".join(['"reduction"'] * rank)
        self.n += 1
        n = self.n
        self.body += [
            f"  %zero{n} = arith.constant 0 : i64",
            f"  %empty{n} = tensor.empty() : tensor<i64>",
            f"  %init{n} = linalg.fill ins(%zero{n} : i64) outs(%empty{n} : tensor<i64>) -> tensor<i64>",
            f"  %bad{n} = linalg.generic {{indexing_maps = [{idm}, {idm}, {scal}], "
            f"iterator_types = [{red}]}} "
            f"ins({value}, {e} : {t}, {t}) outs(%init{n} : tensor<i64>) {{",
            f"  ^bb0(%got: f32, %want: f32, %acc: i64):",
            f"    %diff = arith.subf %got, %want : f32",
            f"    %err = math.absf %diff : f32",
            f"    %mag = math.absf %want : f32",
            f"    %rel = arith.constant 1.0e-5 : f32",
            f"    %abs = arith.constant 1.0e-6 : f32",
            f"    %scaled = arith.mulf %mag, %rel : f32",
            f"    %tol = arith.addf %scaled, %abs : f32",
            f"    %off = arith.cmpf ugt, %err, %tol : f32",
            f"    %one = arith.extui %off : i1 to i64",
            f"    %sum = arith.addi %acc, %one : i64",
            f"    linalg.yield %sum : i64",
            f"  }} -> tensor<i64>",
            f"  %u{n} = tensor.cast %bad{n} : tensor<i64> to tensor<*xi64>",
            f"  call @printMemrefI64(%u{n}) : (tensor<*xi64>) -> ()",
            f"  // mismatches against numpy's {t} (the constant {e}):",
            f"  // CHECK: rank = 0 offset = 0 sizes = []",
            f"  // CHECK-NEXT: [0]",
        ]

    def text(self, header):
        out = [header, "",
               "func.func private @printMemrefF32(tensor<*xf32>)",
               "func.func private @printMemrefI64(tensor<*xi64>)",
               "func.func private @printMemrefI32(tensor<*xi32>)", "",
               "func.func @main() {"]
        out += self.body
        out += ["  return", "}", ""]
        return "\n".join(out)

RED = ref.REDUCE

def reduce_case(m, kind, x, elem, axes, keep, out_elem=None, loom=False, src=None):
    src = src or elem
    m.comment(f"reduce {kind} axes={axes} keep_dims={keep} on {ty(x.shape, src)}")
    v = m.const(x if src != "i1" else x.astype(bool), src, loom=loom)
    exp = ref.reduce(kind, x, axes, keep)
    shape = list(np.asarray(exp).shape)
    rel = "i64" if kind in ("argmax", "argmin") else src
    r = m.op(f"loom.reduce {kind} {v} {{axes = array<i64{': ' if axes else ''}{', '.join(map(str, axes))}>, keep_dims = {'true' if keep else 'false'}}} : {ty(x.shape, src)}")
    pe = out_elem or ("i64" if rel == "i64" else ("f32" if rel == "f32" else "i64"))
    m.show(r, shape, pe, exp, src_elem=rel)

def normalization():
    m = Module()
    x = rnd((2, 3, 4))
    reduce_case(m, "sum", x, "f32", [1], False)
    reduce_case(m, "mean", x, "f32", [0, 2], True)
    reduce_case(m, "max", x, "f32", [2], False)
    reduce_case(m, "min", x, "f32", [0], True)
    reduce_case(m, "prod", rnd((2, 3), 0.5, 2, 0.5), "f32", [1], False)
    reduce_case(m, "l1", x, "f32", [1, 2], False)
    reduce_case(m, "l2", x, "f32", [2], True)
    reduce_case(m, "sum_square", x, "f32", [0, 1, 2], False)
    reduce_case(m, "sum", x, "f32", [], False)
    ties = np.array([[1, 3, 3, -1], [-2, -2, 0, -2], [5, 5, 5, 5]], np.float32)
    reduce_case(m, "argmax", ties, "f32", [1], False)
    reduce_case(m, "argmin", ties, "f32", [1], True)
    reduce_case(m, "argmax", ties, "f32", [0], False)
    xi = np.array([[-3, -4, 7], [2, -9, 1]], np.int32)
    reduce_case(m, "sum", xi, "i32", [1], False, src="si32", loom=True)
    reduce_case(m, "mean", xi, "i32", [1], False, src="si32", loom=True)
    reduce_case(m, "max", xi, "i32", [0], False, src="si32", loom=True)
    reduce_case(m, "argmin", xi, "i32", [1], False, src="si32", loom=True)
    xu = np.array([[200, 3, 255], [127, 128, 0]], np.uint8)
    reduce_case(m, "max", xu, "i8", [1], False, src="ui8", loom=True)
    reduce_case(m, "min", xu, "i8", [1], True, src="ui8", loom=True)
    reduce_case(m, "argmax", xu, "i8", [1], False, src="ui8", loom=True)
    reduce_case(m, "l2", np.array([[3, 4], [-5, 12]], np.int32), "i32", [1], False, src="i32")
    reduce_case(m, "prod", np.array([[3, -4], [-5, 2]], np.int64), "i64", [0], False, src="i64")
    xb = np.array([[True, False, False], [False, False, False]])
    reduce_case(m, "sum", xb, "i1", [1], False, src="i1", out_elem="i32")
    reduce_case(m, "min", xb, "i1", [0], False, src="i1", out_elem="i32")

    # softmax
    for axis, log in ((2, False), (1, True), (0, False)):
        xs = rnd((2, 3, 4), -3, 3, 0.5)
        m.comment(f"softmax axis={axis} log={log}")
        v = m.const(xs, "f32")
        r = m.op(f"loom.softmax {v} {{axis = {axis} : i64{', log' if log else ''}}} : {ty(xs.shape, 'f32')}")
        exp = ref.evaluate("softmax", [xs], {"axis": axis, "log": log}, None, ".")[0]
        m.show(r, list(xs.shape), "f32", exp)

    # layer_norm / rms_norm
    xn = rnd((2, 3, 4), -2, 2, 0.25)
    for axis, bias in ((2, True), (1, False)):
        shape = xn.shape[axis:]
        g = rnd(shape, 0.5, 2, 0.25)
        b = rnd(shape)
        m.comment(f"layer_norm axis={axis} bias={bias}")
        vx, vg = m.const(xn, "f32"), m.const(g, "f32")
        if bias:
            vb = m.const(b, "f32")
            r = m.op(f"loom.layer_norm {vx} scale {vg} bias {vb} {{axis = {axis} : i64, epsilon = 1.0e-5 : f64}} : {ty(xn.shape, 'f32')}, {ty(shape, 'f32')}, {ty(shape, 'f32')}")
            ops = [xn, g, b]
        else:
            r = m.op(f"loom.layer_norm {vx} scale {vg} {{axis = {axis} : i64, epsilon = 1.0e-5 : f64}} : {ty(xn.shape, 'f32')}, {ty(shape, 'f32')}")
            ops = [xn, g]
        exp = ref.evaluate("layer_norm", ops, {"axis": axis, "epsilon": 1e-5}, None, ".")[0]
        m.show(r, list(xn.shape), "f32", exp)
    for axis, scale in ((2, True), (0, False)):
        shape = xn.shape[axis:]
        g = rnd(shape, 0.5, 2, 0.25)
        m.comment(f"rms_norm axis={axis} scale={scale}")
        vx = m.const(xn, "f32")
        if scale:
            vg = m.const(g, "f32")
            r = m.op(f"loom.rms_norm {vx} scale {vg} {{axis = {axis} : i64, epsilon = 1.0e-6 : f64}} : {ty(xn.shape, 'f32')}, {ty(shape, 'f32')}")
            ops = [xn, g]
        else:
            r = m.op(f"loom.rms_norm {vx} {{axis = {axis} : i64, epsilon = 1.0e-6 : f64}} : {ty(xn.shape, 'f32')}")
            ops = [xn]
        exp = ref.evaluate("rms_norm", ops, {"axis": axis, "epsilon": 1e-6}, None, ".")[0]
        m.show(r, list(xn.shape), "f32", exp)
    # batch_norm
    xb4 = rnd((2, 3, 2, 2))
    s, b, mu = rnd((3,), 0.5, 2), rnd((3,)), rnd((3,), -1, 1)
    var = rnd((3,), 0.25, 2)
    m.comment("batch_norm")
    vs = [m.const(a, "f32") for a in (xb4, s, b, mu, var)]
    c3 = ty((3,), "f32")
    r = m.op(f"loom.batch_norm {', '.join(vs)} {{epsilon = 1.0e-5 : f64}} : {ty(xb4.shape, 'f32')}, {c3}, {c3}, {c3}, {c3}")
    exp = ref.evaluate("batch_norm", [xb4, s, b, mu, var], {"epsilon": 1e-5}, None, ".")[0]
    m.show(r, list(xb4.shape), "f32", exp)
    return m

def arr_attr(v):
    return "array<i64" + (": " + ", ".join(map(str, v)) if len(v) else "") + ">"

def compute():
    m = Module()
    # matmul
    def mm(a, b, elem="f32", pelem=None):
        m.comment(f"matmul {ty(a.shape, elem)} x {ty(b.shape, elem)}")
        va, vb = m.const(a, elem), m.const(b, elem)
        exp = np.matmul(a, b)
        r = m.op(f"loom.matmul {va}, {vb} : {ty(a.shape, elem)}, {ty(b.shape, elem)}")
        pelem = pelem or elem
        m.show(r, list(exp.shape), pelem, exp, src_elem=elem)
    mm(rnd((3, 4)), rnd((4, 2)))
    mm(rnd((2, 3, 4)), rnd((4, 2)))
    mm(rnd((2, 2, 3)), rnd((2, 3, 2)))
    mm(rnd((2, 1, 2, 3)), rnd((3, 3, 2)))
    mm(rnd((2, 3)), rnd((2, 3, 2)))
    mm(rng.integers(-5, 6, (2, 3)).astype(np.int32), rng.integers(-5, 6, (3, 2)).astype(np.int32), "i32")
    mm(rng.integers(-5, 6, (2, 2, 3)).astype(np.int64), rng.integers(-5, 6, (1, 3, 2)).astype(np.int64), "i64")
    # conv
    def conv(xs, ws, strides, pads, dils, groups, bias=False):
        m.comment(f"conv {ty(xs, 'f32')} {ty(ws, 'f32')} strides={strides} pads={pads} dilations={dils} groups={groups} bias={bias}")
        x, w = rnd(xs, -1, 1), rnd(ws, -1, 1)
        vx, vw = m.const(x, "f32"), m.const(w, "f32")
        b = rnd((ws[0],), -1, 1) if bias else None
        a = {"strides": strides, "padding": pads, "dilations": dils, "groups": groups}
        exp = ref.conv(x, w, b, a)
        attrs = f"{{strides = {arr_attr(strides)}, padding = {arr_attr(pads)}, dilations = {arr_attr(dils)}, groups = {groups} : i64}}"
        if bias:
            vb = m.const(b, "f32")
            r = m.op(f"loom.conv {vx}, {vw}, {vb} {attrs} : {ty(xs, 'f32')}, {ty(ws, 'f32')}, {ty(b.shape, 'f32')}")
        else:
            r = m.op(f"loom.conv {vx}, {vw} {attrs} : {ty(xs, 'f32')}, {ty(ws, 'f32')}")
        m.show(r, list(exp.shape), "f32", exp)
    conv((1, 2, 5, 5), (3, 2, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 1, bias=True)
    conv((2, 2, 4, 5), (2, 2, 2, 2), [1, 1], [0, 1, 1, 0], [2, 1], 1)
    conv((1, 2, 7), (3, 2, 3), [2], [1, 2], [1], 1, bias=True)
    conv((1, 4, 4, 4), (6, 2, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 2, bias=True)
    conv((1, 3, 5, 5), (3, 1, 3, 3), [2, 1], [1, 1, 1, 1], [1, 1], 3)
    conv((1, 2, 4, 4), (4, 1, 2, 2), [1, 1], [0, 0, 0, 0], [1, 1], 2)
    conv((1, 2, 3, 4, 4), (2, 2, 2, 2, 2), [1, 2, 1], [0, 1, 0, 0, 0, 1], [1, 1, 1], 1)
    conv((1, 4, 6), (2, 2, 3), [1], [1, 0], [2], 2, bias=True)
    conv((1, 2, 6), (2, 1, 2), [1], [0, 0], [1], 2)
    # pool
    def pool(kind, xs, kernel, strides, pads, dils, ceil=False, cip=False):
        m.comment(f"pool {kind} {ty(xs, 'f32')} kernel={kernel} strides={strides} pads={pads} dilations={dils} ceil_mode={ceil} count_include_pad={cip}")
        x = rnd(xs, -2, 2)
        vx = m.const(x, "f32")
        a = {"kernel": kernel, "strides": strides, "padding": pads, "dilations": dils,
             "ceil_mode": ceil, "count_include_pad": cip}
        exp = ref.pool(kind, x, a)
        extra = (", ceil_mode" if ceil else "") + (", count_include_pad" if cip else "")
        r = m.op(f"loom.pool {kind} {vx} {{kernel = {arr_attr(kernel)}, strides = {arr_attr(strides)}, padding = {arr_attr(pads)}, dilations = {arr_attr(dils)}{extra}}} : {ty(xs, 'f32')}")
        m.show(r, list(exp.shape), "f32", exp)
    pool("max", (1, 2, 5, 5), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1])
    pool("avg", (1, 2, 5, 5), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1])
    pool("avg", (1, 1, 5, 5), [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], cip=True)
    pool("avg", (1, 1, 6, 6), [3, 3], [2, 2], [1, 0, 1, 0], [1, 1], ceil=True, cip=True)
    pool("avg", (1, 1, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0], [1, 1])
    pool("max", (1, 2, 7), [2], [2], [0, 0], [1], ceil=True)
    pool("max", (1, 1, 6, 6), [2, 2], [1, 2], [0, 1, 0, 1], [2, 2])
    pool("avg", (1, 1, 3, 4, 4), [2, 2, 2], [1, 2, 2], [0, 1, 0, 0, 0, 1], [1, 1, 1])
    pool("max", (1, 1, 3, 4, 4), [2, 2, 2], [2, 2, 2], [0, 0, 0, 0, 0, 0], [1, 1, 1], ceil=True)
    pool("avg", (1, 2, 3, 3), [3, 3], [1, 1], [0, 0, 0, 0], [1, 1])
    # attention
    def attention(qs, ks, vs, causal=False, scale=None, mask=None):
        m.comment(f"attention q={qs} k={ks} v={vs} causal={causal} scale={scale} mask={None if mask is None else mask.shape}")
        q, k, v = rnd(qs, -1, 1), rnd(ks, -1, 1), rnd(vs, -1, 1)
        vq, vk, vv = m.const(q, "f32"), m.const(k, "f32"), m.const(v, "f32")
        g = qs[1] // ks[1]
        kk = np.repeat(k.astype(np.float64), g, axis=1)
        vvv = np.repeat(v.astype(np.float64), g, axis=1)
        sc = scale if scale is not None else 1 / math.sqrt(qs[3])
        s = np.matmul(q.astype(np.float64), np.swapaxes(kk, 2, 3)) * sc
        mtext, mtype = "", ""
        if mask is not None:
            melem = "i1" if mask.dtype == np.bool_ else "f32"
            vm = m.const(mask, melem)
            mtext, mtype = f" mask {vm}", f", {ty(mask.shape, melem)}"
            if melem == "i1":
                s = np.where(mask, s, -np.inf)
            else:
                s = s + mask
        if causal:
            i = np.arange(qs[2])[:, None]
            j = np.arange(ks[2])[None, :]
            s = np.where(j > i, -np.inf, s)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p = p / p.sum(axis=-1, keepdims=True)
        exp = np.matmul(p, vvv)
        attrs = []
        if causal:
            attrs.append("causal")
        if scale is not None:
            attrs.append(f"scale = {scale} : f64")
        at = (" {" + ", ".join(attrs) + "}") if attrs else ""
        r = m.op(f"loom.attention {vq}, {vk}, {vv}{mtext}{at} : {ty(qs, 'f32')}, {ty(ks, 'f32')}, {ty(vs, 'f32')}{mtype}")
        m.show(r, list(exp.shape), "f32", exp)
    attention((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 2))
    attention((2, 4, 3, 2), (2, 2, 4, 2), (2, 2, 4, 3), causal=True)
    attention((1, 3, 2, 2), (1, 1, 3, 2), (1, 1, 3, 2), scale=0.5,
              mask=np.array([[True, False, True], [False, True, True]]))
    attention((1, 2, 2, 2), (1, 2, 3, 2), (1, 2, 3, 2),
              mask=rnd((2, 1, 3), -1, 1), causal=True)
    return m

HDR_N = """// Execution checks of the loom.reduce / softmax / layer_norm / rms_norm /
// batch_norm lowerings: each case lowers through loom-lower-to-cpu, runs and
// prints; expected values come from numpy (the reference interpreter
// test/Conformance/loom_reference.py), printed as %g.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s"""
HDR_C = """// Execution checks of the loom.matmul / conv / pool / attention lowerings:
// each case lowers through loom-lower-to-cpu, runs and prints; expected
// values come from numpy (the reference interpreter
// test/Conformance/loom_reference.py; attention follows its op definition),
// printed as %g.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s"""

open(sys.argv[1], "w").write(normalization().text(HDR_N))
open(sys.argv[2], "w").write(compute().text(HDR_C))
