"""The installed Python package (`import onnxprobe`) against the command line (ONNXPROBE_BIN) and
against independent references (numpy, hashlib, the faults the tests inject). Run by
test_python_package.py with the interpreter of a fresh virtual environment; not collected on its
own (the package is not importable from the source tree)."""
import base64
import re
import hashlib
import io
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import models
import onnxprobe
from conftest import run
from onnxprobe import _runtime

SRC = os.environ["ONNXPROBE_SRC"]
BAD = os.path.join(SRC, "tests", "data", "bad")
CASES = json.load(open(os.path.join(BAD, "cases.json")))
DEPS = os.environ.get("ONNXPROBE_DEPS_DIR") or os.path.join(SRC, ".deps")


@pytest.fixture(scope="module")
def cli():
    return os.environ["ONNXPROBE_BIN"]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """Y = Sigmoid(Relu(X + W) @ B), X: float32[batch, 3]."""
    p = tmp_path_factory.mktemp("chain") / "chain.onnx"
    models.chain_model(p)
    return str(p)


@pytest.fixture(scope="module")
def faulty(tmp_path_factory, chain):
    """The chain with one element of W (the Add's constant) changed: the error is born at `add`."""
    m = onnx.load(chain)
    t = next(i for i in m.graph.initializer if i.name == "W")
    w = numpy_helper.to_array(t).copy()
    w[1] += np.float32(0.25)
    t.CopyFrom(numpy_helper.from_array(w, "W"))
    p = tmp_path_factory.mktemp("faulty") / "faulty.onnx"
    onnx.save(m, str(p))
    return str(p)


def cli_ok(cmd, codes=(0,)):
    r = run(cmd)
    assert r.returncode in codes, (r.returncode, r.stderr[-3000:])
    return r


def load_dump(folder):
    m = json.loads(open(os.path.join(folder, "manifest.json")).read())
    load = lambda t: np.load(os.path.join(folder, t["file"]))  # noqa: E731
    return ({t["name"]: load(t) for t in m["tensors"] if t["kind"] != "input"},
            {t["name"]: load(t) for t in m["tensors"] if t["kind"] == "input"})


