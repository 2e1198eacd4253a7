"""A second execution provider on this CPU: the PyPI onnxruntime-openvino build, installed by the
bootstrap as ONNX Runtime "1.24.1-openvino". Both sides run the same runtime version, side B on the
OpenVINO provider with CPU fallback disabled (docs/providers.md). Expectations come from the
injected fault (demo_cnn_faulty.onnx changes /features/features.3/Conv's weight) and from numpy
on the dumps each provider writes."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")
OPENVINO = ["--ort-version", "1.24.1-openvino"]
# OpenVINO's TBB loads libtbbbind with RTLD_DEEPBIND, which AddressSanitizer refuses (the process
# ends with its report): the sanitizer build cannot run this provider at all
runs_openvino = pytest.mark.skipif(
    os.environ.get("ONNXPROBE_SANITIZE") in ("1", "ON", "TRUE", "true"),
    reason="OpenVINO's TBB dlopens with RTLD_DEEPBIND, which AddressSanitizer refuses")


def _compare(onnxprobe, tmp_path, *args):
    out = tmp_path / "r.json"
    r = run([onnxprobe, "compare", *args, *OPENVINO, "--b-provider", "OpenVINO", "--json", out])
    return r, (json.loads(out.read_text()) if out.exists() else None)


def test_the_bootstrap_installed_the_openvino_build():
    lib = os.path.join(SRC, ".deps", "ort", "1.24.1-openvino", "lib")
    assert os.path.exists(os.path.join(lib, "libonnxruntime.so.1.24.1")), "run scripts/bootstrap.sh"
    assert os.path.exists(os.path.join(lib, "libonnxruntime_providers_openvino.so"))


@runs_openvino
def test_openvino_against_cpu_on_one_runtime(onnxprobe, tmp_path):
    r, rep = _compare(onnxprobe, tmp_path, DEMO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["side_a"]["runtime_version"] == rep["side_b"]["runtime_version"] == "1.24.1"
    assert rep["side_b"]["provider"].startswith("OpenVINO")
    # OpenVINO's kernels really ran: its values differ from the CPU provider's somewhere, which
    # numpy confirms on the dumps each provider writes
    dumps = {}
    for provider in ("CPU", "OpenVINO"):
        d = tmp_path / f"{provider}.dump"
        rr = run([onnxprobe, "run", DEMO, "-o", d, *OPENVINO, "--provider", provider])
        assert rr.returncode == 0, rr.stderr
        manifest = json.loads((d / "manifest.json").read_text())
        dumps[provider] = {t["name"]: np.load(d / t["file"]) for t in manifest["tensors"] if t["kind"] == "tensor"}
    differ = [n for n in dumps["CPU"] if not np.array_equal(dumps["CPU"][n], dumps["OpenVINO"][n])]
    assert differ, "OpenVINO and CPU agree bit for bit everywhere: was OpenVINO used?"
    rows = {t["name"]: t for t in rep["tensors"]}
    for n in differ:
        d = np.abs(dumps["CPU"][n].astype(np.float64) - dumps["OpenVINO"][n])
        assert rows[n]["max_abs"] == pytest.approx(d.max(), rel=1e-6, abs=1e-12), n


@runs_openvino
def test_a_changed_weight_is_named_on_openvino(onnxprobe, tmp_path):
    r, rep = _compare(onnxprobe, tmp_path, DEMO, FAULTY)
    assert r.returncode == 1, r.stdout + r.stderr
    introduced = [c["node"] for c in rep["localization"]["culprits"] if c["introduced"]]
    assert introduced[:1] == ["/features/features.3/Conv"], introduced


@runs_openvino
def test_a_node_openvino_does_not_take_is_no_silent_fallback(onnxprobe, tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Hardmax", ["r"], ["h"], name="hardmax", axis=1),  # not in OpenVINO's list
             helper.make_node("Add", ["h", "r"], ["y"], name="add")]
    path = tmp_path / "hardmax.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(path))
    r = run([onnxprobe, "compare", path, *OPENVINO, "--b-provider", "OpenVINO"])
    assert r.returncode in (2, 3), r.stdout
    assert "CPU fallback is disabled" in r.stderr and "OpenVINOExecutionProvider" in r.stderr
    ok = run([onnxprobe, "compare", path, *OPENVINO, "--b-opt-level", "all"])  # the CPU provider runs it
    assert ok.returncode == 0, ok.stderr


def test_a_runtime_without_openvino_names_the_one_installed_with_it(onnxprobe):
    r = run([onnxprobe, "compare", DEMO, "--b-provider", "OpenVINO", "--ort-version", "1.32.0"])
    assert r.returncode == 2 and "is not available" in r.stderr, r.stderr
    assert "--ort-version 1.24.1-openvino" in r.stderr, r.stderr


@runs_openvino
def test_openvino_named_without_a_runtime_runs_on_the_installed_one(onnxprobe, tmp_path):
    out = tmp_path / "r.json"
    r = run([onnxprobe, "compare", DEMO, "--b-provider", "OpenVINO", "--json", out])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    # both sides on the one runtime that has the provider, so that only the provider differs
    assert rep["side_a"]["runtime_version"] == rep["side_b"]["runtime_version"] == "1.24.1"
    assert rep["side_b"]["provider"].startswith("OpenVINO")
    assert any("1.24.1-openvino" in n and "OpenVINOExecutionProvider" in n for n in rep["notes"]), rep["notes"]


def _hardmax_chain(tmp_path):
    """Relu -> Hardmax -> Sigmoid: Hardmax is not among the operators OpenVINO's provider takes,
    and a chain (no skip connection around it) lets ONNX Runtime split the graph around it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Hardmax", ["r"], ["h"], name="hardmax", axis=1),
             helper.make_node("Sigmoid", ["h"], ["y"], name="sigmoid")]
    path = tmp_path / "hardmax_chain.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@runs_openvino
