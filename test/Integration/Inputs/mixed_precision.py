#!/usr/bin/env python3
# test/Integration/Inputs/mixed_precision.py - the optimizer step of 16-bit
# weights against PyTorch's mixed-precision recipe.
"""Usage: mixed_precision.py OUTDIR [--only NAME,...]

For every case, in OUTDIR/NAME: writes a small model in loom ops whose
weights, inputs and outputs are bfloat16 (or float16), then

  loom-opt model.mlir --loom-autodiff
           --loom-optimizer-step="<the case's options> keep-gradients=true"
  loom compile step.mlir -o art -O 0
  loom-run art --inputs x.pb,cot.pb --steps N --warmup 0

so the outputs are the N-th call's, computed from the weights the N - 1
updates before it wrote back. PyTorch trains the same model N steps the
mixed-precision way: the forward and backward in the 16-bit type, a float32
master copy of each weight updated by torch.optim from the gradient widened
(micro-batched: the micro-batches' gradients summed in float32), and the
16-bit weight rounded from it. Every output must agree within `ulps` units
in the last place of the 16-bit type. PyTorch's plain 16-bit training of the
same model (the optimizer on the 16-bit weights, its state in their type) is
compared too, and must not agree where the case says so: the small steps of
those cases are lost in 16-bit weights but kept by a master copy, so the
test would fail without one. Prints one line per case and "<n> of <m> cases
match"; exits 1 if any does not. loom-opt, loom and loom-run are found on
PATH.
"""
import argparse
import functools
import os
import subprocess
import sys

import numpy as np
import torch
from onnx import TensorProto, helper

from optimizer_cases import run_cases

DTYPES = {"bf16": (torch.bfloat16, TensorProto.BFLOAT16),
          "f16": (torch.float16, TensorProto.FLOAT16)}


def tensor(shape, elt):
    return f"tensor<{'x'.join(map(str, shape))}x{elt}>"


def elementwise(elt, micro_batches=1, dp=1):
    """y = x * w + b, all [4, 8]: the forward and the gradients are rounded
    once in either program. (Offsets are `@name@`.)"""
    T = lambda shape: tensor(shape, elt)
    mlir = f"""func.func @main(%x: {T([4, 8])} {{loom.name = "x"}}) -> ({T([4, 8])} {{loom.name = "y"}}) {{
  %w = loom.weight parameter "w" from "model.bin"[@w@] : {T([4, 8])}
  %b = loom.weight parameter "b" from "model.bin"[@b@] : {T([4, 8])}
  %p = loom.binary mul %x, %w : {T([4, 8])}, {T([4, 8])}
  %y = loom.binary add %p, %b : {T([4, 8])}, {T([4, 8])}
  return %y : {T([4, 8])}
}}
"""
    return mlir, {"w": (4, 8), "b": (4, 8)}, (4, 8), (4, 8), lambda x, p: x * p["w"] + p["b"]


def broadcast(elt, micro_batches=1, dp=1):
    """y = x * w + b, x [8, 8] and w, b [8]: the batch in `micro_batches`
    calls, split over `dp` ranks. Each gradient sums rows (two a call on
    each rank), then micro-batches (and ranks) in its float32 sum."""
    T = lambda shape: tensor(shape, elt)
    rows = 8 // micro_batches
    batch = " loom.batch_dim = 0 : i64," if micro_batches > 1 else ""
    attrs = (f" attributes {{loom.micro_batches = {micro_batches} : i64}}"
             if micro_batches > 1 else "")
    grid, x = "", "%x"
    if dp > 1:
        grid = f"shard.grid @g(shape = {dp})\n"
        x = "%xs"
    mlir = f"""{grid}func.func @main(%x: {T([rows, 8])} {{{batch} loom.name = "x"}}) -> ({T([rows, 8])} {{{batch} loom.name = "y"}}){attrs} {{
  %w = loom.weight parameter "w" from "model.bin"[@w@] : {T([8])}
  %b = loom.weight parameter "b" from "model.bin"[@b@] : {T([8])}
"""
    if dp > 1:
        mlir += f"""  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : {T([rows, 8])}
"""
    mlir += f"""  %p = loom.binary mul {x}, %w : {T([rows, 8])}, {T([8])}
  %y = loom.binary add %p, %b : {T([rows, 8])}, {T([8])}
  return %y : {T([rows, 8])}
}}
"""
    return mlir, {"w": (8,), "b": (8,)}, (8, 8), (8, 8), lambda x, p: x * p["w"] + p["b"]


def matmul16(a, b):
    """a @ b of 16-bit tensors accumulated in float32 and rounded once, as
    Loom's lowering and PyTorch's bf16 matmul do (PyTorch has no float16
    matmul on CPUs)."""
    return (a.float() @ b.float()).to(a.dtype)


