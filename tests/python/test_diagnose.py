"""Diagnosis (docs/diagnose.md): one model per cause, built to have exactly that cause; each test
asserts the cause named at the faulty node and applies the fix the report gives (flags added to
the same comparison, a command run first, nodes kept in float when quantizing again, or new
calibration data), after which the comparison must pass. The truth is the construction: which
setting, runtime, weight, attribute, scale or input range was made to differ."""
import json
import os
import shlex
import subprocess

import numpy as np
import onnx
import pytest

from conftest import run
from diagnose_models import cancellation_cnn, float16_sum_model, float16_tiny_model, noise_model, with_flags

SRC = os.environ.get("ONNXPROBE_SRC", "")
PYENV = os.environ.get("ONNXPROBE_PYENV", "")
CUSTOM = os.environ.get("ONNXPROBE_CRASH_OP_LIB", "")
QUANT_MODELS = os.path.join(SRC, "tests", "python", "quant_models.py")


def compare(onnxprobe, tmp_path, *args, rc=1, name="r.json"):
    out = tmp_path / name
    if out.exists():
        out.unlink()
    r = run([onnxprobe, "compare", *args, "--json", out])
    assert r.returncode == rc, r.stdout[-3000:] + r.stderr[-2000:]
    return r, json.loads(out.read_text())


def finding(report, cause):
    d = report["diagnosis"]
    got = [f for f in d["findings"] if f["cause"] == cause]
    assert got, json.dumps(d, indent=1)[:3000]
    return got[0]


def test_an_optimizer_pass_is_named_with_the_transformer_to_disable(onnxprobe, tmp_path):
    model = tmp_path / "cbn.onnx"
    cancellation_cnn(model)
    args = [model, "--b-opt-level", "basic"]
    r, rep = compare(onnxprobe, tmp_path, *args)
    f = finding(rep, "optimizer")
    assert f["node"] == "conv" and f["certainty"] == "confirmed"  # the fused Conv+BN region
    assert "ConvBNFusion" in f["summary"] and "at side A's level (disabled) 0" in f["evidence"]
    assert f["fix"]["compare_flags"] == ["--b-session-config",
                                         "optimization.disable_specified_optimizers=ConvBNFusion"]
    assert "optimizer" in r.stdout and "compare with: --b-session-config" in r.stdout
    # the page's lead and the JUnit failure text say why too
    r = run([onnxprobe, "compare", *args, "-q", "--html", tmp_path / "r.html", "--junit", tmp_path / "r.xml"])
    page = (tmp_path / "r.html").read_text()
    assert '"cause":"optimizer"' in page  # the embedded report the page's "why" lead renders
    assert "why: conv (Conv): optimizer, confirmed" in (tmp_path / "r.xml").read_text()
    compare(onnxprobe, tmp_path, *with_flags(args, f["fix"]["compare_flags"]), rc=0)


def test_a_runtime_versions_kernel_change_is_named_at_the_batchnorm(onnxprobe, tmp_path):
    model = tmp_path / "cbn.onnx"
    cancellation_cnn(model)
    args = [model, "--b-ort-version", "1.20.1"]
    _, rep = compare(onnxprobe, tmp_path, *args)
    f = finding(rep, "kernel-change")
    assert (f["node"], f["op_type"], f["certainty"]) == ("bn", "BatchNormalization", "confirmed")
    assert "1.20.1" in f["summary"] and "exactly" in f["evidence"]
    assert "--op-tol BatchNormalization=" in f["fix"]["summary"]  # the alternative: accept it
    assert [x["cause"] for x in rep["diagnosis"]["findings"]] == ["kernel-change"]
    compare(onnxprobe, tmp_path, *with_flags(args, f["fix"]["compare_flags"]), rc=0)


