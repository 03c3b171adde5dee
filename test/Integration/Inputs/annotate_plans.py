#!/usr/bin/env python3
# test/Integration/Inputs/annotate_plans.py - hand-written plans for an imported model.
"""Usage: annotate_plans.py MODEL.mlir -o OUTDIR [--name NAME] [--weights-dir DIR] PLAN...

Reads one unplanned loom-dialect module (from `loom-translate --import-onnx`,
`--import-trace` or bench/model_ir.py) and writes OUTDIR/NAME-PLAN.mlir for
every PLAN: the same program with a `shard.grid` and `shard.shard`
annotations on every entry input and every weight, and relative weight files
made absolute (relative to --weights-dir, by default MODEL's directory), so the
modules compile from anywhere. A plan already in MODEL (a grid, shardings,
shard.shard ops, e.g. from `--loom-plan`) is dropped first, so `single` turns
a planned module back into the one-device program.

A PLAN names the grid's axes, major to minor, each a kind and a size joined
by 'x': `dp4`, `tp2`, `dp2xtp4`, `sp8`, `ep4`, `dp2xep2`, `pp2xdp2xtp2xep2`, or `single` (no grid,
only the weight paths rewritten). What each kind of axis splits:

  dp  every input's dim 0 (the batch)
  sp  every input's dim 1 (the sequence), and a position table added to the
      activations (not one looked up by loom.embedding) along its positions
  tp  Megatron-LM: the QKV projections and the first MLP matmul column-
      parallel (their output features and biases split), the attention output
      projection and the second MLP matmul row-parallel (their input features
      split, biases replicated)
  ep  the expert dimension (dim 0) of every stacked expert weight; GShard's
      expert axis is data-parallel for every other op, so it also splits
      every input's dim 0 (after any dp axis)
  pp  pipeline stages: the grid gets `loom.pipeline_axis`, and the weights
      of decoder layer i (named `layers.i.`) `loom.stage = i * pp / layers`;
      every other op takes the latest stage of its operands, and a weight
      outside the layers (embeddings, the final norm, LM head) its first
      reader's, as the cost model assigns them

Every other weight (embeddings, norms, routers, LM head) is annotated
replicated. Activations are left to sharding propagation, except around a
grouped `loom.moe_dispatch` / `loom.moe_combine` (bench/model_ir.py's MoE)
under an ep axis: the routed tokens are annotated group-split as produced and
expert-split for the expert matmuls, and the expert outputs the other way
round, GShard's two all-to-alls.

Weights are recognized by name, so the plans apply to every model family the
repository builds: GPT-2 (c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj), the
PyTorch zoo's MoE (q_proj/k_proj/v_proj, o_proj, moe.w1/w3/w2), bench/
model_ir.py (attn.q/k/v, attn.o, mlp.fc1/fc2, moe.experts.fc1/fc2) and bench/
gpt_plan.py (query_key_value, attention.dense, dense_h_to_4h, dense_4h_to_h).
Which dim of a 2-D weight holds the output features comes from the IR: a
weight used through `loom.transpose [1, 0]` is stored [out, in] (torch
Linear), one used directly [in, out].
"""
import argparse
import os
import re
import sys

# Roles by weight name (matched with re.search against the loom.weight name).
ROLES = [
    ("column", r"(attn\.c_attn|\.(q|k|v)_proj|attn\.(q|k|v)|query_key_value|"
               r"mlp\.c_fc|mlp\.fc1|dense_h_to_4h)\.(weight|bias)$"),
    ("row", r"(attn\.c_proj|\.o_proj|attn\.o|attention\.dense|mlp\.c_proj|"
            r"mlp\.fc2|dense_4h_to_h)\.(weight|bias)$"),
    ("expert", r"(moe\.w[0-9]+|experts\.fc[0-9]+\.weight)$"),
    ("position", r"(pos_embed|position_embeddings|wpe)\.weight$"),
]

VALUE = r"%[A-Za-z0-9_$.\-]+"
WEIGHT_RE = re.compile(r'^(\s*)(' + VALUE + r') = loom\.weight (\w+) "([^"]*)" from "([^"]*)"'
                       r'(\[\d+\])(.*): (tensor<[^>]*>)\s*$')
