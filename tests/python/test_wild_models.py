"""Models from the wild: a rewrite that keeps a tensor's name but changes its meaning (a
BatchNormalization folded into the Conv before it, as onnxsim does) is paired by meaning, not by
name, so a benign rewrite passes and a broken one names the rewritten or the rewriter-created
node. The reference is ONNX Runtime's Python API (whether the copies' outputs agree) and the
injected fault (where)."""
import json
import os
import shlex
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import wild_models
from conftest import run

ORT_OUTPUTS = """
import sys, numpy as np, onnxruntime as ort
x = np.load(sys.argv[1])
outs = []
for path in sys.argv[2:]:
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs.append(s.run(None, {"x": x})[0])
print(float(np.max(np.abs(outs[0] - outs[1]))), float(np.max(np.abs(outs[0]))))
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("wild")
    paths = wild_models.write_all(out)
    x = np.random.default_rng(1).standard_normal((1, wild_models.C_IN, wild_models.H,
                                                  wild_models.H)).astype(np.float32)
    paths["x"] = out / "x.npy"
    np.save(paths["x"], x)
    return paths


def ort_difference(models, a, b):
    """max |A - B| of the graph outputs and max |A|, by ONNX Runtime's Python API."""
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    r = subprocess.run([py, "-c", ORT_OUTPUTS, str(models["x"]), str(models[a]), str(models[b])],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    diff, scale = map(float, r.stdout.split())
    return diff, scale


def compare(onnxprobe, models, a, b, tmp_path, *extra):
    report = tmp_path / "r.json"
    r = run([onnxprobe, "compare", models[a], models[b], "--input", f"x={models['x']}", "--json",
             report, *extra])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r, json.loads(report.read_text())


def rows_by_name(rep):
    return {t["name"]: t for t in rep["tensors"]}


@pytest.mark.parametrize("a,b", [("original", "folded"), ("folded", "original"),
                                 ("original", "mul_add")])
def test_benign_rewrite_passes(onnxprobe, models, tmp_path, a, b):
    diff, scale = ort_difference(models, a, b)
    assert diff <= 1e-4 * max(1.0, scale), (diff, scale)  # the rewrite is benign
    r, rep = compare(onnxprobe, models, a, b, tmp_path)
    assert r.returncode == 0, r.stdout
    assert rep["verdict"] == "PASS"
    assert rep["summary"]["failed"] == 0


def test_folded_batchnorm_pairs_the_conv_with_the_normalized_tensor(onnxprobe, models, tmp_path):
    r, rep = compare(onnxprobe, models, "original", "folded", tmp_path)
    rows = rows_by_name(rep)
    # B's Conv output (same name as A's, after the fold) is compared with A's BatchNorm output
    for c in ("c1", "c2"):
        assert rows[c + "_bn"]["name_b"] == c + "_out", rows[c + "_bn"]
        assert c + "_out" not in rows  # A's pre-normalization tensor has no counterpart in B
        assert c + "_out" in rep["only_in_a"]
    assert any("BatchNormalization 'c1_bn'" in w and "Conv 'c1'" in w for w in rep["rewrites"])
    assert "rewrite recognized: 2 x BatchNormalization folded into Conv" in r.stdout


@pytest.mark.parametrize("a,b,node,ran", [
    ("original", "folded_wrong_c2", "c2", ["c2"]),
    # A has no value between the rewriter's Mul and Add: the two run together, named by the last
    ("original", "mul_add_wrong_c1", "rewriter_add_c1", ["rewriter_mul_c1", "rewriter_add_c1"])])
def test_broken_rewrite_names_the_node_that_breaks(onnxprobe, models, tmp_path, a, b, node, ran):
    diff, scale = ort_difference(models, a, b)
    assert diff > 1e-3 * max(1.0, scale), (diff, scale)  # the injected fault shows at the output
    r, rep = compare(onnxprobe, models, a, b, tmp_path)
    assert r.returncode == 1, r.stdout
    culprits = rep["localization"]["culprits"]
    assert culprits and culprits[0]["introduced"], rep["localization"]
    assert culprits[0]["node"] == node, culprits[0]
    assert culprits[0]["nodes"] == ran, culprits[0]
    introduced = [t for t in rep["tensors"] if t["role"] == "introduced"]
    assert len(introduced) == 1, [(t["name"], t["name_b"]) for t in introduced]
    if b.startswith("folded"):
        # the diagnosis refolds A's Conv and BatchNormalization into B's Conv (restoring A's
        # unfolded weights alone would drop the normalization): the written model then agrees
        f = [x for x in rep["diagnosis"]["findings"] if x["node"] == node]
        assert len(f) == 1 and "folded" in f[0]["summary"], rep["diagnosis"]["findings"]
        fixed = run(["/usr/bin/python3", *shlex.split(f[0]["fix"]["command"])[1:]])
        assert fixed.returncode == 0, fixed.stderr
        r2 = run([onnxprobe, "compare", models[a], f[0]["fix"]["side_b"], "--input", f"x={models['x']}"])
        assert r2.returncode == 0, r2.stdout + r2.stderr


@pytest.mark.parametrize("a,b,side", [("original", "extra_output", "B"),
                                      ("extra_output", "original", "A")])
def test_a_graph_output_one_side_lacks_fails(onnxprobe, models, tmp_path, a, b, side):
    r, rep = compare(onnxprobe, models, a, b, tmp_path, "--junit", tmp_path / "j.xml")
    assert r.returncode == 1, r.stdout
    assert rep["verdict"] == "FAIL"
    assert rep["unpaired_outputs"] == [f"side {side}'s graph output 'probabilities' has no counterpart in "
                                       f"{'A' if side == 'B' else 'B'}"]
    assert rep["summary"]["failed"] == 0  # every compared tensor agrees: the contract differs
    assert "unpaired graph output" in r.stdout
    assert "unpaired-output" in (tmp_path / "j.xml").read_text()


def test_inspect_counts_weights_in_constant_nodes(onnxprobe, models):
    m = onnx.load(str(models["constants"]))
    values = [numpy_helper.to_array(a.t) for n in m.graph.node if n.op_type == "Constant"
              for a in n.attribute if a.name == "value"]
    r = run([onnxprobe, "inspect", models["constants"], "--json"])
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["param_count"] == sum(v.size for v in values) > 0
    assert j["constant_nodes"] == len(values) and j["constant_param_count"] == j["param_count"]
    assert j["param_bytes"] == sum(v.nbytes for v in values)
    text = run([onnxprobe, "inspect", models["constants"]]).stdout
    assert f"in 0 initializers and {len(values)} Constant nodes" in text


@pytest.mark.parametrize("b,name_b,constant_b", [("constants_bumped", "c2.w", "const_c2_w"),
                                                 ("renamed_bumped", "c2.w_edited", None)])
def test_diff_names_one_changed_weight_with_its_reader(onnxprobe, models, b, name_b, constant_b):
    a = "constants" if constant_b else "original"
    r = run([onnxprobe, "diff", models[a], models[b], "--json"])
    assert r.returncode == 1, r.stderr
    d = json.loads(r.stdout)
    assert d["nodes"] == []  # one changed value changes no node
    [w] = d["initializers"]
    assert (w["kind"], w["name_a"], w["name_b"]) == ("changed", "c2.w", name_b)
    assert w["constant_b"] == constant_b and w["readers"] == ["c2"]
    assert w["num_different"] == 1 and w["max_abs_diff"] == pytest.approx(0.5, rel=1e-6)


@pytest.mark.parametrize("a,b", [("constants", "constants_bumped"), ("original", "renamed_bumped")])
def test_diagnosis_names_a_weight_known_by_where_it_is_read(onnxprobe, models, tmp_path, a, b):
    r, rep = compare(onnxprobe, models, a, b, tmp_path, "--diagnose")
    assert r.returncode == 1, r.stdout
    assert rep["localization"]["culprits"][0]["node"] == "c2"
    causes = [(f["cause"], f["node"]) for f in rep["diagnosis"]["findings"]]
    assert ("weight-changed", "c2") in causes, rep["diagnosis"]
    f = next(f for f in rep["diagnosis"]["findings"] if f["cause"] == "weight-changed")
    # the restoring command writes B with A's weight back (checked with onnx/numpy), and that copy
    # compares equal to A
    cmd = shlex.split(f["fix"]["command"])
    assert run(["/usr/bin/python3", *cmd[1:]]).returncode == 0
    restored = f["fix"]["side_b"]
    fixed, want = onnx.load(restored), onnx.load(str(models[a]))
    weight = lambda m, names: [numpy_helper.to_array(t) for t in m.graph.initializer if t.name in names] + [
        numpy_helper.to_array(x.t) for n in m.graph.node if n.op_type == "Constant" and n.output[0] in names
        for x in n.attribute if x.name == "value"]
    np.testing.assert_array_equal(weight(fixed, ("c2.w", "c2.w_edited"))[0], weight(want, ("c2.w",))[0])
    r2 = run([onnxprobe, "compare", models[a], restored, "--input", f"x={models['x']}"])
    assert r2.returncode == 0, r2.stdout + r2.stderr


def float32_constant_elements(path):
    m = onnx.load(str(path))
    return sum(numpy_helper.to_array(a.t).size for n in m.graph.node if n.op_type == "Constant"
               for a in n.attribute if a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT)


@pytest.mark.parametrize("keep", [None, "c1,c2,fc"])
def test_fp16_converts_weights_in_constant_nodes(onnxprobe, models, tmp_path, keep):
    out = tmp_path / "half.onnx"
    extra = ["--keep-fp32", keep] if keep else []
    r = run([onnxprobe, "fp16", models["constants"], "--input", f"x={models['x']}", "-o", out,
             "--json", tmp_path / "f.json", *extra])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "f.json").read_text())
    before, after = os.path.getsize(models["constants"]), os.path.getsize(out)
    weights = float32_constant_elements(models["constants"])
    assert rep["float32_weight_bytes"] == 4 * weights and rep["output_bytes"] == after
    if keep is None:  # every conv and the classifier computed in float16: their weights halve
        assert float32_constant_elements(out) < weights // 20
        assert after < before - weights  # 2 bytes of every 4 saved, less the graph's own growth
        assert rep["size_note"] == "" and "warning:" not in r.stdout
    else:  # the weights' readers stay float32: nothing shrinks, and the result says so
        assert float32_constant_elements(out) >= weights - 64
        assert "most weights stayed float32" in rep["size_note"]
        assert "warning: " in r.stdout
    diff, scale = ort_difference(dict(models, half=out), "constants", "half")
    assert diff <= 1e-2 * max(1.0, scale), (diff, scale)


