"""onnxprobe fp16: overflow and decomposed-LayerNorm nodes are kept in float32, the converted model
passes, input/output types are kept. The converted models are checked independently with
onnxruntime's Python API (the test environment ONNXPROBE_PYENV) against numpy references."""
import json
import os
import subprocess
import textwrap
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run
from fp16_models import cancellation_model, conv_model, overflow_model, overflow_reference

# Independent checks use a fixed tolerance stricter than the default (1% of range + 1%).
ATOL, RTOL = 1e-3, 1e-2


def pyenv():
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    return py


def ort_run(model, feeds_npz, out_npz):
    """Runs `model` with onnxruntime's Python API; returns {output: array} and the I/O types."""
    script = textwrap.dedent(
        """
        import sys, json, numpy as np, onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
        feeds = dict(np.load(sys.argv[2]))
        outs = s.run(None, feeds)
        np.savez(sys.argv[3], **{o.name: v for o, v in zip(s.get_outputs(), outs)})
        print(json.dumps({"inputs": {i.name: i.type for i in s.get_inputs()},
                          "outputs": {o.name: o.type for o in s.get_outputs()}}))
        """
    )
    r = subprocess.run([pyenv(), "-c", script, str(model), str(feeds_npz), str(out_npz)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return dict(np.load(out_npz)), json.loads(r.stdout)


def node_output_types(path):
    """Element type of every node output in `path`, from ONNX shape inference (not onnxprobe)."""
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    types = {v.name: v.type.tensor_type.elem_type for v in m.graph.value_info}
    types.update({v.name: v.type.tensor_type.elem_type for v in m.graph.output})
    return m, types


def with_storage_barriers(src, dst):
    """Copies `src` with two Identities after every float16 node output, so onnxruntime's CPU
    provider rounds each float16 activation instead of computing float16 chains in float32
    (docs/fp16.md)."""
    m, types = node_output_types(src)
    nodes = []
    for n in m.graph.node:
        nodes.append(n)
        for i, o in enumerate(list(n.output)):
            if types.get(o) == TensorProto.FLOAT16:
                n.output[i] = o + "__stored"
                nodes.append(helper.make_node("Identity", [o + "__stored"], [o + "__mid"]))
                nodes.append(helper.make_node("Identity", [o + "__mid"], [o]))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.value_info[:]
    onnx.save(m, dst)


def all_fp16(src, dst):
    """A plain full float16 conversion written here (negative control): float initializers in
    float16, the input cast to float16 on entry, the outputs cast back."""
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    outs = {o.name for o in m.graph.output}
    nodes = [helper.make_node("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16)]
    for n in m.graph.node:
        n.input[:] = ["x16" if i == "x" else i for i in n.input]
        n.output[:] = [o + "16" if o in outs else o for o in n.output]
        n.input[:] = [i + "16" if i in outs else i for i in n.input]
        nodes.append(n)
    nodes += [helper.make_node("Cast", [o + "16"], [o], to=TensorProto.FLOAT) for o in outs]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.save(m, dst)


def test_overflowing_nodes_are_blocked_and_the_converted_model_passes(onnxprobe, tmp_path):
    model = tmp_path / "overflow.onnx"
    w = overflow_model(model)
    x = np.random.default_rng(2).uniform(0, 1, (1, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    ref = overflow_reference(x, w)
    # The premise, by numpy: these tensors really leave the float16 range.
    assert (x.astype(np.float64) * 3000).sum() > 65504
    d = x.astype(np.float64) * 1000 - (x.astype(np.float64) * 1000).mean()
    assert (d ** 2).max() > 65504

    out = tmp_path / "fp16.onnx"
    r = run([onnxprobe, "fp16", model, "--input", tmp_path / "in.npz", "-o", out,
             "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["schema"] == "onnxprobe-fp16" and rep["passed"]
    blocked = {b["node"]: b["reason"] for b in rep["block_list"]}
    assert blocked.get("reduce_sum") == "overflow", blocked
    assert blocked.get("ln_pow") == "overflow", blocked
    assert blocked.get("ln_var") == "input overflow", blocked
    # Only what the float16 range forces: readers of the overflowing tensors, nothing else.
    assert set(blocked) <= {"reduce_sum", "scale_sum", "ln_pow", "ln_var", "ln_add_eps",
                            "ln_sqrt"}, blocked
    # Tensor statistics against numpy: the sum and the squares overflow, the rest does not.
    tensors = {t["name"]: t for t in rep["tensors"]}
    assert tensors["sum_raw"]["overflow"] == 1
    h32 = x * np.float32(1000)
    d2 = np.square(h32 - h32.mean(axis=1, keepdims=True, dtype=np.float32))
    with np.errstate(over="ignore"):
        inf16 = int(np.isinf(d2.astype(np.float16)).sum())
    assert tensors["d2"]["overflow"] == inf16 > 0
    assert tensors["big"]["overflow"] == 0
    big = x * np.float32(3000)
    rt = np.linalg.norm(big.astype(np.float16).astype(np.float64) - big) / np.linalg.norm(big)
    assert tensors["big"]["roundtrip_error"] == pytest.approx(rt, rel=1e-3)

    # The converted model, run by onnxruntime's Python API, against the numpy reference.
    got, io = ort_run(out, tmp_path / "in.npz", tmp_path / "got.npz")
    assert io["inputs"] == {"x": "tensor(float)"}
    assert io["outputs"] == {"total": "tensor(float)", "ln": "tensor(float)"}
    for name in ("total", "ln"):
        assert got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], ref[name], rtol=RTOL, atol=ATOL)
    # Blocked nodes compute in float32, the others in float16 (ONNX shape inference says).
    m, types = node_output_types(out)
    by_name = {n.name: n for n in m.graph.node}
    assert types[by_name["ln_pow"].output[0]] == TensorProto.FLOAT
    assert types[by_name["reduce_sum"].output[0]] == TensorProto.FLOAT
    assert types[by_name["ln_sqrt"].output[0]] == TensorProto.FLOAT
    assert types[by_name["ln_div"].output[0]] == TensorProto.FLOAT16
    assert types[by_name["ln_gamma"].output[0]] == TensorProto.FLOAT16
    # onnxruntime's CPU provider would keep chains of float16 nodes in float32; with every
    # float16 activation rounded (Identity barriers added here), the model still passes.
    barred = tmp_path / "barred.onnx"
    with_storage_barriers(out, barred)
    got, _ = ort_run(barred, tmp_path / "in.npz", tmp_path / "got_barred.npz")
    for name in ("total", "ln"):
        np.testing.assert_allclose(got[name], ref[name], rtol=RTOL, atol=ATOL)
    # Negative control: the same rounding on a model converted in full overflows.
    all_fp16(model, tmp_path / "all16.onnx")
    with_storage_barriers(tmp_path / "all16.onnx", tmp_path / "all16_barred.onnx")
    bad, _ = ort_run(tmp_path / "all16_barred.onnx", tmp_path / "in.npz", tmp_path / "bad.npz")
    assert not np.isfinite(bad["total"]).all()

    # The same model with nothing allowed in float32: no list reaches tolerance, exit 1, no model.
    out2 = tmp_path / "never.onnx"
    r = run([onnxprobe, "fp16", model, "--input", tmp_path / "in.npz", "--max-block", "0",
             "-o", out2])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL" in r.stdout
    assert not out2.exists()


def test_small_conv_net_keeps_little_in_float32(onnxprobe, tmp_path):
    model = tmp_path / "cnn.onnx"
    conv_model(model)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out = tmp_path / "cnn16.onnx"
    r = run([onnxprobe, "fp16", model, "--input", tmp_path / "in.npz", "-o", out,
             "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert len(rep["block_list"]) <= 1, rep["block_list"]
    # The float32 reference and every node isolated in one run, then one converted model.
    assert rep["isolation_runs"] == 1
    assert rep["model_runs"] == 2
    ref, io_ref = ort_run(model, tmp_path / "in.npz", tmp_path / "ref.npz")
    got, io = ort_run(out, tmp_path / "in.npz", tmp_path / "got.npz")
    assert io == io_ref
    np.testing.assert_allclose(got["logits"], ref["logits"], rtol=RTOL, atol=ATOL)
    with_storage_barriers(out, tmp_path / "barred.onnx")
    got, _ = ort_run(tmp_path / "barred.onnx", tmp_path / "in.npz", tmp_path / "got_barred.npz")
    np.testing.assert_allclose(got["logits"], ref["logits"], rtol=RTOL, atol=ATOL)
    assert not np.array_equal(got["logits"], ref["logits"])  # float16 really was used
    # The weights really are float16 now.
    conv16 = onnx.load(out)
    kinds = {t.data_type for t in conv16.graph.initializer}
    assert kinds == {TensorProto.FLOAT16}, kinds


def test_isolated_error_matches_a_numpy_float16_rerun(onnxprobe, tmp_path):
    """The isolated error of a node is its float16 result against its float32 result."""
    model = tmp_path / "overflow.onnx"
    overflow_model(model)
    x = np.random.default_rng(4).uniform(0, 1, (1, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    r = run([onnxprobe, "fp16", model, "--input", tmp_path / "in.npz", "--json",
             tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    nodes = {n["node"]: n for n in json.loads((tmp_path / "r.json").read_text())["nodes"]}
    # ln_gamma alone: float16(norm) * float16(gamma), rounded to float16 (a float16 product is
    # correctly rounded whether the runtime computes it in float16 or in float32).
    w = overflow_model(tmp_path / "again.onnx")
    h = x * np.float32(1000)
    d = h - h.mean(axis=1, keepdims=True, dtype=np.float32)
    var_eps = (d * d).mean(axis=1, keepdims=True, dtype=np.float32) + np.float32(1e-5)
    norm = d / np.sqrt(var_eps)
    gamma = w["gamma"].astype(np.float32)
    y32 = norm * gamma
    y16 = (norm.astype(np.float16).astype(np.float32) * gamma.astype(np.float16)).astype(np.float16)
    err = np.linalg.norm(y16.astype(np.float64) - y32) / np.linalg.norm(y32)
    assert 1e-5 < err < 1e-3
    assert nodes["ln_gamma"]["isolated_error"] == pytest.approx(err, rel=0.05)
    assert nodes["reduce_sum"]["overflow"] == 1
    assert nodes["mul_big"]["overflow"] == 0


def test_outputs_are_guarded(onnxprobe, tmp_path):
    model = tmp_path / "cnn.onnx"
    conv_model(model)
    other = tmp_path / "notes.onnx"
    other.write_bytes(b"someone's file")
    r = run([onnxprobe, "fp16", model, "-o", other])
    assert r.returncode == 2 and "refusing" in r.stderr
    assert other.read_bytes() == b"someone's file"
    r = run([onnxprobe, "fp16", model, "-o", model])
    assert r.returncode == 2 and "input of this run" in r.stderr
    out = tmp_path / "cnn16.onnx"
    assert run([onnxprobe, "fp16", model, "-o", out]).returncode == 0
    # A converted model of ours may be replaced; --force replaces someone else's file.
    assert run([onnxprobe, "fp16", model, "-o", out]).returncode == 0
    assert run([onnxprobe, "fp16", model, "-o", other, "--force"]).returncode == 0
    assert onnx.load(other).producer_name == "onnxprobe fp16"


def test_types_unknown_before_the_run_take_separate_runs(onnxprobe, tmp_path):
    """A custom operator (identity, from the test suite's library) leaves its output untyped by
    shape inference: types are learned from the float32 run and the isolation runs apart. Same
    block list, one run more, and the custom node stays in float32."""
    lib = os.environ.get("ONNXPROBE_CRASH_OP_LIB")
    assert lib and os.path.exists(lib), "ONNXPROBE_CRASH_OP_LIB (tests/custom_op) is not built"
    model = tmp_path / "overflow.onnx"
    overflow_model(model)
    m = onnx.load(model)
    for n in m.graph.node:
        if n.name == "mul_h":
            n.output[0] = "h_raw"
    m.graph.node.insert(4, helper.make_node("CrashOp", ["h_raw"], ["h"], name="custom",
                                            domain="onnxprobe.test"))
    m.opset_import.append(helper.make_opsetid("onnxprobe.test", 1))
    onnx.save(m, tmp_path / "custom.onnx")
    x = np.random.default_rng(2).uniform(0, 1, (1, 64)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    reports = {}
    for name in ("overflow", "custom"):
        r = run([onnxprobe, "fp16", tmp_path / f"{name}.onnx", "--input", tmp_path / "in.npz",
                 "--json", tmp_path / f"{name}.json", "--custom-op-lib", lib])
        assert r.returncode == 0, r.stdout + r.stderr
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert reports["overflow"]["model_runs"] == 2
    assert reports["custom"]["model_runs"] == 3
    assert reports["custom"]["isolation_runs"] == 1
    blocks = {k: sorted(b["node"] for b in rep["block_list"]) for k, rep in reports.items()}
    assert blocks["overflow"] == blocks["custom"]
    custom = [n for n in reports["custom"]["nodes"] if n["node"] == "custom"][0]
    assert custom["eligibility"] == "custom domain" and not custom["isolated"]


def test_conversion_respects_type_constraints_and_graph_outputs(onnxprobe, tmp_path):
    """Resize's scales input only takes float32; an intermediate that is also a graph output keeps
    its name and type; a Constant feeds a float16 node. The converted model passes the ONNX
    checker with strict shape inference and runs in onnxruntime."""
    rng = np.random.default_rng(6)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["k"], name="const",
                         value=numpy_helper.from_array(np.array(0.5, dtype=np.float32))),
        helper.make_node("Mul", ["c", "k"], ["half"], name="mul"),
        helper.make_node("Resize", ["half", "", "scales"], ["up"], name="resize", mode="nearest"),
        helper.make_node("Relu", ["up"], ["y"], name="relu"),
    ]
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")]
    g = helper.make_graph(
        nodes, "constraints", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    x = rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out = tmp_path / "m16.onnx"
    r = run([onnxprobe, "fp16", tmp_path / "m.onnx", "--input", tmp_path / "in.npz", "-o", out])
    assert r.returncode == 0, r.stdout + r.stderr
    converted = onnx.load(out)
    onnx.checker.check_model(converted, full_check=True)
    inits16 = {t.name: t.data_type for t in converted.graph.initializer}
    assert inits16["scales"] == TensorProto.FLOAT
    assert TensorProto.FLOAT16 in inits16.values()  # the Conv weight
    _, types = node_output_types(out)
    resize = [n for n in converted.graph.node if n.op_type == "Resize"][0]
    assert types[resize.output[0]] == TensorProto.FLOAT16
    ref, io_ref = ort_run(tmp_path / "m.onnx", tmp_path / "in.npz", tmp_path / "ref.npz")
    got, io = ort_run(out, tmp_path / "in.npz", tmp_path / "got.npz")
    assert io == io_ref
    for name in ("y", "c"):
        np.testing.assert_allclose(got[name], ref[name], rtol=RTOL, atol=ATOL)


def test_keep_fp32_names_nodes_and_unknown_names_are_refused(onnxprobe, tmp_path):
    model = tmp_path / "overflow.onnx"
    overflow_model(model)
    r = run([onnxprobe, "fp16", model, "--range", "x:0,1", "--keep-fp32", "ln_div,mul_h",
             "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    blocked = {b["node"]: b["reason"] for b in json.loads((tmp_path / "r.json").read_text())[
        "block_list"]}
    assert blocked["ln_div"] == "requested" and blocked["mul_h"] == "requested"
    assert blocked["ln_pow"] == "overflow"
    r = run([onnxprobe, "fp16", model, "--keep-fp32", "no_such_node"])
    assert r.returncode == 2
    assert "no_such_node" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_isolation_split_by_memory_gives_the_same_results(onnxprobe, tmp_path):
    """With a tiny --max-memory the float32 run and the isolation run apart, in several batches;
    every node's isolated error is the same as from the single embedded run."""
    model = tmp_path / "cnn.onnx"
    conv_model(model)
    reps = []
    for extra in ([], ["--max-memory", "4K"]):
        r = run([onnxprobe, "fp16", model, "--json", tmp_path / "r.json", "--force"] + extra)
        assert r.returncode == 0, r.stdout + r.stderr
        reps.append(json.loads((tmp_path / "r.json").read_text()))
    assert reps[0]["isolation_runs"] == 1 and reps[0]["model_runs"] == 2
    assert reps[1]["isolation_runs"] > 2
    assert reps[1]["model_runs"] == 1 + reps[1]["isolation_runs"] + len(reps[1]["attempts"])
    errs = [{n["node"]: n["isolated_error"] for n in rep["nodes"]} for rep in reps]
    assert errs[0].keys() == errs[1].keys()
    for node, e in errs[0].items():
        assert errs[1][node] == pytest.approx(e, rel=1e-6, abs=1e-12), node


def test_external_data_model_converts_to_a_self_contained_model(onnxprobe, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    conv_model(tmp_path / "cnn.onnx")
    m = onnx.load(tmp_path / "cnn.onnx")
    onnx.save_model(m, str(src / "cnn.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    assert (src / "weights.bin").exists()
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out_dir = tmp_path / "elsewhere"
    out_dir.mkdir()
    out = out_dir / "cnn16.onnx"
    r = run([onnxprobe, "fp16", src / "cnn.onnx", "--input", tmp_path / "in.npz", "-o", out,
             "--keep-fp32", "fc"])  # fc keeps its float32 weights: they must travel too
    assert r.returncode == 0, r.stdout + r.stderr
    converted = onnx.load(out, load_external_data=False)
    assert all(t.data_location != TensorProto.EXTERNAL for t in converted.graph.initializer)
    assert {t.name: t.data_type for t in converted.graph.initializer}["fc"] == TensorProto.FLOAT
    ref, _ = ort_run(tmp_path / "cnn.onnx", tmp_path / "in.npz", tmp_path / "ref.npz")
    got, _ = ort_run(out, tmp_path / "in.npz", tmp_path / "got.npz")
    np.testing.assert_allclose(got["logits"], ref["logits"], rtol=RTOL, atol=ATOL)


def test_a_node_hurt_by_its_float16_inputs_is_kept_with_their_producers(onnxprobe, tmp_path):
    model = tmp_path / "cancel.onnx"
    cancellation_model(model)
    x = np.random.default_rng(8).uniform(0, 1, (1, 256)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    # The premise, by numpy: in float16 the shifted value keeps steps of 0.5.
    back16 = (x.astype(np.float16) + np.float16(1000)) - np.float16(1000)
    assert np.abs(back16.astype(np.float64) - x).max() > 0.1
    out = tmp_path / "cancel16.onnx"
    r = run([onnxprobe, "fp16", model, "--input", tmp_path / "in.npz", "-o", out,
             "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    blocked = {b["node"]: b["reason"] for b in rep["block_list"]}
    assert blocked == {"unshift": "error", "shift": "feeds an input-sensitive node"}, blocked
    assert [a["passed"] for a in rep["attempts"]] == [False, True]
    ref = 2 * x.astype(np.float64)
    barred = tmp_path / "barred.onnx"
    with_storage_barriers(out, barred)
    got, _ = ort_run(barred, tmp_path / "in.npz", tmp_path / "got.npz")
    np.testing.assert_allclose(got["y"], ref, rtol=RTOL, atol=ATOL)


def export_torchvision(tmp_path, name):
    """torchvision architectures with seeded random weights, small inputs: ResNet-50 and a
    ViT-B-shaped transformer (2 layers; its zero-initialized head given random weights)."""
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "resnet50":
        model, size = torchvision.models.resnet50(weights=None), 64
    else:
        model, size = torchvision.models.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
            mlp_dim=128, num_classes=10), 32
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    path = tmp_path / f"{name}.onnx"
    with warnings.catch_warnings():  # the tracer's notes on the attention's shape asserts
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), torch.randn(1, 3, size, size), str(path),
                          opset_version=15, input_names=["x"], output_names=["logits"])
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    np.savez(tmp_path / f"{name}_in.npz", x=x)
    return path


@pytest.mark.parametrize("name", ["resnet50", "vit"])
def test_torchvision_models_keep_little_in_float32(onnxprobe, tmp_path, name):
    model = export_torchvision(tmp_path, name)
    feeds = tmp_path / f"{name}_in.npz"
    out = tmp_path / f"{name}_fp16.onnx"
    r = run([onnxprobe, "fp16", model, "--input", feeds, "-o", out, "--json", tmp_path / "r.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert len(rep["block_list"]) <= 2, rep["block_list"]
    assert rep["model_runs"] <= 3
    # Independently: onnxruntime with every float16 activation rounded, against float32, at the
    # documented default tolerance (1% of the output's range + 1%).
    ref, io_ref = ort_run(model, feeds, tmp_path / "ref.npz")
    barred = tmp_path / "barred.onnx"
    with_storage_barriers(out, barred)
    got, io = ort_run(barred, feeds, tmp_path / "got.npz")
    assert io == io_ref
    atol = 1e-2 * np.abs(ref["logits"]).max()
    np.testing.assert_allclose(got["logits"], ref["logits"], rtol=1e-2, atol=atol)
    assert not np.array_equal(got["logits"], ref["logits"])
