# tools/export/make_models.py — writes the zoo's models as ONNX, loom-trace, reference data.
"""For each requested zoo model (tools/export/models.py) this writes, into --out:

  <m>.onnx                 torch.onnx.export, opset 17, static shapes, eval mode, BatchNorm kept,
                           static shape arithmetic folded (tools/export/onnx_fold.py)
  <m>.trace.json, <m>.bin  loom-trace graph and weights (tools/export/trace_export.py)
  <m>.reference.json       what torch reports: parameter/buffer counts, forward FLOPs per sample
                           (2 x MACs of contraction ops, counted on the fx graph), input and
                           output shapes, the ONNX op types and the trace op counts
  <m>.inputs.npz           example inputs keyed by input name; also <m>.input.<name>.npy each
  <m>.expected.npy         torch's output for those inputs (<m>.expected.<name>.npy if several)

Weights are random from a fixed seed, so every run writes the same numbers. Usage:

  /usr/bin/python3 tools/export/make_models.py --out DIR [--models gpt2,bert,...]
      [--config small|standard|tiny] [--formats onnx,trace] [--batch B] [--seq T] [--check]
"""

import argparse
import collections
import inspect
import io
import json
import os
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models as zoo  # noqa: E402
import trace_export as te  # noqa: E402

ONNX_OPSET = 17


def _np(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _tensor_info(name: str, t: torch.Tensor) -> dict:
    return {"name": name, "shape": list(t.shape), "dtype": te.DTYPES[t.dtype]}


def export_onnx(model, inputs: dict, output_names, path: str, fold: bool = True) -> list:
    """torch.onnx.export with static shapes. TrainingMode.PRESERVE on a model in eval mode
    keeps BatchNormalization nodes (TrainingMode.EVAL folds them into the convolutions).
    With `fold`, torch's constant folding runs and onnx_fold.py then removes the static shape
    arithmetic the exporter leaves behind. Without it the graph is the rawest export: no
    constant folding at all, so parameters keep their names and tied weights appear once (torch's
    folding would write a transposed copy of a tied LM head as a second initializer), and every
    shape computation is left for the importer to fold. Returns the sorted ONNX op types."""
    import onnx
    import onnx_fold
    params = list(inspect.signature(model.forward).parameters)
    names = list(inputs)
    if names != params[:len(names)]:
        raise SystemExit(f"inputs {names} are not a prefix of forward{tuple(params)}")
    kwargs = dict(input_names=names, output_names=list(output_names), opset_version=ONNX_OPSET,
                  do_constant_folding=fold, training=torch.onnx.TrainingMode.PRESERVE,
                  export_params=True)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False       # torch >= 2.5: the TorchScript exporter
    buf = io.BytesIO()
    with warnings.catch_warnings():   # not no_grad: it would enable nn.MultiheadAttention's
        # fused fast path (aten::_native_multi_head_attention), which has no ONNX export
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs.values()), buf, **kwargs)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    if fold:
        proto = onnx_fold.fold(proto)
    onnx.save(proto, path)
    return sorted({n.op_type for n in proto.graph.node})


