"""onnxprobe generate: two decoders over a generation with their key/value cache.

References are independent of the tool: greedy tokens from the PyTorch module the decoder was
exported from (decoder_models.greedy), faults injected by the test into a node it names, and the
step a position fault must first show at computed from the prompt's length.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import run

sys.path.insert(0, os.path.dirname(__file__))
import decoder_models as dm  # noqa: E402

PROMPT = [5, 17, 3, 44, 8, 9, 1, 60]


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    d = tmp_path_factory.mktemp("decoders")
    out = {}
    for kind in ("gpt2", "llama"):
        path = d / f"{kind}.onnx"
        dm.export(dm.build(kind), str(path))
        out[kind] = path
    return out


def fault_weight(src, node_name, dst, column=0, scale=1.5):
    """Scales one column of the weight the node `node_name` reads."""
    m = onnx.load(str(src))
    node = next(n for n in m.graph.node if n.name == node_name)
    inits = {i.name: i for i in m.graph.initializer}
    w = next(inits[x] for x in node.input if x in inits)
    a = numpy_helper.to_array(w).copy()
    a[..., column] *= scale
    w.CopyFrom(numpy_helper.from_array(a, w.name))
    onnx.save(m, str(dst))


def fault_row(src, node_name, dst, row, delta=1.0):
    """Adds `delta` to half of one row of the table a Gather node reads (an embedding's
    position; not the whole row: a LayerNorm would remove a constant shift)."""
    m = onnx.load(str(src))
    node = next(n for n in m.graph.node if n.name == node_name)
    inits = {i.name: i for i in m.graph.initializer}
    w = inits[node.input[0]]
    a = numpy_helper.to_array(w).copy()
    a[row, : a.shape[1] // 2] += delta
    w.CopyFrom(numpy_helper.from_array(a, w.name))
    onnx.save(m, str(dst))


def generate(onnxprobe, tmp_path, *args):
    js = tmp_path / "gen.json"
    r = run([onnxprobe, "generate", *args, "--json", js])
    doc = json.loads(js.read_text()) if r.returncode in (0, 1) else None
    return r, doc


def ids(values):
    return ",".join(str(v) for v in values)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_unfaulted_optimized_side_passes_and_tokens_are_pytorch_greedy(onnxprobe, decoders,
                                                                        tmp_path, kind):
    steps = 24
    r, doc = generate(onnxprobe, tmp_path, decoders[kind], "--b-opt-level", "all", "--steps",
                      steps, "--prompt-ids", ids(PROMPT))
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["verdict"] == "PASS" and doc["born"] is None
    expected = dm.greedy(dm.build(kind), PROMPT, steps)
    assert doc["free_running"]["tokens_a"] == expected
    assert doc["free_running"]["tokens_b"] == expected
    assert doc["free_running"]["first_divergent_step"] is None
    tf = doc["teacher_forced"]
    assert [s["step"] for s in tf] == list(range(1, steps + 1))
    assert all(s["verdict"] == "PASS" for s in tf)
    # the cache positions each step adds: the prompt's at step 1, then one per step
    layers = 3
    for s in tf:
        assert len(s["cache"]) == 2 * layers
        added = len(PROMPT) if s["step"] == 1 else 1
        assert all(len(c["position_max_abs"]) == added for c in s["cache"])
    io = doc["side_a"]["io"]
    assert io["input_ids"] == "input_ids" and io["logits"] == "logits"
    assert [(c["past"], c["present"]) for c in io["cache"]][:2] == [
        ("past_key_values.0.key", "present.0.key"), ("past_key_values.0.value", "present.0.value")]


def test_other_runtime_version_passes(onnxprobe, decoders, tmp_path):
    r, doc = generate(onnxprobe, tmp_path, decoders["llama"], "--b-ort-version", "1.20.1",
                      "--steps", 8)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1.20.1" in doc["side_b"]["description"]
    assert doc["prompt"]["generated"] and len(doc["prompt"]["tokens"]) == 8


@pytest.mark.parametrize("proj", ["q_proj", "v_proj", "o_proj"])
def test_attention_weight_fault_names_layer_step_and_node(onnxprobe, decoders, tmp_path, proj):
    node = f"/layers.1/self_attn/{proj}/MatMul"
    faulty = tmp_path / "faulty.onnx"
    fault_weight(decoders["llama"], node, faulty)
    r, doc = generate(onnxprobe, tmp_path, decoders["llama"], faulty, "--steps", 6,
                      "--prompt-ids", ids(PROMPT))
    assert r.returncode == 1, r.stdout + r.stderr
    born = doc["born"]
    assert born["step"] == 1 and born["layer"] == 1, born
    assert born["node"] == node and born["op_type"] == "MatMul"
    assert doc["teacher_forced"][0]["verdict"] == "FAIL"
    # the layers before the faulty one keep their cache exactly as side A's
    first = doc["teacher_forced"][0]
    assert all(c["verdict"] == "PASS" for c in first["cache"] if c["layer"] == 0)
    assert doc["step_report"]["schema"] == "onnxprobe-compare"
    assert f"error born at step 1" in r.stdout and node in r.stdout


def test_position_fault_is_born_at_the_step_that_reads_it(onnxprobe, decoders, tmp_path):
    # the prompt fills positions 0..7 at step 1; step k (k >= 2) feeds position 8 + k - 2
    position = len(PROMPT) + 2
    expected_step = position - len(PROMPT) + 2
    faulty = tmp_path / "faulty.onnx"
    fault_row(decoders["gpt2"], "/wpe/Gather", faulty, position)
    r, doc = generate(onnxprobe, tmp_path, decoders["gpt2"], faulty, "--steps", 8,
                      "--prompt-ids", ids(PROMPT))
    assert r.returncode == 1, r.stdout + r.stderr
    tf = doc["teacher_forced"]
    assert all(s["verdict"] == "PASS" for s in tf[:expected_step - 1])
    assert doc["born"]["step"] == expected_step
    assert doc["born"]["node"] == "/wpe/Gather"
    # every layer's cache differs at that position only, not before it
    born = tf[expected_step - 1]
    assert born["cache"][0]["verdict"] == "FAIL"
    assert all(s["cache"][0]["position_max_abs"] == [0.0] * len(s["cache"][0]["position_max_abs"])
               for s in tf[:expected_step - 1])


def test_html_page_and_output_guard(onnxprobe, decoders, tmp_path):
    faulty = tmp_path / "faulty.onnx"
    fault_weight(decoders["llama"], "/layers.2/self_attn/v_proj/MatMul", faulty)
    html = tmp_path / "gen.html"
    r = run([onnxprobe, "generate", decoders["llama"], faulty, "--steps", 4, "--html", html])
    assert r.returncode == 1, r.stderr
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "layer 2" in page
    assert "/layers.2/self_attn/v_proj/MatMul" in page
    # our own page may be replaced; a user's file may not
    r = run([onnxprobe, "generate", decoders["llama"], faulty, "--steps", 2, "--html", html])
    assert r.returncode == 1, r.stderr
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>")
    r = run([onnxprobe, "generate", decoders["llama"], faulty, "--steps", 2, "--html", mine])
    assert r.returncode == 2 and "--force" in r.stderr
    assert mine.read_text() == "<p>my notes</p>"


def test_bad_inputs_are_one_line_exit_2(onnxprobe, decoders, tmp_path):
    # a model without a cache
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    plain = tmp_path / "plain.onnx"
    onnx.save(onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 14)]),
              str(plain))
    cases = [
        ([plain, "--b-opt-level", "all"], "input 'x'"),
        ([decoders["gpt2"], "--b-opt-level", "all", "--prompt-ids", "1,500"], "vocabulary"),
        ([decoders["gpt2"], "--b-opt-level", "all", "--io", "logits=nope"], "nope"),
        ([decoders["gpt2"], "--b-opt-level", "all", "--steps", "0"], "--steps"),
        ([decoders["gpt2"]], "no --a-/--b- option"),
        ([decoders["gpt2"], decoders["llama"]], "caches differ"),
        # 3 layers x key/value x 4 heads x 16 x 4 bytes = 1536 bytes per position and cache,
        # three caches (A, B, B's own after parting) over 8 + 100 positions = 486.0 KiB
        ([decoders["gpt2"], "--b-opt-level", "all", "--steps", "100", "--max-memory", "64K"],
         "108 positions take 486.0 KiB"),
    ]
    bad_prompt = tmp_path / "prompt.npy"
    np.save(bad_prompt, np.array([[0.5, 1.5]], np.float32))
    cases.append(([decoders["gpt2"], "--b-opt-level", "all", "--prompt", bad_prompt],
                  "integer token ids"))
    for args, needle in cases:
        r = run([onnxprobe, "generate", *args])
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (args, r.stderr)


def test_prompt_file_equals_inline_ids(onnxprobe, decoders, tmp_path):
    p = tmp_path / "prompt.npy"
    np.save(p, np.array([PROMPT], np.int64))
    _, from_file = generate(onnxprobe, tmp_path, decoders["gpt2"], "--b-opt-level", "all",
                            "--steps", 4, "--prompt", p)
    _, inline = generate(onnxprobe, tmp_path, decoders["gpt2"], "--b-opt-level", "all",
                         "--steps", 4, "--prompt-ids", ids(PROMPT))
    assert from_file["prompt"]["tokens"] == PROMPT
    assert from_file["free_running"] == inline["free_running"]


def test_two_faults_born_at_the_first_and_tabled_by_size(onnxprobe, decoders, tmp_path):
    # a small fault in layer 0 and a large one in layer 2: the error is born at the first, the
    # per-layer table leads with the second, and both nodes are named
    small, both = tmp_path / "small.onnx", tmp_path / "both.onnx"
    fault_weight(decoders["llama"], "/layers.0/self_attn/v_proj/MatMul", small, scale=1.1)
    fault_weight(small, "/layers.2/self_attn/k_proj/MatMul", both, scale=2.0)
    r, doc = generate(onnxprobe, tmp_path, decoders["llama"], both, "--steps", 3)
    assert r.returncode == 1, r.stdout + r.stderr
    assert doc["born"]["step"] == 1 and doc["born"]["layer"] == 0
    assert doc["born"]["node"] == "/layers.0/self_attn/v_proj/MatMul"
    table = [(e["layer"], e["worst_node"]) for e in doc["layer_errors"]]
    assert table[:2] == [(2, "/layers.2/self_attn/k_proj/MatMul"),
                         (0, "/layers.0/self_attn/v_proj/MatMul")]


# --- a PyTorch run saved by the companion as side A ---

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))


def saved_run(kind, decoders, out, steps, capture_steps=2):
    import onnxprobe_torch

    return onnxprobe_torch.capture_generation(dm.build(kind), PROMPT, steps, str(out),
                                              onnx_path=str(decoders[kind]),
                                              capture_steps=capture_steps)


def test_pytorch_vs_onnx_unfaulted_passes_over_64_steps(onnxprobe, decoders, tmp_path):
    saved = tmp_path / "gpt2.gen"
    tokens = saved_run("gpt2", decoders, saved, 64)
    assert tokens == dm.greedy(dm.build("gpt2"), PROMPT, 64)
    r, doc = generate(onnxprobe, tmp_path, saved, decoders["gpt2"], "--steps", 64)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["verdict"] == "PASS" and len(doc["teacher_forced"]) == 64
    assert doc["free_running"]["tokens_a"] == tokens == doc["free_running"]["tokens_b"]
    assert "saved run" in doc["side_a"]["description"]


def test_pytorch_vs_faulty_export_names_the_node_through_the_step_capture(onnxprobe, decoders,
                                                                          tmp_path):
    saved = tmp_path / "llama.gen"
    saved_run("llama", decoders, saved, 6)
    node = "/layers.1/self_attn/v_proj/MatMul"
    faulty = tmp_path / "faulty.onnx"
    fault_weight(decoders["llama"], node, faulty)
    r, doc = generate(onnxprobe, tmp_path, saved, faulty, "--steps", 6)
    assert r.returncode == 1, r.stdout + r.stderr
    assert doc["born"]["step"] == 1 and doc["born"]["layer"] == 1
    assert doc["born"]["node"] == node
    # the step was compared against PyTorch's module activations of that step
    assert doc["step_report"]["side_a"]["kind"] == "torch-capture"


def test_saved_run_misuse_is_one_line_exit_2(onnxprobe, decoders, tmp_path):
    saved = tmp_path / "gpt2.gen"
    saved_run("gpt2", decoders, saved, 4, capture_steps=0)
    cases = [
        ([decoders["gpt2"], saved], "give it as side A"),
        ([saved, decoders["gpt2"], "--steps", "5"], "holds 4 steps"),
        ([saved, decoders["gpt2"], "--prompt-ids", "1,2"], "own prompt"),
    ]
    broken = tmp_path / "broken.gen"
    broken.mkdir()
    (broken / "generation.json").write_text('{"format": "onnxprobe-generation", '
                                            '"format_version": 1, "prompt": [1], "tokens": []}')
    cases.append(([broken, decoders["gpt2"]], "logits"))
    meta = json.loads((saved / "generation.json").read_text())
    for field, value, needle in (("layer", -1, "layer must be"), ("layer", 1e12, "layer must be"),
                                 ("seq_axis", 7, "seq_axis"), ("empty_shape", [1, -2], "empty")):
        bad = tmp_path / f"bad_{field}_{abs(hash(str(value)))}.gen"
        shutil.copytree(saved, bad)
        doc = json.loads(json.dumps(meta))
        doc["cache"][1][field] = value
        (bad / "generation.json").write_text(json.dumps(doc))
        cases.append(([bad, decoders["gpt2"]], needle))
    for args, needle in cases:
        r = run([onnxprobe, "generate", *args])
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (args, r.stderr)


def test_mask_fill_minus_1e4_vs_dtype_minimum_shows_on_padded_positions(onnxprobe, tmp_path):
    # Side A fills masked attention scores with float32's minimum, side B with -1e4. Without
    # padding no row is masked out entirely, so both give the same numbers; with left padding
    # the padding positions' rows are fully masked, where -1e4 still lets the scores through
    a, b = tmp_path / "min.onnx", tmp_path / "1e4.onnx"
    dm.export(dm.build("llama"), str(a))
    dm.export(dm.build("llama", mask_fill=-1e4), str(b))
    r, doc = generate(onnxprobe, tmp_path, a, b, "--steps", 4, "--prompt-ids", ids(PROMPT))
    assert r.returncode == 0, r.stdout + r.stderr
    pad = 3
    r, doc = generate(onnxprobe, tmp_path, a, b, "--steps", 4, "--prompt-ids", ids(PROMPT),
                      "--pad-left", pad)
    assert r.returncode == 1, r.stdout + r.stderr
    assert doc["prompt"]["pad_left"] == pad
    assert doc["born"]["step"] == 1
    # the node named holds or applies the fill: a Constant of -1e4 in B, or the Where using it
    m = onnx.load(str(b))
    fills = {n.output[0]: n.name for n in m.graph.node if n.op_type == "Constant" and
             np.isclose(numpy_helper.to_array(n.attribute[0].t).astype(np.float64), -1e4).all()}
    mask_nodes = set(fills.values()) | {n.name for n in m.graph.node if n.op_type == "Where" and
                                        any(i in fills for i in n.input)}
    assert fills and doc["born"]["node"] in mask_nodes, (doc["born"], mask_nodes)
    # the difference sits at the padding positions only: real tokens' logits are equal
    first = doc["teacher_forced"][0]
    for c in first["cache"]:
        assert c["position_max_abs"][pad:] == [0.0] * len(PROMPT)
    assert any(max(c["position_max_abs"][:pad]) > 0 for c in first["cache"])
    assert doc["free_running"]["first_divergent_step"] is None
    assert all(s["logits"]["max_abs"] == 0 for s in doc["teacher_forced"])


QUANTIZE_AND_SQNR = r"""
import sys, numpy as np, onnxruntime as ort
from onnxruntime.quantization import quantize_dynamic, QuantType
src, dst, prompt = sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3].split(",")]
quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
logits = []
for path in (src, dst):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {"input_ids": np.array([prompt]), "attention_mask": np.ones((1, len(prompt)), np.int64),
            "position_ids": np.arange(len(prompt))[None]}
    for i in s.get_inputs():
        if i.name.startswith("past"):
            feed[i.name] = np.zeros([1, i.shape[1], 0, i.shape[3]], np.float32)
    logits.append(s.run(["logits"], feed)[0][0, -1].astype(np.float64))