def test_a_nondeterministic_custom_op_is_named_and_its_noise_floor_fixes_the_comparison(onnxprobe, tmp_path):
    # NoiseOp (tests/custom_op/crash_op.cc) adds fresh random noise of up to 1e-3 each run
    model = tmp_path / "noise.onnx"
    noise_model(model)
    args = [model, model, "--custom-op-lib", CUSTOM, "--range", "0,1"]
    _, rep = compare(onnxprobe, tmp_path, *args)
    f = finding(rep, "nondeterminism")
    assert f["node"] == "noise" and f["op_type"] == "NoiseOp" and f["certainty"] == "confirmed"
    cmd = shlex.split(f["fix"]["command"])
    assert cmd[:3] == ["onnxprobe", "determinism", str(model)] and CUSTOM in cmd
    r = run([onnxprobe, *cmd[1:], "--range", "0,1"], cwd=tmp_path)
    assert r.returncode in (0, 1) and (tmp_path / "noise-floor.json").exists(), r.stderr
    flags = [x if x != "noise-floor.json" else str(tmp_path / "noise-floor.json") for x in f["fix"]["compare_flags"]]
    compare(onnxprobe, tmp_path, *with_flags(args, flags), rc=0)


@pytest.mark.parametrize("fault", ["epsilon", "weight"])
def test_a_changed_epsilon_is_told_from_a_changed_weight(onnxprobe, tmp_path, fault):
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    cancellation_cnn(a)
    if fault == "epsilon":
        cancellation_cnn(b, eps=0.5)
    else:
        cancellation_cnn(b, w2_bump=0.5)
    _, rep = compare(onnxprobe, tmp_path, a, b)
    causes = [x["cause"] for x in rep["diagnosis"]["findings"]]
    if fault == "epsilon":
        assert causes == ["attribute-changed"], causes
        f = finding(rep, "attribute-changed")
        assert f["node"] == "bn" and "epsilon" in f["evidence"] and "0.5 in B" in f["evidence"]
    else:
        assert causes == ["weight-changed"], causes
        f = finding(rep, "weight-changed")
        assert f["node"] == "conv2" and "w2: 1 of 288 values differ" in f["evidence"]
    # the restoring command runs with an interpreter that has onnx (Debian's)
    cmd = shlex.split(f["fix"]["command"])
    assert cmd[0] == "python3"
    r = run(["/usr/bin/python3", *cmd[1:]])
    assert r.returncode == 0, r.stderr
    assert f["fix"]["side_b"] == str(tmp_path / "b.restored.onnx")
    compare(onnxprobe, tmp_path, a, f["fix"]["side_b"], rc=0)
    assert b.read_bytes() != (tmp_path / "b.restored.onnx").read_bytes()  # side B's file untouched


def test_an_added_float16_round_trip_is_named_and_bypassing_it_restores_side_a(onnxprobe, tmp_path):
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    cancellation_cnn(a)
    m = onnx.load(str(a))
    nodes = [onnx.NodeProto.FromString(n.SerializeToString()) for n in m.graph.node]
    bn = next(n for n in nodes if n.name == "bn")
    bn.input[0] = "c32"  # the Conv's output (near 1e4) through float16 and back
    casts = [onnx.helper.make_node("Cast", ["c"], ["c16"], name="to_half", to=onnx.TensorProto.FLOAT16),
             onnx.helper.make_node("Cast", ["c16"], ["c32"], name="to_float", to=onnx.TensorProto.FLOAT)]
    del m.graph.node[:]
    m.graph.node.extend(nodes[:1] + casts + nodes[1:])
    onnx.save(m, str(b))
    _, rep = compare(onnxprobe, tmp_path, a, b)
    f = finding(rep, "nodes-added")
    assert "to_half (Cast), to_float (Cast)" in f["evidence"] and f["certainty"] == "confirmed"
    cmd = shlex.split(f["fix"]["command"])
    r = run(["/usr/bin/python3", *cmd[1:]])
    assert r.returncode == 0, r.stderr
    restored = onnx.load(f["fix"]["side_b"])
    assert [n.op_type for n in restored.graph.node] == ["Conv", "BatchNormalization", "Relu", "Conv"]
    compare(onnxprobe, tmp_path, a, f["fix"]["side_b"], rc=0)


