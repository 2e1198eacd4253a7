"""PyTorch vs an ONNX model a graph tool changed after export, as users compare it: nodes renamed
(some or all), an Identity inserted, a model saved by ONNX Runtime's optimizer (fused Conv +
BatchNorm + ReLU, a Linear's bias moved into the activation or normalization after it, the
blocked-channel layout). The model computes what PyTorch computes: the comparison must PASS, and a
weight changed after the tool ran must still be named."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "python"))
from conftest import run  # noqa: E402
from onnxprobe_torch import capture, export  # noqa: E402


class ConvBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.act = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = self.conv2(self.act(self.bn(self.conv(x))))
        return self.fc(self.pool(torch.relu(y)).flatten(1))


class EncoderBlock(torch.nn.Module):
    """A BERT-style feed-forward half: Linear, GELU, Linear, residual, LayerNorm."""

    def __init__(self, d=32):
        super().__init__()
        self.inter = torch.nn.Linear(d, 4 * d)
        self.act = torch.nn.GELU()
        self.out = torch.nn.Linear(4 * d, d)
        self.ln = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(x + self.out(self.act(self.inter(x))))


class EmbedPool(torch.nn.Module):
    """BERT's ends: three embeddings summed by code outside any module, then a LayerNorm; and the
    pooler, a Linear whose Tanh runs outside the module and writes a named graph output."""

    def __init__(self, vocab=50, d=32):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(16, d)
        self.tok = torch.nn.Embedding(2, d)
        self.ln = torch.nn.LayerNorm(d)
        self.pooler = torch.nn.Linear(d, d)

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        h = self.ln(self.word(ids) + self.pos(pos) + self.tok(types))
        return {"hidden": h, "pooled": torch.tanh(self.pooler(h[:, 0]))}


def _prepare(tmp_path, model, x, name):
    torch.manual_seed(0)
    if any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
        with torch.no_grad():
            model.train()(torch.randn(4, *x.shape[1:]))
    model.eval()
    onnx_path, cap = tmp_path / f"{name}.onnx", tmp_path / f"{name}.cap"
    export(model, x, str(onnx_path))
    capture(model, x, str(cap))
    return onnx_path, cap


def _compare(onnxprobe, tmp_path, cap, model_path):
    import json
    report = tmp_path / (model_path.stem + ".json")
    r = run([onnxprobe, "compare", cap, model_path, "--json", report])
    return r, json.loads(report.read_text())


def _rename_nodes(path, out, which):
    m = onnx.load(str(path))
    for k, n in enumerate(m.graph.node):
        if which(n):
            n.name = f"node_{k}"
    onnx.save(m, str(out))
    return m


def _change_conv_weight(path, out):
    """One element of the second Conv's weight, wherever the tool put it; returns the node."""
    m = onnx.load(str(path))
    inits = {i.name: i for i in m.graph.initializer}
    node = [n for n in m.graph.node if n.op_type in ("Conv", "FusedConv") and n.input[1] in inits][-1]
    w = numpy_helper.to_array(inits[node.input[1]]).copy()
    w.flat[5] += np.float32(0.5)
    inits[node.input[1]].CopyFrom(numpy_helper.from_array(w, node.input[1]))
    onnx.save(m, str(out))
    return node.name


def test_renamed_nodes(onnxprobe, tmp_path):
    # a module's last node renamed: its output tensor still carries the module's scope
    x = torch.randn(2, 5, 32)
    onnx_path, cap = _prepare(tmp_path, EncoderBlock(), x, "enc")
    last = [n for n in onnx.load(str(onnx_path)).graph.node if n.name.startswith("/ln/")][-1]
    _rename_nodes(onnx_path, tmp_path / "some.onnx", lambda n: n.name == last.name)
    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "some.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    # every node renamed: alignment follows the tensors' names, and a changed weight is named
    onnx_path, cap = _prepare(tmp_path, ConvBlock(), torch.randn(1, 3, 12, 12), "conv")
    _rename_nodes(onnx_path, tmp_path / "all.onnx", lambda n: True)
    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "all.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    base = _compare(onnxprobe, tmp_path, cap, onnx_path)[1]
    assert len([a for a in rep["alignment"] if a["onnx"]]) == len([a for a in base["alignment"] if a["onnx"]])
    node = _change_conv_weight(tmp_path / "all.onnx", tmp_path / "all_bad.onnx")
    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "all_bad.onnx")
    assert r.returncode == 1 and rep["localization"]["culprits"][0]["node"] == node, rep["localization"]