@pytest.mark.parametrize("a,b,ifs,extra", [("if", "if_fault", ["If_0"], ()),
                                           ("if_nested", "if_nested_fault", ["If_0", "inner_if"], ()),
                                           # the runtime in child processes: the worker inlines the
                                           # branch, this process gets the graph it runs
                                           ("if_nested", "if_nested_fault", ["If_0", "inner_if"],
                                            ("--isolate-runtime",))],
                         ids=["if", "if_nested", "if_nested_isolated"])
def test_a_fault_inside_an_if_branch_is_named_at_its_node(onnxprobe, models, tmp_path, a, b, ifs, extra):
    diff, scale = ort_difference(models, a, b)
    assert diff > 1e-3 * max(1.0, scale)  # the injected fault shows at the output
    r, rep = compare(onnxprobe, models, a, b, tmp_path, *extra)
    assert r.returncode == 1, r.stdout
    culprits = rep["localization"]["culprits"]
    assert culprits and culprits[0]["introduced"] and culprits[0]["node"] == "then_conv2", culprits[:1]
    rows = rows_by_name(rep)
    assert {"t_conv1", "t_conv2", "t_relu2"} <= set(rows)  # the branch's tensors are compared
    assert rows["t_conv1"]["verdict"] == "PASS" and rows["t_conv2"]["role"] == "introduced"
    for name in ifs:
        for side in ("A", "B"):
            assert f"side {side}: If {name} runs its then_branch" in " ".join(rep["notes"]), rep["notes"]
    assert rep["side_b"]["inlined_ifs"] == ifs
    if extra:
        return  # no diagnosis with --isolate-runtime (its experiments would load the runtime here)
    # the diagnosis reads the branch's weights
    f = [x for x in rep["diagnosis"]["findings"] if x["node"] == "then_conv2"]
    assert f and f[0]["cause"] == "weight-changed" and "c2.w_branch" in f[0]["evidence"], rep["diagnosis"]
    # its restoring command finds the weight inside the branch, and the restored copy compares equal
    cmd = shlex.split(f[0]["fix"]["command"])
    fixed = run(["/usr/bin/python3", *cmd[1:]])
    assert fixed.returncode == 0, fixed.stderr
    r2 = run([onnxprobe, "compare", models[a], f[0]["fix"]["side_b"], "--input", f"x={models['x']}"])
    assert r2.returncode == 0, r2.stdout + r2.stderr