FUNC_RE = re.compile(r'^(\s*)func\.func (?:public |private )?@(\w+)\((.*)\)\s*(->.*)?\{\s*$')
ARG_RE = re.compile(r'(%[A-Za-z0-9_$.\-]+): (tensor<[^>]*>)( \{[^}]*\})?')


def role_of(name):
    for role, pattern in ROLES:
        if re.search(pattern, name):
            return role
    return None


def parse_plan(plan):
    if plan == "single":
        return []
    axes = []
    for part in plan.split("x"):
        m = re.fullmatch(r"(dp|sp|tp|ep|pp)(\d+)", part)
        if not m:
            sys.exit(f"annotate_plans.py: bad plan '{plan}' (axes like dp2, tp4, sp2, ep4, pp2 joined by x)")
        axes.append((m.group(1), int(m.group(2))))
    kinds = [k for k, _ in axes]
    if len(set(kinds)) != len(kinds):
        sys.exit(f"annotate_plans.py: plan '{plan}' repeats an axis kind")
    return axes


def split_attr(dims, rank):
    """dims: {tensor dim: [grid axes]} -> split_axes = [[...], ...] (trailing
    unsplit dims omitted; [[]] when nothing is split)."""
    if not dims:
        return "[[]]"
    last = max(dims)
    if last >= rank:
        raise ValueError(f"dim {last} of a rank-{rank} tensor")
    return "[" + ", ".join("[" + ", ".join(str(a) for a in dims.get(d, [])) + "]"
                           for d in range(last + 1)) + "]"


def tensor_shape(ty):
    body = ty[len("tensor<"):-1]
    return [int(d) for d in body.split("x")[:-1]]


def uses_added(lines, value):
    """True if `value` is an operand of a loom.binary (a position table added
    to the activations, rather than looked up by loom.embedding)."""
    pat = re.compile(r"loom\.binary \w+ (" + VALUE + r", )?" + re.escape(value) + r"(?![A-Za-z0-9_$.\-])")
    return any(pat.search(line) for line in lines)


def uses_transposed(lines, value):
    """True if `value` is used by a loom.transpose with permutation [1, 0]."""
    pat = re.compile(r"loom\.transpose " + re.escape(value) +
                     r" \{permutation = array<i64: 1, 0>\}")
    return any(pat.search(line) for line in lines)


def parts_dim(lines, value):
    """The dim counting the parts of a split fused projection's weight
    (loom-split-fused-projections reads part k as a slice of size 1 along
    it), or None."""
    pat = re.compile(r"loom\.slice " + re.escape(value) + r" \{.*sizes = array<i64: ([0-9, ]+)>")
    for line in lines:
        m = pat.search(line)
        if m:
            sizes = [int(x) for x in m.group(1).split(",")]
            return sizes.index(1) if 1 in sizes else None
    return None


def weight_dims(name, shape, transposed, added, axes, parts=None):
    """The dims of one weight each plan axis splits. `parts`: the dim
    counting a split fused projection's parts, whose per-part output dim
    (the heads) follows it."""
    role = role_of(name)
    dims = {}
    for index, (kind, size) in enumerate(axes):
        d = None
        if kind == "sp" and role == "position" and added:
            d = 0
        if kind == "tp" and role in ("column", "row"):
            if parts is not None and role == "column":
                d = parts + 1  # [P, N, K], [K, P, N] or a bias [P, N]: N
            elif len(shape) == 1:  # bias: split only a column-parallel layer's
                d = 0 if role == "column" else None
            elif len(shape) == 2:
                out_dim, in_dim = (0, 1) if transposed else (1, 0)
                d = out_dim if role == "column" else in_dim
        elif kind == "ep" and role == "expert" and len(shape) >= 2:
            d = 0
        if d is None:
            continue
        if shape[d] % size:
            sys.exit(f"annotate_plans.py: {name} dim {d} ({shape[d]}) does not divide by {kind}{size}")
        dims.setdefault(d, []).append(index)
    return dims


