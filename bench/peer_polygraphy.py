#!/usr/bin/python3
"""The same job done by onnxprobe and by Polygraphy, per model, measured in one run.

usage: /usr/bin/python3 bench/peer_polygraphy.py ONNXPROBE POLYGRAPHY MODEL.onnx[:BUDGET] ...

The job: every intermediate tensor of MODEL with ONNX Runtime optimizations off (A) vs all (B),
then a comparison. Polygraphy does it as three commands (run A and save every output, run B
the same, compare the two files); its time is their sum and its peak RSS the largest of the
three. onnxprobe does it as one `compare`, measured as is (it also names the nodes where any
difference is born), with --latency-runs 3 (each side also timed with plain runs afterwards),
with --isolate none (capture, compare and report only: the job Polygraphy does), and with
--max-memory BUDGET.
Each command runs as its own child: wall time, peak RSS (wait4, and VmHWM polled every 50 ms).

A Polygraphy command whose resident memory passes ONNXPROBE_PEER_MAX_RSS (bytes; default 60%
of the memory available when the bench starts) is stopped, and the report says so: its figures
are then lower bounds. The goals (issue 11): >= 10x faster, <= 0.5x the memory.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

SPEED_GOAL, MEMORY_GOAL = 10.0, 0.5


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def memory_of(pid):
    """(VmRSS, VmHWM) of a running process in bytes; zeros once it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


class Measured:
    def __init__(self, seconds, peak_mib, rc, stopped=""):
        self.seconds, self.peak_mib, self.rc, self.stopped = seconds, peak_mib, rc, stopped


def run_child(cmd, max_rss=0, timeout=3600):
    """Runs cmd; stops it when its RSS passes max_rss (0: no limit) or after timeout seconds.
    The peak is the larger of wait4's and the VmHWM polled while it runs: onnxprobe's latency
    measurement resets the high-water mark (/proc/self/clear_refs), which would hide from wait4
    a peak reached before it."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stopped = ""
    polled = 0
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        elapsed = time.perf_counter() - t0
        rss, hwm = memory_of(p.pid)
        polled = max(polled, hwm)
        if max_rss and rss > max_rss:
            stopped = f"stopped at {max_rss / 2**30:.1f} GiB resident after {elapsed:.0f} s"
        elif elapsed > timeout:
            stopped = f"stopped after {timeout} s"
        if stopped:
            p.send_signal(signal.SIGKILL)
            _, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    peak_mib = max(usage.ru_maxrss * 1024, polled) / 2**20
    return Measured(time.perf_counter() - t0, peak_mib, p.returncode, stopped)


def polygraphy(pg, model, tmp, max_rss):
    """Run A, run B, compare: each Measured, or fewer when one was stopped or failed."""
    a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    steps = [
        ("run A", [pg, "run", model, "--onnxrt", "--onnx-outputs", "mark", "all",
                   "--graph-optimization-level", "ORT_DISABLE_ALL", "--save-outputs", a]),
        ("run B", [pg, "run", model, "--onnxrt", "--onnx-outputs", "mark", "all",
                   "--graph-optimization-level", "ORT_ENABLE_ALL", "--save-outputs", b]),
        ("compare", [pg, "run", "--load-outputs", a, b]),
    ]
    done = []
    for name, cmd in steps:
        m = run_child(cmd, max_rss)
        done.append((name, m))
        # exit 1 from the comparison is a mismatch found, still a finished job
        if m.stopped or m.rc not in (0, 1) or (m.rc == 1 and name != "compare"):
            break
    for f in (a, b):
        if os.path.exists(f):
            os.remove(f)
    return done


def onnxprobe(exe, model, tmp, extra):
    report = os.path.join(tmp, "r.json")
    m = run_child([exe, "compare", model, "--b-opt-level", "all", "-q", "--force", "--json",
                   report] + extra)
    summary = {}
    if m.rc in (0, 1):
        with open(report) as f:
            r = json.load(f)
        summary = dict(r["summary"], fused=len(r.get("fused_in_b", [])))
    os.remove(report) if os.path.exists(report) else None
    return m, summary


def main():
    exe, pg = sys.argv[1], sys.argv[2]
    limit = int(os.environ.get("ONNXPROBE_PEER_MAX_RSS", "0")) or int(0.6 * mem_available())
    for arg in sys.argv[3:]:
        model, _, budget = arg.partition(":")
        budget = budget or "256M"
        name = os.path.basename(model)
        with tempfile.TemporaryDirectory() as tmp:
            steps = polygraphy(pg, model, tmp, limit)
            runs = [("as is", *onnxprobe(exe, model, tmp, [])),
                    ("--latency-runs 3", *onnxprobe(exe, model, tmp, ["--latency-runs", "3"])),
                    ("--isolate none", *onnxprobe(exe, model, tmp, ["--isolate", "none"])),
                    (f"--max-memory {budget}", *onnxprobe(exe, model, tmp, ["--max-memory", budget]))]
        print(f"{name}, optimizations off (A) vs all (B), every intermediate tensor:")
        pg_s = sum(m.seconds for _, m in steps)
        pg_m = max(m.peak_mib for _, m in steps)
        finished = len(steps) == 3 and all(not m.stopped and m.rc in (0, 1) for _, m in steps)
        parts = " + ".join(f"{n} {m.seconds:.2f} s ({m.peak_mib:.0f} MiB)" for n, m in steps)
        print(f"  polygraphy  {parts} = {pg_s:.2f} s, peak RSS {pg_m:.0f} MiB")
        if not finished:
            n, m = steps[-1]
            why = m.stopped or f"exit code {m.rc}"
            print(f"    polygraphy did not finish: {n} {why} (ONNXPROBE_PEER_MAX_RSS); "
                  "its figures are lower bounds")
        bound = "" if finished else ">"
        for label, m, s in runs:
            if m.rc not in (0, 1):
                print(f"  onnxprobe compare {label:<18} failed with exit code {m.rc}")
                continue
            speed, memory = pg_s / m.seconds, m.peak_mib / pg_m
            print(f"  onnxprobe compare {label:<18} {m.seconds:7.2f} s, peak RSS {m.peak_mib:6.0f} MiB"
                  f"  -> {bound}{speed:.1f}x faster (goal >= {SPEED_GOAL:.0f}x: "
                  f"{'met' if speed >= SPEED_GOAL else 'not met'}), "
                  f"{'<' if bound else ''}{memory:.2f}x the memory (goal <= {MEMORY_GOAL}x: "
                  f"{'met' if memory <= MEMORY_GOAL else 'not met'}); "
                  f"{s['compared']} tensors compared, {s['fused']} of A fused away in B, "
                  f"{s['batches']} batches")
        print("  (polygraphy captures every tensor on B too, which blocks B's fusions; onnxprobe "
              "captures on B only what its optimized graph keeps and lists the rest. Polygraphy "
              "times its one capture run per side; onnxprobe as is isolates the nodes where "
              "differences are born, even below tolerance, which '--isolate none' does not; "
              "'--latency-runs 3' also times 3 plain runs of each side)")


if __name__ == "__main__":
    main()
