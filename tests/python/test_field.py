"""Field commands: run --fail-on-nonfinite, inspect of dumps, profile, compare --sweep and
compare --model-explorer. Models are built here with onnx.helper; numbers are checked against
numpy (and ONNX Runtime's Python profiler where the test environment has it)."""
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run


def save(graph, path, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="onnxprobe-tests")
    m.ir_version = 8
    onnx.save(m, str(path))
    return path


def log_model(path, clean=False):
    """out = Neg(Log(shift(X))): with clean=False, Log sees the input as is (NaN for negatives,
    -inf for zeros); clean: Log(X*X + 1), finite everywhere."""
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    if clean:
        nodes = [helper.make_node("Mul", ["X", "X"], ["sq"], name="square"),
                 helper.make_node("Add", ["sq", "one"], ["shifted"], name="shift")]
    else:
        nodes = [helper.make_node("Mul", ["X", "one"], ["shifted"], name="shift")]
    nodes += [helper.make_node("Log", ["shifted"], ["logged"], name="log"),
              helper.make_node("Neg", ["logged"], ["out"], name="negate")]
    g = helper.make_graph(nodes, "logs", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])], [one])
    return save(g, path)


X_MIXED = np.array([[-1.0, 0.0, 2.0], [3.0, -4.0, 5.0]], np.float32)


# --- run --fail-on-nonfinite ---------------------------------------------------------------

def test_nonfinite_names_the_first_tensor_and_its_node(onnxprobe, tmp_path):
    model = log_model(tmp_path / "log.onnx")
    np.save(tmp_path / "X.npy", X_MIXED)
    r = run([onnxprobe, "run", model, "--input", tmp_path / "X.npy", "-o", tmp_path / "d",
             "--fail-on-nonfinite", "--json"])
    assert r.returncode == 1, r.stderr
    with np.errstate(invalid="ignore", divide="ignore"):
        logged = np.log(X_MIXED)
    out = -logged
    f = json.loads(r.stdout)["first_nonfinite"]
    assert f["name"] == "logged" and f["node"] == "log" and f["op_type"] == "Log"
    assert f["kind"] == "tensor"
    assert f["nan"] == int(np.isnan(logged).sum()) == 2
    assert f["inf"] == int(np.isinf(logged).sum()) == 1
    assert f["elements"] == logged.size
    # X and shifted (= X * 1) are finite; logged and out are not
    expected = sum(1 for t in (X_MIXED, X_MIXED * 1, logged, out) if not np.isfinite(t).all())
    assert json.loads(r.stdout)["nonfinite_tensors"] == expected == 2
    assert "'logged' (Log node 'log')" in r.stderr
    assert (tmp_path / "d" / "manifest.json").exists()  # the dump is still written


def test_nonfinite_in_an_input_is_named_as_the_input(onnxprobe, tmp_path):
    model = log_model(tmp_path / "clean.onnx", clean=True)
    x = np.ones((2, 3), np.float32)
    x[1, 2] = np.inf
    np.save(tmp_path / "X.npy", x)
    r = run([onnxprobe, "run", model, "--input", tmp_path / "X.npy", "-o", tmp_path / "d",
             "--fail-on-nonfinite", "--json"])
    assert r.returncode == 1, r.stderr
    f = json.loads(r.stdout)["first_nonfinite"]
    assert f["name"] == "X" and f["kind"] == "input" and f["inf"] == 1 and f["nan"] == 0


