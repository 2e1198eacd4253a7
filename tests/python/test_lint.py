"""onnxprobe lint: one crafted model per finding (exact code and node), clean exports lint clean,
exit codes, and the runtime check against what ONNX Runtime really loads."""
import json
import math
import os

import numpy as np
import pytest

import lint_models as lm
from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")


def lint(onnxprobe, path, *args, runtime="1.23.2"):
    extra = ["--runtime-version", runtime] if runtime else []
    r = run([onnxprobe, "lint", path, "--json", "--fail-on", "none", *extra, *args])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["schema"] == "onnxprobe-lint"
    return report


def found(report):
    return sorted((f["code"], f["node"], f["severity"]) for f in report["findings"])


CASES = [
    (lm.dropout_training, [("OP001", "drop", "error")]),
    (lm.dropout_runtime_mode, [("OP001", "drop", "warning")]),
    (lm.batchnorm_training, [("OP002", "bn", "error")]),
    (lm.reshape_baked, [("OP003", "flatten", "warning")]),
    (lm.reshape_dynamic, []),
    (lm.expand_baked, [("OP003", "expand_cls", "warning")]),
    (lm.resize_half_pixel_to_one, [("OP004", "resize", "info")] * 2),  # to 1 px, downsampling
    (lm.fp16_mask, [("OP005", "masked", "warning")]),
    (lm.fp16_tiny_eps, [("OP005", "add_eps", "warning")]),
    (lm.duplicate_initializers, [("OP006", "mm2", "info")]),
    (lm.unused_initializer, [("OP007", None, "info")]),
    (lm.unused_input, [("OP008", None, "warning")]),
    (lm.dead_node, [("OP009", "side", "warning")]),
    (lm.custom_domain, [("OP011", "gelu", "info"), ("OP011", "mine", "warning")]),
    (lm.node_names, [("OP012", "", "info"), ("OP012", "act", "info")]),
    (lm.scatter_nd_duplicates, [("OP013", "scatter", "warning")]),
    (lm.scatter_elements_duplicates, [("OP013", "scatter", "warning")]),
    (lm.scatter_elements_unique, []),
    (lm.scatter_runtime_indices, [("OP013", "scatter", "info")]),
    (lambda p: lm.layernorm(p, lm.F16), [("OP014", "ln/pow", "warning")]),
    (lambda p: lm.layernorm(p, lm.F), []),
]


@pytest.mark.parametrize("make,expected", CASES, ids=[
    "dropout", "dropout_runtime", "batchnorm", "reshape", "reshape_ok", "expand", "resize_1px",
    "fp16_mask", "fp16_eps", "duplicates", "unused_init", "unused_input", "dead_node", "custom",
    "names", "scatter_nd", "scatter_elements", "scatter_unique", "scatter_runtime",
    "layernorm_fp16", "layernorm_fp32"])
def test_each_finding(onnxprobe, tmp_path, make, expected):
    path = make(tmp_path / "m.onnx")
    report = lint(onnxprobe, path)
    assert found(report) == sorted(expected), json.dumps(report["findings"], indent=1)
    for f in report["findings"]:
        assert f["message"] and f["why"] and f["fix"]


def test_finding_details_name_the_evidence(onnxprobe, tmp_path):
    r = lint(onnxprobe, lm.fp16_mask(tmp_path / "m.onnx"))
    f = r["findings"][0]
    assert f["tensor"] == "neg" and "-1e+09" in f["message"] and f["op_type"] == "Where"
    r = lint(onnxprobe, lm.scatter_nd_duplicates(tmp_path / "s.onnx"))
    assert "[1]" in r["findings"][0]["message"] and "updates 0 and 2" in r["findings"][0]["message"]
    r = lint(onnxprobe, lm.unused_initializer(tmp_path / "u.onnx"))
    assert r["findings"][0]["tensor"] == "stale"
    r = lint(onnxprobe, lm.reshape_baked(tmp_path / "r.onnx"))
    assert "'batch'" in r["findings"][0]["message"] and r["findings"][0]["tensor"] == "shape"


def nearest_indices(n_out, scale, rounding):
    """ONNX Resize nearest, asymmetric: x_in = x_out / scale, then `rounding`."""
    pos = np.arange(n_out, dtype=np.float32) / np.float32(scale)
    if rounding == "floor":
        return np.floor(pos).astype(int)
    # round_prefer_floor: halves go down
    return np.where(pos - np.floor(pos) > 0.5, np.floor(pos) + 1, np.floor(pos)).astype(int)


