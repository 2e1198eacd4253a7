"""End-to-end `onnxprobe compare` on real models and dumps."""
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser

import numpy as np
import onnx
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
    # B captures only what its optimized graph keeps (the Conv outputs fused with their Relu are
    # gone); each of A's 10 tensors is compared or listed as fused away, never failed
    m = onnx.load(str(DEMO))
    fused = set(rep["fused_in_b"])
    assert fused and rep["summary"]["compared"] + len(fused) == 10
    assert fused <= {n.output[0] for n in m.graph.node if n.op_type == "Conv"} | {
        n.output[0] for n in m.graph.node if n.op_type == "Relu"}


def test_two_onnxruntime_versions_in_one_process(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--b-ort-version", "1.20.1", "--dim", "batch=1")
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
    (["--b-opt-level", "fast"], 2, "--b-opt-level"),
    ([], 2, "tell the sides apart"),
    (["--atol", "-1", "--b-opt-level", "all"], 2, "--atol"),
    (["--tol", "(=1,1", "--b-opt-level", "all"], 2, "pattern"),
])
def test_bad_sides_and_options(onnxprobe, tmp_path, args, code, needle):
    r, _ = compare(onnxprobe, tmp_path, DEMO, "--dim", "batch=1", *args)
    assert r.returncode == code, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_unavailable_provider_is_one_line_and_no_empty_report(onnxprobe, tmp_path):
    # exit 2: asking for a provider the loaded runtime lacks is a bad request, like `run` (3 is
    # for a runtime that fails on a model it accepted)
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--dim", "batch=1", "--b-provider", "CUDA")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnxprobe: error: ") and "CUDA" in lines[0]
    assert "rows above" not in r.stderr and rep is None


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
    _, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=1", "--report-detail", "full")
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


class _VisibleText(HTMLParser):
    """Text a reader sees (no script, style or SVG tooltips), for the whole page and per element id."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.text = [], {"": []}

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        ident = dict(attrs).get("id")
        self.stack.append((tag, ident))
        if ident:
            self.text.setdefault(ident, [])

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                break

    def handle_data(self, data):
        if any(tag in ("script", "style", "title", "head") for tag, _ in self.stack):
            return
        self.text[""].append(data)
        for _, ident in self.stack:
            if ident:
                self.text[ident].append(data)


def visible_text(dom):
    p = _VisibleText()
    p.feed(dom)
    return {k: " ".join(" ".join(v).split()) for k, v in p.text.items()}


SUMMARY_KEYS = ("name", "node", "op_type", "verdict", "role", "state", "within_tolerance", "tolerance_ratio", "grade",
                "atol_used",
                "dtype_a", "dtype_b", "shape_a", "shape_b", "count", "max_abs", "mean_abs", "max_rel", "mismatches",
                "mismatch_fraction", "cosine", "snr_db")


def test_compact_report_keeps_every_measurement_where_a_reader_acts(onnxprobe, tmp_path):
    """--report-detail compact (the default): rows that fail, are beyond tolerance, introduce or
    inherit, are graph outputs (read here with onnx), a culprit's or drift origin's tensor or the
    first difference hold every measurement; the rest a summary equal to the full row's fields."""
    _, compact = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2")
    os.replace(tmp_path / "r.json", tmp_path / "compact.json")
    _, full = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--report-detail", "full")
    assert compact["report_detail"] == "compact" and full["report_detail"] == "full"
    outputs = [o.name for o in onnx.load(FAULTY).graph.output]
    assert compact["graph_outputs"] == outputs
    loc = compact["localization"]
    acted_on = {c["tensor"] for c in loc["culprits"] + compact["drift_origins"]}
    acted_on.add(compact["summary"]["first_difference"])
    assert len(compact["tensors"]) == len(full["tensors"])
    kinds = set()
    for c, f in zip(compact["tensors"], full["tensors"]):
        keep = (c["verdict"] == "FAIL" or not c["within_tolerance"] or c["role"] != "pass" or c["name"] in outputs
                or c["name"] in acted_on)
        assert c["detail"] == ("full" if keep else "summary"), c["name"]
        kinds.add(c["detail"])
        assert f["detail"] == "full" and "abs_histogram" in f and "stats_a" in f
        assert ("stats_a" in c) == keep and ("abs_histogram" in c) == keep
        for key in SUMMARY_KEYS:
            assert c[key] == f[key], (c["name"], key)
        if keep:
            assert c == f
    assert kinds == {"full", "summary"}
    assert (tmp_path / "compact.json").stat().st_size < (tmp_path / "r.json").stat().st_size
    r = run([onnxprobe, "compare", DEMO, FAULTY, "--report-detail", "most"])
    assert r.returncode == 2 and r.stderr.strip().endswith("bad --report-detail 'most' (compact or full)")


