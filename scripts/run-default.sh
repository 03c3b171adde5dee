#!/usr/bin/env bash
# scripts/run-default.sh - set up, build and run Loom's main job on the
# bundled default: the GPT-2-style model in models/ (see models/README.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
"$BUILD/bin/loom" summarize "$ROOT/models/gpt2-tiny.onnx" "$@"
echo
# One training step of it on the bundled 8x A100-80GB node preset. The model
# carries no plan, so this is one device's step.
"$BUILD/bin/loom" estimate "$ROOT/models/gpt2-tiny.onnx" --cluster dgx-a100-80g --mode train
echo
# Plan it for 2 devices, compile the plan, run it on 2 MPI ranks, and check
# the logits against PyTorch's (docs/lowering.md).
ARTIFACT="$BUILD/default-artifact"
"$BUILD/bin/loom" compile "$ROOT/models/gpt2-tiny.onnx" -o "$ARTIFACT" \
  --plan "cluster=dgx-a100-80g devices=2 mode=infer max-pp=1 table=none"
mpirun --allow-run-as-root --oversubscribe -np 2 "$BUILD/bin/loom-run" "$ARTIFACT" \
  --inputs "$ROOT/models/gpt2-tiny.input.input_ids.npy" \
  --outputs "$BUILD/default-logits.npy" --steps 3 --warmup 1
/usr/bin/python3 "$ROOT/test/Integration/compare_outputs.py" --rtol 1e-4 --atol 1e-5 \
  --expected "$ROOT/models/gpt2-tiny.expected.npy" "$BUILD/default-logits.npy"
