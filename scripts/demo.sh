#!/usr/bin/env bash
# make demo: the main job on the embedded default model. The demo CNN is compared with a copy
# whose second convolution has a known fault (output channel 5 weights scaled by 1.02);
# onnxprobe must name that node as where the error is introduced.
set -uo pipefail
BIN="${1:-build/onnxprobe}"
MODEL="tests/data/demo/demo_cnn.onnx"
FAULTY="tests/data/demo/demo_cnn_faulty.onnx"
OUT="demo-out"
mkdir -p "$OUT"
echo "== onnxprobe inspect $MODEL"
"$BIN" inspect "$MODEL" || exit $?
echo
echo "== onnxprobe run $MODEL --dim batch=1 --check-observer -o $OUT/demo_cnn.dump"
"$BIN" run "$MODEL" --dim batch=1 --check-observer -o "$OUT/demo_cnn.dump" || exit $?
echo
echo "== onnxprobe compare $MODEL $FAULTY --dim batch=2 --html $OUT/report.html --json $OUT/report.json"
"$BIN" compare "$MODEL" "$FAULTY" --dim batch=2 --html "$OUT/report.html" --json "$OUT/report.json"
rc=$?
if [ "$rc" -ne 1 ]; then
  echo "demo: expected exit code 1 (mismatch found), got $rc" >&2
  exit 1
fi
echo
echo "open in a browser: file://$(cd "$OUT" && pwd)/report.html"
