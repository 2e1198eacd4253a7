#!/usr/bin/env bash
# The environment bench/make_real_world.py runs in: exporters other than torch.onnx, pinned.
#
#   bash bench/real_world_env.sh [DEST]      (default: .deps/realworld-env)
#
# One venv holds them all (Debian 12, Python 3.11, x86-64; resolved together by pip):
# tensorflow-cpu 2.15.1 (Keras 2.15) + tf2onnx 1.17.0, paddlepaddle 3.3.1 + paddle2onnx 2.1.0
# (which pins onnx <= 1.17.0 and onnxoptimizer 0.3.13, and folds constants with polygraphy, which
# would otherwise pip-install onnx_graphsurgeon at export time), scikit-learn 1.9.1 + skl2onnx
# 1.20.0, spox 0.18.2, onnx 1.17.0 and onnxruntime 1.32.0 (the versions of .deps/graphtools-env).
# The ready marker is written last: a half-made environment is made again; a made one is kept.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.deps/realworld-env}"
PKGS="tensorflow-cpu==2.15.1 keras==2.15.0 tf2onnx==1.17.0
paddlepaddle==3.3.1 paddle2onnx==2.1.0 polygraphy==0.53.6 onnx_graphsurgeon==0.6.1 onnxoptimizer==0.3.13
scikit-learn==1.9.1 skl2onnx==1.20.0 spox==0.18.2
onnx==1.17.0 onnxruntime==1.32.0 numpy==1.26.4 protobuf==4.25.9 ml-dtypes==0.3.2 sympy==1.14.0 scipy==1.17.1"
tag="$(echo "$PKGS" | md5sum | cut -c1-12)"
if [ -f "$DEST/.ready-$tag" ]; then
  echo "real_world_env: $DEST is ready"
  exit 0
fi
echo "real_world_env: making $DEST"
rm -rf "$DEST"
/usr/bin/python3 -m venv "$DEST"
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
# shellcheck disable=SC2086
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check $PKGS
TF_CPP_MIN_LOG_LEVEL=3 "$DEST/bin/python" -c "
import tensorflow, tf2onnx, paddle, paddle2onnx, sklearn, skl2onnx, spox, onnx, onnxruntime
from onnxruntime.quantization import quantize_static, quantize_dynamic
print('real_world_env: tensorflow', tensorflow.__version__, 'tf2onnx', tf2onnx.__version__, 'paddle', paddle.__version__,
      'paddle2onnx', paddle2onnx.__version__, 'skl2onnx', skl2onnx.__version__, 'onnx', onnx.__version__,
      'onnxruntime', onnxruntime.__version__)"
touch "$DEST/.ready-$tag"
echo "real_world_env: ready"
