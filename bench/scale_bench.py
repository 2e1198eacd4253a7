#!/usr/bin/python3
"""Scale: a GPT-2-medium-shaped model (bench/make_gpt2_model.py) compared off vs all under a budget.

usage: /usr/bin/python3 bench/scale_bench.py ONNXPROBE MODEL.onnx [BUDGET]

Measured in this one run, each command as its own child (wall time, peak RSS from wait4):
  run A: `onnxprobe run MODEL --tensors <outputs>`               (optimizations off)
  run B: the same with `--opt-level all`
  compare: `onnxprobe compare MODEL MODEL --b-opt-level all --max-memory BUDGET` (as is, then
           with --latency-runs 0: the default times each side after the comparison)
and prints the ratios the issue sets targets for: compare time / (run A + run B) <= 3 and
compare peak RSS / (one run's peak + budget) <= 2; plus the batches the comparison made.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import onnx

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def run_child(cmd):
    """(wall seconds, peak RSS MiB of that child, exit code, its stdout)."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=null)
        out = p.stdout.read()
        p.stdout.close()
        _, status, usage = os.wait4(p.pid, 0)
    return (time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
            out.decode(errors="replace"))


def main():
    exe, model = sys.argv[1], sys.argv[2]
    budget = sys.argv[3] if len(sys.argv) > 3 else "2G"
    budget_mib = int(budget[:-1]) * UNITS[budget[-1]] / (1 << 20)
    outputs = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for side, level in (("A", "disabled"), ("B", "all")):
            runs[side] = run_child([exe, "run", model, "--tensors", ",".join(outputs), "--opt-level",
                                    level, "-q", "-o", os.path.join(tmp, side + ".npz")])
            if runs[side][2] != 0:
                sys.exit(f"onnxprobe run ({side}) failed with exit code {runs[side][2]}")
        report = os.path.join(tmp, "r.json")
        c_s, c_m, c_rc, _ = run_child([exe, "compare", model, model, "--b-opt-level", "all",
                                       "--max-memory", budget, "-q", "--json", report])
        if c_rc not in (0, 1):
            sys.exit(f"onnxprobe compare failed with exit code {c_rc}")
        with open(report) as f:
            r = json.load(f)
        # the default comparison also times each side afterwards (--latency-runs 3): without it
        n_s, n_m, _, _ = run_child([exe, "compare", model, model, "--b-opt-level", "all",
                                    "--max-memory", budget, "-q", "--latency-runs", "0"])
    summary = r["summary"]
    size = os.path.getsize(model) / (1 << 20)
    (a_s, a_m, _, _), (b_s, b_m, _, _) = runs["A"], runs["B"]
    one = max(a_m, b_m)
    print(f"{os.path.basename(model)}: {size:.0f} MiB, {len(onnx.load(model, load_external_data=False).graph.node)} nodes, budget {budget}")
    print(f"  run A (off, outputs only)  {a_s:6.2f} s, peak RSS {a_m:6.0f} MiB")
    print(f"  run B (all, outputs only)  {b_s:6.2f} s, peak RSS {b_m:6.0f} MiB")
    print(f"  compare off vs all         {c_s:6.2f} s, peak RSS {c_m:6.0f} MiB, "
          f"{summary['batches']} batches, {summary['compared']} tensors compared "
          f"({summary['failed']} over tolerance)")
    print(f"  compare, --latency-runs 0  {n_s:6.2f} s, peak RSS {n_m:6.0f} MiB "
          f"({n_s / (a_s + b_s):.2f}x the two runs)")
    print(f"  time: compare / (run A + run B) = {c_s / (a_s + b_s):.2f}x (target <= 3x)")
    print(f"  memory: compare / (one run + budget) = {c_m / (one + budget_mib):.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
