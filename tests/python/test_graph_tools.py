"""A PyTorch export against its copies rewritten by the graph tools users run after export
(onnxsim, onnxslim, onnxoptimizer from PyPI, pinned by the bootstrap): every benign copy passes,
and a weight changed in a copy (a folded Conv, under the rewriter's names) names that node. The
references: ONNX Runtime's Python API (the copies' outputs agree with the original's) and the
injected fault."""
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import graph_tools
from conftest import run


ORT_OUTPUTS = """
import sys, numpy as np, onnxruntime as ort
x = np.load(sys.argv[1])
outs = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0] for p in sys.argv[2:]]
print(float(np.max(np.abs(outs[0] - outs[1]))), float(np.max(np.abs(outs[0]))))
"""

TOOLS_USED = list(graph_tools.TOOLS)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    assert graph_tools.available(), "the bootstrap's graph tools environment (.deps/graphtools-env) is missing"
    import torch
    import torchvision
    out = tmp_path_factory.mktemp("tools")
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None, num_classes=10).eval()
    for mod in m.modules():  # statistics that make a fold change the Conv's weights
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    x = torch.randn(1, 3, 48, 48)
    np.save(out / "x.npy", x.numpy())
    # BatchNormalization kept as its own node (PRESERVE), as exporters other than torch's eval path write it
    torch.onnx.export(m, x, str(out / "model.onnx"), opset_version=13, input_names=["x"], output_names=["y"],
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    for tool in TOOLS_USED:
        graph_tools.rewrite(tool, out / "model.onnx", out / f"{tool}.onnx")
    return out


def ort_difference(work, a, b):
    py = os.environ.get("ONNXPROBE_PYENV")
    r = subprocess.run([py, "-c", ORT_OUTPUTS, str(work / "x.npy"), str(a), str(b)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return tuple(map(float, r.stdout.split()))


def compare(onnxprobe, work, b, tmp_path):
    r = run([onnxprobe, "compare", work / "model.onnx", b, "--input", f"x={work / 'x.npy'}", "--json",
             tmp_path / "r.json"])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r, json.loads((tmp_path / "r.json").read_text())


@pytest.mark.parametrize("tool", TOOLS_USED)
def test_a_rewritten_copy_passes(onnxprobe, work, tmp_path, tool):
    diff, scale = ort_difference(work, work / "model.onnx", work / f"{tool}.onnx")
    assert diff <= 1e-4 * max(1.0, scale)  # the rewrite is benign
    assert sum(n.op_type == "BatchNormalization" for n in onnx.load(str(work / f"{tool}.onnx")).graph.node) == 0
    r, rep = compare(onnxprobe, work, work / f"{tool}.onnx", tmp_path)
    assert r.returncode == 0 and rep["verdict"] == "PASS", r.stdout
    assert rep["summary"]["compared"] >= 20


def conv_reading_initializer(m, k):
    """The k-th Conv (file order) whose weight is an initializer, and that initializer."""
    inits = {t.name: t for t in m.graph.initializer}
    convs = [n for n in m.graph.node if n.op_type == "Conv" and n.input[1] in inits]
    return convs[k], inits[convs[k].input[1]]


@pytest.mark.parametrize("tool", ["onnxsim", "onnxslim"])
def test_a_weight_changed_in_a_rewritten_copy_is_named(onnxprobe, work, tmp_path, tool):
    m = onnx.load(str(work / f"{tool}.onnx"))
    node, w = conv_reading_initializer(m, 9)
    v = numpy_helper.to_array(w).copy()
    v[3] *= 1.5  # one output channel's filter (a single element can sit on a channel ReLU zeroed)
    w.CopyFrom(numpy_helper.from_array(v, w.name))
    faulty = tmp_path / "faulty.onnx"
    onnx.save(m, str(faulty))
    diff, scale = ort_difference(work, work / "model.onnx", faulty)
    assert diff > 1e-3 * max(1.0, scale)  # the fault shows at the output
    r, rep = compare(onnxprobe, work, faulty, tmp_path)
    assert r.returncode == 1, r.stdout
    culprits = rep["localization"]["culprits"]
    assert culprits and culprits[0]["introduced"] and culprits[0]["node"] == node.name, (node.name, culprits[:2])
    assert len([t for t in rep["tensors"] if t["role"] == "introduced"]) == 1