def test_an_if_model_is_compared_inside_its_branch_and_outputs_stay_exact(onnxprobe, models, tmp_path):
    r, rep = compare(onnxprobe, models, "if_nested", "if_nested", tmp_path, "--b-intra-threads", "1")
    assert r.returncode == 0, r.stdout
    rows = rows_by_name(rep)
    assert {"t_conv1", "t_conv2", "t_y", "y"} <= set(rows)
    # above optimization level disabled the inlined copy must compute the model's outputs bit for
    # bit, or the side runs the model as it is and says so: either way the verdict is right
    r, rep = compare(onnxprobe, models, "if_nested", "if_nested", tmp_path, "--b-opt-level", "all")
    assert r.returncode == 0 and rep["verdict"] == "PASS", r.stdout
    assert any(n.startswith(("side B: If", "side B: control flow")) for n in rep["notes"]), rep["notes"]


ORT_ALL_OUTPUTS = """
import sys, numpy as np, onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(sys.argv[2], so, providers=["CPUExecutionProvider"])
outs = s.run(None, {"x": np.load(sys.argv[1])})
np.savez(sys.argv[3], **{o.name: v for o, v in zip(s.get_outputs(), outs)})
"""


def test_run_captures_the_tensors_of_the_branch_an_if_takes(onnxprobe, models, tmp_path):
    out = tmp_path / "dump"
    r = run([onnxprobe, "run", models["if_nested"], "-o", out, "--input", f"x={models['x']}"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "If inner_if runs its then_branch" in r.stdout + r.stderr
    man = json.loads((out / "manifest.json").read_text())
    got = {t["name"]: np.load(out / t["file"]) for t in man["tensors"] if t.get("file")}
    # reference: the branch's computation as a plain graph, run by ONNX Runtime's Python API
    r = subprocess.run([os.environ["ONNXPROBE_PYENV"], "-c", ORT_ALL_OUTPUTS, str(models["x"]),
                        str(models["if_plain"]), str(tmp_path / "ref.npz")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    ref = np.load(tmp_path / "ref.npz")
    assert set(ref.files) <= set(got), sorted(got)
    for name in ref.files:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-6, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(got["y"], got["t_y"])


ORT_ZIPMAP = """
import sys, numpy as np, onnxruntime as ort
x = np.load(sys.argv[1])
probs = []
for path in sys.argv[2:]:
    out = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(["probabilities"], {"x": x})[0]
    probs.append(np.array([[row[k] for k in sorted(row)] for row in out], np.float32))
print(float(np.max(np.abs(probs[0] - probs[1]))))
"""


def test_a_sequence_of_maps_is_compared_by_value(onnxprobe, models, tmp_path):
    # reference: the probabilities ONNX Runtime's Python API returns (a list of dicts), as numpy
    r = subprocess.run([os.environ["ONNXPROBE_PYENV"], "-c", ORT_ZIPMAP, str(models["x"]), str(models["zipmap"]),
                        str(models["zipmap_scaled"])], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    expected = float(r.stdout)
    assert expected > 0.01
    r, rep = compare(onnxprobe, models, "zipmap", "zipmap", tmp_path)
    assert r.returncode == 0, r.stdout
    row = rows_by_name(rep)["probabilities"]
    assert row["state"] == "compared" and row["shape_a"] == [1, 3] and row["max_abs"] == 0
    r, rep = compare(onnxprobe, models, "zipmap", "zipmap_scaled", tmp_path)
    assert r.returncode == 1, r.stdout  # the label is unchanged: only the map shows the edit
    rows = rows_by_name(rep)
    assert rows["label_k"]["verdict"] == "PASS"
    assert rows["probabilities"]["verdict"] == "FAIL"
    assert rows["probabilities"]["max_abs"] == pytest.approx(expected, rel=1e-6)
    assert rep["localization"]["culprits"][0]["node"] == "edit_scale"


@pytest.fixture(scope="module")
def rnn_inputs(models, tmp_path_factory):
    rng = np.random.default_rng(2)
    h0 = rng.standard_normal((1, 4)).astype(np.float32)
    seq = rng.standard_normal((1, wild_models.T_STEPS, 4)).astype(np.float32)
    path = tmp_path_factory.mktemp("rnn") / "in.npz"
    return path, h0, seq


def compare_with(onnxprobe, a, b, inputs, tmp_path, *extra):
    r = run([onnxprobe, "compare", a, b, "--input", inputs, "--json", tmp_path / "r.json", *extra])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r, json.loads((tmp_path / "r.json").read_text())


@pytest.mark.parametrize("a,b,node,count,extra", [
    ("scan", "scan_fault", "rnn_mm_h", "rnn runs 5 iterations", ()),
    ("loop", "loop_fault", "loop_add", "mlp_loop runs 4 iterations", ()),
    ("loop", "loop_fault", "loop_add", "mlp_loop runs 4 iterations", ("--isolate-runtime",))],
    ids=["scan", "loop", "loop_isolated"])
def test_a_fault_inside_a_loop_body_is_named_at_its_iteration(onnxprobe, models, rnn_inputs, tmp_path, a, b,
                                                                node, count, extra):
    path, h0, seq = rnn_inputs
    inputs = tmp_path / "in.npz"
    ins = {"h0": h0, "seq": seq} if a == "scan" else {"v0": h0}
    np.savez(inputs, **ins)
    r, rep = compare_with(onnxprobe, models[a], models[b], inputs, tmp_path, *extra)
    assert r.returncode == 1, r.stdout
    culprits = rep["localization"]["culprits"]
    assert culprits and culprits[0]["introduced"] and culprits[0]["node"] == node, culprits[:1]
    assert any(count in n for n in rep["notes"]), rep["notes"]
    # the changed weight is read in every iteration: each copy of the node introduces error, its
    # tensor naming the iteration
    introduced = {c["tensor"] for c in culprits if c["introduced"]}
    assert all(c["node"] == node for c in culprits if c["introduced"]), culprits
    assert any(t.endswith("@0") for t in introduced), introduced
    # the console says it once: the node, in each of its copies
    assert f"1. {node} " in r.stdout and f"INTRODUCED in each of {len(introduced)} copies" in r.stdout, r.stdout


def test_run_captures_every_iteration_of_a_scan(onnxprobe, models, rnn_inputs, tmp_path):
    _, h0, seq = rnn_inputs
    np.savez(tmp_path / "in.npz", h0=h0, seq=seq)
    out = tmp_path / "dump"
    r = run([onnxprobe, "run", models["scan"], "--input", tmp_path / "in.npz", "-o", out])
    assert r.returncode == 0, r.stdout + r.stderr
    man = json.loads((out / "manifest.json").read_text())
    got = {t["name"]: np.load(out / t["file"]) for t in man["tensors"] if t.get("file")}
    wx, wh = wild_models.rnn_params()
    h = h0.astype(np.float64)  # reference: the recurrence in numpy
    for t in range(wild_models.T_STEPS):
        h = np.tanh(seq[:, t, :].astype(np.float64) @ wx + h @ wh)
        np.testing.assert_allclose(got[f"h_new@{t}"], h, rtol=1e-5, atol=1e-6, err_msg=f"step {t}")
    np.testing.assert_allclose(got["h_last"], h, rtol=1e-5, atol=1e-6)
    # every step's output stacked along the time axis, as the Scan returns it
    stacked = np.stack([got[f"h_new@{t}"] for t in range(wild_models.T_STEPS)], axis=1)
    np.testing.assert_array_equal(np.maximum(stacked, 0), got["y"])


def test_a_loop_model_compared_with_itself_at_level_all_passes(onnxprobe, models, rnn_inputs, tmp_path):
    _, h0, seq = rnn_inputs
    for name, ins in (("scan", {"h0": h0, "seq": seq}), ("loop", {"v0": h0})):
        path = tmp_path / f"{name}.npz"
        np.savez(path, **ins)
        r, rep = compare_with(onnxprobe, models[name], models[name], path, tmp_path, "--b-opt-level", "all")
        assert r.returncode == 0 and rep["verdict"] == "PASS", r.stdout


def test_merged_transposes_are_not_paired_across_the_layout_change(onnxprobe, tmp_path):
    """onnxsim merges two Transposes into the second, which then reads the first one's input with
    another perm: the tensor it reads is not the tensor A's second Transpose reads (shapes
    [1,16,4,8] and [1,4,16,8]). Both models compute the same scores (ONNX Runtime's Python API)."""
    for merged in (False, True):
        onnx.save(wild_models.merged_transposes(merged), tmp_path / f"m{int(merged)}.onnx")
    x = np.random.default_rng(2).standard_normal((1, 16, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    py = os.environ.get("ONNXPROBE_PYENV")
    r = subprocess.run([py, "-c", ORT_OUTPUTS, str(tmp_path / "x.npy"), str(tmp_path / "m0.onnx"),
                        str(tmp_path / "m1.onnx")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.split()[0]) == 0.0  # the merge is exact
    r = run([onnxprobe, "compare", tmp_path / "m0.onnx", tmp_path / "m1.onnx", "--input", f"x={tmp_path / 'x.npy'}",
             "--json", tmp_path / "r.json"])
    rep = json.loads((tmp_path / "r.json").read_text())
    assert r.returncode == 0, r.stdout
    assert not any("Transpose 'Transpose.1' folded" in w for w in rep["rewrites"]), rep["rewrites"]
    for t in rep["tensors"]:
        assert t["shape_a"] == t["shape_b"], t["name"]
    assert "k1" in rep["only_in_a"]


def test_a_fault_in_a_region_b_fuses_is_where_the_difference_is_born(onnxprobe, tmp_path):
    """A paddle2onnx CNN at optimization level all: ONNX Runtime fuses the Conv, BatchNorm and
    HardSwish before an AvgPool, so side B has none of their tensors. A weight of the mid-depth
    Conv (by topological order among the nodes computing with a weight; its largest element x1.01)
    moves the fused region's output 2.4x its tolerance (ONNX Runtime, unoptimized), but the AvgPool
    after it halves that below tolerance: PASS, and the difference is born in the fused region,
    which the AvgPool run alone (its own tiny kernel difference) must not hide."""
    data = os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "real_world")
    m = onnx.load(os.path.join(data, "paddle_cnn.onnx"))
    g = m.graph
    consts = {n.output[0]: n for n in g.node if n.op_type == "Constant"}
    inits = {t.name: t for t in g.initializer}
    weighted = [n for n in g.node if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1
                and (n.input[1] in inits or n.input[1] in consts)]
    target = weighted[len(weighted) // 2]
    if target.input[1] in inits:
        t = inits[target.input[1]]
    else:
        t = next(a.t for a in consts[target.input[1]].attribute if a.name == "value")
    w = numpy_helper.to_array(t).copy()
    k = int(np.argmax(np.abs(w)))
    w.flat[k] *= 1.01
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(m, tmp_path / "faulty.onnx")
    r = run([onnxprobe, "compare", os.path.join(data, "paddle_cnn.onnx"), tmp_path / "faulty.onnx", "--b-opt-level",
             "all", "--input", f"x={os.path.join(data, 'paddle_cnn_input.npy')}", "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout
    first = json.loads((tmp_path / "r.json").read_text())["drift_origins"][0]
    assert first["node"] == target.name or target.name in first["nodes"], (first["node"], target.name)



def _identity_wrapped_norm(path, eps):
    """An exporter's shape (paddle2onnx): Identity copies around a residual Add and the
    LayerNormalization after it, which ONNX Runtime at level all removes and fuses
    (SkipLayerNormalization), so side B has none of the region's inner tensors."""
    from onnx import TensorProto, helper
    d = 32
    inits = [numpy_helper.from_array(np.ones(d, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(d, np.float32), "beta"),
             numpy_helper.from_array((np.random.default_rng(1).standard_normal((d, d)) / 6).astype(np.float32), "W")]
    nodes = [helper.make_node("Identity", ["x"], ["xi"], name="copy_x"),
             helper.make_node("Add", ["xi", "r"], ["s"], name="residual"),
             helper.make_node("Identity", ["s"], ["si"], name="copy_s"),
             helper.make_node("LayerNormalization", ["si", "gamma", "beta"], ["y"], name="norm", axis=-1,
                              epsilon=eps),
             helper.make_node("MatMul", ["y", "W"], ["out"], name="proj")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, d]),
                                       helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 8, d])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 8, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path))


def test_a_fused_region_is_named_by_a_node_that_computes(onnxprobe, tmp_path):
    """B at level all fuses copy_x, residual, copy_s and norm. A changed epsilon of norm is
    named at norm (the injected fault: its own difference is the region's), and no drift origin
    is an Identity that only copies values, with or without the fault."""
    _identity_wrapped_norm(tmp_path / "a.onnx", 1e-5)
    _identity_wrapped_norm(tmp_path / "b.onnx", 2e-5)
    rng = np.random.default_rng(2)
    for name in ("x", "r"):
        np.save(tmp_path / f"{name}.npy", (rng.standard_normal((1, 8, 32)) * 0.01).astype(np.float32))
    inputs = ["--input", f"x={tmp_path / 'x.npy'}", "--input", f"r={tmp_path / 'r.npy'}"]
    for b, fault in (("b.onnx", True), ("a.onnx", False)):
        js = tmp_path / f"{b}.json"
        r = run([onnxprobe, "compare", tmp_path / "a.onnx", tmp_path / b, "--b-opt-level", "all", *inputs,
                 "--json", js])
        assert r.returncode in (0, 1), r.stdout + r.stderr
        rep = json.loads(js.read_text())
        origins = rep["drift_origins"]
        assert all(o["op_type"] != "Identity" for o in origins), origins
        if fault:
            assert r.returncode == 1
            assert origins and origins[0]["node"] == "norm", origins