a, b = logits
print(10 * np.log10((a * a).sum() / ((b - a) ** 2).sum()))
"""


def test_quantized_side_is_judged_by_sqnr_per_step(onnxprobe, decoders, tmp_path):
    q = tmp_path / "int8.onnx"
    r = run([os.environ["ONNXPROBE_PYENV"], "-c", QUANTIZE_AND_SQNR, decoders["llama"], q,
             ids(PROMPT)])
    assert r.returncode == 0, r.stderr
    sqnr = float(r.stdout.strip().splitlines()[-1])  # step 1's logits, by ONNX Runtime and numpy
    r, doc = generate(onnxprobe, tmp_path, decoders["llama"], q, "--steps", 4, "--prompt-ids",
                      ids(PROMPT))
    assert r.returncode in (0, 1), r.stderr
    assert doc["quant_min_sqnr_db"] == 20
    assert any("judged by SQNR" in n for n in doc["notes"])
    ratio = doc["teacher_forced"][0]["logits"]["tolerance_ratio"]
    assert abs((20 - 20 * np.log10(ratio)) - sqnr) < 1e-3 * abs(sqnr)
    assert doc["teacher_forced"][0]["verdict"] == ("PASS" if sqnr >= 20 else "FAIL")
    # the same pair judged by the tolerances instead
    r, off = generate(onnxprobe, tmp_path, decoders["llama"], q, "--steps", 4, "--prompt-ids",
                      ids(PROMPT), "--quant", "off")
    assert off["quant_min_sqnr_db"] == 0
    assert off["teacher_forced"][0]["logits"]["tolerance_ratio"] != ratio


# --- ONNX Runtime GenAI's model builder: fused GroupQueryAttention, int4 MatMulNBits ---


@pytest.fixture(scope="module")
def builder_models(tmp_path_factory):
    deps = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["ONNXPROBE_PYENV"])))
    python = os.path.join(deps, "genai-env", "bin", "python")
    out = tmp_path_factory.mktemp("builder")
    script = os.path.join(os.path.dirname(__file__), "..", "genai", "make_builder_models.py")
    r = run([python, script, out])
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def test_builder_model_fp32_optimized_passes(onnxprobe, builder_models, tmp_path):
    r, doc = generate(onnxprobe, tmp_path, builder_models / "fp32" / "model.onnx",
                      "--b-opt-level", "all", "--steps", 12)
    assert r.returncode == 0, r.stdout + r.stderr
    io = doc["side_a"]["io"]
    assert io["input_ids"] == "input_ids" and io["position_ids"] == "" and io["layers"] == 3
    m = onnx.load(str(builder_models / "fp32" / "model.onnx"), load_external_data=False)
    assert sum(n.op_type == "GroupQueryAttention" for n in m.graph.node) == 3


def test_builder_int4_per_layer_table_largest_error_first(onnxprobe, builder_models, tmp_path):
    a, b = builder_models / "fp32" / "model.onnx", builder_models / "int4" / "model.onnx"
    r, doc = generate(onnxprobe, tmp_path, a, b, "--steps", 6)
    assert r.returncode in (0, 1), r.stderr
    assert any("weight-only: MatMulNBits" in n for n in doc["notes"])
    table = doc["layer_errors"]
    assert {e["layer"] for e in table} >= {0, 1, 2}
    ratios = [e["worst_ratio"] for e in table]
    assert ratios == sorted(ratios, reverse=True)
    # SQNR and ratio are one measure: ratio = 10^((limit - SQNR) / 20)
    for e in table:
        assert abs(e["worst_ratio"] - 10 ** ((20 - e["sqnr_db"]) / 20)) < 1e-9 * e["worst_ratio"]
    quantized = {n.name for n in onnx.load(str(b), load_external_data=False).graph.node
                 if n.op_type == "MatMulNBits"}
    assert all(e["worst_node"] in quantized for e in table)


def test_huggingface_causal_lm_vs_its_builder_export_passes(onnxprobe, builder_models, tmp_path):
    deps = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["ONNXPROBE_PYENV"])))
    python = os.path.join(deps, "genai-env", "bin", "python")
    script = os.path.join(os.path.dirname(__file__), "..", "genai", "capture_hf_generation.py")
    model = builder_models / "fp32" / "model.onnx"
    saved = tmp_path / "hf.gen"
    r = run([python, script, builder_models / "ckpt", model, ids(PROMPT), 24, saved])
    assert r.returncode == 0, r.stderr[-3000:]
    tokens = json.loads(r.stdout.strip().splitlines()[-1])
    assert tokens["saved"] == tokens["generate"]  # the companion's loop is transformers' greedy
    r, doc = generate(onnxprobe, tmp_path, saved, model, "--steps", 24)
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["free_running"]["tokens_a"] == tokens["saved"] == doc["free_running"]["tokens_b"]


def test_saved_side_a_replays_last_weeks_run(onnxprobe, decoders, tmp_path):
    saved = tmp_path / "week1.gen"
    r, doc = generate(onnxprobe, tmp_path, decoders["llama"], "--b-opt-level", "all", "--steps",
                      10, "--prompt-ids", ids(PROMPT), "--save-a", saved)
    assert r.returncode == 0, r.stderr
    meta = json.loads((saved / "generation.json").read_text())
    assert meta["tokens"] == doc["free_running"]["tokens_a"] and meta["prompt"] == PROMPT
    assert len(meta["steps"]) == 10
    # the saved logits are side A's: ONNX Runtime's own, recomputed here step by step
    first = np.load(saved / meta["steps"][0]["file"])
    torch_logits = dm.build("llama")(
        *dm_inputs(PROMPT))[0][0, -1].detach().numpy()
    assert np.abs(first["logits"] - torch_logits).max() < 1e-4
    # a later build, unchanged: PASS against the saved run; a faulty one fails at its layer
    r, later = generate(onnxprobe, tmp_path, saved, decoders["llama"], "--b-ort-version",
                        "1.20.1", "--steps", 10)
    assert r.returncode == 0, r.stdout + r.stderr
    faulty = tmp_path / "faulty.onnx"
    fault_weight(decoders["llama"], "/layers.2/self_attn/v_proj/MatMul", faulty)
    r, bad = generate(onnxprobe, tmp_path, saved, faulty, "--steps", 10)
    assert r.returncode == 1 and bad["born"]["step"] == 1 and bad["born"]["layer"] == 2
    # a user's folder is never replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    r = run([onnxprobe, "generate", decoders["llama"], "--b-opt-level", "all", "--steps", 2,
             "--save-a", mine, "--force"])
    assert r.returncode == 2 and (mine / "notes.txt").read_text() == "keep"


def dm_inputs(prompt):
    import torch

    n = len(prompt)
    model = dm.build("llama")
    past = [torch.zeros(1, model.kv_heads, 0, model.hd) for _ in range(6)]
    return (torch.tensor([prompt]), torch.ones(1, n, dtype=torch.int64),
            torch.arange(n).unsqueeze(0), *past)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_save_leaves_nothing(onnxprobe, decoders, tmp_path, sig):
    out = tmp_path / "run.gen"
    proc = subprocess.Popen([onnxprobe, "generate", decoders["gpt2"], "--b-opt-level", "all",
                             "--steps", "200", "--save-a", str(out), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until steps are being written
        # (the output guard's probe of the folder is a temporary file of the same prefix)
        tmp = [n for n in os.listdir(tmp_path) if n.startswith("run.gen") and ".tmp" in n]
        try:
            if tmp and len(os.listdir(tmp_path / tmp[0] / "steps")) >= 3:
                break
        except (FileNotFoundError, NotADirectoryError):  # the probe, or steps/ not made yet
            pass
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.002)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert os.listdir(tmp_path) == []  # neither the folder nor its temporary
