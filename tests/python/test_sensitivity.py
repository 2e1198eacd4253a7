"""A representative slice of the sensitivity benchmark (bench/sensitivity.py; the full one runs in
`make bench`): three small nets, PyTorch vs ONNX and ONNX vs its faulted copy on the same runtime
and at optimization level all (the bidirectional RNN's round trip sits on an LSTM bias, which level
all folds into a constant: isolating it runs the ~120 weight-preparation nodes of the layer).
Benign variants (the capture's inputs, two more input seeds, 1 vs 2 threads) never fail; a changed
attribute and a float16 round trip are named; one weight element scaled by 1+e is named at
e >= 1e-2 against PyTorch and at every e against ONNX on the same runtime. Faults are placed by
the benchmark without asking the tool, and their effect is checked with ONNX Runtime's Python API."""
import json
import os
import subprocess

import pytest

SRC = os.environ.get("ONNXPROBE_SRC", "")


@pytest.fixture(scope="module")
def totals(onnxprobe, tmp_path_factory):
    if not os.path.exists(os.path.join(SRC, ".deps", "pyenv", "bin", "python")):
        pytest.fail("the test environment (.deps/pyenv, made by scripts/bootstrap.sh) is missing")
    out = tmp_path_factory.mktemp("sens")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "bench", "sensitivity.py"), onnxprobe, "--only",
                        "two_inputs,shared_stem,bidirectional_rnn", "--pairings", "torch,same,opt_all,opt_all+exact", "--json", str(out / "s.json"),
                        "--work", str(out / "work")], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    print(r.stdout)
    return json.loads((out / "s.json").read_text())


@pytest.mark.parametrize("pairing", ["torch", "same", "opt_all", "opt_all+exact"])
def test_no_false_alarm_on_benign_variants(totals, pairing):
    alarms, runs = totals[pairing]["benign"]
    assert runs >= 2 and alarms == 0, totals[pairing]


@pytest.mark.parametrize("pairing", ["torch", "same", "opt_all", "opt_all+exact"])
@pytest.mark.parametrize("kind", ["attribute", "fp16"])
def test_attribute_and_round_trip_faults_are_named(totals, pairing, kind):
    named, tried, _no_effect = totals[pairing][kind]
    assert tried >= 1 and named == tried, totals[pairing]


@pytest.mark.parametrize("pairing,smallest", [("torch", "0.01"), ("same", "0.0001"), ("opt_all", "0.0001"),
                                              ("opt_all+exact", "0.0001")])
def test_weight_faults_are_named_down_to(totals, pairing, smallest):
    checked = [e for e in totals[pairing]["weight"] if float(e) >= float(smallest)]
    assert checked, totals[pairing]  # the fault sizes the claim is about were tried at all
    for e in checked:
        named, tried, _no_effect = totals[pairing]["weight"][e]
        assert named == tried and tried >= 1, (e, totals[pairing])