def render_in_chromium(html_path):
    assert shutil.which("chromium"), "Debian's chromium (scripts/bootstrap.sh) is missing"
    """The DOM after the page's script ran; fails on a script error or a console error."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:  # none shared between suites
        p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                            f"--user-data-dir={profile}", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
                            f"file://{html_path}"], capture_output=True, text=True, timeout=120)
    dom = p.stdout
    assert 'data-rendered="ok"' in dom, p.stderr[-2000:]
    assert not re.search(r"<body[^>]*data-error", dom)
    console_errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Error" in l or "Uncaught" in l)]
    assert console_errors == []
    dom = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)  # the markup the script built
    return dom, visible_text(dom)


def with_report(html_path, rep, out_path):
    """The page of `html_path` with its embedded report replaced, as html_reporter.cc splices it."""
    html = html_path.read_text()
    tag = '<script id="data" type="application/json">'
    start = html.index(tag) + len(tag)
    end = html.index("</script>", start)
    out_path.write_text(html[:start] + json.dumps(rep).replace("</", "<\\/") + html[end:])
    return out_path


def table_row_text(dom, index):
    m = re.search(r'<tr data-i="%d"[^>]*>(.*?)</tr>' % index, dom, re.S)
    assert m, f"no table row {index}"
    return " ".join(re.sub(r"<[^>]+>", " ", m.group(1)).split())


def needs_chromium(test):  # the bootstrap installs Debian's chromium: missing is a failure, not a skip
    return test


@needs_chromium
def test_html_report_renders_in_headless_chromium(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--html", tmp_path / "r.html")
    assert r.returncode == 1
    html = (tmp_path / "r.html").read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    dom, text = render_in_chromium(tmp_path / "r.html")
    assert len(re.findall(r'<circle[^>]*class="pt', dom)) == rep["summary"]["compared"]
    assert 'class="first-divergence"' in dom and 'class="tolerance"' in dom
    assert len(re.findall(r"<tr data-i=\"\d+\"", dom)) == rep["summary"]["compared"]
    assert "Tensor detail: <code>" + FAULTY_TENSOR in dom
    assert "mismatches per channel" in dom
    # where the error is born: the faulty node, marked introduced, and its isolation
    assert "/features/features.3/Conv " in text["frontier"] and "introduced" in text["frontier"]
    assert "No tensor fails" not in text[""] and "nothing to localize" not in text[""]
    # what matters, near the top: the first difference (two bit-exact tensors before the fault)
    # and the tensors nearest their tolerance
    assert text["headline"].startswith("FAIL")
    assert "bit-exact until " + FAULTY_TENSOR in text["firstdiff"] and "the 2 tensors before it" in text["firstdiff"]
    assert text[""].index("bit-exact until") < text[""].index("Tensor detail")
    for c in rep["summary"]["closest_to_tolerance"]:
        assert c["name"] in text["closest"]
    # the chart holds every channel of axis 1 of the faulty conv output
    faulty = next(t for t in rep["tensors"] if t["name"] == FAULTY_TENSOR)
    assert f"all {faulty['shape_a'][1]} channels" in text["chancaption"]
    assert re.findall(r'class="opt">([^<]*)<', dom) == ["disabled", "disabled"]


@needs_chromium
def test_html_report_of_a_pass_leads_with_first_difference_and_closest_to_tolerance(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--b-opt-level", "all", "--dim", "batch=1",
                     "--html", tmp_path / "r.html")
    assert r.returncode == 0, r.stdout + r.stderr
    dom, text = render_in_chromium(tmp_path / "r.html")
    assert text["headline"].startswith("PASS") and "FAIL" not in text[""]
    assert "bit-exact" in text["firstdiff"] or "first difference" in text["firstdiff"]
    assert rep["summary"]["closest_to_tolerance"]
    for c in rep["summary"]["closest_to_tolerance"]:
        assert c["name"] in text["closest"]
    assert text[""].index("Closest to tolerance") < text[""].index("Error vs depth")
    # where the differences (all within tolerance) are born
    assert rep["drift_origins"]
    assert f"differences are born at {len(rep['drift_origins'])} node" in text["drift"]
    for c in rep["drift_origins"][:10]:
        assert c["node"] + " " in text["drift"]
    # optimization levels by name, never the number
    assert re.findall(r'class="opt">([^<]*)<', dom) == ["disabled", "all"]


@needs_chromium
def test_html_report_of_a_fail_without_an_introducing_row_shows_where_the_error_is_born(onnxprobe, tmp_path):
    # a FAIL whose failing rows are all inherited: isolation found each within tolerance alone,
    # and stage 2 named an ancestor whose own error is below tolerance and amplified downstream
    _, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=1", "--html", tmp_path / "r.html")
    assert rep["verdict"] == "FAIL"
    for t in rep["tensors"]:
        if t["role"] == "introduced":
            t["role"] = "inherited"
    rep["summary"]["frontier"] = []
    note = ("no failing tensor fails on its own; the largest error made alone comes from "
            "/features/features.0/Conv (Conv), below tolerance there and amplified downstream")
    rep["summary"]["origin_note"] = note
    for c in rep["localization"]["culprits"]:
        c["introduced"] = False
    source = dict(rep["localization"]["culprits"][0], tensor="/features/features.0/Conv_output_0",
                  node="/features/features.0/Conv", op_type="Conv", row=-1, introduced=True,
                  reason="largest error any ancestor makes on its own, below tolerance here")
    rep["localization"]["culprits"].insert(0, source)
    first = rep["tensors"][2]
    first["channels"] = [[c, 1e-3 * (c % 7), 1e-4, c % 11] for c in range(200)]
    dom, text = render_in_chromium(with_report(tmp_path / "r.html", rep, tmp_path / "edited.html"))
    assert text["headline"].startswith("FAIL")
    assert "No tensor fails" not in text[""] and "nothing to localize" not in text[""]
    assert note in text["originnote"]
    assert "/features/features.0/Conv " in text["frontier"] and "source" in text["frontier"]
    assert "amplified downstream" in text["culprits"]
    assert f"All {rep['summary']['failed']} failing tensors inherit the error" in text["frontier"]
    # 200 channels: the chart samples and says so
    assert "showing 64 of 200 channels (largest errors)" in text["detail"]
    # a compact report holds those 64 already and the count of all
    first["channels"], first["channels_total"] = first["channels"][:64], 200
    dom, text = render_in_chromium(with_report(tmp_path / "r.html", rep, tmp_path / "edited.html"))
    assert "showing 64 of 200 channels (largest errors)" in text["detail"]


@needs_chromium
def test_html_detail_of_a_summary_row(onnxprobe, tmp_path):
    """A compact report's summary row (no statistics, histogram or channels) shows what it has
    and says where the rest is, without a script error."""
    _, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--html", tmp_path / "r.html",
                     "--report-detail", "full")
    first = next(t for t in rep["tensors"] if t["name"] == FAULTY_TENSOR)  # the row the page opens on
    summary = {k: first[k] for k in SUMMARY_KEYS + ("index", "atol", "rtol", "reason")}
    first.clear()
    first.update(summary, detail="summary")
    dom, text = render_in_chromium(with_report(tmp_path / "r.html", rep, tmp_path / "edited.html"))
    assert "summary row" in text["detail"] and "--report-detail full" in text["detail"]
    assert f"of {summary['count']} elements beyond tolerance" in text["detail"]


@needs_chromium
def test_html_report_marks_advisory_and_not_compared_rows_and_explains_grades(onnxprobe, tmp_path):
    _, rep = compare(onnxprobe, tmp_path, DEMO, "--b-opt-level", "basic", "--dim", "batch=1",
                     "--html", tmp_path / "r.html")
    rows = rep["tensors"]
    rows[9].update(state="advisory", within_tolerance=False, tolerance_ratio=4.0, verdict="PASS")
    rows[1].update(state="not-compared", reason="a sequence output", tolerance_ratio=0)
    dom, text = render_in_chromium(with_report(tmp_path / "r.html", rep, tmp_path / "edited.html"))
    assert text["headline"].startswith("PASS") and "FAIL" not in text[""]
    assert "8 tensors compared: 8 passed, 0 failed, 1 advisory" in text["headline"]
    assert "1 not compared" in text["headline"]
    assert "advisory" in table_row_text(dom, 9) and "PASS" not in table_row_text(dom, 9)
    assert table_row_text(dom, 1).split()[3:] == ["-"] * 9  # verdict, grade and every metric
    assert len(re.findall(r'<circle[^>]*class="pt', dom)) == 9  # nothing measured, nothing drawn


@needs_chromium
def test_html_report_explains_a_high_risk_grade_on_a_passing_tensor(onnxprobe, tmp_path):
    # docs/metrics.md's example: max abs(a) = 1, so atol_used = 1e-5 and eps = 1e-3; at a = 0 the
    # difference 5e-6 is a relative error of 5e-3 (high-risk) yet half the allowed error
    write_dump(tmp_path / "A", [("t", np.array([1, 0], np.float32))])
    write_dump(tmp_path / "B", [("t", np.array([1, 5e-6], np.float32))])
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "A", tmp_path / "B", "--html", tmp_path / "r.html")
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["tensors"][0]["max_rel"] == pytest.approx(5e-3, rel=1e-3)
    dom, text = render_in_chromium(tmp_path / "r.html")
    assert text["headline"].startswith("PASS")
    assert "1 passing tensor grades high-risk" in text["gradenote"]
    assert "grade rates the largest relative error alone" in text["gradenote"]
    assert "docs/metrics.md" in text["gradenote"]
    assert "0.5000" in text["closest"]  # 5e-6 of an allowed 1e-5
    # the grade cell itself carries the explanation, and so does the detail view
    assert re.search(r'<tr data-i="0"[^>]*>(?:(?!</tr>).)*class="risk" title="[^"]*docs/metrics.md', dom, re.S)
    assert "High-risk grade on a passing tensor" in text["detail"]


@needs_chromium
def test_html_report_of_an_aborted_comparison_says_so_and_shows_the_rows_compared(onnxprobe, tmp_path):
    assert run([onnxprobe, "run", DEMO, "--dim", "batch=1", "-o", tmp_path / "d"]).returncode == 0
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    late = [t for t in manifest["tensors"] if t["kind"] == "tensor"][-2]
    os.remove(tmp_path / "d" / late["file"])
    r, rep = compare(onnxprobe, tmp_path, DEMO, tmp_path / "d", "--max-memory", "100K", "--html", tmp_path / "r.html")
    assert r.returncode == 2 and rep["verdict"] == "ERROR"
    dom, text = render_in_chromium(tmp_path / "r.html")
    assert text["headline"].startswith("ERROR") and "ABORTED after" in text["headline"]
    assert late["file"] in text["headline"]
    assert "aborted" in text["frontier"] and "No tensor fails" not in text[""]
    assert "bit-exact everywhere" not in text["firstdiff"]  # only the rows before the abort were seen
    assert len(re.findall(r"<tr data-i=\"\d+\"", dom)) == rep["summary"]["compared"] > 0


def test_compare_of_two_models_lists_their_static_difference(onnxprobe, tmp_path):
    # the faulty demo differs from the demo in one initializer (the generator scales channel 5 of
    # the second Conv's weight): the diff names it even where no tensor shows it
    r, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=1", "--isolate", "none")
    a, b = (onnx.load(str(p)) for p in (DEMO, FAULTY))
    changed = [i.name for i in a.graph.initializer
               if not np.array_equal(onnx.numpy_helper.to_array(i),
                                     onnx.numpy_helper.to_array(next(j for j in b.graph.initializer if j.name == i.name)))]
    assert len(changed) == 1 and rep["model_diff"].startswith("initializers: 1 changed")
    assert "model diff: initializers: 1 changed" in r.stdout
    r, rep = compare(onnxprobe, tmp_path, DEMO, "--b-opt-level", "basic", "--dim", "batch=1")
    assert rep["model_diff"] == ""


def test_a_runtime_that_crashes_in_an_isolated_side_is_one_line_and_exit_3(onnxprobe, tmp_path):
    lib = os.environ.get("ONNXPROBE_CRASH_OP_LIB", "")
    model = os.path.join(SRC, "tests", "custom_op", "crash_model.onnx")
    x = np.zeros((1, 8), np.float32)
    np.save(tmp_path / "ok.npy", x)
    x[0, 0] = 5.5  # the test op dereferences null when its input starts with 13 = (5.5 + 1) * 2
    np.save(tmp_path / "bad.npy", x)
    base = [onnxprobe, "compare", model, "--b-opt-level", "basic", "--custom-op-lib", lib, "--isolate-runtime"]
    r = run(base + ["--input", f"x={tmp_path / 'ok.npy'}", "--json", tmp_path / "ok.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    plain = run([onnxprobe, "compare", model, "--b-opt-level", "basic", "--custom-op-lib", lib,
                 "--input", f"x={tmp_path / 'ok.npy'}", "--json", tmp_path / "plain.json"])
    assert plain.returncode == 0
    rows = lambda f: [(t["name"], t["max_abs"]) for t in json.loads((tmp_path / f).read_text())["tensors"]]
    assert rows("ok.json") == rows("plain.json")
    r = run(base + ["--input", f"x={tmp_path / 'bad.npy'}"])
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert "node 'crash' (CrashOp)" in lines[-1], lines
    if os.environ.get("ONNXPROBE_SANITIZE") != "1":  # ASan reports the segfault its own way
        assert len(lines) == 1 and "SIGSEGV" in lines[0]


def blocked_layout_models(tmp_path):
    """cnn.onnx, faulty.onnx, input.npy and onnxruntime's own values (blocked_layout_models.py);
    skips where this CPU's onnxruntime has no blocked layout."""
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "blocked_layout_models.py")
    r = subprocess.run([py, script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ref = np.load(tmp_path / "ref.npz")
    if int(ref["layout"]) == 0:
        pytest.skip("onnxruntime runs no blocked channel layout on this CPU")
    return ref


def test_optimizations_all_blocked_layout_tensors_are_compared(onnxprobe, tmp_path):
    # at "all" on a CPU with wide vector units, onnxruntime keeps the activations of its
    # convolutions in a blocked layout under its own names: they are compared, not "fused away"
    ref = blocked_layout_models(tmp_path)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "cnn.onnx", "--b-opt-level", "all",
                     "--input", f"x={tmp_path / 'input.npy'}", "--latency-runs", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    compared = {t["name"] for t in rep["tensors"]}
    # the fused Conv+Relu, Conv+Add+Relu, the pool, a Conv read twice, a Concat on blocked tensors:
    # none of them is a tensor of the graph onnxruntime runs (its own names there)
    blocked = {"r1", "r2", "p", "c3", "cat"}
    assert blocked.isdisjoint(set(ref["optimized_outputs"].tolist()))
    assert blocked | {"y"} <= compared
    # what the layout's kernels fused (each Conv's own output, the Add, the swish) is listed; so
    # is the HardSwish after conv4: marking it makes onnxruntime run that Conv without its fused
    # activation, so it stays uncaptured while the others are
    assert {"c1", "c2", "s2", "h4"} <= set(rep["fused_in_b"])
    assert compared.isdisjoint(rep["fused_in_b"])
    # B's values are onnxruntime's, and capturing them leaves B's output bit-identical to a plain
    # session at "all"
    r = run([onnxprobe, "run", tmp_path / "cnn.onnx", "--opt-level", "all", "--input",
             f"x={tmp_path / 'input.npy'}", "-o", tmp_path / "b.npz", "--check-observer"])
    assert "bit-identical" in r.stdout, r.stdout
    with np.load(tmp_path / "b.npz") as b:
        assert np.array_equal(b["y"], ref["plain_all"])
        for name in ("r1", "r2", "p", "c3", "cat"):
            np.testing.assert_allclose(b[name], ref["off/" + name], rtol=1e-4, atol=1e-4, err_msg=name)


def test_optimizations_all_blocked_tensors_confirmed_by_the_capturing_session(onnxprobe, tmp_path):
    # without the HardSwish every blocked tensor can be marked at once: the session that captures
    # them is the one whose optimized graph confirms it runs the model's kernels, held over both
    # samples; each value is what onnxruntime's Python API gives with the same tensors marked
    blocked_layout_models(tmp_path)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "plain.onnx", "--b-opt-level", "all",
                     "--inputs", tmp_path / "samples")
    assert r.returncode == 0, r.stdout + r.stderr
    with np.load(tmp_path / "plain_ref.npz") as ref:
        names = {"r1", "r2", "p", "c3", "cat", "y"}
        for k, sample in enumerate(rep["samples"]):
            assert sample["name"] == f"sample_{k}"
            rows = {t["name"]: t for t in sample["report"]["tensors"]}
            assert set(rows) == names and {"c1", "c2", "s2", "g", "m"} == set(sample["report"]["fused_in_b"])
            # marking them leaves the output bit-identical to a plain session at "all"
            assert np.array_equal(ref[f"all marked/{k}/y"], ref[f"all/{k}/y"])
            for name in names:
                expected = np.abs(ref[f"off/{k}/{name}"].astype(np.float64) -
                                  ref[f"all marked/{k}/{name}"].astype(np.float64)).max()
                assert rows[name]["max_abs"] == expected, (k, name)
        # `run` captures them the same way: each value bit for bit onnxruntime's, the output
        # bit-identical to a plain session's
        r = run([onnxprobe, "run", tmp_path / "plain.onnx", "--opt-level", "all", "--input",
                 f"x={tmp_path / 'samples' / 'sample_1.npz'}", "-o", tmp_path / "b.npz",
                 "--check-observer"])
        assert r.returncode == 0 and "bit-identical" in r.stdout, r.stdout + r.stderr
        with np.load(tmp_path / "b.npz") as b:
            assert set(b.files) >= names
            for name in names:
                assert np.array_equal(b[name], ref[f"all marked/1/{name}"]), name


def test_the_focus_sample_is_localized_as_a_comparison_of_it_alone(onnxprobe, tmp_path):
    # every sample passes: where the focus sample's differences are born is found from the
    # comparison already made of it, and must be what a comparison of that sample alone finds
    blocked_layout_models(tmp_path)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "plain.onnx", "--b-opt-level", "all",
                     "--inputs", tmp_path / "samples")
    assert r.returncode == 0, r.stdout + r.stderr
    localized = [s for s in rep["samples"] if s["report"]["localization"]["ran"]]
    assert len(localized) == 1, [s["name"] for s in rep["samples"]]
    focus = localized[0]
    alone_dir = tmp_path / "alone"
    alone_dir.mkdir()
    r, alone = compare(onnxprobe, alone_dir, tmp_path / "plain.onnx", "--b-opt-level", "all",
                       "--input", tmp_path / "samples" / f"{focus['name']}.npz")
    assert r.returncode == 0, r.stdout + r.stderr
    key = lambda d: (d["node"], d["tensor"], d["isolated_max_abs"], d["isolated_max_rel"], d["reason"])
    assert alone["drift_origins"], alone["localization"]
    assert [key(d) for d in focus["report"]["drift_origins"]] == [key(d) for d in alone["drift_origins"]]
    assert focus["report"]["localization"]["isolation_runs"] == alone["localization"]["isolation_runs"]


