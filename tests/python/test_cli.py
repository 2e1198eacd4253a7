"""End-to-end runs of the onnxprobe binary on real files. Expected values come from numpy."""
import hashlib
import json
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import models
from conftest import run

X = np.array([[0.5, -2.0, 1.0], [-0.25, 0.75, -1.5]], dtype=np.float32)


@pytest.fixture
def chain(tmp_path):
    path = tmp_path / "chain.onnx"
    models.chain_model(path)
    np.save(tmp_path / "X.npy", X)
    return path


def load_dump(folder):
    manifest = json.loads((folder / "manifest.json").read_text())
    return manifest, {t["name"]: np.load(folder / t["file"]) for t in manifest["tensors"] if t["kind"] == "tensor"}


def one_line_error(r, *needles):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_version(onnxprobe):
    r = run([onnxprobe, "--version"])
    assert r.returncode == 0
    assert r.stdout.startswith("onnxprobe ")
    assert "onnxruntime 1." in r.stdout


def test_inspect_text(onnxprobe, chain):
    r = run([onnxprobe, "inspect", chain])
    assert r.returncode == 0, r.stderr
    assert "float32[batch, 3]" in r.stdout
    assert hashlib.sha256(chain.read_bytes()).hexdigest() in r.stdout
    assert hashlib.md5(chain.read_bytes()).hexdigest() in r.stdout


def test_inspect_json(onnxprobe, chain):
    r = run([onnxprobe, "inspect", chain, "--json", "--tensors"])
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["sha256"] == hashlib.sha256(chain.read_bytes()).hexdigest()
    assert j["inputs"] == [{"name": "X", "dtype": "float32", "shape": ["batch", 3]}]
    assert j["op_counts"] == {"Add": 1, "Relu": 1, "MatMul": 1, "Sigmoid": 1}
    assert j["param_count"] == models.W.size + models.B.size
    inits = {i["name"]: i for i in j["initializers"]}
    assert inits["W"]["sha256"] == hashlib.sha256(models.W.tobytes()).hexdigest()
    assert inits["B"]["shape"] == [3, 4]
    names = [t["name"] for t in j["tensors"] if t["kind"] in ("intermediate", "output")]
    assert names == ["added", "relu_out", "mm", "Y"]


def test_inspect_orders_shuffled_graph_topologically(onnxprobe, tmp_path):
    path = tmp_path / "shuffled.onnx"
    models.chain_model(path, shuffle=True)
    j = json.loads(run([onnxprobe, "inspect", path, "--json", "--tensors"]).stdout)
    produced = [(t["topo_index"], t["name"]) for t in j["tensors"] if "topo_index" in t]
    assert [n for _, n in sorted(produced)] == ["added", "relu_out", "mm", "Y"]


def test_run_dump_matches_numpy(onnxprobe, chain, tmp_path):
    out = tmp_path / "dump"
    r = run([onnxprobe, "run", chain, "--input", tmp_path / "X.npy", "-o", out])
    assert r.returncode == 0, r.stderr
    manifest, tensors = load_dump(out)
    ref = models.chain_reference(X)
    assert list(tensors) == ["added", "relu_out", "mm", "Y"]
    for name, expected in ref.items():
        np.testing.assert_allclose(tensors[name], expected, rtol=1e-6, atol=1e-7)
    entry = {t["name"]: t for t in manifest["tensors"]}
    assert entry["mm"]["node"] == "matmul" and entry["mm"]["op_type"] == "MatMul"
    assert entry["mm"]["topo_index"] == 2 and entry["mm"]["shape"] == [2, 4] and entry["mm"]["dtype"] == "float32"
    assert entry["mm"]["stats"]["max"] == pytest.approx(float(ref["mm"].max()), rel=1e-6)
    assert entry["X"]["kind"] == "input"
    np.testing.assert_array_equal(np.load(out / entry["X"]["file"]), X)
    assert manifest["runs"] == 1
    assert manifest["model_sha256"] == hashlib.sha256(chain.read_bytes()).hexdigest()


