"""Data sets beyond one process (docs/shard.md): `compare --inputs DIR --shard I/N` runs one
shard's samples, `onnxprobe merge` joins the shards' reports into the report one process writes
over all the samples. The reference is that single-process report (timings aside), and the
verdicts are checked against numpy's reading of which samples clip."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run


def models(tmp_path, k_b=2.0):
    """A: y = 2x; B: y = k_b clip(x, -10, 10): a sample fails exactly when some |x| > 10 (k_b 2)."""
    def save(path, clip, k=2.0):
        nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["c"], name="clip")] if clip else \
                [helper.make_node("Identity", ["x"], ["c"], name="clip")]
        nodes.append(helper.make_node("Mul", ["c", "two"], ["y"], name="mul"))
        inits = [helper.make_tensor("two", TensorProto.FLOAT, [], [k])]
        if clip:
            inits += [helper.make_tensor("lo", TensorProto.FLOAT, [], [-10.0]),
                      helper.make_tensor("hi", TensorProto.FLOAT, [], [10.0])]
        g = helper.make_graph(nodes, "clip", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, str(path))
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    save(a, False)
    save(b, True, k_b)
    return a, b


def samples(folder, scales):
    folder.mkdir()
    rng = np.random.default_rng(1)
    for i, s in enumerate(scales):
        np.savez(folder / f"s{i}.npz", x=(rng.standard_normal((2, 8)) * s).astype(np.float32))
    return folder


def strip(d):
    """Without what differs between two runs of the same comparison: timings and the shard keys."""
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("seconds", "resources", "merged", "shard")}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d


def sharded(onnxprobe, tmp_path, args, n):
    single = tmp_path / "single.json"
    r = run([onnxprobe, "compare", *args, "--json", single, "-q"])
    assert r.returncode in (0, 1), r.stderr
    parts = []
    for i in range(n):
        p = tmp_path / f"shard{i}.json"
        rs = run([onnxprobe, "compare", *args, "--shard", f"{i}/{n}", "--json", p, "-q"])
        assert rs.returncode in (0, 1), rs.stderr
        assert f"shard {i}/{n}" in rs.stdout
        parts.append(p)
    merged = tmp_path / "merged.json"
    rm = run([onnxprobe, "merge", *reversed(parts), "--json", merged])  # any order
    return r, json.loads(single.read_text()), rm, json.loads(merged.read_text()), parts


@pytest.mark.parametrize("n", [2, 3])
def test_merged_shards_are_the_single_process_report(onnxprobe, tmp_path, n):
    a, b = models(tmp_path)
    scales = [1, 20, 1, 1, 30, 2, 1]  # samples 1 and 4 reach |x| > 10
    folder = samples(tmp_path / "in", scales)
    r, single, rm, merged, parts = sharded(onnxprobe, tmp_path, [a, b, "--inputs", folder], n)
    assert r.returncode == 1 and rm.returncode == 1, rm.stdout + rm.stderr
    assert strip(merged) == strip(single)
    # the verdicts against numpy's reading of the inputs
    clips = [bool(np.abs(np.load(folder / f"s{i}.npz")["x"]).max() > 10) for i in range(len(scales))]
    assert [not s["passed"] for s in merged["samples"]] == clips
    assert merged["failed_samples"] == sum(clips) and merged["merged"]["shards"] == n
    assert json.loads(parts[0].read_text())["shard"]["positions"] == list(range(0, len(scales), n))
    assert f"merged {n} shards: {len(scales)} samples, {sum(clips)} failed: FAIL" in rm.stdout


def test_merged_passing_shards_localize_the_focus_sample_only(onnxprobe, tmp_path):
    # every sample passes: the one closest to its tolerance alone says where differences are born
    a, b = models(tmp_path, k_b=2.0000002)  # within tolerance, never bit-exact
    r, single, rm, merged, _ = sharded(onnxprobe, tmp_path, [a, b, "--samples", "5"], 2)
    assert r.returncode == 0 and rm.returncode == 0, rm.stdout + rm.stderr
    assert strip(merged) == strip(single)
    drift = [s["name"] for s in merged["samples"] if s["report"]["drift_origins"]]
    assert len(drift) == 1, drift  # the focus sample's, as one process finds it


def test_shards_that_do_not_make_one_comparison_are_refused(onnxprobe, tmp_path):
    a, b = models(tmp_path)
    folder = samples(tmp_path / "in", [1, 20, 1])
    base = [onnxprobe, "compare", a, b, "--inputs", folder, "-q"]
    for i in range(2):
        assert run(base + ["--shard", f"{i}/2", "--json", tmp_path / f"p{i}.json"]).returncode in (0, 1)
    assert run(base + ["--shard", "1/2", "--atol", "1e-3", "--json", tmp_path / "other.json"]).returncode in (0, 1)
    assert run(base + ["--shard", "0/3", "--json", tmp_path / "three.json"]).returncode in (0, 1)
    assert run([onnxprobe, "compare", a, b, "--json", tmp_path / "plain.json"]).returncode in (0, 1)
    cases = [([tmp_path / "p0.json"], "shard 1/2 is missing"),
             ([tmp_path / "p0.json", tmp_path / "p0.json"], "given twice"),
             ([tmp_path / "p0.json", tmp_path / "other.json"], "tolerance differs"),
             ([tmp_path / "p0.json", tmp_path / "three.json"], "shard of 3"),
             ([tmp_path / "plain.json"], "not a samples report"),
             ([tmp_path / "none.json"], "none.json")]
    for files, words in cases:
        r = run([onnxprobe, "merge", *files])
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, (files, r.stderr)
    # the merged report never replaces a file that is not an onnxprobe report
    mine = tmp_path / "mine.json"
    mine.write_text('{"mine": 1}\n')
    r = run([onnxprobe, "merge", tmp_path / "p0.json", tmp_path / "p1.json", "--json", mine])
    assert r.returncode == 2 and mine.read_text() == '{"mine": 1}\n'
    # --shard needs samples, and a shard must exist
    r = run([onnxprobe, "compare", a, b, "--shard", "0/2"])
    assert r.returncode == 2 and "--shard does nothing" in r.stderr
    for bad in ("2/2", "1", "a/b", "-1/2"):
        r = run(base + ["--shard", bad])
        assert r.returncode == 2 and "--shard" in r.stderr, bad
    r = run(base + ["--shard", "4/5"])  # 3 samples: shard 4 holds none
    assert r.returncode == 2 and "holds no sample" in r.stderr


@pytest.mark.parametrize("n", [2, 3])
def test_merged_baseline_check_shards_are_the_single_process_check(onnxprobe, tmp_path, n):
    a, b = models(tmp_path)
    scales = [1, 20, 1, 1, 30, 2, 1]  # samples 1 and 4 reach |x| > 10, where b clips
    folder = samples(tmp_path / "in", scales)
    base = tmp_path / "base"
    r = run([onnxprobe, "baseline", "save", a, "-o", base, "--inputs", folder, "--keep-model"])
    assert r.returncode == 0, r.stderr
    single = tmp_path / "single.json"
    r = run([onnxprobe, "baseline", "check", b, base, "--json", single, "-q"])
    assert r.returncode == 1, r.stdout + r.stderr
    parts = []
    for i in range(n):
        p = tmp_path / f"check{i}.json"
        rs = run([onnxprobe, "baseline", "check", b, base, "--shard", f"{i}/{n}", "--json", p])
        assert rs.returncode in (0, 1) and f"shard {i}/{n}" in rs.stdout, rs.stdout + rs.stderr
        parts.append(p)
    merged = tmp_path / "merged.json"
    rm = run([onnxprobe, "merge", *reversed(parts), "--json", merged])
    assert rm.returncode == 1, rm.stdout + rm.stderr
    single, merged = json.loads(single.read_text()), json.loads(merged.read_text())
    # sample 4 was its shard's first failure (localized there); one process localizes sample 1 only
    assert strip(merged) == strip(single)
    clips = [bool(np.abs(np.load(folder / f"s{i}.npz")["x"]).max() > 10) for i in range(len(scales))]
    assert [not s["passed"] for s in merged["samples"]] == clips
    methods = [s["localization"]["method"] for s in merged["samples"] if not s["passed"]]
    assert methods == ["rerun", "skipped"]
    assert merged["samples_checked"] == len(scales) and merged["merged"]["shards"] == n
    # shards of other checks do not merge with these
    other = tmp_path / "other.json"
    assert run([onnxprobe, "baseline", "check", a, base, "--shard", f"0/{n}", "--json", other]).returncode == 0
    r = run([onnxprobe, "merge", other, *parts[1:]])
    assert r.returncode == 2 and "model differs" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run([onnxprobe, "baseline", "check", b, base, "--shard", "9/10"])
    assert r.returncode == 2 and "holds no sample of the baseline's 7" in r.stderr
