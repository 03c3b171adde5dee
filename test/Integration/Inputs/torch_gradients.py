#!/usr/bin/env python3
# test/Integration/Inputs/torch_gradients.py - PyTorch reference for a zoo model's backward.
"""Usage: torch_gradients.py --models NAME [--config C] [--seed S] [--batch B] [--seq T]
                            --inputs M.inputs.npz [--expected M.expected.npy]
                            (--cotangent COT.npy | --write-cotangent COT.npy) --out DIR

Builds zoo model NAME (tools/export/models.py) with config C and weight seed S
exactly as tools/export/make_models.py does (models.build, eval mode, so dropout
is off), runs it on the inputs make_models.py wrote (<m>.inputs.npz, passed by
forward() argument name, so their order is forward()'s), and computes the
vector-Jacobian product of the output with a cotangent: loss = (out * cot).sum(),
backward. --write-cotangent draws the cotangent (float32 standard normal of the
output's shape, numpy.random.RandomState(7).standard_normal) and writes it;
--cotangent reads one. Writes into DIR:

  output.npy                 the forward output (float32)
  <param name>.grad.npy      for every model.named_parameters() entry (tied
                             parameters once, as torch lists them; buffers get
                             none): d loss / d param, float32, the param's shape

and prints one line "<param name> [d0,d1,...]" per parameter on stdout.
With --steps N (and --optimizer sgd|adam|adamw, --lr, --weight-decay,
--momentum) it trains N steps on the same inputs and cotangent with that
torch.optim optimizer and writes the N-th step's output and gradients,
taken before that step's update: what a step compiled with
--loom-optimizer-step=... keep-gradients=true returns on its N-th call.
--batch/--seq only check the inputs' shapes against the config's example
inputs with those overrides. With --expected, the output must match it within
rtol 1e-4, atol 1e-5 (a guard against building another model than the ONNX
export); exits 1 naming the worst element otherwise.
"""
import argparse
import inspect
import os
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
EXPORT = os.path.join(ROOT, "tools", "export")
RTOL, ATOL = 1e-4, 1e-5
COTANGENT_SEED = 7


