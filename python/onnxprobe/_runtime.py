"""Which ONNX Runtime shared library onnxprobe loads when a call names none.

Order:
  1. ``$ONNXPROBE_ORT_LIBRARY``, when set;
  2. the library the package was built against (the bootstrap's ``.deps/ort/<version>/lib``),
     when it still exists;
  3. the ``onnxruntime`` PyPI package installed in the same environment
     (``onnxruntime/capi/libonnxruntime.so.<version>``, found without importing it).
Otherwise loading fails naming the path of step 2.
"""
import glob
import importlib.util
import os
import re

from . import _onnxprobe


def _version_key(path):
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", path)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def pypi_onnxruntime_library():
    """``libonnxruntime.so.<version>`` of an installed ``onnxruntime`` package, or None."""
    try:
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(folder, "capi", "libonnxruntime.so.*")), key=_version_key)
        if found:
            return found[-1]
    return None


def resolve(environ=None, built=None, pypi=pypi_onnxruntime_library):
    """The library path to pass to the core: "" when the core's own default (steps 1 and 2)
    applies, else the ``onnxruntime`` package's library, else "" (the core then names the
    missing path)."""
    environ = os.environ if environ is None else environ
    if environ.get("ONNXPROBE_ORT_LIBRARY"):
        return ""
    built = _onnxprobe.default_ort_library() if built is None else built
    if built and os.path.exists(built):
        return ""
    return pypi() or ""


def default_library():
    """The path of the ONNX Runtime library a call without ort_lib/ort_version loads."""
    return resolve() or _onnxprobe.default_ort_library()
