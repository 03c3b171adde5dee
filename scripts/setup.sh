#!/usr/bin/env bash
# scripts/setup.sh - install Loom's dependencies and build it (idempotent).
#
# Run as root on Debian bookworm. Installs the Debian packages Loom needs
# (skipping apt entirely when they are already present), configures CMake
# against Debian's LLVM/MLIR 22 and builds every tool into build/.
# Optionally (best effort) installs onnxruntime from PyPI into a venv of its
# own, $BUILD/onnxruntime-venv, for the tests that also compare with it.
# Environment: LOOM_BUILD_DIR (default build), LOOM_JOBS (default nproc),
# LOOM_ONNXRUNTIME=0 (leave onnxruntime out).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"
JOBS="${LOOM_JOBS:-$(nproc)}"

PACKAGES=(
  cmake ninja-build g++ clang
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  nlohmann-json3-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libclang-rt-14-dev
  python3-onnx python3-numpy python3-torch python3-torchvision libopenblas0-pthread
  libonnx-testdata
  libopenmpi-dev openmpi-bin
  python3-venv
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages and not root; run as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
ninja -C "$BUILD" -j "$JOBS"

# onnxruntime (Debian has no package) in an isolated venv, so that its pip
# dependencies (numpy 2, protobuf) never shadow the Debian ones torch and onnx
# use. Pinned; skipped once it imports at that version. Optional: without
# PyPI (or a wheel for this platform) setup goes on and the tests that use it
# print a SKIP line instead (test/Integration/Inputs/ort_compare.py).
ORT_VERSION=1.32.0
ORT_VENV="$BUILD/onnxruntime-venv"
if [[ "${LOOM_ONNXRUNTIME:-1}" != 0 ]] && ! "$ORT_VENV/bin/python" -c \
    "import onnxruntime; assert onnxruntime.__version__ == '$ORT_VERSION'" 2>/dev/null; then
  echo "setup: installing onnxruntime $ORT_VERSION into $ORT_VENV (optional)"
  if ! { /usr/bin/python3 -m venv --clear "$ORT_VENV" &&
         "$ORT_VENV/bin/pip" install -q --disable-pip-version-check --retries 1 \
           --timeout 30 "onnxruntime==$ORT_VERSION"; }; then
    echo "setup: warning: onnxruntime not installed; its comparisons will be skipped" >&2
    rm -rf "$ORT_VENV"
  fi
fi