def bitwise_equal(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def without_timing(d):
    if isinstance(d, dict):
        return {k: without_timing(v) for k, v in d.items() if k not in ("seconds", "resources")}
    if isinstance(d, list):
        return [without_timing(v) for v in d]
    return d


def test_the_package_is_the_installed_one():
    assert not onnxprobe.__file__.startswith(SRC), onnxprobe.__file__
    assert os.path.exists(onnxprobe.ort_library())


# ---- inspect ---------------------------------------------------------------------------------

def test_inspect_is_the_cli_document(cli, chain):
    mine = onnxprobe.inspect(chain, tensors=True)
    theirs = json.loads(cli_ok([cli, "inspect", chain, "--json", "--tensors"]).stdout)
    assert mine == theirs
    # and what the model was built with
    assert mine["sha256"] == hashlib.sha256(open(chain, "rb").read()).hexdigest()
    assert mine["md5"] == hashlib.md5(open(chain, "rb").read()).hexdigest()
    assert mine["op_counts"] == {"Add": 1, "Relu": 1, "MatMul": 1, "Sigmoid": 1}
    assert mine["inputs"] == [{"name": "X", "dtype": "float32", "shape": ["batch", 3]}]
    assert "tensors" not in onnxprobe.inspect(chain)


# ---- run -----------------------------------------------------------------------------------

def test_run_is_bitwise_the_cli_dump(cli, chain, tmp_path):
    mine = onnxprobe.run(chain, dims={"batch": 2}, seed=7)
    cli_ok([cli, "run", chain, "--dim", "batch=2", "--seed", "7", "-o", tmp_path / "d", "-q"])
    tensors, inputs = load_dump(tmp_path / "d")
    assert list(mine) == list(tensors) == ["added", "relu_out", "mm", "Y"]  # topological order
    for name in tensors:
        assert bitwise_equal(mine[name], tensors[name]), name
    assert list(mine.inputs) == ["X"] and bitwise_equal(mine.inputs["X"], inputs["X"])
    for name, ref in models.chain_reference(mine.inputs["X"]).items():  # numpy's own evaluation
        np.testing.assert_allclose(mine[name], ref, rtol=1e-5, atol=1e-6)
    # zero copy: the arrays view the captured buffers
    assert not mine["Y"].flags.owndata and mine["Y"].base is not None
    assert mine.skipped == []


def test_run_with_arrays_is_the_cli_run_with_files(cli, chain, tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    np.save(tmp_path / "X.npy", x)
    mine = onnxprobe.run(chain, inputs={"X": x}, tensors=["relu_out", "Y"])
    cli_ok([cli, "run", chain, "--input", f"X={tmp_path / 'X.npy'}", "--tensors", "relu_out,Y", "-o", tmp_path / "d",
            "-q"])
    tensors, _ = load_dump(tmp_path / "d")
    assert list(mine) == list(tensors) == ["relu_out", "Y"]
    for name in tensors:
        assert bitwise_equal(mine[name], tensors[name]), name
    assert np.shares_memory(mine.inputs["X"], x)  # the given array itself fed the run
    # a strided view is copied into one block first; the values are what numpy computes
    wide = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    out = onnxprobe.run(chain, inputs={"X": wide[:, ::2]}, op_types=["Relu", "Sigmoid"])
    assert list(out) == ["relu_out", "Y"]
    ref = models.chain_reference(wide[:, ::2])
    np.testing.assert_allclose(out["Y"], ref["Y"], rtol=1e-5, atol=1e-6)
    # a file path in the dict binds like NAME=FILE
    by_file = onnxprobe.run(chain, inputs={"X": tmp_path / "X.npy"}, regex="^Y$")
    assert list(by_file) == ["Y"] and bitwise_equal(by_file["Y"], mine["Y"])


# ---- compare ---------------------------------------------------------------------------------

def compare_both(cli, tmp_path, sides, kwargs, flags, codes=(0, 1)):
    """The Python report and the CLI's JSON for the same arguments, timing fields removed."""
    report = onnxprobe.compare(*sides, **kwargs)
    cli_ok([cli, "compare", *sides, *flags, "--json", tmp_path / "cli.json", "-q"], codes)
    theirs = json.loads((tmp_path / "cli.json").read_text())
    return report, without_timing(report.to_dict()), without_timing(theirs)


def test_every_report_format_is_the_clis_and_markdown_names_the_fault(cli, chain, faulty, tmp_path):
    """Each format of compare's --help "reports" section (the library's sinks), rendered by the
    Report and written by the command line for the same comparison: the same document. The
    Markdown summary names the injected fault (W feeds node `add`)."""
    report = onnxprobe.compare(chain, faulty, dims={"batch": 2})
    formats = onnxprobe.Report.formats()
    assert {"json", "html", "junit", "model-explorer", "markdown"} <= set(formats)
    flags = [a for f in formats for a in (f"--{f}", tmp_path / f"cli.{f}")]
    r = run([cli, "compare", chain, faulty, "--dim", "batch=2", *flags])
    assert r.returncode == 1, r.stderr
    for f in ("markdown", "model-explorer"):
        assert report.render(f) == (tmp_path / f"cli.{f}").read_text(), f
    assert without_timing(json.loads(report.render("json"))) == \
        without_timing(json.loads((tmp_path / "cli.json").read_text()))
    assert (tmp_path / "cli.html").read_text().startswith("<!DOCTYPE html>")
    assert "<testsuites" in (tmp_path / "cli.junit").read_text()
    md = report.render("markdown")
    assert "FAIL" in md.splitlines()[1] and "| `add` | Add | `added` |" in md, md
    ok = onnxprobe.compare(chain, chain, b_opt_level="all", dims={"batch": 2}).render("markdown")
    assert "PASS" in ok.splitlines()[1] and "Where the error is introduced" not in ok
    # written where the guard lets it: over our own earlier summary, never over a user's file
    assert report.write("markdown", tmp_path / "cli.markdown") == str(tmp_path / "cli.markdown")
    (tmp_path / "notes.md").write_text("my notes\n")
    with pytest.raises(onnxprobe.InvalidArgument, match="not an onnxprobe Markdown summary"):
        report.write("markdown", tmp_path / "notes.md")
    assert (tmp_path / "notes.md").read_text() == "my notes\n"
    with pytest.raises(onnxprobe.InvalidArgument, match="unknown report format 'pdf'"):
        report.render("pdf")


def test_compare_is_the_cli_json_optimizations(cli, chain, tmp_path):
    report, mine, theirs = compare_both(cli, tmp_path, [chain], {"b_opt_level": "all", "dims": {"batch": 2}},
                                        ["--b-opt-level", "all", "--dim", "batch=2"], codes=(0,))
    assert mine == theirs
    assert report.passed and mine["verdict"] == "PASS" and mine["side_b"]["optimization"] == "all"
    assert mine["summary"]["compared"] == 4


def test_compare_is_the_cli_json_two_runtimes_p99(cli, chain, tmp_path):
    report, mine, theirs = compare_both(
        cli, tmp_path, [chain], {"b_ort_version": "1.20.1", "dims": {"batch": 3}, "judge": "p99", "atol": 1e-4,
                                 "seed": 5},
        ["--b-ort-version", "1.20.1", "--dim", "batch=3", "--judge", "p99", "--atol", "1e-4", "--seed", "5"])
    assert mine == theirs
    assert mine["side_b"]["runtime_version"] == "1.20.1" and mine["tolerance"]["judge"] == "p99"


def test_exact_reference_is_the_cli_json(cli, chain, faulty, tmp_path):
    report, mine, theirs = compare_both(cli, tmp_path, [chain, faulty],
                                        {"dims": {"batch": 2}, "reference": "exact"},
                                        ["--dim", "batch=2", "--reference", "exact"], codes=(1,))
    assert mine == theirs
    assert mine["exact_reference"]["rows"] == mine["summary"]["compared"]
    add = next(t for t in mine["tensors"] if t["node"] == "add")
    assert add["closer"] == "a" and add["exact_error_b"] > add["exact_error_a"]  # W[1] += 0.25 in B
    with pytest.raises(onnxprobe.InvalidArgument, match="--reference: expected exact, got 'float'"):
        onnxprobe.compare(chain, faulty, reference="float")


def test_a_side_on_another_cpu_is_the_cli_json(cli, chain, tmp_path, monkeypatch):
    # the platform workers of the build the command line comes from (a wheel carries none)
    monkeypatch.setenv("ONNXPROBE_WORKER_DIR", os.path.join(os.path.dirname(cli), "platform"))
    report, mine, theirs = compare_both(
        cli, tmp_path, [chain], {"b_platform": "aarch64", "b_ort_version": "1.32.0", "dims": {"batch": 2}},
        ["--b-platform", "aarch64", "--b-ort-version", "1.32.0", "--dim", "batch=2"])
    assert mine == theirs
    assert mine["side_b"]["platform"] == "aarch64 (qemu-aarch64 -cpu max)" and mine["side_a"]["platform"] == ""
    with pytest.raises(onnxprobe.InvalidArgument, match="unknown platform 'z80'"):
        onnxprobe.compare(chain, b_platform="z80")


def test_float64_run_is_the_cli_dump(cli, chain, tmp_path):
    res = onnxprobe.run(chain, dims={"batch": 2}, precision="float64", output=tmp_path / "py.dump")
    cli_ok([cli, "run", chain, "--dim", "batch=2", "--precision", "float64", "-o", tmp_path / "cli.dump"])
    (mine, _), (theirs, _) = load_dump(tmp_path / "py.dump"), load_dump(tmp_path / "cli.dump")
    assert res.passed and set(mine) == set(theirs)
    assert all(bitwise_equal(mine[k], theirs[k]) for k in mine)
    assert any(v.dtype == np.float64 for v in mine.values())
    with pytest.raises(onnxprobe.InvalidArgument, match="--precision float64 writes a dump: give -o"):
        onnxprobe.run(chain, precision="float64")


def test_compare_is_the_cli_json_on_a_fault_and_names_it(cli, chain, faulty, tmp_path):
    report, mine, theirs = compare_both(cli, tmp_path, [chain, faulty],
                                        {"dims": {"batch": 2}, "repro": tmp_path / "py_repro"},
                                        ["--dim", "batch=2", "--repro", tmp_path / "cli_repro"], codes=(1,))
    assert mine["localization"].pop("repro_dir") == str(tmp_path / "py_repro")
    assert theirs["localization"].pop("repro_dir") == str(tmp_path / "cli_repro")
    assert mine == theirs
    # the injected fault: W feeds `add`
    assert not report.passed and report.verdict == "FAIL"
    assert report.first_divergence == "added" and report.frontier == ["added"]
    assert report.culprits[0]["node"] == "add" and report.culprits[0]["introduced"]
    assert report.repro == str(tmp_path / "py_repro")
    assert sorted(os.listdir(tmp_path / "py_repro")) == sorted(os.listdir(tmp_path / "cli_repro"))
    assert "FAIL" in repr(report)
    # the report's files: the JSON document and the HTML page embedding it
    assert json.load(open(report.json(tmp_path / "r.json"))) == report.to_dict()
    page = open(report.html(tmp_path / "r.html")).read()
    assert page == report.html() and "onnxprobe-compare" in page
    assert report._repr_html_().startswith("<iframe srcdoc=") and "&lt;" in report._repr_html_()
    # every measurement of every row on request, as --report-detail full writes it
    full = report.to_dict(detail="full")
    cli_ok([cli, "compare", chain, faulty, "--dim", "batch=2", "--json", tmp_path / "full.json", "-q",
            "--report-detail", "full", "--repro", tmp_path / "cli_repro2"], (1,))
    theirs_full = json.loads((tmp_path / "full.json").read_text())
    theirs_full["localization"]["repro_dir"] = full["localization"]["repro_dir"]
    assert without_timing(full) == without_timing(theirs_full)
    assert {t["detail"] for t in full["tensors"]} == {"full"} and full["report_detail"] == "full"
    assert json.load(open(report.json(tmp_path / "f.json", detail="full"))) == full
    assert '"report_detail":"full"' in report.html(detail="full")
    with pytest.raises(onnxprobe.InvalidArgument, match="bad detail 'all' \\(compact or full\\)"):
        report.to_dict(detail="all")
    # why: the weight the faulty copy changed (the diagnosis is in both documents, equal)
    causes = [(f["cause"], f["node"]) for f in mine["diagnosis"]["findings"]]
    assert causes == [("weight-changed", "add")], causes


def test_diagnosis_and_session_config_keywords_are_the_cli_flags(cli, chain, faulty, tmp_path):
    report, mine, theirs = compare_both(cli, tmp_path, [chain, faulty], {"dims": {"batch": 2}, "diagnose": False},
                                        ["--dim", "batch=2", "--no-diagnose"], codes=(1,))
    assert mine == theirs and "diagnosis" not in mine
    report, mine, theirs = compare_both(
        cli, tmp_path, [chain], {"dims": {"batch": 2}, "b_opt_level": "all", "diagnose": "all",
                                 "b_session_config": {"session.intra_op.allow_spinning": "0"}},
        ["--dim", "batch=2", "--b-opt-level", "all", "--diagnose", "--b-session-config",
         "session.intra_op.allow_spinning=0"], codes=(0,))
    assert mine == theirs
    with pytest.raises(onnxprobe.InvalidArgument, match="diagnose"):
        onnxprobe.compare(chain, faulty, diagnose="some")


def test_compare_is_the_cli_json_with_bisection_and_arrays(cli, chain, faulty, tmp_path):
    x = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    report, mine, theirs = compare_both(cli, tmp_path, [chain, faulty],
                                        {"inputs": {"X": x}, "bisect": True, "isolate": "failing", "tol": {"^Y$": (1e-2, 1e-2)}},
                                        ["--input", f"X={tmp_path / 'x.npy'}", "--bisect", "--isolate", "failing",
                                         "--tol", "^Y$=1e-2,1e-2"], codes=(1,))
    assert mine == theirs
    assert mine["input_origin"] == "files" and mine["summary"]["bisected"]
    assert mine["inputs"][0]["shape"] == [5, 3]


def test_compare_in_child_processes_is_the_cli_json(cli, chain, faulty, tmp_path):
    # forked sides need a process that has not loaded ONNX Runtime yet (the library refuses
    # otherwise), so a fresh interpreter; the parent holds arrays it got from Python
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code = ("import numpy as np, onnxprobe\n"
            f"x = np.load({str(tmp_path / 'x.npy')!r})\n"
            f"r = onnxprobe.compare({chain!r}, {faulty!r}, inputs={{'X': x}}, isolate_runtime=True)\n"
            f"r.json({str(tmp_path / 'py.json')!r})\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    cli_ok([cli, "compare", chain, faulty, "--input", f"X={tmp_path / 'x.npy'}", "--isolate-runtime", "--json",
            tmp_path / "cli.json", "-q"], (1,))
    mine = without_timing(json.loads((tmp_path / "py.json").read_text()))
    assert mine == without_timing(json.loads((tmp_path / "cli.json").read_text()))
    assert mine["localization"]["culprits"][0]["node"] == "add"
    # in a process that already loaded the runtime: the library's refusal, as an exception
    onnxprobe.run(chain, dims={"batch": 1}, tensors=["Y"])
    with pytest.raises(onnxprobe.Unsupported, match="child process"):
        onnxprobe.compare(chain, faulty, dims={"batch": 1}, isolate_runtime=True)


def test_compare_with_a_dump_side_is_the_cli_json(cli, chain, faulty, tmp_path):
    cli_ok([cli, "run", chain, "--dim", "batch=2", "-o", tmp_path / "ref.dump", "-q"])
    dump = str(tmp_path / "ref.dump")
    report, mine, theirs = compare_both(cli, tmp_path, [dump, faulty], {}, [], codes=(1,))
    assert mine == theirs
    assert mine["side_a"]["kind"] == "dump" and mine["input_origin"] == "recorded"
    assert report.culprits[0]["node"] == "add"


# ---- errors ----------------------------------------------------------------------------------

def python_call(c, chain):
    """The Python call for one bad-input case's command line."""
    args = [a.replace("{file}", os.path.join(BAD, c["file"])).replace("{chain}", chain) for a in c["cmd"]]
    if args[0] == "inspect":
        return lambda: onnxprobe.inspect(args[1])
    kw, i = {}, 2
    while i < len(args):
        flag, value = args[i], args[i + 1]
        if flag == "--dim":
            k, v = value.split("=")
            kw.setdefault("dims", {})[k] = int(v)
        elif flag == "--input":
            name, eq, path = value.partition("=")
            kw["inputs"] = {name: path} if eq else value
        i += 2
    return lambda: onnxprobe.run(args[1], **kw)


SAMPLED = [c for i, c in enumerate(CASES) if i % 3 == 0 or c["code"] == 3]


@pytest.fixture(scope="module")
def fixed_chain(tmp_path_factory):
    p = tmp_path_factory.mktemp("fixed") / "chain.onnx"
    models.chain_model(p, symbolic=False)
    return str(p)


@pytest.mark.parametrize("c", SAMPLED, ids=[c["file"] for c in SAMPLED])
def test_bad_input_raises_the_cli_message(cli, fixed_chain, tmp_path, c):
    with pytest.raises(onnxprobe.Error) as e:
        python_call(c, fixed_chain)()
    cmd = [a.replace("{file}", os.path.join(BAD, c["file"])).replace("{chain}", fixed_chain)
           .replace("{out}", str(tmp_path / "out")) for a in c["cmd"]]
    r = run([cli] + cmd)
    assert r.returncode == c["code"] == e.value.exit_code, (r.returncode, type(e.value), r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    message = str(e.value)
    assert "\n" not in message and line.startswith("onnxprobe: error: ") and line.endswith(message), (line, message)
    for n in c["needles"]:
        assert n in message
    assert isinstance(e.value, onnxprobe.BackendError if c["code"] == 3 else onnxprobe.Error)


def test_sampled_cases_cover_both_exit_codes():
    assert {c["code"] for c in SAMPLED} == {2, 3} and len(SAMPLED) >= 15


def test_array_input_errors_are_the_library_messages(cli, fixed_chain):
    with pytest.raises(onnxprobe.InvalidArgument) as e:
        onnxprobe.run(fixed_chain, inputs={"X": np.zeros((2, 3), np.float64)})
    r = run([cli, "run", fixed_chain, "--input", f"X={os.path.join(BAD, 'X_wrong_dtype.npy')}", "-o", os.path.join(os.path.dirname(fixed_chain), "never_written.dump")])
    assert r.stderr.strip().endswith(str(e.value)) and isinstance(e.value, ValueError)
    with pytest.raises(onnxprobe.InvalidArgument, match=r"input 'X': expected shape float32\[2, 3\], got \[2, 5\]"):
        onnxprobe.run(fixed_chain, inputs={"X": np.zeros((2, 5), np.float32)})
    with pytest.raises(onnxprobe.InvalidArgument, match="numpy dtype complex64 is not supported"):
        onnxprobe.run(fixed_chain, inputs={"X": np.zeros((2, 3), np.complex64)})
    with pytest.raises(onnxprobe.InvalidArgument, match=r"input 'Z' \(from an array given in memory\) is not an input"):
        onnxprobe.run(fixed_chain, inputs={"X": np.zeros((2, 3), np.float32), "Z": np.zeros(1, np.float32)})
    npz = os.path.join(os.path.dirname(fixed_chain), "xs.npz")
    np.savez(npz, X=np.zeros((2, 3), np.float32))
    with pytest.raises(onnxprobe.InvalidArgument,
                       match=r"input 'X' is given twice \(by .*xs.npz and by an array given in memory\)"):
        onnxprobe.run(fixed_chain, inputs={"X": np.ones((2, 3), np.float32), "all": npz})
    with pytest.raises(onnxprobe.NotFound):
        onnxprobe.inspect("/nonexistent/model.onnx")


def test_argument_errors(chain, tmp_path):
    with pytest.raises(onnxprobe.InvalidArgument, match="tell the sides apart"):
        onnxprobe.compare(chain)
    with pytest.raises(onnxprobe.InvalidArgument, match="'fast'"):
        onnxprobe.compare(chain, b_opt_level="fast", dims={"batch": 1})
    with pytest.raises(onnxprobe.InvalidArgument, match="median"):
        onnxprobe.compare(chain, b_opt_level="all", judge="median", dims={"batch": 1})
    with pytest.raises(onnxprobe.InvalidArgument, match="--isolate: 'some' is not one of"):
        onnxprobe.compare(chain, b_opt_level="all", isolate="some", dims={"batch": 1})
    calls = []  # a stage that cannot run is refused before the comparison starts
    with pytest.raises(onnxprobe.InvalidArgument, match="explaining optimizations needs one model"):
        onnxprobe.compare(chain, a_opt_level="basic", b_opt_level="all", explain_optimizations=True,
                          dims={"batch": 1}, progress=lambda *a: calls.append(a))
    assert calls == []
    with pytest.raises(onnxprobe.InvalidArgument, match=re.escape("bad --atol '-1' (expected a number >= 0)")):
        onnxprobe.compare(chain, b_opt_level="all", atol=-1, dims={"batch": 1})
    assert onnxprobe.run(chain, tensors=["Y"])["Y"].shape[0] == 1  # an unset symbolic dimension is 1
    with pytest.raises(onnxprobe.InvalidArgument, match="not both"):
        onnxprobe.run(chain, ort_lib="/x.so", ort_version="1.20.1", dims={"batch": 1})
    with pytest.raises(onnxprobe.NotFound, match="ONNX Runtime 0.0.1 is not installed"):
        onnxprobe.run(chain, ort_version="0.0.1", dims={"batch": 1})
    assert onnxprobe.run(chain, dims={"batch": 1}, tensors=["Y"])["Y"].shape == (1, 4)  # the model is fine
    dump = tmp_path / "d.npz"  # a dump side takes no session settings
    cli_ok([os.environ["ONNXPROBE_BIN"], "run", chain, "--dim", "batch=1", "-o", dump, "-q"])
    with pytest.raises(onnxprobe.InvalidArgument, match="is a dump"):
        onnxprobe.compare(str(dump), chain, a_opt_level="all")


def test_an_unavailable_provider_is_the_cli_error(cli, chain, tmp_path):
    with pytest.raises(onnxprobe.Error) as e:
        onnxprobe.run(chain, provider="NoSuchProvider", dims={"batch": 1})
    r = run([cli, "run", chain, "--provider", "NoSuchProvider", "--dim", "batch=1", "-o", tmp_path / "o"])
    assert r.returncode == e.value.exit_code and r.stderr.strip().endswith(str(e.value))
    assert "'NoSuchProvider'" in str(e.value) and "CPUExecutionProvider" in str(e.value)


# ---- the GIL and the runtime library -----------------------------------------------------------

def deep_model(path, n=24, size=384):
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "X"
    for i in range(n):
        w = (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"W{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"W{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"t{i}"], name=f"tanh{i}"))
        prev = f"t{i}"
    g = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [size, size])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [size, size])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


