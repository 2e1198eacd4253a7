"""`make wheel` (scripts/wheel.sh): a manylinux wheel installed offline into a clean virtual
environment (a plain interpreter, no system site packages, no bootstrap on its paths, an emptied
environment) runs `onnxprobe compare` and `onnxprobe.compare(...)` on the demo model. The reference
is the demo's injected fault (channel 5 of the second convolution's weight scaled by 1.02): both
must name that node. The install time is written for the closing note."""
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile

import pytest

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEPS = os.environ.get("ONNXPROBE_DEPS_DIR") or os.path.join(SRC, ".deps")
DEMO = os.path.join(SRC, "tests", "data", "demo")
CULPRIT = "/features/features.3/Conv"  # the demo's faulty node (scripts/demo.sh, tests/data/demo)
CLEAN_ENV = {"HOME": "/tmp", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def sh(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800, **kw)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-4000:]}"
    return r


def plain_python():
    """A Python 3.11 (the wheel's cp311) that is not Debian's, else Debian's: in a venv without
    system site packages either is plain."""
    for candidate in (shutil.which("python3"), "/usr/bin/python3"):
        if not candidate:
            continue
        r = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 11))"],
                           capture_output=True, text=True)
        if r.stdout.strip() == "True":
            return candidate
    pytest.fail("no Python 3.11 to install the cp311 wheel with")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    build_dir = os.path.join(os.environ.get("ONNXPROBE_BUILD_DIR", str(out)), "wheel-build")
    sh(["bash", os.path.join(SRC, "scripts", "wheel.sh"), out, build_dir], cwd=SRC)
    (whl,) = [p for p in os.listdir(out) if p.endswith(".whl")]
    return out / whl


def test_the_wheel_is_manylinux_and_carries_command_library_and_dependencies(wheel):
    assert "-cp311-cp311-manylinux_" in wheel.name and wheel.name.endswith("_x86_64.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "onnxprobe/bin/onnxprobe" in names and "onnxprobe/lib/libonnxprobe_preload.so" in names
    assert any(n.startswith("onnxprobe/_onnxprobe.cpython-311") for n in names)
    grafted = [n.split("/")[1] for n in names if n.startswith("onnxprobe.libs/")]
    for lib in ("libprotobuf", "libonnx-", "libonnx_proto"):
        assert any(g.startswith(lib) for g in grafted), grafted
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "onnxprobe = onnxprobe._cli:main" in entry


def test_a_clean_environment_installs_it_offline_and_finds_the_demo_fault(wheel, tmp_path):
    venv = tmp_path / "venv"
    sh([plain_python(), "-m", "venv", venv])
    t0 = time.monotonic()
    sh([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
        "--find-links", wheel.parent, "--find-links", os.path.join(DEPS, "runtime-wheels"),
        f"onnxprobe[runtime] @ file://{wheel}"], env=CLEAN_ENV)
    seconds = time.monotonic() - t0
    timing = os.environ.get("ONNXPROBE_WHEEL_INSTALL_TIMING")
    if timing:
        with open(timing, "w") as f:
            f.write(f"wheel install (offline, clean venv) took {seconds:.1f} s\n")
    print(f"wheel install took {seconds:.1f} s")
    model, faulty = os.path.join(DEMO, "demo_cnn.onnx"), os.path.join(DEMO, "demo_cnn_faulty.onnx")
    # the command: a console script running the bundled binary on the onnxruntime package's library
    r = subprocess.run([venv / "bin" / "onnxprobe", "compare", model, faulty, "--dim", "batch=2", "--json",
                        tmp_path / "cli.json", "-q"], capture_output=True, text=True, env=CLEAN_ENV, cwd=tmp_path)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    cli = json.loads((tmp_path / "cli.json").read_text())
    assert [c["node"] for c in cli["localization"]["culprits"] if c["introduced"]][:1] == [CULPRIT]
    lib = cli["side_a"]["runtime_library"]
    assert lib.startswith(str(venv)) and "/onnxruntime/capi/libonnxruntime.so." in lib, lib
    # the library: in process, the same report
    code = ("import json, onnxprobe; r = onnxprobe.compare(%r, %r, dims={'batch': 2}); "
            "print(json.dumps([r.passed, [c['node'] for c in r.culprits if c['introduced']], "
            "r.to_dict()['side_a']['runtime_library'], onnxprobe.__file__, onnxprobe.preload_library()]))"
            % (model, faulty))
    r = sh([venv / "bin" / "python", "-c", code], env=CLEAN_ENV, cwd=tmp_path)
    passed, culprits, lib, where, preload = json.loads(r.stdout)
    assert not passed and culprits[:1] == [CULPRIT] and lib.startswith(str(venv))
    assert where.startswith(str(venv)) and os.path.isfile(preload)
    # the commands built from the library's option table run on the same runtime, in process
    code = ("import json, onnxprobe; l = onnxprobe.lint(%r); d = onnxprobe.determinism(%r, runs=2, dim={'batch': 2}); "
            "print(json.dumps([l.notes, l.to_dict()['schema'], d.passed, d.to_dict()['outputs_reproducible']]))"
            % (model, model))
    r = sh([venv / "bin" / "python", "-c", code], env=CLEAN_ENV, cwd=tmp_path)
    notes, schema, det_passed, reproducible = json.loads(r.stdout)
    assert notes == [] and schema == "onnxprobe-lint" and det_passed and reproducible  # runtime found: no note
    # what the extension loads comes from the wheel (grafted libraries) and the system's base
    r = sh(["ldd", next((venv / "lib").glob("python3.11/site-packages/onnxprobe/_onnxprobe*.so"))])
    protobuf = [line for line in r.stdout.splitlines() if "libprotobuf" in line]
    assert protobuf and "onnxprobe.libs" in protobuf[0], r.stdout
    assert "not found" not in r.stdout, r.stdout
