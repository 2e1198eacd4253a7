"""End-to-end `onnxprobe compare` on real models and dumps."""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import models
from conftest import run
from dumps import write_dump

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")
FAULTY_TENSOR = "/features/features.3/Conv_output_0"


def compare(onnxprobe, tmp_path, *args):
    r = run([onnxprobe, "compare"] + [str(a) for a in args] + ["--json", tmp_path / "r.json"])
    rep = json.loads((tmp_path / "r.json").read_text()) if (tmp_path / "r.json").exists() else None
    return r, rep


def test_faulty_node_is_named_as_where_error_is_introduced(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--html", tmp_path / "r.html")
    assert r.returncode == 1, r.stderr
    assert rep["verdict"] == "FAIL"
    assert rep["summary"]["first_divergence"] == FAULTY_TENSOR
    assert rep["summary"]["frontier"] == [FAULTY_TENSOR]
    assert rep["summary"]["frontier_from_graph"] is True
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows[FAULTY_TENSOR]["role"] == "introduced"
    assert rows["/features/features.0/Conv_output_0"]["verdict"] == "PASS"
    assert all(t["role"] in ("inherited", "pass") for t in rep["tensors"] if t["name"] != FAULTY_TENSOR)
    worst = max(rows[FAULTY_TENSOR]["channels"], key=lambda c: c[3])
    assert worst[0] == 5  # the channel whose weights the generator scaled
    assert "first divergence: " + FAULTY_TENSOR in r.stdout
    assert "mostly channel 5" in r.stdout
    assert "HTML report: " in r.stdout and (tmp_path / "r.html").exists()
    assert rep["side_a"]["model_sha256"] != rep["side_b"]["model_sha256"]
    assert [(i["name"], i["type"], i["shape"]) for i in rep["inputs"]] == [
        ("input", "float32[2, 3, 32, 32]", [2, 3, 32, 32])
    ]
    assert rep["input_origin"] == "generated"


def test_optimizations_off_vs_all_pass(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--b-opt-level", "all", "--dim", "batch=1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["side_a"]["optimization_level"] == 0 and rep["side_b"]["optimization_level"] == 99
    assert rep["summary"]["compared"] == 10


def test_two_onnxruntime_versions_in_one_process(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--b-ort-version", "1.20.1", "--dim", "batch=1")
    if r.returncode == 2 and "not installed" in r.stderr:
        pytest.skip("ONNX Runtime 1.20.1 not bootstrapped")
    assert r.returncode == 0, r.stderr
    assert rep["side_a"]["runtime"] != rep["side_b"]["runtime"]
    assert rep["side_b"]["runtime"] == "onnxruntime 1.20.1"
    assert r.stderr == ""


def test_live_vs_saved_dump_uses_the_dump_inputs(onnxprobe, tmp_path):
    dump = tmp_path / "faulty.npz"
    assert run([onnxprobe, "run", FAULTY, "--dim", "batch=3", "--seed", "9", "-o", dump]).returncode == 0
    r, rep = compare(onnxprobe, tmp_path, DEMO, dump)
    assert r.returncode == 1, r.stderr
    assert rep["side_b"]["kind"] == "dump"
    assert [(i["name"], i["type"]) for i in rep["inputs"]] == [("input", "float32[3, 3, 32, 32]")]
    assert rep["input_origin"] == "recorded"
    assert rep["summary"]["frontier"] == [FAULTY_TENSOR]
    r, _ = compare(onnxprobe, tmp_path, FAULTY, dump)
    assert r.returncode == 0, r.stdout


def test_dump_vs_dump_with_and_without_a_graph(onnxprobe, tmp_path):
    for name, model in (("a", DEMO), ("b", FAULTY)):
        assert run([onnxprobe, "run", model, "--dim", "batch=1", "-o", tmp_path / name]).returncode == 0
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "a", tmp_path / "b")
    assert r.returncode == 1
    assert rep["summary"]["frontier_from_graph"] is False
    assert rep["summary"]["frontier"] == [FAULTY_TENSOR]
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "a", tmp_path / "b", "--model", DEMO)
    assert rep["summary"]["frontier_from_graph"] is True and rep["summary"]["frontier"] == [FAULTY_TENSOR]


def test_dumps_from_different_inputs_cannot_be_paired(onnxprobe, tmp_path):
    for name, seed in (("a", "1"), ("b", "2")):
        run([onnxprobe, "run", DEMO, "--dim", "batch=1", "--seed", seed, "-o", tmp_path / name])
    r, _ = compare(onnxprobe, tmp_path, tmp_path / "a", tmp_path / "b")
    assert r.returncode == 2
    assert "different inputs" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_only_one_side_tensors_are_listed_and_mapping_pairs_them(onnxprobe, tmp_path):
    x = np.arange(6, dtype=np.float32)
    write_dump(tmp_path / "A", [("conv", x), ("relu", x), ("extra_a", x)])
    write_dump(tmp_path / "B", [("conv", x), ("relu_renamed", x), ("extra_b", x)])
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "A", tmp_path / "B")
    assert r.returncode == 0
    assert rep["only_in_a"] == ["relu", "extra_a"] and rep["only_in_b"] == ["relu_renamed", "extra_b"]
    (tmp_path / "map.txt").write_text("# A name   B name\nrelu relu_renamed\n")
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "A", tmp_path / "B", "--map", tmp_path / "map.txt")
    assert rep["summary"]["compared"] == 2 and rep["only_in_a"] == ["extra_a"]
    assert rep["tensors"][1]["name_b"] == "relu_renamed"
    (tmp_path / "map.json").write_text(json.dumps({"relu": "relu_renamed", "extra_a": "extra_b"}))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "A", tmp_path / "B", "--map", tmp_path / "map.json")
    assert rep["summary"]["compared"] == 3 and rep["only_in_a"] == [] and rep["only_in_b"] == []


