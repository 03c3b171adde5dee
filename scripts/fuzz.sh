#!/usr/bin/env bash
# scripts/fuzz.sh - build the libFuzzer targets with clang and run each one.
#
# Builds loom-onnx-fuzzer, loom-trace-fuzzer, loom-cost-fuzzer (cluster
# specs and calibration files) and loom-manifest-fuzzer (the runtime's
# artifact manifests) in a separate clang build (the importers, the cost
# model and the runtime instrumented with -fsanitize=fuzzer-no-link,address)
# and runs each for LOOM_FUZZ_SECONDS (default 60) starting from its
# committed corpus.
# New inputs go to a scratch copy, so the committed corpus changes only by
# hand. Any crash, leak or timeout fails the script and leaves the reproducer
# in $BUILD/fuzz-artifacts/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
SECONDS_EACH="${LOOM_FUZZ_SECONDS:-60}"

if [[ ! -f "$BUILD/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLOOM_BUILD_FUZZERS=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address"
fi
ninja -C "$BUILD" loom-onnx-fuzzer loom-trace-fuzzer loom-cost-fuzzer loom-manifest-fuzzer

mkdir -p "$BUILD/fuzz-artifacts"
status=0
for target in onnx trace cost manifest; do
  scratch="$BUILD/fuzz-corpus-$target"
  rm -rf "$scratch" && mkdir -p "$scratch"
  echo "fuzz: loom-$target-fuzzer for ${SECONDS_EACH}s"
  extra=()
  if [[ $target == cost ]]; then
    extra=(-dict="$ROOT/fuzz/cost/cost.dict") # the JSON keys of both formats
  elif [[ $target == manifest ]]; then
    extra=(-dict="$ROOT/fuzz/manifest/manifest.dict")
  fi
  if ! "$BUILD/bin/loom-$target-fuzzer" "${extra[@]}" "$scratch" "$ROOT/fuzz/$target/corpus" \
      -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 \
      -artifact_prefix="$BUILD/fuzz-artifacts/$target-" -print_final_stats=1 \
      2>"$BUILD/fuzz-$target.log"; then
    echo "fuzz: loom-$target-fuzzer FAILED; see $BUILD/fuzz-$target.log" >&2
    tail -30 "$BUILD/fuzz-$target.log" >&2
    status=1
  else
    grep -E 'stat::number_of_executed_units|cov:' "$BUILD/fuzz-$target.log" | tail -2
  fi
done
exit $status
