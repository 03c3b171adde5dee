#!/usr/bin/env bash
# scripts/test.sh - set up, build and run every Loom test.
#
# Calls setup.sh (installs what is missing, builds), then runs the lit suite:
# dialect, importer, real-model, conformance and fuzz-corpus tests, and the
# GoogleTest unit tests (through lit). Then builds the libFuzzer targets with
# clang and runs each for LOOM_FUZZ_SECONDS (default 30; 0 skips). Ends with
# one "N passed, N failed" line and exits non-zero on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
ninja -C "$BUILD" loom-test-depends

log="$BUILD/test-results.log"
set +e
/usr/lib/llvm-22/bin/lit -sv --time-tests "$BUILD/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

count() {
  local n
  n=$(sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | tail -1)
  echo "${n:-0}"
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count 'Unexpectedly Passed') + $(count Unresolved) + $(count 'Timed Out') ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
if [[ "${LOOM_FUZZ_SECONDS:-30}" != 0 ]]; then
  if LOOM_FUZZ_SECONDS="${LOOM_FUZZ_SECONDS:-30}" "$ROOT/scripts/fuzz.sh"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
if [[ $status -ne 0 || $failed -ne 0 || $passed -eq 0 ]]; then
  exit 1
fi
