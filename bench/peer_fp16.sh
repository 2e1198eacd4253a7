#!/usr/bin/env bash
# onnxprobe fp16 vs onnxconverter-common's auto_convert_mixed_precision on the same models, inputs
# and tolerance: model runs, sessions, wall time, block list sizes (bench/peer_fp16.py).
# The peer lives in the bench-only virtual environment (bench/.venv).
set -euo pipefail
BUILD="$1"
MODELS="$2"
shift 2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/bench/.venv"
ORT_VERSION="${ONNXPROBE_ORT_VERSION:-1.23.2}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import onnxconverter_common, onnxruntime, onnx" 2>/dev/null; then
  "$VENV/bin/pip" install -q onnxconverter-common "onnxruntime==$ORT_VERSION" numpy onnx
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$VENV/bin/python" "$ROOT/bench/peer_fp16.py" "$BUILD/onnxprobe" "$TMP" overflow cnn stacked_ln cancel "$@"
