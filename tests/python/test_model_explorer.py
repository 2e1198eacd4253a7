"""Our Model Explorer node data (`compare --model-explorer FILE`) loaded into Google's Model
Explorer itself (PyPI ai-edge-model-explorer with the model-explorer-onnx adapter, the bootstrap's
.deps/model-explorer-env) and read back from what it renders in headless Chromium
(model_explorer_view.py): every node's value in its node data table, the introduced node's row in
our colour, and that node drawn in our colour in the graph once revealed. The reference for which
node is introduced is the demo's injected fault (channel 5 of the second convolution)."""
import json
import os
import subprocess

import onnx
import pytest

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEPS = os.path.dirname(os.path.dirname(os.path.dirname(os.environ.get("ONNXPROBE_PYENV", ""))))
ME_PYTHON = os.path.join(DEPS, "model-explorer-env", "bin", "python")
DEMO = os.path.join(SRC, "tests", "data", "demo")
CULPRIT = "/features/features.3/Conv"


def hex_rgb(colour):
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def test_model_explorer_shows_our_values_and_colours(onnxprobe, tmp_path):
    assert os.path.exists(ME_PYTHON), "the bootstrap's Model Explorer environment is missing"
    model, faulty = os.path.join(DEMO, "demo_cnn.onnx"), os.path.join(DEMO, "demo_cnn_faulty.onnx")
    nd = tmp_path / "nd.json"
    r = run([onnxprobe, "compare", model, faulty, "--dim", "batch=2", "--model-explorer", nd, "-q"])
    assert r.returncode == 1, r.stderr
    (graph,) = json.loads(nd.read_text()).values()
    results = graph["results"]
    coloured = {n: v for n, v in results.items() if "bgColor" in v}
    assert list(coloured) == [CULPRIT]  # introduced there alone, as the fault was injected
    ops = {n.name: n.op_type for n in onnx.load(faulty).graph.node}
    view = subprocess.run([ME_PYTHON, os.path.join(SRC, "tests", "python", "model_explorer_view.py"), faulty, nd,
                           tmp_path / "me.png", "--reveal", repr(results[CULPRIT]["value"])[:8],
                           "--colour", coloured[CULPRIT]["bgColor"]],
                          capture_output=True, text=True, timeout=600)
    assert view.returncode == 0, view.stdout[-2000:] + view.stderr[-3000:]
    seen = json.loads(view.stdout)
    rows = {(row["label"], row["value"]): row["bg"] for row in seen["rows"]}
    # Model Explorer lists every node of ours with the value we wrote (its text: the shortest form
    # that reads back, as Python's repr)
    for name, v in results.items():
        assert (ops[name], repr(v["value"])) in rows, (name, v, sorted(rows)[:20])
    ours = hex_rgb(coloured[CULPRIT]["bgColor"])
    assert rows[(ops[CULPRIT], repr(results[CULPRIT]["value"]))] == ours
    assert [k for k, bg in rows.items() if bg == ours] == [(ops[CULPRIT], repr(results[CULPRIT]["value"]))]
    # and draws that node in our colour in the graph once its row is clicked
    assert seen["revealed"] and seen["revealed_red_pixels"] >= 1000, seen["revealed_red_pixels"]