class UnroundedWeightGradient(torch.autograd.Function):
    """a @ w, whose backward adds w's gradient into `sums[name]` in
    float32, unrounded (as `loom compile --allow-excess-precision` sums a
    16-bit weight's gradient straight from its matmul's accumulator), and
    gives autograd none for w."""

    @staticmethod
    def forward(ctx, a, w, sums, name):
        ctx.save_for_backward(a, w)
        ctx.sums, ctx.name = sums, name
        return matmul16(a, w)

    @staticmethod
    def backward(ctx, g):
        a, w = ctx.saved_tensors
        ctx.sums[ctx.name] += a.float().T @ g.float()
        return matmul16(g, w.T), None, None, None


def mlp(elt, micro_batches=1, dp=1, width=128):
    """y = relu(x @ w0) @ w1, x [16, width] (in `micro_batches` calls), w0
    and w1 [width, width]: every product sums `width` terms (the weight
    gradients 16), which the 16-bit matmuls accumulate in float32 and round
    once, as PyTorch's do. The reference takes `sums` to add the weight
    gradients into unrounded."""
    T = lambda shape: tensor(shape, elt)
    rows, w = 16 // micro_batches, width
    batch = " loom.batch_dim = 0 : i64," if micro_batches > 1 else ""
    attrs = (f" attributes {{loom.micro_batches = {micro_batches} : i64}}"
             if micro_batches > 1 else "")
    mlir = f"""func.func @main(%x: {T([rows, w])} {{{batch} loom.name = "x"}}) -> ({T([rows, w])} {{{batch} loom.name = "y"}}){attrs} {{
  %w0 = loom.weight parameter "w0" from "model.bin"[@w0@] : {T([w, w])}
  %w1 = loom.weight parameter "w1" from "model.bin"[@w1@] : {T([w, w])}
  %h = loom.matmul %x, %w0 : {T([rows, w])}, {T([w, w])}
  %r = loom.unary relu %h : {T([rows, w])}
  %y = loom.matmul %r, %w1 : {T([rows, w])}, {T([w, w])}
  return %y : {T([rows, w])}
}}
"""

    def forward(x, p, sums=None):
        mm = ((lambda a, n: matmul16(a, p[n])) if sums is None else
              (lambda a, n: UnroundedWeightGradient.apply(a, p[n], sums, n)))
        h = mm(x, "w0")
        # (relu by `where`: PyTorch has no float16 clamp on CPUs.)
        return mm(torch.where(h > 0, h, torch.zeros_like(h)), "w1")

    return mlir, {"w0": (w, w), "w1": (w, w)}, (16, w), (16, w), forward


