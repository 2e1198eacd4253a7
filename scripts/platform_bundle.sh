#!/usr/bin/env bash
# Writes onnxprobe's platform worker and the ONNX Runtime it runs into a folder to copy to a device
# (docs/platform.md), then compare with that device as a side:
#   onnxprobe compare model.onnx --b-remote 'ssh board /opt/onnxprobe/run-worker.sh'
#
#   bash scripts/platform_bundle.sh ARCH DIR [ORT_VERSION]     ARCH: aarch64 or x86_64
#
# DIR gets onnxprobe-worker (the aarch64 one links libstdc++ statically: it needs only glibc
# 2.17+ on the device), lib/ (the runtime's shared libraries from the PyPI wheel the bootstrap
# fetched) and run-worker.sh, the command a device runs: it starts the worker on its stdin/stdout.
# ONNXPROBE_BUILD_DIR (default build/) is where the workers were built.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ARCH="${1:?usage: platform_bundle.sh ARCH DIR [ORT_VERSION]}"
DIR="${2:?usage: platform_bundle.sh ARCH DIR [ORT_VERSION]}"
VERSION="${3:-$(sed -n 's/^ORT_VERSION="\${ONNXPROBE_ORT_VERSION:-\(.*\)}"$/\1/p' "$ROOT/scripts/bootstrap.sh")}"
BUILD="${ONNXPROBE_BUILD_DIR:-$ROOT/build}"
DEPS="${ONNXPROBE_DEPS_DIR:-$ROOT/.deps}"
case "$ARCH" in
  aarch64) LIBS="$DEPS/ort-aarch64/$VERSION/lib" ;;
  x86_64) LIBS="$DEPS/ort/$VERSION/lib" ;;
  *) echo "platform_bundle: unknown ARCH '$ARCH' (aarch64 or x86_64)" >&2; exit 2 ;;
esac
WORKER="$BUILD/platform/$ARCH/onnxprobe-worker"
[ -x "$WORKER" ] || { echo "platform_bundle: no worker at $WORKER (make build)" >&2; exit 2; }
[ -f "$LIBS/libonnxruntime.so.$VERSION" ] ||
  { echo "platform_bundle: no ONNX Runtime $VERSION for $ARCH in $LIBS (scripts/bootstrap.sh)" >&2; exit 2; }
[ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ] &&
  { echo "platform_bundle: $DIR exists and is not empty" >&2; exit 2; }
mkdir -p "$DIR/lib"
cp "$WORKER" "$DIR/onnxprobe-worker"
cp -P "$LIBS"/libonnxruntime*.so* "$DIR/lib/"
cat >"$DIR/run-worker.sh" <<SCRIPT
#!/bin/sh
# onnxprobe's platform worker ($ARCH, ONNX Runtime $VERSION): sessions for a host running
# onnxprobe, spoken to on stdin/stdout. The host starts it: --b-remote 'ssh board <this file>'.
here="\$(cd "\$(dirname "\$0")" && pwd)"
exec "\$here/onnxprobe-worker" "\$here/lib/libonnxruntime.so.$VERSION"
SCRIPT
chmod +x "$DIR/run-worker.sh"
echo "$DIR: onnxprobe-worker, lib/libonnxruntime.so.$VERSION, run-worker.sh"