def input_dims(shape, axes, name):
    dims = {}
    for index, (kind, size) in enumerate(axes):
        d = {"dp": 0, "ep": 0, "sp": 1}.get(kind)
        if d is None:
            continue
        if d >= len(shape) or shape[d] % size:
            sys.exit(f"annotate_plans.py: input {name} {shape} dim {d} does not divide by {kind}{size}")
        dims.setdefault(d, []).append(index)
    return dims


DISPATCH_RE = re.compile(r"^(\s*)(" + VALUE + r") = loom\.moe_dispatch (" + VALUE + r"), .*"
                         r"capacity = (\d+) : i64, num_experts = (\d+) : i64\} : "
                         r"tensor<(\d+)x\d+x(\d+)x(\w+)>, ")
COMBINE_RE = re.compile(r"^(\s*)(" + VALUE + r") = loom\.moe_combine (" + VALUE + r"), .* : "
                        r"(tensor<\d+x\d+x\d+x\d+x\w+>), ")


def expert_exchange(line, renames, out, shard, ep, batch):
    """GShard's expert parallelism around a grouped MoE layer: the routed
    tokens leave `loom.moe_dispatch` split by group like the batch (over the
    `batch` axes, ep among them) and go to the expert matmuls split by expert
    over ep (an all-to-all); the expert outputs come back the same way before
    `loom.moe_combine`. Emits the line (renamed) and its annotations into
    `out` and returns None, or returns the line untouched."""
    by_group = {0: batch}
    by_expert = {0: [a for a in batch if a != ep], 1: [ep]}
    if not by_expert[0]:
        del by_expert[0]
    m = DISPATCH_RE.match(line)
    if m:
        indent, value, _, capacity, experts, groups, hidden, dt = m.groups()
        out.append(rename(line, renames))
        ty = f"tensor<{groups}x{experts}x{capacity}x{hidden}x{dt}>"
        own = shard(indent, value, ty, by_group, for_users=False)
        shard(indent, own, ty, by_expert)
        renames[value] = renames[own]
        return None
    m = COMBINE_RE.match(line)
    if m:
        indent, _, expert_out, ty = m.groups()
        source = renames.get(expert_out, expert_out)
        own = shard(indent, source, ty, by_expert, for_users=False)
        back = shard(indent, own, ty, by_group)
        out.append(rename(line, {**renames, expert_out: back}))
        return None
    return line


LAYER_WEIGHT_RE = re.compile(r'\s*' + VALUE + r' = loom\.weight \w+ "layers\.(\d+)\.')


def with_stage(attrs, stage):
    """A weight's attribute text (` ` or ` {...} `) with loom.stage added."""
    entry = f"loom.stage = {stage} : i64"
    if "{" not in attrs:
        return f" {{{entry}}} "
    return attrs.replace("{", "{" + entry + ", ", 1)


def rename(line, renames):
    if not renames:
        return line
    return re.sub(r"(%[A-Za-z0-9_$.\-]+)(?![A-Za-z0-9_$.\-])",
                  lambda m: renames.get(m.group(1), m.group(1)), line)


def strip_plan(lines):
    """Drops an existing plan: shard.grid and shard.sharding ops,
    shard.shard ops, whose results are replaced by their sources, and the
    ops' pipeline stages."""
    alias = {}
    kept = []
    for line in lines:
        if re.match(r"\s*shard\.grid ", line) or re.search(r"= shard\.sharding ", line):
            continue
        m = re.match(r"\s*(" + VALUE + r") = shard\.shard (" + VALUE + r") to ", line)
        if m:
            alias[m.group(1)] = alias.get(m.group(2), m.group(2))
            continue
        line = re.sub(r"(, )?loom\.stage = [0-9]+ : i64", "", line)
        line = line.replace("{, ", "{").replace(" {}", "")
        kept.append(rename(line, alias))
    return kept


