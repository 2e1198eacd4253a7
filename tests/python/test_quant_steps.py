"""One quantization step (docs/metrics.md): a quantized model at optimization level all, where
ONNX Runtime's integer kernels round some values to the neighbouring grid point, passes; a weight
changed by one step of its own grid still fails and is named. Checked against ONNX Runtime's Python
API (the level-all run differs from the level-off run by one output step) and the injected fault."""
import json
import os
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DATA = os.path.join(SRC, "tests", "data", "real_world")
MODEL = os.path.join(DATA, "keras_cnn_qdq.onnx")
INPUT = os.path.join(DATA, "keras_cnn_qdq_input.npy")

ORT_LEVELS = r"""
import sys, numpy as np, onnxruntime as ort
x = np.load(sys.argv[2])
outs = []
for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
    outs.append(s.run(None, {s.get_inputs()[0].name: x})[0].astype(np.float64))
np.save(sys.argv[3], np.stack(outs))
"""


def output_scale():
    """The scale of the DequantizeLinear that makes the graph output (read with onnx)."""
    m = onnx.load(MODEL)
    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    n = producer[g.output[0].name]
    assert n.op_type == "DequantizeLinear", n.op_type
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    return float(np.max(np.abs(inits[n.input[1]])))


def test_integer_kernels_one_step_apart_pass(onnxprobe, tmp_path):
    py = os.environ.get("ONNXPROBE_PYENV")
    r = subprocess.run([py, "-c", ORT_LEVELS, MODEL, INPUT, str(tmp_path / "outs.npy")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    off, full = np.load(tmp_path / "outs.npy")
    step = output_scale()
    d = np.abs(off - full)
    # the independent fact this test stands on: level all lands one step away on some values,
    # more than the float tolerance (1e-5 x scale + 1e-3 x |a|) allows, and never further
    assert np.any(d > 1e-5 * max(1.0, np.abs(off).max()) + 1e-3 * np.abs(off)), "no element differs"
    assert np.max(d) <= step * (1 + 1e-6), (np.max(d), step)
    r = run([onnxprobe, "compare", MODEL, "--b-opt-level", "all", "--input", f"image={INPUT}", "--json",
             tmp_path / "r.json", "--report-detail", "full"])
    rep = json.loads((tmp_path / "r.json").read_text())
    assert r.returncode == 0, r.stdout
    quantized = [t for t in rep["tensors"] if t["op_type"] in ("QuantizeLinear", "DequantizeLinear")]
    assert any(t["max_abs"] > 0 for t in quantized)
    # a quantized tensor one step off is within its budget; further downstream the step carries
    # (a LeakyRelu's requantization may turn it into two), which no node introduces
    for t in quantized:
        if t["op_type"] == "QuantizeLinear" and t["max_abs"] <= 1:
            assert t["within_tolerance"] and t["atol_used"] >= 1, t["name"]
    assert rep["localization"]["culprits"] == [] or not any(c["introduced"] for c in rep["localization"]["culprits"])


def test_a_weight_one_step_off_its_grid_fails_and_is_named(onnxprobe, tmp_path):
    """The mid-depth quantized weight (by topological order, from the graph alone): its largest
    element moved one step toward zero."""
    m = onnx.load(MODEL)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    weights = [n for n in g.node if n.op_type == "DequantizeLinear" and n.input[0] in inits
               and numpy_helper.to_array(inits[n.input[0]]).ndim == 4]
    dq = weights[len(weights) // 2]
    conv = readers[dq.output[0]][0]
    assert conv.op_type == "Conv"
    t = inits[dq.input[0]]
    q = numpy_helper.to_array(t).copy()
    k = int(np.argmax(np.abs(q.astype(np.int64))))
    q.flat[k] -= np.sign(q.flat[k])
    t.CopyFrom(numpy_helper.from_array(q, t.name))
    onnx.save(m, tmp_path / "faulty.onnx")
    r = run([onnxprobe, "compare", MODEL, tmp_path / "faulty.onnx", "--input", f"image={INPUT}", "--json",
             tmp_path / "r.json", "-q"])
    assert r.returncode == 1, r.stdout
    top = json.loads((tmp_path / "r.json").read_text())["localization"]["culprits"][0]
    assert top["node"] in (conv.name, dq.name), (top["node"], conv.name)
