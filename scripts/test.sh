#!/usr/bin/env bash
# scripts/test.sh - set up, build and run every Loom test.
#
# Calls setup.sh (installs what is missing, builds), then runs the lit suite
# (dialect, importer, real-model, conformance and fuzz-corpus tests) and the
# C++ unit tests. Exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
ninja -C "$BUILD" check-loom
