# tools/export/onnx_fold.py — folds constant and static-shape subgraphs out of exported ONNX.
"""torch.onnx.export leaves shape arithmetic in the graph even when every shape is static
(Shape -> Gather -> Concat -> Reshape, ConstantOfShape/Equal/Where feeding Expand, Trilu of a
constant mask). This pass runs ONNX shape inference, evaluates with numpy every node whose
inputs are all known (initializers, Constant nodes, Shape of a statically shaped value), turns
the results into initializers and drops the dead nodes. Constant nodes become initializers too.
What is left is the real computation, which keeps the op set that Loom's ONNX importer must
cover small. Only a fixed table of ops is evaluated; anything else is left untouched.
"""

from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

_INT_DIV = (np.int8, np.int16, np.int32, np.int64, np.uint8)


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _trunc_div(a, b):
    if a.dtype.type in _INT_DIV:
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)
    return (a / b).astype(a.dtype)


def _reshape(data, shape, allowzero=0):
    shape = [int(s) for s in shape]
    if not allowzero:
        shape = [data.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return data.reshape(shape)


def _slice(data, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = int(a) % data.ndim
        n = data.shape[a]
        s, e = int(max(min(s, 2**62), -2**62)), int(max(min(e, 2**62), -2**62))
        idx[a] = slice(*slice(s, e, int(st)).indices(n))
    return data[tuple(idx)]


def _trilu(x, k=None, upper=1):
    k = 0 if k is None else int(k)
    return np.triu(x, k) if upper else np.tril(x, k)


def _eval(node, ins: List[Optional[np.ndarray]]) -> Optional[List[np.ndarray]]:
    op = node.op_type
    if op == "Constant":
        for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
            v = _attr(node, key)
            if v is not None:
                if key == "value":
                    return [numpy_helper.to_array(v)]
                dt = np.float32 if "float" in key else np.int64
                return [np.array(v, dtype=dt)]
        return None
    if op == "ConstantOfShape":
        v = _attr(node, "value")
        fill = numpy_helper.to_array(v).reshape(-1) if v is not None else np.zeros(1, np.float32)
        return [np.full([int(s) for s in ins[0]], fill[0], dtype=fill.dtype)]
    if op == "Identity":
        return [ins[0]]
    if op == "Gather":
        return [np.take(ins[0], ins[1].astype(np.int64), axis=_attr(node, "axis", 0))]
    if op == "Unsqueeze":
        out = ins[0]
        rank = out.ndim + len(ins[1])
        for a in sorted(int(a) % rank for a in ins[1]):
            out = np.expand_dims(out, a)
        return [out]
    if op == "Squeeze":
        axes = None if len(ins) < 2 or ins[1] is None else tuple(int(a) % ins[0].ndim
                                                                 for a in ins[1])
        return [np.squeeze(ins[0], axis=axes)]
    if op == "Concat":
        return [np.concatenate(ins, axis=_attr(node, "axis"))]
    if op == "Reshape":
        return [_reshape(ins[0], ins[1], _attr(node, "allowzero", 0))]
    if op == "Expand":
        shape = np.broadcast_shapes(ins[0].shape, tuple(int(s) for s in ins[1]))
        return [np.broadcast_to(ins[0], shape).copy()]
    if op == "Slice":
        return [_slice(ins[0], ins[1], ins[2], *(ins[3:5] + [None] * (5 - len(ins))))]
    if op == "Cast":
        to = helper.tensor_dtype_to_np_dtype(_attr(node, "to")) \
            if hasattr(helper, "tensor_dtype_to_np_dtype") else \
            onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[_attr(node, "to")]
        return [ins[0].astype(to)]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "Trilu":
        return [_trilu(ins[0], ins[1] if len(ins) > 1 else None, _attr(node, "upper", 1))]
    if op == "Transpose":
        return [np.transpose(ins[0], _attr(node, "perm"))]
    if op == "Mod":
        fmod = _attr(node, "fmod", 0)
        return [(np.fmod if fmod else np.mod)(ins[0], ins[1]).astype(ins[0].dtype)]
    arith = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _trunc_div,
             "Pow": np.power, "Max": np.maximum, "Min": np.minimum}
    if op in arith and len(ins) == 2:
        return [np.asarray(arith[op](ins[0], ins[1]), dtype=ins[0].dtype)]
    logic = {"Equal": np.equal, "Less": np.less, "Greater": np.greater,
             "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
             "And": np.logical_and, "Or": np.logical_or}
    if op in logic:
        return [np.asarray(logic[op](ins[0], ins[1]), dtype=np.bool_)]
    unary = {"Sqrt": np.sqrt, "Floor": np.floor, "Ceil": np.ceil, "Abs": np.abs,
             "Reciprocal": np.reciprocal, "Sign": np.sign}
    if op in unary:
        return [np.asarray(unary[op](ins[0]), dtype=ins[0].dtype)]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Not":
        return [np.logical_not(ins[0])]
    if op == "Neg":
        return [np.negative(ins[0])]
    return None


def fold(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return a copy of `model` with constant and static-shape subgraphs folded."""
    model = shape_inference.infer_shapes(model)
    g = model.graph
    protos = {i.name: i for i in g.initializer}
    folded: Dict[str, np.ndarray] = {}       # values computed here (initializers load lazily)

    def value(name):
        if name not in folded:
            folded[name] = numpy_helper.to_array(protos[name])
        return folded[name]

    def is_known(name):
        return name in folded or name in protos

    static_shapes: Dict[str, List[int]] = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            static_shapes[vi.name] = [d.dim_value for d in dims]
    graph_outputs = {o.name for o in g.output}
    kept = []
    for node in g.node:
        result = None
        if node.op_type == "Shape" and node.input[0] in static_shapes:
            shape = static_shapes[node.input[0]]
            start, end = _attr(node, "start", 0), _attr(node, "end", None)
            result = [np.array(shape[slice(start, end)], dtype=np.int64)]
        elif node.op_type != "Shape" and all(i == "" or is_known(i) for i in node.input):
            ins = [value(i) if i else None for i in node.input]
            try:
                result = _eval(node, ins)
            except Exception:      # leave anything numpy cannot reproduce to the runtime
                result = None
        if result is None or any(o in graph_outputs for o in node.output):
            kept.append(node)
            continue
        for name, v in zip(node.output, result):
            folded[name] = np.array(v)   # not ascontiguousarray: it turns 0-d into 1-d
            protos.pop(name, None)

    used = {i for n in kept for i in n.input} | graph_outputs
    initializers = [p for name, p in protos.items() if name in used and name not in folded]
    initializers += [protos[name] if name in protos else numpy_helper.from_array(v, name)
                     for name, v in folded.items() if name in used]
    del g.node[:]
    g.node.extend(kept)
    del g.initializer[:]
    g.initializer.extend(initializers)
    del g.value_info[:]
    model = shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    return model