def test_the_gil_is_released_while_comparing(tmp_path):
    deep_model(tmp_path / "deep.onnx")
    span = {}

    def work():
        span["start"] = time.perf_counter()
        span["report"] = onnxprobe.compare(str(tmp_path / "deep.onnx"), b_opt_level="all", isolate="none")
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    start, end = span["start"], span["end"]
    middle = [x for x in ticks if start + 0.2 * (end - start) < x < end - 0.2 * (end - start)]
    # with the GIL held for the whole call this thread could not run at all in the middle of it
    assert len(middle) > 100, (len(middle), end - start)
    assert span["report"].to_dict()["summary"]["compared"] == 48


def test_runtime_library_order(tmp_path, monkeypatch):
    existing = onnxprobe._onnxprobe.default_ort_library()
    assert os.path.exists(existing)
    pypi = lambda: "/site/onnxruntime/capi/libonnxruntime.so.1.23.2"  # noqa: E731
    assert _runtime.resolve({"ONNXPROBE_ORT_LIBRARY": "/x.so"}, "/nonexistent", pypi) == ""  # 1: the core reads it
    assert _runtime.resolve({}, existing, pypi) == ""  # 2: the build's library
    assert _runtime.resolve({}, "/nonexistent", pypi) == pypi()  # 3: the onnxruntime package
    assert _runtime.resolve({}, "/nonexistent", lambda: None) == ""
    # the onnxruntime package is found without importing it, newest library first
    capi = tmp_path / "onnxruntime" / "capi"
    capi.mkdir(parents=True)
    (tmp_path / "onnxruntime" / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    for v in ("1.9.0", "1.20.1"):
        (capi / f"libonnxruntime.so.{v}").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _runtime.pypi_onnxruntime_library() == str(capi / "libonnxruntime.so.1.20.1")


def test_the_environment_variable_selects_the_runtime(chain, tmp_path):
    lib = os.path.join(DEPS, "ort", "1.20.1", "lib", "libonnxruntime.so.1.20.1")
    code = ("import onnxprobe; r = onnxprobe.compare(%r, b_opt_level='all', dims={'batch': 1}); "
            "print(r.to_dict()['side_a']['runtime_version'])" % chain)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, ONNXPROBE_ORT_LIBRARY=lib), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1.20.1"


