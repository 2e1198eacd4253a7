"""Cost of libonnxprobe_preload.so in a deployed application (tests/preload/deployed_c.c): the
latency of each Run call as the application sees it, and the process's wall time (dumps still
queued at exit written before it ends), for: no preload; preloaded but unset; set with only run 1
captured; every 5th run captured; every run captured. Modes are interleaved over rounds and the
best round is kept, so a busy machine shows less noise.
Run 1 of a process is its warm-up; when it is captured it is also the process's first capture,
which runs on the application's thread (once per process).
Dumps go to $ONNXPROBE_BENCH_DUMPS when set (e.g. /dev/shm, to leave the disk out), else to the
system's temporary folder.
usage: preload_overhead.py BUILD MODEL [RUNS] [ROUNDS]"""
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
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    app = os.path.join(build, "tests", "onnxprobe_deployed_c")
    lib = os.path.join(build, "libonnxprobe_preload.so")
    for f in (app, lib):
        if not os.path.exists(f):
            sys.exit(f"preload_overhead: {f} is missing (build the onnxprobe_preload and "
                     "onnxprobe_deployed_c targets)")
    work = tempfile.mkdtemp(prefix="onnxprobe-preload-bench-")
    dumps_root = os.environ.get("ONNXPROBE_BENCH_DUMPS") or work
    dumps = os.path.join(dumps_root, f"onnxprobe-preload-bench-dumps-{os.getpid()}")
    on = {"LD_PRELOAD": lib, "ONNXPROBE_CAPTURE": dumps, "ONNXPROBE_MAX_RUNS": "0"}
    modes = [  # (name, environment, is run r (1-based) captured)
        ("no preload", {}, lambda r: False),
        ("preloaded, unset", {"LD_PRELOAD": lib}, lambda r: False),
        ("set, only run 1 captured", dict(on, ONNXPROBE_EVERY=str(10**9)), lambda r: r == 1),
        ("every 5th run captured", dict(on, ONNXPROBE_EVERY="5"), lambda r: (r - 1) % 5 == 0),
        ("every run captured", on, lambda r: True),
    ]
    best = {}
    try:
        base_env = {k: v for k, v in os.environ.items()
                    if not k.startswith("ONNXPROBE_") and k != "LD_PRELOAD"}
        for _ in range(rounds):
            for name, extra, captured in modes:
                shutil.rmtree(dumps, ignore_errors=True)
                t0 = time.perf_counter()
                r = subprocess.run([app, model, str(runs), os.path.join(work, "out.bin"), "disabled",
                                    "path", "timing"], env=dict(base_env, **extra),
                                   capture_output=True, text=True)
                wall = time.perf_counter() - t0
                if r.returncode != 0 or r.stderr:
                    sys.exit(f"preload_overhead: {name}: exit {r.returncode}: {r.stderr.strip()}")
                times = [float(x) for x in r.stdout.split()]
                later = list(enumerate(times[1:], start=2))
                cap = [t for i, t in later if captured(i)]
                plain = [t for i, t in later if not captured(i)]
                size = sum(os.path.getsize(os.path.join(d, f))
                           for d, _, fs in os.walk(dumps) for f in fs)
                row = (statistics.median(plain) if plain else None,
                       statistics.median(cap) if cap else None, times[0], wall, size)
                old = best.get(name)
                if old is None or wall < old[3]:
                    best[name] = row
        base_plain, base_wall = best["no preload"][0], best["no preload"][3]
        print(f"{os.path.basename(model)}: {runs} runs, best of {rounds} rounds, dumps in "
              f"{dumps_root}; Run latency as the application sees it (median over runs 2..N)")

        def ms(t):
            return f"{t * 1e3:8.2f} ms ({t / base_plain:4.2f}x)" if t is not None else " " * 19

        print(f"  {'':26s} {'not captured':>19s} {'captured':>19s} {'run 1':>11s} {'process':>15s}")
        for name, (plain, cap, first, wall, size) in best.items():
            print(f"  {name:26s} {ms(plain)} {ms(cap)} {first * 1e3:8.1f} ms {wall:6.2f} s "
                  f"({wall / base_wall:4.2f}x)" + (f"  dumps {size / 2**20:.0f} MiB" if size else ""))
    finally:
        shutil.rmtree(dumps, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
