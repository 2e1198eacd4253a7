"""Failed writes (issue 26): a full disk, a read-only folder and a stdout that cannot be written
are each exit 2 with the operating system's own reason, and leave nothing half-written. The
reference is the file system itself: a tmpfs filled to its last byte, a read-only tmpfs, /dev/full."""
import errno
import os
import subprocess

import pytest

from conftest import run

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")
ENOSPC = os.strerror(errno.ENOSPC)  # "No space left on device"
EROFS = os.strerror(errno.EROFS)  # "Read-only file system"


def one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("onnxprobe: error: "), r.stderr
    for n in needles:
        assert n in lines[-1], lines[-1]
    return lines[-1]


def mount_tmpfs(where, *options):
    os.makedirs(where, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(("size=256k",) + options), "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a file system with no byte left (files can still be created, empty)."""
    where = tmp_path / "full"
    mount_tmpfs(where)
    try:
        with open(where / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    yield where
    subprocess.run(["umount", "-l", str(where)])


@pytest.fixture
def read_only(tmp_path):
    where = tmp_path / "ro"
    mount_tmpfs(where, "ro")
    yield where
    subprocess.run(["umount", "-l", str(where)])


@pytest.mark.parametrize("what", ["json", "html", "junit", "repro"])
def test_a_full_disk_is_named_as_such_and_leaves_nothing(onnxprobe, full_disk, what):
    target = full_disk / {"json": "r.json", "html": "r.html", "junit": "r.xml", "repro": "repro"}[what]
    r = run([onnxprobe, "compare", DEMO, FAULTY, f"--{what}", target])
    one_line_error(r, str(target), ENOSPC)
    assert sorted(os.listdir(full_disk)) == ["filler"]


def test_a_float16_model_on_a_full_disk_is_named_as_such(onnxprobe, full_disk):
    target = full_disk / "half.onnx"
    r = run([onnxprobe, "fp16", DEMO, "-o", target])
    one_line_error(r, str(target), ENOSPC)
    assert sorted(os.listdir(full_disk)) == ["filler"]


def test_every_output_is_checked_before_any_is_written(onnxprobe, read_only, tmp_path):
    r = run([onnxprobe, "compare", DEMO, FAULTY, "--html", read_only / "r.html", "--json", tmp_path / "r.json"])
    one_line_error(r, str(read_only / "r.html"), EROFS)
    assert not (tmp_path / "r.json").exists()
    assert r.stdout == ""  # refused before the comparison ran


@pytest.mark.parametrize("cmd", [
    ["inspect", DEMO, "--json"],
    ["inspect", DEMO],
    ["lint", DEMO, "--json"],
    ["diff", DEMO, FAULTY],
    ["compare", DEMO, FAULTY],
    ["--help"],
])
def test_a_stdout_that_cannot_be_written_is_exit_2_with_the_reason(onnxprobe, cmd):
    with open("/dev/full", "w") as full:
        r = subprocess.run([onnxprobe] + cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 2, (cmd, r.returncode, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == f"onnxprobe: error: stdout: write failed ({ENOSPC})", r.stderr


def test_run_json_to_a_full_stdout_is_exit_2(onnxprobe, tmp_path):
    with open("/dev/full", "w") as full:
        r = subprocess.run([onnxprobe, "run", DEMO, "-o", tmp_path / "d.npz", "--json"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 2, r.stderr
    assert f"stdout: write failed ({ENOSPC})" in r.stderr


def test_a_stdout_that_works_keeps_the_exit_code_of_the_verdict(onnxprobe):
    assert run([onnxprobe, "compare", DEMO, FAULTY]).returncode == 1
    assert run([onnxprobe, "compare", DEMO, DEMO]).returncode == 0
