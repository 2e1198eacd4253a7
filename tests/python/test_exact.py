"""The exact reference: a model computed in float64 (run --precision float64, compare --reference
exact). Its values are checked against independent float64 computations (numpy, PyTorch in
float64); the verdict it gives is checked on accumulated rounding (must pass) and on an injected
weight fault (must fail, naming the node the fault was put in)."""
import json
import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from onnx import numpy_helper as nh

from conftest import run


def save(nodes, inits, inputs, outputs, path, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, str(path))


def f32(name, arr):
    return nh.from_array(np.asarray(arr, dtype=np.float32), name)


def conv_ref(x, w, b=None, pads=(0, 0, 0, 0), stride=(1, 1), group=1):
    """Direct convolution in float64 (no im2col): every output element a sum over its window."""
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + kh,
                         j * stride[1]:j * stride[1] + kw]
                y[:, o, i, j] = (win * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    return y


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    """Conv (pads, stride 2, 2 groups, bias), BatchNormalization, Relu, a depthwise Conv with
    auto_pad SAME_UPPER, HardSigmoid, InstanceNormalization, GlobalAveragePool, Gemm, Erf (ops
    without a float64 kernel in ONNX Runtime among them) and a Resize (left in float32)."""
    out = tmp_path_factory.mktemp("exact_cnn")
    rng = np.random.default_rng(0)
    w = {"W1": rng.standard_normal((8, 2, 3, 3)), "B1": rng.standard_normal(8),
         "W2": rng.standard_normal((8, 1, 3, 3)), "sc": rng.random(8) + 0.5,
         "bi": rng.standard_normal(8), "mu": rng.standard_normal(8) * 0.1, "var": rng.random(8) + 0.5,
         "G": rng.standard_normal((8, 5)), "Gb": rng.standard_normal(5)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1],
                         strides=[2, 2], group=2),
        helper.make_node("BatchNormalization", ["c1", "sc", "bi", "mu", "var"], ["bn"], name="bn"),
        helper.make_node("Relu", ["bn"], ["r"], name="relu"),
        helper.make_node("Conv", ["r", "W2"], ["c2"], name="conv2", auto_pad="SAME_UPPER", group=8),
        helper.make_node("HardSigmoid", ["c2"], ["hs"], name="hs"),
        helper.make_node("InstanceNormalization", ["hs", "sc", "bi"], ["inorm"], name="inorm"),
        helper.make_node("GlobalAveragePool", ["inorm"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "G", "Gb"], ["g"], name="gemm"),
        helper.make_node("Erf", ["g"], ["e"], name="erf"),
        helper.make_node("Resize", ["c2", "", "rs"], ["rz"], name="resize", mode="nearest"),
    ]
    inits = [f32(k, v) for k, v in w.items()] + [f32("rs", [1, 1, 2, 2])]
    save(nodes, inits, [helper.make_tensor_value_info("x", TP.FLOAT, [1, 4, 9, 9])],
         [helper.make_tensor_value_info("e", TP.FLOAT, None),
          helper.make_tensor_value_info("rz", TP.FLOAT, None)], out / "cnn.onnx")
    x = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    np.save(out / "x.npy", x)
    # the float64 reference, from the float32 weights' exact values
    d = {k: v.astype(np.float64) for k, v in w.items()}
    x64 = x.astype(np.float64)
    eps = float(np.float32(1e-5))
    ch = lambda v: v[None, :, None, None]  # noqa: E731
    ref = {"c1": conv_ref(x64, d["W1"], d["B1"], (1, 1, 1, 1), (2, 2), 2)}
    ref["bn"] = (ref["c1"] - ch(d["mu"])) / np.sqrt(ch(d["var"]) + eps) * ch(d["sc"]) + ch(d["bi"])
    ref["r"] = np.maximum(ref["bn"], 0)
    ref["c2"] = conv_ref(ref["r"], d["W2"], None, (1, 1, 1, 1), (1, 1), 8)
    ref["hs"] = np.clip(float(np.float32(0.2)) * ref["c2"] + 0.5, 0, 1)
    mean = ref["hs"].mean(axis=(2, 3), keepdims=True)
    var = ref["hs"].var(axis=(2, 3), keepdims=True)
    ref["inorm"] = (ref["hs"] - mean) / np.sqrt(var + eps) * ch(d["sc"]) + ch(d["bi"])
    ref["gap"] = ref["inorm"].mean(axis=(2, 3), keepdims=True)
    ref["g"] = ref["gap"].reshape(1, -1) @ d["G"] + d["Gb"]
    ref["e"] = np.vectorize(math.erf)(ref["g"])
    return out, ref


