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
# carries no plan yet (planning is issue 4), so this is one device's step.
"$BUILD/bin/loom" estimate "$ROOT/models/gpt2-tiny.onnx" --cluster dgx-a100-80g --mode train
