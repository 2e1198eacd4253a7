import os
import subprocess
import sys

import pytest


def _bin(name):
    path = os.environ.get(name)
    if not path:
        pytest.fail(f"{name} is not set; run the suites through ctest (make test)")
    return path


@pytest.fixture(scope="session")
def onnxprobe():
    return _bin("ONNXPROBE_BIN")


@pytest.fixture(scope="session")
def tensor_tool():
    return _bin("TENSOR_TOOL")


@pytest.fixture(autouse=True)
def _fixed_seeds():
    """Every test starts from the same random state, whichever tests ran before it (-k, order)."""
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(0)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
