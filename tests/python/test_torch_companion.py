"""The PyTorch companion on Debian's torch: export checklist and hook capture. References are
torch's own outputs, computed here independently of the capture."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

sys.path.insert(0, os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "python"))
import torch_models  # noqa: E402
from onnxprobe_torch import capture, export  # noqa: E402


def manifest_of(folder):
    m = json.loads((folder / "manifest.json").read_text())
    return m, {t["name"]: t for t in m["tensors"]}


def test_export_sets_debugging_defaults_and_writes_a_checklist(tmp_path):
    path = str(tmp_path / "net.onnx")
    rep = export(torch_models.net(), torch.randn(2, 3, 16, 16), path, ["input"], ["logits"], opset=13)
    assert rep["settings"]["do_constant_folding"] is False and rep["settings"]["training"] == "EVAL"
    assert rep["onnx_checker"] == "passed" and rep["risks"] == []
    saved = json.loads(open(path + ".checklist.json").read())
    assert saved["settings"]["opset"] == 13
    m = onnx.load(path)
    assert m.opset_import[0].version == 13
    assert [i.name for i in m.graph.input] == ["input"] and [o.name for o in m.graph.output] == ["logits"]
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert m.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"  # outputs too


def test_export_flags_risks(tmp_path):
    model = torch_models.cold_net()
    rep = export(model, torch.randn(1, 3, 16, 16), str(tmp_path / "cold.onnx"))
    text = "\n".join(rep["risks"])
    assert "training mode" in text
    assert "BatchNorm 'stem.1'" in text and "never updated" in text
    assert "Dropout 'drop'" in text
    assert not model.training  # exported in eval mode


def test_export_failure_names_the_problem(tmp_path):
    class Spectrum(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()  # aten::fft_rfft has no ONNX symbolic at opset 13

    with pytest.raises(RuntimeError, match="export of Spectrum failed"):
        export(Spectrum(), torch.randn(8), str(tmp_path / "m.onnx"))
    assert not os.path.exists(tmp_path / "m.onnx") and not os.path.exists(tmp_path / "m.onnx.tmp")


def test_capture_names_calls_like_the_exporter_and_keeps_values(tmp_path):
    model = torch_models.net()
    x = torch.randn(2, 3, 16, 16)
    capture(model, x, str(tmp_path / "cap"), ["input"])
    m, t = manifest_of(tmp_path / "cap")
    assert m["source"] == "torch-capture"
    blk = model.layer1[0]
    with torch.no_grad():  # the reference, computed step by step
        s = model.stem(x)
        bn1 = blk.bn1(blk.conv1(s))
        first_relu = torch.relu(bn1)
        y = blk.bn2(blk.conv2(first_relu))
        second_relu = torch.relu(s + y)
    assert t["layer1.0.relu"]["call_index"] == 0 and t["layer1.0.relu_1"]["call_index"] == 1
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["layer1.0.relu"]["file"]), first_relu.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["layer1.0.relu_1"]["file"]), second_relu.numpy(), rtol=1e-6)
    # the in-place ReLU after bn1 must not have changed the captured BatchNorm output
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["layer1.0.bn1"]["file"]), bn1.numpy(), rtol=1e-6)
    assert (np.load(tmp_path / "cap" / t["layer1.0.bn1"]["file"]) < 0).any()
    assert t["layer1.0.bn1"]["module_type"] == "BatchNorm2d"
    np.testing.assert_array_equal(np.load(tmp_path / "cap" / t["input"]["file"]), x.numpy())


def test_capture_tuple_outputs(tmp_path):
    model = torch_models.tuple_net()
    x = torch.randn(3, 6)
    capture(model, x, str(tmp_path / "cap"))
    _, t = manifest_of(tmp_path / "cap")
    with torch.no_grad():
        a, b = model.split(model.proj(x))
    assert t["split"]["output_index"] == 0 and t["split:1"]["output_index"] == 1
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["split:1"]["file"]), b.numpy(), rtol=1e-6)


def test_command_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.environ["ONNXPROBE_SRC"], "python"),
                                                      os.path.dirname(__file__)]))
    for cmd in (["export", "--input-names", "input", "-o", str(tmp_path / "m.onnx")],
                ["capture", "--input-names", "input", "-o", str(tmp_path / "cap")]):
        r = subprocess.run(["/usr/bin/python3", "-m", "onnxprobe_torch", cmd[0], "--model", "torch_models:net",
                            "--shape", "1x3x16x16"] + cmd[1:], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "m.onnx").exists() and (tmp_path / "cap" / "manifest.json").exists()
