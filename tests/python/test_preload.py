"""Capture inside a deployed process: libonnxprobe_preload.so preloaded into a C and a C++
application that link ONNX Runtime themselves. The applications' outputs must not change by a
bit; the dumps must equal `onnxprobe run` dumps of the same inputs (compared with numpy); bad
configuration is one stderr line naming the variable, and the application's exit status stays."""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import run

# In the sanitizer build the applications and the preload are instrumented alike; the preload
# then comes before the sanitizer runtime in the initial library list, which ASan accepts when
# told not to verify that order.
SANITIZE = os.environ.get("ONNXPROBE_SANITIZE") in ("1", "ON", "TRUE", "true")

SRC = os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
SHAPE = (1, 3, 32, 32)
CLASSES = 10


def _env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set; run the suite through ctest (make test)")
    return value


@pytest.fixture(scope="module")
def preload():
    return _env("ONNXPROBE_PRELOAD_LIB")


def app_input(run_id):
    """The formula both applications use for element i of run `run_id` (exact in float32)."""
    i = np.arange(np.prod(SHAPE), dtype=np.int64)
    return (((i * 7 + run_id * 13) % 256 - 128).astype(np.float32) / np.float32(64)).reshape(SHAPE)


def launch(cmd, preload_lib=None, **env_vars):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONNXPROBE_") or k == "ONNXPROBE_BIN"}
    env.pop("LD_PRELOAD", None)
    if preload_lib:
        env["LD_PRELOAD"] = preload_lib
        if SANITIZE:
            env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"),
                                                         "verify_asan_link_order=0"]))
    env.update({k: str(v) for k, v in env_vars.items()})
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, env=env)


def outputs(path):
    return np.fromfile(path, dtype=np.float32).reshape(-1, CLASSES)


def read_dump(folder):
    with open(os.path.join(folder, "manifest.json")) as fh:
        manifest = json.load(fh)
    arrays = {}
    for e in manifest["tensors"]:
        arrays[(e["kind"], e["name"])] = np.load(os.path.join(folder, e["file"]))
    return manifest, arrays


def dump_folders(root):
    found = []
    for session in sorted(os.listdir(root)):
        sdir = os.path.join(root, session)
        if not os.path.isdir(sdir):
            continue
        for r in sorted(os.listdir(sdir)):
            if r.startswith("run") and os.path.isdir(os.path.join(sdir, r)):
                found.append((session, r, os.path.join(sdir, r)))
    return found


def onnxprobe_run_reference(onnxprobe, tmp_path, x, opt_level, tag):
    npy = tmp_path / f"{tag}_input.npy"
    np.save(npy, x)
    out = tmp_path / f"{tag}_ref"
    r = run([onnxprobe, "run", MODEL, "--input", f"input={npy}", "-o", out, "--opt-level", opt_level,
             "--intra-threads", "1", "-q"])
    assert r.returncode == 0, r.stderr
    return read_dump(out)[1]


def assert_bitwise(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    assert a.tobytes() == b.tobytes(), f"{what}: values differ (max |diff| {np.max(np.abs(a - b))})"


def test_unset_changes_nothing(preload, tmp_path):
    app = _env("DEPLOYED_C")
    plain = launch([app, MODEL, 3, tmp_path / "plain.bin"])
    assert plain.returncode == 0, plain.stderr
    loaded = launch([app, MODEL, 3, tmp_path / "loaded.bin"], preload_lib=preload)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stderr == plain.stderr
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "loaded.bin").read_bytes()
    assert outputs(tmp_path / "plain.bin").shape == (3, CLASSES)


