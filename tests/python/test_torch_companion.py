"""The PyTorch companion on Debian's torch: export checklist and hook capture. References are
torch's own outputs, computed here independently of the capture."""
import json
import os
import signal
import subprocess
import sys
import time

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
    assert "BatchNorm layers ('stem.1', " in text and "never updated" in text
    assert "Dropout 'drop'" in text
    assert not model.training  # exported in eval mode


def test_export_says_untouched_batchnorms_in_one_line(tmp_path):
    import torchvision
    model = torchvision.models.resnet18(weights=None)  # 20 BatchNorm layers, none updated
    rep = export(model, torch.randn(1, 3, 32, 32), str(tmp_path / "r18.onnx"))
    lines = [r for r in rep["risks"] if "BatchNorm" in r]
    assert len(lines) == 1 and lines[0].startswith("20 BatchNorm layers ('bn1', 'layer1.0.bn1', "), lines


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


# ---- inputs named after forward(), any inputs, any outputs ----------------------------------------

sys.path.insert(0, os.path.dirname(__file__))
import torch_zoo  # noqa: E402


def companion_env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.environ["ONNXPROBE_SRC"], "python"),
                                                       os.path.dirname(__file__)]))


def test_export_and_capture_name_inputs_after_forward_parameters(tmp_path):
    model = torch_zoo.build("two_inputs", *torch_zoo.HANDWRITTEN["two_inputs"])[0]
    image, vector = torch.randn(1, 3, 16, 16), torch.randn(1, 6)
    rep = export(model, (image, vector), str(tmp_path / "m.onnx"))
    m = onnx.load(str(tmp_path / "m.onnx"))
    assert [i.name for i in m.graph.input] == ["image", "vector"] == rep["settings"]["input_names"]
    man = capture(model, (image, vector), str(tmp_path / "cap"))
    assert [t["name"] for t in man["tensors"] if t["kind"] == "input"] == ["image", "vector"]


def test_keyword_and_int64_inputs_and_dict_outputs(tmp_path):
    model, _ = torch_zoo.build("token_transformer", *torch_zoo.HANDWRITTEN["token_transformer"])
    tokens = torch.randint(0, 60, (2, 12))
    inputs = {"tokens": tokens, "scale": torch.tensor(0.5)}
    rep = export(model, inputs, str(tmp_path / "m.onnx"))
    g = onnx.load(str(tmp_path / "m.onnx")).graph
    assert [i.name for i in g.input] == ["tokens", "scale"]
    assert g.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert [o.name for o in g.output] == ["logits", "hidden"] == rep["settings"]["output_names"]
    man, t = manifest_of_capture(model, inputs, tmp_path / "cap")
    ins = [e for e in man["tensors"] if e["kind"] == "input"]
    assert [(e["name"], e["dtype"]) for e in ins] == [("tokens", "int64"), ("scale", "float32")]
    with torch.no_grad():  # the reference: the model's own dict, flattened in insertion order
        ref = model(tokens, torch.tensor(0.5))
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["model"]["file"]), ref["logits"].numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.load(tmp_path / "cap" / t["model:1"]["file"]), ref["hidden"].numpy(), rtol=1e-5)


def manifest_of_capture(model, inputs, folder, **kw):
    capture(model, inputs, str(folder), **kw)
    return manifest_of(folder)


def test_unknown_keyword_input_is_one_clear_error(tmp_path):
    model, _ = torch_zoo.build("token_transformer", *torch_zoo.HANDWRITTEN["token_transformer"])
    with pytest.raises(ValueError, match="has no parameter 'mask'"):
        capture(model, {"tokens": torch.zeros(1, 4, dtype=torch.long), "mask": torch.ones(1)}, str(tmp_path / "c"))


def test_capture_records_scopes_exactly_as_the_exporter_names_nodes(tmp_path):
    # a module called twice whose children are then renamed with _1 (not its own scope), a shared
    # module under two paths, a custom BatchNorm: the reference is the exporter's own node names
    for name in ("two_inputs", "shared_stem"):
        model, x = torch_zoo.build(name, *torch_zoo.HANDWRITTEN[name])
        export(model, x, str(tmp_path / f"{name}.onnx"))
        man = capture(model, x, str(tmp_path / f"{name}.cap"))
        scopes = {n.name.rsplit("/", 1)[0] for n in onnx.load(str(tmp_path / f"{name}.onnx")).graph.node
                  if n.name.startswith("/")}
        calls = man["torch"]["calls"]
        named = {c["scope"] + (f"_{c['scope_ordinal']}" if c["scope_ordinal"] else "") for c in calls}
        assert scopes <= named, sorted(scopes - named)
    calls = {(c["module"], c["call_index"]): c for c in man["torch"]["calls"]}
    # shared_stem: one Sequential under 'left' and 'right' is called twice, from the root
    assert calls[("left.0", 1)]["scope"] == "/left/left.0" and calls[("left.0", 1)]["scope_ordinal"] == 1


