"""onnxprobe baseline save / check: a precision gate for CI.

Stored tensors, verdicts and aggregates are checked against numpy on the stored inputs; the JUnit
file is read with xml.etree (structure of the JUnit schema CI readers accept) and with
junitparser (an independent JUnit reader, in the bootstrap's Python test environment).
"""
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import models
from conftest import run

ATOL, RTOL = 1e-5, 1e-3


def chain(path, b_delta=None):
    """The chain model (Add, Relu, MatMul 'matmul' with weight B, Sigmoid); B[1, 2] += b_delta."""
    models.chain_model(path, symbolic=False)
    if b_delta is None:
        return models.B
    m = onnx.load(str(path))
    b = models.B.copy()
    b[1, 2] += b_delta
    for i, init in enumerate(m.graph.initializer):
        if init.name == "B":
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(b, "B"))
    onnx.save(m, str(path))
    return b


def reference(x, b):
    relu = np.maximum(x.astype(np.float64) + models.W, 0)
    mm = relu @ b.astype(np.float64)
    return {"mm": mm, "Y": 1 / (1 + np.exp(-mm))}


def fails(a, b):
    """The documented elementwise rule: |b-a| > atol*max(1, max|a|) + rtol*|a|."""
    atol_used = ATOL * max(1.0, float(np.max(np.abs(a))))
    return bool(np.any(np.abs(b - a) > atol_used + RTOL * np.abs(a)))


def stored(base, sample_dump, name):
    folder = os.path.join(base, sample_dump)
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    for t in manifest["tensors"]:
        if t["name"] == name:
            return np.load(os.path.join(folder, t["file"]))
    raise KeyError(name)


def samples(base):
    return json.load(open(os.path.join(base, "baseline.json")))["samples"]


def save(onnxprobe, model, base, *extra):
    r = run([onnxprobe, "baseline", "save", model, "-o", base, *extra])
    assert r.returncode == 0, r.stderr
    return r


def check(onnxprobe, model, base, tmp_path, *extra, rc=0):
    junit, report = tmp_path / "junit.xml", tmp_path / "check.json"
    for p in (junit, report):
        if p.exists():
            p.unlink()
    r = run([onnxprobe, "baseline", "check", model, base, "--junit", junit, "--json", report,
             *extra])
    assert r.returncode == rc, r.stdout + r.stderr
    return r, ET.parse(junit).getroot(), json.load(open(report)), junit


def validate_junit(root):
    """The structure of the JUnit schema (Jenkins/Ant junit XSD): testsuites > testsuite >
    testcase, required attributes, counts that agree with the cases."""
    assert root.tag == "testsuites"
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        assert suite.tag == "testsuite"
        for attr in ("name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id",
                     "package"):
            assert attr in suite.attrib, attr
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
        float(suite.get("time"))
        cases = suite.findall("testcase")
        counted = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
        for case in cases:
            assert case.get("classname") and case.get("name")
            assert float(case.get("time")) >= 0
            for kind, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                for el in case.findall(kind):
                    counted[key] += 1
                    assert "message" in el.attrib
                    if kind != "skipped":
                        assert el.get("type")
        for key, n in counted.items():
            assert int(suite.get(key)) == n, key
            totals[key] += n
        children = [c.tag for c in suite]
        assert set(children) <= {"properties", "testcase", "system-out", "system-err"}
        for prop in suite.iter("property"):
            assert set(prop.attrib) == {"name", "value"}
        case_time = sum(float(c.get("time")) for c in cases)
        assert case_time <= float(suite.get("time")) + 1e-6  # a suite's time covers its cases
    for key, n in totals.items():
        assert int(root.get(key)) == n, key


