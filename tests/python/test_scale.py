"""Memory budget and large-model behaviour (labelled slow in ctest; still run by make test)."""
import json
import os
import resource
import subprocess

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


def peak_rss_mib(cmd):
    """Peak resident memory of one child process, via wait4's rusage."""
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    out, err = p.stdout.read(), p.stderr.read()
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, out, err


@pytest.mark.skipif(os.environ.get("ONNXPROBE_SANITIZE") == "1", reason="sanitizer shadow memory inflates RSS")
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
    r = run([onnxprobe, "inspect", tmp_path / "big.onnx", "--json"])
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["param_bytes"] == n * 4 and j["initializers"][0]["external"]
    r = run([onnxprobe, "run", tmp_path / "big.onnx", "--input", tmp_path / "I.npy", "-o", tmp_path / "o"])
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    got = {t["name"]: np.load(tmp_path / "o" / t["file"]) for t in manifest["tensors"]}
    np.testing.assert_array_equal(got["g"], np.array([1.5, -2.0, 7.25], np.float32))
    np.testing.assert_array_equal(got["Y"], np.array([-1.5, 2.0, -7.25], np.float32))