def test_clean_model_exits_zero(onnxprobe, tmp_path):
    model = log_model(tmp_path / "clean.onnx", clean=True)
    np.save(tmp_path / "X.npy", X_MIXED)
    r = run([onnxprobe, "run", model, "--input", tmp_path / "X.npy", "-o", tmp_path / "d",
             "--fail-on-nonfinite", "--json"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["first_nonfinite"] is None and d["nonfinite_tensors"] == 0
    # without the flag, NaN is not a failure
    model2 = log_model(tmp_path / "log.onnx")
    r = run([onnxprobe, "run", model2, "--input", tmp_path / "X.npy", "-o", tmp_path / "d2"])
    assert r.returncode == 0, r.stderr


# --- inspect of a dump ------------------------------------------------------------------------

def numpy_stats(a):
    a = np.asarray(a, dtype=np.float64)
    fin = a[np.isfinite(a)]
    return fin, int(np.isnan(a).sum()), int(np.isinf(a).sum())


def check_stats(entry, array):
    fin, nan, inf = numpy_stats(array)
    s = entry["stats"]
    assert entry["shape"] == list(array.shape)
    assert entry["dtype"] == str(array.dtype)
    assert s["nan"] == nan and s["inf"] == inf and s["finite"] == fin.size
    if fin.size == 0:
        assert s["min"] is None and s["mean"] is None
        return
    assert s["min"] == pytest.approx(fin.min(), rel=1e-6, abs=1e-7)
    assert s["max"] == pytest.approx(fin.max(), rel=1e-6, abs=1e-7)
    assert s["mean"] == pytest.approx(fin.mean(), rel=1e-5, abs=1e-6)
    assert s["std"] == pytest.approx(fin.std(), rel=1e-4, abs=1e-6)


def make_dump(onnxprobe, tmp_path, out):
    model = log_model(tmp_path / "log.onnx")
    np.save(tmp_path / "X.npy", X_MIXED)
    r = run([onnxprobe, "run", model, "--input", tmp_path / "X.npy", "-o", out, "-q"])
    assert r.returncode == 0, r.stderr
    return model


def test_inspect_dump_folder(onnxprobe, tmp_path):
    make_dump(onnxprobe, tmp_path, tmp_path / "d")
    r = run([onnxprobe, "inspect", tmp_path / "d", "--json"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "onnxprobe-dump-inspect" and d["layout"] == "folder"
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert d["metadata"]["model"] == manifest["model"]
    assert d["metadata"]["model_sha256"] == manifest["model_sha256"]
    assert d["metadata"]["runtime"] == manifest["runtime"]
    assert d["metadata"]["seed"] == manifest["seed"]
    names = [(t["kind"], t["name"]) for t in d["tensors"]]
    assert names == [(t["kind"], t["name"]) for t in manifest["tensors"]]
    assert names == [("input", "X"), ("tensor", "shifted"), ("tensor", "logged"), ("tensor", "out")]
    total = 0
    for entry, m in zip(d["tensors"], manifest["tensors"]):
        array = np.load(tmp_path / "d" / m["file"])
        check_stats(entry, array)
        total += array.nbytes
    assert d["total_bytes"] == total
    assert d["nonfinite_tensors"] == 2 and d["first_nonfinite"] == "logged"
    by = {t["name"]: t for t in d["tensors"]}
    assert by["logged"]["node"] == "log" and by["logged"]["op_type"] == "Log"
    text = run([onnxprobe, "inspect", tmp_path / "d"])
    assert text.returncode == 0 and "first: 'logged' (Log node 'log')" in text.stdout


def test_inspect_dump_npz_and_plain_npz(onnxprobe, tmp_path):
    make_dump(onnxprobe, tmp_path, tmp_path / "d.npz")
    r = run([onnxprobe, "inspect", tmp_path / "d.npz", "--json"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["layout"] == "npz" and d["metadata"]["provider"]
    z = np.load(tmp_path / "d.npz")
    for entry in d["tensors"]:
        key = ("input:" if entry["kind"] == "input" else "") + entry["name"]
        check_stats(entry, z[key])
    rng = np.random.default_rng(3)
    arrays = {"a": rng.standard_normal((5, 7)).astype(np.float32) * 3 + 1,
              "b": rng.integers(-50, 50, size=(4,)).astype(np.int64),
              "c": np.array([1.0, np.nan, -np.inf, 4.0], np.float64)}
    np.savez(tmp_path / "plain.npz", **arrays)
    r = run([onnxprobe, "inspect", tmp_path / "plain.npz", "--json"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["layout"] == "plain-npz" and d["metadata"] is None
    assert [t["name"] for t in d["tensors"]] == ["a", "b", "c"]
    for entry in d["tensors"]:
        check_stats(entry, arrays[entry["name"]])
    assert d["first_nonfinite"] == "c" and d["nonfinite_tensors"] == 1


def test_inspect_dump_refuses_tensors_flag(onnxprobe, tmp_path):
    make_dump(onnxprobe, tmp_path, tmp_path / "d")
    r = run([onnxprobe, "inspect", tmp_path / "d", "--tensors"])
    assert r.returncode == 2 and "--tensors does nothing" in r.stderr


def test_inspect_model_json_is_the_library_document(onnxprobe, tmp_path):
    model = log_model(tmp_path / "log.onnx")
    r = run([onnxprobe, "inspect", model, "--json", "--tensors"])
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    m = onnx.load(str(model))
    assert d["node_count"] == len(m.graph.node)
    assert [t["name"] for t in d["tensors"] if t["kind"] != "initializer"][:1] == ["X"]
    import hashlib
    assert d["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()


# --- profile ------------------------------------------------------------------------------------

def profile_model(path):
    """y = Mul(Relu(X @ W + b), s): one large MatMul and small elementwise nodes."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024,)).astype(np.float32)
    s = np.array(0.5, np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["mm"], name="big_matmul"),
             helper.make_node("Add", ["mm", "b"], ["biased"], name="bias"),
             helper.make_node("Relu", ["biased"], ["act"], name="act"),
             helper.make_node("Mul", ["act", "s"], ["Y"], name="scale")]
    g = helper.make_graph(nodes, "prof", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [64, 1024])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, 1024])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b"),
                           numpy_helper.from_array(s, "s")])
    return save(g, path), w.nbytes


@pytest.fixture
def private_tmp(tmp_path):
    """A $TMPDIR of the test's own: the profiler's trace folder goes there, no other suite's."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_profile_json(onnxprobe, tmp_path, private_tmp):
    model, weight_bytes = profile_model(tmp_path / "p.onnx")
    r = run([onnxprobe, "profile", model, "--json", "--runs", "4", "--intra-threads", "1"],
            cwd=tmp_path, env={**os.environ, "TMPDIR": str(private_tmp)})
    assert r.returncode == 0, r.stderr
    # the trace and its folder are gone (ONNX Runtime keeps a '.ses' id file of its own there)
    assert list(private_tmp.glob("onnxprobe-*")) == []
    assert not list(tmp_path.glob("*.json"))  # nothing written where it ran
    p = json.loads(r.stdout)
    assert p["schema"] == "onnxprobe-profile" and p["schema_version"] == 1
    m = onnx.load(str(model))
    nodes = {n["name"]: n for n in p["nodes"]}
    assert set(nodes) == {n.name for n in m.graph.node}
    for n in m.graph.node:
        assert nodes[n.name]["op_type"] == n.op_type
        assert nodes[n.name]["provider"] == "CPUExecutionProvider"
        assert nodes[n.name]["calls"] == 1
    assert [n["name"] for n in p["nodes"]] == [n.name for n in m.graph.node]  # run order
    assert [n["topo_index"] for n in p["nodes"]] == [0, 1, 2, 3]
    total = sum(n["median_us"] for n in p["nodes"])
    assert p["nodes_total_us"] == pytest.approx(total, rel=1e-9)
    assert sum(g["total_us"] for g in p["by_op_type"]) == pytest.approx(total, rel=1e-9)
    assert sum(g["total_us"] for g in p["by_provider"]) == pytest.approx(total, rel=1e-9)
    assert sum(n["share"] for n in p["nodes"]) == pytest.approx(1.0, rel=1e-9)
    assert {g["op_type"]: g["nodes"] for g in p["by_op_type"]} == {"MatMul": 1, "Add": 1, "Relu": 1, "Mul": 1}
    for n in p["nodes"]:
        assert n["min_us"] <= n["median_us"] <= n["max_us"]
    # 64x1024x1024 multiply-adds against 64K-element elementwise ops
    assert p["top_nodes"][0] == "big_matmul" and p["by_op_type"][0]["op_type"] == "MatMul"
    assert p["placement"] == {"CPUExecutionProvider": [n.name for n in m.graph.node]}
    lat = p["latency_ms"]
    assert lat["runs"] == 4 and lat["warmup"] == 1 and len(lat["each"]) == 4
    assert lat["median"] == pytest.approx(float(np.median(lat["each"])), rel=1e-9)
    assert lat["min"] == min(lat["each"]) and lat["max"] == max(lat["each"])
    # a run holds its kernels; the runtime's own run time fits in the wall-clock time
    assert p["kernels_run_median_us"] <= p["run_median_us"]
    assert p["run_median_us"] <= lat["max"] * 1000 * 1.05
    mem = p["memory"]
    assert mem["measured"] and mem["peak_reset"]
    assert mem["peak_delta"] == mem["rss_peak"] - mem["rss_before"]
    assert mem["peak_delta"] >= weight_bytes  # the session holds its own copy of the 4 MiB weight
    assert p["not_run"] == []


def test_profile_nodes_match_onnxruntime_python_profiler(onnxprobe, tmp_path):
    pyenv = os.environ.get("ONNXPROBE_PYENV", "")
    assert pyenv and os.path.exists(pyenv), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    model, _ = profile_model(tmp_path / "p.onnx")
    script = f"""
import json, numpy as np, onnxruntime as ort
so = ort.SessionOptions(); so.enable_profiling = True
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
so.profile_file_prefix = {str(tmp_path / 'ref')!r}
s = ort.InferenceSession({str(model)!r}, so, providers=['CPUExecutionProvider'])
s.run(None, {{'X': np.ones((64, 1024), np.float32)}})
trace = json.load(open(s.end_profiling()))
print(json.dumps(sorted({{(e['name'][:-len('_kernel_time')], e['args']['op_name'], e['args']['provider'])
    for e in trace if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time')}})))
"""
    ref = subprocess.run([pyenv, "-c", script], capture_output=True, text=True, timeout=300)
    assert ref.returncode == 0, ref.stderr
    expected = [tuple(x) for x in json.loads(ref.stdout)]
    r = run([onnxprobe, "profile", model, "--json", "--runs", "2"])
    assert r.returncode == 0, r.stderr
    got = sorted((n["name"], n["op_type"], n["provider"]) for n in json.loads(r.stdout)["nodes"])
    assert got == expected


def test_profile_text_and_optimized_graph(onnxprobe, tmp_path):
    model, _ = profile_model(tmp_path / "p.onnx")
    r = run([onnxprobe, "profile", model, "--runs", "2", "--top", "2"])
    assert r.returncode == 0, r.stderr
    assert "by op type" in r.stdout and "top 2 nodes" in r.stdout and "big_matmul" in r.stdout
    # with optimizations on, MatMul + Add fuse into one node the model does not have
    r = run([onnxprobe, "profile", model, "--json", "--runs", "2", "--opt-level", "all"])
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    names = {n["name"] for n in p["nodes"]} | {o for n in p["nodes"] for o in n["original_nodes"]}
    assert set(p["not_run"]) == {n.name for n in onnx.load(str(model)).graph.node} - names
    assert p["not_run"]  # something was fused
    assert any(n["topo_index"] is None for n in p["nodes"])
    r = run([onnxprobe, "profile", model, "--json", "--top", "3"])
    assert r.returncode == 2 and "--top does nothing" in r.stderr


def test_profile_maps_blocked_layout_nodes_back_to_the_model(onnxprobe, tmp_path):
    demo = os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "demo", "demo_cnn.onnx")
    r = run([onnxprobe, "profile", demo, "--json", "--runs", "2", "--opt-level", "all"])
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    blocked = [n for n in p["nodes"] if n["name"].endswith("_nchwc")]
    if not blocked:
        pytest.skip("onnxruntime runs no blocked channel layout on this CPU")
    g = onnx.load(demo).graph
    by_name = {n.name: n for n in g.node}
    topo = [n.name for n in g.node]
    for n in blocked:
        chain = [by_name[o] for o in n["original_nodes"]]
        assert chain, n
        # reference: the model itself; the last original makes the tensor the name is built on,
        # the first has the runtime node's op type, each feeds the next
        assert chain[-1].output[0] + "_nchwc" == n["name"], n
        assert chain[0].op_type == n["op_type"], n
        assert all(a.output[0] in b.input for a, b in zip(chain, chain[1:])), n
        assert n["topo_index"] == topo.index(chain[0].name)
        assert not set(n["original_nodes"]) & set(p["not_run"])
    text = run([onnxprobe, "profile", demo, "--runs", "2", "--opt-level", "all"]).stdout
    assert "    = " + " + ".join(blocked[0]["original_nodes"]) in text


def test_profile_keeps_the_trace_when_asked(onnxprobe, tmp_path):
    model, _ = profile_model(tmp_path / "p.onnx")
    trace = tmp_path / "trace.json"
    cmd = [onnxprobe, "profile", model, "--json", "--runs", "3", "--warmup", "2", "--trace", trace]
    r = run(cmd)
    assert r.returncode == 0, r.stderr
    events = json.loads(trace.read_text())  # an independent read of the runtime's own trace
    runs = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])
    assert len(runs) == 2 + 3
    kernels = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    measured = runs[2:]
    per_node = {}
    for e in kernels:
        for i, run_event in enumerate(measured):
            if run_event["ts"] <= e["ts"] <= run_event["ts"] + run_event["dur"]:
                per_node.setdefault(e["name"][:-len("_kernel_time")], [0, 0, 0])[i] += e["dur"]
    p = json.loads(r.stdout)
    for n in p["nodes"]:
        assert n["median_us"] == pytest.approx(float(np.median(per_node[n["name"]])))
        assert n["min_us"] == min(per_node[n["name"]]) and n["max_us"] == max(per_node[n["name"]])
    assert p["run_median_us"] == pytest.approx(float(np.median([e["dur"] for e in measured])))
    assert run(cmd).returncode == 0  # its own trace may be replaced
    foreign = tmp_path / "notes.json"
    foreign.write_text("[1, 2]")
    r = run([onnxprobe, "profile", model, "--trace", foreign])
    assert r.returncode == 2 and "refusing" in r.stderr
    r = run([onnxprobe, "profile", model, "--trace", model])
    assert r.returncode == 2 and "input of this run" in r.stderr


# --- compare --sweep ---------------------------------------------------------------------------

C = np.array([0.25, -0.5, 0.125, 1.0], np.float32)


def sweep_model(path, delta=0.0, baked_reshape=False):
    """Y = Relu(X + c) (B: c + delta) with X: float32[N, 4]; baked_reshape adds a Reshape to the
    shape [1, 4] an export baked in, which only works at N = 1."""
    nodes = [helper.make_node("Add", ["X", "c"], ["h"], name="add"),
             helper.make_node("Relu", ["h"], ["Y" if not baked_reshape else "r"], name="relu")]
    inits = [numpy_helper.from_array(C + np.float32(delta), "c")]
    if baked_reshape:
        nodes.append(helper.make_node("Reshape", ["r", "shape"], ["Y"], name="reshape"))
        inits.append(numpy_helper.from_array(np.array([1, 4], np.int64), "shape"))
    g = helper.make_graph(nodes, "sweep", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4])], inits)
    return save(g, path)


def test_sweep_two_batch_sizes(onnxprobe, tmp_path):
    a = sweep_model(tmp_path / "a.onnx")
    b = sweep_model(tmp_path / "b.onnx", delta=0.5)
    r = run([onnxprobe, "compare", a, b, "--sweep", "N=1,3", "--json", tmp_path / "s.json",
             "--isolate", "none"])
    assert r.returncode == 1, r.stderr
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["schema"] == "onnxprobe-sweep" and s["passed"] is False and s["failed_points"] == 2
    assert s["axes"] == [{"dim": "N", "values": [1, 3]}]
    assert [p["dims"] for p in s["points"]] == [{"N": 1}, {"N": 3}]
    for p, n in zip(s["points"], (1, 3)):
        assert p["verdict"] == "FAIL" and p["error"] is None
        rep = p["report"]
        assert rep["schema"] == "onnxprobe-compare"
        assert [i["shape"] for i in rep["inputs"]] == [[n, 4]]
        rows = {row["name"]: row for row in rep["tensors"]}
        # h differs by delta everywhere: |(x + c + 0.5) - (x + c)| = 0.5 up to float32 rounding
        assert rows["h"]["max_abs"] == pytest.approx(0.5, abs=1e-6)
        assert rows["h"]["shape_a"] == [n, 4] and rows["h"]["count"] == n * 4
        worst = max((row for row in rep["tensors"] if row["state"] == "compared"),
                    key=lambda row: row["tolerance_ratio"])
        assert p["worst_tensor"]["name"] == worst["name"]
        assert p["first_failure"]["name"] == "h" and p["first_failure"]["node"] == "add"
        assert p["failures"] == sum(1 for row in rep["tensors"] if row["verdict"] == "FAIL")
    assert "N=1" in r.stdout and "N=3" in r.stdout and "2 shapes, 2 not passing" in r.stdout


def test_sweep_passes_and_names_a_shape_the_runtime_rejects(onnxprobe, tmp_path):
    a = sweep_model(tmp_path / "a.onnx")
    r = run([onnxprobe, "compare", a, "--b-opt-level", "all", "--sweep", "N=1,2",
             "--json", tmp_path / "s.json"])
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["passed"] and [p["verdict"] for p in s["points"]] == ["PASS", "PASS"]
    baked = sweep_model(tmp_path / "baked.onnx", baked_reshape=True)
    r = run([onnxprobe, "compare", baked, "--b-opt-level", "all", "--sweep", "N=1,2",
             "--json", tmp_path / "s2.json"])
    assert r.returncode == 3, r.stdout + r.stderr
    s = json.loads((tmp_path / "s2.json").read_text())
    assert [p["verdict"] for p in s["points"]] == ["PASS", "ERROR"]
    assert "reshape" in s["points"][1]["error"].lower()


def test_sweep_usage_errors(onnxprobe, tmp_path):
    a = sweep_model(tmp_path / "a.onnx")
    np.save(tmp_path / "X.npy", np.ones((2, 4), np.float32))
    for extra, msg in ((["--html", tmp_path / "r.html"], "--html is written for one comparison"),
                       (["--dim", "N=2"], "--sweep N and --dim N"),
                       (["--sweep", "N=0"], "not a dimension"),
                       (["--input", tmp_path / "X.npy"], "--sweep does nothing with --input")):
        r = run([onnxprobe, "compare", a, "--b-opt-level", "all", "--sweep", "N=1,2"] + extra)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
    r = run([onnxprobe, "compare", a, "--b-opt-level", "all", "--sweep", "batch=1,2"])
    assert r.returncode == 2 and "named dimensions: N" in r.stderr, r.stderr


# --- compare --model-explorer -----------------------------------------------------------------

def test_model_explorer_node_data(onnxprobe, tmp_path):
    a = sweep_model(tmp_path / "a.onnx")
    b = sweep_model(tmp_path / "b.onnx", delta=0.5)
    out = tmp_path / "me.json"
    r = run([onnxprobe, "compare", a, b, "--dim", "N=2", "--model-explorer", out,
             "--json", tmp_path / "r.json"])
    assert r.returncode == 1, r.stderr
    me = json.loads(out.read_text())
    graph = onnx.load(str(a)).graph
    assert list(me) == [graph.name]
    data = me[graph.name]
    assert set(data["results"]) == {n.name for n in graph.node}
    rep = json.loads((tmp_path / "r.json").read_text())
    for row in rep["tensors"]:
        assert data["results"][row["node"]]["value"] == pytest.approx(row["tolerance_ratio"])
    # the error is born at Add: colored apart from Relu, which inherits it
    assert data["results"]["add"]["bgColor"] and "bgColor" not in data["results"]["relu"]
    assert data["results"]["add"]["value"] > 1
    values = [t["value"] for t in data["thresholds"]]
    assert values == sorted(values) and values[0] == 0 and 1 in values
    assert all(t["bgColor"].startswith("#") for t in data["thresholds"])
    # re-running may replace its own file; a foreign file is refused
    r = run([onnxprobe, "compare", a, b, "--dim", "N=2", "--model-explorer", out])
    assert r.returncode == 1, r.stderr
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"x": 1}')
    r = run([onnxprobe, "compare", a, b, "--dim", "N=2", "--model-explorer", foreign])
    assert r.returncode == 2 and "refusing" in r.stderr


# --- compare: each side's latency and peak memory -----------------------------------------

def test_compare_reports_latency_and_peak_memory_per_side(onnxprobe, tmp_path):
    model, weight_bytes = profile_model(tmp_path / "p.onnx")
    r = run([onnxprobe, "compare", model, "--b-opt-level", "all", "--latency-runs", "2",
             "--json", tmp_path / "r.json", "--atol", "1e-3", "--rtol", "1e-3"])
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((tmp_path / "r.json").read_text())["resources"]
    for side in ("a", "b"):
        lat = res[side]["latency_ms"]
        assert lat["runs"] == 2 and lat["min"] <= lat["median"] <= lat["max"]
        assert lat["median"] == pytest.approx((lat["min"] + lat["max"]) / 2, rel=1e-9)
        mem = res[side]["memory"]
        assert mem["measured"] and mem["peak_delta"] == mem["rss_peak"] - mem["rss_before"]
        assert mem["peak_delta"] >= weight_bytes
    assert "latency: A " in r.stdout and "(median of 2 runs)" in r.stdout
    # a dump runs nothing; 0 turns it off
    d = run([onnxprobe, "run", model, "-o", tmp_path / "d", "-q"])
    assert d.returncode == 0, d.stderr
    r = run([onnxprobe, "compare", model, tmp_path / "d", "--json", tmp_path / "r2.json",
             "--atol", "1e-3", "--rtol", "1e-3", "--latency-runs", "3"])
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((tmp_path / "r2.json").read_text())["resources"]
    assert res["a"]["latency_ms"]["runs"] == 3 and res["b"] is None
    # not asked: nothing is timed (the extra sessions cost more than a small model's comparison)
    r = run([onnxprobe, "compare", model, tmp_path / "d", "--json", tmp_path / "r3.json"])
    res = json.loads((tmp_path / "r3.json").read_text())["resources"]
    assert res == {"a": None, "b": None}
    r = run([onnxprobe, "compare", model, "--b-opt-level", "all", "--latency-runs", "2",
             "--isolate-runtime"])
    assert r.returncode == 2 and "--latency-runs does nothing" in r.stderr


def test_interrupted_profile_leaves_no_trace_folder(onnxprobe, tmp_path, private_tmp):
    import signal
    import time
    model, _ = profile_model(tmp_path / "p.onnx")
    proc = subprocess.Popen([onnxprobe, "profile", str(model), "--runs", "10000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(private_tmp)})
    deadline = time.monotonic() + 120
    while not list(private_tmp.glob("onnxprobe-profile-*")):  # wait until its trace folder exists
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)
    time.sleep(0.3)  # the profiler is recording runs now
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGINT
    assert list(private_tmp.glob("onnxprobe-*")) == []


def test_sweep_over_two_dimensions_runs_every_combination(onnxprobe, tmp_path):
    g = helper.make_graph([helper.make_node("Mul", ["X", "k"], ["Y"], name="scale")], "two_dims",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", "M"])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", "M"])],
                          [numpy_helper.from_array(np.array(2.0, np.float32), "k")])
    a = save(g, tmp_path / "a.onnx")
    out = tmp_path / "s.json"
    cmd = [onnxprobe, "compare", a, "--b-opt-level", "all", "--sweep", "N=1,2",
           "--sweep", "M=3,5", "--json", out, "-q"]
    r = run(cmd)
    assert r.returncode == 0, r.stderr
    s = json.loads(out.read_text())
    assert [(p["dims"]["N"], p["dims"]["M"]) for p in s["points"]] == [(1, 3), (1, 5), (2, 3), (2, 5)]
    for p in s["points"]:
        assert p["report"]["inputs"][0]["shape"] == [p["dims"]["N"], p["dims"]["M"]]
        assert p["label"] == f"N={p['dims']['N']}, M={p['dims']['M']}"
    assert run(cmd).returncode == 0  # its own sweep report may be replaced
    r = run([onnxprobe, "compare", a, "--b-opt-level", "all", "--sweep", "N=1",
             "--sweep", "N=2"])
    assert r.returncode == 2 and "swept twice" in r.stderr, r.stderr


