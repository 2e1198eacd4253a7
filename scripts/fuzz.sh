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
cmake --build "$BUILD" -j2 --target fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_model fuzz_manifest fuzz_cli_specs \
  fuzz_planted

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

# the targets' scratch files (fuzz_util.h ScratchDir) go to a folder of this run, removed when it
# ends however it ends: libFuzzer's exit at -max_total_time runs no cleanup of the target's own
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/onnxprobe-fuzz-run.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
export TMPDIR="$SCRATCH"

# leaks and undefined behaviour stop a run like a crash does (the build has -fno-sanitize-recover);
# ONNX Runtime is not loaded by any target, so no leak suppression is needed
export ASAN_OPTIONS="detect_leaks=1"

# the stage checks itself first: each planted bug must end fuzz_planted with a report
status=0
for bug in leak ub; do
  printf '%s' "$bug" >"$BUILD/planted_$bug"
  if "$BUILD/fuzz/fuzz_planted" -artifact_prefix="$BUILD/planted_$bug." "$BUILD/planted_$bug" \
       >"$BUILD/planted_$bug.log" 2>&1; then
    echo "fuzz_planted: the planted '$bug' was not caught: this build cannot stop on it"
    status=1
  elif ! grep -qE "LeakSanitizer|runtime error" "$BUILD/planted_$bug.log"; then
    echo "fuzz_planted: '$bug' failed without a sanitizer report (see $BUILD/planted_$bug.log)"
    status=1
  else
    echo "fuzz_planted: the planted '$bug' was caught"
  fi
done

for t in fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_model fuzz_manifest fuzz_cli_specs; do
  mkdir -p "$CORPUS/$t" "$BUILD/crashes/$t"
  log="$BUILD/$t.log"
  if "$BUILD/fuzz/$t" "$CORPUS/$t" -max_total_time="$SECONDS_EACH" \
       -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$t/" >"$log" 2>&1; then
    echo "$t: $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}' || true) executions, $(tail -1 "$log")"
  else
    echo "$t: FAILED (see $log and $BUILD/crashes/$t)"
    status=1
  fi
done
exit $status
