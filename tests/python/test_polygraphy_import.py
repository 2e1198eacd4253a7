"""Polygraphy's saved results as a side: `polygraphy run --save-outputs/--save-inputs` (Polygraphy
from the bootstrap's Python environment) read by `onnxprobe import-polygraphy`. Expectations come
from Polygraphy's own loader and from the injected fault (demo_cnn_faulty.onnx changes
/features/features.3/Conv's weight)."""
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")
# Polygraphy's own environment from the bootstrap (no Debian packages: Polygraphy cannot parse
# Debian's torch version and fails once torch is importable)
PG_BIN = os.path.join(SRC, ".deps", "polygraphy-env", "bin")

LOAD = r"""
import json, sys, numpy as np
from polygraphy.json import load_json
results = load_json(sys.argv[1])
runner, iterations = results[0]
arrays = {k: np.asarray(v) for k, v in iterations[0].items()}
inputs = load_json(sys.argv[2])[0]
np.savez(sys.argv[3], **{"out/" + k: v for k, v in arrays.items()},
         **{"in/" + k: np.asarray(v) for k, v in inputs.items()})
print(runner)
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Polygraphy's run of the demo model: every tensor marked as an output, inputs saved."""
    d = tmp_path_factory.mktemp("polygraphy")
    polygraphy = os.path.join(PG_BIN, "polygraphy")
    if not os.path.exists(polygraphy):
        pytest.fail("Polygraphy's environment is missing: run scripts/bootstrap.sh")
    r = subprocess.run([polygraphy, "run", DEMO, "--onnxrt", "--onnx-outputs", "mark", "all",
                        "--save-inputs", d / "in.json", "--save-outputs", d / "out.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # the reference: the arrays as Polygraphy itself loads them
    ref = subprocess.run([os.path.join(PG_BIN, "python"), "-c", LOAD, d / "out.json", d / "in.json", d / "ref.npz"],
                         capture_output=True, text=True)
    assert ref.returncode == 0, ref.stderr
    return d, ref.stdout.strip(), dict(np.load(d / "ref.npz"))


def test_every_tensor_and_input_arrives_as_polygraphy_saved_it(onnxprobe, tmp_path, saved):
    d, runner, ref = saved
    out = tmp_path / "pg.dump"
    r = run([onnxprobe, "import-polygraphy", d / "out.json", "--inputs", d / "in.json",
             "--model", DEMO, "-o", out])
    assert r.returncode == 0, r.stdout + r.stderr
    assert runner in r.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    got = {(t["kind"], t["name"]): t for t in manifest["tensors"]}
    want_out = {k[4:] for k in ref if k.startswith("out/")}
    want_in = {k[3:] for k in ref if k.startswith("in/")}
    assert {n for kind, n in got if kind == "tensor"} == want_out
    assert {n for kind, n in got if kind == "input"} == want_in
    for (kind, name), t in got.items():
        key = ("out/" if kind == "tensor" else "in/") + name
        value = np.load(out / t["file"])
        assert value.dtype == ref[key].dtype and np.array_equal(value, ref[key]), name
    # with --model, tensors carry their node and come in graph order
    tensors = [t for t in manifest["tensors"] if t["kind"] == "tensor"]
    conv = [t for t in tensors if t["name"] == "/features/features.3/Conv_output_0"][0]
    assert conv["node"] == "/features/features.3/Conv" and conv["op_type"] == "Conv"
    order = [t["topo_index"] for t in tensors]
    assert order == sorted(order)


def test_a_polygraphy_side_finds_the_changed_weight(onnxprobe, tmp_path, saved):
    d, _, ref = saved
    out = tmp_path / "pg.dump"
    r = run([onnxprobe, "import-polygraphy", d / "out.json", "--inputs", d / "in.json",
             "--model", DEMO, "-o", out, "-q"])
    assert r.returncode == 0, r.stderr
    # the same model on onnxprobe's runtime, fed Polygraphy's inputs from the dump: within tolerance
    ok = run([onnxprobe, "compare", out, DEMO, "--json", tmp_path / "ok.json"])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    rep = json.loads((tmp_path / "ok.json").read_text())
    assert rep["summary"]["compared"] == len([k for k in ref if k.startswith("out/")])
    # a model with one changed weight against Polygraphy's values: named at its node
    bad = run([onnxprobe, "compare", out, FAULTY, "--json", tmp_path / "bad.json"])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    rep = json.loads((tmp_path / "bad.json").read_text())
    introduced = [c["node"] for c in rep["localization"]["culprits"] if c["introduced"]]
    assert introduced[:1] == ["/features/features.3/Conv"], introduced


def test_what_is_not_polygraphy_results_is_one_line(onnxprobe, tmp_path, saved):
    d, runner, _ = saved
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something else"}))
    cases = [
        ([other], "not Polygraphy results"),
        ([d / "out.json", "--runner", "nope"], f"no runner 'nope' (it has {runner})"),
        ([d / "out.json", "--iteration", "3"], "1 iteration(s); --iteration 3 is out of range"),
        ([d / "out.json", "--inputs", other], "not Polygraphy inputs"),
        ([tmp_path / "missing.json"], "no such file"),
    ]
    for args, message in cases:
        r = run([onnxprobe, "import-polygraphy", *args, "-o", tmp_path / "x.dump"])
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, r.stderr)
        assert not (tmp_path / "x.dump").exists()