# name: (model, element type, loom options, torch optimizer and options,
#        steps, micro-batches, data-parallel ranks, ulps allowed, whether
#        plain 16-bit training must differ[, extras]). The extras: `place`,
#        --loom-place-memory's options; `compile`, more `loom compile`
#        flags; `scale`, what x and the cotangent are multiplied by. A kept gradient of several
#        micro-batches is their float32 sum rounded once (loom-run sums
#        them so); the data-parallel cases keep none, since a kept gradient
#        is reduced every call, and they test the once-a-step reduction.
ADAMW = ("kind=adamw lr=0.001 weight-decay=0.01", ("adamw", dict(lr=0.001, weight_decay=0.01)))
CASES = {
    "adamw_small_steps_bf16": (elementwise, "bf16", ADAMW[0] + " keep-gradients=true", ADAMW[1],
                               16, 1, 1, 1, True),
    "sgd_momentum_small_steps_f16": (elementwise, "f16", "kind=sgd lr=0.0005 momentum=0.9 keep-gradients=true",
                                     ("sgd", dict(lr=0.0005, momentum=0.9)), 12, 1, 1, 1, True),
    "adamw_mlp_bf16": (mlp, "bf16", ADAMW[0] + " keep-gradients=true", ADAMW[1],
                       8, 1, 1, 1, True),
    # 512 wide: each kept 512 x 512 weight gradient's float32 accumulator
    # (1 MiB) is rounded 32 rows at a time (loom-tile-narrow-contractions).
    "adamw_mlp512_bf16": (functools.partial(mlp, width=512), "bf16",
                          ADAMW[0] + " keep-gradients=true", ADAMW[1], 4, 1, 1, 1, True),
    "adamw_micro_batches_bf16": (broadcast, "bf16", ADAMW[0] + " keep-gradients=true", ADAMW[1],
                                 16, 2, 1, 1, True),
    "adamw_dp_micro_batches_bf16": (broadcast, "bf16", ADAMW[0], ADAMW[1], 16, 2, 2, 1, True),
    # The optimizer on the host under ZeRO-1 (placed in 1.6 KB a device):
    # the update function reduce-scatters each float32 sum and sends its
    # shard down rounded to bf16 for the CPU's update.
    "adamw_dp_micro_batches_host_zero1_bf16": (
        broadcast, "bf16", ADAMW[0], ADAMW[1], 16, 2, 2, 1, True,
        dict(place="cluster=dgx-a100-80g mode=train memory-fraction=2e-8 "
             "parameters=device optimizer-split=false zero=1")),
    # Parameters streamed from the host over two micro-batches: each
    # micro-batch's bf16 gradients go down and the host sums them in
    # float32, which the CPU's update reads unrounded (this case's
    # tolerance does not tell that from a rounded sum).
    "adamw_micro_batches_streamed_bf16": (
        broadcast, "bf16", ADAMW[0], ADAMW[1], 16, 2, 1, 1, True,
        dict(place="cluster=dgx-a100-80g mode=train memory-fraction=1e-4 "
             "parameters=host optimizer-split=false")),
    # Compiled with --allow-excess-precision: each micro-batch's weight
    # gradients go from their matmuls' float32 accumulators into the sums
    # unrounded (the reference sums them so too). x and the cotangent are
    # scaled so that about half the weight gradients exceed float16's
    # 65504 (47% of the sums, up to 5.5e5 in the first step): rounded
    # to float16 they would be infinite (the step compiled without the
    # flag, like plain 16-bit training, ends in NaN), while their float32
    # sums are finite, the reason Megatron keeps `main_grad` in float32.
    "sgd_mlp_micro_batches_excess_precision_f16": (
        mlp, "f16", "kind=sgd lr=1e-7 momentum=0.9", ("sgd", dict(lr=1e-7, momentum=0.9)),
        4, 2, 1, 1, True,
        dict(compile=["--allow-excess-precision"], scale=64)),
}


def to_proto(name, t, code):
    return helper.make_tensor(name, code, list(t.shape),
                              t.contiguous().view(torch.int16).numpy().tobytes(), raw=True)


def from_proto(path):
    p = TensorProto()
    with open(path, "rb") as f:
        p.ParseFromString(f.read())
    bits = np.frombuffer(p.raw_data, dtype=np.uint16).reshape(tuple(p.dims))
    if p.data_type == TensorProto.BFLOAT16:
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if p.data_type == TensorProto.FLOAT16:
        return bits.view(np.float16).astype(np.float32)
    raise ValueError(f"{path}: data type {p.data_type} is not 16-bit")


def train(forward, weights, x, cot, kind, options, steps, micro_batches, master,
          rounded_sums=False, unrounded_gradients=False):
    """The outputs of the `steps`-th step: y (over its micro-batches) and
    each weight's gradient (over its micro-batches: the sum, rounded to the
    weight's type). With `rounded_sums` the float32 sums are rounded to the
    weights' type before the update (as they go down to a CPU optimizer);
    with `unrounded_gradients` the forward adds each micro-batch's weight
    gradients into them unrounded."""
    params = {n: w.clone().requires_grad_() for n, w in weights.items()}
    copies = ({n: w.float().clone().requires_grad_() for n, w in weights.items()}
              if master else params)
    make = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind]
    optimizer = make(list(copies.values()), foreach=False, **options)
    rows = x.shape[0] // micro_batches
    for step in range(steps):
        if step:
            if master:
                for n in params:
                    copies[n].grad = (sums[n].to(params[n].dtype).float()
                                      if rounded_sums else sums[n])
            optimizer.step()
            if master:
                with torch.no_grad():
                    for n in params:
                        params[n].copy_(copies[n])
        sums = {n: torch.zeros_like(copies[n]) for n in params}
        ys = []
        for k in range(micro_batches):
            for p in params.values():
                p.grad = None
            xk = x[k * rows:(k + 1) * rows]
            y = forward(xk, params, sums) if unrounded_gradients else forward(xk, params)
            y.backward(cot[k * rows:(k + 1) * rows])
            ys.append(y.detach())
            if not unrounded_gradients:
                for n, p in params.items():
                    sums[n] += p.grad.to(sums[n].dtype)
        if not master:
            for n, p in params.items():
                p.grad = sums[n]
    out = {"y": torch.cat(ys).float().numpy()}
    out.update({n + ".grad": sums[n].to(params[n].dtype).float().numpy() for n in params})
    return out


