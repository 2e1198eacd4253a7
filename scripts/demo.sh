#!/usr/bin/env bash
# make demo: inspect the embedded default model, then capture every intermediate tensor.
set -euo pipefail
BIN="${1:-build/onnxprobe}"
MODEL="tests/data/demo/demo_cnn.onnx"
OUT="demo-out"
mkdir -p "$OUT"
echo "== onnxprobe inspect $MODEL"
"$BIN" inspect "$MODEL"
echo
echo "== onnxprobe run $MODEL --dim batch=1 --check-observer -o $OUT/demo_cnn.dump"
"$BIN" run "$MODEL" --dim batch=1 --check-observer -o "$OUT/demo_cnn.dump"
echo
echo "dump written to $(cd "$OUT/demo_cnn.dump" && pwd) (manifest.json + one .npy per tensor)"
