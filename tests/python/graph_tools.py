"""The graph tools users run on a model after export (onnxsim, onnxslim, onnxoptimizer), pinned by
the bootstrap in .deps/graphtools-env: rewrite(tool, src, dst) writes the tool's copy of src."""
import os
import subprocess

SRC = os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON = os.path.join(SRC, ".deps", "graphtools-env", "bin", "python")
TOOLS = ("onnxsim", "onnxslim", "onnxoptimizer")

# each tool as its users call it: onnxsim's and onnxslim's defaults, and onnxoptimizer's fusion
# passes (its default list keeps BatchNormalization; users ask for the folds by name)
_REWRITE = r"""
import sys, onnx
tool, src, dst = sys.argv[1:4]
m = onnx.load(src)
if tool == "onnxsim":
    import onnxsim
    m, ok = onnxsim.simplify(m)
    assert ok, "onnxsim could not validate its copy"
elif tool == "onnxslim":
    import onnxslim
    m = onnxslim.slim(m)
else:
    import onnxoptimizer
    m = onnxoptimizer.optimize(m, ["eliminate_identity", "eliminate_nop_transpose", "fuse_bn_into_conv",
                                   "fuse_add_bias_into_conv", "fuse_matmul_add_bias_into_gemm"])
onnx.save(m, dst)
"""


def available():
    return os.path.exists(PYTHON)


def rewrite(tool, src, dst):
    """Writes `tool`'s copy of the model `src` to `dst`; raises with the tool's error."""
    assert tool in TOOLS, tool
    r = subprocess.run([PYTHON, "-c", _REWRITE, tool, str(src), str(dst)], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{tool} failed on {src}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    return dst