def test_html_report_shows_each_sides_latency(onnxprobe, tmp_path):
    from test_compare_cli import render_in_chromium
    a = sweep_model(tmp_path / "a.onnx")
    r = run([onnxprobe, "compare", a, "--b-opt-level", "all", "--dim", "N=2", "--latency-runs", "2",
             "--html", tmp_path / "r.html", "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 0, r.stderr
    _, text = render_in_chromium(tmp_path / "r.html")
    res = json.loads((tmp_path / "r.json").read_text())["resources"]
    assert res["a"]["latency_ms"]["runs"] == res["b"]["latency_ms"]["runs"] == 2
    meta = text["meta"]  # the run metadata card
    assert "latency, peak memory" in meta and meta.count("ms (median of 2)") == 2


def test_nonfinite_born_in_an_fp16_cast(onnxprobe, tmp_path):
    """X * 1e5 cast to float16 overflows where |X * 1e5| > 65504: the Cast is named."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["X", "big"], ["scaled"], name="scale"),
         helper.make_node("Cast", ["scaled"], ["half"], name="to_half", to=TensorProto.FLOAT16),
         helper.make_node("Cast", ["half"], ["Y"], name="to_float", to=TensorProto.FLOAT)],
        "fp16", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(1e5, np.float32), "big")])
    model = save(g, tmp_path / "fp16.onnx")
    x = np.array([[0.1, 0.9, -0.8], [0.5, 0.7, -0.2]], np.float32)
    np.save(tmp_path / "X.npy", x)
    r = run([onnxprobe, "run", model, "--input", tmp_path / "X.npy", "-o", tmp_path / "d.npz",
             "--fail-on-nonfinite", "--json"])
    assert r.returncode == 1, r.stderr
    with np.errstate(over="ignore"):
        half = (x * np.float32(1e5)).astype(np.float16)
    f = json.loads(r.stdout)["first_nonfinite"]
    assert (f["name"], f["node"], f["op_type"]) == ("half", "to_half", "Cast")
    assert f["inf"] == int(np.isinf(half).sum()) == 3 and f["nan"] == 0
    # the dump holds the same: inspect agrees with numpy on the stored float16 tensor
    d = json.loads(run([onnxprobe, "inspect", tmp_path / "d.npz", "--json"]).stdout)
    entry = next(t for t in d["tensors"] if t["name"] == "half")
    assert entry["dtype"] == "float16"
    check_stats(entry, np.load(tmp_path / "d.npz")["half"])
    np.testing.assert_array_equal(np.load(tmp_path / "d.npz")["half"], half)
