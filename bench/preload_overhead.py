"""Cost of libonnxprobe_preload.so in a deployed application (tests/preload/deployed_c.c):
per-Run latency the application sees, and the process's wall time (dumps written at exit
included), with the preload absent, preloaded but unset, set but not capturing this run (only
run 1 of the session is captured), and capturing every run.
usage: preload_overhead.py BUILD MODEL [RUNS]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    build, model = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    app = os.path.join(build, "tests", "onnxprobe_deployed_c")
    lib = os.path.join(build, "libonnxprobe_preload.so")
    for f in (app, lib):
        if not os.path.exists(f):
            sys.exit(f"preload_overhead: {f} is missing (build the onnxprobe_preload and "
                     "onnxprobe_deployed_c targets)")
    work = tempfile.mkdtemp(prefix="onnxprobe-preload-bench-")
    try:
        base_env = {k: v for k, v in os.environ.items()
                    if not k.startswith("ONNXPROBE_") and k != "LD_PRELOAD"}
        dumps = os.path.join(work, "dumps")
        modes = [
            ("no preload", {}),
            ("preloaded, unset", {"LD_PRELOAD": lib}),
            ("set, this run not captured", {"LD_PRELOAD": lib, "ONNXPROBE_CAPTURE": dumps,
                                            "ONNXPROBE_EVERY": str(10**9)}),
            ("capturing every run", {"LD_PRELOAD": lib, "ONNXPROBE_CAPTURE": dumps,
                                     "ONNXPROBE_MAX_RUNS": "0"}),
        ]
        results = {}
        for name, extra in modes:
            shutil.rmtree(dumps, ignore_errors=True)
            env = dict(base_env, **extra)
            t0 = time.perf_counter()
            r = subprocess.run([app, model, str(runs), os.path.join(work, "out.bin"), "disabled",
                                "path", "timing"], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if r.returncode != 0:
                sys.exit(f"preload_overhead: {name}: exit {r.returncode}: {r.stderr.strip()}")
            times = [float(x) for x in r.stdout.split()]
            # run 1 warms the session up (and is the one captured in the "not captured" mode)
            steady = times[1:] if len(times) > 1 else times
            size = 0
            for root, _, files in os.walk(dumps):
                size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
            results[name] = (statistics.median(steady), times[0], wall, size)
        base = results["no preload"]
        print(f"{os.path.basename(model)}: {runs} runs, application Run latency (median of runs 2..N)")
        for name, (med, first, wall, size) in results.items():
            print(f"  {name:28s} run {med * 1e3:8.2f} ms ({med / base[0]:.2f}x)  first run "
                  f"{first * 1e3:8.2f} ms  process {wall:6.2f} s ({wall / base[2]:.2f}x)"
                  + (f"  dumps {size / 2**20:.1f} MiB" if size else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