def test_run_npz(onnxprobe, chain, tmp_path):
    out = tmp_path / "d.npz"
    r = run([onnxprobe, "run", chain, "--input", tmp_path / "X.npy", "-o", out])
    assert r.returncode == 0, r.stderr
    with np.load(out) as z:
        ref = models.chain_reference(X)
        for name, expected in ref.items():
            np.testing.assert_allclose(z[name], expected, rtol=1e-6, atol=1e-7)
        manifest = json.loads(z["manifest.json"])
    assert [t["name"] for t in manifest["tensors"] if t["kind"] == "tensor"] == list(ref)


@pytest.mark.parametrize("flags,expected", [
    (["--op-types", "Relu,Sigmoid"], ["relu_out", "Y"]),
    (["--regex", "^(mm|add.*)$"], ["added", "mm"]),
    (["--tensors", "mm"], ["mm"]),
])
def test_run_selection(onnxprobe, chain, tmp_path, flags, expected):
    out = tmp_path / "sel"
    r = run([onnxprobe, "run", chain, "--input", tmp_path / "X.npy", "-o", out] + flags)
    assert r.returncode == 0, r.stderr
    _, tensors = load_dump(out)
    assert list(tensors) == expected


def test_memory_budget_splits_runs_and_keeps_values(onnxprobe, chain, tmp_path):
    out = tmp_path / "budget"
    # each tensor is 2x3 or 2x4 float32 (24-32 bytes): a 40-byte budget holds one at a time
    r = run([onnxprobe, "run", chain, "--input", tmp_path / "X.npy", "-o", out, "--max-memory", "40"])
    assert r.returncode == 0, r.stderr
    manifest, tensors = load_dump(out)
    assert manifest["runs"] == 4
    assert "in 4 runs" in r.stdout
    for name, expected in models.chain_reference(X).items():
        np.testing.assert_allclose(tensors[name], expected, rtol=1e-6, atol=1e-7)


def test_a_sequence_value_is_captured_as_its_values(onnxprobe, tmp_path):
    """x -> Relu -> r; SequenceConstruct(r, r) -> seq (a graph output ONNX Runtime returns as a list)."""
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Neg", ["r"], ["n"], name="neg"),
         helper.make_node("SequenceConstruct", ["r", "n"], ["seq"], name="pack")],
        "seq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [2])])
    path = tmp_path / "seq.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = np.array([1.5, -2.0], np.float32)
    np.save(tmp_path / "x.npy", x)
    # independent: ONNX Runtime's Python API returns the value as a list of arrays
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    code = ("import sys, numpy as np, onnxruntime as ort\n"
            "v = ort.InferenceSession(sys.argv[1]).run(['seq'], {'x': np.load(sys.argv[2])})[0]\n"
            "print(type(v).__name__); np.save(sys.argv[3], np.stack(v))\n")
    assert run([py, "-c", code, path, tmp_path / "x.npy", tmp_path / "ref.npy"]).stdout.strip() == "list"
    out, js = tmp_path / "dump", tmp_path / "run.json"
    r = run([onnxprobe, "run", path, "--input", tmp_path / "x.npy", "-o", out, f"--json={js}"])
    assert r.returncode == 0, r.stderr
    man = json.loads((out / "manifest.json").read_text())
    assert man["skipped_tensors"] == []
    entry = next(t for t in man["tensors"] if t["name"] == "seq")
    np.testing.assert_array_equal(np.load(out / entry["file"]), np.load(tmp_path / "ref.npy"))


def test_a_sequence_of_strings_is_skipped_with_its_kind(onnxprobe, tmp_path):
    """x -> Relu -> r; a Constant of strings packed twice in a sequence: no values to compare."""
    from onnx import TensorProto, helper
    words = helper.make_tensor("w", TensorProto.STRING, [2], [b"a", b"b"])
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Constant", [], ["words"], name="words", value=words),
         helper.make_node("SequenceConstruct", ["words", "words"], ["seq"], name="pack")],
        "s", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2]),
         helper.make_tensor_sequence_value_info("seq", TensorProto.STRING, [2])])
    path = tmp_path / "strings.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    out, js = tmp_path / "dump", tmp_path / "run.json"
    r = run([onnxprobe, "run", path, "-o", out, f"--json={js}"])
    assert r.returncode == 0, r.stderr
    reason = "not a tensor, and its values do not flatten: output 'seq' element 0 holds strings"
    for doc in (json.loads(js.read_text()), json.loads((out / "manifest.json").read_text())):
        seq = [s for s in doc["skipped_tensors"] if s["name"] == "seq"]
        assert seq == [{"name": "seq", "kind": "not_a_tensor", "reason": reason}], doc["skipped_tensors"]
    assert "skipped  seq: not a tensor" in r.stdout