def test_capture_marks_batchnorm_by_class_not_name(tmp_path):
    class NotANorm(torch.nn.Module):  # named like one, is not one
        def forward(self, x):
            return x * 2

    class BatchNormish(torch.nn.Sequential):
        pass

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch_zoo.BnAct(4), BatchNormish(NotANorm()))
    man = capture(model.eval(), torch.randn(1, 3, 4, 4), str(tmp_path / "cap"))
    bn = {c["module"]: c["batchnorm"] for c in man["torch"]["calls"]}
    assert bn == {"model": False, "0": False, "1": True, "2": False, "2.0": False}


def test_capture_records_which_outputs_are_the_same_tensor(tmp_path):
    model = torch_models.net()
    man = capture(model, torch.randn(1, 3, 8, 8), str(tmp_path / "cap"))
    outs = {o["tensor"]: o["same_as"] for c in man["torch"]["calls"] for o in c["outputs"]}
    assert outs["stem"] == {"tensor": "stem.2"}  # a Sequential hands on its last child's output
    assert outs["layer1.0.relu"] is None  # in-place ReLU: the same object, but a new value
    calls = {(c["module"], c["call_index"]): c for c in man["torch"]["calls"]}
    assert calls[("layer1.0.bn1", 0)]["inputs"] == [{"tensor": "layer1.0.conv1"}]