def read_dump(folder):
    manifest = json.loads((folder / "manifest.json").read_text())
    return {t["name"]: np.load(folder / t["file"]) for t in manifest["tensors"]
            if t["kind"] != "input"}, manifest


def test_float64_run_matches_numpy(onnxprobe, cnn, tmp_path):
    out, ref = cnn
    dump, report = tmp_path / "exact.dump", tmp_path / "run.json"
    r = run([onnxprobe, "run", out / "cnn.onnx", "--input", f"x={out / 'x.npy'}", "--precision",
             "float64", "-o", dump, f"--json={report}"])
    assert r.returncode == 0, r.stderr
    got, manifest = read_dump(dump)
    assert set(got) >= set(ref)
    assert not any("@exact" in n or "/exact/" in n for n in got), "helper tensors were dumped"
    for name, want in ref.items():
        assert got[name].dtype == np.float64, name
        err = np.max(np.abs(got[name] - want)) / max(np.max(np.abs(want)), 1e-300)
        assert err < 1e-13, f"{name}: {err} from numpy's float64 value"
    methods = {n["node"]: n for n in json.loads(report.read_text())["exact_nodes"]}
    assert methods["conv1"]["method"] == "im2col + float64 MatMul"
    assert methods["erf"]["method"] == "onnxprobe float64 kernel"
    assert methods["gemm"]["method"] == "float64 kernel"
    assert methods["resize"]["method"].startswith("float32") and "Resize" in methods["resize"]["why"]
    assert "resize (Resize): in float32" in r.stderr


TRANSFORMER = """
import sys, numpy as np, torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                         activation="gelu", batch_first=True).eval()
x = torch.randn(2, 7, 32)
np.save(sys.argv[2], x.numpy())
torch.onnx.export(layer, (x,), sys.argv[1], input_names=["x"], output_names=["y"], opset_version=17,
                  dynamo=False)
with torch.no_grad():
    y64 = layer.double()(x.double())
np.save(sys.argv[3], y64.numpy())
"""


def test_float64_transformer_matches_torch_float64(onnxprobe, tmp_path):
    model, x, want = tmp_path / "t.onnx", tmp_path / "x.npy", tmp_path / "y64.npy"
    r = run(["/usr/bin/python3", "-c", TRANSFORMER, model, x, want])
    if r.returncode != 0 and "unexpected keyword argument 'dynamo'" in r.stderr:
        r = run(["/usr/bin/python3", "-c", TRANSFORMER.replace(",\n                  dynamo=False", ""),
                 model, x, want])
    assert r.returncode == 0, r.stderr
    dump = tmp_path / "t.dump"
    r = run([onnxprobe, "run", model, "--input", f"x={x}", "--precision", "float64", "-o", dump])
    assert r.returncode == 0, r.stderr
    got, _ = read_dump(dump)
    r = run([onnxprobe, "run", model, "--input", f"x={x}", "-o", tmp_path / "f32.dump"])
    assert r.returncode == 0, r.stderr
    f32_run, _ = read_dump(tmp_path / "f32.dump")
    want = np.load(want)
    scale = np.max(np.abs(want))
    err = np.max(np.abs(got["y"] - want)) / scale
    err32 = np.max(np.abs(f32_run["y"].astype(np.float64) - want)) / scale
    # the exported model holds sqrt(head size), sqrt(2) and LayerNorm's epsilon as float32
    # numbers (relative rounding <= 2^-24 = 6e-8), which PyTorch's float64 run does not round:
    # the exact value of the model differs from PyTorch's by that much, and no more
    assert err < 1e-7, f"the exact reference is {err} from PyTorch's float64 output"
    assert err < err32 / 10, f"exact {err} vs float32 run {err32}"


