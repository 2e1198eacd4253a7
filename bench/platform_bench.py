#!/usr/bin/python3
"""A side on another CPU: what a comparison with an emulated side costs (docs/platform.md).

usage: /usr/bin/python3 bench/platform_bench.py ONNXPROBE MODEL.onnx [PLATFORM [RUNS]]

Measured in this one run, each command as its own child, alternating, RUNS times (median):
  plain:   `onnxprobe run MODEL --platform PLATFORM --tensors <graph outputs>`: the model run
           once on the emulated CPU for its outputs alone (the cost of the side without onnxprobe's
           capture: starting qemu and the runtime, creating the session, one run)
  host:    the same on this machine (no platform)
  compare: `onnxprobe compare MODEL --b-platform PLATFORM --latency-runs 0`: every tensor of the
           model captured on both sides and compared, drift origins localized on the target
and prints compare / plain (the issue's target: <= 1.5) and plain / host (what emulation costs).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def outputs_of(model):
    code = ("import json, sys, onnx; g = onnx.load(sys.argv[1], load_external_data=False).graph; "
            "print(json.dumps([o.name for o in g.output]))")
    return json.loads(subprocess.check_output(["/usr/bin/python3", "-c", code, model], text=True))


def timed(cmd):
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"platform_bench: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return dt, r


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    exe, model = sys.argv[1], sys.argv[2]
    platform = sys.argv[3] if len(sys.argv) > 3 else "aarch64"
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    outs = outputs_of(model)
    tmp = tempfile.mkdtemp(prefix="platform-bench-")
    plain = [exe, "run", model, "--platform", platform, "-q", "--tensors", ",".join(outs), "-o",
             os.path.join(tmp, "plain.dump"), "--force"]
    host = [exe, "run", model, "-q", "--tensors", ",".join(outs), "-o", os.path.join(tmp, "host.dump"), "--force"]
    compare = [exe, "compare", model, "--b-platform", platform, "--latency-runs", "0", "-q", "--json",
               os.path.join(tmp, "r.json"), "--force"]
    times = {"plain": [], "host": [], "compare": []}
    for _ in range(runs):
        for name, cmd in (("plain", plain), ("host", host), ("compare", compare)):
            times[name].append(timed(cmd)[0])
    rep = json.load(open(os.path.join(tmp, "r.json")))
    med = {k: statistics.median(v) for k, v in times.items()}
    s = rep["summary"]
    print(f"{os.path.basename(model)} on {platform}: plain emulated run {med['plain']:.2f} s, host run "
          f"{med['host']:.2f} s, compare {med['compare']:.2f} s (median of {runs})")
    print(f"  compare / plain emulated run: {med['compare'] / med['plain']:.2f}x (target <= 1.5); "
          f"emulation: {med['plain'] / med['host']:.1f}x the host")
    bitexact = sum(1 for t in rep["tensors"] if t.get("max_abs") == 0)
    print(f"  {s['compared']} tensors compared, {bitexact} bit-exact across the platforms, "
          f"{len(rep['drift_origins'])} drift origins, verdict {rep['verdict']}")


if __name__ == "__main__":
    main()