def test_localization_reads_side_a_from_the_comparisons_run(onnxprobe, tmp_path):
    # side B fuses away the inputs of the nodes it isolates (a Conv's output inside Conv+Relu):
    # a single comparison captures them on side A with the compared tensors, so localization
    # does not run side A again; under a memory budget nothing is held and side A runs again
    # with only them marked, which must give the same origins, value for value
    blocked_layout_models(tmp_path)
    sample = f"x={tmp_path / 'samples' / 'sample_0.npz'}"
    r, held = compare(onnxprobe, tmp_path, tmp_path / "plain.onnx", "--b-opt-level", "all",
                      "--input", sample)
    assert r.returncode == 0, r.stdout + r.stderr
    assert held["drift_origins"] and held["fused_in_b"], held["localization"]
    assert held["localization"]["side_a_runs"] == 0, held["localization"]
    r, again = compare(onnxprobe, tmp_path, tmp_path / "plain.onnx", "--b-opt-level", "all",
                       "--input", sample, "--max-memory", "64M")
    assert r.returncode == 0, r.stdout + r.stderr
    assert again["localization"]["side_a_runs"] >= 1, again["localization"]
    key = lambda d: (d["node"], d["tensor"], d["isolated_max_abs"], d["isolated_max_rel"], d["reason"])
    assert [key(d) for d in held["drift_origins"]] == [key(d) for d in again["drift_origins"]]


