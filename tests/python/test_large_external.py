"""Larger than memory: a model whose external data file is over 2 GB (a sparse file, a few MB on
disk) runs and compares with peak RSS within the memory budget plus what ONNX Runtime itself
holds for the same model (a plain session of its Python API, measured here), and gives the numbers
numpy computes from the weights the generator wrote. Labelled slow (scale) in ctest."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import sparse_model
from conftest import run
from test_scale import SANITIZE, peak_rss_mib

BUDGET_MIB = 256
# allocator and page-table slack, the CLI's own code and the ORT library's pages beyond what the
# Python reference maps (measured: onnxprobe ~50 MiB, the Python reference ~63 MiB)
SLACK_MIB = 96

REFERENCE = """import sys, numpy as np, onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
np.save(sys.argv[3], s.run(["y"], dict(np.load(sys.argv[2])))[0])
"""


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sparse")
    free = shutil.disk_usage(folder).free
    if free < 6 << 30:
        pytest.skip(f"needs 6 GB free beside {folder} in case sparse files are not supported "
                    f"({free >> 20} MiB free)")
    path = sparse_model.make(str(folder))
    data = folder / sparse_model.DATA_FILE
    st = os.stat(data)
    if st.st_blocks * 512 > 64 << 20:
        os.remove(data)
        pytest.skip(f"the filesystem of {folder} stores holes: no sparse file support")
    assert st.st_size > 2 << 30  # what this test is about
    inputs = sparse_model.inputs()
    np.savez(folder / "in.npz", **inputs)
    return path, folder, sparse_model.reference(inputs["ids"])


@pytest.fixture(scope="module")
def runtime_rss(model):
    """Peak RSS (MiB) of a plain ONNX Runtime Python session of the model, optimizations all."""
    path, folder, expected = model
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    out = folder / "ort_y.npy"
    rc, rss, _, err = peak_rss_mib([py, "-c", REFERENCE, path, folder / "in.npz", out])
    assert rc == 0, err
    np.testing.assert_allclose(np.load(out), expected["y"], rtol=1e-5, atol=1e-5)
    return rss


@pytest.mark.parametrize("level", ["disabled", "all"])
def test_run_matches_numpy(onnxprobe, model, level):
    path, folder, expected = model
    out = folder / f"run_{level}.npz"
    r = run([onnxprobe, "run", path, "--input", folder / "in.npz", "--opt-level", level,
             "--max-memory", f"{BUDGET_MIB}M", "-q", "-o", out])
    assert r.returncode == 0, r.stderr
    with np.load(out) as got:
        # with optimizations on, MatMul+Add fuse: their intermediate is not captured
        names = ["emb", "mm1", "pre", "act", "y"] if level == "disabled" else ["emb", "act", "y"]
        for name in names:
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-5,
                                       err_msg=name)


@pytest.mark.skipif(SANITIZE, reason="sanitizer shadow memory inflates RSS")
@pytest.mark.parametrize("command", ["run", "compare"])
def test_peak_rss_within_budget_plus_runtime(onnxprobe, model, runtime_rss, command):
    path, folder, _ = model
    common = ["--input", folder / "in.npz", "--max-memory", f"{BUDGET_MIB}M", "-q"]
    if command == "run":
        cmd = [onnxprobe, "run", path, "--opt-level", "all", "-o", folder / "rss.npz"] + common
    else:
        # --latency-runs 0: timing each side resets the process's high-water mark (clear_refs)
        cmd = [onnxprobe, "compare", path, path, "--b-opt-level", "all", "--latency-runs", "0",
               "--json", folder / "rss.json"] + common
    rc, rss, _, err = peak_rss_mib(cmd)
    assert rc == 0, err
    data_mib = os.path.getsize(folder / sparse_model.DATA_FILE) >> 20
    assert rss <= BUDGET_MIB + runtime_rss + SLACK_MIB, (rss, runtime_rss, data_mib)
    if command == "compare":
        with open(folder / "rss.json") as f:
            summary = json.load(f)["summary"]
        assert summary["failed"] == 0 and summary["compared"] >= 3, summary


@pytest.mark.skipif(SANITIZE, reason="sanitizer shadow memory inflates RSS")
def test_embedded_weights_are_mapped_not_copied(onnxprobe, tmp_path):
    """A 195 MiB embedded table read by Gather at a few rows: neither onnxprobe nor the runtime
    holds a copy of it (sessions reference the .onnx file's own bytes, which the runtime maps)."""
    path, picked = sparse_model.make_embedded(str(tmp_path))
    rng = np.random.default_rng(3)
    ids = rng.choice(picked, sparse_model.SEQ).reshape(1, sparse_model.SEQ)
    np.savez(tmp_path / "in.npz", ids=ids)
    table_mib = os.path.getsize(path) >> 20
    assert table_mib > 190
    for cmd in ([onnxprobe, "run", path, "--input", tmp_path / "in.npz", "-q", "-o", tmp_path / "r.npz"],
                [onnxprobe, "compare", path, path, "--b-opt-level", "all", "--latency-runs", "0",
                 "--max-memory", "64M", "--input", tmp_path / "in.npz", "-q"]):
        rc, rss, _, err = peak_rss_mib(cmd)
        assert rc == 0, err
        # the process and the runtime take ~50 MiB: one copy of the table would double that
        assert rss < 50 + table_mib / 2, (cmd[1], rss, table_mib)
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    w = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    expected = np.maximum(w["E"][ids] @ w["W1"] + w["b1"], 0) @ w["W2"]
    with np.load(tmp_path / "r.npz") as got:
        np.testing.assert_allclose(got["y"], expected, rtol=1e-5, atol=1e-5)


def test_a_model_reached_through_a_symbolic_link(onnxprobe, tmp_path):
    """A model hub's cache: snapshots/<rev>/model.onnx links to blobs/<hash>. ONNX Runtime resolves
    external data to its real path and refuses one outside the folder it was given, so the
    references to the file's own embedded weights must name the real file; both runtimes run it
    and give numpy's numbers."""
    (tmp_path / "blobs").mkdir()
    path, picked = sparse_model.make_embedded(str(tmp_path / "blobs"))
    blob = tmp_path / "blobs" / "8d1f0c"
    os.rename(path, blob)
    snap = tmp_path / "snapshots" / "main"
    snap.mkdir(parents=True)
    (snap / "model.onnx").symlink_to(os.path.relpath(blob, snap))
    rng = np.random.default_rng(4)
    ids = rng.choice(picked, sparse_model.SEQ).reshape(1, sparse_model.SEQ)
    np.savez(tmp_path / "in.npz", ids=ids)
    import onnx
    from onnx import numpy_helper
    w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(blob)).graph.initializer}
    expected = np.maximum(w["E"][ids] @ w["W1"] + w["b1"], 0) @ w["W2"]
    for extra in ([], ["--ort-version", "1.20.1"]):
        out = tmp_path / f"r{len(extra)}.npz"
        r = run([onnxprobe, "run", snap / "model.onnx", "--input", tmp_path / "in.npz", "-q", "-o", out] + extra)
        assert r.returncode == 0, r.stderr
        with np.load(out) as got:
            np.testing.assert_allclose(got["y"], expected, rtol=1e-5, atol=1e-5)
    r = run([onnxprobe, "compare", snap / "model.onnx", "--b-opt-level", "all", "--latency-runs", "0",
             "--input", tmp_path / "in.npz", "-q"])
    assert r.returncode == 0, r.stdout + r.stderr