def differs(got, want, ulp, ulps):
    """Where `got` is more than `ulps` units in the last place from `want`
    (of the tensor's mean magnitude where an element is smaller: a sum
    rounded differently is off by units of its terms, not of itself)."""
    scale = np.maximum(np.abs(want), np.mean(np.abs(want)))
    unit = 2.0 ** (np.floor(np.log2(scale)) - ulp)
    # (Written so that a NaN differs, and an infinity differs from any
    # other value.)
    return ~((got == want) | (np.abs(got - want) <= ulps * unit))


def run_case(outdir, name, case):
    model, elt, flags, (kind, options), steps, micro, dp, ulps, must_differ = case[:9]
    extras = case[9] if len(case) > 9 else {}
    place = extras.get("place")
    compile_flags = extras.get("compile", [])
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    dtype, code = DTYPES[elt]
    mantissa = 7 if elt == "bf16" else 10
    mlir, shapes, x_shape, y_shape, forward = model(elt, micro, dp)
    g = torch.Generator().manual_seed(5)
    weights, offsets, blob = {}, {}, bytearray()
    for n, shape in shapes.items():
        # Away from zero, where the 16-bit spacing is coarse against the
        # small steps.
        w = (0.5 + 0.5 * torch.rand(shape, generator=g)) * torch.sign(torch.randn(shape, generator=g))
        weights[n] = w.to(dtype)
        offsets[n] = len(blob)
        blob += weights[n].view(torch.int16).numpy().tobytes()
    with open(os.path.join(d, "model.bin"), "wb") as f:
        f.write(bytes(blob))
    with open(os.path.join(d, "model.mlir"), "w") as f:
        for n, at in offsets.items():
            mlir = mlir.replace(f"@{n}@", str(at))
        f.write(mlir)
    scale = extras.get("scale", 1)
    x = (scale * torch.randn(x_shape, generator=g)).to(dtype)
    cot = (scale * torch.randn(y_shape, generator=g)).to(dtype)
    for n, t in (("x", x), ("cot", cot)):
        with open(os.path.join(d, n + ".pb"), "wb") as f:
            f.write(to_proto(n, t, code).SerializeToString())
    names = ["y"] + ([n + ".grad" for n in shapes] if "keep-gradients=true" in flags else [])
    # (Open MPI's session directory in the case's own directory, not lit's
    # shared TMPDIR, where another test's job ending can remove it under us.)
    session = os.path.join(os.path.abspath(d), "ompi")
    os.makedirs(session, exist_ok=True)
    mpirun = (["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "orte_tmpdir_base",
               session, "-np", str(dp)] if dp > 1 else [])
    commands = [["loom-opt", "model.mlir", f"--loom-place-memory={place} table=none",
                 "-o", "model.mlir"]] if place else []
    commands += [
        ["loom-opt", "model.mlir", "--loom-autodiff",
         f"--loom-optimizer-step={flags}", "-o", "step.mlir"],
        ["loom", "compile", "step.mlir", "-o", "art", "-O", "0"] + compile_flags,
        mpirun + ["loom-run", "art", "--inputs", "x.pb,cot.pb", "--steps", str(steps),
                  "--warmup", "0", "--quiet", "--outputs", ",".join(n + ".pb" for n in names)],
    ]
    for cmd in commands:
        p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            return f"{cmd[0]} failed (exit {p.returncode}): {p.stdout.strip()}", ""
    # (A device's sums go down rounded to the weight's type for the CPU's
    # update; a streamed weight's the host keeps.)
    want = train(forward, weights, x, cot, kind, dict(options), steps, micro, master=True,
                 rounded_sums=place is not None and micro > 1
                 and "parameters=host" not in place,
                 unrounded_gradients="--allow-excess-precision" in compile_flags)
    plain = train(forward, weights, x, cot, kind, dict(options), steps, micro, master=False)
    plain_off = 0
    for n in names:
        got = from_proto(os.path.join(d, n + ".pb"))
        bad = differs(got, want[n], mantissa, ulps)
        if bad.any():
            at = np.unravel_index(np.argmax(bad), bad.shape)
            return (f"{n} differs at {list(at)} ({int(bad.sum())} of {bad.size}): "
                    f"{got[at]!r} vs {want[n][at]!r}"), ""
        plain_off += int(differs(plain[n], want[n], mantissa, ulps).sum())
    if must_differ and not plain_off:
        return "plain 16-bit training agrees as well: the case cannot tell a master copy", ""
    return None, f" (plain 16-bit training: {plain_off} elements off)" if must_differ else ""


def main():
    return run_cases(CASES, lambda args, name: run_case(args.outdir, name, CASES[name]),
                     argparse.ArgumentParser())


if __name__ == "__main__":
    sys.exit(main())
