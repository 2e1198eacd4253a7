#!/usr/bin/env bash
# The same job done by onnxprobe and by Polygraphy, measured in one run (bench/peer_polygraphy.py):
#   bash bench/peer_polygraphy.sh BUILD MODEL.onnx[:BUDGET] ...
# Polygraphy and the Python onnxruntime live in a bench-only virtual environment (bench/.venv).
set -euo pipefail
BUILD="$1"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/bench/.venv"
ORT_VERSION="${ONNXPROBE_ORT_VERSION:-1.32.0}"
if [ ! -x "$VENV/bin/polygraphy" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q polygraphy "onnxruntime==$ORT_VERSION" numpy onnx colored
fi
/usr/bin/python3 "$ROOT/bench/peer_polygraphy.py" "$BUILD/onnxprobe" "$VENV/bin/polygraphy" "$@"