def test_refused_fallback_names_the_nodes_and_allowed_fallback_lists_them(onnxprobe, tmp_path):
    path = _hardmax_chain(tmp_path)
    r = run([onnxprobe, "compare", path, *OPENVINO, "--b-provider", "OpenVINO"])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "hardmax (Hardmax)" in lines[0], r.stderr
    assert "CPU fallback is disabled" in lines[0] and "--allow-fallback" in lines[0]
    # allowed: the comparison runs, and the report says what ran where
    out = tmp_path / "r.json"
    r = run([onnxprobe, "compare", path, *OPENVINO, "--b-provider", "OpenVINO",
             "--b-allow-fallback", "--json", out])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    placed = rep["placement"]["b"]
    assert rep["placement"]["a"] is None
    assert placed["provider"] == "OpenVINOExecutionProvider" and placed["model_nodes"] == 3
    assert "hardmax (Hardmax)" in placed["on_cpu"] and "sigmoid (Sigmoid)" not in placed["on_cpu"]
    assert placed["partitions"], "OpenVINO ran nothing"
    assert any("the CPU provider runs" in n and "hardmax" in n for n in rep["notes"])
    assert rep["summary"]["compared"] == 3
    # each row says which provider computed its node on side B
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["h"]["provider_b"] == "CPUExecutionProvider"
    assert rows["y"]["provider_b"] == "OpenVINOExecutionProvider"
    # (OpenVINO also leaves the lone Relu before Hardmax to the CPU provider: a partition of one
    # node; the rows follow the runtime's trace, as the placement does)
    for name, t in rows.items():
        on_cpu = any(n.split(" (")[0] == t["node"] for n in placed["on_cpu"])
        assert t["provider_b"] == ("CPUExecutionProvider" if on_cpu else "OpenVINOExecutionProvider"), name
    assert "provider_a" not in rows["r"]  # side A's placement was not looked for (CPU)


