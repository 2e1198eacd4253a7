"""onnxprobe diff: a weight changed, an attribute changed, nodes renamed (matched as renamed,
not added + removed), a node inserted, model fields; JSON parsed and checked against the edits
made with onnx.helper / numpy."""
import copy
import json
import os

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import lint_models as lm
from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")


def diff(onnxprobe, a, b, expect_rc=1):
    r = run([onnxprobe, "diff", a, b, "--json"])
    assert r.returncode == expect_rc, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "onnxprobe-diff" and d["schema_version"] == 1
    return d


def kinds(d):
    return sorted((n["kind"], n["name_a"], n["name_b"]) for n in d["nodes"])


def save(model, path):
    onnx.save(model, str(path))
    return path


def test_identical(onnxprobe):
    d = diff(onnxprobe, DEMO, DEMO, expect_rc=0)
    assert d["identical"] and d["nodes"] == [] and d["initializers"] == [] and d["fields"] == []
    assert d["counts"]["nodes"]["matched_by_name"] == 10
    assert run([onnxprobe, "diff", DEMO, DEMO]).stdout.strip().endswith("identical graphs and weights")


def test_one_weight_changed(onnxprobe, tmp_path):
    m = onnx.load(DEMO)
    t = m.graph.initializer[2]
    before = numpy_helper.to_array(t)
    after = before.copy()
    after.flat[5] += 0.25
    after.flat[7] -= 0.5
    t.CopyFrom(numpy_helper.from_array(after, t.name))
    d = diff(onnxprobe, DEMO, save(m, tmp_path / "b.onnx"))
    assert d["nodes"] == [] and d["fields"] == []
    [init] = d["initializers"]
    assert init["kind"] == "changed" and init["name_a"] == init["name_b"] == t.name
    assert init["num_different"] == int(np.sum(before != after)) == 2
    assert init["max_abs_diff"] == pytest.approx(float(np.max(np.abs(before - after))), rel=1e-6)
    assert init["num_elements"] == before.size and init["sha256_a"] != init["sha256_b"]
    assert d["counts"]["initializers"]["unchanged"] == len(m.graph.initializer) - 1


def test_faulty_demo_weights_against_numpy(onnxprobe):
    a = {t.name: numpy_helper.to_array(t) for t in onnx.load(DEMO).graph.initializer}
    b = {t.name: numpy_helper.to_array(t) for t in onnx.load(FAULTY).graph.initializer}
    changed = {n for n in a if n in b and not np.array_equal(a[n], b[n])}
    d = diff(onnxprobe, DEMO, FAULTY)
    got = {i["name_a"]: i for i in d["initializers"]}
    assert set(got) == changed
    for n in changed:
        assert got[n]["max_abs_diff"] == pytest.approx(float(np.max(np.abs(a[n] - b[n]))), rel=1e-6)
        assert got[n]["num_different"] == int(np.sum(a[n] != b[n]))
        # the node a user looks for: whichever nodes of B read the weight (from onnx's own graph)
        readers = [x.name for x in onnx.load(FAULTY).graph.node if n in x.input]
        assert got[n]["readers"] == readers and readers
    text = run([onnxprobe, "diff", DEMO, FAULTY]).stdout
    for n in changed:
        line = next(l for l in text.splitlines() if n in l)
        assert "read by " + got[n]["readers"][0] in line, line


def test_a_weight_read_through_identity_and_dequantize_names_the_node_computing_with_it(onnxprobe, tmp_path):
    w = np.arange(6, dtype=np.int8).reshape(2, 3)

    def model(w):
        g = helper.make_graph(
            [helper.make_node("Identity", ["wq"], ["wq_shared"], name="share"),
             helper.make_node("DequantizeLinear", ["wq_shared", "s"], ["wf"], name="dq"),
             helper.make_node("MatMul", ["x", "wf"], ["y"], name="the_matmul")],
            "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3])],
            [numpy_helper.from_array(w, "wq"), numpy_helper.from_array(np.float32(0.5), "s")])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    w2 = w.copy()
    w2[1, 1] = 9
    d = diff(onnxprobe, save(model(w), tmp_path / "a.onnx"), save(model(w2), tmp_path / "b.onnx"))
    [init] = d["initializers"]
    assert init["name_b"] == "wq" and init["readers"] == ["the_matmul"]


