"""Fault injection: a single-node fault in a copy of a model must come out as the top culprit,
and its repro bundle must reproduce the mismatch on its own."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "localize", "make_fault_cases.py"), str(out),
                        "small"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.loads((out / "cases.json").read_text())


def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def test_every_fault_kind_is_generated(cases):
    _, cs = cases
    assert {c["fault"] for c in cs} == {"weight", "bn_epsilon", "conv_pads", "fp16_cast", "constant",
                                        "two_weights", "fp16_subtol"}


@pytest.mark.parametrize("index", range(7))
def test_injected_node_is_the_top_culprit_and_the_bundle_reproduces(onnxprobe, cases, tmp_path, index):
    out, cs = cases
    c = cs[index]
    repro = tmp_path / "repro"
    r = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--json", tmp_path / "r.json",
             "--html", tmp_path / "r.html", "--repro", repro])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    culprits = rep["localization"]["culprits"]
    assert culprits and culprits[0]["introduced"], rep["localization"]
    if c["fault"] == "constant":
        # a Constant node holds a weight as an initializer does: the node computing with it is
        # named, the Constant beside it (in the nodes run and the reason)
        m = onnx.load(str(out / c["faulty"]))
        held = next(n.output[0] for n in m.graph.node if n.name == c["node"])
        readers = [n.name for n in m.graph.node if held in n.input]
        assert culprits[0]["node"] in readers, (c, culprits[0])
        assert c["node"] in culprits[0]["nodes"] and c["node"] in culprits[0]["reason"], culprits[0]
    else:
        assert culprits[0]["node"] == c["node"], (c, culprits[0])
    assert "repro bundle: " in r.stdout
    # the bundle stands alone: a valid model, backend-test layout, and the mismatch is in the data
    model = onnx.load(str(repro / "model.onnx"))
    onnx.checker.check_model(model)
    assert len(model.graph.node) <= 4
    expected = load_pb(repro / "test_data_set_0" / "output_0.pb")
    observed = load_pb(repro / "observed" / "output_0.pb")
    assert expected.shape == observed.shape
    assert not np.allclose(observed, expected, rtol=1e-3, atol=1e-5 * max(1.0, np.abs(expected).max()))
    assert (repro / "test_data_set_0" / "input_0.pb").exists() == (len(model.graph.input) > 0)
    assert (repro / "README.txt").exists()
    r = run([onnxprobe, "replay", repro])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "REPRODUCED" in r.stdout


def test_isolation_clears_nodes_that_only_inherit(onnxprobe, cases, tmp_path):
    out, cs = cases
    c = next(c for c in cs if c["fault"] == "weight" and c["base"] == "cnn.onnx")
    r = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--isolate", "failing",
             "--json", tmp_path / "r.json"])
    rep = json.loads((tmp_path / "r.json").read_text())
    culprits = rep["localization"]["culprits"]
    introduced = [x for x in culprits if x["introduced"]]
    assert [x["node"] for x in introduced] == [c["node"]]
    assert len(culprits) > 1 and all(x["isolated"] for x in culprits)
    rows = {t["name"]: t for t in rep["tensors"]}
    assert sum(1 for t in rows.values() if t["role"] == "introduced") == 1


def test_no_isolation_without_failures_or_when_b_is_a_dump(onnxprobe, cases, tmp_path):
    out, cs = cases
    r = run([onnxprobe, "compare", out / "cnn.onnx", "--b-opt-level", "all", "--json", tmp_path / "r.json"])
    assert r.returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["localization"]["culprits"] == []
    c = cs[0]
    assert run([onnxprobe, "run", out / c["faulty"], "-o", tmp_path / "d"]).returncode == 0
    r = run([onnxprobe, "compare", out / c["base"], tmp_path / "d", "--json", tmp_path / "r.json"])
    rep = json.loads((tmp_path / "r.json").read_text())
    assert r.returncode == 1 and "dump" in rep["localization"]["note"]


@pytest.mark.parametrize("fault", ["weight", "bn_epsilon", "conv_pads", "constant", "fp16_cast", "two_weights",
                                   "fp16_subtol"])
def test_bisection_agrees_with_the_full_comparison(onnxprobe, cases, tmp_path, fault):
    out, cs = cases
    c = next(c for c in cs if c["fault"] == fault)
    full = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--json", tmp_path / "f.json"])
    r = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--bisect", "--bisect-per-run", "3",
             "--json", tmp_path / "r.json", "--max-memory", "64K"])
    assert r.returncode == full.returncode, r.stdout + r.stderr
    rep, ref = (json.loads((tmp_path / f).read_text()) for f in ("r.json", "f.json"))
    assert rep["summary"]["bisected"] and rep["summary"]["bisect_rounds"] <= 12
    for key in ("first_divergence", "first_difference", "frontier", "compared", "failed"):
        assert rep["summary"][key] == ref["summary"][key], key
    culprits = lambda x: [(k["node"], k["introduced"]) for k in x["localization"]["culprits"]]
    assert culprits(rep) == culprits(ref)
    assert [d["node"] for d in rep["drift_origins"]] == [d["node"] for d in ref["drift_origins"]]


def test_a_fault_inside_an_if_branch_is_named_at_its_node(onnxprobe, tmp_path):
    import models
    models.if_model(tmp_path / "if.onnx")
    m = onnx.load(str(tmp_path / "if.onnx"))
    node = next(n for n in m.graph.node if n.op_type == "If")
    else_branch = next(a for a in node.attribute if a.name == "else_branch").g
    else_branch.node[0].op_type = "Neg"  # the body now negates instead of passing through
    onnx.save(m, str(tmp_path / "if_bad.onnx"))
    np.save(tmp_path / "X.npy", np.array([1.0, -3.0], np.float32))  # sum < 0: the else branch runs
    r = run([onnxprobe, "compare", tmp_path / "if.onnx", tmp_path / "if_bad.onnx", "--input", tmp_path / "X.npy",
             "--json", tmp_path / "r.json", "--repro", tmp_path / "repro"])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    top = rep["localization"]["culprits"][0]
    # the If runs as the branch it takes (else: the sum is negative), so the node inside is named
    assert top["node"] == "id" and top["op_type"] == "Neg" and top["introduced"], top
    assert any("If branch runs its else_branch" in n for n in rep["notes"]), rep["notes"]
    assert run([onnxprobe, "replay", tmp_path / "repro"]).returncode == 1


def test_a_fault_downstream_of_another_is_named_too(onnxprobe, cases, tmp_path):
    out, cs = cases
    c = next(c for c in cs if c["fault"] == "two_weights")
    r = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--json", tmp_path / "r.json"])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    introduced = [x["node"] for x in rep["localization"]["culprits"] if x["introduced"]]
    assert sorted(introduced) == sorted(c["nodes"])
    rows = {t["name"]: t for t in rep["tensors"]}
    assert sorted(rows[n]["node"] for n in rep["summary"]["frontier"]) == sorted(c["nodes"])
    assert sorted(d["node"] for d in rep["drift_origins"]) == sorted(c["nodes"])


def test_a_sub_tolerance_fp16_round_trip_passes_and_is_named_as_a_drift_origin(onnxprobe, cases, tmp_path):
    out, cs = cases
    c = next(c for c in cs if c["fault"] == "fp16_subtol")
    r = run([onnxprobe, "compare", out / c["base"], out / c["faulty"], "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["verdict"] == "PASS"
    assert [d["node"] for d in rep["drift_origins"]] == [c["node"]]
    assert rep["drift_origins"][0]["isolated_max_abs"] > 0
    m = onnx.load(str(out / c["base"]))
    assert rep["summary"]["first_difference"] == m.graph.node[-1].output[0]  # the Gemm after the cast
    assert "differences are born at 1 node (Cast 1); all within tolerance" in r.stdout


def test_two_runtime_versions_name_the_kernels_that_changed(onnxprobe, cases, tmp_path):
    out, _ = cases
    assert (Path(SRC) / ".deps" / "ort" / "1.20.1").exists(), "the bootstrap installs ONNX Runtime 1.20.1"
    # reference: each version's own dump (bit-exact with its Python API, tested elsewhere), read
    # with numpy: nodes whose inputs are identical on both versions but whose output is not
    model = onnx.load(str(out / "cnn.onnx"))
    dumps = []
    for i, extra in enumerate([[], ["--ort-version", "1.20.1"]]):
        assert run([onnxprobe, "run", out / "cnn.onnx", "-o", tmp_path / f"d{i}", *extra]).returncode == 0
        man = json.loads((tmp_path / f"d{i}" / "manifest.json").read_text())
        dumps.append({t["name"]: np.load(tmp_path / f"d{i}" / t["file"]) for t in man["tensors"]})
    same = {n for n in dumps[0] if np.array_equal(dumps[0][n], dumps[1][n])}
    same |= {i.name for i in model.graph.initializer}
    order = [o for n in model.graph.node for o in n.output]
    first = next(o for o in order if o not in same)
    born = [n.name for n in model.graph.node if n.output[0] not in same and all(x in same for x in n.input)]
    assert born  # the two versions do differ on this model

    r = run([onnxprobe, "compare", out / "cnn.onnx", "--b-ort-version", "1.20.1", "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["summary"]["first_difference"] == first
    named = [d["node"] for d in rep["drift_origins"]]
    assert set(born) <= set(named), (born, named)
    # nodes named beyond those differ when run alone with version A's inputs: confirmed by isolation
    assert all(d["isolated"] for d in rep["drift_origins"] if d["node"] not in born)


def test_determinism_of_a_deterministic_model_and_a_noise_floor_that_compare_honours(onnxprobe, tmp_path):
    demo = Path(SRC) / "tests" / "data" / "demo"
    r = run([onnxprobe, "determinism", demo / "demo_cnn.onnx", "--dim", "batch=2", "--runs", "3",
             "--json", tmp_path / "d.json", "--save-noise-floor", tmp_path / "floor.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "d.json").read_text())
    assert rep["outputs_reproducible"] and rep["first_nondeterministic"] is None
    assert rep["runs"] == 6 and len(rep["configurations"]) == 4
    m = onnx.load(str(demo / "demo_cnn.onnx"))
    assert [t["name"] for t in rep["tensors"]] == [o for n in m.graph.node for o in n.output]
    assert json.loads((tmp_path / "floor.json").read_text())["tensors"] == {}
    # a floor above the faulty Conv's error (0.0076, by construction of the demo's fault) and its
    # consumers' lets those tensors pass; without it they fail
    faulty = demo / "demo_cnn_faulty.onnx"
    names = [o for n in m.graph.node for o in n.output]
    floor = {"format": "onnxprobe-noise-floor", "format_version": 1, "tensors": {n: 1.0 for n in names}}
    (tmp_path / "big.json").write_text(json.dumps(floor))
    base = [onnxprobe, "compare", demo / "demo_cnn.onnx", faulty, "--dim", "batch=1", "--isolate", "none"]
    assert run(base).returncode == 1
    r = run(base + ["--noise-floor", tmp_path / "big.json", "--json", tmp_path / "c.json"])
    assert r.returncode == 0, r.stdout
    assert all(t["atol_used"] >= 1.0 for t in json.loads((tmp_path / "c.json").read_text())["tensors"])
    (tmp_path / "bad.json").write_text("{\"format\": \"other\"}")
    r = run(base + ["--noise-floor", tmp_path / "bad.json"])
    assert r.returncode == 2 and "bad.json" in r.stderr and "noise-floor" in r.stderr


def test_explain_optimizations_names_the_fusion_that_changes_the_outputs(onnxprobe, cases, tmp_path):
    # the CNN keeps BatchNormalization after each Conv; at level basic ONNX Runtime folds it into the
    # Conv's weights (its ConvBNFusion rewrite rule), which changes the last bits of the outputs
    out, cs = cases
    r = run([onnxprobe, "compare", out / "cnn.onnx", "--b-opt-level", "basic", "--explain-optimizations",
             "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    e = json.loads((tmp_path / "r.json").read_text())["optimizations"]
    assert [s["level"] for s in e["ladder"]] == ["basic"]
    assert e["first_level_with_difference"] == "basic" and e["ladder"][0]["differing_outputs"] == 1
    assert e["responsible"] == ["ConvBNFusion"] and e["explained_by_transformers"]
    assert "transformers that change the outputs: ConvBNFusion" in r.stdout
    r = run([onnxprobe, "compare", out / "cnn.onnx", out / cs[0]["faulty"], "--explain-optimizations"])
    assert r.returncode == 2 and "optimization" in r.stderr


def test_determinism_names_the_first_nondeterministic_node(onnxprobe, tmp_path):
    # the test-only JitterOp (tests/custom_op/crash_op.cc) adds 1e-3 to its first element on every
    # other run: everything before it is reproducible, it and what reads it are not
    from onnx import TensorProto, helper
    lib = os.environ.get("ONNXPROBE_CRASH_OP_LIB", "")
    one = numpy_helper.from_array(np.array([1.0], np.float32), "one")
    nodes = [helper.make_node("Add", ["x", "one"], ["a"], name="add"),
             helper.make_node("JitterOp", ["a"], ["j"], name="jitter", domain="onnxprobe.test"),
             helper.make_node("Relu", ["j"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "jitter", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [one])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("onnxprobe.test", 1)])
    onnx.save(m, str(tmp_path / "jitter.onnx"))
    r = run([onnxprobe, "determinism", tmp_path / "jitter.onnx", "--custom-op-lib", lib, "--range", "0,1",
             "--runs", "4", "--json", tmp_path / "d.json", "--save-noise-floor", tmp_path / "floor.json"])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((tmp_path / "d.json").read_text())
    assert not rep["outputs_reproducible"] and rep["first_nondeterministic"] == "j"
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["a"]["run_max_abs"] == 0 and rows["j"]["run_max_abs"] == pytest.approx(1e-3, rel=1e-3)
    assert "first nondeterministic tensor: j (JitterOp node jitter)" in r.stdout
    floor = json.loads((tmp_path / "floor.json").read_text())["tensors"]
    assert set(floor) == {"j", "y"} and floor["j"] == pytest.approx(1e-3, rel=1e-3)


def _layer_norm_model(path):
    """x -> MatMul -> LayerNorm written out as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
    Add (what ONNX Runtime fuses into one LayerNormalization at level "all") -> MatMul."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(3)
    init = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in [
        ("w1", rng.standard_normal((16, 32)) / 4), ("gamma", 1 + rng.standard_normal(32) / 8),
        ("beta", rng.standard_normal(32) / 8), ("w2", rng.standard_normal((32, 8)) / 6),
        ("two", np.array(2.0)), ("eps", np.array(1e-5))]]
    N = helper.make_node
    nodes = [N("MatMul", ["x", "w1"], ["h"], name="proj"),
             N("ReduceMean", ["h"], ["mean"], name="ln_mean", axes=[-1]),
             N("Sub", ["h", "mean"], ["centered"], name="ln_sub"),
             N("Pow", ["centered", "two"], ["sq"], name="ln_pow"),
             N("ReduceMean", ["sq"], ["var"], name="ln_var", axes=[-1]),
             N("Add", ["var", "eps"], ["var_eps"], name="ln_add_eps"),
             N("Sqrt", ["var_eps"], ["std"], name="ln_sqrt"),
             N("Div", ["centered", "std"], ["normed"], name="ln_div"),
             N("Mul", ["normed", "gamma"], ["scaled"], name="ln_scale"),
             N("Add", ["scaled", "beta"], ["ln_out"], name="ln_shift"),
             N("MatMul", ["ln_out", "w2"], ["y"], name="head")]
    g = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 24, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 24, 8])], init)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(path))


