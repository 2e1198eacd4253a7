"""SIGINT/SIGTERM during a run leave no temporaries and no half-written output (issue 16, defect 3)."""
import os
import signal
import subprocess
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def big_chain(path, size=1024, layers=24):
    """X @ W -> Tanh, `layers` times: every intermediate is a size x size float32 (4 MB at 1024)."""
    w = (np.random.default_rng(0).standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
    nodes, prev = [], "X"
    for i in range(layers):
        nodes.append(helper.make_node("MatMul", [prev, "W"], [f"mm{i}"], name=f"matmul{i}"))
        nodes.append(helper.make_node("Tanh", [f"mm{i}"], [f"t{i}"], name=f"tanh{i}"))
        prev = f"t{i}"
    g = helper.make_graph(nodes, "big_chain",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [size, size])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [size, size])],
                          [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "big_chain.onnx"
    big_chain(path)
    return path


def temporaries(folder):
    return [n for n in os.listdir(folder) if ".tmp" in n]


def wait_until_writing(proc, folder, output, timeout=120):
    """Polls until the output's temporary exists and holds data, so the signal lands mid-write."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be interrupted"
        for name in temporaries(folder):
            path = os.path.join(folder, name)
            if not name.startswith(output.name):
                continue
            if os.path.isdir(path) and sum(n.endswith(".npy") for n in os.listdir(path)) >= 3:
                return
            if os.path.isfile(path) and os.path.getsize(path) > (8 << 20):
                return
        time.sleep(0.005)
    pytest.fail("no temporary output appeared")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("suffix", ["dump", "npz"])
def test_interrupted_run_leaves_no_temporaries(onnxprobe, big_model, tmp_path, sig, suffix):
    out = tmp_path / f"out.{suffix}"
    # several runs under a small budget keep it writing for a while
    proc = subprocess.Popen([onnxprobe, "run", big_model, "-o", out, "-q", "--max-memory", "24M"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    try:
        wait_until_writing(proc, tmp_path, out)
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -sig, proc.stderr.read().decode()
    assert temporaries(tmp_path) == []
    assert not out.exists()  # complete or absent, never half-written