def read_with_junitparser(path):
    """(name, classname, outcome, message) per case, from junitparser in the test environment."""
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    code = (
        "import json, sys, junitparser\n"
        "x = junitparser.JUnitXml.fromfile(sys.argv[1])\n"
        "out = []\n"
        "for s in x:\n"
        "  for c in s:\n"
        "    r = c.result\n"
        "    out.append([c.name, c.classname, r[0]._tag if r else 'passed',"
        " r[0].message if r else None, r[0].type if r else None])\n"
        "print(json.dumps(out))\n")
    r = subprocess.run([py, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_save_stores_numpy_outputs_and_check_passes(onnxprobe, tmp_path):
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    save(onnxprobe, model, base, "--samples", "3", "--seed", "7")
    entries = samples(base)
    assert [s["name"] for s in entries] == ["seed-7", "seed-8", "seed-9"]
    for s in entries:  # the stored outputs are the model's numbers on the stored inputs
        x = stored(base, s["dump"], "X")
        np.testing.assert_allclose(stored(base, s["dump"], "Y"), reference(x, models.B)["Y"],
                                   rtol=1e-5, atol=1e-6)
    assert len({stored(base, s["dump"], "X").tobytes() for s in entries}) == 3
    doc = json.load(open(base / "baseline.json"))
    env = doc["environment"]
    import hashlib
    assert env["model_sha256"] == hashlib.sha256(open(model, "rb").read()).hexdigest()
    assert env["runtime_library_sha256"] == hashlib.sha256(
        open(env["runtime_library"], "rb").read()).hexdigest()
    assert env["optimization_level"] == "disabled" and env["provider"] == "CPU"
    assert env["cpu_count"] == os.cpu_count()
    assert doc["thresholds"]["atol"] == ATOL and doc["thresholds"]["rtol"] == RTOL
    assert doc["tensors"] == ["Y"]

    r, root, report, junit = check(onnxprobe, model, base, tmp_path)
    validate_junit(root)
    props = {p.get("name"): p.get("value") for p in root.find("testsuite").iter("property")}
    assert props["model_sha256"] == env["model_sha256"]
    assert props["runtime_version"] == run([onnxprobe, "--version"]).stdout.split()[3]
    assert props["environment_changes"] == "0" and props["provider"] == "CPU"
    cases = read_with_junitparser(junit)
    assert sorted(c[0] for c in cases) == ["seed-7/Y", "seed-8/Y", "seed-9/Y"]
    assert all(c[2] == "passed" and c[1] == str(model) for c in cases)
    assert report["passed"] and report["environment_changes"] == []
    assert "verdict: PASS (0 of 3 samples failed)" in r.stdout


def test_changed_weight_fails_names_output_and_node(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    chain(model)
    b_bad = chain(bad, b_delta=0.5)
    save(onnxprobe, model, base, "--samples", "6", "--keep-model")
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, "--localize", "6", rc=1)
    validate_junit(root)
    expected_fail = {}
    for s in samples(base):
        x = stored(base, s["dump"], "X")
        good, now = reference(x, models.B)["Y"], reference(x, b_bad)["Y"]
        if fails(good, now):
            expected_fail[s["name"]] = float(np.max(np.abs(now - good)))
    assert 0 < len(expected_fail) < 6  # relu hides the change on some samples
    cases = read_with_junitparser(junit)
    failed = {c[0]: c for c in cases if c[2] == "failure"}
    assert set(failed) == {f"{n}/Y" for n in expected_fail}
    for name, max_abs in expected_fail.items():
        message = failed[f"{name}/Y"][3]
        assert failed[f"{name}/Y"][4] == "tolerance"
        got = float(re.search(r"max_abs=([-+0-9.e]+)", message).group(1))
        assert got == pytest.approx(max_abs, rel=2e-3)
    # where the error is born: MatMul 'matmul' (its weight changed), output mm
    for s in report["samples"]:
        if s["passed"]:
            continue
        loc = s["localization"]
        assert loc["method"] == "rerun"
        assert loc["first_diverging"] == "mm" and loc["first_diverging_node"] == "matmul"
        assert [c["node"] for c in loc["introducing"]] == ["matmul"]
        assert "initializers: 1 changed" in loc["model_diff"]
    failure_text = root.find(".//failure").text
    assert "introduced by: matmul (MatMul" in failure_text
    assert [c["field"] for c in report["environment_changes"]] == ["model_sha256"]
    # aggregates across samples: worst sample and means, against numpy
    ratios, abs_errs = {}, []
    for s in samples(base):
        x = stored(base, s["dump"], "X")
        good, now = reference(x, models.B)["Y"], reference(x, b_bad)["Y"]
        allowed = ATOL * max(1.0, float(np.max(np.abs(good)))) + RTOL * np.abs(good)
        ratios[s["name"]] = float(np.max(np.abs(now - good) / allowed))
        abs_errs.append(float(np.max(np.abs(now - good))))
    agg = report["tensors"][0]
    assert agg["name"] == "Y" and agg["samples"] == 6 and agg["failures"] == len(expected_fail)
    assert agg["worst_sample"] == max(ratios, key=ratios.get)
    assert agg["mean_max_abs"] == pytest.approx(np.mean(abs_errs), rel=1e-4, abs=1e-7)
    # the worst |a-b| over all samples, whichever sample is nearest its tolerance
    assert agg["worst_max_abs"] == pytest.approx(max(abs_errs), rel=1e-4)


def test_the_model_at_its_saved_path_localizes_without_keep_model(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    chain(model)
    chain(bad, b_delta=0.5)
    save(onnxprobe, model, base, "--samples", "4")  # no copy, no intermediates
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, rc=1)
    loc = next(s for s in report["samples"] if not s["passed"])["localization"]
    # m.onnx still has the recorded SHA-256: it is the baseline's model, rerun beside bad.onnx
    assert loc["method"] == "rerun" and [c["node"] for c in loc["introducing"]] == ["matmul"]


def test_stored_intermediates_localize_without_the_old_model(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    chain(model)
    chain(bad, b_delta=0.5)
    save(onnxprobe, model, base, "--samples", "4", "--all-tensors")
    assert json.load(open(base / "baseline.json"))["tensors"] == ["added", "relu_out", "mm", "Y"]
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, "--localize", "4", rc=1)
    failing = [s for s in report["samples"] if not s["passed"]]
    assert failing
    for s in failing:
        loc = s["localization"]
        assert loc["method"] == "stored-tensors"
        assert [c["node"] for c in loc["introducing"]] == ["matmul"]
        verdicts = {t["name"]: t["verdict"] for t in s["tensors"]}
        assert verdicts == {"added": "PASS", "relu_out": "PASS", "mm": "FAIL", "Y": "FAIL"}


def test_outputs_only_and_changed_model_say_why_no_node_is_named(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    chain(model)
    chain(bad, b_delta=0.5)
    save(onnxprobe, model, base, "--samples", "4")
    chain(model, b_delta=0.25)  # the file the baseline was saved from no longer holds its model
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, rc=1)
    failing = [s for s in report["samples"] if not s["passed"]]
    assert len(failing) >= 2
    # a node is never named from a run of the whole path back to the stored inputs
    texts = [f.text or "" for f in root.iter("failure")]
    assert texts and not any("introduced at:" in t or "introduced by:" in t for t in texts)
    loc = failing[0]["localization"]  # by default only the first failing sample is localized
    assert loc["method"] == "unavailable" and loc["introducing"] == []
    assert "no longer holds it" in loc["note"] and "holds neither a copy of it" in loc["note"]
    assert "4 nodes between the stored tensors and Y" in loc["note"]
    for s in failing[1:]:
        assert s["localization"]["method"] == "skipped"
        assert s["localization"]["first_diverging"] == "Y"
        # a whole sentence: how many are localized, and which setting says so
        assert s["localization"]["note"].endswith("failing sample(s) are localized (max_localized_samples)")


def test_environment_changes_are_reported(onnxprobe, tmp_path):
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    save(onnxprobe, model, base, "--samples", "2")
    r, root, report, junit = check(onnxprobe, model, base, tmp_path, "--intra-threads", "2",
                                   "--opt-level", "basic")
    changes = {c["field"]: (c["baseline"], c["current"]) for c in report["environment_changes"]}
    assert changes == {"optimization_level": ("disabled", "basic"), "intra_op_threads": ("0", "2")}
    assert "optimization_level: disabled -> basic" in r.stdout
    assert "environment changes:" in root.find(".//system-out").text


def test_inputs_folder_of_npz_and_test_data_sets(onnxprobe, tmp_path):
    model, base, folder = tmp_path / "m.onnx", tmp_path / "base", tmp_path / "inputs"
    chain(model)
    folder.mkdir()
    rng = np.random.default_rng(3)
    given = {}
    for name in ("a", "b"):
        given[name] = rng.standard_normal((2, 3)).astype(np.float32)
        np.savez(folder / f"{name}.npz", X=given[name])
    tds = folder / "test_data_set_0"
    tds.mkdir()
    given["test_data_set_0"] = rng.standard_normal((2, 3)).astype(np.float32)
    (tds / "input_0.pb").write_bytes(
        numpy_helper.from_array(given["test_data_set_0"], "X").SerializeToString())
    (folder / "notes.txt").write_text("not a sample")
    save(onnxprobe, model, base, "--inputs", folder)
    entries = samples(base)
    assert [s["name"] for s in entries] == ["a", "b", "test_data_set_0"]
    for s in entries:
        x = stored(base, s["dump"], "X")
        np.testing.assert_array_equal(x, given[s["name"]])
        np.testing.assert_allclose(stored(base, s["dump"], "Y"), reference(x, models.B)["Y"],
                                   rtol=1e-5, atol=1e-6)
    r, root, report, junit = check(onnxprobe, model, base, tmp_path)
    assert sorted(c.get("name") for c in root.iter("testcase")) == [
        "a/Y", "b/Y", "test_data_set_0/Y"]


def test_an_input_number_too_large_for_any_integer_is_one_line_exit_2(onnxprobe, tmp_path):
    # once std::stol on the file name: an uncaught out_of_range, "internal error", exit 3
    model, folder = tmp_path / "m.onnx", tmp_path / "inputs"
    chain(model)
    tds = folder / "test_data_set_0"
    tds.mkdir(parents=True)
    name = "input_" + "9" * 25 + ".pb"
    (tds / name).write_bytes(numpy_helper.from_array(np.zeros((2, 3), np.float32), "X").SerializeToString())
    r = run([onnxprobe, "baseline", "save", model, "-o", tmp_path / "base", "--inputs", folder])
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and name in r.stderr and "out of range" in r.stderr, r.stderr


@pytest.mark.parametrize("kind", ["missing", "no_index", "malformed", "missing_dump"])
def test_bad_baseline_folder_is_one_line_exit_2(onnxprobe, tmp_path, kind):
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    if kind == "missing":
        target = tmp_path / "nothere"
    elif kind == "no_index":
        target = tmp_path / "empty"
        target.mkdir()
    else:
        save(onnxprobe, model, base, "--samples", "1")
        target = base
        if kind == "malformed":
            (base / "baseline.json").write_text('{"format": "onnxprobe-baseline", "version": 1}')
        else:
            import shutil
            shutil.rmtree(base / samples(base)[0]["dump"])
    r = run([onnxprobe, "baseline", "check", model, target])
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnxprobe: error: ") and str(target) in lines[0]


def test_outputs_never_replace_what_is_not_theirs(onnxprobe, tmp_path):
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    r = run([onnxprobe, "baseline", "save", model, "-o", other])
    assert r.returncode == 2 and "not an onnxprobe baseline" in r.stderr
    assert (other / "keep.txt").read_text() == "mine"
    save(onnxprobe, model, base, "--samples", "1")
    save(onnxprobe, model, base, "--samples", "2")  # a baseline replaces a baseline
    assert len(samples(base)) == 2
    r = run([onnxprobe, "baseline", "check", model, base, "--junit", model])
    assert r.returncode == 2 and "input of this run" in r.stderr
    notes = tmp_path / "notes.xml"
    notes.write_text("<notes/>")
    r = run([onnxprobe, "baseline", "check", model, base, "--junit", notes])
    assert r.returncode == 2 and notes.read_text() == "<notes/>"


def test_save_refuses_idle_and_conflicting_options(onnxprobe, tmp_path):
    model = tmp_path / "m.onnx"
    chain(model)
    x = tmp_path / "X.npy"
    np.save(x, np.zeros((2, 3), np.float32))
    r = run([onnxprobe, "baseline", "save", model, "-o", tmp_path / "b1", "--input", x,
             "--samples", "2"])
    assert r.returncode == 2 and "--input" in r.stderr and "--samples" in r.stderr
    r = run([onnxprobe, "baseline", "save", model, "-o", tmp_path / "b2", "--all-tensors",
             "--tensors", "mm"])
    assert r.returncode == 2 and "--all-tensors" in r.stderr
    r = run([onnxprobe, "baseline", "save", model, "-o", tmp_path / "b3", "--inputs",
             tmp_path / "none"])
    assert r.returncode == 2 and "--inputs" in r.stderr
    assert not any(p.name.startswith("b") and p.is_dir() for p in tmp_path.iterdir())


# --- input samples and JUnit on compare ------------------------------------------------------


def sample_folder(folder, arrays):
    folder.mkdir()
    for name, x in arrays.items():
        np.savez(folder / f"{name}.npz", X=x)


def test_compare_over_samples_aggregates_against_numpy(onnxprobe, tmp_path):
    model, bad, folder = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "inputs"
    chain(model)
    b_bad = chain(bad, b_delta=0.25)
    rng = np.random.default_rng(11)
    arrays = {f"s{i}": rng.uniform(-1, 1, (2, 3)).astype(np.float32) for i in range(5)}
    arrays["s0"][:, 1] = -0.9  # relu zeroes column 1 (W[1] = 0): the change to B[1, 2] is hidden
    sample_folder(folder, arrays)
    report = tmp_path / "samples.json"
    junit = tmp_path / "compare.xml"
    r = run([onnxprobe, "compare", model, bad, "--inputs", folder, "--json", report, "--junit",
             junit])
    expected = {}
    for name, x in arrays.items():
        a, b = reference(x, models.B), reference(x, b_bad)
        expected[name] = {t: (fails(a[t], b[t]), float(np.max(np.abs(b[t] - a[t]))),
                              float(np.max(np.abs(b[t] - a[t]) / (
                                  ATOL * max(1.0, float(np.max(np.abs(a[t])))) + RTOL * np.abs(a[t])))))
                          for t in ("mm", "Y")}
    failing = {n for n, e in expected.items() if e["mm"][0] or e["Y"][0]}
    assert "s0" not in failing and failing
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.load(open(report))
    assert doc["schema"] == "onnxprobe-compare-samples"
    assert {s["name"] for s in doc["samples"] if not s["passed"]} == failing
    assert doc["failed_samples"] == len(failing)
    aggs = {t["name"]: t for t in doc["tensors"]}
    for t in ("mm", "Y"):
        ratios = {n: e[t][2] for n, e in expected.items()}
        assert aggs[t]["worst_sample"] == max(ratios, key=ratios.get)
        assert aggs[t]["worst_max_abs"] == pytest.approx(
            expected[max(ratios, key=ratios.get)][t][1], rel=1e-4)
        assert aggs[t]["mean_max_abs"] == pytest.approx(
            np.mean([e[t][1] for e in expected.values()]), rel=1e-4)
        assert aggs[t]["failures"] == sum(e[t][0] for e in expected.values())
    root = ET.parse(junit).getroot()
    validate_junit(root)
    failed = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert failed == {f"{n}/{t}" for n, e in expected.items() for t in ("mm", "Y") if e[t][0]}
    assert f"worst sample" in r.stdout


def test_compare_junit_one_case_per_tensor(onnxprobe, tmp_path):
    model, bad = tmp_path / "m.onnx", tmp_path / "bad.onnx"
    chain(model)
    b_bad = chain(bad, b_delta=0.5)
    x = np.full((2, 3), 0.5, np.float32)
    np.save(tmp_path / "X.npy", x)
    junit = tmp_path / "compare.xml"
    r = run([onnxprobe, "compare", model, bad, "--input", tmp_path / "X.npy", "--junit", junit])
    assert r.returncode == 1
    root = ET.parse(junit).getroot()
    validate_junit(root)
    cases = read_with_junitparser(junit)
    assert [c[0] for c in cases] == ["added", "relu_out", "mm", "Y"]
    a, b = reference(x, models.B), reference(x, b_bad)
    texts = [f.text for f in root.iter("failure")]
    assert len(texts) == 2 and all("error introduced at: matmul (MatMul) -> mm" in t for t in texts)
    for name, classname, outcome, message, kind in cases:
        assert classname == str(bad)
        if name in ("mm", "Y"):
            assert outcome == "failure" and kind == "tolerance"
            got = float(re.search(r"max_abs=([-+0-9.e]+)", message).group(1))
            assert got == pytest.approx(float(np.max(np.abs(b[name] - a[name]))), rel=2e-3)
        else:
            assert outcome == "passed"


def test_samples_with_a_dump_side_or_twice_given_inputs_are_refused(onnxprobe, tmp_path):
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    save(onnxprobe, model, base, "--samples", "1")
    dump = base / samples(base)[0]["dump"]
    r = run([onnxprobe, "compare", dump, model, "--samples", "2"])
    assert r.returncode == 2 and "--samples does nothing" in r.stderr
    r = run([onnxprobe, "compare", model, "--b-opt-level", "all", "--inputs", tmp_path / "none"])
    assert r.returncode == 2 and r.stderr.startswith("onnxprobe: error: --inputs:")


def test_run_over_samples_writes_one_dump_per_sample(onnxprobe, tmp_path):
    model, folder, out = tmp_path / "m.onnx", tmp_path / "inputs", tmp_path / "set"
    chain(model)
    rng = np.random.default_rng(5)
    arrays = {n: rng.uniform(-1, 1, (2, 3)).astype(np.float32) for n in ("p", "q")}
    sample_folder(folder, arrays)
    r = run([onnxprobe, "run", model, "--inputs", folder, "-o", out])
    assert r.returncode == 0, r.stderr
    index = json.load(open(out / "samples.json"))
    assert index["format"] == "onnxprobe-dump-set"
    assert [s["name"] for s in index["samples"]] == ["p", "q"]
    for s in index["samples"]:
        x = stored(out, s["dump"], "X")
        np.testing.assert_array_equal(x, arrays[s["name"]])
        ref = reference(x, models.B)
        for t in ("mm", "Y"):
            np.testing.assert_allclose(stored(out, s["dump"], t), ref[t], rtol=1e-5, atol=1e-6)
    r = run([onnxprobe, "run", model, "--samples", "3", "-o", out])  # a dump set replaces one
    assert r.returncode == 0 and len(json.load(open(out / "samples.json"))["samples"]) == 3
    r = run([onnxprobe, "run", model, "--samples", "2", "-o", tmp_path / "x.npz"])
    assert r.returncode == 2 and "one dump per sample" in r.stderr
    assert not (tmp_path / "x.npz").exists()


def test_interrupted_save_leaves_nothing_and_keeps_the_old_baseline(onnxprobe, tmp_path):
    import signal
    import time
    model, base = tmp_path / "m.onnx", tmp_path / "base"
    chain(model)
    save(onnxprobe, model, base, "--samples", "2")
    before = (base / "baseline.json").read_text()
    proc = subprocess.Popen([onnxprobe, "baseline", "save", model, "-o", base, "--samples",
                             "100000", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until several sample dumps are written
            assert proc.poll() is None, "the save ended before it could be interrupted"
            tmp = [n for n in os.listdir(tmp_path) if n.startswith("base.tmp")]
            if tmp and os.path.isdir(tmp_path / tmp[0] / "samples") and \
                    len(os.listdir(tmp_path / tmp[0] / "samples")) >= 3:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGTERM
    assert sorted(os.listdir(tmp_path)) == ["base", "m.onnx"]
    assert (base / "baseline.json").read_text() == before


def test_junit_escapes_names_and_html_shows_the_localization(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    odd = 'Y<&"\'>'
    for path, delta in ((model, None), (bad, 0.5)):
        chain(path, b_delta=delta)
        m = onnx.load(str(path))
        m.graph.node[-1].output[0] = odd
        m.graph.output[0].name = odd
        onnx.save(m, str(path))
    save(onnxprobe, model, base, "--samples", "4", "--keep-model")
    html = tmp_path / "check.html"
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, "--html", html, rc=1)
    names = {c.get("name").split("/", 1)[1] for c in root.iter("testcase")}
    assert names == {odd}
    assert {c[0].split("/", 1)[1] for c in read_with_junitparser(junit)} == {odd}
    page = html.read_text()
    data = page.split('<script id="data" type="application/json">', 1)[1].split("</script>")[0]
    doc = json.loads(data)
    assert doc["schema"] == "onnxprobe-compare"
    assert doc["side_a"]["path"] == str(base / "model.onnx")  # the rerun: baseline's model as A
    assert any(row["name"] == "mm" and row["role"] == "introduced" for row in doc["tensors"])


def test_a_runtime_change_is_localized_on_the_baselines_own_runtime(onnxprobe, tmp_path):
    """Saved on ONNX Runtime 1.20.1 (installed by the bootstrap), checked on the default runtime
    with zero tolerance: the check names the runtime change and, re-running 1.20.1 in full, the
    first tensor that differs between the two runtimes (found here with numpy on each runtime's
    own dump of every tensor)."""
    out = tmp_path / "cases"
    r = subprocess.run(["/usr/bin/python3", os.path.join(os.environ["ONNXPROBE_SRC"], "tests",
                        "localize", "make_fault_cases.py"), str(out), "small"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    model, base = out / "cnn.onnx", tmp_path / "base"
    save(onnxprobe, model, base, "--samples", "1", "--ort-version", "1.20.1", "--atol", "0",
         "--rtol", "0", "--absolute-atol")
    r, root, report, junit = check(onnxprobe, model, base, tmp_path, rc=1)
    fields = [c["field"] for c in report["environment_changes"]]
    assert fields == ["runtime_version", "runtime_library_sha256"]
    assert report["environment_changes"][0]["baseline"] == "1.20.1"
    loc = report["samples"][0]["localization"]
    assert loc["method"] == "rerun"
    # independent: every tensor on each runtime, compared bitwise with numpy in graph order
    x = stored(base, samples(base)[0]["dump"], "input")
    np.save(tmp_path / "input.npy", x)
    dumps = []
    for i, extra in enumerate([["--ort-version", "1.20.1"], []]):
        d = tmp_path / f"d{i}"
        assert run([onnxprobe, "run", model, "--input", tmp_path / "input.npy", "-o", d,
                    *extra]).returncode == 0
        dumps.append(d)
    order = [o for n in onnx.load(str(model)).graph.node for o in n.output]
    first = next(t for t in order
                 if not np.array_equal(stored(dumps[0], ".", t), stored(dumps[1], ".", t)))
    assert loc["first_diverging"] == first
    # every node that changed between the runtimes is named (not only the first): the first is
    # among them, and each one named differs between the two runtimes' dumps
    named = [x["tensor"] for x in loc["introducing"]]
    assert first in named, named
    for t in named:
        assert not np.array_equal(stored(dumps[0], ".", t), stored(dumps[1], ".", t)), t


def test_runtime_failures_are_one_line_with_compares_exit_codes(onnxprobe, tmp_path):
    model, rejected, base = tmp_path / "m.onnx", tmp_path / "rejected.onnx", tmp_path / "base"
    chain(model)
    m = onnx.load(str(model))
    m.graph.node[1].op_type = "NoSuchOp"
    onnx.save(m, str(rejected))
    save(onnxprobe, model, base, "--samples", "2")
    r = run([onnxprobe, "baseline", "check", rejected, base])
    assert r.returncode == 3 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "NoSuchOp" in r.stderr
    c = run([onnxprobe, "compare", model, "--b-provider", "NoSuchProvider"])
    r = run([onnxprobe, "baseline", "check", model, base, "--provider", "NoSuchProvider"])
    assert r.returncode == c.returncode and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "NoSuchProvider" in r.stderr


def test_chosen_intermediates_narrow_the_span(onnxprobe, tmp_path):
    model, bad, base = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "base"
    chain(model)
    chain(bad, b_delta=0.5)
    save(onnxprobe, model, base, "--samples", "4", "--tensors", "relu_out")
    os.rename(model, tmp_path / "moved.onnx")  # no model to rerun: only the stored tensors
    doc = json.load(open(base / "baseline.json"))
    assert doc["tensors"] == ["relu_out", "Y"] and doc["selection"]["names"] == ["relu_out"]
    for s in samples(base):
        x = stored(base, s["dump"], "X")
        np.testing.assert_allclose(stored(base, s["dump"], "relu_out"),
                                   np.maximum(x + models.W, 0), rtol=1e-6, atol=1e-7)
    r, root, report, junit = check(onnxprobe, bad, base, tmp_path, rc=1)
    failing = [s for s in report["samples"] if not s["passed"]]
    verdicts = {t["name"]: t["verdict"] for t in failing[0]["tensors"]}
    assert verdicts == {"relu_out": "PASS", "Y": "FAIL"}
    loc = failing[0]["localization"]
    assert loc["method"] == "unavailable"
    assert "2 nodes between the stored tensors and Y (matmul, sigmoid)" in loc["note"]
    # with the MatMul's input and output stored, the MatMul runs alone and is named
    os.rename(tmp_path / "moved.onnx", model)
    base2 = tmp_path / "base2"
    save(onnxprobe, model, base2, "--samples", "4", "--op-types", "Relu,MatMul")
    r, root, report, junit = check(onnxprobe, bad, base2, tmp_path, rc=1)
    loc = [s for s in report["samples"] if not s["passed"]][0]["localization"]
    assert loc["method"] == "stored-tensors"
    assert [c["node"] for c in loc["introducing"]] == ["matmul"]


def test_tensors_fused_away_are_not_listed_as_stored(onnxprobe, tmp_path):
    """At level basic ONNX Runtime folds BatchNormalization into the Conv before it: the Conv's
    own output no longer exists, is not captured, and the baseline does not claim to store it."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.ones(4, np.float32), "scale"),
             numpy_helper.from_array(np.zeros(4, np.float32), "bias"),
             numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "mean"),
             numpy_helper.from_array(np.ones(4, np.float32) * 2, "var")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"],
                              name="bn"),
             helper.make_node("Relu", ["b"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "cbr", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    model, base = tmp_path / "cbr.onnx", tmp_path / "base"
    onnx.save(m, str(model))
    r = save(onnxprobe, model, base, "--samples", "1", "--all-tensors", "--opt-level", "basic")
    listed = json.load(open(base / "baseline.json"))["tensors"]
    dump = base / samples(base)[0]["dump"]
    stored_names = [t["name"] for t in json.load(open(dump / "manifest.json"))["tensors"]
                    if t["kind"] == "tensor"]
    assert listed == stored_names and "y" in listed
    assert "c" not in listed and "fused away" in r.stderr
    r, root, report, junit = check(onnxprobe, model, base, tmp_path)
    assert sorted(c.get("name") for c in root.iter("testcase")) == sorted(
        f"seed-0/{n}" for n in listed)
