"""A side on another CPU (--platform, docs/platform.md) against independent references: the
aarch64 ONNX Runtime library run by the test's own C API program (tests/platform/ort_ref.c,
cross-compiled here, run under qemu-user with /proc/cpuinfo replaced by a bind mount in a private
mount namespace: none of onnxprobe's code), numpy on the dumps of two runs, and injected faults."""
import json
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import pytest
from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEPS = os.environ.get("ONNXPROBE_DEPS_DIR") or os.path.join(SRC, ".deps")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")
ORT_VERSION = "1.32.0"
AARCH64_LIB = os.path.join(DEPS, "ort-aarch64", ORT_VERSION, "lib", f"libonnxruntime.so.{ORT_VERSION}")
HEADERS = os.path.join(DEPS, "onnxruntime-headers", "usr", "include", "onnxruntime")


def read_dump(folder):
    manifest = json.loads((folder / "manifest.json").read_text())
    return {t["name"]: np.load(folder / t["file"]) for t in manifest["tensors"] if t["kind"] != "input"}


def every_output(src, dst):
    """`src` with every node output a graph output: what the reference program fetches."""
    m = onnx.load(src)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
    onnx.save(m, dst)


def attention_block(path):
    """A transformer block's numerics: LayerNormalization, MatMul, Softmax, GELU (Erf), residual."""
    rng = np.random.default_rng(3)
    d = 32
    w = {k: (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32) for k in ("q", "k", "v", "o", "f")}
    inits = [numpy_helper.from_array(v, f"W{k}") for k, v in w.items()]
    inits += [numpy_helper.from_array(np.ones(d, np.float32), "g"), numpy_helper.from_array(np.zeros(d, np.float32), "b"),
              numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale"),
              numpy_helper.from_array(np.array(np.sqrt(0.5), np.float32), "rs2"),
              numpy_helper.from_array(np.array(0.5, np.float32), "half"),
              numpy_helper.from_array(np.array(1.0, np.float32), "one"),
              numpy_helper.from_array(np.array([0, 2, 1], np.int64), "perm")]
    N = helper.make_node
    nodes = [N("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1, name="ln"),
             N("MatMul", ["ln", "Wq"], ["q"], name="q"), N("MatMul", ["ln", "Wk"], ["k"], name="k"),
             N("MatMul", ["ln", "Wv"], ["v"], name="v"),
             N("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="kt"), N("MatMul", ["q", "kt"], ["s"], name="s"),
             N("Mul", ["s", "scale"], ["ss"], name="ss"), N("Softmax", ["ss"], ["p"], axis=-1, name="p"),
             N("MatMul", ["p", "v"], ["a"], name="a"), N("MatMul", ["a", "Wo"], ["o"], name="o"),
             N("Add", ["x", "o"], ["r"], name="r"), N("MatMul", ["r", "Wf"], ["f"], name="f"),
             N("Mul", ["f", "rs2"], ["fs"], name="fs"), N("Erf", ["fs"], ["e"], name="e"),
             N("Add", ["e", "one"], ["e1"], name="e1"), N("Mul", ["f", "e1"], ["fe"], name="fe"),
             N("Mul", ["fe", "half"], ["y"], name="gelu")]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return "x", (1, 16, d)


def reference_program(tmp_path):
    exe = tmp_path / "ort_ref"
    r = run(["aarch64-linux-gnu-gcc", "-O1", "-I", HEADERS, os.path.join(SRC, "tests", "platform", "ort_ref.c"),
             "-o", exe, "-ldl"])
    assert r.returncode == 0, r.stderr
    return exe


def run_reference(tmp_path, exe, model, input_name, x):
    """Every output of `model` on the aarch64 runtime, run by the test's own program under qemu
    with an aarch64 /proc/cpuinfo bound over the host's (qemu-user 7.2 shows the host's)."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("".join(
        f"processor\t: {i}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp "
        f"asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
        f"CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n" for i in range(os.cpu_count())))
    (tmp_path / "x.bin").write_bytes(np.ascontiguousarray(x, np.float32).tobytes())
    out = tmp_path / "ref"
    out.mkdir()
    cmd = (f"mount --bind {cpuinfo} /proc/cpuinfo && exec qemu-aarch64 -L /usr/aarch64-linux-gnu {exe} "
           f"{AARCH64_LIB} {model} {input_name} {tmp_path / 'x.bin'} {out} " + " ".join(map(str, x.shape)))
    r = subprocess.run(["unshare", "-m", "sh", "-c", cmd], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    names = r.stdout.split()
    return {n: np.fromfile(out / f"{i}.bin", np.float32) for i, n in enumerate(names)}


def check_bit_identical(onnxprobe, tmp_path, model, input_name, shape):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    every_output(model, tmp_path / "all.onnx")
    ref = run_reference(tmp_path, reference_program(tmp_path), tmp_path / "all.onnx", input_name, x)
    for platform, dump in (("aarch64", "arm.dump"), (None, "host.dump")):
        r = run([onnxprobe, "run", model, "--input", f"{input_name}={tmp_path / 'x.npy'}", "-o", tmp_path / dump]
                + (["--platform", platform] if platform else []))
        assert r.returncode == 0, r.stderr
    arm, host = read_dump(tmp_path / "arm.dump"), read_dump(tmp_path / "host.dump")
    assert set(arm) == set(host) and set(arm) <= set(ref), set(arm) - set(ref)
    for name, t in arm.items():
        assert t.dtype == np.float32 and t.reshape(-1).tobytes() == ref[name].tobytes(), name
    # the aarch64 kernels are not this machine's: some tensor differs from the host's run
    assert any(arm[n].tobytes() != host[n].tobytes() for n in arm)
    return arm, host


def test_an_aarch64_side_is_the_aarch64_runtime_bit_for_bit_cnn(onnxprobe, tmp_path):
    check_bit_identical(onnxprobe, tmp_path, DEMO, "input", (2, 3, 32, 32))


def test_an_aarch64_side_is_the_aarch64_runtime_bit_for_bit_transformer_block(onnxprobe, tmp_path):
    name, shape = attention_block(tmp_path / "block.onnx")
    check_bit_identical(onnxprobe, tmp_path, str(tmp_path / "block.onnx"), name, shape)


def test_the_comparison_with_an_aarch64_side_measures_what_numpy_measures(onnxprobe, tmp_path):
    name, shape = attention_block(tmp_path / "block.onnx")
    arm, host = check_bit_identical(onnxprobe, tmp_path, str(tmp_path / "block.onnx"), name, shape)
    r = run([onnxprobe, "compare", tmp_path / "block.onnx", "--b-platform", "aarch64", "--input",
             f"x={tmp_path / 'x.npy'}", "--json", tmp_path / "r.json", "--report-detail", "full"])
    assert r.returncode in (0, 1), r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["side_b"]["platform"] == "aarch64 (qemu-aarch64 -cpu max)" and rep["side_a"]["platform"] == ""
    assert rep["side_b"]["runtime_library"] == AARCH64_LIB
    assert "on aarch64 (qemu-aarch64 -cpu max)" in r.stdout
    rows = {t["name"]: t for t in rep["tensors"]}
    assert set(rows) == set(arm)
    for n, t in rows.items():
        assert t["max_abs"] == float(np.max(np.abs(arm[n].astype(np.float64) - host[n]))), n
    differing = {t["node"] for t in rep["drift_origins"]}
    assert differing, "the sides differ (numpy above) but no drift origin is named"
    # per op type, how many tensors the two CPUs' kernels compute bit for bit (numpy: the dumps)
    want = {}
    for n, t in rows.items():
        c = want.setdefault(t["op_type"], [0, 0])
        c[0] += 1
        c[1] += arm[n].tobytes() == host[n].tobytes()
    got = {e["op_type"]: [e["compared"], e["bit_exact"]] for e in rep["summary"]["bit_exact_by_op"]}
    assert got == want
    line = next(l for l in r.stdout.splitlines() if l.startswith("bit-exact across the platforms, by op type:"))
    for op, (n, exact) in want.items():
        assert f" {op} {exact}/{n}" in line


def test_a_weight_fault_on_an_aarch64_side_is_named(onnxprobe, tmp_path):
    r = run([onnxprobe, "compare", DEMO, FAULTY, "--b-platform", "aarch64", "--dim", "batch=1",
             "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 1, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    top = rep["localization"]["culprits"][0]
    assert top["node"] == "/features/features.3/Conv" and top["introduced"], top
    assert rep["side_b"]["platform"].startswith("aarch64")


def test_an_x86_64_v2_side_runs_under_qemu_and_is_measured_as_numpy_says(onnxprobe, tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    for platform, dump in (("x86-64-v2", "v2.dump"), (None, "host.dump")):
        r = run([onnxprobe, "run", DEMO, "--input", f"input={tmp_path / 'x.npy'}", "-o", tmp_path / dump]
                + (["--platform", platform] if platform else []))
        assert r.returncode == 0, r.stderr
    v2, host = read_dump(tmp_path / "v2.dump"), read_dump(tmp_path / "host.dump")
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "x86-64-v2", "--input", f"input={tmp_path / 'x.npy'}",
             "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["side_b"]["platform"] == "x86-64-v2 (qemu-x86_64 -cpu Nehalem)"
    for t in rep["tensors"]:
        assert t["max_abs"] == float(np.max(np.abs(v2[t["name"]].astype(np.float64) - host[t["name"]]))), t["name"]


def test_platform_errors_are_one_line(onnxprobe, tmp_path):
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "sparc"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--b-platform: unknown platform 'sparc' (aarch64" in r.stderr
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "x86-64-v4"])
    assert r.returncode == 2 and "qemu emulates no AVX-512" in r.stderr
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "aarch64", "--b-ort-version", "1.9.0"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "ONNX Runtime 1.9.0 for aarch64 is not installed" in r.stderr
    # no qemu on PATH: what to install, in one line
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "aarch64"], env=dict(os.environ, PATH=str(tmp_path)))
    assert r.returncode in (2, 3) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "qemu-aarch64 is not installed (Debian: apt-get install qemu-user)" in r.stderr


FAKE_WORKER = r'''
import os, struct, sys
def frame():
    h = os.read(0, 12)
    t, n = struct.unpack("<IQ", h)
    return t, os.read(0, n) if n else b""
def s(x):
    return struct.pack("<Q", len(x)) + x
PROTOCOL = 2  # kProtocolVersion, src/backend/remote/remote_protocol.h
frame()  # hello: answer as a worker of this protocol would
reply = struct.pack("<I", 0) + s(b"") + struct.pack("<I", PROTOCOL) + s(b"onnxruntime") + s(b"1.32.0") + s(b"fake")
reply += struct.pack("<Q", 1) + s(b"CPUExecutionProvider") + s(b"x86_64")
os.write(1, struct.pack("<IQ", 7, len(reply)) + reply)
frame()  # the first session: gone
sys.stderr.write("fake worker: out of memory on the board\n")
sys.exit(7)
'''


def test_a_worker_that_dies_is_named_and_leaves_nothing_behind(onnxprobe, tmp_path):
    """The worker runs under qemu-x86_64 here: python3 stands in for it (its 'library' argument
    is the script), answers hello and dies at the first session."""
    workers = tmp_path / "workers" / "x86_64"
    workers.mkdir(parents=True)
    os.symlink("/usr/bin/python3", workers / "onnxprobe-worker")
    script = tmp_path / "fake.py"
    script.write_text(FAKE_WORKER)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, ONNXPROBE_WORKER_DIR=str(tmp_path / "workers"), TMPDIR=str(tmp))
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "x86-64-v2", "--b-ort-lib", script, "--dim", "batch=1"],
            env=env)
    assert r.returncode == 3, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "the x86-64-v2 worker (qemu-x86_64) ended while serving a request (exit status 7): " \
           "fake worker: out of memory on the board" in last, r.stderr
    # (ONNX Runtime 1.32 itself leaves a ".ses" file in TMPDIR on any run: not ours)
    assert [f for f in os.listdir(tmp) if f != ".ses"] == []


def bundle(tmp_path, arch):
    out = tmp_path / f"bundle-{arch}"
    r = run([os.environ["ONNXPROBE_BIN"], "platform-bundle", arch, out])
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == ["lib", "onnxprobe-worker", "run-worker.sh"]
    return out


def test_a_remote_side_through_a_command_prefix_is_the_platform_side(onnxprobe, tmp_path):
    """--b-remote CMD: the bundle's worker started by a command (here qemu-user, as a board's
    ssh would start it) gives the same report as --b-platform aarch64."""
    b = bundle(tmp_path, "aarch64")
    cmd = (f"env ONNXPROBE_WORKER_CPUINFO=synth qemu-aarch64 -L /usr/aarch64-linux-gnu {b}/onnxprobe-worker "
           f"{b}/lib/libonnxruntime.so.{ORT_VERSION}")
    reports = {}
    for name, flags in (("remote", ["--b-remote", cmd]), ("platform", ["--b-platform", "aarch64"])):
        r = run([onnxprobe, "compare", DEMO, FAULTY, "--dim", "batch=1", "--json", tmp_path / f"{name}.json", "-q"]
                + flags)
        assert r.returncode == 1, r.stderr
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text())
    remote, platform = reports["remote"], reports["platform"]
    assert remote["side_b"]["platform"] == f"remote aarch64 ({cmd})"
    for x, y in zip(remote["tensors"], platform["tensors"]):
        assert (x["name"], x["max_abs"], x["verdict"]) == (y["name"], y["max_abs"], y["verdict"])
    assert remote["localization"]["culprits"][0]["node"] == "/features/features.3/Conv"


def test_a_remote_side_through_a_shell_runs_the_bundle_and_gets_weights_inline(onnxprobe, tmp_path):
    """A local shell as the transport: the x86-64 bundle runs this machine's runtime, so every
    tensor is bit-exact; the model's weights live in an external file the worker never sees (a
    device cannot read this machine's files): they travel inside the model."""
    b = bundle(tmp_path, "x86_64")
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(onnx.load(DEMO), str(folder / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.bin", size_threshold=0)
    assert os.path.getsize(folder / "ext.bin") > 0
    # the "device": the worker in a mount namespace where the model's folder is an empty tmpfs
    hidden = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {folder} && ls -A {folder}"],
                            capture_output=True, text=True)
    assert hidden.returncode == 0 and hidden.stdout == "", hidden.stderr
    device = f"unshare -m sh -c 'mount -t tmpfs none {folder} && exec sh {b}/run-worker.sh'"
    r = run([onnxprobe, "compare", folder / "ext.onnx", "--b-remote", device, "--dim", "batch=2", "--json",
             tmp_path / "r.json", "-q"])
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["side_b"]["platform"].startswith("remote x86_64 (")
    assert rep["summary"]["first_difference"] is None and rep["summary"]["compared"] == 10


def test_remote_errors_are_one_line(onnxprobe, tmp_path):
    r = run([onnxprobe, "compare", DEMO, "--b-remote", "sh -c 'echo no such board >&2; exit 5'"])
    assert r.returncode == 3 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "the remote worker (sh -c 'echo no such board >&2; exit 5') ended while serving a request " \
           "(exit status 5): no such board" in r.stderr
    r = run([onnxprobe, "compare", DEMO, "--b-remote", "ssh board w", "--b-platform", "aarch64"])
    assert r.returncode == 2 and "--remote runs the runtime its worker was bundled with" in r.stderr


def test_the_diagnosis_names_the_cpus_kernels(onnxprobe, tmp_path):
    """At a tolerance below the two CPUs' rounding, each culprit's cause is the kernel that differs
    across the platforms (the node alone, side A's inputs, on both CPUs), with the fix that
    applies there (an op tolerance), not another runtime version."""
    r = run([onnxprobe, "compare", DEMO, "--b-platform", "aarch64", "--dim", "batch=1", "--atol", "1e-9",
             "--rtol", "1e-9", "--diagnose", "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 1, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    findings = rep["diagnosis"]["findings"]
    assert findings and all(f["cause"] == "kernel-change" for f in findings)
    for f in findings:
        assert "on this machine" in f["summary"] and "on aarch64 (qemu-aarch64 -cpu max)" in f["summary"]
        assert f["fix"]["compare_flags"][0] == "--op-tol" and "--b-ort-version" not in f["fix"]["compare_flags"]
    culprits = {c["node"] for c in rep["localization"]["culprits"] if c["introduced"]}
    assert {f["node"] for f in findings} <= culprits


def test_an_int8_kernel_that_saturates_on_avx2_is_named_with_its_cause(onnxprobe, tmp_path):
    """quantize_dynamic's MatMulInteger on an AVX2 CPU (x86-64-v3: qemu's Haswell, no VNNI) against
    this machine. numpy computes the exact int32 products from side A's quantized activations and
    the model's int8 weights: side A equals them, side B does not, so B's kernel is the one that
    is wrong, and the comparison names a MatMulInteger with that cause."""
    py = os.environ.get("ONNXPROBE_PYENV")
    r = subprocess.run([py, os.path.join(SRC, "tests", "platform", "make_int8_mlp.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    model = tmp_path / "mlp_int8.onnx"
    for platform, dump in (("x86-64-v3", "v3.dump"), (None, "host.dump")):
        r = run([onnxprobe, "run", model, "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / dump]
                + (["--platform", platform] if platform else []))
        assert r.returncode == 0, r.stderr
    host, v3 = read_dump(tmp_path / "host.dump"), read_dump(tmp_path / "v3.dump")
    g = onnx.load(model).graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    wrong = []
    for n in (n for n in g.node if n.op_type == "MatMulInteger"):
        a = host[n.input[0]].astype(np.int64) - np.int64(host[n.input[2]])
        w = inits[n.input[1]].astype(np.int64) - np.int64(inits[n.input[3]])
        exact = a @ w
        assert np.array_equal(host[n.output[0]], exact), n.name  # this machine: the exact products
        # side B fed side A's quantized activations (numpy again, on B's own run the inputs may
        # already differ): B's dump differs from the exact products where its kernel saturates
        if np.array_equal(v3[n.input[0]], host[n.input[0]]) and not np.array_equal(v3[n.output[0]], exact):
            wrong.append(n.name)
    assert wrong, "no MatMulInteger of the AVX2 side differs from the exact products"
    r = run([onnxprobe, "compare", model, "--b-platform", "x86-64-v3", "--input", f"x={tmp_path / 'x.npy'}",
             "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 1, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    top = rep["localization"]["culprits"][0]
    assert top["op_type"] == "MatMulInteger" and top["introduced"], top
    assert wrong[0] in {c["node"] for c in rep["localization"]["culprits"]}
    findings = rep["diagnosis"]["findings"]  # the first culprits diagnosed (default 2)
    assert findings
    for f in findings:
        assert f["node"] in {c["node"] for c in rep["localization"]["culprits"]}
        assert f["cause"] == "kernel-change" and "x86-64-v3 (qemu-x86_64 -cpu Haswell)" in f["summary"]
        assert "reduce_range" in f["fix"]["summary"]


def _mlp(path):
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((32, 16)).astype(np.float32), "w2")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
                           helper.make_node("Relu", ["h"], ["r"], name="relu"),
                           helper.make_node("MatMul", ["r", "w2"], ["y"], name="mm2")], "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])], [w1, w2])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_bfloat16_fast_math_on_aarch64_is_named_as_the_cause_with_its_fix(onnxprobe, tmp_path):
    """ONNX Runtime's mlas.enable_gemm_fastmath_arm64_bfloat16=1 computes MatMul on aarch64 with
    bfloat16 products. numpy says which run it touches: with it, the aarch64 MatMul is ~1e-3 off
    the float64 product; without it, float32's rounding. The diagnosis names the entry (not the
    CPUs' kernels, whose advice would be to accept the difference) and its fix passes."""
    model = _mlp(tmp_path / "mlp.onnx")
    fast = ["--session-config", "mlas.enable_gemm_fastmath_arm64_bfloat16=1"]
    dumps = {}
    for name, extra in (("fast", fast), ("plain", [])):
        r = run([onnxprobe, "run", model, "--platform", "aarch64", "-o", tmp_path / name, *extra])
        assert r.returncode == 0, r.stderr
        dumps[name] = read_dump(tmp_path / name)
    w1 = numpy_helper.to_array(onnx.load(model).graph.initializer[0]).astype(np.float64)
    x = np.load(tmp_path / "plain" / "inputs" / os.listdir(tmp_path / "plain" / "inputs")[0])
    exact = x.astype(np.float64) @ w1
    rel = {k: np.abs(d["h"] - exact).max() / np.abs(exact).max() for k, d in dumps.items()}
    assert rel["plain"] < 1e-6 and rel["fast"] > 1e-4, rel
    r = run([onnxprobe, "compare", model, "--b-platform", "aarch64", "--b-" + fast[0][2:], fast[1],
             "--json", tmp_path / "r.json", "-q"])
    assert r.returncode == 1, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    findings = rep["diagnosis"]["findings"]
    assert findings and findings[0]["cause"] == "fast-math-option", findings
    assert findings[0]["node"] in ("mm1", "mm2")
    flags = findings[0]["fix"]["compare_flags"]
    assert flags == ["--b-session-config", "mlas.enable_gemm_fastmath_arm64_bfloat16=0"], flags
    r = run([onnxprobe, "compare", model, "--b-platform", "aarch64", *flags, "-q"])
    assert r.returncode == 0, r.stdout + r.stderr


def _wide_pointwise(path):
    """A 1x1 Conv over 4096 channels of positive values (a long sum), then a narrow one: ONNX
    Runtime's aarch64 build computes float16 pointwise Convs in float16 (its accumulation
    rounding grows with the sum), the x86-64 build in float32."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.uniform(0, 1, (8, 4096, 1, 1)).astype(np.float32), "w")
    w2 = numpy_helper.from_array(rng.uniform(-1, 1, (4, 8, 1, 1)).astype(np.float32), "w2")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["h"], name="wide_pointwise"),
                           helper.make_node("Relu", ["h"], ["r"], name="relu"),
                           helper.make_node("Conv", ["r", "w2"], ["y"], name="narrow_pointwise")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], [w, w2])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return g


def test_fp16_on_aarch64_blocks_what_its_kernels_lose_and_the_model_holds_there(onnxprobe, tmp_path):
    """The block list is found on the target's kernels: aarch64 keeps the wide Conv in float32,
    this machine keeps nothing. numpy (float64) judges the written models on aarch64: the one made
    there is within fp16's tolerance (rtol 1e-2 + 1e-2 of the output's scale), the one made here
    is not."""
    model = tmp_path / "pw.onnx"
    g = _wide_pointwise(model)
    x = np.random.default_rng(1).uniform(0, 1, (1, 4096, 4, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    blocked, nodes = {}, {}
    for name, platform in (("host", []), ("arm", ["--platform", "aarch64"])):
        out = tmp_path / f"{name}.json"
        r = run([onnxprobe, "fp16", model, "--input", f"x={tmp_path / 'x.npy'}", *platform, "-o",
                 tmp_path / f"{name}16.onnx", f"--json={out}"])
        assert r.returncode == 0, r.stdout + r.stderr
        rep = json.loads(out.read_text())
        blocked[name] = {b["node"] for b in rep["block_list"]}
        nodes[name] = {n["node"]: n for n in rep["nodes"]}
    assert blocked == {"host": set(), "arm": {"wide_pointwise"}}, blocked
    # What float16 storage must cost the wide Conv (numpy, float64 products of float16-rounded x
    # and w, the result rounded to float16 once) is the storage error on both machines; only
    # aarch64's kernel loses over twice that, and the block list says so.
    exact = np.einsum("oc,bchw->bohw", w["w"][:, :, 0, 0], x.astype(np.float64))
    h16 = lambda a: a.astype(np.float16).astype(np.float64)  # noqa: E731
    stored = h16(np.einsum("oc,bchw->bohw", h16(w["w"][:, :, 0, 0]), h16(x)))
    must = np.linalg.norm(stored - exact) / np.linalg.norm(exact)
    for name in ("host", "arm"):
        row = nodes[name]["wide_pointwise"]
        assert row["storage_error"] == pytest.approx(must, rel=0.05), (name, row)
    assert not any(n["beyond_storage"] for n in nodes["host"].values()), nodes["host"]
    assert nodes["arm"]["wide_pointwise"]["beyond_storage"], nodes["arm"]["wide_pointwise"]
    assert nodes["arm"]["wide_pointwise"]["isolated_error"] > 2 * must
    entry = json.loads((tmp_path / "arm.json").read_text())["block_list"][0]
    assert entry["beyond_storage"] and entry["storage_error"] == pytest.approx(must, rel=0.05)
    h = np.maximum(np.einsum("oc,bchw->bohw", w["w"][:, :, 0, 0], x.astype(np.float64)), 0)
    y = np.einsum("oc,bchw->bohw", w["w2"][:, :, 0, 0], h)
    allowed = 1e-2 * np.abs(y) + 1e-2 * np.abs(y).max()
    for name, holds in (("arm", True), ("host", False)):
        d = tmp_path / f"{name}_on_arm.dump"
        r = run([onnxprobe, "run", tmp_path / f"{name}16.onnx", "--platform", "aarch64", "--input",
                 f"x={tmp_path / 'x.npy'}", "-o", d])
        assert r.returncode == 0, r.stderr
        got = read_dump(d)["y"].astype(np.float64)
        assert bool(np.all(np.abs(got - y) <= allowed)) == holds, (name, np.abs(got - y).max())


def test_platform_bundle_writes_a_folder_complete_or_not_at_all(onnxprobe, tmp_path):
    out = bundle(tmp_path, "x86_64")
    libs = os.path.join(SRC, ".deps", "ort", ORT_VERSION, "lib")
    lib = f"libonnxruntime.so.{ORT_VERSION}"
    with open(out / "lib" / lib, "rb") as a, open(os.path.join(libs, lib), "rb") as b:
        assert a.read() == b.read()
    assert os.access(out / "run-worker.sh", os.X_OK)
    # refused, one line each, and nothing written or left beside them
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("a user's file")
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    for args, words in ((["aarch64", tmp_path / "full"], "exists and is not empty"),
                        (["aarch64", tmp_path / "link"], "symbolic link"),
                        (["sparc", tmp_path / "new"], "unknown architecture 'sparc'"),
                        (["aarch64", tmp_path / "new", "--ort-version", "0.0.1"], "0.0.1 for aarch64 is not installed")):
        before = sorted(os.listdir(tmp_path))
        r = run([onnxprobe, "platform-bundle", *args])
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert sorted(os.listdir(tmp_path)) == before
    assert (tmp_path / "full" / "mine.txt").read_text() == "a user's file"