@pytest.mark.parametrize("scale", [2, 3, 1.5, 0.5])
def test_resize_nearest_flagged_exactly_when_rounding_differs_from_floor(onnxprobe, tmp_path,
                                                                         scale):
    # reference: do floor and round_prefer_floor pick different source pixels at this scale?
    n_out = int(math.floor(8 * scale))
    differs = bool(np.any(nearest_indices(n_out, scale, "floor") !=
                          nearest_indices(n_out, scale, "round_prefer_floor")))
    path = lm.resize(tmp_path / "m.onnx", "nearest", "asymmetric", scales=(1, 1, scale, scale))
    expected = [("OP004", "resize", "warning")] if differs else []
    assert found(lint(onnxprobe, path)) == expected
    assert differs == (scale in (3, 1.5))  # the reference itself, pinned


def test_resize_nearest_floor_and_linear_modes(onnxprobe, tmp_path):
    # floor is PyTorch's nearest: clean
    p = lm.resize(tmp_path / "a.onnx", "nearest", "asymmetric", "floor")
    assert found(lint(onnxprobe, p)) == []
    # linear + asymmetric has no PyTorch equivalent
    p = lm.resize(tmp_path / "b.onnx", "linear", "asymmetric")
    assert found(lint(onnxprobe, p)) == [("OP004", "resize", "warning")]
    # linear + pytorch_half_pixel upsampling: what torch exports for align_corners=False
    p = lm.resize(tmp_path / "c.onnx", "linear", "pytorch_half_pixel")
    assert found(lint(onnxprobe, p)) == []
    # linear downsampling without antialias
    p = lm.resize(tmp_path / "d.onnx", "linear", "pytorch_half_pixel", scales=(1, 1, 0.5, 0.5))
    assert found(lint(onnxprobe, p)) == [("OP004", "resize", "info")]


@pytest.mark.parametrize("version,opset,ir,loads", [
    ("1.20.1", 21, 10, True), ("1.20.1", 22, 10, False), ("1.20.1", 21, 11, False),
    ("1.32.0", 28, 14, True), ("1.32.0", 29, 14, False), ("1.32.0", 28, 15, False)])
def test_runtime_support_agrees_with_the_runtime(onnxprobe, tmp_path, version, opset, ir, loads):
    """OP010 with the version asked of the loaded library, against whether that library really
    loads the model."""
    path = lm.opset(tmp_path / "m.onnx", opset, ir)
    r = run([onnxprobe, "run", path, "--ort-version", version, "-o", tmp_path / "out.npz"])
    assert (r.returncode == 0) == loads, r.stderr
    report = lint(onnxprobe, path, "--ort-version", version, runtime=None)
    assert report["runtime_version"] == version
    assert found(report) == ([] if loads else [("OP010", None, "error")])


def test_runtime_support_unknown_version_is_a_note(onnxprobe, tmp_path):
    path = lm.opset(tmp_path / "m.onnx", 13, 8)
    report = lint(onnxprobe, path, runtime="9.1")
    assert found(report) == [] and any("9.1" in n for n in report["notes"])


def test_demo_model_lints_clean(onnxprobe):
    report = lint(onnxprobe, DEMO, runtime=None)
    assert report["findings"] == [] and len(report["rules_run"]) == 14
    r = run([onnxprobe, "lint", DEMO])
    assert r.returncode == 0 and "0 findings" in r.stdout