def test_c_application_dumps_equal_onnxprobe_run(preload, onnxprobe, tmp_path):
    app = _env("DEPLOYED_C")
    plain = launch([app, MODEL, 5, tmp_path / "plain.bin"])
    assert plain.returncode == 0, plain.stderr
    dumps = tmp_path / "dumps"
    r = launch([app, MODEL, 5, tmp_path / "probed.bin"], preload_lib=preload,
               ONNXPROBE_CAPTURE=dumps, ONNXPROBE_EVERY=2, ONNXPROBE_MAX_RUNS=2)
    assert r.returncode == 0, r.stderr
    assert r.stderr == plain.stderr
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "probed.bin").read_bytes()
    app_out = outputs(tmp_path / "plain.bin")

    found = dump_folders(dumps)
    assert [f[1] for f in found] == ["run000001", "run000003"]  # every 2nd run, at most 2
    assert len({f[0] for f in found}) == 1
    for _, run_name, folder in found:
        run_index = int(run_name[3:]) - 1
        manifest, arrays = read_dump(folder)
        assert manifest["session"]["graph_optimization_level"] == "disabled"
        assert manifest["session"]["intra_op_threads"] == "1"
        assert manifest["model"] == MODEL
        x = app_input(run_index)
        assert_bitwise(arrays[("input", "input")], x, f"{run_name} input")
        # the shadow run saw what the application's own run computed
        assert_bitwise(arrays[("tensor", "probs")], app_out[run_index][None, :], f"{run_name} probs")
        ref = onnxprobe_run_reference(onnxprobe, tmp_path, x, "disabled", run_name)
        assert sorted(k for k in arrays if k[0] == "tensor") == sorted(k for k in ref if k[0] == "tensor")
        assert len(ref) > 5
        for key, a in ref.items():
            assert_bitwise(arrays[key], a, f"{run_name} {key}")

    # a deployed dump replays against the model under other session settings
    first = found[0][2]
    c = run([onnxprobe, "compare", first, MODEL, "--b-opt-level", "all"])
    assert c.returncode == 0, c.stdout + c.stderr


def test_session_from_memory_with_optimizations(preload, onnxprobe, tmp_path):
    app = _env("DEPLOYED_C")
    plain = launch([app, MODEL, 2, tmp_path / "plain.bin", "all", "array"])
    assert plain.returncode == 0, plain.stderr
    dumps = tmp_path / "dumps"
    r = launch([app, MODEL, 2, tmp_path / "probed.bin", "all", "array"], preload_lib=preload,
               ONNXPROBE_CAPTURE=dumps)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "probed.bin").read_bytes()
    found = dump_folders(dumps)
    assert [f[1] for f in found] == ["run000001", "run000002"]
    # the model the application passed in memory is kept next to its dumps
    session_dir = os.path.dirname(found[0][2])
    with open(MODEL, "rb") as a, open(os.path.join(session_dir, "model.onnx"), "rb") as b:
        assert a.read() == b.read()
    for _, run_name, folder in found:
        manifest, arrays = read_dump(folder)
        assert manifest["session"]["graph_optimization_level"] == "all"
        x = app_input(int(run_name[3:]) - 1)
        ref = onnxprobe_run_reference(onnxprobe, tmp_path, x, "all", run_name)
        assert sorted(arrays) == sorted(ref)
        for key, a in ref.items():
            assert_bitwise(arrays[key], a, f"{run_name} {key}")


