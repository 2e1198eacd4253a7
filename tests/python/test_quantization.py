"""Float vs quantized: `onnxprobe compare float.onnx quant.onnx` on models quantized by
onnxruntime.quantization.quantize_static (made here, in the test environment ONNXPROBE_PYENV).

References are independent of onnxprobe: onnxruntime's Python API runs both models (intermediate
tensors exposed as graph outputs) and numpy computes the SQNR; exclusion lists are checked by
re-quantizing with nodes_to_exclude and measuring the output again.
"""
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import run

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "quant_models.py")
LIMIT = 20.0  # the default quantization rule: SQNR >= 20 dB


def pyenv():
    p = os.environ.get("ONNXPROBE_PYENV")
    if not p or not os.path.exists(p):
        pytest.fail("ONNXPROBE_PYENV is not set or missing; run through ctest after scripts/bootstrap.sh")
    return p


def make(out, kind, fmt, pc, *extra):
    """float.onnx + quant.onnx (+ input.npy) in `out`; QOperator with reduce_range, as onnxruntime
    recommends on x86 CPUs whose u8s8 integer kernels can saturate."""
    args = [pyenv(), MODELS, str(out), kind, fmt, pc]
    if fmt == "qop" and "--no-reduce-range" not in extra:
        args.append("--reduce-range")
    args += [e for e in extra if e != "--no-reduce-range"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def ref_sqnr(d, quant="quant.onnx", ta=None, tb=None, scale=None, zp=None, opt="disabled"):
    """SQNR of quant's tensor against float's, from onnxruntime's Python API."""
    args = [pyenv(), MODELS, "--sqnr", str(d / "float.onnx"), str(d / quant), str(d / "input.npy")]
    if ta:
        args += [ta, tb]
    if scale:
        args += [scale, zp]
    env = dict(os.environ, QUANT_MODELS_OPT=opt)
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return float(r.stdout.strip())


def compare(onnxprobe, d, *extra, quant="quant.onnx"):
    js = d / (quant + ".json")
    r = run([onnxprobe, "compare", d / "float.onnx", d / quant, "--input", f"input={d / 'input.npy'}",
             "--json", js, "--force", *extra])
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r, json.loads(js.read_text())


def row(rep, name):
    return next(t for t in rep["tensors"] if t["name"] == name)


def qrow(rep, name):
    i = row(rep, name)["index"]
    return next(t for t in rep["quantization"]["tensors"] if t["index"] == i)


def output_name(d):
    return onnx.load(str(d / "float.onnx")).graph.output[0].name


@pytest.mark.parametrize("pc", ["per-tensor", "per-channel"])
@pytest.mark.parametrize("fmt", ["qdq", "qop"])
@pytest.mark.parametrize("kind", ["cnn", "mobilenet", "transformer"])
def test_a_correctly_quantized_model_passes(onnxprobe, tmp_path, kind, fmt, pc):
    d = make(tmp_path, kind, fmt, pc)
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 0, r.stdout
    assert rep["verdict"] == "PASS"
    q = rep["quantization"]
    assert q["format"] == {"qdq": "qdq", "qop": "qoperator"}[fmt]
    assert q["exclude"] == []
    assert all(l["isolated"] for l in q["layers"]), [l["error"] for l in q["layers"]]
    # the output's SQNR is onnxruntime's own, and within the rule
    out = output_name(d)
    expected = ref_sqnr(d)
    assert expected >= LIMIT
    assert qrow(rep, out)["sqnr_db"] == pytest.approx(expected, abs=0.02)


def test_qdq_relu_output_pairs_with_the_tensor_after_the_folded_quantization(onnxprobe, tmp_path):
    # The quantizer folds relu1 into r1's QuantizeLinear and gives conv1's output the name "r1":
    # pairing by name would compare the Relu output with the unclipped Conv output.
    d = make(tmp_path, "cnn", "qdq", "per-channel")
    qm = onnx.load(str(d / "quant.onnx"))
    assert "Relu" not in {n.op_type for n in qm.graph.node}
    assert any(n.op_type == "Conv" and n.output[0] == "r1" for n in qm.graph.node)
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 0
    # r1 (after relu1) against the dequantized value after r1's QuantizeLinear: the clipped one
    assert row(rep, "r1")["name_b"] == "r1_DequantizeLinear_Output"
    assert qrow(rep, "r1")["sqnr_db"] == pytest.approx(
        ref_sqnr(d, ta="r1", tb="r1_DequantizeLinear_Output"), abs=0.02)
    # c1 (before relu1) against the unclipped Conv output, which B calls r1
    assert row(rep, "c1")["name_b"] == "r1"
    assert qrow(rep, "c1")["sqnr_db"] == pytest.approx(ref_sqnr(d, ta="c1", tb="r1"), abs=0.02)
    # the by-name pairing's figure, for the record: the clipped vs the unclipped tensor
    assert ref_sqnr(d, ta="r1", tb="r1") < 5


@pytest.mark.parametrize("fmt", ["qdq", "qop"])
def test_pairing_needs_no_names(onnxprobe, tmp_path, fmt):
    # the same quantized model with every node and tensor renamed t0, t1, ...: the pairing, the
    # figures and the exclusion list do not change
    d = make(tmp_path, "cnn", fmt, "per-channel", "--outlier")
    make(d, "cnn", fmt, "per-channel", "--outlier", "--anonymize", "--name", "anon.onnx")
    assert not {n.name for n in onnx.load(str(d / "anon.onnx")).graph.node} & {"conv1", "conv2", "conv3"}
    _, named = compare(onnxprobe, d)
    _, anon = compare(onnxprobe, d, quant="anon.onnx")
    # only the graph output keeps its name
    assert anon["quantization"]["paired_by_name_hint"] == 1
    assert named["quantization"]["paired_by_name_hint"] > 1
    sq = lambda rep: {rep["tensors"][t["index"]]["name"]: round(t["sqnr_db"], 6) for t in rep["quantization"]["tensors"]}
    assert sq(anon) == sq(named)
    assert anon["quantization"]["exclude"] == named["quantization"]["exclude"] == ["conv3", "conv2"]


def test_weights_quantized_in_the_graph_as_other_producers_export_them(onnxprobe, tmp_path):
    # float weights followed by QuantizeLinear -> DequantizeLinear (fake-quantized exports):
    # the same values as the quantizer's int8 initializers, so the same report
    d = make(tmp_path, "cnn", "qdq", "per-channel", "--outlier")
    make(d, "cnn", "qdq", "per-channel", "--outlier", "--float-weights", "--name", "fq.onnx")
    fq_model = onnx.load(str(d / "fq.onnx"))
    consts = {i.name for i in fq_model.graph.initializer}
    assert sum(n.op_type == "QuantizeLinear" and n.input[0] in consts for n in fq_model.graph.node) == 4
    assert ref_sqnr(d, quant="fq.onnx") == pytest.approx(ref_sqnr(d), abs=1e-6)
    _, int8 = compare(onnxprobe, d)
    _, fq = compare(onnxprobe, d, quant="fq.onnx")
    w = lambda rep: sorted((x["name"], round(x["sqnr_db"], 6)) for x in rep["quantization"]["weights"])
    assert w(fq) == w(int8)
    assert [l["node"] for l in fq["quantization"]["layers"]] == [l["node"] for l in int8["quantization"]["layers"]]
    assert all(l["isolated"] for l in fq["quantization"]["layers"])
    assert fq["quantization"]["exclude"] == ["conv3", "conv2"]


def test_qoperator_outputs_are_dequantized_with_their_node_scale(onnxprobe, tmp_path):
    d = make(tmp_path, "cnn", "qop", "per-channel")
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 0
    assert row(rep, "r1")["name_b"] == "c1_quantized"
    assert qrow(rep, "r1")["sqnr_db"] == pytest.approx(
        ref_sqnr(d, ta="r1", tb="c1_quantized", scale="c1_scale", zp="c1_zero_point"), abs=0.02)
    # the Relu is folded into QLinearConv: its input has no counterpart
    assert "c1" in rep["quantization"]["folded"]
    assert "c1" in rep["only_in_a"]


def dequantized_weight_sqnr(d, name, axis):
    qm = onnx.load(str(d / "quant.onnx"))
    fm = onnx.load(str(d / "float.onnx"))
    init = {i.name: numpy_helper.to_array(i) for i in qm.graph.initializer}
    w = next(numpy_helper.to_array(i) for i in fm.graph.initializer if i.name == name).astype(np.float64)
    q = init[name + "_quantized"].astype(np.float64)
    shape = [1] * q.ndim
    shape[axis] = -1
    s = init[name + "_scale"].astype(np.float64).reshape(shape)
    z = init[name + "_zero_point"].astype(np.float64).reshape(shape)
    deq = (q - z) * s
    per_channel = [10 * np.log10((np.take(w, c, axis) ** 2).sum() / ((np.take(deq, c, axis) - np.take(w, c, axis)) ** 2).sum())
                   for c in range(w.shape[axis])]
    return 10 * np.log10((w * w).sum() / ((deq - w) ** 2).sum()), per_channel


@pytest.mark.parametrize("fmt", ["qdq", "qop"])
def test_weights_are_measured_per_tensor_and_per_channel(onnxprobe, tmp_path, fmt):
    d = make(tmp_path, "cnn", fmt, "per-channel")
    r, rep = compare(onnxprobe, d)
    w = {x["name"]: x for x in rep["quantization"]["weights"]}
    for name in ["w1", "w2", "w3"]:
        total, per_channel = dequantized_weight_sqnr(d, name, 0)
        assert w[name]["per_channel"] and w[name]["axis"] == 0
        assert w[name]["sqnr_db"] == pytest.approx(total, abs=0.01)
        assert w[name]["channel_sqnr_db"] == pytest.approx(per_channel, abs=0.01)
        assert w[name]["max_steps"] <= 0.5 + 1e-6  # rounding: at most half a step


@pytest.mark.parametrize("fmt,scale", [("qdq", "r2_scale"), ("qop", "c2_scale")])
def test_a_layer_with_a_bad_scale_is_named_first(onnxprobe, tmp_path, fmt, scale):
    # conv2's output scale 20x too small: most of it saturates
    d = make(tmp_path, "cnn", fmt, "per-channel", "--scale-fault", f"{scale}=0.05")
    assert ref_sqnr(d) < LIMIT  # the fault is real for onnxruntime too
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 1
    q = rep["quantization"]
    assert q["layers"][0]["node"] == "conv2"
    assert q["layers"][0]["below_limit"] and not q["layers"][0]["input_caused"]
    assert q["layers"][0]["saturated"] > 0.1
    assert q["exclude"][0] == "conv2"
    assert "conv1" not in q["exclude"]
    assert rep["summary"]["first_divergence"] == "r2"
    # re-quantizing with the list restores the output
    make(d, "cnn", fmt, "per-channel", "--exclude", ",".join(q["exclude"]), "--name", "excl.onnx")
    assert ref_sqnr(d, quant="excl.onnx") >= LIMIT


def test_a_weight_with_a_wrong_zero_point_is_named_first(onnxprobe, tmp_path):
    # w2's zero points shifted by 40: conv2 computes with wrong weights
    d = make(tmp_path, "cnn", "qdq", "per-channel", "--zp-fault", "w2_zero_point=40")
    assert ref_sqnr(d) < LIMIT
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 1
    q = rep["quantization"]
    assert q["layers"][0]["node"] == "conv2" and not q["layers"][0]["input_caused"]
    assert q["exclude"][0] == "conv2"
    w2 = next(w for w in q["weights"] if w["name"] == "w2")
    total, per_channel = dequantized_weight_sqnr(d, "w2", 0)
    assert total < LIMIT
    assert w2["sqnr_db"] == pytest.approx(total, abs=0.01)
    assert w2["channel_sqnr_db"] == pytest.approx(per_channel, abs=0.01)
    # conv2's layer introduces the error (its first failing row: the Conv output c2; the Relu
    # output r2 folded into the same layer inherits it), and everything after inherits it
    assert [t["name"] for t in rep["tensors"] if t["role"] == "introduced"] == ["c2"]
    roles = {t["name"]: t["role"] for t in rep["tensors"]}
    assert roles["r2"] == roles["r3"] == "inherited"
    # the console gives the same answer as its own quantization table: conv2, and nothing after it
    assert r.stdout.count("error introduced at") == 1, r.stdout
    lines = r.stdout.split("error introduced at")[1].splitlines()[1:]
    named = [l.split()[0] for l in lines[:next(i for i, l in enumerate(lines) if not l.startswith("  "))]]
    assert named == ["conv2"], r.stdout


@pytest.mark.parametrize("fmt", ["qdq", "qop"])
def test_the_exclusion_list_restores_an_activation_outlier(onnxprobe, tmp_path, fmt):
    # r2's channel 0 sits near 300, the others near 1: r2's activation scale crushes them and
    # conv3 (which ignores channel 0) loses its signal. conv3 alone with float inputs is fine,
    # so r2's quantization is the cause: conv2, which quantizes r2 too, is listed as well.
    d = make(tmp_path, "cnn", fmt, "per-channel", "--outlier")
    before = ref_sqnr(d)
    assert before < LIMIT
    r, rep = compare(onnxprobe, d)
    assert r.returncode == 1
    q = rep["quantization"]
    assert q["layers"][0]["node"] == "conv3"
    assert set(q["exclude"]) == {"conv3", "conv2"}
    make(d, "cnn", fmt, "per-channel", "--outlier", "--exclude", ",".join(q["exclude"]), "--name", "excl.onnx")
    assert ref_sqnr(d, quant="excl.onnx") >= LIMIT
    if fmt == "qdq":
        assert q["layers"][0]["input_caused"]
        assert q["layers"][0]["float_input_sqnr_db"] >= LIMIT
        # the first entry alone is not enough: conv2 still quantizes r2
        make(d, "cnn", fmt, "per-channel", "--outlier", "--exclude", "conv3", "--name", "excl3.onnx")
        assert ref_sqnr(d, quant="excl3.onnx") < LIMIT


def test_optimized_sides_pair_through_what_survives_and_do_not_false_alarm(onnxprobe, tmp_path):
    d = make(tmp_path, "cnn", "qdq", "per-channel")
    r, rep = compare(onnxprobe, d, "--opt-level", "all")
    assert r.returncode == 0, r.stdout
    out = output_name(d)
    assert qrow(rep, out)["sqnr_db"] == pytest.approx(ref_sqnr(d, opt="all"), abs=0.02)


def test_fused_int8_kernels_of_an_optimized_side_b_are_found_and_excluded(onnxprobe, tmp_path):
    # With optimizations on, onnxruntime runs the QDQ transformer's MatMuls as QLinearMatMul;
    # without reduce_range their u8s8 kernels lose precision on this CPU (measured through
    # onnxruntime's Python API, not by onnxprobe). Side A float, optimizations off.
    d = make(tmp_path, "transformer", "qdq", "per-channel")
    before = ref_sqnr(d, opt="all")
    if before >= LIMIT:
        pytest.skip(f"this CPU's int8 kernels keep {before:.1f} dB: nothing to find")
    r, rep = compare(onnxprobe, d, "--b-opt-level", "all")
    assert r.returncode == 1
    q = rep["quantization"]
    assert q["exclude"], r.stdout
    assert qrow(rep, output_name(d))["sqnr_db"] == pytest.approx(before, abs=0.05)
    make(d, "transformer", "qdq", "per-channel", "--exclude", ",".join(q["exclude"]), "--name", "excl.onnx")
    assert ref_sqnr(d, quant="excl.onnx", opt="all") > before + 3


def test_reports_carry_the_quantization_section(onnxprobe, tmp_path):
    d = make(tmp_path, "cnn", "qdq", "per-channel", "--outlier")
    html = tmp_path / "r.html"
    r = run([onnxprobe, "compare", d / "float.onnx", d / "quant.onnx", "--input", f"input={d / 'input.npy'}",
             "--html", html])
    assert r.returncode == 1
    assert 'exclusion list (onnxruntime.quantization nodes_to_exclude): ["conv3", "conv2"]' in r.stdout
    assert "judged by SQNR >= 20 dB" in r.stdout
    page = html.read_text()
    assert '"quantization"' in page and "function quantHtml" in page