def deep_cnn(path, layers=30, gain=2.2, fault=None):
    """A plain deep CNN (3x3 Conv + Tanh) whose layers amplify what they read: float32 rounding
    grows with depth. fault=(layer, factor): that layer's whole weight scaled."""
    rng = np.random.default_rng(2)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        cin = 3 if i == 0 else 32
        w = rng.standard_normal((32, cin, 3, 3)) * gain / np.sqrt(cin * 9)
        if fault and fault[0] == i:
            w = w * fault[1]
        inits += [f32(f"W{i}", w), f32(f"b{i}", rng.standard_normal(32) * 0.1)]
        nodes += [helper.make_node("Conv", [x, f"W{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}",
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Tanh", [f"c{i}"], [f"t{i}"], name=f"tanh{i}")]
        x = f"t{i}"
    nodes += [helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"),
              helper.make_node("Flatten", ["gap"], ["logits"], name="flat")]
    save(nodes, inits, [helper.make_tensor_value_info("x", TP.FLOAT, [1, 3, 32, 32])],
         [helper.make_tensor_value_info("logits", TP.FLOAT, None)], path)
    return path


def compare(onnxprobe, tmp_path, a, b, *extra, side_b=("--b-opt-level", "all")):
    report = tmp_path / "c.json"
    r = run([onnxprobe, "compare", a, b, *side_b, f"--json={report}", *extra])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r, json.loads(report.read_text())


@pytest.mark.parametrize("side_b", [("--b-opt-level", "all"),
                                    ("--b-ort-version", "1.20.1", "--b-opt-level", "all")],
                         ids=["opt_all", "ort1.20.1_opt_all"])
def test_accumulated_rounding_passes_and_a_weight_fault_fails(onnxprobe, tmp_path, side_b):
    model = deep_cnn(tmp_path / "deep.onnx")
    # the premise: rounding alone exceeds the elementwise tolerance (another optimization level,
    # another runtime version)
    r, rep = compare(onnxprobe, tmp_path, model, model, side_b=side_b)
    assert r.returncode == 1 and rep["summary"]["failed"] > 0, r.stdout + r.stderr
    r, rep = compare(onnxprobe, tmp_path, model, model, "--reference", "exact", side_b=side_b)
    assert r.returncode == 0, r.stdout
    rows = [t for t in rep["tensors"] if "exact_error_a" in t]
    assert len(rows) == len(rep["tensors"])
    # both sides are float32: each is a rounding away from exact, of the same order
    last = rows[-2]  # t29, the deepest Tanh
    assert 0 < last["exact_error_a"] and 0 < last["exact_error_b"]
    assert 0.1 < last["exact_error_a"] / last["exact_error_b"] < 10
    assert rep["exact_reference"]["conv_as_matmul_nodes"] == 30
    assert "closer to exact: A on" in r.stdout

    faulty = deep_cnn(tmp_path / "deep_f.onnx", fault=(10, 1.001))
    r, rep = compare(onnxprobe, tmp_path, model, faulty, "--reference", "exact", side_b=side_b)
    assert r.returncode == 1, r.stdout
    culprits = [c["node"] for c in rep["localization"]["culprits"] if c["introduced"]]
    assert culprits and culprits[0] == "conv10", rep["localization"]["culprits"]
    t29 = next(t for t in rep["tensors"] if t["name"] == "t29")
    assert t29["closer"] == "a" and t29["exact_error_b"] > 10 * t29["exact_error_a"]


@pytest.mark.parametrize("mode", [("--bisect", "--bisect-per-run", "2"), ("--isolate-runtime",)], ids=["bisect", "isolate_runtime"])
def test_exact_reference_with_bisection_and_an_isolated_runtime(onnxprobe, tmp_path, mode):
    # the bisection measures the rows it probes and the rest against the exact reference too; with
    # --isolate-runtime the float64 copy runs in a child process like the sides
    model = deep_cnn(tmp_path / "deep.onnx")
    r, rep = compare(onnxprobe, tmp_path, model, model, *mode)
    assert r.returncode == 1 and rep["summary"]["failed"] > 0, r.stdout  # the premise, as above
    r, rep = compare(onnxprobe, tmp_path, model, model, "--reference", "exact", *mode)
    assert r.returncode == 0, r.stdout
    assert all("exact_error_a" in t and "exact_error_b" in t for t in rep["tensors"])
    assert rep["exact_reference"]["conv_as_matmul_nodes"] == 30
    faulty = deep_cnn(tmp_path / "deep_f.onnx", fault=(10, 1.001))
    r, rep = compare(onnxprobe, tmp_path, model, faulty, "--reference", "exact", *mode)
    assert r.returncode == 1, r.stdout
    culprits = [c["node"] for c in rep["localization"]["culprits"] if c["introduced"]]
    assert culprits and culprits[0] == "conv10", rep["localization"]["culprits"]
    t29 = next(t for t in rep["tensors"] if t["name"] == "t29")
    assert t29["closer"] == "a" and t29["exact_error_b"] > 10 * t29["exact_error_a"]


def test_float16_copy_is_further_from_exact(onnxprobe, tmp_path):
    """B rounds every activation through float16 (as a float16 copy stores them): the report
    says A is the closer side on every row after the first rounding."""
    rng = np.random.default_rng(3)
    nodes_a, nodes_b, inits, x = [], [], [], "x"
    for i in range(4):
        inits += [f32(f"W{i}", rng.standard_normal((16, 16)) / 4)]
        nodes_a.append(helper.make_node("MatMul", [x, f"W{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes_a.append(helper.make_node("Tanh", [f"m{i}"], [f"h{i}"], name=f"tanh{i}"))
        nodes_b.append(helper.make_node("MatMul", [x, f"W{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes_b.append(helper.make_node("Cast", [f"m{i}"], [f"m{i}_h"], name=f"to16_{i}", to=TP.FLOAT16))
        nodes_b.append(helper.make_node("Cast", [f"m{i}_h"], [f"m{i}_f"], name=f"to32_{i}", to=TP.FLOAT))
        nodes_b.append(helper.make_node("Tanh", [f"m{i}_f"], [f"h{i}"], name=f"tanh{i}"))
        x = f"h{i}"
    io = ([helper.make_tensor_value_info("x", TP.FLOAT, [8, 16])],
          [helper.make_tensor_value_info(x, TP.FLOAT, None)])
    save(nodes_a, inits, *io, tmp_path / "a.onnx")
    save(nodes_b, inits, *io, tmp_path / "b.onnx")
    report = tmp_path / "c.json"
    r = run([onnxprobe, "compare", tmp_path / "a.onnx", tmp_path / "b.onnx", "--reference", "exact",
             f"--json={report}"])
    assert r.returncode in (0, 1), r.stderr
    rep = json.loads(report.read_text())
    tanh = [t for t in rep["tensors"] if t["name"].startswith("h")]
    assert len(tanh) == 4 and all(t["closer"] == "a" for t in tanh), tanh
    assert rep["exact_reference"]["closer_b"] == 0


@pytest.mark.parametrize("args,message", [
    (["--reference", "float"], "--reference: expected exact, got 'float'"),
])
def test_bad_reference_options(onnxprobe, cnn, args, message):
    out, _ = cnn
    r = run([onnxprobe, "compare", out / "cnn.onnx", "--b-opt-level", "all", *args])
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_bad_precision(onnxprobe, cnn, tmp_path):
    out, _ = cnn
    r = run([onnxprobe, "run", out / "cnn.onnx", "--precision", "float16", "-o", tmp_path / "d"])
    assert r.returncode == 2 and "--precision: expected float32 or float64, got 'float16'" in r.stderr


def test_html_says_which_side_is_closer(onnxprobe, cnn, tmp_path):
    from test_compare_cli import render_in_chromium
    out, _ = cnn
    page = tmp_path / "r.html"
    r = run([onnxprobe, "compare", out / "cnn.onnx", "--b-opt-level", "all", "--input",
             f"x={out / 'x.npy'}", "--reference", "exact", "--html", page])
    assert r.returncode == 0, r.stderr
    _, text = render_in_chromium(page)
    assert "exact reference: 4 nodes in float64 kernels, 2 Conv as im2col" in text[""]  # notes
    assert "Which side is right" in text[""]
    assert "closer to the exact reference (the model computed in float64) A on" in text[""]
    assert "furthest from exact" in text[""]
    assert "resize (Resize): in float32" in text[""]


@pytest.mark.parametrize("attrs,opset", [
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 17),
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1), 17),
    (dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1), 17),
    (dict(kernel_shape=[2, 2], strides=[2, 2]), 17),
    (dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"), 17),
    (dict(kernel_shape=[3, 3], strides=[1, 1], auto_pad="SAME_LOWER", count_include_pad=1), 17),
    (dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]), 19),
], ids=["pads", "count_include_pad", "ceil_mode", "plain", "same_upper", "same_lower_incl", "dilated"])
def test_average_pool_in_float64_agrees_with_the_runtime(onnxprobe, tmp_path, attrs, opset):
    """onnxprobe's own float64 AveragePool against ONNX Runtime's float32 kernel on the same
    input (its semantics: window, pads, ceil_mode, count_include_pad): within float32 rounding."""
    x = np.random.default_rng(5).standard_normal((2, 3, 9, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    save([helper.make_node("AveragePool", ["x"], ["y"], name="pool", **attrs)], [],
         [helper.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
         [helper.make_tensor_value_info("y", TP.FLOAT, None)], tmp_path / "pool.onnx", opset=opset)
    for precision in ("float32", "float64"):
        r = run([onnxprobe, "run", tmp_path / "pool.onnx", "--input", f"x={tmp_path / 'x.npy'}",
                 "--precision", precision, "-o", tmp_path / precision, f"--json={tmp_path / 'j.json'}"])
        assert r.returncode == 0, r.stderr
    y32, _ = read_dump(tmp_path / "float32")
    y64, _ = read_dump(tmp_path / "float64")
    assert y64["y"].dtype == np.float64 and y64["y"].shape == y32["y"].shape
    assert np.max(np.abs(y64["y"] - y32["y"])) < 1e-6
    nodes = json.loads((tmp_path / "j.json").read_text())["exact_nodes"]
    assert nodes == [{"node": "pool", "op_type": "AveragePool", "method": "onnxprobe float64 kernel"}]


@pytest.mark.parametrize("attrs,bias,c,m", [
    (dict(strides=[2, 2], pads=[1, 1, 1, 1]), True, 4, 3),
    (dict(strides=[2, 1], pads=[0, 1, 1, 0], output_padding=[1, 0]), False, 4, 3),
    (dict(strides=[1, 1], dilations=[2, 1], group=2), True, 4, 6),
    (dict(strides=[3, 3]), True, 2, 2),
    (dict(auto_pad="SAME_UPPER", strides=[2, 2]), True, 4, 3),  # left in float32, named
], ids=["pads", "output_padding", "grouped_dilated", "plain", "same_upper"])
def test_conv_transpose_in_float64_agrees_with_the_runtime(onnxprobe, tmp_path, attrs, bias, c, m):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, c, 5, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    g = attrs.get("group", 1)
    inits = [f32("W", rng.standard_normal((c, m // g, 3, 2)))] + ([f32("B", rng.standard_normal(m))] if bias else [])
    save([helper.make_node("ConvTranspose", ["x", "W"] + (["B"] if bias else []), ["y"], name="up",
                           kernel_shape=[3, 2], **attrs)], inits,
         [helper.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
         [helper.make_tensor_value_info("y", TP.FLOAT, None)], tmp_path / "up.onnx")
    for precision in ("float32", "float64"):
        r = run([onnxprobe, "run", tmp_path / "up.onnx", "--input", f"x={tmp_path / 'x.npy'}",
                 "--precision", precision, "-o", tmp_path / precision, f"--json={tmp_path / 'j.json'}"])
        assert r.returncode == 0, r.stderr
    y32, _ = read_dump(tmp_path / "float32")
    y64, _ = read_dump(tmp_path / "float64")
    assert y64["y"].shape == y32["y"].shape
    assert np.max(np.abs(y64["y"] - y32["y"])) < 1e-5 * max(1.0, np.max(np.abs(y64["y"])))
    (node,) = json.loads((tmp_path / "j.json").read_text())["exact_nodes"]
    if "auto_pad" in attrs:
        assert node["method"].startswith("float32") and "auto_pad SAME_UPPER" in node["why"]
    else:
        assert node["method"] == "onnxprobe float64 kernel"


@pytest.fixture(scope="module")
def wild(tmp_path_factory):
    import wild_models
    out = tmp_path_factory.mktemp("exact_wild")
    return wild_models.write_all(out)


@pytest.mark.parametrize("a,b,culprit", [
    ("if", "if_fault", "then_conv2"),
    ("scan", "scan_fault", "rnn_mm_h"),
    ("loop", "loop_fault", "loop_add"),
    ("constants", "constants_bumped", "c2"),
    ("zipmap", "zipmap_scaled", None),
], ids=["if", "scan", "loop", "constant_weights", "zipmap"])
def test_exact_reference_of_models_from_the_wild(onnxprobe, wild, tmp_path, a, b, culprit):
    """Control flow (bodies converted, branches inlined, loops unrolled on the float64 copy),
    weights in Constant nodes, a ZipMap (a sequence of maps, left in float32): the unfaulted model
    passes against itself at level all, its faulted copy is the side further from exact and the
    fault's node is named."""
    r, rep = compare(onnxprobe, tmp_path, wild[a], wild[a], "--reference", "exact")
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["exact_reference"]["rows"] > 0
    report = tmp_path / "f.json"
    r = run([onnxprobe, "compare", wild[a], wild[b], "--reference", "exact", f"--json={report}"])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads(report.read_text())
    assert rep["exact_reference"]["closer_b"] == 0 and rep["exact_reference"]["closer_a"] > 0
    if culprit:
        assert Z_top(rep) == culprit, rep["localization"]["culprits"][:2]


def Z_top(rep):
    c = [x for x in rep["localization"]["culprits"] if x["introduced"]]
    return c[0]["node"].split("@")[0] if c else None


def test_exact_reference_of_side_b_when_a_is_a_dump(onnxprobe, tmp_path):
    """A dump has no model: the reference is B's, and rows are measured by B's names (here all
    renamed, paired through a mapping)."""
    model = deep_cnn(tmp_path / "deep.onnx", layers=4)
    m = onnx.load(str(model))
    rename = {f"t{i}": f"b_t{i}" for i in range(4)}
    for n in m.graph.node:
        n.input[:] = [rename.get(x, x) for x in n.input]
        n.output[:] = [rename.get(x, x) for x in n.output]
    onnx.save(m, str(tmp_path / "renamed.onnx"))
    (tmp_path / "map.json").write_text(json.dumps(rename))
    dump = tmp_path / "a.dump"
    assert run([onnxprobe, "run", model, "-o", dump]).returncode == 0
    report = tmp_path / "r.json"
    r = run([onnxprobe, "compare", dump, tmp_path / "renamed.onnx", "--map", tmp_path / "map.json",
             "--reference", "exact", f"--json={report}"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {t["name"]: t for t in json.loads(report.read_text())["tensors"]}
    assert all("exact_error_b" in rows[n] for n in rename), rows.keys()


def fp16_pair(tmp_path, layers=12, gain=2.0, fault=None, keep32=None):
    """A: a float32 MLP whose layers amplify what they read. B: the same computed in float16
    (weights, activations), its output cast back to float32, as a float16 copy is. keep32=k:
    B's layers from k on stay float32 (a block list), reading the float16 layers' output cast."""
    rng = np.random.default_rng(8)
    ws = [rng.standard_normal((64, 64)) * gain / 8 for _ in range(layers)]
    a_nodes, b_nodes, a_init, b_init = [], [helper.make_node("Cast", ["x"], ["x16"], name="to16", to=TP.FLOAT16)], [], []
    xa, xb = "x", "x16"
    for i, w in enumerate(ws):
        a_init.append(f32(f"W{i}", w))
        wb = w * (fault[1] if fault and fault[0] == i else 1.0)
        in32 = keep32 is not None and i >= keep32
        b_init.append(f32(f"W{i}", wb) if in32 else nh.from_array(wb.astype(np.float16), f"W{i}"))
        if keep32 is not None and i == keep32:
            b_nodes.append(helper.make_node("Cast", [xb], [f"{xb}_32"], name="to32", to=TP.FLOAT))
            xb = f"{xb}_32"
        for nodes, x, last in ((a_nodes, xa, "a"), (b_nodes, xb, "b")):
            nodes.append(helper.make_node("MatMul", [x, f"W{i}"], [f"m{i}"], name=f"mm{i}"))
            nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"h{i}"], name=f"tanh{i}"))
        xa = xb = f"h{i}"
    a_nodes.append(helper.make_node("Identity", [xa], ["y"], name="out"))
    b_nodes.append(helper.make_node("Identity" if keep32 is not None else "Cast", [xb], ["y"], name="out",
                                    **({} if keep32 is not None else {"to": TP.FLOAT})))
    io_in = [helper.make_tensor_value_info("x", TP.FLOAT, [16, 64])]
    io_out = [helper.make_tensor_value_info("y", TP.FLOAT, None)]
    name = "b16" + ("_fault" if fault else "") + (f"_keep{keep32}" if keep32 is not None else "") + ".onnx"
    save(a_nodes, a_init, io_in, io_out, tmp_path / "a32.onnx")
    save(b_nodes, b_init, io_in, io_out, tmp_path / name)
    return tmp_path / "a32.onnx", tmp_path / name


def test_float32_layers_after_float16_ones_are_judged_by_what_they_carry(onnxprobe, tmp_path):
    # a block list: the last four layers of a float16 MLP kept in float32, reading the float16
    # layers' output through a Cast. Their rows are float32 tensors computed only from
    # float16-rounded values: each is allowed what float16's rounding, carried, must cost
    a, b = fp16_pair(tmp_path, keep32=8)
    report = tmp_path / "r.json"
    r = run([onnxprobe, "compare", a, b, f"--json={report}"])
    assert r.returncode == 1, r.stdout + r.stderr  # the premise: beyond the elementwise tolerance
    rep = json.loads(report.read_text())
    assert not next(t for t in rep["tensors"] if t["name"] == "m9")["verdict"] == "PASS"
    r = run([onnxprobe, "compare", a, b, "--reference", "exact", f"--json={report}"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {t["name"]: t for t in json.loads(report.read_text())["tensors"]}
    assert rows["m9"]["dtype_b"] == "float32" and rows["m9"]["closer"] == "a"
    # the first float32 layer's weight 2% off: still a FAIL, at that layer
    _, bad = fp16_pair(tmp_path, keep32=8, fault=(8, 1.02))
    r = run([onnxprobe, "compare", a, bad, "--reference", "exact", f"--json={report}"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert Z_top(json.loads(report.read_text())) == "mm8"


def test_a_float16_copy_is_judged_by_what_float16_must_lose(onnxprobe, tmp_path):
    a, b = fp16_pair(tmp_path)
    # the premise: float16 rounding, amplified by depth, exceeds the elementwise tolerance
    report = tmp_path / "r.json"
    r = run([onnxprobe, "compare", a, b, f"--json={report}"])
    assert r.returncode == 1, r.stdout + r.stderr
    r = run([onnxprobe, "compare", a, b, "--reference", "exact", f"--json={report}"])
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(report.read_text())
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["y"]["closer"] == "a" and rows["h11"]["dtype_b"] == "float16"
    # one weight of B 2% off, in float16: still a FAIL, at that layer
    _, bad = fp16_pair(tmp_path, fault=(5, 1.02))
    r = run([onnxprobe, "compare", a, bad, "--reference", "exact", f"--json={report}"])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads(report.read_text())
    assert Z_top(rep) == "mm5", rep["localization"]["culprits"][:2]


def test_quantize_and_dequantize_in_float64_match_numpy(onnxprobe, tmp_path):
    """QuantizeLinear/DequantizeLinear of the exact model are float64 ops: numpy in float64
    (round half to even, per-axis weight scales) gives the same integers and values, including on
    inputs whose float32 quotient x / scale rounds to another step than the exact one."""
    s_in = np.float32(0.1)
    rng = np.random.default_rng(3)
    # x / s where float32 division lands on a different integer after rounding than float64
    half = ((np.arange(-100, 100) + 0.5) * np.float64(s_in)).astype(np.float32)
    cand = np.concatenate([half, np.nextafter(half, np.float32(np.inf)), np.nextafter(half, np.float32(-np.inf))])
    q32 = np.round(cand / s_in)
    q64 = np.round(cand.astype(np.float64) / np.float64(s_in))
    boundary = cand[q32 != q64][:8]
    assert boundary.size >= 4, "no float32 rounding boundary found"
    x = np.concatenate([boundary, rng.uniform(-10, 10, 24 - boundary.size).astype(np.float32)])
    x = x.reshape(2, 12).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    wq = rng.integers(-127, 128, (12, 5)).astype(np.int8)
    ws = rng.uniform(0.01, 0.05, 5).astype(np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="q_in"),
             helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"], name="dq_in"),
             helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], name="dq_w", axis=1),
             helper.make_node("MatMul", ["xd", "w"], ["y"], name="mm"),
             helper.make_node("QuantizeLinear", ["y", "s", "zp"], ["yq"], name="q_out")]
    inits = [f32("s", s_in), nh.from_array(np.array(128, np.uint8), "zp"), nh.from_array(wq, "wq"),
             f32("ws", ws)]
    save(nodes, inits, [helper.make_tensor_value_info("x", TP.FLOAT, [2, 12])],
         [helper.make_tensor_value_info("yq", TP.UINT8, [2, 5]),
          helper.make_tensor_value_info("y", TP.FLOAT, [2, 5])], tmp_path / "qdq.onnx", opset=13)
    dump, report = tmp_path / "exact.dump", tmp_path / "run.json"
    r = run([onnxprobe, "run", tmp_path / "qdq.onnx", "--input", f"x={tmp_path / 'x.npy'}", "--precision",
             "float64", "-o", dump, f"--json={report}"])
    assert r.returncode == 0, r.stderr
    got, _ = read_dump(dump)
    s = np.float64(s_in)
    xq = np.clip(np.round(x.astype(np.float64) / s) + 128, 0, 255)
    xd = (xq - 128) * s
    w = wq.astype(np.float64) * ws.astype(np.float64)[None, :]
    y = xd @ w
    yq = np.clip(np.round(y / s) + 128, 0, 255)
    assert np.array_equal(got["xq"], xq.astype(np.uint8))
    # the float32 quotient would have put the boundary inputs on other steps
    assert not np.array_equal(np.clip(np.round(x / s_in) + 128, 0, 255), xq)
    assert np.max(np.abs(got["xd"] - xd)) == 0
    assert np.max(np.abs(got["w"] - w)) == 0
    assert np.max(np.abs(got["y"] - y)) <= 1e-14 * np.max(np.abs(y))
    assert np.array_equal(got["yq"], yq.astype(np.uint8))
    methods = {n["node"]: n["method"] for n in json.loads(report.read_text())["exact_nodes"]}
    assert {methods[n] for n in ("q_in", "dq_in", "dq_w", "q_out")} == {"float64 ops"}, methods


def _far_round_trip(path, with_round_trip, depth=60):
    """x through `depth` Muls by 1.0001 minus x times their product computed at once: a small
    difference whose error is the chain's. With `with_round_trip`, x passes a float16 round trip
    (Cast, Cast) before the chain: its rounding (2^-12 relative) stays within tolerance along the
    chain and is amplified by the subtraction, `depth` nodes after the round trip."""
    nodes, h = [], "x"
    if with_round_trip:
        nodes += [helper.make_node("Cast", ["x"], ["x16"], name="to_fp16", to=TP.FLOAT16),
                  helper.make_node("Cast", ["x16"], ["x32"], name="to_fp32", to=TP.FLOAT)]
        h = "x32"
    for k in range(depth):
        nodes.append(helper.make_node("Mul", [h, "c"], [f"h{k}"], name=f"mul{k}"))
        h = f"h{k}"
    nodes += [helper.make_node("Mul", ["x", "c_all"], ["ref"], name="ref"),
              helper.make_node("Sub", [h, "ref"], ["d"], name="diff")]
    inits = [f32("c", 1.0001), f32("c_all", np.float32(1.0001) ** depth)]
    save(nodes, inits, [helper.make_tensor_value_info("x", TP.FLOAT, [64])],
         [helper.make_tensor_value_info("d", TP.FLOAT, [64])], path)


@pytest.mark.parametrize("extra", [[], ["--reference", "exact"]])
def test_a_round_trip_far_before_the_failure_is_named(onnxprobe, tmp_path, extra):
    """No node fails alone and the round trip sits beyond the ancestors isolation runs one by
    one: the drift origin whose removal removes the difference (the injected round trip) is where
    the error is born, also under the exact reference, where its own rows pass as float16."""
    _far_round_trip(tmp_path / "a.onnx", False)
    _far_round_trip(tmp_path / "b.onnx", True)
    x = np.random.default_rng(5).uniform(1, 2, 64).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    js = tmp_path / "r.json"
    r = run([onnxprobe, "compare", tmp_path / "a.onnx", tmp_path / "b.onnx", "--input", f"x={tmp_path / 'x.npy'}",
             "--json", js, *extra])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads(js.read_text())
    top = rep["localization"]["culprits"][0]
    assert top["introduced"] and top["node"] in ("to_fp16", "to_fp32"), top
    assert "where the error is born: no failing tensor fails on its own; the largest error made alone comes " \
           "from to_fp" in r.stdout, r.stdout