# ---- PyTorch ---------------------------------------------------------------------------------

def perturb(path, out, node_name, scale=1.05):
    m = onnx.load(str(path))
    n = next(n for n in m.graph.node if n.name == node_name)
    t = next(i for i in m.graph.initializer if i.name == n.input[1])
    w = numpy_helper.to_array(t).copy()
    w[1] *= np.float32(scale)
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(m, str(out))


def test_torch_export_capture_compare_round_trip(cli, tmp_path):
    import torch  # Debian's, through --system-site-packages: a requirement, not a skip
    import onnxprobe.torch as opt
    import onnxprobe_torch
    import torch_models
    assert opt.export is onnxprobe_torch.export and opt.capture is onnxprobe_torch.capture
    model = torch_models.net()
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    path, cap = str(tmp_path / "m.onnx"), str(tmp_path / "m.cap")
    opt.export(model, x, path, ["input"], ["output"])
    opt.capture(model, x, cap, ["input"])
    good, mine, theirs = compare_both(cli, tmp_path, [cap, path], {}, [], codes=(0,))
    assert good.passed and mine == theirs and mine["side_a"]["kind"] == "torch-capture"
    fixed, mine, theirs = compare_both(cli, tmp_path, [cap, path], {"fixed_tolerance": True},
                                       ["--fixed-tolerance"], codes=(0,))
    assert mine == theirs and all(t["atol"] == 1e-5 for t in mine["tensors"] if t["state"] == "compared")
    perturb(path, tmp_path / "bad.onnx", "/layer1/layer1.1/conv2/Conv")
    bad = onnxprobe.compare(cap, str(tmp_path / "bad.onnx"))
    assert not bad.passed and bad.culprits[0]["node"] == "/layer1/layer1.1/conv2/Conv"


