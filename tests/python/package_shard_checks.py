"""The installed package's comparisons over samples (`compare(inputs_dir=..., samples=...,
shard=...)`), `merge` and `compare_on_ray` (docs/shard.md), against the command line's JSON
(ONNXPROBE_BIN) and the single-process report, with verdicts checked against numpy's reading of
the inputs. Ray runs a local cluster of 2 CPUs. Run by test_python_package.py with the interpreter
of a fresh virtual environment; not collected on its own."""
import json
import os
import time

import numpy as np
import pytest

import onnxprobe
from conftest import run
from test_shard import models, samples, strip

SCALES = [1, 20, 1, 1, 30, 2, 1]  # samples 1 and 4 reach |x| > 10, where side B clips


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shard")
    a, b = models(tmp)
    folder = samples(tmp / "in", SCALES)
    clips = [bool(np.abs(np.load(folder / f"s{i}.npz")["x"]).max() > 10) for i in range(len(SCALES))]
    return str(a), str(b), str(folder), clips


def cli_json(tmp_path, *args):
    out = tmp_path / "cli.json"
    r = run([os.environ["ONNXPROBE_BIN"], "compare", *args, "--json", out, "-q"])
    assert r.returncode in (0, 1), r.stderr
    return json.loads(out.read_text())


def test_compare_over_samples_is_the_cli_json(case, tmp_path):
    a, b, folder, clips = case
    report = onnxprobe.compare(a, b, inputs_dir=folder)
    assert isinstance(report, onnxprobe.SamplesReport)
    assert strip(report.to_dict()) == strip(cli_json(tmp_path, a, b, "--inputs", folder))
    assert [not s["passed"] for s in report.to_dict()["samples"]] == clips
    assert report.failed_samples == sum(clips) and not report.passed and report.total_samples == len(SCALES)
    seeded = onnxprobe.compare(a, b, samples=3, ranges=(-30, 30))
    assert strip(seeded.to_dict()) == strip(cli_json(tmp_path, a, b, "--samples", "3", "--range", "-30,30"))
    out = seeded.json(tmp_path / "seeded.json")
    assert json.loads(open(out).read()) == json.loads(seeded.json())


@pytest.mark.parametrize("n", [2, 3])
def test_shards_merged_in_python_are_the_single_process_report(case, tmp_path, n):
    a, b, folder, _ = case
    single = onnxprobe.compare(a, b, inputs_dir=folder)
    parts = [onnxprobe.compare(a, b, inputs_dir=folder, shard=(i, n)) for i in range(n)]
    assert sum(p.samples for p in parts) == len(SCALES)
    # each shard is the CLI's shard; any mix of reports, dicts, JSON text and files merges
    cli_part = cli_json(tmp_path, a, b, "--inputs", folder, "--shard", f"0/{n}")
    assert strip(parts[0].to_dict()) == strip(cli_part)
    (tmp_path / "p1.json").write_text(parts[1].json())
    mixed = [parts[0].to_dict(), str(tmp_path / "p1.json")] + [p.json() for p in parts[2:]]
    merged = onnxprobe.merge(list(reversed(mixed)), json=tmp_path / "merged.json")
    assert isinstance(merged, onnxprobe.MergedReport) and merged.shards == n
    assert strip(merged.to_dict()) == strip(single.to_dict())
    assert json.loads((tmp_path / "merged.json").read_text()) == merged.to_dict()
    # the CLI merges the same files into the same report
    files = []
    for i, p in enumerate(parts):
        files.append(p.json(tmp_path / f"s{i}.json"))
    r = run([os.environ["ONNXPROBE_BIN"], "merge", *files, "--json", tmp_path / "cli_merged.json"])
    assert r.returncode == 1, r.stderr
    assert strip(json.loads((tmp_path / "cli_merged.json").read_text())) == strip(merged.to_dict())