def _pretty(v, indent=0) -> str:
    """JSON with nested objects indented and every short object or list on one line."""
    flat = json.dumps(v)
    scalars = isinstance(v, list) and not any(isinstance(e, (dict, list)) for e in v)
    if scalars or len(flat) + indent <= 96 or not isinstance(v, (dict, list)):
        return flat
    pad = " " * (indent + 1)
    if isinstance(v, dict):
        items = [f"{pad}{json.dumps(k)}: {_pretty(e, indent + 1)}" for k, e in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _pretty(e, indent + 1) for e in v]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def make_one(name: str, config: str, out_dir: str, formats, batch=None, seq=None, seed=0,
             basename=None, check=False, fold=True) -> dict:
    spec = zoo.ZOO[name]
    base = basename or name
    timings = {}
    t0 = time.perf_counter()
    model = zoo.build(name, config, seed=seed)
    inputs = zoo.example_inputs(name, config, batch=batch, seq=seq)
    timings["build_s"] = time.perf_counter() - t0

    with torch.no_grad():
        result = model(**inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    out_names = spec.output_names

    np.savez(os.path.join(out_dir, f"{base}.inputs.npz"), **{k: _np(v) for k, v in inputs.items()})
    for k, v in inputs.items():
        np.save(os.path.join(out_dir, f"{base}.input.{k}.npy"), _np(v))
    if len(outputs) == 1:
        np.save(os.path.join(out_dir, f"{base}.expected.npy"), _np(outputs[0]))
    else:
        for k, v in zip(out_names, outputs):
            np.save(os.path.join(out_dir, f"{base}.expected.{k}.npy"), _np(v))

    t0 = time.perf_counter()
    traced = te.trace(model, inputs)
    timings["fx_trace_s"] = time.perf_counter() - t0
    B = next(iter(inputs.values())).shape[0]
    flops = te.fx_flops(traced)

    ref = {
        "model": name,
        "config": config,
        "producer": f"torch {torch.__version__}",
        "seed": seed,
        "batch": B,
        "parameters": sum(p.numel() for p in model.parameters()),
        "parameter_tensors": sum(1 for _ in model.parameters()),
        "buffers": sum(1 for _ in model.buffers()),
        "buffer_elements": sum(b.numel() for b in model.buffers()),
        "forward_flops": flops,
        "forward_flops_per_sample": flops // B,
        "inputs": [_tensor_info(k, v) for k, v in inputs.items()],
        "outputs": [_tensor_info(k, v) for k, v in zip(out_names, outputs)],
    }

    if "onnx" in formats:
        t0 = time.perf_counter()
        ops = export_onnx(model, inputs, out_names, os.path.join(out_dir, f"{base}.onnx"), fold)
        timings["onnx_s"] = time.perf_counter() - t0
        ref["onnx"] = {"file": f"{base}.onnx", "opset": ONNX_OPSET, "folded": fold,
                       "op_types": ops}
    if "trace" in formats:
        t0 = time.perf_counter()
        doc = te.export_trace(model, inputs, os.path.join(out_dir, f"{base}.trace.json"),
                              model_name=name, output_names=out_names, traced=traced)
        timings["trace_s"] = time.perf_counter() - t0 + timings["fx_trace_s"]
        trace_flops = te.trace_flops(doc)
        if trace_flops != flops:
            print(f"warning: {name}: FLOPs on the trace ({trace_flops}) differ from the fx "
                  f"count ({flops})", file=sys.stderr)
        ref["trace"] = {"file": f"{base}.trace.json", "nodes": len(doc["nodes"]),
                        "ops": dict(sorted(collections.Counter(
                            n["op"] for n in doc["nodes"]).items()))}
        if check:
            import trace_eval
            got = trace_eval.run(doc, out_dir, inputs)
            for k, want in zip(doc["outputs"], outputs):
                err = (got[k].double() - want.double()).abs().max().item()
                ref.setdefault("check", {})[k] = {"trace_eval_max_abs_err": err}
                if not err <= 1e-3 * max(1.0, want.abs().max().item()):
                    raise SystemExit(f"{name}: trace_eval output {k} differs by {err}")

    with open(os.path.join(out_dir, f"{base}.reference.json"), "w") as f:
        f.write(_pretty(ref) + "\n")
    ref["timings"] = timings
    return ref


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--models", default=",".join(zoo.ZOO),
                    help=f"comma-separated subset of: {', '.join(zoo.ZOO)}")
    ap.add_argument("--config", default="small", help="small (default), standard or tiny")
    ap.add_argument("--formats", default="onnx,trace", help="comma-separated: onnx, trace")
    ap.add_argument("--batch", type=int, help="override the config's batch size")
    ap.add_argument("--seq", type=int, help="override the config's sequence length")
    ap.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    ap.add_argument("--name-with-config", action="store_true",
                    help="name files <model>-<config>.* instead of <model>.*")
    ap.add_argument("--no-fold", action="store_true",
                    help="raw export: torch constant folding off and no onnx_fold.py, so the importer "
                         "folds every shape computation itself")
    ap.add_argument("--check", action="store_true",
                    help="run the trace through trace_eval.py and compare with torch")
    args = ap.parse_args(argv)

    names = [m for m in args.models.split(",") if m]
    formats = {f for f in args.formats.split(",") if f}
    for m in names:
        if m not in zoo.ZOO:
            ap.error(f"unknown model {m!r}; known: {', '.join(zoo.ZOO)}")
        if args.config not in zoo.ZOO[m].configs:
            ap.error(f"model {m!r} has no config {args.config!r}")
    if formats - {"onnx", "trace"}:
        ap.error(f"unknown formats {sorted(formats - {'onnx', 'trace'})}")
    os.makedirs(args.out, exist_ok=True)

    print(f"{'model':<10} {'params':>12} {'GFLOP/sample':>13} {'build':>7} {'onnx':>7} "
          f"{'trace':>7}  onnx op types")
    for m in names:
        base = f"{m}-{args.config}" if args.name_with_config else None
        ref = make_one(m, args.config, args.out, formats, args.batch, args.seq, args.seed,
                       base, args.check, not args.no_fold)
        tm = ref["timings"]
        fmt = lambda k: f"{tm[k]:6.1f}s" if k in tm else "      -"  # noqa: E731
        print(f"{m:<10} {ref['parameters']:>12,} {ref['forward_flops_per_sample'] / 1e9:>13.4f} "
              f"{fmt('build_s')} {fmt('onnx_s')} {fmt('trace_s')}  "
              f"{' '.join(ref.get('onnx', {}).get('op_types', []))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