def test_torch_verify_round_trip(cli, tmp_path, monkeypatch):
    import torch
    import onnxprobe.torch as opt
    import torch_models
    monkeypatch.setenv("ONNXPROBE_BIN", cli)
    model = torch_models.net()
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    rep = opt.verify(model, x, workdir=str(tmp_path / "w"))
    assert rep["verdict"] == "PASS" and rep["side_a"]["kind"] == "torch-capture"
    # verify's report (the command line's) is the in-process comparison of the same files
    mine = onnxprobe.compare(str(tmp_path / "w" / "capture"), str(tmp_path / "w" / "model.onnx"))
    assert without_timing(mine.to_dict()) == without_timing(rep)
    perturb(tmp_path / "w" / "model.onnx", tmp_path / "bad.onnx", "/layer1/layer1.1/conv2/Conv")
    bad = opt.verify(model, x, onnx_path=str(tmp_path / "bad.onnx"), workdir=str(tmp_path / "b"))
    assert bad["verdict"] == "FAIL"
    assert bad["localization"]["culprits"][0]["node"] == "/layer1/layer1.1/conv2/Conv"


def test_torch_verify_runs_in_process_without_a_binary(cli, tmp_path, monkeypatch, capsys):
    """The installed package compares in this process: no ONNXPROBE_BIN, no onnxprobe on PATH."""
    import torch
    import onnxprobe.torch as opt
    import torch_models
    monkeypatch.delenv("ONNXPROBE_BIN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    model = torch_models.net()
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    rep = opt.verify(model, x, workdir=str(tmp_path / "w"), json_path=str(tmp_path / "v.json"), echo=True)
    assert rep["verdict"] == "PASS" and rep["side_a"]["kind"] == "torch-capture"
    assert json.loads((tmp_path / "v.json").read_text()) == rep
    assert "verdict: PASS" in capsys.readouterr().out
    # the same files compared by the command line give the same document
    r = cli_ok([cli, "compare", tmp_path / "w" / "capture", tmp_path / "w" / "model.onnx", "--json",
                tmp_path / "c.json"])
    assert without_timing(json.loads((tmp_path / "c.json").read_text())) == without_timing(rep), r.stdout
    with pytest.raises(opt.VerifyError, match="compare_options"):
        opt.verify(model, x, onnxprobe=cli, compare_options={"atol": 1e-3})


def polygraphy_results(path, arrays, runner="onnxrt-runner-N0"):
    """Polygraphy's RunResults layout (polygraphy/json/serde.py): each array the base64 of its
    .npy file, wrapped in a LazyArray as Polygraphy 0.49+ writes it."""
    def encoded(a):
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        return {"values": {"array": base64.b64encode(buf.getvalue()).decode(),
                           "polygraphy_class": "ndarray"}, "polygraphy_class": "LazyArray"}
    doc = {"lst": [[runner, [{"outputs": {k: encoded(v) for k, v in arrays.items()},
                              "runtime": 0.001, "runner_name": runner,
                              "polygraphy_class": "IterationResult"}]]],
           "polygraphy_class": "RunResults"}
    with open(path, "w") as f:
        json.dump(doc, f)


def test_import_polygraphy_is_the_cli_import(cli, chain, tmp_path):
    rng = np.random.default_rng(3)
    arrays = {"h": rng.standard_normal((2, 3)).astype(np.float32),
              "y": rng.standard_normal((2, 2)).astype(np.float32)}
    polygraphy_results(tmp_path / "out.json", arrays)
    got = onnxprobe.import_polygraphy(tmp_path / "out.json", tmp_path / "py.dump", model=chain)
    assert got["runner"] == "onnxrt-runner-N0" and got["tensors"] == 2 and got["iterations"] == 1
    cli_ok([cli, "import-polygraphy", tmp_path / "out.json", "--model", chain, "-o", tmp_path / "cli.dump"])
    py_t, _ = load_dump(tmp_path / "py.dump")
    cli_t, _ = load_dump(tmp_path / "cli.dump")
    assert py_t.keys() == cli_t.keys() == arrays.keys()
    for k in arrays:
        assert bitwise_equal(py_t[k], arrays[k]) and bitwise_equal(cli_t[k], arrays[k]), k
    with pytest.raises(onnxprobe.InvalidArgument, match="no runner 'x'"):
        onnxprobe.import_polygraphy(tmp_path / "out.json", tmp_path / "x.dump", runner="x")


def test_generate_is_the_cli_json_and_names_the_fault(cli, tmp_path):
    import decoder_models as dm

    model, faulty = tmp_path / "llama.onnx", tmp_path / "faulty.onnx"
    dm.export(dm.build("llama"), str(model))
    node = "/layers.1/self_attn/k_proj/MatMul"
    m = onnx.load(str(model))
    n = next(x for x in m.graph.node if x.name == node)
    w = next(i for i in m.graph.initializer if i.name in n.input)
    a = numpy_helper.to_array(w).copy()
    a[:, 0] *= 1.5  # the test's own fault
    w.CopyFrom(numpy_helper.from_array(a, w.name))
    onnx.save(m, str(faulty))
    js = tmp_path / "cli.json"
    cli_ok([cli, "generate", model, faulty, "--steps", 5, "--json", js], codes=(1,))
    report = onnxprobe.generate(str(model), faulty, steps=5)
    assert not report.passed
    assert without_timing(report.to_dict()) == without_timing(json.load(open(js)))
    assert report.born["node"] == node and report.born["step"] == 1 and report.born["layer"] == 1
    report.html(tmp_path / "g.html")
    assert "/layers.1/self_attn/k_proj/MatMul" in (tmp_path / "g.html").read_text()
    assert "error born at step 1" in str(report)
    seen = []
    same = onnxprobe.generate(str(model), b_opt_level="all", steps=5, prompt=np.array([[3, 1, 4]]),
                              on_step=lambda phase, step: seen.append((phase, step)))
    assert same.passed and same.to_dict()["prompt"]["tokens"] == [3, 1, 4]
    assert seen == [(p, s) for s in range(1, 6) for p in ("A", "B teacher-forced")]

    def stop(phase, step):
        raise KeyboardInterrupt("stop here")

    with pytest.raises(KeyboardInterrupt, match="stop here"):
        onnxprobe.generate(str(model), b_opt_level="all", steps=5, on_step=stop)
    with pytest.raises(onnxprobe.InvalidArgument, match="no --a-/--b-"):
        onnxprobe.generate(str(model))
    with pytest.raises(onnxprobe.InvalidArgument) as e:  # the command line's message
        onnxprobe.generate(str(model), b_optlevel="all")
    assert str(e.value) == "generate: unknown option '--b-optlevel' (see onnxprobe generate --help)"


@pytest.mark.parametrize("kwargs,flags", [
    ({"dims": {"batch": "x"}}, ["--dim", "batch=x"]),
    ({"dims": {"batch": 2 ** 70}}, ["--dim", f"batch={2 ** 70}"]),
    ({"dims": {"batch": -1}}, ["--dim", "batch=-1"]),
    ({"dims": {"batch": 0}}, ["--dim", "batch=0"]),
    ({"max_memory": -1, "dims": {"batch": 1}}, ["--max-memory", "-1", "--dim", "batch=1"]),
    ({"max_memory": 0, "dims": {"batch": 1}}, ["--max-memory", "0", "--dim", "batch=1"]),
    ({"max_memory": "12Q", "dims": {"batch": 1}}, ["--max-memory", "12Q", "--dim", "batch=1"]),
])
def test_bad_run_keywords_are_the_cli_messages(cli, chain, tmp_path, kwargs, flags):
    r = run([cli, "run", chain, *flags, "-o", tmp_path / "d"])
    assert r.returncode == 2, r.stderr
    message = r.stderr.strip().splitlines()[-1].replace("onnxprobe: error: ", "")
    with pytest.raises(onnxprobe.InvalidArgument) as e:
        onnxprobe.run(chain, **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("kwargs,flags", [
    ({"atol": "abc"}, ["--atol", "abc"]),
    ({"rtol": -1}, ["--rtol", "-1"]),
])
def test_bad_compare_keywords_are_the_cli_messages(cli, chain, kwargs, flags):
    r = run([cli, "compare", chain, "--b-opt-level", "all", "--dim", "batch=1", *flags])
    assert r.returncode == 2, r.stderr
    message = r.stderr.strip().splitlines()[-1].replace("onnxprobe: error: ", "")
    with pytest.raises(onnxprobe.InvalidArgument) as e:
        onnxprobe.compare(chain, b_opt_level="all", dims={"batch": 1}, **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("call,message", [
    (lambda chain: onnxprobe.run(chain, dims=[1]), "bad --dim '1' (expected KEY=VALUE)"),
    (lambda chain: onnxprobe.compare(123, b_opt_level="all"), "not int 123"),
    (lambda chain: onnxprobe.run(123), "model: expected a path"),
    (lambda chain: onnxprobe.inspect(None), "model: expected a path"),
])
def test_wrong_types_are_invalid_arguments(chain, call, message):
    with pytest.raises(onnxprobe.InvalidArgument, match=re.escape(message)):
        call(chain)


def test_one_calls_memory_budget_does_not_cap_the_next(chain):
    """compare(max_memory=...) used to set a process-wide allocation limit that every later call
    kept: a run without a budget must allocate what it needs afterwards."""
    assert onnxprobe.compare(chain, b_opt_level="all", dims={"batch": 2}, max_memory="4K").passed
    # 48 KiB of input, over the 4 KiB the comparison was given
    assert onnxprobe.run(chain, dims={"batch": 4096}, tensors=["Y"])["Y"].shape == (4096, 4)