def test_optimizations_all_fault_inside_the_blocked_layout_is_named(onnxprobe, tmp_path):
    blocked_layout_models(tmp_path)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "cnn.onnx", tmp_path / "faulty.onnx",
                     "--b-opt-level", "all", "--input", f"x={tmp_path / 'input.npy'}",
                     "--latency-runs", "0")
    assert r.returncode == 1, r.stdout + r.stderr
    # the first divergence is the faulty Conv's fused output, not the pooled graph output
    assert rep["summary"]["first_divergence"] == "r2"
    named = [c["node"] for c in rep["localization"]["culprits"]]
    assert named and named[0] == "conv2", rep["localization"]


def _demo_pair_with_relu_named(tmp_path, name):
    """The demo model and its faulty copy as tmp_path/a.onnx and b.onnx, their first Relu's
    output renamed to `name`."""
    for src, dst in ((DEMO, tmp_path / "a.onnx"), (FAULTY, tmp_path / "b.onnx")):
        m = onnx.load(str(src))
        old = next(n for n in m.graph.node if n.op_type == "Relu").output[0]
        for n in m.graph.node:
            n.output[:] = [name if x == old else x for x in n.output]
            n.input[:] = [name if x == old else x for x in n.input]
        onnx.save(m, str(dst))


@needs_chromium
def test_a_tensor_named_like_markup_renders(onnxprobe, tmp_path):
    """A name holding "<!--<script>" must not end or swallow the page's embedded report."""
    name = "<!--<script>relu"
    _demo_pair_with_relu_named(tmp_path, name)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "a.onnx", tmp_path / "b.onnx", "--dim", "batch=2", "--html",
                     tmp_path / "r.html")
    assert r.returncode == 1, r.stdout
    assert name in [t["name"] for t in rep["tensors"]]
    dom, text = render_in_chromium(tmp_path / "r.html")
    assert len(re.findall(r"<tr data-i=\"\d+\"", dom)) == rep["summary"]["compared"]
    assert name in text[""]


