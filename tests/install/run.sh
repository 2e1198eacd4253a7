#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a C++ consumer with find_package(onnxprobe).
set -euo pipefail
BUILD="$1"; SRC="$2"; MODEL="$3"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/build" -j2 >/dev/null
"$WORK/build/consumer" "$MODEL"