def test_a_float16_overflow_is_named_and_its_block_list_fixes_the_conversion(onnxprobe, tmp_path):
    # x in [0, 1) times 3000 summed over 64 values reaches ~77000: beyond float16's 65504
    a, b = tmp_path / "f32.onnx", tmp_path / "f16.onnx"
    float16_sum_model(a, False)
    float16_sum_model(b, True)
    args = [a, b, "--range", "0,1"]
    r, rep = compare(onnxprobe, tmp_path, *args)
    f = finding(rep, "float16-range")
    assert (f["node"], f["op_type"], f["certainty"]) == ("reduce_sum", "ReduceSum", "confirmed")
    assert "65504" in f["evidence"] and "float16" in r.stdout
    keep = f["fix"]["keep_float_nodes"]
    assert keep == ["reduce_sum", "scale"]  # the node and the node reading its overflowing output
    # rows in float16 against float32 are compared by value, not failed on dtype
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["big"]["dtype_b"] == "float16" and rows["big"]["verdict"] == "PASS"
    fixed = tmp_path / "f16_fixed.onnx"
    float16_sum_model(fixed, True, keep)
    compare(onnxprobe, tmp_path, a, fixed, "--range", "0,1", rc=0)


@pytest.mark.parametrize("feed", ["rng0", "range"])
def test_a_float16_underflow_is_named_and_its_block_list_fixes_the_conversion(onnxprobe, tmp_path, feed):
    # x in [0, 1) times 1e-6 and its sum lie below float16's smallest normal value (6.1e-5): steps of 6e-8 there
    a, b = tmp_path / "f32.onnx", tmp_path / "f16.onnx"
    float16_tiny_model(a, False)
    float16_tiny_model(b, True)
    x = np.random.default_rng(0).random((1, 64), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    # the independent reference: float16 holds x * 1e-6 with far less than its 2^-11 relative precision
    tiny = x.astype(np.float64) * 1e-6
    assert (np.abs(tiny.astype(np.float16) - tiny) / tiny).max() > 1 / 2048
    feed_args = ["--input", tmp_path / "x.npy"] if feed == "rng0" else ["--range", "0,1"]
    _, rep = compare(onnxprobe, tmp_path, a, b, *feed_args)
    f = finding(rep, "float16-range")
    # tiny and sum are within float16's representation of them (PASS); the error shows where grow multiplies the
    # sum by 1e4. Which node localization names depends on the input (grow fails alone when the sum's rounding
    # alone passes tolerance, else shrink is the largest error made alone, amplified downstream): the underflow is
    # said of grow's float16 input or of shrink's output, likely (A's exact values cannot be fed in float16), and the
    # block list reaches along the chain of subnormal tensors from where they are made to where they are amplified
    assert (f["op_type"], f["certainty"]) == ("Mul", "likely")
    assert "underflow" in f["summary"] and "6.1e-5" in f["evidence"]
    said = {"grow": "input sum", "shrink": "output tiny"}
    assert f["node"] in said and said[f["node"]] in f["summary"]
    assert not [g for g in rep["diagnosis"]["findings"] if g["cause"] == "weight-changed"]  # only converted
    keep = f["fix"]["keep_float_nodes"]
    assert keep == ["shrink", "reduce_sum", "grow"]
    fixed = tmp_path / "f16_fixed.onnx"
    float16_tiny_model(fixed, True, keep)
    compare(onnxprobe, tmp_path, a, fixed, *feed_args, rc=0)


def quant(out, *extra):
    r = subprocess.run([PYENV, QUANT_MODELS, str(out), "cnn", "qdq", "per-tensor", *extra],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_quantization_scale_too_small_is_named_and_keeping_its_nodes_in_float_fixes_it(onnxprobe, tmp_path):
    quant(tmp_path, "--scale-fault", "r1_scale=0.1")  # r1's scale a tenth of what calibration chose
    args = [tmp_path / "float.onnx", tmp_path / "quant.onnx", "--input", tmp_path / "input.npy"]
    _, rep = compare(onnxprobe, tmp_path, *args)
    f = rep["diagnosis"]["findings"][0]
    assert (f["cause"], f["node"], f["tensor"], f["certainty"]) == ("quantization-saturation", "conv1", "r1",
                                                                    "confirmed")
    assert "clipped" in f["evidence"] and "MinMax" in f["evidence"]
    keep = f["fix"]["keep_float_nodes"]
    assert {"conv1", "conv2"} <= set(keep)
    fixed = tmp_path / "fixed"
    quant(fixed, "--exclude", ",".join(keep))
    q = onnx.load(str(fixed / "quant.onnx"))
    assert "r1_scale" not in {i.name for i in q.graph.initializer}  # r1 is float now
    assert any(n.op_type == "QuantizeLinear" for n in q.graph.node)  # the rest stays quantized
    compare(onnxprobe, tmp_path, tmp_path / "float.onnx", fixed / "quant.onnx", "--input", tmp_path / "input.npy",
            rc=0)


def test_inputs_beyond_the_calibrated_range_are_named_and_calibrating_on_them_fixes_it(onnxprobe, tmp_path):
    quant(tmp_path)  # calibrated on standard normal samples
    x = np.load(tmp_path / "input.npy") * 8
    np.save(tmp_path / "big.npy", x.astype(np.float32))
    args = [tmp_path / "float.onnx", tmp_path / "quant.onnx", "--input", tmp_path / "big.npy"]
    _, rep = compare(onnxprobe, tmp_path, *args)
    f = rep["diagnosis"]["findings"][0]
    assert (f["cause"], f["node"]) == ("calibration-range", "conv1")
    lo, hi = float(x.min()), float(x.max())
    assert f"these reach [{lo:.3g}, {hi:.3g}]" in f["fix"]["summary"]
    fixed = tmp_path / "fixed"
    quant(fixed, "--calib-scale", "8")
    compare(onnxprobe, tmp_path, tmp_path / "float.onnx", fixed / "quant.onnx", "--input", tmp_path / "big.npy",
            rc=0)


def test_the_knowledge_file_cites_an_earlier_diagnosis_of_the_same_cause(onnxprobe, tmp_path):
    model = tmp_path / "cbn.onnx"
    cancellation_cnn(model)
    know = tmp_path / "knowledge.json"
    _, first = compare(onnxprobe, tmp_path, model, "--b-ort-version", "1.20.1", "--knowledge", know)
    assert finding(first, "kernel-change")["seen_before"] == ""
    doc = json.loads(know.read_text())
    assert doc["schema"] == "onnxprobe-knowledge" and doc["version"] == 1
    e = doc["entries"][0]
    assert (e["node"], e["op_type"], e["cause"]) == ("bn", "BatchNormalization", "kernel-change")
    assert len(e["model_sha256"]) == 64
    r, second = compare(onnxprobe, tmp_path, model, "--b-ort-version", "1.20.1", "--knowledge", know)
    seen = finding(second, "kernel-change")["seen_before"]
    assert seen.startswith("seen 1 time before on BatchNormalization") and "node bn" in seen
    assert "seen 1 time before" in r.stdout
    assert len(json.loads(know.read_text())["entries"]) == 2
    # a file that is not a knowledge file is never replaced: one line, exit 2
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}\n')
    r = run([onnxprobe, "compare", model, "--b-ort-version", "1.20.1", "--knowledge", other])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "notes.json" in r.stderr
    assert other.read_text() == '{"mine": 1}\n'
    # a record that cannot be written costs the record, not the comparison: the OS's reason
    _, rep = compare(onnxprobe, tmp_path, model, "--b-ort-version", "1.20.1", "--knowledge",
                     tmp_path / "no" / "k.json")
    assert "No such file or directory" in rep["diagnosis"]["note"] and rep["diagnosis"]["findings"]
    assert rep["diagnosis"]["knowledge_file"] is None


def test_no_diagnose_and_a_passing_comparison_diagnose_nothing(onnxprobe, tmp_path):
    model = tmp_path / "cbn.onnx"
    cancellation_cnn(model)
    r, rep = compare(onnxprobe, tmp_path, model, "--b-opt-level", "basic", "--no-diagnose")
    assert "diagnosis" not in rep and "why" not in r.stdout
    r, rep = compare(onnxprobe, tmp_path, model, "--b-opt-level", "all", "--atol", "1", "--rtol", "1", rc=0)
    assert "diagnosis" not in rep


class _Remnant:
    """A three-layer model whose middle block calls a torch function in training mode's way
    (`remnant`: "dropout" or "batchnorm") unless `follow_mode`, when it passes training=self.training: the
    fault is injected by construction, in module b's own code."""

    def __new__(cls, remnant, follow_mode):
        import torch
        import torch.nn.functional as F

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(16, 16)
                self.act = torch.nn.ReLU()
                self.register_buffer("rm", torch.zeros(16))
                self.register_buffer("rv", torch.ones(16))

            def forward(self, x):
                training = self.training if follow_mode else True
                h = self.fc(x)
                if remnant == "dropout":
                    h = F.dropout(h, 0.2, training=training)
                else:
                    h = F.batch_norm(h, self.rm, self.rv, training=training)
                return self.act(h)

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.c = torch.nn.Linear(8, 16), Block(), torch.nn.Linear(16, 4)

            def forward(self, x):
                return self.c(self.b(self.a(x)))

        torch.manual_seed(0)
        return Net().eval()


def _capture_and_export(tmp_path, remnant, capture_follows, export_follows, name):
    import sys
    import torch
    sys.path.insert(0, os.path.join(SRC, "python"))
    from onnxprobe_torch import capture, export
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    onnx_path, cap = tmp_path / f"{name}.onnx", tmp_path / f"{name}.cap"
    export(_Remnant(remnant, export_follows), x, str(onnx_path), ["input"], ["output"])
    capture(_Remnant(remnant, capture_follows), x, str(cap), ["input"])
    return cap, onnx_path


@pytest.mark.parametrize("remnant", ["dropout", "batchnorm"])
def test_a_pytorch_training_mode_remnant_is_named_at_its_module(onnxprobe, tmp_path, remnant):
    # dropout: both export and capture carry the remnant (the exporter keeps a train=True dropout, so ONNX
    # Runtime draws its own mask); batchnorm: the ONNX model was exported from code that follows the mode
    cap, model = _capture_and_export(tmp_path, remnant, False, remnant == "batchnorm", "faulty")
    manifest = json.loads((cap / "manifest.json").read_text())
    calls = {c["module"]: c for c in manifest["torch"]["calls"]}
    # recorded at capture: only b's own code drew or wrote, not its children, not the other layers
    assert [m for m, c in calls.items() if c["rng_draws"]] == (["b"] if remnant == "dropout" else [])
    assert {m: c["buffers_written"] for m, c in calls.items() if c["buffers_written"]} == \
        ({} if remnant == "dropout" else {"b": ["b.rm", "b.rv"]})
    r, rep = compare(onnxprobe, tmp_path, cap, model)
    f = rep["diagnosis"]["findings"][0]  # named first: what follows (a random ONNX Dropout) comes from it
    assert (f["cause"], f["certainty"]) == ("training-mode", "confirmed")
    assert "computed b as in training mode" in f["summary"]
    assert ("random" in f["summary"]) == (remnant == "dropout")
    assert ("b.rm, b.rv" in f["evidence"]) == (remnant == "batchnorm")
    assert "training=self.training" in f["fix"]["summary"] and "training-mode" in r.stdout
    # the fix: code that follows the module's mode, exported and captured again
    cap, model = _capture_and_export(tmp_path, remnant, True, True, "fixed")
    _, rep = compare(onnxprobe, tmp_path, cap, model, rc=0)
    assert not any(c["rng_draws"] or c["buffers_written"]
                   for c in json.loads((cap / "manifest.json").read_text())["torch"]["calls"])


def test_a_capture_computed_in_bfloat16_is_named_and_capturing_in_float32_fixes_it(onnxprobe, tmp_path):
    import sys
    import torch
    sys.path.insert(0, os.path.join(SRC, "python"))
    from onnxprobe_torch import capture, export
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    export(model, x, str(tmp_path / "m.onnx"), ["input"], ["output"])
    # the fault by construction: the capture runs under CPU autocast to bfloat16; without the float64 reference
    # (which would allow PyTorch's own rounding) the comparison sees bfloat16's error
    with torch.autocast("cpu", dtype=torch.bfloat16):
        capture(model, x, str(tmp_path / "bf16.cap"), ["input"], float64=False)
    manifest = json.loads((tmp_path / "bf16.cap" / "manifest.json").read_text())
    assert manifest["torch"]["settings"]["autocast"] == {"cpu": "bfloat16"}
    assert manifest["torch"]["settings"]["devices"] == ["cpu"]
    dtypes = {t["name"]: (t["dtype"], t.get("torch_dtype")) for t in manifest["tensors"]}
    assert dtypes["0"] == ("float32", "bfloat16") and dtypes["input"] == ("float32", None)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "bf16.cap", tmp_path / "m.onnx")
    f = rep["diagnosis"]["findings"][0]
    assert (f["cause"], f["node"], f["certainty"]) == ("capture-precision", "/0/Gemm", "likely")
    assert "in bfloat16" in f["summary"] and "autocast was on at capture: cpu bfloat16" in f["summary"]
    assert "8 significant bits" in f["evidence"] and "without autocast" in f["fix"]["summary"]
    # the fix: capture without autocast
    capture(model, x, str(tmp_path / "f32.cap"), ["input"], float64=False)
    compare(onnxprobe, tmp_path, tmp_path / "f32.cap", tmp_path / "m.onnx", rc=0)