def test_a_fusion_of_the_optimized_side_is_run_whole_and_named_as_a_drift_origin(onnxprobe, tmp_path):
    # off vs all: side A has every tensor of the decomposed LayerNorm, which side B fuses away.
    # Fed with A's tensors inside the fused region, each node alone would compute what A did; run
    # whole, the region computes what B's fused kernel does.
    model = tmp_path / "ln.onnx"
    _layer_norm_model(model)
    # reference (ONNX Runtime's Python API): the LayerNorm's output differs between the levels,
    # the projection before it does not
    script = ("import sys, numpy as np, onnx, onnxruntime as ort\n"
              "m = onnx.load(sys.argv[1])\n"
              "m.graph.output.extend([onnx.ValueInfoProto(name=n) for n in ('h', 'ln_out')])\n"
              "x = np.random.default_rng(0).standard_normal((4, 24, 16)).astype(np.float32)\n"
              "outs = []\n"
              "for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):\n"
              "    o = ort.SessionOptions(); o.graph_optimization_level = level\n"
              "    s = ort.InferenceSession(m.SerializeToString(), o, providers=['CPUExecutionProvider'])\n"
              "    outs.append(s.run(['h', 'ln_out'], {'x': x}))\n"
              "print(np.array_equal(outs[0][0], outs[1][0]), np.array_equal(outs[0][1], outs[1][1]))\n")
    py = os.environ.get("ONNXPROBE_PYENV", sys.executable)
    ref = subprocess.run([py, "-c", script, str(model)], capture_output=True, text=True, timeout=300)
    assert ref.returncode == 0, ref.stderr[-2000:]
    assert ref.stdout.split() == ["True", "False"], ref.stdout

    r = run([onnxprobe, "compare", model, model, "--b-opt-level", "all", "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert {"centered", "normed"} <= set(rep["fused_in_b"]), rep["fused_in_b"]
    origins = {d["node"]: d for d in rep["drift_origins"]}
    # named by the node the fusion starts from (the decomposition's first node), its region listed
    assert "ln_mean" in origins, list(origins)
    assert {"ln_div", "ln_shift"} <= set(origins["ln_mean"]["nodes"]), origins["ln_mean"]
    assert "proj" not in origins


def test_a_conv_fused_with_its_relu_is_named_by_the_conv(onnxprobe, tmp_path):
    # off vs all on the demo CNN: ONNX Runtime fuses each Conv with the Relu after it; where the
    # fused kernel rounds differently, the origin is the Conv that computes, not the Relu it absorbed
    demo = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
    r = run([onnxprobe, "compare", demo, "--b-opt-level", "all", "--dim", "batch=2", "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    m = onnx.load(demo)
    op = {n.name: n.op_type for n in m.graph.node}
    fused = [d for d in rep["drift_origins"] if len(d["nodes"]) > 1]
    assert fused, rep["drift_origins"]
    for d in fused:
        assert op[d["node"]] == "Conv" and any(op[n] == "Relu" for n in d["nodes"]), d


ORT_RUN = r"""
import sys, numpy as np, onnxruntime as ort
from onnx import numpy_helper, TensorProto
def pb(p):
    t = TensorProto()
    t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)
folder = sys.argv[1]
s = ort.InferenceSession(folder + "/model.onnx", providers=["CPUExecutionProvider"])
feed = {i.name: pb(f"{folder}/test_data_set_0/input_{k}.pb") for k, i in enumerate(s.get_inputs())}
np.save(sys.argv[2], s.run(None, feed)[0])
"""


def test_a_bundle_of_a_node_with_a_large_weight_stands_alone(onnxprobe, tmp_path):
    """Isolated runs reference large weights from the model's file; the bundle must embed them: it is
    moved away from a model folder that no longer exists, and ONNX Runtime's Python API runs it."""
    from onnx import helper
    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((64, 64)).astype(np.float32)  # 16 KB each: beyond what a load keeps
    w2 = rng.standard_normal((64, 16)).astype(np.float32)
    models = tmp_path / "models"
    models.mkdir()
    for name, first in (("base.onnx", w1), ("faulty.onnx", w1 * np.float32(1.5))):
        g = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["y"], name="mm2")],
            "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 64])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 16])],
            [numpy_helper.from_array(first, "w1"), numpy_helper.from_array(w2, "w2")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(models / name))
    repro = tmp_path / "repro"
    r = run([onnxprobe, "compare", models / "base.onnx", models / "faulty.onnx", "--repro", repro,
             "--json", tmp_path / "r.json"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert json.loads((tmp_path / "r.json").read_text())["localization"]["culprits"][0]["node"] == "mm1"
    moved = tmp_path / "elsewhere" / "bundle"
    moved.parent.mkdir()
    repro.rename(moved)
    for f in models.iterdir():
        f.unlink()
    models.rmdir()
    model = onnx.load(str(moved / "model.onnx"), load_external_data=False)
    weights = {t.name: t for t in model.graph.initializer}
    assert weights["w1"].data_location == onnx.TensorProto.DEFAULT and not weights["w1"].external_data
    assert np.array_equal(numpy_helper.to_array(weights["w1"]), w1 * np.float32(1.5))
    x = load_pb(moved / "test_data_set_0" / "input_0.pb")
    assert np.allclose(load_pb(moved / "observed" / "output_0.pb"), x @ (w1 * np.float32(1.5)), rtol=1e-5, atol=1e-4)
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    out = subprocess.run([py, "-c", ORT_RUN, str(moved), str(tmp_path / "y.npy")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert np.array_equal(np.load(tmp_path / "y.npy"), load_pb(moved / "observed" / "output_0.pb"))
    r = run([onnxprobe, "replay", moved])
    assert r.returncode == 1 and "REPRODUCED" in r.stdout, r.stdout + r.stderr