def test_threads_sharing_one_session(preload, onnxprobe, tmp_path):
    app = _env("DEPLOYED_THREADS")
    threads, runs = 4, 5
    plain = launch([app, MODEL, threads, runs, tmp_path / "plain.bin"])
    assert plain.returncode == 0, plain.stderr
    dumps = tmp_path / "dumps"
    r = launch([app, MODEL, threads, runs, tmp_path / "probed.bin"], preload_lib=preload,
               ONNXPROBE_CAPTURE=dumps, ONNXPROBE_MAX_RUNS=0)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "probed.bin").read_bytes()
    app_out = outputs(tmp_path / "plain.bin")

    expected = {(t, k): app_input(t * 1000 + k) for t in range(threads) for k in range(runs)}
    found = dump_folders(dumps)
    assert len(found) == threads * runs
    seen = set()
    for _, run_name, folder in found:
        manifest, arrays = read_dump(folder)
        x = arrays[("input", "input")]
        match = [key for key, e in expected.items() if e.tobytes() == x.tobytes()]
        assert len(match) == 1, f"{run_name}: its input is none of the application's"
        t, k = match[0]
        seen.add(match[0])
        assert_bitwise(arrays[("tensor", "probs")], app_out[t * runs + k][None, :], f"{run_name} probs")
    assert seen == set(expected)  # every run captured once, with its own inputs
    # one of them in full against onnxprobe run
    _, run_name, folder = found[-1]
    _, arrays = read_dump(folder)
    ref = onnxprobe_run_reference(onnxprobe, tmp_path, arrays[("input", "input")], "disabled", "threads")
    for key, a in ref.items():
        assert_bitwise(arrays[key], a, f"{run_name} {key}")


def test_memory_budget_splits_capture(preload, onnxprobe, tmp_path):
    app = _env("DEPLOYED_C")
    dumps = tmp_path / "dumps"
    # the largest tensor of the demo CNN is 16x32x32 floats (64 KiB); the selection is larger
    r = launch([app, MODEL, 1, tmp_path / "probed.bin"], preload_lib=preload,
               ONNXPROBE_CAPTURE=dumps, ONNXPROBE_MAX_MEMORY="100K")
    assert r.returncode == 0, r.stderr
    (_, run_name, folder), = dump_folders(dumps)
    manifest, arrays = read_dump(folder)
    assert manifest["runs"] > 1
    ref = onnxprobe_run_reference(onnxprobe, tmp_path, app_input(0), "disabled", "budget")
    assert sorted(arrays) == sorted(ref)
    for key, a in ref.items():
        assert_bitwise(arrays[key], a, f"{run_name} {key}")


@pytest.mark.parametrize("variable,value,extra", [
    ("ONNXPROBE_CAPTURE", "{tmp}/a_file/dumps", {}),
    ("ONNXPROBE_REGEX", "(conv", {}),
    ("ONNXPROBE_MAX_MEMORY", "1K", {}),
    ("ONNXPROBE_MAX_MEMORY", "lots", {}),
    ("ONNXPROBE_EVERY", "0", {}),
    ("ONNXPROBE_TENSORS", "no_such_tensor", {}),
])
def test_bad_configuration_is_one_line_and_the_app_runs_on(preload, tmp_path, variable, value, extra):
    app = _env("DEPLOYED_C")
    (tmp_path / "a_file").write_text("not a folder")
    plain = launch([app, MODEL, 2, tmp_path / "plain.bin"])
    env = {"ONNXPROBE_CAPTURE": tmp_path / "dumps"}
    env[variable] = value.format(tmp=tmp_path)
    r = launch([app, MODEL, 2, tmp_path / "probed.bin"], preload_lib=preload, **env)
    assert r.returncode == plain.returncode == 0
    extra_lines = [l for l in r.stderr.splitlines() if l not in plain.stderr.splitlines()]
    assert len(extra_lines) == 1, r.stderr
    assert extra_lines[0].startswith("onnxprobe preload: " + variable), extra_lines[0]
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "probed.bin").read_bytes()
    # nothing captured, nothing left: not even an empty session folder
    assert not (tmp_path / "dumps").is_dir() or os.listdir(tmp_path / "dumps") == []