def test_a_dump_with_an_unknown_optimization_level_is_refused(onnxprobe, chain, tmp_path):
    out = tmp_path / "dump"
    assert run([onnxprobe, "run", chain, "--input", tmp_path / "X.npy", "-o", out]).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["optimization_level"] = 3  # ONNX Runtime has 0, 1, 2 and 99
    (out / "manifest.json").write_text(json.dumps(manifest))
    r = run([onnxprobe, "inspect", out])
    assert r.returncode == 2
    one_line_error(r, "manifest.json", "optimization level 3")


def test_observer_check(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "--dim", "batch=2", "-o", tmp_path / "o", "--check-observer"])
    assert r.returncode == 0, r.stderr
    assert "bit-identical" in r.stdout


def decomposed_layernorm(path, d=768):
    """LayerNorm written out op by op: optimizations fuse it into one kernel in a plain run, but not
    when capture marks its intermediates as outputs, so capturing changes Y by float rounding."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("ReduceMean", ["X"], ["mean"], axes=[-1]),
             helper.make_node("Sub", ["X", "mean"], ["xc"]),
             helper.make_node("Pow", ["xc", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
             helper.make_node("Add", ["var", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["std"]),
             helper.make_node("Div", ["xc", "std"], ["norm"]),
             helper.make_node("Mul", ["norm", "gamma"], ["scaled"]),
             helper.make_node("Add", ["scaled", "beta"], ["Y"])]
    inits = [numpy_helper.from_array(np.array(2, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "gamma"),
             numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "beta")]
    g = helper.make_graph(nodes, "layernorm", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [64, d])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


def test_observer_check_reports_the_magnitude_of_a_change(onnxprobe, tmp_path):
    model = tmp_path / "ln.onnx"
    decomposed_layernorm(model)
    # by default an optimized run captures only what its optimized graph keeps: no observer effect
    r = run([onnxprobe, "run", model, "-o", tmp_path / "fused", "--check-observer", "--opt-level", "all"])
    assert r.returncode == 0 and "bit-identical" in r.stdout, r.stdout + r.stderr
    # marking the fused-away tensors too blocks the LayerNorm fusion and changes Y
    flags = ["--opt-level", "all", "--seed", "3", "--capture-fused"]
    r = run([onnxprobe, "run", model, "-o", tmp_path / "all", "--check-observer"] + flags)
    assert r.returncode == 1, r.stderr
    rj = run([onnxprobe, "run", model, "-o", tmp_path / "all2", "--check-observer", "--json"] + flags)
    assert rj.returncode == 1, rj.stderr
    # reference: Y captured alone (a graph output: nothing extra marked, the plain run's graph)
    assert run([onnxprobe, "run", model, "-o", tmp_path / "plain", "--tensors", "Y"] + flags[:-1]).returncode == 0
    captured = load_dump(tmp_path / "all")[1]["Y"].astype(np.float64)
    plain = load_dump(tmp_path / "plain")[1]["Y"].astype(np.float64)
    d = np.abs(captured - plain)
    assert d.max() > 0
    diff, = json.loads(rj.stdout)["observer_differences"]
    assert diff["name"] == "Y"
    assert diff["max_abs"] == pytest.approx(d.max(), rel=1e-12)
    nz = plain != 0
    assert diff["max_rel"] == pytest.approx((d[nz] / np.abs(plain[nz])).max(), rel=1e-12)
    assert diff["differing"] == int((captured != plain).sum()) and diff["elements"] == plain.size
    assert f"Y: max abs difference {d.max():.3g}," in r.stdout, r.stdout  # %g, never 0.000000


def test_random_inputs_are_seeded(onnxprobe, chain, tmp_path):
    for i in range(2):
        assert run([onnxprobe, "run", chain, "--shape", "X:4x3", "--seed", "7", "-o", tmp_path / f"s{i}"]).returncode == 0
    run([onnxprobe, "run", chain, "--shape", "X:4x3", "--seed", "8", "-o", tmp_path / "s2"])
    a, b, c = (load_dump(tmp_path / f"s{i}")[1]["Y"] for i in range(3))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (4, 4)


def test_random_input_range(onnxprobe, chain, tmp_path):
    out = tmp_path / "r"
    assert run([onnxprobe, "run", chain, "--dim", "batch=64", "--range", "X:2,3", "-o", out]).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    x = np.load(out / [t for t in manifest["tensors"] if t["name"] == "X"][0]["file"])
    assert x.shape == (64, 3) and x.min() >= 2 and x.max() < 3


def test_input_from_tensorproto_and_npz(onnxprobe, chain, tmp_path):
    (tmp_path / "input_0.pb").write_bytes(numpy_helper.from_array(X, "X").SerializeToString())
    np.savez(tmp_path / "in.npz", X=X)
    for spec in (tmp_path / "input_0.pb", tmp_path / "in.npz", f"X={tmp_path / 'X.npy'}"):
        out = tmp_path / "pb"
        r = run([onnxprobe, "run", chain, "--input", spec, "-o", out])
        assert r.returncode == 0, r.stderr
        np.testing.assert_allclose(load_dump(out)[1]["Y"], models.chain_reference(X)["Y"], rtol=1e-6)


@pytest.mark.parametrize("setup,needles", [
    (lambda d: np.save(d / "X.npy", np.zeros((2, 5), np.float32)), ["input 'X'", "expected shape", "[2, 5]"]),
    (lambda d: np.save(d / "X.npy", np.zeros((2, 3), np.float64)), ["input 'X'", "expected float32", "float64"]),
])
def test_bad_inputs(onnxprobe, chain, tmp_path, setup, needles):
    for f in tmp_path.glob("*.npy"):
        f.unlink()
    setup(tmp_path)
    (f,) = list(tmp_path.glob("*.npy"))
    out = tmp_path / "never"
    r = run([onnxprobe, "run", chain, "--input", f, "-o", out])
    assert r.returncode == 2
    one_line_error(r, *needles)
    assert not out.exists()


def test_named_input_that_the_model_lacks(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "--input", f"Z={tmp_path / 'X.npy'}", "-o", tmp_path / "never"])
    assert r.returncode == 2
    one_line_error(r, "input 'Z'", "not an input", "inputs: X")


def test_bare_npy_binds_to_the_only_input_and_says_so(onnxprobe, chain, tmp_path):
    np.save(tmp_path / "data.npy", X)
    out = tmp_path / "o"
    r = run([onnxprobe, "run", chain, "--input", tmp_path / "data.npy", "-o", out])
    assert r.returncode == 0, r.stderr
    line = one_line_error(r, "data.npy", "input 'X'")
    assert line.startswith("onnxprobe: note: ")
    manifest, tensors = load_dump(out)
    np.testing.assert_allclose(tensors["Y"], models.chain_reference(X)["Y"], rtol=1e-6)


def two_input_model(path):
    from onnx import helper, TensorProto
    g = helper.make_graph([helper.make_node("Add", ["A", "B"], ["C"])], "two",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "AB"],
                          [helper.make_tensor_value_info("C", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


def test_bare_npy_on_a_model_with_several_inputs_asks_for_a_name(onnxprobe, tmp_path):
    two_input_model(tmp_path / "two.onnx")
    np.save(tmp_path / "data.npy", np.ones(2, np.float32))
    r = run([onnxprobe, "run", tmp_path / "two.onnx", "--input", tmp_path / "data.npy", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "--input", "data.npy", "inputs: A, B", "NAME=")
    assert not (tmp_path / "o").exists()


def test_empty_npz_is_an_error_not_random_inputs(onnxprobe, chain, tmp_path):
    np.savez(tmp_path / "nothing.npz")
    r = run([onnxprobe, "run", chain, "--dim", "batch=2", "--input", tmp_path / "nothing.npz", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "nothing.npz", "no arrays")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("specs", [
    ["X.npy", "X.npy"],                # the same file twice
    ["X.npy", "X=other.npy"],          # two files for one input
    ["in.npz", "X.npy"],               # an archive and a file for one input
])
def test_same_input_given_twice(onnxprobe, chain, tmp_path, specs):
    np.save(tmp_path / "other.npy", X)
    np.savez(tmp_path / "in.npz", X=X)
    args = []
    for s in specs:
        name, _, f = s.rpartition("=")
        args += ["--input", (f"{name}=" if name else "") + str(tmp_path / f)]
    r = run([onnxprobe, "run", chain, *args, "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "input 'X'", "given twice")


def test_dim_that_names_no_dimension(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "--dim", "bacth=2", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "--dim", "'bacth'", "named dimensions: batch")


def test_a_symbolic_dim_no_option_sets_is_1_and_says_so(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "-o", tmp_path / "x.npz"])
    assert r.returncode == 0, r.stderr
    assert "symbolic dimension 'batch' is set to 1" in r.stderr and "--dim batch=N" in r.stderr
    with np.load(tmp_path / "x.npz") as z:
        assert z["input:X"].shape[0] == 1
    r = run([onnxprobe, "run", chain, "--dim", "batch=3", "-o", tmp_path / "y.npz"])
    assert r.returncode == 0 and "set to 1" not in r.stderr
    with np.load(tmp_path / "y.npz") as z:
        assert z["input:X"].shape[0] == 3


def test_missing_input_when_files_given(onnxprobe, tmp_path):
    two_input_model(tmp_path / "two.onnx")
    np.save(tmp_path / "A.npy", np.ones(2, np.float32))
    r = run([onnxprobe, "run", tmp_path / "two.onnx", "--input", tmp_path / "A.npy", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "input 'B'", "missing")


@pytest.mark.parametrize("make,needles", [
    (None, ["no such file"]),
    (lambda p: p.write_bytes(b""), ["empty"]),
    (lambda p: p.write_text("this is not a model\n" * 10), ["not"]),
    ("truncated", ["truncated or corrupt"]),
    ("dir", ["directory"]),
])
def test_bad_model_files(onnxprobe, chain, tmp_path, make, needles):
    bad = tmp_path / "bad.onnx"
    if make == "truncated":
        bad.write_bytes(chain.read_bytes()[: len(chain.read_bytes()) // 2])
    elif make == "dir":
        bad.mkdir()
    elif make is not None:
        make(bad)
    for cmd in (["inspect", bad], ["run", bad, "-o", tmp_path / "o"]):
        r = run([onnxprobe] + cmd)
        assert r.returncode == 2, (cmd, r.stderr)
        one_line_error(r, "bad.onnx", *needles)
    assert not (tmp_path / "o").exists()


def test_unsupported_op_is_a_backend_failure(onnxprobe, tmp_path):
    models.custom_op_model(tmp_path / "custom.onnx")
    out = tmp_path / "o"
    r = run([onnxprobe, "run", tmp_path / "custom.onnx", "-o", out])
    assert r.returncode == 3
    one_line_error(r, "NoSuchOp")
    assert not out.exists() and not list(tmp_path.glob("o.tmp*"))


def test_unknown_provider_is_an_error_not_a_fallback(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "--dim", "batch=1", "--provider", "CUDA", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "CUDA", "not available", "CPUExecutionProvider")


def test_external_data_runs(onnxprobe, tmp_path):
    path, wbig = models.external_data_model(tmp_path)
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "o"
    r = run([onnxprobe, "run", path, "--input", tmp_path / "X.npy", "-o", out])
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(load_dump(out)[1]["mm"], X @ wbig, rtol=1e-6)
    j = json.loads(run([onnxprobe, "inspect", path, "--json"]).stdout)
    assert j["initializers"][0]["external"] is True
    assert j["initializers"][0]["sha256"] == hashlib.sha256(wbig.tobytes()).hexdigest()


@pytest.mark.parametrize("location,needles", [
    ("../outside.bin", ["escapes the model folder"]),
    ("/etc/hostname", ["absolute path"]),
    ("missing.bin", ["missing"]),
    ("link.bin", ["outside the model folder"]),
])
def test_external_data_rejected(onnxprobe, tmp_path, location, needles):
    folder = tmp_path / "m"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(b"\0" * 48)
    if location == "link.bin":
        os.symlink(tmp_path / "outside.bin", folder / "link.bin")
    path, _ = models.external_data_model(folder, location=location, write_data=False)
    r = run([onnxprobe, "inspect", path])
    assert r.returncode == 2
    one_line_error(r, "Wbig", *needles)


def test_subgraph_tensors_listed_but_not_capturable(onnxprobe, tmp_path):
    models.if_model(tmp_path / "if.onnx")
    j = json.loads(run([onnxprobe, "inspect", tmp_path / "if.onnx", "--json", "--tensors"]).stdout)
    inner = [t for t in j["tensors"] if t["name"] == "then_inner"]
    assert inner and inner[0]["kind"] == "subgraph" and inner[0]["inside_node"] == "branch"
    r = run([onnxprobe, "run", tmp_path / "if.onnx", "--tensors", "then_inner", "-o", tmp_path / "o"])
    assert r.returncode == 2
    one_line_error(r, "then_inner", "branch", "cannot be captured")
    out = tmp_path / "all"
    x = np.array([1.0, -3.0], np.float32)
    np.save(tmp_path / "X.npy", x)
    r = run([onnxprobe, "run", tmp_path / "if.onnx", "--input", tmp_path / "X.npy", "-o", out])
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(load_dump(out)[1]["Y"], x)  # sum < 0: else branch


def test_output_parent_missing(onnxprobe, chain, tmp_path):
    r = run([onnxprobe, "run", chain, "--dim", "batch=1", "-o", tmp_path / "no" / "such" / "dump"])
    assert r.returncode == 2
    one_line_error(r, "does not exist")


def test_refuses_to_replace_a_foreign_folder(onnxprobe, chain, tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    r = run([onnxprobe, "run", chain, "--dim", "batch=1", "-o", target])
    assert r.returncode == 2
    assert (target / "notes.txt").read_text() == "keep me"
    assert not list(tmp_path.glob("precious.tmp*"))


def test_demo_model_softmax_rows_sum_to_one(onnxprobe, tmp_path):
    src = os.environ["ONNXPROBE_SRC"]
    out = tmp_path / "demo"
    r = run([onnxprobe, "run", f"{src}/tests/data/demo/demo_cnn.onnx", "--dim", "batch=3", "-o", out])
    assert r.returncode == 0, r.stderr
    manifest, tensors = load_dump(out)
    assert len(tensors) == 10
    np.testing.assert_allclose(tensors["probs"].sum(axis=1), np.ones(3), rtol=1e-5)
    logits = tensors["/classifier/Gemm_output_0"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(tensors["probs"], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("args,needles", [
    (["run"], ["no MODEL"]),
    (["run", "m.onnx", "--max-memory", "lots"], ["byte size"]),
    (["run", "m.onnx", "--shape", "X"], ["--shape"]),
    (["run", "m.onnx", "--opt-level", "9"], ["--opt-level"]),
    (["run", "m.onnx", "--bogus"], ["unknown option"]),
    (["frobnicate"], ["unknown command"]),
])
def test_usage_errors(onnxprobe, args, needles):
    r = run([onnxprobe] + args)
    assert r.returncode == 2
    for n in needles:
        assert n in r.stderr


@pytest.mark.parametrize("first", ["d1", "d1.npz"])
def test_inputs_reused_from_an_earlier_dump(onnxprobe, chain, tmp_path, first):
    a, b = tmp_path / first, tmp_path / "again"
    assert run([onnxprobe, "run", chain, "--dim", "batch=5", "--seed", "3", "-o", a]).returncode == 0
    r = run([onnxprobe, "run", chain, "--input", a, "-o", b])
    assert r.returncode == 0, r.stderr
    ya = np.load(a)["Y"] if first.endswith(".npz") else load_dump(a)[1]["Y"]
    np.testing.assert_array_equal(load_dump(b)[1]["Y"], ya)
    assert ya.shape == (5, 4)