def test_merge_and_shard_errors_are_one_line(case):
    a, b, folder, _ = case
    parts = [onnxprobe.compare(a, b, inputs_dir=folder, shard=f"{i}/3") for i in range(3)]
    with pytest.raises(onnxprobe.InvalidArgument, match=r"shard 1/3 is missing"):
        onnxprobe.merge([parts[0], parts[2]])
    with pytest.raises(onnxprobe.InvalidArgument, match=r"given twice"):
        onnxprobe.merge([parts[0], parts[0], parts[1], parts[2]])
    with pytest.raises(onnxprobe.InvalidArgument, match=r"--shard: shard '3/3': expected I/N with 0 <= I < N"):
        onnxprobe.compare(a, b, inputs_dir=folder, shard="3/3")
    with pytest.raises(onnxprobe.InvalidArgument, match=r"shard does nothing"):
        onnxprobe.compare(a, b, shard="0/2")
    with pytest.raises(onnxprobe.InvalidArgument, match=r"expected I/N"):
        onnxprobe.compare(a, b, inputs_dir=folder, shard="half")


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_with_two_workers_is_the_single_process_report(case, tmp_path, ray_cluster):
    a, b, folder, clips = case
    single = onnxprobe.compare(a, b, inputs_dir=folder, intra_threads=1)
    seen = []
    merged = onnxprobe.compare_on_ray(a, b, inputs_dir=folder, intra_threads=1, shards=2,
                                      on_shard=lambda done, total: seen.append((done, total)))
    assert merged.shards == 2 and seen == [(1, 2), (2, 2)]
    assert strip(merged.to_dict()) == strip(single.to_dict())
    assert [not s["passed"] for s in merged.to_dict()["samples"]] == clips
    # shards by default: one per CPU slot (2 here), never more than there are samples
    one = onnxprobe.compare_on_ray(a, b, samples=1, ranges=(-30, 30), intra_threads=1)
    assert one.shards == 1 and one.samples == 1
    two = onnxprobe.compare_on_ray(a, b, inputs_dir=folder, intra_threads=1)
    assert two.shards == 2 and strip(two.to_dict()) == strip(single.to_dict())
    # a task's error comes back as the library's one-line error, naming the shard
    with pytest.raises(onnxprobe.NotFound, match=r"^shard \d/2: side B: .*missing\.onnx: no such file$"):
        onnxprobe.compare_on_ray(a, str(tmp_path / "missing.onnx"), inputs_dir=folder, shards=2)


def test_progress_reports_samples_rows_and_stops_on_an_exception(case):
    a, b, folder, clips = case
    seen = []
    report = onnxprobe.compare(a, b, inputs_dir=folder, progress=lambda *p: seen.append(p))
    samples = [p for p in seen if p[0] == "sample"]
    assert samples == [("sample", k, len(SCALES)) for k in range(len(SCALES) + 1)]
    rows = [p for p in seen if p[0] == "compare"]
    assert rows and all(0 < d <= t for _, d, t in rows) and ("compare", 2, 2) in rows  # two tensors, c and y
    assert any(p[0] == "isolate" for p in seen) == any(clips)  # failing samples are isolated
    # one comparison reports its rows too; True draws bars (tqdm) or a line, and returns the same report
    seen.clear()
    single = onnxprobe.compare(a, b, progress=lambda *p: seen.append(p))
    assert seen[-1] == ("compare", 2, 2)
    assert onnxprobe.compare(a, b, progress=True).to_dict()["summary"]["compared"] == single.to_dict()["summary"]["compared"]

    def stop(phase, done, total):
        if phase == "sample" and done == 2:
            raise KeyboardInterrupt("enough")
    with pytest.raises(KeyboardInterrupt, match="enough"):
        onnxprobe.compare(a, b, inputs_dir=folder, progress=stop)
    # the exception stops the loop before the next sample: 30000 samples stopped after 2 take a small
    # part of the time all 30000 take (measured side by side here)
    t0 = time.monotonic()
    onnxprobe.compare(a, b, samples=30000, ranges=(-1, 1), diagnose=False)
    full = time.monotonic() - t0
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        onnxprobe.compare(a, b, samples=30000, ranges=(-1, 1), diagnose=False, progress=stop)
    assert time.monotonic() - t0 < 0.5 * full, (time.monotonic() - t0, full)
    with pytest.raises(onnxprobe.InvalidArgument, match="progress must be"):
        onnxprobe.compare(a, b, progress="yes")
