"""The conformance harness (tests/conformance/conformance_main.cc) checked on suites built here:
a known-divergence entry hides exactly the case and runtime version it names, an entry that no
longer diverges fails the run, a missing baseline is an error, and a case that returns fewer
outputs than the suite expects fails. The reference is the suite written by this test."""
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

# the bootstrap's default runtime (CMakeLists.txt ONNXPROBE_ORT_PIN), which the harness runs on
ORT_VERSION = re.search(r'set\(ONNXPROBE_ORT_PIN "([0-9.]+)"\)', open(os.path.join(
    os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", "..")),
    "CMakeLists.txt")).read()).group(1)


@pytest.fixture(scope="module")
def harness():
    path = os.environ.get("ONNXPROBE_CONFORMANCE")
    assert path and os.path.exists(path), "ONNXPROBE_CONFORMANCE (the onnxprobe_conformance target) is missing"
    return path


def case(suite, name, expected, outputs=1):
    """An Identity model x -> y (and y2 when outputs == 2) with input [1, 2, 3] and the given
    expected outputs written as output_K.pb."""
    d = suite / name / "test_data_set_0"
    d.mkdir(parents=True)
    outs = ["y", "y2"][:outputs]
    nodes = [helper.make_node("Identity", ["x"], [o]) for o in outs]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, [3]) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(suite / name / "model.onnx"))
    x = np.array([1, 2, 3], np.float32)
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(x).SerializeToString())
    for k, e in enumerate(expected):
        (d / f"output_{k}.pb").write_bytes(numpy_helper.from_array(np.asarray(e, np.float32)).SerializeToString())


def run(harness, suite, known_lines, baseline="0", tmp=None):
    known = suite.parent / "known.txt"
    known.write_text("".join(line + "\n" for line in known_lines))
    args = [harness, str(suite), "--known", str(known)]
    if baseline is not None:
        (suite.parent / "baseline.txt").write_text(baseline + "\n")
        args += ["--baseline", str(suite.parent / "baseline.txt")]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


GOOD, BAD = [1, 2, 3], [1, 2, 4]


def test_an_entry_hides_its_own_case_not_every_case_its_name_starts(harness, tmp_path):
    suite = tmp_path / "suite"
    case(suite, "test_dropout", [BAD])
    case(suite, "test_dropout_zero_ratio", [BAD])  # once hidden by the prefix "test_dropout"
    r = run(harness, suite, [f"test_dropout {ORT_VERSION} random mask"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH test_dropout_zero_ratio" in r.stdout and "MISMATCH test_dropout:" not in r.stdout


def test_an_entry_hides_only_the_versions_it_names(harness, tmp_path):
    suite = tmp_path / "suite"
    case(suite, "test_a", [BAD])
    r = run(harness, suite, ["test_a 1.20.1 diverges on the older runtime only"])
    assert r.returncode == 1 and "MISMATCH test_a" in r.stdout, r.stdout + r.stderr
    r = run(harness, suite, [f"test_a 1.20.1,{ORT_VERSION} diverges on both"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_entry_that_no_longer_diverges_fails_the_run(harness, tmp_path):
    suite = tmp_path / "suite"
    case(suite, "test_fixed", [GOOD])
    r = run(harness, suite, [f"test_fixed {ORT_VERSION} was wrong once"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "did not diverge" in r.stdout and "test_fixed" in r.stdout.split("did not diverge")[1]


def test_fewer_outputs_than_the_suite_expects_is_a_mismatch(harness, tmp_path):
    suite = tmp_path / "suite"
    case(suite, "test_two", [GOOD, GOOD], outputs=1)
    r = run(harness, suite, [])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH test_two: 1 outputs, the suite expects 2" in r.stdout
    # and no entry can hide it: it is not a numerical divergence of the runtime
    r = run(harness, suite, [f"test_two {ORT_VERSION} listed anyway"])
    assert r.returncode == 1 and "MISMATCH test_two: 1 outputs" in r.stdout, r.stdout


@pytest.mark.parametrize("baseline", [None, "", "many", "12 13"])
def test_a_missing_or_malformed_baseline_is_an_error_not_zero(harness, tmp_path, baseline):
    suite = tmp_path / "suite"
    case(suite, "test_ok", [GOOD])
    r = run(harness, suite, [], baseline=baseline)
    if baseline is None:  # no --baseline at all: nothing to hold the count to
        assert r.returncode == 0, r.stdout + r.stderr
        r = subprocess.run([harness, str(suite), "--baseline", str(tmp_path / "absent.txt")],
                           capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "expected one pass count" in r.stderr, r.stdout + r.stderr


def test_a_pass_count_below_the_baseline_fails(harness, tmp_path):
    suite = tmp_path / "suite"
    case(suite, "test_ok", [GOOD])
    assert run(harness, suite, [], baseline="1").returncode == 0
    r = run(harness, suite, [], baseline="2")
    assert r.returncode == 1 and "regressed from 2 to 1" in r.stdout