def test_exit_codes_and_fail_on(onnxprobe, tmp_path):
    warn = lm.unused_input(tmp_path / "w.onnx")  # one warning
    err = lm.dropout_training(tmp_path / "e.onnx")  # one error
    assert run([onnxprobe, "lint", warn]).returncode == 0  # default: fail on errors only
    assert run([onnxprobe, "lint", warn, "--fail-on", "warning"]).returncode == 1
    assert run([onnxprobe, "lint", err]).returncode == 1
    assert run([onnxprobe, "lint", err, "--fail-on", "none"]).returncode == 0
    assert run([onnxprobe, "lint", err, "--disable", "OP001"]).returncode == 0
    r = run([onnxprobe, "lint", err])
    assert "error OP001 dropout-training-mode at drop (Dropout #0)" in r.stdout
    assert "why:" in r.stdout and "fix:" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--fail-on", "severe"], "'severe'"),
    (["--disable", "OP999"], "OP999"),
    (["--runtime-version", "1.20", "--ort-version", "1.20.1"], "one of"),
    (["--list-rules"], "takes no MODEL"),
    ([], "no such file"),
])
def test_bad_input_exits_2(onnxprobe, tmp_path, args, needle):
    model = lm.unused_input(tmp_path / "m.onnx") if args else tmp_path / "missing.onnx"
    r = run([onnxprobe, "lint", model, *args])
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_list_rules(onnxprobe):
    r = run([onnxprobe, "lint", "--list-rules"])
    assert r.returncode == 0
    codes = [line.split()[0] for line in r.stdout.splitlines()]
    assert codes == [f"OP{i:03d}" for i in range(1, 15)]


# --- real exports (Debian torch 1.13) ------------------------------------------------------

import torch  # noqa: E402  Debian's python3-torch, a requirement of the suite: no skip
import torchvision  # noqa: E402


def export(model, x, path, opset=13, dynamic=True, **kw):
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None
    torch.onnx.export(model, x, str(path), opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes=axes, **kw)
    return path


def test_torchvision_export_lints_clean(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    path = export(model, torch.randn(1, 3, 64, 64), tmp_path / "resnet18.onnx")
    report = lint(onnxprobe, path)
    assert report["findings"] == [], json.dumps(report["findings"], indent=1)


class Flatten(torch.nn.Module):
    def __init__(self, baked):
        super().__init__()
        self.baked = baked
        self.fc = torch.nn.Linear(12, 2)

    def forward(self, x):
        n = 1 if self.baked else x.shape[0]
        return self.fc(x.reshape(n, -1))


@pytest.mark.parametrize("baked", [True, False])
def test_baked_reshape_from_a_real_export(onnxprobe, tmp_path, baked):
    """The reference is the runtime: a baked shape fails with batch 3, the dynamic one runs."""
    path = export(Flatten(baked).eval(), torch.randn(1, 3, 4), tmp_path / "m.onnx")
    r = run([onnxprobe, "run", path, "--shape", "x:3x3x4", "-o", tmp_path / "out.npz"])
    assert (r.returncode != 0) == baked, r.stderr
    codes = [f["code"] for f in lint(onnxprobe, path)["findings"]]
    assert codes == (["OP003"] if baked else [])


class DropBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)))


def test_training_mode_export(onnxprobe, tmp_path):
    torch.manual_seed(0)
    path = export(DropBn().train(), torch.randn(2, 3, 8, 8), tmp_path / "train.onnx",
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    codes = sorted(f["code"] for f in lint(onnxprobe, path)["findings"] if f["severity"] == "error")
    assert codes == ["OP001", "OP002"]
    path = export(DropBn().eval(), torch.randn(2, 3, 8, 8), tmp_path / "eval.onnx")
    assert lint(onnxprobe, path)["findings"] == []


def to_float16(model):
    """A naive float32 -> float16 conversion (weights, constants, casts, declared types)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    def convert(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))

    g = model.graph
    for t in g.initializer:
        convert(t)
    for n in g.node:
        for a in n.attribute:
            if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                convert(a.t)
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    return model


def test_layernorm_fp16_in_a_real_export(onnxprobe, tmp_path):
    """A small ViT exported at opset 13 decomposes each LayerNorm; in float32 that is fine, in
    float16 every one is flagged at its Pow node (the reference: the Pow nodes of the file)."""
    import sys
    import onnx
    sys.path.insert(0, os.path.join(SRC, "tests", "localize"))
    from make_fault_cases import TinyVit
    torch.manual_seed(0)
    path = export(TinyVit().eval(), torch.randn(1, 3, 16, 16), tmp_path / "vit.onnx")
    assert lint(onnxprobe, path)["findings"] == []
    model = onnx.load(str(path))
    pows = sorted(n.name for n in model.graph.node if n.op_type == "Pow")
    assert len(pows) == 5
    onnx.save(to_float16(model), str(tmp_path / "vit16.onnx"))
    report = lint(onnxprobe, tmp_path / "vit16.onnx")
    assert found(report) == [("OP014", p, "warning") for p in pows]
