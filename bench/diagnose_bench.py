#!/usr/bin/python3
"""Diagnosis on held-in fault cases: is the named cause the injected one, does its fix make the
comparison pass, and what does diagnosis cost next to the comparison (measured side by side, same
run).

  bench/diagnose_bench.py ONNXPROBE PYENV_PYTHON CRASH_OP_LIB OUT_DIR [small|full]

Cases: tests/localize/make_fault_cases.py (weights, a BatchNormalization epsilon, Conv pads, a
Constant, an added float16 round trip, two weights; `full` adds torchvision ResNet-50 and
MobileNetV2), and tests/python/diagnose_models.py's runtime causes (an optimizer pass, a runtime
version's kernel, a non-deterministic custom op) and quantization (a scale too small, inputs
beyond the calibrated range), a float16 overflow and a float16 underflow.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "python"))
from diagnose_models import cancellation_cnn, float16_sum_model, float16_tiny_model, noise_model, with_flags  # noqa: E402

EXPECT = {"weight": "weight-changed", "two_weights": "weight-changed", "bn_epsilon": "attribute-changed",
          "conv_pads": "attribute-changed", "constant": "attribute-changed", "fp16_cast": "nodes-added"}


def sh(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800, **kw)


def timed_compare(onnxprobe, args, out, extra=()):
    t0 = time.perf_counter()
    r = sh([onnxprobe, "compare", *args, *extra, "--json", out, "-q"])
    return time.perf_counter() - t0, r


def main():
    onnxprobe, pyenv, custom, out = (os.path.abspath(p) for p in sys.argv[1:5])
    size = sys.argv[5] if len(sys.argv) > 5 else "small"
    os.makedirs(out, exist_ok=True)
    cases = []  # (name, compare args, expected cause, fault nodes, how to apply the fix)
    fc = os.path.join(out, "faults")
    r = sh(["/usr/bin/python3", os.path.join(SRC, "tests", "localize", "make_fault_cases.py"), fc, size])
    if r.returncode != 0:
        sys.exit("make_fault_cases failed: " + r.stderr[-2000:])
    for c in json.load(open(os.path.join(fc, "cases.json"))):
        if c.get("expect") == "pass" or c["fault"] not in EXPECT:
            continue
        cases.append((c["faulty"][:-5], [os.path.join(fc, c["base"]), os.path.join(fc, c["faulty"])],
                      EXPECT[c["fault"]], c.get("nodes", [c["node"]]), "model"))
    cnn = os.path.join(out, "cancellation.onnx")
    cancellation_cnn(cnn)
    cases.append(("optimizer (BN fusion)", [cnn, "--b-opt-level", "basic"], "optimizer", ["conv"], "flags"))
    cases.append(("kernel (ORT 1.20.1 BN)", [cnn, "--b-ort-version", "1.20.1"], "kernel-change", ["bn"], "flags"))
    noise = os.path.join(out, "noise.onnx")
    noise_model(noise)
    cases.append(("non-deterministic op", [noise, noise, "--custom-op-lib", custom, "--range", "0,1"],
                  "nondeterminism", ["noise"], "noise"))
    f32, f16 = os.path.join(out, "sum32.onnx"), os.path.join(out, "sum16.onnx")
    float16_sum_model(f32, False)
    float16_sum_model(f16, True)
    cases.append(("float16 overflow", [f32, f16, "--range", "0,1"], "float16-range", ["reduce_sum"], "fp16"))
    t32, t16 = os.path.join(out, "tiny32.onnx"), os.path.join(out, "tiny16.onnx")
    float16_tiny_model(t32, False)
    float16_tiny_model(t16, True)
    cases.append(("float16 underflow", [t32, t16, "--range", "0,1"], "float16-range", ["grow", "shrink"], "fp16_tiny"))
    qm = os.path.join(SRC, "tests", "python", "quant_models.py")
    for name, extra in (("scale", ["--scale-fault", "r1_scale=0.1"]), ("calib", [])):
        d = os.path.join(out, "quant_" + name)
        r = sh([pyenv, qm, d, "cnn", "qdq", "per-tensor", *extra])
        if r.returncode != 0:
            sys.exit("quant_models failed: " + r.stderr[-2000:])
        x = np.load(os.path.join(d, "input.npy"))
        inp = os.path.join(d, "input.npy")
        if name == "calib":
            inp = os.path.join(d, "big.npy")
            np.save(inp, (x * 8).astype(np.float32))
        cases.append(("quantization " + ("scale too small" if name == "scale" else "inputs beyond calibration"),
                      [os.path.join(d, "float.onnx"), os.path.join(d, "quant.onnx"), "--input", inp],
                      "quantization-saturation" if name == "scale" else "calibration-range", ["conv1"], "quant_" + name))

    rows, costs, right, fixed = [], [], 0, 0
    for name, args, cause, nodes, how in cases:
        js = os.path.join(out, "r.json")
        t_plain = min(timed_compare(onnxprobe, args, js, ["--no-diagnose"])[0] for _ in range(3))
        walls = []
        for _ in range(3):
            t, r = timed_compare(onnxprobe, args, js)
            walls.append(t)
        rep = json.load(open(js))
        d = rep.get("diagnosis", {"findings": [], "seconds": 0})
        hit = next((f for f in d["findings"] if f["cause"] == cause and f["node"] in nodes), None)
        ok_cause = hit is not None
        right += ok_cause
        works = False
        if hit is not None:
            fx = hit["fix"]
            if how == "model":  # every model edit found, one after the other
                done = all(sh(["/usr/bin/python3", *shlex.split(f["fix"]["command"])[1:]]).returncode == 0
                           for f in d["findings"] if f["fix"]["side_b"])
                works = done and sh([onnxprobe, "compare", args[0], fx["side_b"], "-q"]).returncode == 0
            elif how == "flags":
                works = sh([onnxprobe, "compare", *with_flags(args, fx["compare_flags"]), "-q"]).returncode == 0
            elif how == "noise":
                cmd = shlex.split(fx["command"])
                sh([onnxprobe, *cmd[1:], "--range", "0,1"], cwd=out)
                flags = [os.path.join(out, f) if f.endswith(".json") else f for f in fx["compare_flags"]]
                works = sh([onnxprobe, "compare", *with_flags(args, flags), "-q"]).returncode == 0
            elif how in ("fp16", "fp16_tiny"):
                fixed_model = os.path.join(out, how + "_fixed.onnx")
                (float16_sum_model if how == "fp16" else float16_tiny_model)(fixed_model, True, fx["keep_float_nodes"])
                works = sh([onnxprobe, "compare", args[0], fixed_model, *args[2:], "-q"]).returncode == 0
            else:
                d2 = os.path.join(out, how + "_fixed")
                extra = ["--exclude", ",".join(fx["keep_float_nodes"])] if how == "quant_scale" else ["--calib-scale", "8"]
                if sh([pyenv, qm, d2, "cnn", "qdq", "per-tensor", *extra]).returncode == 0:
                    works = sh([onnxprobe, "compare", args[0], os.path.join(d2, "quant.onnx"), *args[2:], "-q"]).returncode == 0
        fixed += works
        wall = statistics.median(walls)
        cost = d["seconds"] / t_plain if t_plain > 0 else 0
        costs.append(cost)
        got = ", ".join(f"{f['cause']}@{f['node']}" for f in d["findings"][:2]) or "-"
        rows.append((name, cause, got, ok_cause, works, t_plain, wall, d["seconds"], cost))
    print(f"{'case':<32} {'injected cause':<24} {'named (first two)':<58} cause  fix  "
          f"compare s  with diagnosis s  diagnosis s  x compare")
    for n, c, g, ok, w, tp, tw, ds, x in rows:
        print(f"{n[:32]:<32} {c:<24} {g[:58]:<58} {'yes' if ok else 'NO':<6} {'yes' if w else 'NO':<4} "
              f"{tp:9.3f}  {tw:16.3f}  {ds:11.3f}  {x:9.2f}")
    n = len(rows)
    print(f"cause right: {right}/{n} ({100 * right / n:.0f}%); fix works: {fixed}/{n} ({100 * fixed / n:.0f}%); "
          f"diagnosis cost: median {statistics.median(costs):.2f}x, max {max(costs):.2f}x the comparison "
          f"(diagnosis seconds / the same comparison with --no-diagnose, best of 3)")


if __name__ == "__main__":
    main()
