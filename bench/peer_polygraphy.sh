#!/usr/bin/env bash
# The same job done by onnxprobe and by Polygraphy, timed in one run: every intermediate tensor
# of MODEL with ONNX Runtime optimizations off (A) vs all (B), then a comparison.
# Polygraphy and the Python onnxruntime live in a bench-only virtual environment (bench/.venv).
set -euo pipefail
BUILD="$1"
MODEL="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/bench/.venv"
ORT_VERSION="${ONNXPROBE_ORT_VERSION:-1.32.0}"
if [ ! -x "$VENV/bin/polygraphy" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q polygraphy "onnxruntime==$ORT_VERSION" numpy onnx colored
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
M="python3 $ROOT/bench/measure.py"
PG="$VENV/bin/polygraphy"

read -r pa_s pa_m _ < <($M "$PG" run "$MODEL" --onnxrt --onnx-outputs mark all \
  --graph-optimization-level ORT_DISABLE_ALL --save-outputs "$TMP/a.json")
read -r pb_s pb_m _ < <($M "$PG" run "$MODEL" --onnxrt --onnx-outputs mark all \
  --graph-optimization-level ORT_ENABLE_ALL --save-outputs "$TMP/b.json")
read -r pc_s pc_m _ < <($M "$PG" run --load-outputs "$TMP/a.json" "$TMP/b.json")
read -r op_s op_m op_rc < <($M "$BUILD/onnxprobe" compare "$MODEL" --b-opt-level all -q --latency-runs 0 \
  --json "$TMP/r.json")
read -r ob_s ob_m _ < <($M "$BUILD/onnxprobe" compare "$MODEL" --b-opt-level all -q --latency-runs 0 \
  --max-memory 256M)

python3 - "$MODEL" "$pa_s" "$pa_m" "$pb_s" "$pb_m" "$pc_s" "$pc_m" "$op_s" "$op_m" "$ob_s" "$ob_m" <<'PY'
import os, sys
m, pa_s, pa_m, pb_s, pb_m, pc_s, pc_m, op_s, op_m, ob_s, ob_m = sys.argv[1], *map(float, sys.argv[2:])
pg_s, pg_m = pa_s + pb_s + pc_s, max(pa_m, pb_m, pc_m)
print(f"peer comparison, {os.path.basename(m)}, optimizations off vs all, every intermediate tensor:")
print(f"  polygraphy: run A {pa_s:.2f} s + run B {pb_s:.2f} s + compare {pc_s:.2f} s = {pg_s:.2f} s, peak RSS {pg_m:.0f} MiB")
print(f"  onnxprobe compare                    {op_s:.2f} s, peak RSS {op_m:.0f} MiB"
      f"  -> {pg_s / op_s:.1f}x faster (target >= 5x), {op_m / pg_m:.2f}x the memory")
print(f"  onnxprobe compare --max-memory 256M  {ob_s:.2f} s, peak RSS {ob_m:.0f} MiB")
PY
