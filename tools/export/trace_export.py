# tools/export/trace_export.py — torch.fx exporter writing Loom's "loom-trace" graph JSON.
"""Traces a PyTorch module with torch.fx, runs it once on example inputs (ShapeProp) to learn every
value's static shape and dtype, and rewrites fx's call_module / call_function / call_method nodes
into one closed, ATen-like op vocabulary (documented in docs/trace-format.md). Parameters and
constants go to a raw little-endian weights file next to the JSON.

Shape computations (x.shape, size(), arithmetic on them, asserts) are folded, since shapes are
static; tensors computed only from shapes and constants (torch.arange(T), torch.ones(T, T).triu(),
zeros_like(x)) are folded too and emitted as `full` nodes (uniform value) or constants. Leaf
modules (nn.Linear, nn.MultiheadAttention, ...) are expanded into vocabulary ops. Anything that
maps to nothing is an error naming the fx node and its target: the vocabulary is closed.

Library use:   doc = export_trace(model, {"input_ids": ids}, "out/gpt2.trace.json")
CLI (zoo):     /usr/bin/python3 tools/export/trace_export.py gpt2 --config small --out DIR
"""

import builtins
import contextlib
import dis
import hashlib
import inspect
import json
import math
import operator
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn
from torch.fx.node import Node, map_aggregate
from torch.fx.passes.shape_prop import ShapeProp

FORMAT = "loom-trace"
VERSION = 1
ALIGNMENT = 64  # byte alignment of every tensor in the weights file

DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int64: "i64", torch.int32: "i32", torch.int8: "i8", torch.uint8: "u8", torch.bool: "i1",
}

# The closed op vocabulary (see docs/trace-format.md for inputs, attributes and semantics).
OPS = frozenset("""
linear matmul bmm einsum conv2d scaled_dot_product_attention
max_pool2d avg_pool2d adaptive_avg_pool2d batch_norm layer_norm
relu gelu silu sigmoid tanh softmax log_softmax clamp
neg exp log sqrt rsqrt abs erf reciprocal sin cos logical_not
add sub mul div pow maximum minimum eq ne lt le gt ge logical_and logical_or
where masked_fill cast full
sum mean amax amin argmax argmin
reshape permute expand cat slice select take gather scatter embedding topk one_hot
""".split())


class ExportError(Exception):
    """An fx graph that cannot be expressed in the loom-trace vocabulary."""


# --------------------------------------------------------------------------------------------
# Tracing
# --------------------------------------------------------------------------------------------

def _proxy_iter(self):
    """Proxy.__iter__ that finds the UNPACK_SEQUENCE by offset. torch < 2.0 indexes the
    instruction list by f_lasti // 2, which is wrong on Python >= 3.11 (inline caches), so
    `a, b = x.shape` fails to trace there."""
    frame = inspect.currentframe().f_back
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            if inst.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(inst.argval))
            break
    return self.tracer.iter(self)


@contextlib.contextmanager
def _fx_compat():
    needs_patch = (int(torch.__version__.split(".")[0]) < 2 and sys.version_info >= (3, 11))
    if not needs_patch:
        yield
        return
    saved = torch.fx.proxy.Proxy.__iter__
    torch.fx.proxy.Proxy.__iter__ = _proxy_iter
    try:
        yield
    finally:
        torch.fx.proxy.Proxy.__iter__ = saved


class LoomTracer(torch.fx.Tracer):
    """fx's default tracer: modules from torch.nn are leaves, everything else is traced
    through. `extra_leaves` adds module classes to keep as call_module nodes."""

    def __init__(self, extra_leaves: Sequence[type] = ()):
        super().__init__()
        self.extra_leaves = tuple(extra_leaves)
        self.proxy_buffer_attributes = True   # buffers become get_attr nodes, so they can be
                                              # sliced with traced sizes

    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        if self.extra_leaves and isinstance(m, self.extra_leaves):
            return True
        return super().is_leaf_module(m, qualname)

    def trace(self, root, concrete_args=None):
        with _creation_ops_traced():
            return super().trace(root, concrete_args)


# Tensor factories take no tensor argument, so fx cannot see a Proxy passed as a size
# (torch.arange(T) with T = x.shape[1]). While tracing, they record a call_function node
# when any argument is a Proxy (the same trick as Hugging Face's HFTracer).
_FACTORIES = ("arange", "zeros", "ones", "full", "empty", "eye", "linspace", "rand", "randn",
              "randint", "tensor", "as_tensor")


@contextlib.contextmanager
def _creation_ops_traced():
    saved = {name: getattr(torch, name) for name in _FACTORIES}

    def wrap(fn):
        def traced_factory(*args, **kwargs):
            proxies = []
            map_aggregate((args, kwargs), lambda a: proxies.append(a)
                          if isinstance(a, torch.fx.Proxy) else None)
            if proxies:
                return proxies[0].tracer.create_proxy("call_function", fn, args, kwargs)
            return fn(*args, **kwargs)
        return traced_factory

    try:
        for name, fn in saved.items():
            setattr(torch, name, wrap(fn))
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch, name, fn)


