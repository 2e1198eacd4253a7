#!/usr/bin/env bash
# make bench: every ratio is measured against a baseline taken in the same run.
set -euo pipefail
BUILD="${1:-build}"
MODELS="${ONNXPROBE_BENCH_MODELS:-bench/models}"
RUNS="${ONNXPROBE_BENCH_RUNS:-10}"
/usr/bin/python3 bench/make_models.py "$MODELS" resnet50 mobilenet_v2 >/dev/null
echo "== capture overhead"
for m in resnet50 mobilenet_v2; do
  "$BUILD/bench/capture_bench" "$MODELS/$m.onnx" --runs "$RUNS"
done
echo
echo "== capture inside a deployed application (LD_PRELOAD)"
for m in mobilenet_v2 resnet50; do
  /usr/bin/python3 bench/preload_overhead.py "$BUILD" "$MODELS/$m.onnx" "$RUNS" 3
done
echo
echo "== live side in a child process (isolation)"
"$BUILD/bench/isolation_bench" "$MODELS/resnet50.onnx" --runs "$RUNS"
echo
echo "== comparison"
"$BUILD/bench/compare_bench" "$MODELS/resnet50.onnx" --runs 5
echo
echo "== the exact reference: compare with and without --reference exact (ResNet-50, a transformer)"
/usr/bin/python3 bench/exact_bench.py "$BUILD/onnxprobe" "$MODELS" 5
echo
echo "== scale: GPT-2-medium-shaped"
/usr/bin/python3 bench/make_gpt2_model.py "$MODELS/gpt2_medium.onnx" >/dev/null
/usr/bin/python3 bench/scale_bench.py "$BUILD/onnxprobe" "$MODELS/gpt2_medium.onnx" 2G
echo
echo "== a side on another CPU: compare host vs aarch64 (qemu-user) against a plain emulated run of that side"
/usr/bin/python3 bench/platform_bench.py "$BUILD/onnxprobe" "$MODELS/resnet50.onnx" aarch64 2
/usr/bin/python3 bench/platform_bench.py "$BUILD/onnxprobe" "$MODELS/transformer6.onnx" aarch64 2
echo
echo "== larger than memory: 2.1 GiB of external data (sparse file)"
/usr/bin/python3 bench/external_bench.py "$BUILD/onnxprobe" .deps/pyenv/bin/python 256M
echo
echo "== several samples through one comparison session vs plain ONNX Runtime sessions"
/usr/bin/python3 bench/make_models.py "$MODELS" densenet121 >/dev/null
/usr/bin/python3 bench/samples_bench.py "$BUILD/onnxprobe" .deps/pyenv/bin/python \
  "$MODELS/resnet50.onnx" "$MODELS/densenet121.onnx"
echo
echo "== generation: two decoders over 256 steps with their cache vs two plain generations"
/usr/bin/python3 bench/generate_bench.py "$BUILD/onnxprobe" .deps/pyenv/bin/python "$MODELS"
echo
echo "== CPU vs OpenVINO on this CPU (ONNXPROBE_ZOO=quick: 3 models and the transformer block)"
/usr/bin/python3 bench/openvino_bench.py "$BUILD/onnxprobe" "$MODELS" ${ONNXPROBE_ZOO:+--$ONNXPROBE_ZOO}
echo
echo "== peers"
bash bench/peer_polygraphy.sh "$BUILD" "$MODELS/resnet50.onnx:256M" "$MODELS/gpt2_medium.onnx:2G"
echo
echo "== fp16 block list vs onnxconverter-common (ONNXPROBE_FP16_MODELS=quick: small models only)"
if [ "${ONNXPROBE_FP16_MODELS:-}" = quick ]; then
  bash bench/peer_fp16.sh "$BUILD" "$MODELS"
else
  /usr/bin/python3 bench/make_fp16_models.py "$MODELS" >/dev/null
  bash bench/peer_fp16.sh "$BUILD" "$MODELS" "$MODELS/resnet50.onnx" "$MODELS/vit_b_16_head.onnx"
fi
echo
echo "== model identity"
/usr/bin/python3 bench/make_identity_model.py "$MODELS/identity_1gb.onnx" >/dev/null
/usr/bin/python3 bench/identity_bench.py "$BUILD/onnxprobe" "$MODELS/identity_1gb.onnx" 3
echo
echo "== localization"
bash bench/localize_bench.sh "$BUILD" "$MODELS/faults"
echo
echo "== models from the wild: tf2onnx, paddle2onnx, skl2onnx, spox, onnxruntime.quantization (benign pairings, faults)"
/usr/bin/python3 bench/real_world.py "$BUILD/onnxprobe" ${ONNXPROBE_ZOO:+--$ONNXPROBE_ZOO}
echo
echo "== sensitivity: smallest fault named, top-1 rates and false alarms per pairing (ONNXPROBE_ZOO=quick: fewer models)"
echo "   (onnxsim, onnxslim, onnxoptimizer: the model against the graph tool's copy of its faulted copy)"
/usr/bin/python3 bench/sensitivity.py "$BUILD/onnxprobe" ${ONNXPROBE_ZOO:+--$ONNXPROBE_ZOO} \
  --pairings torch,same,opt_all,ort1.20.1,onnxsim,onnxslim,onnxoptimizer,torch+exact,opt_all+exact,ort1.20.1+exact,onnxsim+exact
echo
echo "== PyTorch vs ONNX zoo (ONNXPROBE_ZOO=quick for a handful of models)"
/usr/bin/python3 bench/torch_zoo.py "$BUILD/onnxprobe" ${ONNXPROBE_ZOO:+--$ONNXPROBE_ZOO}
echo
echo "== diagnosis: held-in fault cases, cause named, fix applied, cost vs the comparison"
/usr/bin/python3 bench/diagnose_bench.py "$BUILD/onnxprobe" .deps/pyenv/bin/python \
  "$BUILD/tests/libonnxprobe_crash_op.so" "$MODELS/diagnose" "${ONNXPROBE_DIAGNOSE_CASES:-full}"
echo
echo "== shards as Ray tasks: 1 and 2 workers vs one process (a local cluster of 2 CPUs)"
# the package from this tree: its extension module built beside the bench build (ccache serves the
# core's objects), and a venv over Debian's packages with the bootstrap's Ray wheels
cmake -S . -B "$BUILD-py" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXPROBE_BUILD_PYTHON=ON \
  -DONNXPROBE_BUILD_TESTS=OFF -DONNXPROBE_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD-py" -j2 --target _onnxprobe >/dev/null
PKG="$BUILD-py/package" && rm -rf "$PKG" && mkdir -p "$PKG"
cp -r python/onnxprobe "$PKG/" && cp "$BUILD-py"/python/_onnxprobe*.so "$PKG/onnxprobe/"
RAYENV=.deps/ray-bench-env
if [ ! -x "$RAYENV/bin/python" ] || ! "$RAYENV/bin/python" -c "import ray" 2>/dev/null; then
  rm -rf "$RAYENV" && /usr/bin/python3 -m venv --system-site-packages "$RAYENV"
  "$RAYENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links .deps/ray-wheels ray
fi
"$RAYENV/bin/python" bench/shard_bench.py "$PKG" "$MODELS/resnet50.onnx" 32 2>&1 | grep -v '^20[0-9][0-9]-'