def test_names_with_control_characters_print_escaped(onnxprobe, tmp_path):
    name = "evil\n\x1b[2Jname"
    _demo_pair_with_relu_named(tmp_path, name)
    r = run([onnxprobe, "compare", tmp_path / "a.onnx", tmp_path / "b.onnx", "--dim", "batch=2", "--json",
             tmp_path / "r.json"])
    assert r.returncode == 1, r.stdout
    assert "\x1b[2J" not in r.stdout and "evil\\n\\x1b[2Jname" in r.stdout
    assert not any(line.startswith("name") or line.startswith("\x1b[2Jname") for line in r.stdout.splitlines())
    rep = json.loads((tmp_path / "r.json").read_text())
    assert name in [t["name"] for t in rep["tensors"]]  # the JSON keeps the name as it is


@needs_chromium
def test_html_numbers_bars_and_channel_label_read_at_a_glance(onnxprobe, tmp_path):
    r, rep = compare(onnxprobe, tmp_path, DEMO, FAULTY, "--dim", "batch=2", "--html", tmp_path / "r.html")
    assert r.returncode == 1
    dom, text = render_in_chromium(tmp_path / "r.html")
    # tolerances are printed with a few digits, never as 0.000018164260486645716
    assert not re.search(r"\d\.\d{9,}|0\.0000\d{8,}", text[""]), re.findall(r"\S*\d\.\d{9,}\S*", text[""])[:3]
    # the fault of the demo's faulty model is output channel 5 of its second convolution
    # (scripts/demo.sh): the per-channel chart names it
    assert re.search(r'class="barmark"[^>]*>channel 5<', dom), re.findall(r'class="barmark"[^>]*>[^<]*<', dom)
    # "closest to tolerance" meters are on a log scale: a ratio ten times another is visibly longer
    rows = re.findall(r'<tr><td><a[^>]*>(?:(?!</a>).)*</a></td><td>([^<]+)</td><td><span class="meter[^"]*"><span style="width:([\d.]+)%"', dom)
    assert rows, dom[:2000]
    ratios = [(float(x), float(w)) for x, w in rows]
    assert ratios[0][0] > 100 and ratios[0][1] < 100  # 323x: long, but not saturated
    for r, w in ratios:  # 1e-3 -> empty, 1 (the limit) -> half, 1e3 -> full
        assert abs(w - min(100, max(1, (math.log10(r) + 3) / 6 * 100))) < 0.2, ratios


def test_isolation_progress_on_a_terminal_only(onnxprobe, tmp_path):
    """Isolation can outlast the comparison: on a terminal stderr says it is going on (a line
    rewritten in place, cleared at the end); piped, nothing is printed."""
    import pty
    demo = os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "tests", "data", "demo", "demo_cnn.onnx")
    out = tmp_path / "r.json"
    cmd = [str(onnxprobe), "compare", demo, "--b-opt-level", "all", "--isolate", "all",
           "--json", str(out)]
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert p.wait(timeout=300) in (0, 1)
    os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    shown = [int(n) for n in re.findall(r"isolating nodes: (\d+) runs", err)]
    runs = json.loads(out.read_text())["localization"]["isolation_runs"]
    assert shown and shown == sorted(shown) and shown[-1] <= runs, (shown, runs)
    assert err.endswith("\r\x1b[K") or "\r\x1b[K" in err.split("isolating nodes:")[-1]
    piped = run(cmd)
    assert "isolating" not in piped.stderr
