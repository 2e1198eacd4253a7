"""A plugin execution provider (ONNX Runtime 1.23's plugin EP API) registered with
--provider-library: the example provider of examples/plugin_ep (its own float32 kernels for
MatMul, Softmax, Add/Sub/Mul/Div and a few elementwise ops, each node compiled alone) against the
CPU provider. Expectations come from numpy (the model computed in float64 and the dumps each
provider writes), the injected faults (a weight scaled on side B's model; the provider's
approximate exp, which Sigmoid is the first node to use) and the op types the example documents
it takes."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run

LIB = os.environ.get("ONNXPROBE_EXAMPLE_EP", "")
EP = "OnnxprobeExample"
# what examples/plugin_ep/example_ep.cc says it takes
TAKES = {"MatMul", "Softmax", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Exp", "Neg",
         "Abs", "Sqrt"}

pytestmark = pytest.mark.skipif(not LIB, reason="ONNXPROBE_EXAMPLE_EP is not set (run through ctest)")


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"w1": rng.standard_normal((64, 96)).astype(np.float32) / 8,
            "b1": rng.standard_normal(96).astype(np.float32) / 8,
            "w2": rng.standard_normal((96, 48)).astype(np.float32) / 8,
            "b2": rng.standard_normal(48).astype(np.float32) / 8,
            "w3": rng.standard_normal((48, 10)).astype(np.float32) / 4}


def _mlp(path, w, extra_transpose=False):
    """x [4, 64] -> MatMul+Add+Relu -> MatMul+Add+Sigmoid -> MatMul -> Softmax"""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h1"], name="mm1"),
             helper.make_node("Add", ["h1", "b1"], ["a1"], name="add1"),
             helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
             helper.make_node("MatMul", ["r1", "w2"], ["h2"], name="mm2"),
             helper.make_node("Add", ["h2", "b2"], ["a2"], name="add2"),
             helper.make_node("Sigmoid", ["a2"], ["s2"], name="sigmoid2"),
             helper.make_node("MatMul", ["s2", "w3"], ["logits"], name="mm3")]
    last = "logits"
    if extra_transpose:  # an op the example provider does not take
        nodes.append(helper.make_node("Transpose", ["logits"], ["lt"], name="transpose", perm=[1, 0]))
        nodes.append(helper.make_node("Transpose", ["lt"], ["logits2"], name="transpose_back", perm=[1, 0]))
        last = "logits2"
    nodes.append(helper.make_node("Softmax", [last], ["probs"], name="softmax", axis=-1))
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [4, 10])],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def _numpy_float64(w, x):
    w = {k: v.astype(np.float64) for k, v in w.items()}
    r1 = np.maximum(x.astype(np.float64) @ w["w1"] + w["b1"], 0)
    s2 = 1 / (1 + np.exp(-(r1 @ w["w2"] + w["b2"])))
    logits = s2 @ w["w3"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _dump(onnxprobe, tmp_path, model, name, *flags):
    d = tmp_path / name
    r = run([onnxprobe, "run", model, "-o", d, *flags])
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((d / "manifest.json").read_text())
    tensors = {t["name"]: np.load(d / t["file"]) for t in manifest["tensors"]
               if t["kind"] in ("tensor", "input")}
    return manifest, tensors


def _compare(onnxprobe, tmp_path, *args):
    out = tmp_path / "r.json"
    r = run([onnxprobe, "compare", *args, "--json", out])
    return r, (json.loads(out.read_text()) if out.exists() else None)


def test_the_plugin_provider_runs_its_own_kernels_and_compares_against_cpu(onnxprobe, tmp_path):
    w = _weights()
    model = _mlp(str(tmp_path / "mlp.onnx"), w)
    manifest, plugin = _dump(onnxprobe, tmp_path, model, "plugin.dump", "--provider-library", LIB)
    _, cpu = _dump(onnxprobe, tmp_path, model, "cpu.dump")
    assert manifest["provider"] == EP, manifest.get("provider")
    # the provider computed the model (numpy in float64 agrees to float32's rounding) with kernels
    # of its own (its sums in plain order round unlike the CPU provider's somewhere)
    ref = _numpy_float64(w, cpu["x"])
    assert np.abs(plugin["probs"] - ref).max() < 1e-5
    differ = [n for n in cpu if n != "x" and not np.array_equal(cpu[n], plugin[n])]
    assert differ, "the plugin provider agrees with the CPU provider bit for bit: did it run?"

    r, rep = _compare(onnxprobe, tmp_path, model, "--b-provider-library", LIB)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["side_b"]["provider"] == EP and rep["side_a"]["provider"] in ("CPU", "CPUExecutionProvider")
    rows = {t["name"]: t for t in rep["tensors"]}
    for n in differ:
        d = np.abs(cpu[n].astype(np.float64) - plugin[n])
        assert rows[n]["max_abs"] == pytest.approx(d.max(), rel=1e-6, abs=1e-12), n


def test_a_weight_fault_on_the_plugin_side_is_named(onnxprobe, tmp_path):
    w = _weights()
    model = _mlp(str(tmp_path / "mlp.onnx"), w)
    bad = dict(w)
    bad["w2"] = w["w2"] * np.float32(1.01)
    faulty = _mlp(str(tmp_path / "mlp_faulty.onnx"), bad)
    r, rep = _compare(onnxprobe, tmp_path, model, faulty, "--b-provider-library", LIB)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["localization"]["culprits"][0]["node"] == "mm2", rep["localization"]


def test_a_kernel_fault_in_the_provider_is_localized_to_the_first_node_it_touches(onnxprobe, tmp_path):
    model = _mlp(str(tmp_path / "mlp.onnx"), _weights())
    r, rep = _compare(onnxprobe, tmp_path, model, "--b-provider-library", LIB,
                      "--b-provider-option", "approximate_exp=1")
    assert r.returncode == 1, r.stdout + r.stderr
    # the approximate exp is used first by Sigmoid; the MatMul/Add/Relu before it are exact
    assert rep["localization"]["culprits"][0]["node"] == "sigmoid2", rep["localization"]
    culprit = rep["localization"]["culprits"][0]
    assert culprit["introduced"] and culprit["isolated"], culprit
    rows = {t["name"]: t for t in rep["tensors"]}
    assert all(rows[n]["verdict"] == "PASS" for n in ("h1", "a1", "r1", "h2", "a2")), rows
    # the diagnosis runs the node alone on both providers: the provider's Sigmoid kernel
    found = {f["node"]: f for f in rep["diagnosis"]["findings"]}
    assert found["sigmoid2"]["cause"] == "kernel-change" and EP in found["sigmoid2"]["summary"], found


def test_nodes_the_provider_does_not_take_are_named_or_listed_with_fallback(onnxprobe, tmp_path):
    model = _mlp(str(tmp_path / "mlp_t.onnx"), _weights(), extra_transpose=True)
    not_taken = sorted(n.name for n in onnx.load(model).graph.node if n.op_type not in TAKES)
    r, _ = _compare(onnxprobe, tmp_path, model, "--b-provider-library", LIB)
    assert r.returncode == 2, r.stdout + r.stderr
    assert all(n in r.stderr for n in not_taken) and "--allow-fallback" in r.stderr, r.stderr
    r, rep = _compare(onnxprobe, tmp_path, model, "--b-provider-library", LIB, "--b-allow-fallback")
    assert r.returncode == 0, r.stdout + r.stderr
    placement = rep["placement"]["b"]
    assert placement["provider"] == EP
    # "name (OpType)", as the runtime's trace names the kernels the CPU provider ran
    assert sorted(n.split(" (")[0] for n in placement["on_cpu"]) == not_taken, placement
    assert placement["partitions"], placement
    # every compared row says which provider computed its node on side B
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["lt"]["provider_b"] == "CPUExecutionProvider"
    assert rows["h1"]["provider_b"] == rows["probs"]["provider_b"] == EP


def test_tensors_the_provider_cannot_give_are_left_out_and_the_rest_compared(onnxprobe, tmp_path):
    """cannot_expose=Relu: compiling fails when a Relu's output is a graph output, which marking
    every tensor for capture makes it (the model alone compiles: its output is no Relu's)."""
    w = _weights()
    model = _mlp(str(tmp_path / "mlp.onnx"), w)
    flags = ["--b-provider-library", LIB, "--b-provider-option", "cannot_expose=Relu"]
    run_flags = ["--provider-library", LIB, "--provider-option", "cannot_expose=Relu"]
    r = run([onnxprobe, "run", model, "-o", tmp_path / "whole.dump", *run_flags, "--tensors", "probs"])
    assert r.returncode == 0, r.stderr  # the model as it is compiles on it
    # run captures what the provider can give and says what it cannot
    js = tmp_path / "run.json"
    r = run([onnxprobe, "run", model, "-o", tmp_path / "all.dump", *run_flags, f"--json={js}"])
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "all.dump" / "manifest.json").read_text())
    captured = {t["name"] for t in manifest["tensors"] if t["kind"] == "tensor"}
    assert "r1" not in captured and {"h1", "a1", "h2", "probs"} <= captured, captured
    skipped = json.loads(js.read_text())["skipped_tensors"]
    assert [s["kind"] for s in skipped if s["name"] == "r1"] == ["breaks_compilation"], skipped
    r, rep = _compare(onnxprobe, tmp_path, model, *flags)
    assert r.returncode == 0, r.stdout + r.stderr
    relu_outputs = [n.output[0] for n in onnx.load(model).graph.node if n.op_type == "Relu"]
    rows = {t["name"] for t in rep["tensors"]}
    assert not rows & set(relu_outputs) and set(relu_outputs) <= set(rep["fused_in_b"]), rep["fused_in_b"]
    assert {"h1", "a1", "h2", "s2", "logits", "probs"} <= rows
    assert any("r1" in n and "compilation" in n for n in rep["notes"]), rep["notes"]
    # a fault is still named through the tensors it can give
    bad = dict(w)
    bad["w2"] = w["w2"] * np.float32(1.01)
    faulty = _mlp(str(tmp_path / "mlp_faulty.onnx"), bad)
    r, rep = _compare(onnxprobe, tmp_path, model, faulty, *flags)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["localization"]["culprits"][0]["node"] == "mm2", rep["localization"]