def test_attribute_changed(onnxprobe, tmp_path):
    m = onnx.load(DEMO)
    conv = next(n for n in m.graph.node if n.op_type == "Conv")
    pads = next(a for a in conv.attribute if a.name == "pads")
    old = list(pads.ints)
    pads.ints[:] = [2] * len(old)
    d = diff(onnxprobe, DEMO, save(m, tmp_path / "b.onnx"))
    [node] = d["nodes"]
    assert node["kind"] == "changed" and node["name_a"] == node["name_b"] == conv.name
    assert not node["renamed"] and node["inputs"] == []
    assert node["attributes"] == [{"name": "pads", "a": "[" + ", ".join(map(str, old)) + "]",
                                   "b": "[" + ", ".join(["2"] * len(old)) + "]"}]
    assert d["initializers"] == []


def rename_everything(model):
    """Every node, intermediate tensor and initializer gets a new name (graph inputs/outputs
    keep theirs)."""
    g = model.graph
    keep = {v.name for v in g.input} | {v.name for v in g.output}
    names = {}
    for i, t in enumerate(g.initializer):
        names[t.name] = f"w{i}"
        t.name = names[t.name]
    for i, n in enumerate(g.node):
        n.name = f"node{i}"
        for k, o in enumerate(n.output):
            if o not in keep:
                names[o] = f"t{i}_{k}"
                n.output[k] = names[o]
    for n in g.node:
        for k, x in enumerate(n.input):
            n.input[k] = names.get(x, x)
    for v in g.value_info:
        v.name = names.get(v.name, v.name)
    return model


def test_all_renamed_is_matched_by_structure(onnxprobe, tmp_path):
    a = onnx.load(DEMO)
    b = rename_everything(copy.deepcopy(a))
    d = diff(onnxprobe, DEMO, save(b, tmp_path / "b.onnx"))
    expected = sorted(("renamed", na.name, nb.name) for na, nb in zip(a.graph.node, b.graph.node))
    assert kinds(d) == expected
    assert all(n["attributes"] == [] and n["inputs"] == [] for n in d["nodes"])
    assert d["counts"]["nodes"]["matched_by_structure"] == len(a.graph.node)
    assert sorted((i["kind"], i["name_a"], i["name_b"]) for i in d["initializers"]) == sorted(
        ("renamed", ta.name, tb.name) for ta, tb in zip(a.graph.initializer, b.graph.initializer))


def test_one_node_renamed(onnxprobe, tmp_path):
    m = onnx.load(DEMO)
    node = m.graph.node[3]
    old_name, old_out = node.name, node.output[0]
    node.name, node.output[0] = "renamed_node", "renamed_tensor"
    for n in m.graph.node:
        n.input[:] = ["renamed_tensor" if x == old_out else x for x in n.input]
    d = diff(onnxprobe, DEMO, save(m, tmp_path / "b.onnx"))
    assert kinds(d) == [("renamed", old_name, "renamed_node")]
    assert d["counts"]["nodes"]["added"] == d["counts"]["nodes"]["removed"] == 0
    assert d["counts"]["nodes"]["unchanged"] == 9  # the consumer reads the renamed tensor: no change


def test_node_inserted(onnxprobe, tmp_path):
    m = onnx.load(DEMO)
    relu = next(n for n in m.graph.node if n.op_type == "Relu")
    consumer = next(n for n in m.graph.node if relu.output[0] in n.input)
    new = helper.make_node("Sigmoid", [relu.output[0]], ["inserted_out"], name="inserted")
    consumer.input[:] = ["inserted_out" if x == relu.output[0] else x for x in consumer.input]
    m.graph.node.insert(list(m.graph.node).index(consumer), new)
    d = diff(onnxprobe, DEMO, save(m, tmp_path / "b.onnx"))
    assert kinds(d) == [("added", None, "inserted"), ("changed", consumer.name, consumer.name)]
    changed = next(n for n in d["nodes"] if n["kind"] == "changed")
    slot = list(consumer.input).index("inserted_out")
    assert changed["inputs"] == [{"slot": slot, "a": relu.output[0], "b": "inserted_out"}]
    assert changed["attributes"] == [] and not changed["op_changed"]