def test_a_few_small_float16_inputs_are_not_underflow_and_a_weight_that_overflows_is_a_change(onnxprobe, tmp_path):
    from diagnose_models import _float16_chain
    # the fault is a changed weight (3.0 -> 3.5) in a float16 conversion; one input value of 1e-5 is float16's
    # ordinary rounding there, not an underflow of the tensor
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    _float16_chain(a, False, (), (("mul", "Mul", 3.0, "y0"),))
    _float16_chain(b, True, (), (("mul", "Mul", 3.5, "y0"),))
    x = np.random.default_rng(0).random((1, 64), dtype=np.float32)
    x[0, 0] = 1e-5
    np.save(tmp_path / "x.npy", x)
    _, rep = compare(onnxprobe, tmp_path, a, b, "--input", tmp_path / "x.npy")
    causes = [(f["cause"], f["node"]) for f in rep["diagnosis"]["findings"]]
    assert causes[0] == ("weight-changed", "mul") and ("float16-range", "mul") not in causes, causes
    # a float32 weight of 1e5 is Inf in float16: a change, not a conversion (A's values stay below 65504)
    _float16_chain(a, False, (), (("mul", "Mul", 1e5, "y0"),))
    with np.errstate(over="ignore"):
        _float16_chain(b, True, (), (("mul", "Mul", 1e5, "y0"),))
    np.save(tmp_path / "x.npy", (x * 1e-2).astype(np.float32))
    _, rep = compare(onnxprobe, tmp_path, a, b, "--input", tmp_path / "x.npy")
    f = finding(rep, "weight-changed")
    assert f["node"] == "mul" and "1 of 1 values differ" in f["evidence"], f
    # the diff compares the converted weight by value once rounded to float16: numpy's float16(1e5) is Inf
    with np.errstate(over="ignore"):
        assert np.isinf(np.float16(1e5))
    r = run([onnxprobe, "diff", a, b, f"--json={tmp_path / 'diff.json'}"])
    assert r.returncode in (0, 1), r.stderr
    (w,) = [i for i in json.loads((tmp_path / "diff.json").read_text())["initializers"] if i["name_b"] == "k_mul"]
    assert (w["rounded_to"], w["num_different"], w["num_elements"]) == ("float16", 1, 1)


def test_a_buffer_the_module_rebinds_during_the_capture_is_recorded_as_written(tmp_path):
    import sys
    import torch
    sys.path.insert(0, os.path.join(SRC, "python"))
    from onnxprobe_torch import capture

    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            self.count = self.count + 1  # a new tensor under the buffer's name, not an in-place write
            return self.fc(x)

    capture(Counter().eval(), torch.ones(2, 4), str(tmp_path / "c.cap"), ["x"], float64=False)
    calls = {c["module"]: c for c in json.loads((tmp_path / "c.cap" / "manifest.json").read_text())["torch"]["calls"]}
    assert calls["model"]["buffers_written"] == ["count"] and calls["fc"]["buffers_written"] == []