def test_errors_name_the_library_and_what_is_missing(onnxprobe, tmp_path):
    model = _mlp(str(tmp_path / "mlp.onnx"), _weights())
    r = run([onnxprobe, "compare", model, "--b-provider-library", str(tmp_path / "nope.so")])
    assert r.returncode == 2 and "nope.so" in r.stderr and "no such file" in r.stderr, r.stderr
    r = run([onnxprobe, "compare", model, "--b-provider-library", LIB, "--b-provider", "Nosuch"])
    assert r.returncode == 2 and EP in r.stderr and "Nosuch" in r.stderr, r.stderr
    old = os.path.join(os.environ.get("ONNXPROBE_SRC", ""), ".deps", "ort", "1.20.1")
    if os.path.isdir(old):
        r = run([onnxprobe, "compare", model, "--b-provider-library", LIB, "--b-ort-version", "1.20.1"])
        assert r.returncode == 2 and "1.20.1" in r.stderr and "plugin" in r.stderr, r.stderr
    r = run([onnxprobe, "compare", model, "--b-provider-library", LIB, "--isolate-runtime"])
    assert r.returncode == 2 and "with --isolate-runtime, name the provider" in r.stderr, r.stderr
    r, rep = _compare(onnxprobe, tmp_path, model, "--b-provider-library", LIB, "--b-provider", EP,
                      "--isolate-runtime")
    assert r.returncode == 0 and rep["side_b"]["provider"] == EP, r.stdout + r.stderr
    not_a_plugin = tmp_path / "text.so"
    not_a_plugin.write_text("not a library")
    r = run([onnxprobe, "compare", model, "--b-provider-library", not_a_plugin])
    assert r.returncode in (2, 3) and "text.so" in r.stderr, r.stderr


def test_profile_on_the_plugin_provider_names_it_and_the_kernels_it_ran(onnxprobe, tmp_path):
    model = _mlp(str(tmp_path / "mlp_t.onnx"), _weights(), extra_transpose=True)
    out = tmp_path / "p.json"
    r = run([onnxprobe, "profile", model, "--provider-library", LIB, "--allow-fallback", "--runs", "2",
             f"--json={out}"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    assert rep["session"]["provider"] == EP
    by = {g["provider"]: g["nodes"] for g in rep["by_provider"]}
    taken = [n for n in onnx.load(model).graph.node if n.op_type in TAKES]
    # one compiled kernel per node it takes (it compiles each alone); the two Transposes on CPU
    assert by.get(EP) == len(taken) and by.get("CPUExecutionProvider") == 2, by
