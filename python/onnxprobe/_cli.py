"""The ``onnxprobe`` console script: runs the command line bundled in the package
(``onnxprobe/bin/onnxprobe``) in this process's place, with the ONNX Runtime library the package
resolves (``onnxprobe.ort_library()``) unless ``$ONNXPROBE_ORT_LIBRARY`` names one. Exit codes,
output and Ctrl-C behave as the command's own."""
import os
import sys

from . import _runtime

HERE = os.path.dirname(os.path.abspath(__file__))


def command_path():
    """The bundled ``onnxprobe`` executable."""
    return os.path.join(HERE, "bin", "onnxprobe")


def preload_library():
    """The bundled ``libonnxprobe_preload.so`` (capture inside a deployed process: LD_PRELOAD)."""
    return os.path.join(HERE, "lib", "libonnxprobe_preload.so")


def main(argv=None):
    argv = sys.argv if argv is None else argv
    binary = command_path()
    if not os.access(binary, os.X_OK):
        sys.stderr.write(f"onnxprobe: this installation has no command line ({binary} is missing)\n")
        return 2
    env = dict(os.environ)
    if not env.get("ONNXPROBE_ORT_LIBRARY"):
        lib = _runtime.default_library()
        if lib and os.path.exists(lib):
            env["ONNXPROBE_ORT_LIBRARY"] = lib
    sys.stdout.flush()
    os.execve(binary, [binary] + list(argv[1:]), env)
