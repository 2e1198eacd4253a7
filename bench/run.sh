#!/usr/bin/env bash
# make bench: every ratio is measured against a baseline taken in the same run.
set -euo pipefail
BUILD="${1:-build}"
MODELS="${ONNXPROBE_BENCH_MODELS:-bench/models}"
/usr/bin/python3 bench/make_models.py "$MODELS" resnet50 mobilenet_v2 >/dev/null
for m in resnet50 mobilenet_v2; do
  "$BUILD/bench/capture_bench" "$MODELS/$m.onnx" --runs "${ONNXPROBE_BENCH_RUNS:-10}"
done