def test_npz_capture_and_inputs_file_keys_are_the_input_names(tmp_path, onnxprobe):
    np.savez(tmp_path / "in.npz", vector=np.random.rand(1, 6).astype(np.float32),
             image=np.random.rand(1, 3, 16, 16).astype(np.float32))  # keyword order differs
    for cmd, out in (("export", "m.onnx"), ("capture", "cap.npz")):
        r = subprocess.run(["/usr/bin/python3", "-m", "onnxprobe_torch", cmd, "--model", "torch_zoo:two_inputs",
                            "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / out)],
                           capture_output=True, text=True, env=companion_env(), timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([onnxprobe, "compare", str(tmp_path / "cap.npz"), str(tmp_path / "m.onnx")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_command_line_errors_are_one_line(tmp_path):
    for args in (["--model", "no_such_module:make", "--shape", "1x3"],
                 ["--model", "torch_zoo:TwoInputs", "--shape", "1x3x16x16"]):  # one input of two
        cmd = ["/usr/bin/python3", "-m", "onnxprobe_torch", "capture"] + args + ["-o", str(tmp_path / "c")]
        r = subprocess.run(cmd, capture_output=True, text=True, env=companion_env(), timeout=300)
        assert r.returncode == 2
        assert "Traceback" not in r.stderr
        errors = [line for line in r.stderr.splitlines() if line.startswith("onnxprobe_torch: error:")]
        assert len(errors) == 1, r.stderr


def test_repeated_warnings_are_printed_once(tmp_path):
    (tmp_path / "noisy.py").write_text(
        "import warnings, torch\n"
        "class Noisy(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        for _ in range(5):\n"
        "            warnings.warn('this op is slow')\n"
        "            x = x + 1\n"
        "        return x\n")
    env = companion_env()
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    r = subprocess.run(["/usr/bin/python3", "-m", "onnxprobe_torch", "capture", "--model", "noisy:Noisy",
                        "--shape", "2x3", "-o", str(tmp_path / "c")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("this op is slow") == 1, r.stderr


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("what", ["export", "capture"])
def test_interrupted_writes_leave_nothing_behind(tmp_path, sig, what):
    # the writer is held right after its temporary appeared, then signalled
    script = tmp_path / "run.py"
    script.write_text(
        "import os, sys, time, torch, numpy, onnx\n"
        "import torch_models\n"
        "from onnxprobe_torch import capture, export\n"
        "slow = lambda real: (lambda *a, **k: (open(sys.argv[2], 'w').close(), time.sleep(60), real(*a, **k))[2])\n"
        "if sys.argv[1] == 'export':\n"
        "    onnx.load = slow(onnx.load)\n"
        "    export(torch_models.net(), torch.randn(1, 3, 8, 8), sys.argv[3])\n"
        "else:\n"
        "    numpy.save = slow(numpy.save)\n"
        "    capture(torch_models.net(), torch.randn(1, 3, 8, 8), sys.argv[3])\n")
    ready = tmp_path / "ready"
    target = tmp_path / ("m.onnx" if what == "export" else "cap")
    # SIGINT is ignored in background jobs; the companion is meant for a terminal, where it is not
    p = subprocess.Popen(["/usr/bin/python3", str(script), what, str(ready), str(target)], env=companion_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 240
    while not ready.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.1)
    assert ready.exists(), p.communicate()[1][-2000:]
    assert any(".tmp-" in f for f in os.listdir(tmp_path))  # the temporary is there now
    p.send_signal(getattr(signal, sig))
    p.communicate(timeout=60)
    assert p.returncode != 0
    left = sorted(f for f in os.listdir(tmp_path) if f not in ("run.py", "ready"))
    assert left == [], left


def test_verify_returns_the_report(tmp_path, onnxprobe):
    from onnxprobe_torch import alignment_summary, verify

    model, x = torch_zoo.build("two_inputs", *torch_zoo.HANDWRITTEN["two_inputs"])
    rep = verify(model, x, html=str(tmp_path / "r.html"), onnxprobe=onnxprobe, workdir=str(tmp_path / "w"))
    assert rep["verdict"] == "PASS" and rep["summary"]["failed"] == 0
    assert rep["side_a"]["description"].startswith("PyTorch capture")
    assert (tmp_path / "r.html").exists()
    assert alignment_summary(rep).startswith(f"alignment of {len(rep['alignment'])} PyTorch activations")
    # an existing ONNX file (made elsewhere, other input names): its names bind the capture
    torch.onnx.export(model, x, str(tmp_path / "own.onnx"), input_names=["img", "vec"], opset_version=13)
    rep = verify(model, x, onnx_path=str(tmp_path / "own.onnx"), onnxprobe=onnxprobe)
    assert rep["verdict"] == "PASS"
    assert [i["name"] for i in rep["inputs"]] == ["img", "vec"]


def test_verify_finds_the_binary_or_says_how(tmp_path, monkeypatch):
    from onnxprobe_torch import VerifyError, verify

    monkeypatch.delenv("ONNXPROBE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(VerifyError, match="ONNXPROBE_BIN"):
        verify(torch_models.net(), torch.randn(1, 3, 8, 8))


class _Scores(torch.nn.Module):
    """Attention-like functional code around a child module."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(4, 4)

    def forward(self, x):
        q = self.q(x)  # the child's own F.linear is the child's row, not a functional record
        s = torch.matmul(q, x.transpose(1, 2)) / 2.0
        return torch.softmax(s, dim=-1).reshape(s.shape[0], -1) * 3


def test_capture_records_functions_run_inside_a_module(tmp_path):
    model = _Scores()
    x = torch.randn(2, 3, 4)
    m = capture(model, x, str(tmp_path / "cap"), ["x"])
    _, t = manifest_of(tmp_path / "cap")
    fns = [(f["function"], f["ordinal"], f.get("input")) for f in m["torch"]["functional"]]
    # computed outputs in call order; the transposed view matmul reads is recorded as its input;
    # reshape (layout), the child's linear and the final mul (the call's own output row) are not
    assert fns == [("matmul", 0, 1), ("matmul", 0, None), ("div", 0, None), ("softmax", 0, None)], fns
    root = m["torch"]["calls"][0]
    assert all(f["call"] == 0 for f in m["torch"]["functional"]) and root["module"] == "model"
    with torch.no_grad():  # reference with numpy
        xn = x.numpy()
        q = xn @ model.q.weight.numpy().T + model.q.bias.numpy()
        s = np.matmul(q, xn.transpose(0, 2, 1)) / 2.0
        e = np.exp(s - s.max(-1, keepdims=True))
        p = e / e.sum(-1, keepdims=True)
    load = lambda name: np.load(tmp_path / "cap" / t[name]["file"])  # noqa: E731
    np.testing.assert_allclose(load("model::matmul:in1"), xn.transpose(0, 2, 1), rtol=1e-6)
    np.testing.assert_allclose(load("model::div"), s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(load("model::softmax"), p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(load("model"), 3 * p.reshape(2, -1), rtol=1e-5, atol=1e-6)
    assert t["model::softmax"]["functional"] == {"call": 0, "function": "softmax", "ordinal": 0}
    assert not any(n.startswith("q::") for n in t)
    # off, or past the budget: nothing inside modules, and the manifest says when it stopped
    m = capture(model, x, str(tmp_path / "off"), ["x"], functional=False)
    assert m["torch"]["functional"] == [] and not m["torch"]["functional_truncated"]
    m = capture(model, x, str(tmp_path / "small"), ["x"], functional_budget=200)
    assert m["torch"]["functional_truncated"] and len(m["torch"]["functional"]) < 4