class Meta:
    """Static shape and dtype of one tensor value."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(int(s) for s in shape), dtype

    def __repr__(self):
        return f"Meta({list(self.shape)}, {self.dtype})"


def _contains_tensor(v) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, (tuple, list)):
        return any(_contains_tensor(e) for e in v)
    if isinstance(v, dict):
        return any(_contains_tensor(e) for e in v.values())
    return False


def _to_meta(v):
    if isinstance(v, torch.Tensor):
        return Meta(v.shape, v.dtype)
    if isinstance(v, (tuple, list)) and _contains_tensor(v):
        return tuple(_to_meta(e) for e in v)
    return None


# Targets whose non-tensor result depends only on tensor metadata (never on data), and
# creation ops whose tensor result depends only on the metadata of their tensor inputs.
_META_READERS = {
    "builtins.getattr", "builtins.len", "builtins.isinstance", "Tensor.size", "Tensor.dim",
    "Tensor.ndimension", "Tensor.numel", "Tensor.nelement", "Tensor.element_size",
    "Tensor.is_floating_point", "Tensor.is_contiguous", "Tensor.get_device", "Tensor.type",
    "torch.numel", "torch.is_tensor", "torch.is_floating_point", "torch._assert",
    "torch._assert_is_none", "torch.fx._symbolic_trace._assert_is_none",
}
_META_CREATORS = {
    "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like",
    "Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty",
    "Tensor.new_tensor",
}


class _Recorder(ShapeProp):
    """ShapeProp that also records each node's Meta, which nodes are static (computable from
    shapes and constants alone) and the values of the static ones."""

    def __init__(self, gm):
        super().__init__(gm)
        self.metas: Dict[Node, Any] = {}
        self.static: Dict[Node, bool] = {}
        self.values: Dict[Node, Any] = {}

    def run_node(self, n: Node):
        result = super().run_node(n)
        has_tensor = _contains_tensor(result)
        if n.op in ("placeholder", "get_attr"):
            static = not has_tensor
        elif n.op == "output":
            static = False
        elif not has_tensor:
            static = True
        elif n.op != "call_module" and _target_key(n) in _META_CREATORS:
            static = True
        elif n.op == "call_module" and _has_state(self.module.get_submodule(n.target)):
            static = False                    # reads parameters or buffers: never folded
        else:
            static = all(self.static.get(m, False) for m in n.all_input_nodes)
        self.static[n] = static
        self.metas[n] = _to_meta(result)
        if static:
            self.values[n] = result
        return result


def _has_state(m: nn.Module) -> bool:
    return any(True for _ in m.parameters()) or any(True for _ in m.buffers())


class Traced:
    """An fx GraphModule plus what one run on the example inputs taught about it."""

    def __init__(self, model, gm, recorder, placeholders, input_names):
        self.model, self.gm = model, gm
        self.metas, self.static, self.values = (recorder.metas, recorder.static,
                                                recorder.values)
        self.placeholders = placeholders    # placeholder node -> input name or None (concrete)
        self.input_names = input_names


def trace(model: nn.Module, inputs: Dict[str, torch.Tensor],
          extra_leaves: Sequence[type] = ()) -> Traced:
    """Symbolically trace `model` (forward arguments not in `inputs` are fixed to their
    defaults) and run it once on `inputs` with ShapeProp."""
    if model.training:
        raise ExportError("export needs the model in eval mode (call model.eval())")
    sig = inspect.signature(model.forward)
    params = [p for p in sig.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    unknown = set(inputs) - {p.name for p in params}
    if unknown:
        raise ExportError(f"inputs {sorted(unknown)} are not arguments of "
                          f"{type(model).__name__}.forward{sig}")
    concrete = {}
    for p in params:
        if p.name not in inputs:
            if p.default is p.empty:
                raise ExportError(f"forward argument {p.name!r} has no default; pass it")
            concrete[p.name] = p.default
    with _fx_compat():
        graph = LoomTracer(extra_leaves).trace(model, concrete_args=concrete or None)
    gm = torch.fx.GraphModule(model, graph)
    # Match placeholders to forward() arguments by name: fx names a placeholder for a fixed
    # (concrete) argument "<name>_<k>", and torch 2.x creates none for a fixed None.
    by_name = {p.name: p for p in params}
    placeholders, run_args = {}, []
    for ph in (n for n in gm.graph.nodes if n.op == "placeholder"):
        name = ph.target if ph.target in by_name else ph.target.rsplit("_", 1)[0]
        if name not in by_name:
            raise ExportError(f"placeholder {ph.target!r} matches no forward argument")
        if name in inputs and ph.target == name:
            placeholders[ph] = name
            run_args.append(inputs[name])
        else:
            placeholders[ph] = None
            run_args.append(concrete[name])
    recorder = _Recorder(gm)
    with torch.no_grad():
        recorder.run(*run_args)
    return Traced(model, gm, recorder, placeholders, [p.name for p in params if p.name in inputs])


# --------------------------------------------------------------------------------------------
# Target keys: one name per callable, "<namespace>.<name>"
# --------------------------------------------------------------------------------------------

_NAMESPACES = [("operator", operator), ("builtins", builtins), ("F", F), ("torch", torch),
               ("F", torch._C._nn), ("Tensor", torch.Tensor), ("torch", torch.functional),
               ("torch.special", torch.special)]


def _target_key(n: Node) -> Optional[str]:
    if n.op == "call_method":
        return f"Tensor.{n.target}"
    if n.op != "call_function":
        return None
    target = n.target
    name = getattr(target, "__name__", None)
    if name:
        for prefix, ns in _NAMESPACES:
            if getattr(ns, name, None) is target:
                return f"{prefix}.{name}"
        if name in ("_assert_is_none", "_assert"):
            return "torch._assert"
    mod = getattr(target, "__module__", None) or "?"
    return f"{mod}.{name or target!r}"


# --------------------------------------------------------------------------------------------
# The converter
# --------------------------------------------------------------------------------------------

class T:
    """A tensor of the exported graph: an input, parameter, constant or node output."""
    __slots__ = ("name", "shape", "dtype", "step")

    def __init__(self, name, shape, dtype, step=-1):
        self.name, self.shape, self.dtype, self.step = name, tuple(shape), dtype, step

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f"T({self.name}, {list(self.shape)}, {self.dtype})"


class _Static:
    """A folded tensor value (from shapes and constants only), materialized on first use."""
    __slots__ = ("node", "value")

    def __init__(self, node, value):
        self.node, self.value = node, value


class _Converter:
    def __init__(self, traced: Traced):
        self.tr = traced
        self.gm = traced.gm
        self.model = traced.model
        self.order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        self.nodes: List[dict] = []          # emitted nodes (inputs/outputs hold T objects)
        self.inputs: List[T] = []
        self.param_ids = {id(p): name for name, p in self.model.named_parameters()}
        self.buffer_ids = {id(b): name for name, b in self.model.named_buffers()}
        self.params: Dict[str, Tuple[T, torch.Tensor, bool]] = {}
        self.consts: Dict[str, Tuple[T, torch.Tensor]] = {}
        self.by_id: Dict[int, T] = {}
        self.claimed = set()               # names of constants reached through attributes
        self.used = set()                  # reserved names: fx nodes, parameters, buffers
        for n in self.gm.graph.nodes:
            self.used.add(n.name)
        self.used.update(self.param_ids.values())
        self.used.update(self.buffer_ids.values())
        self.used.update(("inf", "-inf", "nan"))
        for name, p in self.model.named_parameters():
            self._param(p, name)
        self.modnames = {id(m): name for name, m in self.gm.named_modules()}
        self.materialized: Dict[Node, T] = {}
        self.step = 0
        self.node: Optional[Node] = None
        self.key: Optional[str] = None
        self.out = None

    # ---- naming and errors
    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}.{i}", i + 1
        self.used.add(name)
        return name

    def error(self, msg: str) -> ExportError:
        n = self.node
        where = f"fx node {n.name!r} ({n.op} {self.describe(n)})" if n is not None else "graph"
        return ExportError(f"{where}: {msg}")

    def describe(self, n: Node) -> str:
        if n.op == "call_module":
            return f"{n.target}: {type(self.gm.get_submodule(n.target)).__name__}"
        if n.op in ("call_function", "call_method"):
            return _target_key(n) or repr(n.target)
        return str(n.target)

    # ---- tensors
    def _param(self, p: torch.Tensor, name: str) -> T:
        if id(p) not in self.by_id:
            t = T(name, p.shape, p.dtype)
            self.params[name] = (t, p, bool(p.requires_grad))
            self.by_id[id(p)] = t
        return self.by_id[id(p)]

    def attr_tensor(self, value: torch.Tensor, qualname: str) -> T:
        """The parameter or constant for a tensor attribute reached as `qualname`."""
        if id(value) in self.by_id:
            return self.by_id[id(value)]
        if id(value) in self.param_ids:
            return self._param(value, self.param_ids[id(value)])
        name = self.buffer_ids.get(id(value))
        if name is None:
            name = qualname if qualname not in self.claimed and qualname not in \
                self.params else self.fresh(qualname)
        self.used.add(name)
        self.claimed.add(name)
        t = T(name, value.shape, value.dtype)
        self.consts[name] = (t, value.detach())
        self.by_id[id(value)] = t
        return t

    def param(self, mod: nn.Module, name: str) -> Optional[T]:
        """The parameter or buffer `name` of leaf module `mod` (None when it is None)."""
        v = getattr(mod, name, None)
        if v is None:
            return None
        return self.attr_tensor(v, f"{self.modnames.get(id(mod), '?')}.{name}")

    def materialize(self, s: _Static) -> T:
        if s.node in self.materialized:
            return self.materialized[s.node]
        v = s.value.detach()
        if v.dtype not in DTYPES:
            raise self.error(f"folded constant {s.node.name!r} has unsupported dtype {v.dtype}")
        flat = v.reshape(-1)
        if v.numel() > 1 and bool((flat == flat[0]).all()):
            t = T(s.node.name, v.shape, v.dtype, self.step)
            self.nodes.append(dict(label=s.node.name, op="full", inputs=[],
                                   attrs={"value": flat[0].item()}, outputs=[t]))
        else:
            t = T(s.node.name, v.shape, v.dtype)
            self.consts[s.node.name] = (t, v.clone())
        self.materialized[s.node] = t
        return t

    def resolve(self, v):
        if isinstance(v, _Static):
            return self.materialize(v)
        return v

    def tensor(self, v, what="operand") -> T:
        v = self.resolve(v)
        if not isinstance(v, T):
            raise self.error(f"expected a tensor {what}, got {v!r}")
        return v

    # ---- emission
    def emit(self, op: str, inputs: list, attrs: Optional[dict], shape, dtype,
             suffix: Optional[str] = None) -> T:
        t = T(self.fresh(f"{self.node.name}.{suffix or op}"), shape, dtype, self.step)
        self._append(op, inputs, attrs, [t])
        return t

    def emit_out(self, op: str, inputs: list, attrs: Optional[dict] = None) -> T:
        """Emit the node computing the current fx node's (single tensor) result."""
        m = self.out
        if not isinstance(m, Meta):
            raise self.error(f"expected a single tensor result, got {m!r}")
        return self.emit(op, inputs, attrs, m.shape, m.dtype)

    def emit_multi(self, op: str, inputs: list, attrs: Optional[dict], metas) -> tuple:
        outs = tuple(T(self.fresh(f"{self.node.name}.{op}.{i}"), m.shape, m.dtype, self.step)
                     for i, m in enumerate(metas))
        self._append(op, inputs, attrs, list(outs))
        return outs

    def _append(self, op, inputs, attrs, outs):
        assert op in OPS, op
        ins = []
        for v in inputs:
            v = self.resolve(v)
            if not (v is None or isinstance(v, (T, bool, int, float))):
                raise self.error(f"{op}: operand {v!r} is neither a tensor nor a scalar")
            ins.append(v)
        while ins and ins[-1] is None:
            ins.pop()
        self.nodes.append(dict(label=outs[0].name, op=op, inputs=ins, attrs=attrs or {},
                               outputs=outs))

    # ---- common rewrites
    def cast(self, x, dtype) -> Any:
        if not isinstance(x, T):
            if isinstance(x, bool) and dtype != torch.bool:
                return int(x)
            return x
        if x.dtype == dtype:
            return x
        return self.emit("cast", [x], {"dtype": DTYPES[dtype]}, x.shape, dtype)

    def reshape(self, x: T, shape) -> T:
        shape = tuple(int(s) for s in shape)
        if x.shape == shape:
            return x
        return self.emit("reshape", [x], {"shape": list(shape)}, shape, x.dtype)

    def permute(self, x: T, dims) -> T:
        dims = [_norm_dim(d, x.rank, self) for d in dims]
        if sorted(dims) != list(range(x.rank)):
            raise self.error(f"permute: {dims} is not a permutation of rank {x.rank}")
        if dims == list(range(x.rank)):
            return x
        return self.emit("permute", [x], {"dims": dims},
                         tuple(x.shape[d] for d in dims), x.dtype)

    def expand(self, x: T, shape) -> T:
        shape = tuple(int(s) for s in shape)
        if x.shape == shape:
            return x
        return self.emit("expand", [x], {"shape": list(shape)}, shape, x.dtype)

    def slice(self, x: T, dim: int, start: int, end: int, step: int = 1) -> T:
        size = x.shape[dim]
        start, end, step = slice(start, end, step).indices(size)
        if step <= 0:
            raise self.error("slice with a non-positive step")
        end = max(end, start)
        if (start, end, step) == (0, size, 1):
            return x
        shape = list(x.shape)
        shape[dim] = (end - start + step - 1) // step
        return self.emit("slice", [x], {"dim": dim, "start": start, "end": end, "step": step},
                         shape, x.dtype)

    def select(self, x: T, dim: int, index: int) -> T:
        size = x.shape[dim]
        if not -size <= index < size:
            raise self.error(f"select: index {index} out of range for size {size}")
        index %= size
        return self.emit("select", [x], {"dim": dim, "index": index},
                         x.shape[:dim] + x.shape[dim + 1:], x.dtype)

    def binary(self, op: str, a, b, out_dtype=None) -> T:
        """Elementwise arithmetic: tensor operands are cast to the result dtype."""
        a, b = self.resolve(a), self.resolve(b)
        dtype = out_dtype or self.out.dtype
        return self.emit_out(op, [self.cast(a, dtype), self.cast(b, dtype)])

    def compare(self, op: str, a, b) -> T:
        """Comparisons and logical ops: operands are cast to their promoted dtype."""
        a, b = self.resolve(a), self.resolve(b)
        dtype = _promote(a, b) if op not in ("logical_and", "logical_or") else torch.bool
        return self.emit_out(op, [self.cast(a, dtype), self.cast(b, dtype)])

    def const_scalar_tensor(self, value, dtype) -> T:
        """A 0-d constant (for a scalar operand in a tensor-only position)."""
        name = self.fresh(f"{self.node.name}.scalar")
        t = T(name, (), dtype)
        self.consts[name] = (t, torch.tensor(value, dtype=dtype))
        return t


