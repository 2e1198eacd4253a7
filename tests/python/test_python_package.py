"""`pip install .` into a fresh virtual environment, then the Python API's checks
(package_api_checks.py) run by that environment's interpreter against the installed package.

Offline: scikit-build-core comes from the bootstrap's wheels (.deps/python-wheels, PyPI when
absent), pybind11 from Debian's pybind11-dev, numpy and torch from Debian through
--system-site-packages. ccache serves the core's objects (same flags as `make build`)."""
import os
import re
import subprocess
import time

import pytest

SRC = os.environ.get("ONNXPROBE_SRC", "")
HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-6000:]}"
    return r


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkg")
    v = root / "venv"
    sh(["/usr/bin/python3", "-m", "venv", "--system-site-packages", v])
    pip = [v / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    wheels = os.path.join(os.environ.get("ONNXPROBE_DEPS_DIR") or os.path.join(SRC, ".deps"), "python-wheels")
    offline = ["--no-index", "--find-links", wheels] if os.path.isdir(wheels) else []
    sh(pip + ["install", "--quiet"] + offline + ["scikit-build-core"])
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("JOBS", "2"),
               CCACHE_NOHASHDIR="1")  # objects of `make build` serve this build folder too
    # ... when compiled by the same compiler: the build backend would otherwise take Python's own
    # (x86_64-linux-gnu-g++), another name for the same g++ that ccache keys apart (measured: 908 s
    # for pip install, every object a miss)
    cache = os.path.join(os.path.dirname(os.environ.get("ONNXPROBE_BIN", "")), "CMakeCache.txt")
    if "CXX" not in env and os.path.exists(cache):
        for line in open(cache):
            if line.startswith("CMAKE_CXX_COMPILER:"):
                env["CXX"] = line.split("=", 1)[1].strip()
            if line.startswith("CMAKE_GENERATOR:"):  # the backend would take Ninja when present
                env.setdefault("CMAKE_GENERATOR", line.split("=", 1)[1].strip())
    # Ray for running shards as tasks (package_shard_checks.py), offline from the bootstrap's wheels
    ray_wheels = os.path.join(os.environ.get("ONNXPROBE_DEPS_DIR") or os.path.join(SRC, ".deps"), "ray-wheels")
    if os.path.isdir(ray_wheels):
        sh(pip + ["install", "--quiet", "--no-index", "--find-links", ray_wheels, "ray"])
    t0 = time.monotonic()
    sh(pip + ["install", "--no-build-isolation", "--quiet"] + offline +
       ["--config-settings=build-dir=" + str(root / "build"), SRC], env=env, cwd=root)
    seconds = time.monotonic() - t0
    report = os.environ.get("ONNXPROBE_PY_INSTALL_TIMING")
    if report:
        with open(report, "w") as f:
            f.write(f"pip install . took {seconds:.1f} s\n")
    print(f"pip install . took {seconds:.1f} s")
    return v


def test_the_installed_package_imports_outside_the_source_tree(venv, tmp_path):
    r = sh([venv / "bin" / "python", "-c",
            "import onnxprobe, onnxprobe.torch, onnxprobe_torch; "
            "print(onnxprobe.__file__); print(onnxprobe_torch.__file__); print(onnxprobe.__version__)"],
           cwd=tmp_path)
    files = r.stdout.split()
    assert all(f.startswith(str(venv)) for f in files[:2]), files
    version = re.search(r"project\(onnxprobe VERSION ([0-9.]+)", open(os.path.join(SRC, "CMakeLists.txt")).read())
    assert files[2] == version.group(1)


def checks(venv, tmp_path, name):
    """Runs tests/python/<name> with the venv's interpreter against the installed package."""
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                        os.path.join(HERE, name)],
                       capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    print(r.stdout[-3000:])
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-3000:]
    return r


def test_python_api(venv, tmp_path):
    checks(venv, tmp_path, "package_api_checks.py")


def test_python_samples_shards_and_ray(venv, tmp_path):
    r = checks(venv, tmp_path, "package_shard_checks.py")
    assert "skipped" not in r.stdout.splitlines()[-1], r.stdout[-2000:]  # Ray is installed: its test ran


def test_python_commands_from_the_option_table(venv, tmp_path):
    checks(venv, tmp_path, "package_command_checks.py")