def test_no_common_tensor_is_bad_input(onnxprobe, tmp_path):
    x = np.zeros(3, np.float32)
    write_dump(tmp_path / "A", [("a", x)])
    write_dump(tmp_path / "B", [("b", x)])
    r, _ = compare(onnxprobe, tmp_path, tmp_path / "A", tmp_path / "B")
    assert r.returncode == 2 and "no tensor in common" in r.stderr


def test_models_with_different_inputs_cannot_be_paired(onnxprobe, tmp_path):
    models.chain_model(tmp_path / "chain.onnx")
    r, _ = compare(onnxprobe, tmp_path, DEMO, tmp_path / "chain.onnx", "--dim", "batch=2")
    assert r.returncode == 2
    assert "input" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,code,needle", [
    (["--b-provider", "CUDA"], 2, "not available"),
    (["--b-ort-version", "0.0.1"], 2, "not installed"),
    (["--b-ort-lib", "/nonexistent/libonnxruntime.so"], 2, "does not exist"),
    (["--b-opt-level", "fast"], 2, "--opt-level"),
    ([], 2, "tell the sides apart"),
    (["--atol", "-1", "--b-opt-level", "all"], 2, "--atol"),
    (["--tol", "(=1,1", "--b-opt-level", "all"], 2, "pattern"),
])
def test_bad_sides_and_options(onnxprobe, tmp_path, args, code, needle):
    r, _ = compare(onnxprobe, tmp_path, DEMO, "--dim", "batch=1", *args)
    assert r.returncode == code, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_memory_budget_batches_give_the_same_verdicts(onnxprobe, tmp_path):
    r1, rep1 = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2")
    r2, rep2 = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--max-memory", "200K")
    assert rep2["summary"]["batches"] > 1 and rep2["summary"]["runs_a"] == rep2["summary"]["batches"]
    assert [t["verdict"] for t in rep1["tensors"]] == [t["verdict"] for t in rep2["tensors"]]
    assert [t["max_abs"] for t in rep1["tensors"]] == [t["max_abs"] for t in rep2["tensors"]]
    assert rep1["summary"]["frontier"] == rep2["summary"]["frontier"]


def test_a_side_failing_midway_keeps_the_rows_already_compared(onnxprobe, tmp_path):
    assert run([onnxprobe, "run", DEMO, "--dim", "batch=1", "-o", tmp_path / "d"]).returncode == 0
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    late = [t for t in manifest["tensors"] if t["kind"] == "tensor"][-2]
    os.remove(tmp_path / "d" / late["file"])
    r, rep = compare(onnxprobe, tmp_path, DEMO, tmp_path / "d", "--max-memory", "100K")
    assert r.returncode == 2, r.stderr
    assert rep["aborted"] is True and late["file"] in rep["abort_reason"]
    assert rep["verdict"] == "ERROR"
    assert 0 < rep["summary"]["compared"] < 10
    assert "ABORTED" in r.stdout
    assert len(r.stderr.strip().splitlines()) == 1


def test_json_schema_is_versioned_and_complete(onnxprobe, tmp_path):
    _, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=1")
    assert rep["schema"] == "onnxprobe-compare" and rep["schema_version"] == 1
    for key in ("side_a", "side_b", "inputs", "input_seed", "tolerance", "summary", "tensors", "only_in_a"):
        assert key in rep
    for key in ("runtime", "provider", "optimization_level", "model_sha256", "runtime_library"):
        assert key in rep["side_a"]
    row = rep["tensors"][2]
    for key in ("max_abs", "mean_abs", "p99_abs", "max_rel", "mean_rel", "cosine", "snr_db", "mismatches",
                "mismatch_fraction", "max_abs_index", "stats_a", "stats_b", "grade", "role", "channels",
                "abs_histogram", "nonfinite_new"):
        assert key in row


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_html_report_renders_in_headless_chromium(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--html", tmp_path / "r.html")
    assert r.returncode == 1
    html = (tmp_path / "r.html").read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--virtual-time-budget=5000", "--dump-dom", f"file://{tmp_path / 'r.html'}"],
                       capture_output=True, text=True, timeout=120)
    dom = p.stdout
    assert 'data-rendered="ok"' in dom, p.stderr[-2000:]
    assert not re.search(r"<body[^>]*data-error", dom)
    console_errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Error" in l or "Uncaught" in l)]
    assert console_errors == []
    assert len(re.findall(r'<circle[^>]*class="pt', dom)) == rep["summary"]["compared"]
    assert 'class="first-divergence"' in dom and 'class="tolerance"' in dom
    assert len(re.findall(r"<tr data-i=\"\d+\"", dom)) == rep["summary"]["compared"]
    assert "Tensor detail: <code>" + FAULTY_TENSOR in dom
    assert "mismatches per channel" in dom