def test_identity_inserted_after_a_convolution_with_a_batchnorm_folded_in(onnxprobe, tmp_path):
    onnx_path, cap = _prepare(tmp_path, ConvBlock(), torch.randn(1, 3, 12, 12), "conv")
    m = onnx.load(str(onnx_path))
    conv = next(n for n in m.graph.node if n.op_type == "Conv")
    out = conv.output[0]
    for n in m.graph.node:
        for k, i in enumerate(n.input):
            if i == out:
                n.input[k] = out + "_copy"
    at = list(m.graph.node).index(conv) + 1
    m.graph.node.insert(at, helper.make_node("Identity", [out], [out + "_copy"], name="/conv/Identity"))
    onnx.save(m, str(tmp_path / "id.onnx"))
    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "id.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    assert next(a for a in rep["alignment"] if a["torch"] == "bn")["method"] == "bn-folded"


def _ort_optimized(tmp_path, src, level):
    out = tmp_path / f"{src.stem}_{level}.onnx"
    script = ("import sys, onnxruntime as ort\n"
              "o = ort.SessionOptions()\n"
              "o.graph_optimization_level = getattr(ort.GraphOptimizationLevel, sys.argv[3])\n"
              "o.optimized_model_filepath = sys.argv[2]\n"
              "ort.InferenceSession(sys.argv[1], o, providers=['CPUExecutionProvider'])\n")
    py = os.environ.get("ONNXPROBE_PYENV", sys.executable)
    r = subprocess.run([py, "-c", script, str(src), str(out), level], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


@pytest.mark.parametrize("level", ["ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"])
def test_a_model_saved_by_onnx_runtimes_optimizer(onnxprobe, tmp_path, level):
    onnx_path, cap = _prepare(tmp_path, ConvBlock(), torch.randn(1, 3, 16, 16), "conv")
    opt = _ort_optimized(tmp_path, onnx_path, level)
    ops = {n.op_type for n in onnx.load(str(opt)).graph.node}
    assert "FusedConv" in ops or "Conv" in ops
    r, rep = _compare(onnxprobe, tmp_path, cap, opt)
    assert r.returncode == 0, r.stdout[-3000:]
    # the Linear's bias moved into BiasGelu / SkipLayerNormalization: those rows are unaligned
    onnx_path, cap = _prepare(tmp_path, EncoderBlock(), torch.randn(2, 6, 32), "enc")
    opt = _ort_optimized(tmp_path, onnx_path, level)
    r, rep = _compare(onnxprobe, tmp_path, cap, opt)
    assert r.returncode == 0, r.stdout[-3000:]
    assert rep["summary"]["compared"] >= 2


@pytest.mark.parametrize("level", ["ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"])
def test_work_fused_into_a_call_from_outside_it(onnxprobe, tmp_path, level):
    # SkipLayerNormalization adds the last summand into the LayerNorm, so the LayerNorm's argument
    # exists nowhere; FusedGemm runs the Tanh after the pooler module inside it: neither is paired
    # with a tensor that holds less (or more) than the call's argument (or output)
    ids = torch.randint(0, 50, (2, 8))
    onnx_path, cap = _prepare(tmp_path, EmbedPool(), (ids, torch.randint(0, 2, (2, 8))), "emb")
    opt = _ort_optimized(tmp_path, onnx_path, level)
    ops = {n.op_type for n in onnx.load(str(opt)).graph.node}
    assert {"SkipLayerNormalization", "FusedGemm"} <= ops, ops
    r, rep = _compare(onnxprobe, tmp_path, cap, opt)
    assert r.returncode == 0, r.stdout[-3000:]
    rows = {a["torch"]: a for a in rep["alignment"]}
    assert rows["ln:in0"]["onnx"] in ("", None), rows["ln:in0"]
    assert "fused" in rows["ln:in0"]["note"], rows["ln:in0"]
    assert rows["pooler"]["onnx"] in ("", None), rows["pooler"]
    # what still exists is still compared: the embeddings and the LayerNorm's output
    compared = {t["name"] for t in rep["tensors"] if t["verdict"] == "PASS"}
    for m in ("word", "pos", "tok", "ln"):
        assert rows[m]["onnx"], rows[m]
        assert rows[m]["onnx"] in compared or m in compared, (m, rows[m])
