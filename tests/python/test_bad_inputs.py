"""Every case of tests/data/bad/: exit code 2 (3 for runtime rejections), one line naming the file
and the problem, no crash, nothing left behind."""
import json
import os
import shutil
import subprocess

import pytest

import models
from conftest import run

BAD = os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "tests", "data", "bad")
CASES = json.load(open(os.path.join(BAD, "cases.json"))) if os.path.exists(BAD) else []


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    d = tmp_path_factory.mktemp("chain")
    models.chain_model(d / "chain.onnx", symbolic=False)
    return d / "chain.onnx"


def check_one_line(r, file_word, needles):
    assert r.returncode in (2, 3), (r.returncode, r.stderr)  # negative: killed by a signal
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("onnxprobe: error: "), lines[0]
    if file_word:
        assert file_word in lines[0], lines[0]
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("c", CASES, ids=[c["file"] for c in CASES])
def test_bad_input(onnxprobe, chain, tmp_path, c):
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    cmd = [a.replace("{file}", os.path.join(BAD, c["file"])).replace("{chain}", str(chain)).replace("{out}", str(out))
           for a in c["cmd"]]
    r = run([onnxprobe] + cmd)
    assert r.returncode == c["code"], (r.returncode, r.stderr)
    name = c["file"].split("/")[-1]
    # messages about a named input may name the input instead of the file
    file_word = None if any(n.startswith("input '") for n in c["needles"]) else name
    check_one_line(r, file_word, c["needles"])
    assert list(work.iterdir()) == [], "output left behind"


def test_corpus_is_big_enough():
    assert len(CASES) >= 30


def test_symlink_out_of_the_model_folder(onnxprobe, tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 48)
    os.symlink(tmp_path / "secret.bin", folder / "weights.bin")
    path, _ = models.external_data_model(folder, write_data=False)
    r = run([onnxprobe, "inspect", path])
    assert r.returncode == 2
    check_one_line(r, "Wbig", ["outside the model folder"])


def test_directory_where_a_model_is_expected(onnxprobe, tmp_path):
    (tmp_path / "model.onnx").mkdir()
    r = run([onnxprobe, "run", tmp_path / "model.onnx", "-o", tmp_path / "o"])
    check_one_line(r, "model.onnx", ["directory"])
    assert r.returncode == 2


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to drop root")
def test_unreadable_file(onnxprobe):
    import pathlib
    import tempfile
    folder = pathlib.Path(tempfile.mkdtemp(prefix="onnxprobe-perm-", dir="/tmp"))
    os.chmod(folder, 0o755)
    path = folder / "secret.onnx"
    models.chain_model(path)
    os.chmod(path, 0o000)
    cmd = [onnxprobe, "inspect", path]
    if os.geteuid() == 0:  # root reads anything: run as nobody
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    shutil.rmtree(folder)
    check_one_line(r, "secret.onnx", ["cannot open"])
    assert r.returncode == 2


# --- what a new user still hit (issue 43) ------------------------------------------------------

@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
@pytest.mark.parametrize("command", ["run", "inspect"])
def test_a_device_as_the_model(onnxprobe, tmp_path, device, command):
    r = run([onnxprobe, command, device] + (["-o", tmp_path / "d"] if command == "run" else []))
    check_one_line(r, device, ["not a regular file"])
    assert "18446744073709551615" not in r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["run", "-o", "{out}"], ["compare", "--b-opt-level", "all"]])
def test_a_zero_dimension_is_refused(onnxprobe, tmp_path, command):
    models.chain_model(tmp_path / "chain.onnx")  # X: float32[batch, 3]
    work = tmp_path / "work"
    work.mkdir()
    cmd = [a.replace("{out}", str(work / "d")) for a in command]
    r = run([onnxprobe, cmd[0], tmp_path / "chain.onnx", *cmd[1:], "--dim", "batch=0"])
    check_one_line(r, None, ["--dim", "batch=0", "nothing to capture or compare"])
    assert list(work.iterdir()) == []


def test_partly_nan_inputs_that_reach_every_output_value_fail(onnxprobe, tmp_path):
    """A NaN in X reaches every value of Y through the MatMul: Y is NaN on both sides. It was not
    compared, so the comparison does not pass; the rows say why instead of "excellent"."""
    import numpy as np
    models.chain_model(tmp_path / "chain.onnx", symbolic=False)  # X: [2, 3]; Y = f(X @ B)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    x[:, 0] = np.nan  # every row of X holds a NaN: every row of Y is NaN
    np.save(tmp_path / "X.npy", x)
    report = tmp_path / "r.json"
    r = run([onnxprobe, "compare", tmp_path / "chain.onnx", "--b-opt-level", "all", "--input",
             f"X={tmp_path / 'X.npy'}", "--json", report])
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads(report.read_text())
    assert rep["verdict"] == "FAIL"
    assert rep["nan_outputs"] and "'Y'" in rep["nan_outputs"][0]
    y = next(t for t in rep["tensors"] if t["name"] == "Y")
    assert y["state"] == "not-compared" and "every value is NaN on both sides" in y["reason"]
    assert "holds only NaN on both sides" in r.stdout