def _norm_dim(d: int, rank: int, cx: Optional[_Converter] = None) -> int:
    if not isinstance(d, int) or isinstance(d, bool):
        raise (cx.error if cx else ExportError)(f"dimension {d!r} is not an int")
    if not -max(rank, 1) <= d < max(rank, 1):
        raise (cx.error if cx else ExportError)(f"dimension {d} out of range for rank {rank}")
    return d % max(rank, 1)


def _dims(dim, rank, cx) -> List[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(rank))
    if isinstance(dim, int):
        dim = [dim]
    return sorted({_norm_dim(d, rank, cx) for d in dim})


def _promote(a, b) -> torch.dtype:
    def dummy(v):
        if isinstance(v, T):
            return torch.zeros([1] * v.rank, dtype=v.dtype)
        return v
    da, db = dummy(a), dummy(b)
    if not isinstance(da, torch.Tensor) and not isinstance(db, torch.Tensor):
        raise ExportError("comparison of two scalars")
    if not isinstance(da, torch.Tensor):
        da, db = db, da
    return torch.result_type(da, db)


def _pair(v, n=2) -> List[int]:
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    return v * n if len(v) == 1 else v


# --------------------------------------------------------------------------------------------
# Handlers: call_function / call_method keys and leaf module classes -> vocabulary ops
# --------------------------------------------------------------------------------------------

_FN: Dict[str, Any] = {}
_MOD: Dict[type, Any] = {}


def handles(*keys):
    def deco(fn):
        for k in keys:
            _FN[k] = fn
        return fn
    return deco


def handles_module(*classes):
    def deco(fn):
        for c in classes:
            _MOD[c] = fn
        return fn
    return deco


# ---- aliases and casts

@handles("Tensor.contiguous", "Tensor.clone", "torch.clone", "Tensor.detach", "torch.detach",
         "Tensor.cpu", "Tensor.cuda", "Tensor.requires_grad_", "torch.Tensor.contiguous")
def _alias(cx, input, *args, **kwargs):
    return cx.tensor(input)


@handles("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
         "F.feature_alpha_dropout")
def _dropout(cx, input, p=0.5, training=True, inplace=False):
    if training and p > 0:
        raise cx.error("dropout with training=True; export the model in eval mode")
    return cx.tensor(input)


@handles("torch.dropout", "torch.feature_dropout", "torch.alpha_dropout")
def _dropout_aten(cx, input, p, train):
    return _dropout(cx, input, p, train)


@handles("Tensor.to", "Tensor.type", "Tensor.type_as", "Tensor.float", "Tensor.double",
         "Tensor.half", "Tensor.bfloat16", "Tensor.long", "Tensor.int", "Tensor.bool",
         "Tensor.byte", "Tensor.char")
def _to(cx, input, *args, **kwargs):
    return cx.cast(cx.tensor(input), cx.out.dtype)


# ---- shape ops

@handles("Tensor.view", "Tensor.reshape", "torch.reshape", "Tensor.view_as", "Tensor.reshape_as",
         "torch.flatten", "Tensor.flatten", "Tensor.unflatten", "torch.unflatten",
         "Tensor.squeeze", "torch.squeeze", "Tensor.unsqueeze", "torch.unsqueeze",
         "torch.ravel", "Tensor.ravel", "torch.atleast_2d")
def _reshape(cx, input, *args, **kwargs):
    x = cx.tensor(input)
    if cx.out.dtype != x.dtype:
        raise cx.error("view as another dtype (a bitcast) is not supported")
    return cx.reshape(x, cx.out.shape)