def _attention_block(path):
    """A transformer-style block as exporters write it: a Constant scale, an Identity sharing a
    weight (the LayerNorm gain), MatMul / Softmax / Erf (GELU) / decomposed LayerNorm."""
    rng = np.random.default_rng(0)
    d = 16
    w = {n: rng.standard_normal(s).astype(np.float32) * 0.3
         for n, s in (("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("w1", (d, 2 * d)), ("w2", (2 * d, d)))}
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    inits.append(numpy_helper.from_array(np.ones(d, np.float32), "gain"))
    inits.append(numpy_helper.from_array(np.array([-1], np.int64), "axes"))
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q"], name="q"), n("MatMul", ["x", "wk"], ["k"], name="k"),
        n("MatMul", ["x", "wv"], ["v"], name="v"),
        n("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["s"], name="scores"),
        n("Constant", [], ["scale"], name="scale", value=numpy_helper.from_array(np.array(0.25, np.float32))),
        n("Mul", ["s", "scale"], ["ss"], name="scaled"),
        n("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
        n("MatMul", ["p", "v"], ["a"], name="attend"),
        n("Add", ["a", "x"], ["r"], name="residual"),
        n("ReduceMean", ["r"], ["mu"], name="mean", axes=[-1]),
        n("Sub", ["r", "mu"], ["c"], name="center"),
        n("Mul", ["c", "c"], ["c2"], name="square"),
        n("ReduceMean", ["c2"], ["var"], name="var", axes=[-1]),
        n("Constant", [], ["eps"], name="eps", value=numpy_helper.from_array(np.array(1e-5, np.float32))),
        n("Add", ["var", "eps"], ["ve"], name="var_eps"),
        n("Sqrt", ["ve"], ["sd"], name="sd"),
        n("Div", ["c", "sd"], ["nrm"], name="normalize"),
        n("Identity", ["gain"], ["gain_shared"], name="share_gain"),
        n("Mul", ["nrm", "gain_shared"], ["ln"], name="gain"),
        n("MatMul", ["ln", "w1"], ["h"], name="fc1"),
        n("Constant", [], ["rsqrt2"], name="rsqrt2", value=numpy_helper.from_array(np.array(0.70710677, np.float32))),
        n("Mul", ["h", "rsqrt2"], ["hs"], name="gelu_scale"), n("Erf", ["hs"], ["e"], name="erf"),
        n("Constant", [], ["one"], name="one", value=numpy_helper.from_array(np.array(1.0, np.float32))),
        n("Add", ["e", "one"], ["e1"], name="gelu_add"), n("Mul", ["h", "e1"], ["he"], name="gelu_mul"),
        n("Constant", [], ["half"], name="half", value=numpy_helper.from_array(np.array(0.5, np.float32))),
        n("Mul", ["he", "half"], ["g"], name="gelu"),
        n("MatMul", ["g", "w2"], ["y"], name="fc2"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, d])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, d])
    model = helper.make_model(helper.make_graph(nodes, "block", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))
    return {"scale", "eps", "rsqrt2", "one", "half", "gain_shared"}


@runs_openvino
def test_a_transformer_block_on_openvino(onnxprobe, tmp_path):
    path = tmp_path / "block.onnx"
    fixed = _attention_block(path)
    r, rep = _compare(onnxprobe, tmp_path, path)
    assert r.returncode == 0, r.stdout + r.stderr
    # values fixed by the model alone are not captured on OpenVINO (it folds them: a Constant
    # marked as an output fails the session, an Identity of a weight comes back as zeros)
    assert fixed <= set(rep["fused_in_b"]), rep["fused_in_b"]
    rows = {t["name"]: t for t in rep["tensors"]}
    assert not fixed & set(rows) and {"softmax", "erf"} <= {t["node"] for t in rows.values()}
    # the measured differences are numpy's on the dumps each provider writes, and OpenVINO's
    # outputs do not change when every other tensor is captured
    dumps = {}
    for provider in ("CPU", "OpenVINO"):
        d = tmp_path / f"{provider}.dump"
        rr = run([onnxprobe, "run", path, "-o", d, *OPENVINO, "--provider", provider, "--check-observer"])
        assert rr.returncode == 0, rr.stderr
        assert "bit-identical with and without capture" in rr.stdout, rr.stdout
        manifest = json.loads((d / "manifest.json").read_text())
        dumps[provider] = {t["name"]: np.load(d / t["file"]) for t in manifest["tensors"] if t["kind"] == "tensor"}
    for name, row in rows.items():
        diff = np.abs(dumps["CPU"][name].astype(np.float64) - dumps["OpenVINO"][name]).max()
        assert row["max_abs"] == pytest.approx(diff, rel=1e-6, abs=1e-12), name
