#!/usr/bin/env bash
# scripts/run-default.sh - set up, build and run Loom's main job on the
# bundled default: the GPT-2-style model in models/ (see models/README.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
"$BUILD/bin/loom" summarize "$ROOT/models/gpt2-tiny.onnx" "$@"