@handles("Tensor.permute")
def _permute_m(cx, input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    return cx.permute(cx.tensor(input), list(dims))


@handles("torch.permute")
def _permute_f(cx, input, dims):
    return cx.permute(cx.tensor(input), list(dims))


@handles("Tensor.transpose", "torch.transpose", "Tensor.swapaxes", "torch.swapaxes",
         "Tensor.swapdims", "torch.swapdims")
def _transpose(cx, input, dim0, dim1):
    x = cx.tensor(input)
    perm = list(range(x.rank))
    d0, d1 = _norm_dim(dim0, x.rank, cx), _norm_dim(dim1, x.rank, cx)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return cx.permute(x, perm)


@handles("Tensor.t", "torch.t")
def _t(cx, input):
    x = cx.tensor(input)
    return x if x.rank < 2 else cx.permute(x, [1, 0])


@handles("builtins.getattr")
def _getattr(cx, obj, name, *default):
    x = cx.tensor(obj)
    if name == "T":
        return cx.permute(x, list(reversed(range(x.rank))))
    if name == "mT":
        return _transpose(cx, x, -2, -1)
    if name == "data":
        return x
    raise cx.error(f"tensor attribute {name!r} is not supported")


@handles("Tensor.expand", "Tensor.expand_as", "torch.broadcast_to", "Tensor.broadcast_to")
def _expand(cx, input, *args, **kwargs):
    return cx.expand(cx.tensor(input), cx.out.shape)


@handles("torch.cat", "torch.concat", "torch.concatenate")
def _cat(cx, tensors, dim=0, axis=None, out=None):
    if axis is not None:
        dim = axis
    rank = len(cx.out.shape)
    ts = [cx.tensor(t) for t in tensors]
    ts = [cx.cast(t, cx.out.dtype) for t in ts if not (t.shape == (0,) and rank > 1)]
    if len(ts) == 1:
        return ts[0]
    return cx.emit_out("cat", ts, {"dim": _norm_dim(dim, rank, cx)})


@handles("torch.stack")
def _stack(cx, tensors, dim=0, out=None):
    rank = len(cx.out.shape)
    d = _norm_dim(dim, rank, cx)
    ts = []
    for t in tensors:
        t = cx.cast(cx.tensor(t), cx.out.dtype)
        ts.append(cx.reshape(t, t.shape[:d] + (1,) + t.shape[d:]))
    if len(ts) == 1:
        return ts[0]
    return cx.emit_out("cat", ts, {"dim": d})


def _split_by_metas(cx, x: T, dim: int):
    d = _norm_dim(dim, x.rank, cx)
    outs, start = [], 0
    for m in cx.out:
        size = m.shape[d]
        outs.append(cx.slice(x, d, start, start + size))
        start += size
    return tuple(outs)


@handles("torch.split", "Tensor.split")
def _split(cx, tensor, split_size_or_sections, dim=0):
    return _split_by_metas(cx, cx.tensor(tensor), dim)


@handles("Tensor.split_with_sizes", "torch.split_with_sizes")
def _split_sizes(cx, input, split_sizes, dim=0):
    return _split_by_metas(cx, cx.tensor(input), dim)


@handles("torch.chunk", "Tensor.chunk")
def _chunk(cx, input, chunks, dim=0):
    return _split_by_metas(cx, cx.tensor(input), dim)


@handles("torch.unbind", "Tensor.unbind")
def _unbind(cx, input, dim=0):
    x = cx.tensor(input)
    d = _norm_dim(dim, x.rank, cx)
    return tuple(cx.select(x, d, i) for i in range(x.shape[d]))


@handles("torch.narrow", "Tensor.narrow")
def _narrow(cx, input, dim, start, length):
    x = cx.tensor(input)
    d = _norm_dim(dim, x.rank, cx)
    start = start + x.shape[d] if start < 0 else start
    return cx.slice(x, d, start, start + length)


@handles("torch.select", "Tensor.select")
def _select(cx, input, dim, index):
    x = cx.tensor(input)
    return cx.select(x, _norm_dim(dim, x.rank, cx), index)


@handles("torch.index_select", "Tensor.index_select")
def _index_select(cx, input, dim, index):
    x = cx.tensor(input)
    idx = cx.tensor(index, "index")
    return cx.emit_out("take", [x, idx], {"dim": _norm_dim(dim, x.rank, cx)})


@handles("operator.getitem")
def _getitem(cx, obj, idx):
    obj = cx.resolve(obj)
    if isinstance(obj, (tuple, list)):
        return obj[idx]
    x = cx.tensor(obj)
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = tuple(cx.resolve(i) for i in idx)
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise cx.error("more than one Ellipsis in an index")
    if n_ell:
        p = next(k for k, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:p] + (slice(None),) * (x.rank - consumed) + idx[p + 1:]
    if consumed > x.rank:
        raise cx.error(f"too many indices for a tensor of rank {x.rank}")
    n_tensors = sum(1 for i in idx if isinstance(i, T))
    if n_tensors > 1:
        raise cx.error("indexing with more than one tensor index is not supported")
    cur, d = x, 0
    for i in idx:
        if i is None:
            continue                        # new unit dims come from the final reshape
        if isinstance(i, bool):
            raise cx.error("indexing with a bool is not supported")
        if isinstance(i, int):
            cur = cx.select(cur, d, i)
        elif isinstance(i, slice):
            cur = cx.slice(cur, d, i.start, i.stop, 1 if i.step is None else i.step)
            d += 1
        elif isinstance(i, T):
            if i.dtype == torch.bool:
                raise cx.error("boolean-mask indexing has a data-dependent shape")
            if i.dtype not in (torch.int64, torch.int32):
                raise cx.error(f"indexing with a {i.dtype} tensor")
            shape = cur.shape[:d] + i.shape + cur.shape[d + 1:]
            cur = cx.emit("take", [cur, i], {"dim": d}, shape, cur.dtype)
            d += i.rank
        else:
            raise cx.error(f"unsupported index {i!r}")
    return cx.reshape(cur, cx.out.shape)


@handles("torch.gather", "Tensor.gather")
def _gather(cx, input, dim, index, sparse_grad=False):
    x = cx.tensor(input)
    return cx.emit_out("gather", [x, cx.tensor(index, "index")],
                       {"dim": _norm_dim(dim, x.rank, cx)})


@handles("torch.scatter", "Tensor.scatter", "Tensor.scatter_")
def _scatter(cx, input, dim, index, src=None, value=None, reduce=None):
    if reduce is not None:
        raise cx.error("scatter with reduce= is not supported")
    x = cx.tensor(input)
    s = src if src is not None else value
    return cx.emit_out("scatter", [x, cx.tensor(index, "index"), cx.cast(cx.resolve(s),
                                                                          x.dtype)],
                       {"dim": _norm_dim(dim, x.rank, cx)})


@handles("torch.topk", "Tensor.topk")
def _topk(cx, input, k, dim=-1, largest=True, sorted=True):
    x = cx.tensor(input)
    return cx.emit_multi("topk", [x], {"k": int(k), "dim": _norm_dim(dim, x.rank, cx),
                                       "largest": bool(largest), "sorted": bool(sorted)},
                         cx.out)


@handles("F.one_hot")
def _one_hot(cx, tensor, num_classes=-1):
    return cx.emit_out("one_hot", [cx.tensor(tensor)],
                       {"num_classes": int(cx.out.shape[-1])})


@handles("F.embedding")
def _embedding_f(cx, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise cx.error("embedding with max_norm (renormalizes the weight) is not supported")
    return cx.emit_out("embedding", [cx.tensor(weight), cx.tensor(input, "indices")])


@handles("torch.embedding")
def _embedding_aten(cx, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
                    sparse=False):
    return cx.emit_out("embedding", [cx.tensor(weight), cx.tensor(indices, "indices")])


# ---- elementwise

def _binary_handler(op, swap=False):
    def h(cx, input, other, *, alpha=1, out=None):
        a, b = (other, input) if swap else (input, other)
        if alpha != 1:
            b = cx.binary("mul", b, alpha) if isinstance(cx.resolve(b), T) else b * alpha
        return cx.binary(op, a, b)
    return h


handles("operator.add", "operator.iadd", "torch.add", "Tensor.add", "Tensor.add_",
        "Tensor.__add__", "Tensor.__radd__")(_binary_handler("add"))
handles("operator.sub", "operator.isub", "torch.sub", "torch.subtract", "Tensor.sub",
        "Tensor.sub_", "Tensor.__sub__")(_binary_handler("sub"))
handles("torch.rsub", "Tensor.__rsub__")(_binary_handler("sub", swap=True))
handles("operator.mul", "operator.imul", "torch.mul", "torch.multiply", "Tensor.mul",
        "Tensor.mul_", "Tensor.__mul__", "Tensor.__rmul__")(_binary_handler("mul"))


@handles("operator.truediv", "operator.itruediv", "torch.div", "torch.divide",
         "torch.true_divide", "Tensor.div", "Tensor.div_", "Tensor.__truediv__")
def _div(cx, input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        raise cx.error(f"div with rounding_mode={rounding_mode!r} is not supported")
    return cx.binary("div", input, other)


@handles("operator.pow", "operator.ipow", "torch.pow", "Tensor.pow", "Tensor.__pow__",
         "Tensor.__rpow__", "Tensor.pow_")
def _pow(cx, input, exponent, *, out=None):
    return cx.binary("pow", input, exponent)


@handles("torch.maximum", "Tensor.maximum")
def _maximum(cx, input, other, *, out=None):
    return cx.binary("maximum", input, other)


@handles("torch.minimum", "Tensor.minimum")
def _minimum(cx, input, other, *, out=None):
    return cx.binary("minimum", input, other)


def _compare_handler(op):
    def h(cx, input, other, *, out=None):
        return cx.compare(op, input, other)
    return h


for _op, _names in {"eq": ("eq",), "ne": ("ne", "not_equal"), "lt": ("lt", "less"),
                    "le": ("le", "less_equal"), "gt": ("gt", "greater"),
                    "ge": ("ge", "greater_equal")}.items():
    handles(f"operator.{_op}", *(f"torch.{n}" for n in _names),
            *(f"Tensor.{n}" for n in _names), f"Tensor.__{_op}__")(_compare_handler(_op))


def _logical_handler(op):
    def h(cx, input, other, *, out=None):
        bitwise = cx.key.startswith("operator.") or "bitwise" in cx.key or "__" in cx.key
        for v in (cx.resolve(input), cx.resolve(other)):
            if bitwise and isinstance(v, T) and v.dtype != torch.bool:
                raise cx.error("bitwise ops on integer tensors are not supported")
        return cx.compare(op, input, other)
    return h


handles("torch.logical_and", "Tensor.logical_and", "operator.and_", "operator.iand",
        "torch.bitwise_and", "Tensor.bitwise_and", "Tensor.__and__")(
            _logical_handler("logical_and"))
handles("torch.logical_or", "Tensor.logical_or", "operator.or_", "operator.ior",
        "torch.bitwise_or", "Tensor.bitwise_or", "Tensor.__or__")(
            _logical_handler("logical_or"))


@handles("torch.logical_not", "Tensor.logical_not", "operator.invert", "torch.bitwise_not",
         "Tensor.bitwise_not", "Tensor.__invert__")
def _logical_not(cx, input, *, out=None):
    x = cx.tensor(input)
    if x.dtype != torch.bool and not cx.key.endswith("logical_not"):
        raise cx.error("bitwise not on an integer tensor is not supported")
    return cx.emit_out("logical_not", [cx.cast(x, torch.bool)])


def _unary_handler(op):
    def h(cx, input, *args, out=None, **kwargs):
        if args or any(v not in (None, False) for v in kwargs.values()):
            raise cx.error(f"{op}: unexpected arguments {args} {kwargs}")
        return cx.emit_out(op, [cx.cast(cx.tensor(input), cx.out.dtype)])
    return h


for _op, _keys in {
    "neg": ("operator.neg", "torch.neg", "torch.negative", "Tensor.neg", "Tensor.__neg__"),
    "exp": ("torch.exp", "Tensor.exp"),
    "log": ("torch.log", "Tensor.log"),
    "sqrt": ("torch.sqrt", "Tensor.sqrt"),
    "rsqrt": ("torch.rsqrt", "Tensor.rsqrt"),
    "abs": ("operator.abs", "builtins.abs", "torch.abs", "Tensor.abs", "Tensor.__abs__"),
    "erf": ("torch.erf", "Tensor.erf", "torch.special.erf"),
    "reciprocal": ("torch.reciprocal", "Tensor.reciprocal"),
    "sin": ("torch.sin", "Tensor.sin"),
    "cos": ("torch.cos", "Tensor.cos"),
    "tanh": ("torch.tanh", "Tensor.tanh", "F.tanh"),
    "sigmoid": ("torch.sigmoid", "Tensor.sigmoid", "F.sigmoid"),
    "relu": ("torch.relu", "Tensor.relu", "torch.relu_", "Tensor.relu_"),
}.items():
    handles(*_keys)(_unary_handler(_op))


@handles("F.relu")
def _relu_f(cx, input, inplace=False):
    return cx.emit_out("relu", [cx.tensor(input)])


@handles("F.silu")
def _silu(cx, input, inplace=False):
    return cx.emit_out("silu", [cx.tensor(input)])


@handles("F.gelu")
def _gelu(cx, input, approximate="none"):
    return cx.emit_out("gelu", [cx.tensor(input)], {"approximate": approximate})


@handles("torch.clamp", "torch.clip", "Tensor.clamp", "Tensor.clip", "Tensor.clamp_")
def _clamp(cx, input, min=None, max=None, *, out=None):
    if isinstance(cx.resolve(min), T) or isinstance(cx.resolve(max), T):
        raise cx.error("clamp with tensor bounds is not supported")
    return cx.emit_out("clamp", [cx.tensor(input)], {"min": min, "max": max})


@handles("F.relu6")
def _relu6(cx, input, inplace=False):
    return cx.emit_out("clamp", [cx.tensor(input)], {"min": 0.0, "max": 6.0})


@handles("F.hardtanh")
def _hardtanh(cx, input, min_val=-1.0, max_val=1.0, inplace=False):
    return cx.emit_out("clamp", [cx.tensor(input)], {"min": min_val, "max": max_val})


def _softmax_common(cx, op, input, dim, dtype):
    x = cx.tensor(input)
    if dim is None:
        raise cx.error(f"{op} without dim (implicit dim is deprecated) is not supported")
    if dtype is not None:
        x = cx.cast(x, dtype)
    return cx.emit_out(op, [x], {"dim": _norm_dim(dim, x.rank, cx)})


@handles("F.softmax")
def _softmax_f(cx, input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_common(cx, "softmax", input, dim, dtype)


@handles("torch.softmax", "Tensor.softmax", "torch.special.softmax")
def _softmax(cx, input, dim, dtype=None):
    return _softmax_common(cx, "softmax", input, dim, dtype)


@handles("F.log_softmax")
def _log_softmax_f(cx, input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_common(cx, "log_softmax", input, dim, dtype)


@handles("torch.log_softmax", "Tensor.log_softmax")
def _log_softmax(cx, input, dim, dtype=None):
    return _softmax_common(cx, "log_softmax", input, dim, dtype)


@handles("torch.where", "Tensor.where")
def _where(cx, condition, input=None, other=None, *, out=None):
    if cx.key == "Tensor.where":       # x.where(cond, y): self is the first argument
        condition, input = input, condition
    if input is None or other is None:
        raise cx.error("torch.where(cond) (nonzero) has a data-dependent shape")
    cond = cx.cast(cx.tensor(condition, "condition"), torch.bool)
    dtype = cx.out.dtype
    return cx.emit_out("where", [cond, cx.cast(cx.resolve(input), dtype),
                                 cx.cast(cx.resolve(other), dtype)])


@handles("Tensor.masked_fill", "Tensor.masked_fill_", "torch.masked_fill")
def _masked_fill(cx, input, mask, value):
    x = cx.tensor(input)
    m = cx.cast(cx.tensor(mask, "mask"), torch.bool)
    value = cx.resolve(value)
    if isinstance(value, T):
        return cx.emit_out("where", [m, cx.cast(value, x.dtype), x])
    return cx.emit_out("masked_fill", [x, m], {"value": value})


# ---- reductions

def _reduce(cx, op, input, dim, keepdim, dtype=None):
    x = cx.tensor(input)
    if dtype is not None:
        x = cx.cast(x, dtype)
    elif op in ("sum",) and x.dtype != cx.out.dtype:
        x = cx.cast(x, cx.out.dtype)   # sum of bool/int8 accumulates in i64
    return cx.emit_out(op, [x], {"dims": _dims(dim, x.rank, cx), "keepdim": bool(keepdim)})


@handles("torch.sum", "Tensor.sum")
def _sum(cx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(cx, "sum", input, dim, keepdim, dtype)


@handles("torch.mean", "Tensor.mean")
def _mean(cx, input, dim=None, keepdim=False, *, dtype=None, out=None):
    return _reduce(cx, "mean", input, dim, keepdim, dtype)


@handles("torch.amax", "Tensor.amax")
def _amax(cx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(cx, "amax", input, dim, keepdim)


@handles("torch.amin", "Tensor.amin")
def _amin(cx, input, dim=(), keepdim=False, *, out=None):
    return _reduce(cx, "amin", input, dim, keepdim)


def _max_min(cx, which, input, dim, keepdim):
    x = cx.tensor(input)
    other = cx.resolve(dim)
    if isinstance(other, T):                       # torch.max(a, b): elementwise
        return cx.binary("maximum" if which == "max" else "minimum", x, other)
    red, arg = ("amax", "argmax") if which == "max" else ("amin", "argmin")
    if dim is None:
        return cx.emit_out(red, [x], {"dims": list(range(x.rank)), "keepdim": False})
    d = _norm_dim(dim, x.rank, cx)
    attrs = {"dims": [d], "keepdim": bool(keepdim)}
    values = cx.emit(red, [x], attrs, cx.out[0].shape, x.dtype)
    indices = cx.emit(arg, [x], {"dim": d, "keepdim": bool(keepdim)}, cx.out[1].shape,
                      torch.int64)
    return (values, indices)


@handles("torch.max", "Tensor.max")
def _max(cx, input, dim=None, keepdim=False, *, out=None):
    return _max_min(cx, "max", input, dim, keepdim)


@handles("torch.min", "Tensor.min")
def _min(cx, input, dim=None, keepdim=False, *, out=None):
    return _max_min(cx, "min", input, dim, keepdim)


def _arg_reduce(cx, op, input, dim, keepdim):
    x = cx.tensor(input)
    if dim is None:
        x = cx.reshape(x, (math.prod(x.shape),))
        dim, keepdim = 0, False
    return cx.emit_out(op, [x], {"dim": _norm_dim(dim, x.rank, cx), "keepdim": bool(keepdim)})


@handles("torch.argmax", "Tensor.argmax")
def _argmax(cx, input, dim=None, keepdim=False, *, out=None):
    return _arg_reduce(cx, "argmax", input, dim, keepdim)


@handles("torch.argmin", "Tensor.argmin")
def _argmin(cx, input, dim=None, keepdim=False, *, out=None):
    return _arg_reduce(cx, "argmin", input, dim, keepdim)


# ---- contractions

@handles("F.linear")
def _linear(cx, input, weight, bias=None):
    return cx.emit_out("linear", [cx.tensor(input), cx.tensor(weight, "weight"),
                                  cx.resolve(bias)])


@handles("operator.matmul", "operator.imatmul", "torch.matmul", "Tensor.matmul",
         "Tensor.__matmul__", "torch.mm", "Tensor.mm")
def _matmul(cx, input, other, *, out=None):
    a, b = cx.tensor(input), cx.tensor(other)
    return cx.emit_out("matmul", [cx.cast(a, cx.out.dtype), cx.cast(b, cx.out.dtype)])


@handles("torch.bmm", "Tensor.bmm")
def _bmm(cx, input, mat2, *, out=None):
    return cx.emit_out("bmm", [cx.tensor(input), cx.tensor(mat2)])


@handles("torch.addmm", "Tensor.addmm")
def _addmm(cx, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if beta != 1 or alpha != 1:
        raise cx.error("addmm with beta/alpha != 1 is not supported")
    a, b = cx.tensor(mat1), cx.tensor(mat2)
    mm = cx.emit("matmul", [a, b], None, (a.shape[0], b.shape[1]), cx.out.dtype)
    return cx.binary("add", cx.resolve(input), mm)


@handles("torch.einsum")
def _einsum(cx, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    ts = [cx.tensor(t) for t in operands]
    eq = equation.replace(" ", "")
    if "." in eq:
        raise cx.error("einsum with '...' is not supported")
    if "->" not in eq:
        labels = eq.replace(",", "")
        eq += "->" + "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    return cx.emit_out("einsum", ts, {"equation": eq})


@handles("F.conv2d", "torch.conv2d")
def _conv2d(cx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, w = cx.tensor(input), cx.tensor(weight, "weight")
    if x.rank != 4:
        raise cx.error("conv2d on an unbatched (3-D) input is not supported")
    stride, dilation = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0, 0]
        else:
            total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])]
            if any(t % 2 for t in total):
                raise cx.error("padding='same' needs asymmetric padding here; not supported")
            padding = [t // 2 for t in total]
    return cx.emit_out("conv2d", [x, w, cx.resolve(bias)],
                       {"stride": stride, "padding": _pair(padding), "dilation": dilation,
                        "groups": int(groups)})


@handles("F.scaled_dot_product_attention")
def _sdpa(cx, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    q, k, v = cx.tensor(query), cx.tensor(key), cx.tensor(value)
    if dropout_p:
        raise cx.error("scaled_dot_product_attention with dropout_p > 0 (applied even in "
                       "eval mode) is not supported")
    if enable_gqa and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]

        def widen(t):
            b, (h, s, e) = t.shape[:-3], t.shape[-3:]
            t = cx.reshape(t, b + (h, 1, s, e))
            t = cx.expand(t, b + (h, rep, s, e))
            return cx.reshape(t, b + (h * rep, s, e))
        k, v = widen(k), widen(v)
    mask = cx.resolve(attn_mask)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return cx.emit_out("scaled_dot_product_attention", [q, k, v, mask],
                       {"is_causal": bool(is_causal), "scale": float(scale)})


# ---- pooling and normalization

@handles("F.max_pool2d", "torch.max_pool2d", "F.max_pool2d_with_indices")
def _max_pool2d(cx, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    if return_indices:
        raise cx.error("max_pool2d with return_indices=True is not supported")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    return cx.emit_out("max_pool2d", [cx.tensor(input)],
                       {"kernel_size": _pair(kernel_size), "stride": _pair(stride),
                        "padding": _pair(padding), "dilation": _pair(dilation),
                        "ceil_mode": bool(ceil_mode)})


@handles("F.avg_pool2d", "torch.avg_pool2d")
def _avg_pool2d(cx, input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise cx.error("avg_pool2d with divisor_override is not supported")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    return cx.emit_out("avg_pool2d", [cx.tensor(input)],
                       {"kernel_size": _pair(kernel_size), "stride": _pair(stride),
                        "padding": _pair(padding), "ceil_mode": bool(ceil_mode),
                        "count_include_pad": bool(count_include_pad)})


@handles("F.adaptive_avg_pool2d", "torch.adaptive_avg_pool2d")
def _adaptive_avg_pool2d(cx, input, output_size):
    return cx.emit_out("adaptive_avg_pool2d", [cx.tensor(input)],
                       {"output_size": list(cx.out.shape[-2:])})


@handles("F.batch_norm")
def _batch_norm(cx, input, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    if training or running_mean is None:
        raise cx.error("batch_norm in training mode (batch statistics) is not supported")
    return cx.emit_out("batch_norm", [cx.tensor(input), cx.tensor(running_mean),
                                      cx.tensor(running_var), cx.resolve(weight),
                                      cx.resolve(bias)], {"eps": float(eps)})


@handles("F.layer_norm", "torch.layer_norm")
def _layer_norm(cx, input, normalized_shape, weight=None, bias=None, eps=1e-5,
                cudnn_enable=True):
    return cx.emit_out("layer_norm", [cx.tensor(input), cx.resolve(weight), cx.resolve(bias)],
                       {"normalized_shape": _pair(normalized_shape, 1), "eps": float(eps)})


# ---- leaf modules

@handles_module(nn.Linear)
def _m_linear(cx, mod, input):
    return _linear(cx, input, cx.param(mod, "weight"), cx.param(mod, "bias"))


@handles_module(nn.Conv2d)
def _m_conv2d(cx, mod, input):
    if mod.padding_mode != "zeros":
        raise cx.error(f"Conv2d padding_mode={mod.padding_mode!r} is not supported")
    return _conv2d(cx, input, cx.param(mod, "weight"), cx.param(mod, "bias"), mod.stride,
                   mod.padding, mod.dilation, mod.groups)


@handles_module(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
def _m_batch_norm(cx, mod, input):
    if mod.training or mod.running_mean is None:
        raise cx.error("BatchNorm must be in eval mode with running statistics")
    return _batch_norm(cx, input, cx.param(mod, "running_mean"), cx.param(mod, "running_var"),
                       cx.param(mod, "weight"), cx.param(mod, "bias"), False, 0.0, mod.eps)


@handles_module(nn.LayerNorm)
def _m_layer_norm(cx, mod, input):
    return _layer_norm(cx, input, mod.normalized_shape, cx.param(mod, "weight"),
                       cx.param(mod, "bias"), mod.eps)


@handles_module(nn.Embedding)
def _m_embedding(cx, mod, input):
    if mod.max_norm is not None:
        raise cx.error("Embedding with max_norm is not supported")
    return cx.emit_out("embedding", [cx.param(mod, "weight"), cx.tensor(input, "indices")])


@handles_module(nn.Dropout, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
                nn.FeatureAlphaDropout, nn.Identity, *([nn.Dropout1d] if hasattr(nn, "Dropout1d")
                                                     else []))
def _m_alias(cx, mod, input, *args, **kwargs):
    if mod.training and getattr(mod, "p", 0):
        raise cx.error("dropout module in training mode")
    return cx.tensor(input)


@handles_module(nn.ReLU)
def _m_relu(cx, mod, input):
    return cx.emit_out("relu", [cx.tensor(input)])


@handles_module(nn.GELU)
def _m_gelu(cx, mod, input):
    return _gelu(cx, input, getattr(mod, "approximate", "none"))


@handles_module(nn.SiLU)
def _m_silu(cx, mod, input):
    return cx.emit_out("silu", [cx.tensor(input)])


@handles_module(nn.Sigmoid)
def _m_sigmoid(cx, mod, input):
    return cx.emit_out("sigmoid", [cx.tensor(input)])


@handles_module(nn.Tanh)
def _m_tanh(cx, mod, input):
    return cx.emit_out("tanh", [cx.tensor(input)])


@handles_module(nn.ReLU6, nn.Hardtanh)
def _m_hardtanh(cx, mod, input):
    return cx.emit_out("clamp", [cx.tensor(input)], {"min": float(mod.min_val),
                                                     "max": float(mod.max_val)})


@handles_module(nn.Softmax)
def _m_softmax(cx, mod, input):
    return _softmax_common(cx, "softmax", input, mod.dim, None)


@handles_module(nn.LogSoftmax)
def _m_log_softmax(cx, mod, input):
    return _softmax_common(cx, "log_softmax", input, mod.dim, None)


@handles_module(nn.Flatten, nn.Unflatten)
def _m_flatten(cx, mod, input):
    return cx.reshape(cx.tensor(input), cx.out.shape)


@handles_module(nn.MaxPool2d)
def _m_max_pool2d(cx, mod, input):
    return _max_pool2d(cx, input, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                       mod.ceil_mode, mod.return_indices)


@handles_module(nn.AvgPool2d)
def _m_avg_pool2d(cx, mod, input):
    return _avg_pool2d(cx, input, mod.kernel_size, mod.stride, mod.padding, mod.ceil_mode,
                       mod.count_include_pad, mod.divisor_override)


@handles_module(nn.AdaptiveAvgPool2d)
def _m_adaptive_avg_pool2d(cx, mod, input):
    return _adaptive_avg_pool2d(cx, input, mod.output_size)


@handles_module(nn.MultiheadAttention)
def _m_mha(cx, mod, query, key, value, key_padding_mask=None, need_weights=True,
           attn_mask=None, average_attn_weights=True, is_causal=False):
    """nn.MultiheadAttention (eval) as linear / reshape / permute / matmul / softmax."""
    q_in, k_in, v_in = cx.tensor(query), cx.tensor(key), cx.tensor(value)
    if q_in.rank != 3:
        raise cx.error("unbatched (2-D) MultiheadAttention input is not supported")
    if mod.bias_k is not None or mod.add_zero_attn:
        raise cx.error("MultiheadAttention with add_bias_kv / add_zero_attn is not supported")
    if not mod.batch_first:                                   # [L, B, E] -> [B, L, E]
        q_in, k_in, v_in = (cx.permute(t, [1, 0, 2]) for t in (q_in, k_in, v_in))
    B, L, E = q_in.shape
    S = k_in.shape[1]
    H = mod.num_heads
    D = E // H
    dt = q_in.dtype
    bias = cx.param(mod, "in_proj_bias")

    def proj(x, w, b, which):
        return cx.emit("linear", [x, w, b], None, x.shape[:2] + (E,), dt, f"{which}_proj")

    def part(t, i, which):
        return None if t is None else cx.slice(t, 0, i * E, (i + 1) * E)

    if mod._qkv_same_embed_dim and q_in is k_in and k_in is v_in:
        w = cx.param(mod, "in_proj_weight")
        qkv = cx.emit("linear", [q_in, w, bias], None, (B, L, 3 * E), dt, "in_proj")
        q, k, v = (cx.slice(qkv, 2, i * E, (i + 1) * E) for i in range(3))
    else:
        if mod._qkv_same_embed_dim:
            w = cx.param(mod, "in_proj_weight")
            wq, wk, wv = (cx.slice(w, 0, i * E, (i + 1) * E) for i in range(3))
        else:
            wq, wk, wv = (cx.param(mod, n) for n in ("q_proj_weight", "k_proj_weight",
                                                     "v_proj_weight"))
        bq, bk, bv = (None,) * 3 if bias is None else (cx.slice(bias, 0, i * E, (i + 1) * E)
                                                       for i in range(3))
        q, k, v = proj(q_in, wq, bq, "q"), proj(k_in, wk, bk, "k"), proj(v_in, wv, bv, "v")
    q = cx.permute(cx.reshape(q, (B, L, H, D)), [0, 2, 1, 3])           # [B, H, L, D]
    k = cx.permute(cx.reshape(k, (B, S, H, D)), [0, 2, 3, 1])           # [B, H, D, S]
    v = cx.permute(cx.reshape(v, (B, S, H, D)), [0, 2, 1, 3])           # [B, H, S, D]
    q = cx.emit("mul", [q, 1.0 / math.sqrt(D)], None, q.shape, dt, "scale")
    scores = cx.emit("matmul", [q, k], None, (B, H, L, S), dt, "scores")

    def apply_mask(scores, mask, shape, ignore_true):
        mask = cx.reshape(mask, shape)
        if mask.dtype == torch.bool:
            if not ignore_true:
                mask = cx.emit("logical_not", [mask], None, mask.shape, torch.bool)
            return cx.emit("masked_fill", [scores, mask], {"value": float("-inf")},
                           scores.shape, dt)
        return cx.emit("add", [scores, cx.cast(mask, dt)], None, scores.shape, dt)

    am = cx.resolve(attn_mask)
    if am is not None:
        am = cx.tensor(am)
        shape = (1, 1, L, S) if am.rank == 2 else (B, H, L, S)
        scores = apply_mask(scores, am, shape, ignore_true=True)
    kpm = cx.resolve(key_padding_mask)
    if kpm is not None:
        scores = apply_mask(scores, cx.tensor(kpm), (B, 1, 1, S), ignore_true=True)
    probs = cx.emit("softmax", [scores], {"dim": 3}, scores.shape, dt)
    ctx = cx.emit("matmul", [probs, v], None, (B, H, L, D), dt, "context")
    ctx = cx.reshape(cx.permute(ctx, [0, 2, 1, 3]), (B, L, E))
    out = cx.emit("linear", [ctx, cx.param(mod.out_proj, "weight"),
                             cx.param(mod.out_proj, "bias")], None, (B, L, E), dt, "out_proj")
    if not mod.batch_first:
        out = cx.permute(out, [1, 0, 2])
    weights = None
    if need_weights:
        weights = probs
        if average_attn_weights:
            weights = cx.emit("mean", [probs], {"dims": [1], "keepdim": False}, (B, L, S), dt,
                              "weights")
    return (out, weights)


# --------------------------------------------------------------------------------------------
# Driving the conversion
# --------------------------------------------------------------------------------------------

def _mutated_later(cx: _Converter, n: Node) -> bool:
    """In-place op whose mutated operand is read again after it: not expressible in SSA."""
    if not n.args or not isinstance(n.args[0], Node):
        return False
    target = n.args[0]
    return any(cx.order[u] > cx.order[n] for u in target.users if u is not n)


def _is_inplace(cx: _Converter, n: Node) -> bool:
    if n.op == "call_module":
        return bool(getattr(cx.gm.get_submodule(n.target), "inplace", False))
    key = cx.key or ""
    name = key.split(".")[-1]
    return (key.startswith("operator.i") and key not in ("operator.invert",
                                                         "operator.is_", "operator.is_not")
            or (key.startswith("Tensor.") and name.endswith("_") and not name.endswith("__"))
            or bool(n.kwargs.get("inplace", False)))


def _convert(traced: Traced, output_names: Optional[Sequence[str]]) -> _Converter:
    cx = _Converter(traced)
    env: Dict[Node, Any] = {}

    def lookup(a):
        return env[a] if isinstance(a, Node) else a

    outputs = None
    for n in traced.gm.graph.nodes:
        cx.step += 1
        cx.node, cx.key, cx.out = n, _target_key(n), traced.metas.get(n)
        if n.op == "placeholder":
            name = traced.placeholders[n]
            if name is None:
                env[n] = traced.values[n]
                continue
            v = cx.out
            if not isinstance(v, Meta):
                raise cx.error("inputs must be tensors")
            if v.dtype not in DTYPES:
                raise cx.error(f"input dtype {v.dtype} is not supported")
            cx.used.add(name)
            t = T(name, v.shape, v.dtype)
            cx.inputs.append(t)
            env[n] = t
            continue
        if n.op == "get_attr":
            value = traced.gm
            for part in n.target.split("."):
                value = getattr(value, part)
            env[n] = cx.attr_tensor(value, n.target) if isinstance(value, torch.Tensor) \
                else value
            continue
        if n.op == "output":
            outputs = map_aggregate(n.args[0], lookup)
            continue
        if traced.static[n]:
            value = traced.values[n]
            if _contains_tensor(value):
                env[n] = _Static(n, value)
                continue
            # A folded non-tensor value: it may read tensor metadata, never tensor data.
            structural = (cx.key == "operator.getitem" and isinstance(n.args[0], Node)
                          and not isinstance(traced.metas.get(n.args[0]), Meta))
            if cx.key not in _META_READERS and not structural:
                for m in n.all_input_nodes:
                    if not traced.static[m]:
                        raise cx.error(f"value {value!r} depends on tensor data "
                                       "(data-dependent control flow or .item())")
            env[n] = value
            continue
        args = map_aggregate(n.args, lookup)
        kwargs = map_aggregate(n.kwargs, lookup)
        if n.op == "call_module":
            mod = traced.gm.get_submodule(n.target)
            handler = next((_MOD[c] for c in type(mod).__mro__ if c in _MOD), None)
            if handler is None:
                raise cx.error(f"leaf module {type(mod).__qualname__} maps to no loom-trace op")
            call_args = (cx, mod) + tuple(args)
        else:
            handler = _FN.get(cx.key)
            if handler is None:
                raise cx.error(f"target {cx.key} maps to no loom-trace op")
            call_args = (cx,) + tuple(args)
        if _is_inplace(cx, n) and _mutated_later(cx, n):
            raise cx.error("in-place op whose operand is used again later")
        try:
            inspect.signature(handler).bind(*call_args, **kwargs)
        except TypeError as e:
            raise cx.error(f"unexpected arguments: {e}") from None
        result = handler(*call_args, **kwargs)
        # Name the node's result after the fx node.
        if isinstance(result, T) and result.step == cx.step:
            cx.used.discard(result.name)
            result.name = n.name
        elif isinstance(result, tuple):
            for i, r in enumerate(result):
                if isinstance(r, T) and r.step == cx.step:
                    cx.used.discard(r.name)
                    r.name = cx.fresh(f"{n.name}.{i}")
        env[n] = result

    cx.node = None
    flat: List[Tuple[str, T]] = []

    def collect(v, key):
        v = cx.resolve(v)
        if isinstance(v, T):
            flat.append((key, v))
        elif isinstance(v, dict):
            for k, e in v.items():
                collect(e, str(k))
        elif isinstance(v, (tuple, list)):
            for i, e in enumerate(v):
                collect(e, f"{key}.{i}" if key else str(i))
        else:
            raise ExportError(f"model output {v!r} is not a tensor")

    collect(outputs, "")
    if output_names is not None and len(output_names) != len(flat):
        raise ExportError(f"{len(output_names)} output names for {len(flat)} outputs")
    cx.output_refs = [t for _, t in flat]
    if output_names:
        _rename_outputs(cx, output_names)
    return cx


def _rename_outputs(cx: _Converter, output_names: Sequence[str]):
    """Give the graph outputs the requested names (only node outputs can be renamed)."""
    produced = {id(t) for node in cx.nodes for t in node["outputs"]}
    everything = (cx.inputs + [t for t, _, _ in cx.params.values()]
                  + [t for t, _ in cx.consts.values()]
                  + [t for node in cx.nodes for t in node["outputs"]])
    for want, t in zip(output_names, cx.output_refs):
        if t.name == want or id(t) not in produced:
            continue
        for other in everything:
            if other.name == want and other is not t:
                if id(other) not in produced or other in cx.output_refs:
                    raise ExportError(f"output name {want!r} is taken by another tensor")
                other.name = cx.fresh(want + ".0")
        t.name = want


def _dce(cx: _Converter):
    live = {id(t) for t in cx.output_refs}
    kept = []
    for node in reversed(cx.nodes):
        if any(id(t) in live for t in node["outputs"]):
            kept.append(node)
            live.update(id(v) for v in node["inputs"] if isinstance(v, T))
    cx.nodes = list(reversed(kept))
    cx.consts = {k: v for k, v in cx.consts.items() if id(v[0]) in live}


# --------------------------------------------------------------------------------------------
# Serialization
# --------------------------------------------------------------------------------------------

def json_scalar(v):
    """Scalars as JSON: numbers, bools, null; non-finite floats as "inf", "-inf", "nan"."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(v, (list, tuple)):
        return [json_scalar(e) for e in v]
    if isinstance(v, str):
        return v
    raise ExportError(f"attribute value {v!r} is not JSON-serializable")


def tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        a = t.view(torch.int16).numpy()
    else:
        a = t.numpy()
    return a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C")


def _tensor_json(t: T) -> dict:
    return {"name": t.name, "shape": list(t.shape), "dtype": DTYPES[t.dtype]}


def export_trace(model: nn.Module, inputs: Dict[str, torch.Tensor], json_path: str, *,
                 model_name: Optional[str] = None, output_names: Optional[Sequence[str]] = None,
                 extra_leaves: Sequence[type] = (), traced: Optional[Traced] = None) -> dict:
    """Trace `model` on `inputs` and write `json_path` plus the weights file next to it
    (`<stem>.bin`, where json_path is `<stem>.trace.json` or `<stem>.json`). Returns the JSON
    document."""
    traced = traced or trace(model, inputs, extra_leaves)
    cx = _convert(traced, output_names)
    _dce(cx)
    for node in cx.nodes:
        for t in node["outputs"]:
            if t.dtype not in DTYPES:
                raise ExportError(f"node {node['label']}: dtype {t.dtype} is not supported")

    base = os.path.basename(json_path)
    stem = base[:-len(".trace.json")] if base.endswith(".trace.json") else \
        os.path.splitext(base)[0]
    bin_name = stem + ".bin"
    bin_path = os.path.join(os.path.dirname(os.path.abspath(json_path)), bin_name)

    params_json, consts_json = [], []
    with open(bin_path, "wb") as f:
        offset = 0
        stored: Dict[bytes, dict] = {}      # identical bytes are stored once (e.g. the same
                                            # causal-mask buffer in every layer)

        def store(t: T, value: torch.Tensor) -> dict:
            nonlocal offset
            data = tensor_bytes(value)
            key = hashlib.sha256(data).digest()
            if key in stored and stored[key]["nbytes"] == len(data):
                return dict(stored[key])
            pad = (-offset) % ALIGNMENT
            f.write(b"\0" * pad)
            offset += pad
            f.write(data)
            entry = {"file": bin_name, "offset": offset, "nbytes": len(data)}
            offset += len(data)
            stored[key] = entry
            return dict(entry)

        for name, (t, value, trainable) in cx.params.items():
            params_json.append({**_tensor_json(t), "trainable": trainable,
                                "storage": store(t, value)})
        for name, (t, value) in cx.consts.items():
            consts_json.append({**_tensor_json(t), "trainable": False,
                                "storage": store(t, value)})

    nodes_json = []
    for node in cx.nodes:
        ins = [v.name if isinstance(v, T) else json_scalar(v) for v in node["inputs"]]
        nodes_json.append({
            "name": node["outputs"][0].name if len(node["outputs"]) == 1 else node["label"],
            "op": node["op"],
            "inputs": ins,
            "attrs": {k: json_scalar(v) for k, v in node["attrs"].items()},
            "outputs": [_tensor_json(t) for t in node["outputs"]],
        })
    labels = set()
    for nj in nodes_json:                     # multi-output labels must not clash either
        if nj["name"] in labels:
            nj["name"] = nj["name"] + ".node"
        labels.add(nj["name"])
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "model": model_name or type(model).__name__,
        "producer": f"torch {torch.__version__}",
        "inputs": [_tensor_json(t) for t in cx.inputs],
        "parameters": params_json,
        "constants": consts_json,
        "nodes": nodes_json,
        "outputs": [t.name for t in cx.output_refs],
    }
    validate(doc)
    with open(json_path, "w") as f:
        f.write(dumps(doc))
    return doc


def dumps(doc: dict) -> str:
    """JSON text with one line per input, parameter, constant and node (diffable, compact)."""
    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        v = doc[k]
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f" {json.dumps(k)}: [")
            lines.extend(f"  {json.dumps(e)}{',' if j + 1 < len(v) else ''}"
                         for j, e in enumerate(v))
            lines.append(f" ]{comma}")
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Validation and FLOP counting
# --------------------------------------------------------------------------------------------

def validate(doc: dict) -> None:
    """Structural checks: known ops and dtypes, unique names, defined-before-use references."""
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ExportError("not a loom-trace v1 document")
    defined = {}
    for section in ("inputs", "parameters", "constants"):
        for e in doc[section]:
            if e["name"] in defined:
                raise ExportError(f"duplicate tensor name {e['name']!r}")
            if e["dtype"] not in DTYPES.values():
                raise ExportError(f"{e['name']}: unknown dtype {e['dtype']}")
            defined[e["name"]] = e
    for node in doc["nodes"]:
        if node["op"] not in OPS:
            raise ExportError(f"node {node['name']}: op {node['op']!r} not in the vocabulary")
        for v in node["inputs"]:
            if isinstance(v, str) and v not in ("inf", "-inf", "nan") and v not in defined:
                raise ExportError(f"node {node['name']}: input {v!r} is not defined before use")
        for o in node["outputs"]:
            if o["name"] in defined:
                raise ExportError(f"duplicate tensor name {o['name']!r}")
            if o["dtype"] not in DTYPES.values():
                raise ExportError(f"{o['name']}: unknown dtype {o['dtype']}")
            defined[o["name"]] = o
    for name in doc["outputs"]:
        if name not in defined:
            raise ExportError(f"output {name!r} is not defined")


def _matmul_macs(a_shape, b_shape, out_shape) -> int:
    k = a_shape[-1]
    return math.prod(out_shape) * k


def _einsum_macs(equation: str, shapes) -> int:
    lhs = equation.replace(" ", "").split("->")[0].split(",")
    sizes = {}
    for labels, shape in zip(lhs, shapes):
        for c, s in zip(labels, shape):
            sizes[c] = s
    return math.prod(sizes.values())


def trace_flops(doc: dict) -> int:
    """2 x multiply-accumulates of the contraction nodes of a loom-trace document."""
    shapes = {e["name"]: e["shape"] for s in ("inputs", "parameters", "constants")
              for e in doc[s]}
    total = 0
    for node in doc["nodes"]:
        for o in node["outputs"]:
            shapes[o["name"]] = o["shape"]
        ins = [shapes.get(v) if isinstance(v, str) else None for v in node["inputs"]]
        out = node["outputs"][0]["shape"]
        op = node["op"]
        if op == "linear":
            total += 2 * math.prod(out) * ins[0][-1]
        elif op in ("matmul", "bmm"):
            total += 2 * _matmul_macs(ins[0], ins[1], out)
        elif op == "conv2d":
            w = ins[1]
            total += 2 * math.prod(out) * w[1] * w[2] * w[3]
        elif op == "einsum":
            total += 2 * _einsum_macs(node["attrs"]["equation"], ins)
        elif op == "scaled_dot_product_attention":
            q, k, v = ins[:3]
            total += 2 * math.prod(q[:-1]) * k[-2] * (q[-1] + v[-1])
    return total


def fx_flops(traced: Traced) -> int:
    """2 x multiply-accumulates of contraction ops (linear / matmul / bmm / conv / einsum /
    sdpa / MultiheadAttention) counted directly on the fx graph with ShapeProp shapes."""
    metas = traced.metas
    total = 0

    def shp(a):
        m = metas.get(a) if isinstance(a, Node) else None
        return m.shape if isinstance(m, Meta) else None

    for n in traced.gm.graph.nodes:
        out = metas.get(n)
        if n.op == "call_module":
            mod = traced.gm.get_submodule(n.target)
            if isinstance(mod, nn.Linear):
                total += 2 * math.prod(out.shape) * mod.in_features
            elif isinstance(mod, nn.Conv2d):
                k = mod.kernel_size
                total += 2 * math.prod(out.shape) * (mod.in_channels // mod.groups) * k[0] * k[1]
            elif isinstance(mod, nn.MultiheadAttention):
                q = shp(n.args[0] if n.args else n.kwargs["query"])
                kk = shp(n.args[1] if len(n.args) > 1 else n.kwargs["key"])
                if not mod.batch_first:
                    q, kk = (q[1], q[0], q[2]), (kk[1], kk[0], kk[2])
                B, L, E = q
                S = kk[1]
                total += 2 * (B * L * E * E + 2 * B * S * mod.kdim * E  # q, k, v (kdim == vdim)
                              + 2 * B * L * S * E + B * L * E * E)       # attention, out_proj
            continue
        if n.op not in ("call_function", "call_method") or traced.static.get(n):
            continue
        key = _target_key(n)
        if key in ("F.linear",):
            total += 2 * math.prod(out.shape) * shp(n.args[0])[-1]
        elif key in ("operator.matmul", "torch.matmul", "Tensor.matmul", "torch.mm",
                     "Tensor.mm", "torch.bmm", "Tensor.bmm"):
            total += 2 * _matmul_macs(shp(n.args[0]), shp(n.args[1]), out.shape)
        elif key in ("torch.addmm", "Tensor.addmm"):
            total += 2 * math.prod(out.shape) * shp(n.args[1])[-1]
        elif key in ("F.conv2d", "torch.conv2d"):
            w = shp(n.args[1])
            total += 2 * math.prod(out.shape) * w[1] * w[2] * w[3]
        elif key == "torch.einsum":
            ops = n.args[1:]
            if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
                ops = ops[0]
            total += 2 * _einsum_macs(n.args[0], [shp(a) for a in ops])
        elif key == "F.scaled_dot_product_attention":
            q, k, v = (shp(a) for a in n.args[:3])
            total += 2 * math.prod(q[:-1]) * k[-2] * (q[-1] + v[-1])
    return total


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    import argparse
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import models as zoo
    ap = argparse.ArgumentParser(description="Export a zoo model as loom-trace JSON + weights.")
    ap.add_argument("model", choices=sorted(zoo.ZOO))
    ap.add_argument("--config", default="small")
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    model = zoo.build(args.model, args.config)
    inputs = zoo.example_inputs(args.model, args.config)
    path = os.path.join(args.out, f"{args.model}.trace.json")
    doc = export_trace(model, inputs, path, model_name=args.model,
                       output_names=zoo.ZOO[args.model].output_names)
    print(f"{path}: {len(doc['nodes'])} nodes, {len(doc['parameters'])} parameters, "
          f"{len(doc['constants'])} constants")
    return 0


if __name__ == "__main__":
    sys.exit(main())
