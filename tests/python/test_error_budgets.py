"""Verdicts no noise can buy (docs/metrics.md, "Error budgets"): no tolerance grows by what an
upstream deviation put there, every node that introduces an error is named, an input that is NaN
everywhere is refused, and a PyTorch container module is never a culprit. Every expectation comes
from the injected fault or from numpy, never from the tool's own output."""
import json
import os
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "python"))
from conftest import run  # noqa: E402
from onnxprobe_torch import capture, export  # noqa: E402

SRC = os.environ.get("ONNXPROBE_SRC", "")
CHANNELS, STEPS = 8, 4


def _report(tmp_path, r):
    return json.loads((tmp_path / "r.json").read_text()) if (tmp_path / "r.json").exists() else None


def _compare(onnxprobe, tmp_path, *args):
    r = run([onnxprobe, "compare", *args, "--json", tmp_path / "r.json"])
    return r, _report(tmp_path, r)


def _introduced(rep):
    return sorted(c["node"] for c in rep["localization"]["culprits"] if c["introduced"])


# ---- PyTorch vs ONNX: a sub-tolerance deviation upstream loosens nothing downstream -----------

class Scale(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor(w).reshape(1, CHANNELS, 1, 1))

    def forward(self, x):
        return x * self.weight


class MulChain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(3)
        self.steps = torch.nn.ModuleList(
            [Scale(rng.uniform(0.5, 2.0, CHANNELS).astype(np.float32)) for _ in range(STEPS)])

    def forward(self, x):
        for s in self.steps:
            x = s(x)
        return x


def _mul_nodes(m):
    return [n for n in m.graph.node if n.op_type == "Mul"]


def _scale_weight(m, node, factor, channel=None):
    init = next(i for i in m.graph.initializer if i.name in node.input)
    w = numpy_helper.to_array(init).copy()
    if channel is None:
        w *= np.float32(factor)
    else:
        w.reshape(-1)[channel] *= np.float32(factor)
    init.CopyFrom(numpy_helper.from_array(w, init.name))


def _insert_fp16_round_trip(m, tensor):
    """Cast `tensor` to float16 and back; every reader of it reads the round trip instead."""
    half, back = tensor + "_fp16", tensor + "_back"
    for n in m.graph.node:
        for k, x in enumerate(n.input):
            if x == tensor:
                n.input[k] = back
    at = next(i for i, n in enumerate(m.graph.node) if tensor in n.output) + 1
    m.graph.node.insert(at, helper.make_node("Cast", [tensor], [half], name="rt_to_fp16",
                                             to=TensorProto.FLOAT16))
    m.graph.node.insert(at + 1, helper.make_node("Cast", [half], [back], name="rt_to_fp32",
                                                 to=TensorProto.FLOAT))


def test_a_fault_after_a_sub_tolerance_round_trip_fails_and_is_named(onnxprobe, tmp_path):
    model = MulChain().eval()
    x = torch.randn(2, CHANNELS, 6, 6, generator=torch.Generator().manual_seed(5))
    path, cap = tmp_path / "chain.onnx", tmp_path / "chain.cap"
    export(model, x, str(path))
    capture(model, x, str(cap), onnx_path=str(path))
    m = onnx.load(str(path))
    muls = _mul_nodes(m)
    assert len(muls) == STEPS
    _insert_fp16_round_trip(m, muls[0].output[0])
    _scale_weight(m, muls[2], 1.002)  # 0.2%: twice the default rtol
    onnx.save(m, str(tmp_path / "faulty.onnx"))

    # independent reference: the float16 round trip alone is within the default rtol (1e-3)
    # everywhere, and step 3's change is twice it
    y1 = model.steps[0](x).detach().numpy()
    rt = y1.astype(np.float16).astype(np.float32)
    assert np.max(np.abs(rt - y1) / np.abs(y1)) < 1e-3

    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "faulty.onnx")
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert rep["verdict"] == "FAIL"
    assert muls[2].name in _introduced(rep), rep["localization"]["culprits"]
    # every row is judged at the given tolerance: none was raised by the rows before it
    for t in rep["tensors"]:
        assert t["atol"] == pytest.approx(1e-5), t["name"]
    # the round trip itself stays within tolerance and is reported where differences are born
    assert "rt_to_fp16" in [d["node"] for d in rep["drift_origins"]] + \
        [n for d in rep["drift_origins"] for n in d.get("nodes", [])]


# ---- ONNX vs ONNX: a second fault with little growth over the first is still named ------------