def fail(msg):
    print(f"torch_gradients.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def load_npy(flag, path):
    """One array from a .npy file, or exit 1 naming the flag."""
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        fail(f"cannot read {flag} {path}: {e}")
    if not isinstance(arr, np.ndarray):
        fail(f"{flag} {path} is an .npz archive, not one .npy array")
    return arr


def load_inputs(path, model, zoo, args):
    """The npz's arrays as tensors keyed by forward() argument name, in forward()'s order."""
    import torch
    try:
        npz = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        fail(f"cannot read --inputs {path}: {e}")
    if not isinstance(npz, np.lib.npyio.NpzFile):
        fail(f"--inputs {path} is one .npy array, not the <m>.inputs.npz archive")
    with npz:
        arrays = {k: npz[k] for k in npz.files}
    if not arrays:
        fail(f"--inputs {path} holds no arrays")
    params = list(inspect.signature(model.forward).parameters)
    unknown = [k for k in arrays if k not in params]
    if unknown:
        fail(f"--inputs {path} has {unknown}, which {args.models}.forward{tuple(params)} "
             f"does not take")
    names = [p for p in params if p in arrays]
    if names != params[:len(names)]:
        fail(f"--inputs {path} has {names}, not a prefix of forward{tuple(params)} "
             f"(make_models.py exports a prefix)")
    if args.batch is not None or args.seq is not None:
        want = zoo.example_inputs(args.models, args.config, batch=args.batch, seq=args.seq)
        for k in names:
            if k not in want or tuple(want[k].shape) != arrays[k].shape:
                got_shape = list(arrays[k].shape)
                want_shape = list(want[k].shape) if k in want else None
                fail(f"input {k} has shape {got_shape}, but --batch/--seq give {want_shape}")
    return {k: torch.from_numpy(np.ascontiguousarray(arrays[k])) for k in names}


def main():
    parser = argparse.ArgumentParser(
        description="PyTorch vector-Jacobian product of a zoo model's parameters.")
    parser.add_argument("--models", required=True, help="one zoo model name (as make_models.py)")
    parser.add_argument("--config", default="small", help="zoo config (default small)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    parser.add_argument("--batch", type=int, help="check the inputs' batch size")
    parser.add_argument("--seq", type=int, help="check the inputs' sequence length")
    parser.add_argument("--inputs", required=True, help="<m>.inputs.npz from make_models.py")
    parser.add_argument("--expected", help="<m>.expected.npy: the output must match it")
    cot = parser.add_mutually_exclusive_group(required=True)
    cot.add_argument("--cotangent", help="read the output's cotangent from this .npy")
    cot.add_argument("--write-cotangent", help="draw a cotangent (seed 7), write it here")
    parser.add_argument("--out", required=True, help="directory for output.npy, *.grad.npy")
    parser.add_argument("--steps", type=int, default=1,
                        help="training steps; the last one's output and gradients are written")
    parser.add_argument("--optimizer", choices=("sgd", "adam", "adamw"),
                        help="the optimizer between steps (needed with --steps > 1)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--momentum", type=float, default=0.0)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.steps > 1 and args.optimizer is None:
        parser.error("--steps > 1 needs --optimizer")

    sys.path.insert(0, EXPORT)
    try:
        import models as zoo
        import torch
    except ImportError as e:
        fail(f"cannot import the model zoo from {EXPORT}: {e}")
    if "," in args.models:
        parser.error(f"--models takes exactly one model, not {args.models!r}")
    if args.models not in zoo.ZOO:
        parser.error(f"unknown model {args.models!r} (one of: {', '.join(zoo.ZOO)})")
    if args.config not in zoo.ZOO[args.models].configs:
        parser.error(f"model {args.models!r} has no config {args.config!r} "
                     f"(has: {', '.join(zoo.ZOO[args.models].configs)})")
    for flag in ("batch", "seq"):
        if getattr(args, flag) is not None and getattr(args, flag) <= 0:
            parser.error(f"--{flag} must be positive")
    if not os.path.isfile(args.inputs):
        parser.error(f"--inputs {args.inputs}: no such file")
    for flag in ("expected", "cotangent"):
        path = getattr(args, flag)
        if path is not None and not os.path.isfile(path):
            parser.error(f"--{flag} {path}: no such file")

    # The same construction as make_models.make_one: random weights from --seed, eval mode.
    model = zoo.build(args.models, args.config, seed=args.seed)
    model.eval()
    inputs = load_inputs(args.inputs, model, zoo, args)

    try:
        out = model(**inputs)
    except (RuntimeError, IndexError, ValueError) as e:
        fail(f"{args.models} ({args.config}) fails on --inputs {args.inputs}: {e}")
    if not isinstance(out, torch.Tensor):
        fail(f"{args.models} returns {type(out).__name__}, not one tensor; "
             f"only single-output models are supported")
    if not out.is_floating_point():
        fail(f"{args.models}'s output is {out.dtype}, not floating point")
    out_np = out.detach().float().numpy()

    if args.expected is not None:
        ref = load_npy("--expected", args.expected)
        if ref.shape != out_np.shape:
            fail(f"output shape {list(out_np.shape)} differs from --expected {args.expected} "
                 f"{list(ref.shape)}: a different model or inputs than the export")
        diff = np.abs(out_np.astype(np.float64) - ref.astype(np.float64))
        bound = ATOL + RTOL * np.abs(ref.astype(np.float64))
        if not np.all(diff <= bound):
            worst = np.unravel_index(np.argmax(diff - bound), diff.shape)
            fail(f"output differs from --expected {args.expected} at {list(worst)}: "
                 f"{out_np[worst]} vs {ref[worst]} ({np.count_nonzero(diff > bound)} of "
                 f"{diff.size} elements beyond rtol {RTOL}, atol {ATOL}); this is not the "
                 f"model make_models.py exported (check --models/--config/--seed)")
        print(f"output matches {args.expected} (max abs error {diff.max():.3g})",
              file=sys.stderr)

    if args.cotangent is not None:
        cot_np = load_npy("--cotangent", args.cotangent)
        if cot_np.shape != out_np.shape:
            fail(f"--cotangent {args.cotangent} has shape {list(cot_np.shape)}, the output "
                 f"{list(out_np.shape)}")
        if not np.issubdtype(cot_np.dtype, np.floating):
            fail(f"--cotangent {args.cotangent} is {cot_np.dtype}, not floating point")
        cot_np = cot_np.astype(np.float32)
    else:
        rng = np.random.RandomState(COTANGENT_SEED)
        cot_np = rng.standard_normal(out_np.shape).astype(np.float32)
        with open(args.write_cotangent, "wb") as f:  # np.save(path) would append .npy
            np.save(f, cot_np)

    os.makedirs(args.out, exist_ok=True)
    params = list(model.named_parameters())  # tied parameters once
    optimizer = None
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD([p for _, p in params], lr=args.lr,
                                    momentum=args.momentum, weight_decay=args.weight_decay)
    elif args.optimizer is not None:
        kind = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
        optimizer = kind([p for _, p in params], lr=args.lr, weight_decay=args.weight_decay)
    cot = torch.from_numpy(cot_np).to(out.dtype)
    for step in range(args.steps):
        if step > 0:
            optimizer.step()
            out = model(**inputs)
            out_np = out.detach().float().numpy()
        for _, p in params:
            p.grad = None
        (out * cot).sum().backward()

    np.save(os.path.join(args.out, "output.npy"), out_np)
    for name, p in params:
        if p.grad is None:  # does not reach the output: its cotangent is zero
            print(f"note: {name} does not affect the output; writing zeros", file=sys.stderr)
            grad = np.zeros(tuple(p.shape), np.float32)
        else:
            grad = p.grad.detach().float().numpy()
        np.save(os.path.join(args.out, f"{name}.grad.npy"), grad)
        print(f"{name} [{','.join(str(d) for d in p.shape)}]")
    print(f"wrote output.npy and {len(params)} gradients to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
