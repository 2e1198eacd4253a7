#!/usr/bin/python3
"""Scale: a GPT-2-medium-shaped model (bench/make_gpt2_model.py) compared off vs all under a budget.

usage: /usr/bin/python3 bench/scale_bench.py ONNXPROBE MODEL.onnx [BUDGET [OTHER_ONNXPROBE]]

Measured in this one run, each command as its own child (wall time; peak RSS = the larger of
wait4's ru_maxrss and the VmHWM polled every 50 ms while it runs, because the default
comparison times each side afterwards and resets the kernel's high-water mark then
(/proc/self/clear_refs), which hides from wait4 a peak reached before). A child's ru_maxrss
starts from this process's own peak (the kernel carries it over fork and exec), so this process
never loads the model: its graph is read in a child of its own.
  run A: `onnxprobe run MODEL --tensors <outputs>`               (optimizations off)
  run B: the same with `--opt-level all`
  compare: `onnxprobe compare MODEL MODEL --b-opt-level all --max-memory BUDGET` (as is, then
           with --latency-runs 0: the default times each side after the comparison)
and prints the ratios the issue sets targets for: compare time / (run A + run B) <= 3 and
compare peak RSS / (one run's peak + budget) <= 2; plus the batches the comparison made and the
phases the JSON report times. With OTHER_ONNXPROBE (e.g. a build of an earlier commit), its
compares are measured in the same run, interleaved with the first's, against the same plain runs.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
TIME_GOAL, MEMORY_GOAL = 3.0, 2.0


def vm_hwm(pid):
    """VmHWM of a running process in bytes; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_child(cmd):
    """(wall seconds, peak RSS MiB of that child, exit code)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    polled = 0
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        polled = max(polled, vm_hwm(p.pid))
        time.sleep(0.05)
    seconds = time.perf_counter() - t0
    return seconds, max(usage.ru_maxrss * 1024, polled) / (1 << 20), os.waitstatus_to_exitcode(status)


def graph_facts(model):
    """(output names, node count) of MODEL, read in a child: loading a model with embedded
    weights here would raise this process's peak, which every later child's ru_maxrss inherits."""
    code = ("import json, sys, onnx; g = onnx.load(sys.argv[1], load_external_data=False).graph; "
            "print(json.dumps([[o.name for o in g.output], len(g.node)]))")
    out = subprocess.run([sys.executable, "-c", code, model], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def compare(exe, model, budget, tmp, extra):
    """(seconds, peak MiB, the JSON report) of one comparison."""
    report = os.path.join(tmp, "r.json")
    s, m, rc = run_child([exe, "compare", model, model, "--b-opt-level", "all", "--max-memory",
                          budget, "-q", "--force", "--json", report] + extra)
    if rc not in (0, 1):
        sys.exit(f"{exe} compare {' '.join(extra)} failed with exit code {rc}")
    with open(report) as f:
        r = json.load(f)
    os.remove(report)
    return s, m, r


def phases(r):
    """The phases the JSON report times, as text."""
    parts = [f"comparison {r['summary']['seconds']:.1f} s"]
    loc = r.get("localization") or {}
    if loc.get("ran"):
        parts.append(f"localization {loc.get('seconds', 0):.1f} s "
                     f"({loc.get('isolation_runs', 0)} isolation runs)")
    for side in ("a", "b"):
        res = (r.get("resources") or {}).get(side)
        if res:
            lat = res["latency_ms"]
            parts.append(f"latency {side.upper()}: session {lat['session_creation'] / 1e3:.1f} s + "
                         f"{lat['runs']} runs of {lat['median'] / 1e3:.1f} s")
    return ", ".join(parts)


def main():
    exe, model = sys.argv[1], sys.argv[2]
    budget = sys.argv[3] if len(sys.argv) > 3 else "2G"
    others = sys.argv[4:5]
    budget_mib = int(budget[:-1]) * UNITS[budget[-1]] / (1 << 20)
    outputs, nodes = graph_facts(model)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for side, level in (("A", "disabled"), ("B", "all")):
            runs[side] = run_child([exe, "run", model, "--tensors", ",".join(outputs), "--opt-level",
                                    level, "-q", "-o", os.path.join(tmp, side + ".npz")])
            if runs[side][2] != 0:
                sys.exit(f"onnxprobe run ({side}) failed with exit code {runs[side][2]}")
            os.remove(os.path.join(tmp, side + ".npz"))
        measured = {}
        # interleaved, so that a change in the machine's load reaches every binary alike
        for label, extra in (("as is", []), ("--latency-runs 0", ["--latency-runs", "0"])):
            for binary in [exe] + others:
                measured[(binary, label)] = compare(binary, model, budget, tmp, extra)
    size = os.path.getsize(model) / (1 << 20)
    (a_s, a_m, _), (b_s, b_m, _) = runs["A"], runs["B"]
    one = max(a_m, b_m)
    print(f"{os.path.basename(model)}: {size:.0f} MiB, {nodes} nodes, "
          f"budget {budget}")
    print(f"  run A (off, outputs only)  {a_s:6.2f} s, peak RSS {a_m:6.0f} MiB")
    print(f"  run B (all, outputs only)  {b_s:6.2f} s, peak RSS {b_m:6.0f} MiB")
    for binary in [exe] + others:
        if others:
            print(f"  {binary}:")
        for label in ("as is", "--latency-runs 0"):
            c_s, c_m, r = measured[(binary, label)]
            summary = r["summary"]
            time_ratio, memory_ratio = c_s / (a_s + b_s), c_m / (one + budget_mib)
            print(f"  compare {label:<17} {c_s:6.2f} s, peak RSS {c_m:6.0f} MiB, "
                  f"{summary['batches']} batches, {summary['compared']} tensors compared "
                  f"({summary['failed']} over tolerance)")
            print(f"    time: compare / (run A + run B) = {time_ratio:.2f}x (target <= "
                  f"{TIME_GOAL:.0f}x: {'met' if time_ratio <= TIME_GOAL else 'not met'})")
            print(f"    memory: compare / (one run + budget) = {memory_ratio:.2f}x (target <= "
                  f"{MEMORY_GOAL:.0f}x: {'met' if memory_ratio <= MEMORY_GOAL else 'not met'})")
            print(f"    phases: {phases(r)}")


if __name__ == "__main__":
    main()
