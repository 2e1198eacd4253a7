"""Memory budget and large-model behaviour (labelled slow in ctest; still run by make test)."""
import hashlib
import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import run

N = 8 * 1024 * 1024  # 32 MiB of float32 per intermediate tensor


def relu_chain(path, depth=24):
    nodes, prev = [], "X"
    for i in range(depth):
        op = "Relu" if i % 2 == 0 else "Neg"
        nodes.append(helper.make_node(op, [prev], [f"t{i}"], name=f"n{i}"))
        prev = f"t{i}"
    g = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [N])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [N])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


SANITIZE = os.environ.get("ONNXPROBE_SANITIZE") == "1"


def sha256_of_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


# A fresh interpreter starts the command: Linux carries the parent's high-water RSS into a
# vfork'ed child's ru_maxrss across exec, so a test process that built large arrays would inflate it.
LAUNCHER = """import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def peak_rss_mib(cmd):
    """Exit code, peak resident memory (MiB) of one child process via wait4's rusage, stdout, stderr."""
    result = f"/tmp/onnxprobe-rss-{os.getpid()}"
    r = subprocess.run([sys.executable, "-c", LAUNCHER, result] + [str(c) for c in cmd],
                       capture_output=True, text=True, timeout=600)
    rc, rss_kib = map(int, open(result).read().split())
    os.remove(result)
    return rc, rss_kib / 1024, r.stdout, r.stderr


@pytest.mark.skipif(SANITIZE, reason="sanitizer shadow memory inflates RSS")
def test_memory_budget_bounds_peak_rss(onnxprobe, tmp_path):
    relu_chain(tmp_path / "deep.onnx")
    total_mib = 24 * 32
    rc, free_rss, out, err = peak_rss_mib([onnxprobe, "run", tmp_path / "deep.onnx", "-o", tmp_path / "a.npz"])
    assert rc == 0, err
    budget = 128
    rc, rss, out, err = peak_rss_mib([onnxprobe, "run", tmp_path / "deep.onnx", "-o", tmp_path / "b.npz",
                                      "--max-memory", f"{budget}M"])
    assert rc == 0, err
    runs = int(out.split(" in ")[1].split(" run")[0])
    assert runs >= total_mib // budget
    # without a budget every activation is alive at once; with it, only a batch plus the model's
    # own working set (input, graph output, two live activations: 4 x 32 MiB) and the process
    # baseline (~35 MiB), with room for allocator slack
    assert free_rss > total_mib
    assert rss < budget + 4 * 32 + 96, (rss, free_rss)  # measured ~290 MiB
    assert rss < free_rss / 2
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        for k in ("t0", "t11", "t23"):
            np.testing.assert_array_equal(a[k], b[k])


def test_model_over_2gb_with_external_data(onnxprobe, tmp_path):
    # a 2.25 GB initializer in a sparse side file; a few known values written into it
    n = 2_400_000_000 // 4
    data = tmp_path / "big.bin"
    with open(data, "wb") as f:
        f.truncate(n * 4)
        for idx, val in ((0, 1.5), (n // 2, -2.0), (n - 1, 7.25)):
            f.seek(idx * 4)
            f.write(np.float32(val).tobytes())
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[n], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "big.bin"), ("offset", "0"), ("length", str(n * 4))):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph([helper.make_node("Gather", ["W", "I"], ["g"], name="gather"),
                           helper.make_node("Neg", ["g"], ["Y"], name="neg")], "big",
                          [helper.make_tensor_value_info("I", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    (tmp_path / "big.onnx").write_bytes(m.SerializeToString())
    np.save(tmp_path / "I.npy", np.array([0, n // 2, n - 1], dtype=np.int64))
    rc, rss, out, err = peak_rss_mib([onnxprobe, "inspect", tmp_path / "big.onnx", "--json"])
    assert rc == 0, err
    j = json.loads(out)
    assert j["param_bytes"] == n * 4 and j["initializers"][0]["external"]
    assert j["initializers"][0]["sha256"] == sha256_of_file(data)
    assert SANITIZE or rss < 128, rss  # the 2.4 GB stream through a few MiB (measured ~30 MiB)
    r = run([onnxprobe, "run", tmp_path / "big.onnx", "--input", tmp_path / "I.npy", "-o", tmp_path / "o"])
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    got = {t["name"]: np.load(tmp_path / "o" / t["file"]) for t in manifest["tensors"]}
    np.testing.assert_array_equal(got["g"], np.array([1.5, -2.0, 7.25], np.float32))
    np.testing.assert_array_equal(got["Y"], np.array([-1.5, 2.0, -7.25], np.float32))


@pytest.mark.skipif(SANITIZE, reason="sanitizer shadow memory inflates RSS")
def test_inspect_streams_weights_stored_in_the_model_file(onnxprobe, tmp_path):
    # 160 MiB of weights inside the .onnx: inspect hashes them as they stream by, holding none
    inits = [numpy_helper.from_array(np.full(1 << 20, i, dtype=np.float32), f"w{i}") for i in range(40)]
    nodes = [helper.make_node("Identity", [t.name], [f"o{t.name}"], name=f"id{t.name}") for t in inits]
    g = helper.make_graph(nodes, "weights", [], [helper.make_tensor_value_info(f"o{t.name}", TensorProto.FLOAT, None)
                                                for t in inits], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = tmp_path / "weights.onnx"
    path.write_bytes(m.SerializeToString())
    size_mib = path.stat().st_size / 2**20
    rc, rss, out, err = peak_rss_mib([onnxprobe, "inspect", path, "--json"])
    assert rc == 0, err
    j = json.loads(out)
    assert j["sha256"] == sha256_of_file(path)
    assert [i["sha256"] for i in j["initializers"]] == [
        hashlib.sha256(np.full(1 << 20, i, dtype=np.float32).tobytes()).hexdigest() for i in range(40)]
    assert rss < 0.5 * size_mib, (rss, size_mib)  # measured ~35 MiB for 160 MiB
