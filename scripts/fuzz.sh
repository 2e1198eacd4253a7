#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with clang and runs each for FUZZ_SECONDS (default 60),
# seeded from the project's test files and the ONNX backend test data.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
ONNX_DATA=/usr/include/onnx/backend/test/data/node
CORPUS="$BUILD/corpus"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DONNXPROBE_FUZZ=ON -DONNXPROBE_BUILD_TESTS=OFF -DONNXPROBE_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD" -j2 --target fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_model fuzz_manifest fuzz_cli_specs

seed() {  # seed TARGET FILES...
  local dir="$CORPUS/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-16)" || true; done
}
/usr/bin/python3 "$ROOT/fuzz/make_seeds.py" "$CORPUS"
seed fuzz_model "$ROOT"/tests/data/demo/*.onnx $(ls -d "$ONNX_DATA"/*/model.onnx | head -300)
seed fuzz_tensor_proto $(ls "$ONNX_DATA"/*/test_data_set_0/input_0.pb | head -300)
seed fuzz_npy "$ROOT"/tests/data/bad/*.npy
seed fuzz_npz "$ROOT"/tests/data/bad/*.npz

status=0
for t in fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_model fuzz_manifest fuzz_cli_specs; do
  mkdir -p "$CORPUS/$t" "$BUILD/crashes/$t"
  log="$BUILD/$t.log"
  if ASAN_OPTIONS=detect_leaks=0 "$BUILD/fuzz/$t" "$CORPUS/$t" -max_total_time="$SECONDS_EACH" \
       -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$t/" >"$log" 2>&1; then
    echo "$t: $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}' || true) executions, $(tail -1 "$log")"
  else
    echo "$t: FAILED (see $log and $BUILD/crashes/$t)"
    status=1
  fi
done
exit $status