def test_unnamed_node_inserted_in_unnamed_graph(onnxprobe, tmp_path):
    """Without names, matching is structural only: the inserted node is the one added."""
    a = onnx.load(DEMO)
    for n in a.graph.node:
        n.name = ""
    b = copy.deepcopy(a)
    relu = next(n for n in b.graph.node if n.op_type == "Relu")
    consumer = next(n for n in b.graph.node if relu.output[0] in n.input)
    consumer.input[:] = ["neg" if x == relu.output[0] else x for x in consumer.input]
    b.graph.node.insert(list(b.graph.node).index(consumer),
                        helper.make_node("Neg", [relu.output[0]], ["neg"]))
    d = diff(onnxprobe, save(a, tmp_path / "a.onnx"), save(b, tmp_path / "b.onnx"))
    added = [n for n in d["nodes"] if n["kind"] == "added"]
    assert [n["op_b"] for n in added] == ["Neg"] and d["counts"]["nodes"]["removed"] == 0
    [changed] = [n for n in d["nodes"] if n["kind"] == "changed"]
    assert changed["op_b"] == consumer.op_type and changed["inputs"][0]["b"] == "neg"


def test_node_removed_and_op_changed(onnxprobe, tmp_path):
    path_a = lm.dead_node(tmp_path / "a.onnx")
    m = onnx.load(str(path_a))
    del m.graph.node[1]  # "side"
    m.graph.node[0].op_type = "Elu"  # "relu" keeps its name
    d = diff(onnxprobe, path_a, save(m, tmp_path / "b.onnx"))
    assert kinds(d) == [("changed", "relu", "relu"), ("removed", "side", None)]
    changed = d["nodes"][0]
    assert changed["op_changed"] and (changed["op_a"], changed["op_b"]) == ("Relu", "Elu")


def test_model_fields(onnxprobe, tmp_path):
    a = onnx.load(DEMO)
    b = copy.deepcopy(a)
    b.opset_import[0].version = 17
    b.producer_version = "9.9"
    helper.set_model_props(b, {"author": "me"})
    b.graph.input[0].name = "pixels"
    for n in b.graph.node:
        n.input[:] = ["pixels" if x == a.graph.input[0].name else x for x in n.input]
    d = diff(onnxprobe, DEMO, save(b, tmp_path / "b.onnx"))
    fields = {f["field"]: (f["a"], f["b"]) for f in d["fields"]}
    assert fields["opset ai.onnx"] == (str(a.opset_import[0].version), "17")
    assert fields["producer_version"] == (a.producer_version, "9.9")
    assert fields["metadata author"] == (None, "me")
    assert any(f.startswith("input #1") and v[1].startswith("pixels") for f, v in fields.items())
    assert d["nodes"] == []  # the renamed graph input maps by position: no node changed
    assert "opset ai.onnx" in d["summary"]


def test_text_output_and_errors(onnxprobe, tmp_path):
    r = run([onnxprobe, "diff", DEMO, FAULTY])
    assert r.returncode == 1 and "changed" in r.stdout and "max |a-b|" in r.stdout
    r = run([onnxprobe, "diff", DEMO])
    assert r.returncode == 2 and "no B given" in r.stderr
    r = run([onnxprobe, "diff", DEMO, DEMO, DEMO])
    assert r.returncode == 2 and "unexpected argument" in r.stderr
    r = run([onnxprobe, "diff", DEMO, tmp_path / "missing.onnx"])
    assert r.returncode == 2 and "missing.onnx" in r.stderr
