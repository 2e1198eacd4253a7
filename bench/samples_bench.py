#!/usr/bin/python3
"""Several samples through one comparison session, against plain ONNX Runtime sessions doing the
same runs, measured side by side in one run.

usage: /usr/bin/python3 bench/samples_bench.py ONNXPROBE PYTHON MODEL.onnx ... [--samples N]
       [--rounds R]

PYTHON is an interpreter with the `onnxruntime` package of the version onnxprobe loads (the
bootstrap's .deps/pyenv). Per model:
  - `compare MODEL --b-opt-level all --samples N` (as is: localization and, when every sample
    passes, where the focus sample's differences are born; and with --isolate none) against two
    plain sessions (optimizations disabled and all) each running the N samples: session creation
    plus runs, timed inside the Python child (its interpreter start and imports left out);
  - `compare --inputs DIR` with the same N samples written as .npz files;
  - `baseline check` of a baseline saved with N samples against one plain session (the
    baseline's settings: optimizations disabled) running them.
Goals (issue 27): compare <= 2x and baseline check <= 1.5x the plain sessions.

The capture floor is what any tool that compares these tensors must run: the same plain
sessions with the tensors the comparison compared marked as outputs (a marked tensor is kept
and written out, and fusions and in-place reuse around it stop). Its ratio to the plain
sessions is the model's own, not onnxprobe's: 1.1-1.2x on ResNet-50 (57 tensors), 1.2-1.4x on
DenseNet-121 (251 tensors, 113 MB a side a sample). On top of it onnxprobe loads the model,
reads the optimized graph, compares every pair (DenseNet-121: 2 x 113 MB a sample, bounded by
memory bandwidth on two cores) and, when every sample passes, finds where the focus sample's
differences are born (DenseNet-121: 372 isolated runs, about 0.45 s).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

COMPARE_GOAL, BASELINE_GOAL = 2.0, 1.5

PLAIN = r"""
import sys, time, glob, json, numpy as np, onnxruntime as ort
model, levels, folder = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
samples = [dict(np.load(f)) for f in sorted(glob.glob(folder + "/*.npz"))]
names = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
         "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
sources = [model] * len(levels)
if len(sys.argv) > 4:  # the capture floor: each side's compared tensors marked as outputs
    import onnx
    marked = json.load(open(sys.argv[4]))
    sources = []
    for side in marked:
        m = onnx.load(model)
        outputs = {o.name for o in m.graph.output}
        m.graph.output.extend(onnx.ValueInfoProto(name=n) for n in side if n not in outputs)
        sources.append(m.SerializeToString())
t0 = time.perf_counter()
for level, source in zip(levels, sources):
    so = ort.SessionOptions()
    so.graph_optimization_level = names[level]
    s = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
    for feed in samples:
        s.run(None, feed)
print(time.perf_counter() - t0)
"""

MAKE_SAMPLES = r"""
import sys, numpy as np, onnxruntime as ort
model, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
for k in range(n):
    rng = np.random.default_rng(k)
    feed = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    np.savez(f"{folder}/sample_{k:03d}.npz", **feed)
"""


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(map(str, cmd))} failed with exit code {r.returncode}: {r.stderr}")
    return seconds


def plain(python, model, levels, folder, marked=None):
    extra = [marked] if marked else []
    out = subprocess.run([python, "-c", PLAIN, model, levels, folder] + extra, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip())


def compared_tensors(report, path):
    """Writes [side A's names, side B's names] of the tensors the first sample compared."""
    with open(report) as f:
        rows = json.load(f)["samples"][0]["report"]["tensors"]
    with open(path, "w") as f:
        json.dump([[r["name"] for r in rows], [r.get("name_b", r["name"]) for r in rows]], f)
    return len(rows)


def line(label, seconds, base, goal):
    ratio = seconds / base
    return (f"  {label:<44} {seconds:6.2f} s  -> {ratio:.2f}x the plain sessions "
            f"(goal <= {goal}x: {'met' if ratio <= goal else 'not met'})")


def main():
    args = sys.argv[1:]
    n = 8
    if "--samples" in args:
        i = args.index("--samples")
        n = int(args[i + 1])
        del args[i:i + 2]
    rounds = 3
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    exe, python, models = args[0], args[1], args[2:]
    for model in models:
        name = os.path.basename(model)
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "samples")
            os.mkdir(folder)
            subprocess.run([python, "-c", MAKE_SAMPLES, model, folder, str(n)], check=True)
            base = [exe, "compare", model, "--b-opt-level", "all", "-q", "--force"]
            json_out = ["--json", os.path.join(tmp, "r.json")]
            marked = os.path.join(tmp, "marked.json")
            timed(base + ["--samples", "1", "--isolate", "none"] + json_out)
            count = compared_tensors(os.path.join(tmp, "r.json"), marked)
            saved = os.path.join(tmp, "model.baseline")
            subprocess.run([exe, "baseline", "save", model, "-o", saved, "--inputs", folder, "-q"],
                           check=True, stdout=subprocess.DEVNULL)
            # every figure is the best of `rounds` rounds, each round measuring all of them in
            # turn: on a shared machine a single run moves by 20% and more
            jobs = {
                "both": lambda: plain(python, model, "disabled,all", folder),
                "one": lambda: plain(python, model, "disabled", folder),
                "floor": lambda: plain(python, model, "disabled,all", folder, marked),
                "as_is": lambda: timed(base + ["--samples", str(n)] + json_out),
                "bare": lambda: timed(base + ["--samples", str(n), "--isolate", "none"] + json_out),
                "files": lambda: timed(base + ["--inputs", folder] + json_out),
                "check": lambda: timed([exe, "baseline", "check", model, saved, "-q", "--force"] +
                                       json_out),
            }
            best = {}
            for _ in range(rounds):
                for key, job in jobs.items():
                    best[key] = min(best.get(key, float("inf")), job())
            both, one, floor = best["both"], best["one"], best["floor"]
            as_is, bare, files, check = best["as_is"], best["bare"], best["files"], best["check"]
        print(f"{name}, {n} samples, best of {rounds} rounds: plain sessions of both sides {both:.2f} s, of one side "
              f"{one:.2f} s (session creation + runs)")
        print(f"  capture floor: the same sessions with the {count} compared tensors marked as "
              f"outputs {floor:.2f} s = {floor / both:.2f}x the plain sessions")
        print(line(f"compare --samples {n}", as_is, both, COMPARE_GOAL) +
              f"; {as_is / floor:.2f}x the floor")
        print(line(f"compare --samples {n} --isolate none", bare, both, COMPARE_GOAL) +
              f"; {bare / floor:.2f}x the floor")
        print(line(f"compare --inputs DIR ({n} .npz)", files, both, COMPARE_GOAL) +
              f"; {files / floor:.2f}x the floor")
        print(line(f"baseline check ({n} samples)", check, one, BASELINE_GOAL))


if __name__ == "__main__":
    main()