def test_the_probes_own_session_adds_no_runtime_warning_to_the_applications_stderr(preload, tmp_path):
    import onnx
    from onnx import numpy_helper

    # an unused initializer: onnxruntime warns once per session it creates for this model
    m = onnx.load(MODEL)
    m.graph.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "unused_weight"))
    model = tmp_path / "unused.onnx"
    onnx.save(m, model)
    app = _env("DEPLOYED_C")
    warning = "Removing initializer 'unused_weight'"
    plain = launch([app, model, 2, tmp_path / "plain.bin"])
    assert plain.returncode == 0 and plain.stderr.count(warning) == 1, plain.stderr
    probed = launch([app, model, 2, tmp_path / "probed.bin"], preload_lib=preload,
                    ONNXPROBE_CAPTURE=tmp_path / "dumps")
    assert probed.returncode == 0, probed.stderr
    # the application's own warning, once; nothing of ours (lines compared without their time)
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+")
    assert stamp.sub("T", probed.stderr) == stamp.sub("T", plain.stderr), probed.stderr
    assert len(dump_folders(tmp_path / "dumps")) == 2  # and the probe did capture


def test_runtime_errors_reach_the_application_unchanged(preload, tmp_path):
    import onnx
    from onnx import TensorProto, helper

    # an int64 input the application feeds with floats: its Run fails; a missing file: its
    # CreateSession fails. The probe must hand both errors back as they are.
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.INT64, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 4])])
    model = tmp_path / "int_input.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    app = _env("DEPLOYED_C")
    for target in (model, tmp_path / "missing.onnx"):
        plain = launch([app, target, 1, tmp_path / "o.bin"])
        probed = launch([app, target, 1, tmp_path / "o.bin"], preload_lib=preload,
                        ONNXPROBE_CAPTURE=tmp_path / "dumps")
        assert plain.returncode == 3, plain.stderr
        assert (probed.returncode, probed.stderr) == (plain.returncode, plain.stderr)
        assert plain.stderr.startswith("deployed_c: ")
    assert not dump_folders(tmp_path / "dumps")


@pytest.mark.skipif(SANITIZE, reason="an instrumented preload in an uninstrumented interpreter")
def test_python_onnxruntime_runs_on_and_is_not_captured(preload, tmp_path):
    # The documented limit: the wheel's extension module runs the runtime without OrtGetApiBase,
    # so the preload sees nothing. It must not disturb the process either.
    python = _env("ONNXPROBE_PYENV")
    script = ("import sys, numpy as np, onnxruntime as ort\n"
              "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
              "x = np.arange(3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32) / 3072\n"
              "sys.stdout.write(s.run(None, {'input': x})[0].tobytes().hex())\n")
    plain = launch([python, "-c", script, MODEL])
    probed = launch([python, "-c", script, MODEL], preload_lib=preload,
                    ONNXPROBE_CAPTURE=tmp_path / "dumps")
    assert plain.returncode == 0, plain.stderr
    assert (probed.returncode, probed.stdout) == (0, plain.stdout), probed.stderr
    assert len(plain.stdout) == CLASSES * 8
    assert not (tmp_path / "dumps").exists()


@pytest.mark.parametrize("mode,captured", [("global", True), ("local", True), ("handle", False)])
def test_applications_that_load_the_runtime_themselves(preload, tmp_path, mode, captured):
    # A runtime found through RTLD_DEFAULT is interposed, whether it was loaded globally or
    # locally; OrtGetApiBase looked up on the library's own handle is the documented limit.
    plain = launch([_env("DEPLOYED_C"), MODEL, 2, tmp_path / "plain.bin"])
    assert plain.returncode == 0, plain.stderr
    dumps = tmp_path / "dumps"
    r = launch([_env("DEPLOYED_DLOPEN"), MODEL, 2, tmp_path / "probed.bin"], preload_lib=preload,
               ONNXPROBE_CAPTURE=dumps, ORT_LIB=_env("ORT_LIB"), DLOPEN_MODE=mode)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plain.bin").read_bytes() == (tmp_path / "probed.bin").read_bytes()
    found = dump_folders(dumps) if dumps.is_dir() else []
    assert [f[1] for f in found] == (["run000001", "run000002"] if captured else [])
    for _, run_name, folder in found:
        _, arrays = read_dump(folder)
        assert_bitwise(arrays[("input", "input")], app_input(int(run_name[3:]) - 1), run_name)