def _chain(path, weights):
    nodes, inits, prev = [], [], "x"
    for k, w in enumerate(weights):
        inits.append(numpy_helper.from_array(w.reshape(1, CHANNELS, 1, 1), f"w{k}"))
        nodes.append(helper.make_node("Mul", [prev, f"w{k}"], [f"y{k}"], name=f"step{k + 1}"))
        prev = f"y{k}"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, CHANNELS, 5, 5])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, CHANNELS, 5, 5])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def test_a_second_fault_that_barely_grows_the_error_is_named_too(onnxprobe, tmp_path):
    rng = np.random.default_rng(7)
    w = [rng.uniform(0.5, 2.0, CHANNELS).astype(np.float32) for _ in range(STEPS)]
    _chain(tmp_path / "a.onnx", w)
    faulty = [x.copy() for x in w]
    faulty[0] *= np.float32(1.05)
    faulty[2] *= np.float32(1.002)
    _chain(tmp_path / "b.onnx", faulty)
    # independent reference: run alone on A's input, step 3 of B differs by 0.2% > rtol 1e-3,
    # while the error it carries grows by less than 1 dB over what step 1 put there
    x = rng.standard_normal((2, CHANNELS, 5, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    a2 = x * w[0].reshape(1, -1, 1, 1) * w[1].reshape(1, -1, 1, 1)
    alone = a2 * faulty[2].reshape(1, -1, 1, 1)
    expected = a2 * w[2].reshape(1, -1, 1, 1)
    assert np.max(np.abs(alone - expected) / np.abs(expected)) > 1.5e-3
    r, rep = _compare(onnxprobe, tmp_path, tmp_path / "a.onnx", tmp_path / "b.onnx", "--input",
                      f"x={tmp_path / 'x.npy'}")
    assert r.returncode == 1, r.stdout[-3000:]
    assert _introduced(rep) == ["step1", "step3"]
    roles = {t["node"]: t["role"] for t in rep["tensors"]}
    assert roles == {"step1": "introduced", "step2": "inherited", "step3": "introduced", "step4": "inherited"}


# ---- inputs that are NaN/Inf --------------------------------------------------------------------

DEMO = os.path.join(SRC, "tests", "data", "demo")


def test_an_all_nan_input_is_refused_naming_it(onnxprobe, tmp_path):
    x = np.full((2, 3, 32, 32), np.nan, np.float32)
    np.save(tmp_path / "input.npy", x)
    args = [os.path.join(DEMO, "demo_cnn.onnx"), os.path.join(DEMO, "demo_cnn_faulty.onnx"), "--input",
            tmp_path / "input.npy"]
    r, rep = _compare(onnxprobe, tmp_path, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "input 'input'" in lines[0] and "input.npy" in lines[0], r.stderr
    assert rep is None and not (tmp_path / "r.json").exists()
    # allowed explicitly: NaN everywhere on both sides compares equal, and the report says why
    r = run([onnxprobe, "compare", *args, "--allow-nonfinite-inputs", "--json", tmp_path / "ok.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "ok.json").read_text())
    assert len(rep["nonfinite_inputs"]) == 1 and "100%" in rep["nonfinite_inputs"][0]
    assert r.stdout.splitlines()[0].startswith("warning: input 'input'")


def test_a_partly_nan_input_is_compared_and_its_share_stated_first(onnxprobe, tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    x[0, 0, :8, :] = np.nan  # 256 of 6144 values
    np.save(tmp_path / "input.npy", x)
    share = 100 * np.count_nonzero(~np.isfinite(x)) / x.size
    r, rep = _compare(onnxprobe, tmp_path, os.path.join(DEMO, "demo_cnn.onnx"),
                      os.path.join(DEMO, "demo_cnn_faulty.onnx"), "--input", tmp_path / "input.npy")
    assert r.returncode == 1, r.stdout + r.stderr
    assert len(rep["nonfinite_inputs"]) == 1
    assert f"{share:.3g}%" in rep["nonfinite_inputs"][0] and "256 NaN" in rep["nonfinite_inputs"][0]
    assert r.stdout.splitlines()[0].startswith("warning: input 'input'")
    # `run` says so in one line
    r = run([onnxprobe, "run", os.path.join(DEMO, "demo_cnn.onnx"), "--input", tmp_path / "input.npy", "-o",
             tmp_path / "d.dump"])
    assert r.returncode == 0, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if "warning:" in ln]
    assert len(warnings) == 1 and "input 'input'" in warnings[0] and "NaN" in warnings[0]


# ---- a PyTorch container module is never a culprit ---------------------------------------------

def test_container_modules_are_not_named(onnxprobe, tmp_path):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    path, cap = tmp_path / "r18.onnx", tmp_path / "r18.cap"
    export(model, x, str(path))
    capture(model, x, str(cap), onnx_path=str(path))
    m = onnx.load(str(path))
    target = next(n for n in m.graph.node if n.name == "/layer3/layer3.1/conv1/Conv")
    init = next(i for i in m.graph.initializer if i.name == target.input[1])
    w = numpy_helper.to_array(init).copy()
    w.reshape(-1)[0] += np.float32(0.5) * np.abs(w).max()
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    onnx.save(m, str(tmp_path / "faulty.onnx"))
    r, rep = _compare(onnxprobe, tmp_path, cap, tmp_path / "faulty.onnx")
    assert r.returncode == 1, r.stdout[-3000:]
    introduced = [t for t in rep["tensors"] if t["role"] == "introduced"]
    assert [t["node"] for t in introduced] == [target.name], [(t["name"], t["node"]) for t in introduced]
    # the row standing for it is the smallest module, never layer3 or layer4
    frontier = rep["summary"]["frontier"]
    assert len(frontier) == 1 and frontier[0].startswith("layer3.1."), frontier
    block = r.stdout[r.stdout.index("error introduced at"):]
    named = [ln for ln in block.splitlines()[1:] if ln.startswith("  ") and "->" in ln]
    assert len(named) == 1 and target.name in named[0], block[:2000]


# ---- a BatchNorm folded into the convolution before it, whatever its scale ---------------------

class _NormAct(torch.nn.BatchNorm2d):
    """A BatchNorm with its activation built in, whose trailing children may be Identity."""

    def __init__(self, c, act=True):
        super().__init__(c)
        self.drop = torch.nn.Identity()
        self.act = torch.nn.ReLU() if act else torch.nn.Identity()

    def forward(self, x):
        x = torch.nn.functional.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                           self.training, self.momentum, self.eps)
        return self.act(self.drop(x))


class _ResBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = _NormAct(c)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = _NormAct(c, act=False)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(x + self.bn2(self.conv2(self.bn1(self.conv1(x)))))


class _ResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.stem_bn = _NormAct(16)
        self.blocks = torch.nn.Sequential(_ResBlock(16), _ResBlock(16))
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.blocks(self.stem_bn(self.stem(x))).mean((2, 3)))


@pytest.mark.parametrize("scale", ["zero", "pruned"])
def test_a_folded_norm_with_zero_or_pruned_scale_is_no_false_alarm(onnxprobe, tmp_path, scale):
    torch.manual_seed(0)
    model = _ResNet()
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(4, 3, 16, 16))
    for b in model.blocks:  # the last norm of each residual block starts at zero, or is pruned
        with torch.no_grad():
            if scale == "zero":
                b.bn2.weight.zero_()
            else:
                b.bn2.weight[::2] = 0
    model.eval()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    path, cap = tmp_path / "m.onnx", tmp_path / "m.cap"
    export(model, x, str(path))
    capture(model, x, str(cap), onnx_path=str(path))
    r, rep = _compare(onnxprobe, tmp_path, cap, path)
    assert r.returncode == 0, r.stdout[-4000:]
    # the convolution's own (pre-norm) output is never paired with the convolution that carries
    # the fold: PyTorch's conv2 output is non-zero where the folded one is zero
    al = {a["torch"]: a for a in rep["alignment"]}
    for k in range(2):
        assert al[f"blocks.{k}.conv2"]["onnx"] is None, al[f"blocks.{k}.conv2"]


# ---- a culprit computes: a changed weight read through a Transpose names the MatMul ------------

def test_a_changed_weight_read_through_a_transpose_names_the_matmul(onnxprobe, tmp_path):
    rng = np.random.default_rng(11)
    w = rng.standard_normal((6, 5)).astype(np.float32)

    def save(path, weight):
        nodes = [helper.make_node("Transpose", ["w"], ["wt"], name="w_t", perm=[1, 0]),
                 helper.make_node("MatMul", ["x", "wt"], ["h"], name="proj"),
                 helper.make_node("Relu", ["h"], ["y"], name="act")]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 6])],
                              [numpy_helper.from_array(weight, "w")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))

    save(tmp_path / "a.onnx", w)
    bad = w.copy()
    bad[2, 3] *= np.float32(1.5)  # the injected fault: one weight element the MatMul reads
    save(tmp_path / "b.onnx", bad)
    r, rep = _compare(onnxprobe, tmp_path, tmp_path / "a.onnx", tmp_path / "b.onnx")
    assert r.returncode == 1, r.stdout
    top = rep["localization"]["culprits"][0]
    assert top["introduced"] and top["node"] == "proj" and "w_t" in top["nodes"], top
