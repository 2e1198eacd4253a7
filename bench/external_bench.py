#!/usr/bin/python3
"""Larger than memory: a model with 2.1 GiB of external data (a sparse file, tests/python/sparse_model.py)
run and compared under a 256M budget, against plain runs measured in this same run.

usage: /usr/bin/python3 bench/external_bench.py ONNXPROBE [PYTHON_WITH_ONNXRUNTIME] [BUDGET]

Each command runs as its own child (wall time, peak RSS from wait4):
  run A / run B: `onnxprobe run MODEL --tensors y --max-memory BUDGET` at optimizations off / all
                 (without a budget, finding B's optimized graph copies the 2 GiB table once:
                 ONNX Runtime writes every weight when it saves a graph; docs/memory.md)
  runtime:       a plain onnxruntime.InferenceSession of the model (optimizations all), when the
                 Python given has onnxruntime (the bootstrap's .deps/pyenv/bin/python)
  compare:       `onnxprobe compare MODEL MODEL --b-opt-level all --max-memory BUDGET --latency-runs 0`
and prints compare time / (run A + run B), compare peak / (one run + budget) and compare peak /
(the runtime's plain session + budget).
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import sparse_model  # noqa: E402
from scale_bench import UNITS, run_child  # noqa: E402

RUNTIME = """import sys, numpy as np, onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
s.run(["y"], dict(np.load(sys.argv[2])))
"""


def main():
    exe = sys.argv[1]
    py = sys.argv[2] if len(sys.argv) > 2 else ""
    budget = sys.argv[3] if len(sys.argv) > 3 else "256M"
    budget_mib = int(budget[:-1]) * UNITS[budget[-1]] / (1 << 20)
    with tempfile.TemporaryDirectory() as tmp:
        model = sparse_model.make(tmp)
        data = os.path.join(tmp, sparse_model.DATA_FILE)
        on_disk = os.stat(data).st_blocks * 512
        if on_disk > 64 << 20:
            print(f"skipped: {tmp} does not keep sparse files ({on_disk >> 20} MiB on disk)")
            return
        inputs = os.path.join(tmp, "in.npz")
        np.savez(inputs, **sparse_model.inputs())
        runs = {}
        for side, level in (("A", "disabled"), ("B", "all")):
            runs[side] = run_child([exe, "run", model, "--input", inputs, "--tensors", "y",
                                    "--opt-level", level, "--max-memory", budget, "-q",
                                    "-o", os.path.join(tmp, side + ".npz")])
            if runs[side][2] != 0:
                sys.exit(f"onnxprobe run ({side}) failed with exit code {runs[side][2]}")
        rt = run_child([py, "-c", RUNTIME, model, inputs]) if py and os.path.exists(py) else None
        c_s, c_m, c_rc = run_child([exe, "compare", model, model, "--input", inputs,
                                    "--b-opt-level", "all", "--max-memory", budget, "-q",
                                    "--latency-runs", "0"])
        if c_rc not in (0, 1):
            sys.exit(f"onnxprobe compare failed with exit code {c_rc}")
    (a_s, a_m, _), (b_s, b_m, _) = runs["A"], runs["B"]
    print(f"sparse external data: {sparse_model.ROWS * sparse_model.DIM * 4 / (1 << 30):.2f} GiB table "
          f"({on_disk >> 20} MiB on disk), budget {budget}")
    print(f"  run A (off, output only)   {a_s:6.2f} s, peak RSS {a_m:6.0f} MiB")
    print(f"  run B (all, output only)   {b_s:6.2f} s, peak RSS {b_m:6.0f} MiB")
    if rt is not None:
        print(f"  onnxruntime Python session {rt[0]:6.2f} s, peak RSS {rt[1]:6.0f} MiB (plain, all)")
    print(f"  compare off vs all         {c_s:6.2f} s, peak RSS {c_m:6.0f} MiB (--latency-runs 0)")
    print(f"  time: compare / (run A + run B) = {c_s / (a_s + b_s):.2f}x")
    print(f"  memory: compare / (one run + budget) = {c_m / (max(a_m, b_m) + budget_mib):.2f}x")
    if rt is not None:
        print(f"  memory: compare / (runtime session + budget) = {c_m / (rt[1] + budget_mib):.2f}x "
              f"(target <= 1x)")


if __name__ == "__main__":
    main()