def annotate(lines, axes, weights_dir, entry):
    grid = "x".join(str(size) for _, size in axes)
    out = []
    renames = {}
    counter = [0]
    in_entry = False
    grid_written = False

    def shard(indent, value, ty, dims, for_users=True):
        counter[0] += 1
        n = counter[0]
        out.append(f"{indent}%plan_s{n} = shard.sharding @plan split_axes = "
                   f"{split_attr(dims, len(tensor_shape(ty)))} : !shard.sharding")
        users = " annotate_for_users" if for_users else ""
        out.append(f"{indent}%plan_v{n} = shard.shard {value} to %plan_s{n}{users} : {ty}")
        renames[value] = f"%plan_v{n}"
        return f"%plan_v{n}"

    kinds = [k for k, _ in axes]
    ep = kinds.index("ep") if "ep" in kinds else None
    batch = [i for i, k in enumerate(kinds) if k in ("dp", "ep")]
    pp = kinds.index("pp") if "pp" in kinds else None
    stages = axes[pp][1] if pp is not None else 1
    layers = 1 + max([int(m.group(1)) for line in lines
                      for m in [LAYER_WEIGHT_RE.match(line)] if m], default=-1)
    if stages > 1 and layers % stages:
        sys.exit(f"annotate_plans.py: {layers} decoder layers do not divide into pp{stages} stages")

    for i, line in enumerate(lines):
        func = FUNC_RE.match(line)
        if func:
            in_entry = func.group(2) == entry
            renames = {}
            if axes and in_entry and not grid_written:
                names = ", ".join('"%s"' % k for k, _ in axes)
                pipeline = f", loom.pipeline_axis = {pp} : i64" if pp is not None else ""
                out.append(f"{func.group(1)}shard.grid @plan(shape = {grid}) "
                           f"{{loom.axis_names = [{names}]{pipeline}}}")
                grid_written = True
            out.append(line)
            if axes and in_entry:
                indent = func.group(1) + "  "
                for arg in ARG_RE.finditer(func.group(3)):
                    attrs = arg.group(3) or ""
                    if "loom.weight" in attrs:
                        continue
                    m = re.search(r'loom\.name = "([^"]*)"', attrs)
                    shape = tensor_shape(arg.group(2))
                    shard(indent, arg.group(1), arg.group(2),
                          input_dims(shape, axes, m.group(1) if m else arg.group(1)))
            continue
        weight = WEIGHT_RE.match(line)
        if weight:
            indent, value, role, name, path, offset, rest, ty = weight.groups()
            if not os.path.isabs(path):
                path = os.path.abspath(os.path.join(weights_dir, path))
            layer = re.match(r"layers\.(\d+)\.", name)
            if axes and in_entry and stages > 1 and layer:
                rest = with_stage(rest, int(layer.group(1)) * stages // layers)
            out.append(f'{indent}{value} = loom.weight {role} "{name}" from "{path}"{offset}{rest}: {ty}')
            if axes and in_entry:
                shape = tensor_shape(ty)
                dims = weight_dims(name, shape, uses_transposed(lines[i + 1:], value),
                                   uses_added(lines[i + 1:], value), axes,
                                   parts_dim(lines[i + 1:], value))
                shard(indent, value, ty, dims)
            continue
        if axes and in_entry and ep is not None:
            line = expert_exchange(line, renames, out, shard, ep, batch)
            if line is None:
                continue
        out.append(rename(line, renames) if in_entry else line)
    if axes and not grid_written:
        sys.exit(f"annotate_plans.py: no entry function @{entry}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("plans", nargs="+")
    ap.add_argument("-o", "--out-dir", required=True)
    ap.add_argument("--name", help="output file stem (default: MODEL's stem)")
    ap.add_argument("--weights-dir", help="base of relative weight files (default: MODEL's directory)")
    ap.add_argument("--entry", default="main")
    args = ap.parse_args()
    with open(args.model) as f:
        lines = strip_plan(f.read().splitlines())
    name = args.name or os.path.basename(args.model).split(".")[0]
    weights_dir = args.weights_dir or os.path.dirname(os.path.abspath(args.model))
    os.makedirs(args.out_dir, exist_ok=True)
    for plan in args.plans:
        text = annotate(lines, parse_plan(plan), weights_dir, args.entry)
        with open(os.path.join(args.out_dir, f"{name}-{plan}.mlir"), "w") as f:
            f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
