#!/usr/bin/python3
"""Several samples through one comparison session, against plain ONNX Runtime sessions doing the
same runs, measured side by side in one run.

usage: /usr/bin/python3 bench/samples_bench.py ONNXPROBE PYTHON MODEL.onnx ... [--samples N]

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
"""
import os
import subprocess
import sys
import tempfile
import time

COMPARE_GOAL, BASELINE_GOAL = 2.0, 1.5

PLAIN = r"""
import sys, time, glob, numpy as np, onnxruntime as ort
model, levels, folder = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
samples = [dict(np.load(f)) for f in sorted(glob.glob(folder + "/*.npz"))]
names = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
         "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
t0 = time.perf_counter()
for level in levels:
    so = ort.SessionOptions()
    so.graph_optimization_level = names[level]
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
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


def plain(python, model, levels, folder):
    out = subprocess.run([python, "-c", PLAIN, model, levels, folder], check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip())


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
    exe, python, models = args[0], args[1], args[2:]
    for model in models:
        name = os.path.basename(model)
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "samples")
            os.mkdir(folder)
            subprocess.run([python, "-c", MAKE_SAMPLES, model, folder, str(n)], check=True)
            both = plain(python, model, "disabled,all", folder)
            one = plain(python, model, "disabled", folder)
            base = [exe, "compare", model, "--b-opt-level", "all", "-q", "--force"]
            json_out = ["--json", os.path.join(tmp, "r.json")]
            as_is = timed(base + ["--samples", str(n)] + json_out)
            bare = timed(base + ["--samples", str(n), "--isolate", "none"] + json_out)
            files = timed(base + ["--inputs", folder] + json_out)
            saved = os.path.join(tmp, "model.baseline")
            subprocess.run([exe, "baseline", "save", model, "-o", saved, "--inputs", folder, "-q"],
                           check=True, stdout=subprocess.DEVNULL)
            check = timed([exe, "baseline", "check", model, saved, "-q", "--force"] + json_out)
        print(f"{name}, {n} samples: plain sessions of both sides {both:.2f} s, of one side "
              f"{one:.2f} s (session creation + runs)")
        print(line(f"compare --samples {n}", as_is, both, COMPARE_GOAL))
        print(line(f"compare --samples {n} --isolate none", bare, both, COMPARE_GOAL))
        print(line(f"compare --inputs DIR ({n} .npz)", files, both, COMPARE_GOAL))
        print(line(f"baseline check ({n} samples)", check, one, BASELINE_GOAL))


if __name__ == "__main__":
    main()
