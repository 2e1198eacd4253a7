#!/usr/bin/python3
"""Model identity at the speed of the disk: `onnxprobe inspect --json` (file MD5 and SHA-256 plus
every initializer's SHA-256) against `openssl dgst -md5` of the same file, in the same run.

usage: identity_bench.py ONNXPROBE MODEL [RUNS]

The file is read once first so every command sees a warm page cache. Each command runs RUNS
times, interleaved; the best wall time of each is compared (the machine may be shared). Peak RSS
is the child's ru_maxrss from wait4 (resident pages, including any touched file pages). On a
shared machine the wall ratio follows the CPU ratio, so the busiest thread's CPU time (sampled
from /proc) is printed too: it is the wall time where enough cores are free.
Targets: inspect <= 1.2x the MD5 wall time, peak RSS <= 0.5x the file size.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time


def thread_cpu(pid, seen):
    """Records each thread's user+system seconds so far (the last sample before exit is kept)."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            seen[tid] = (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass


def measure(cmd):
    """Wall seconds, CPU seconds, peak RSS bytes, stdout, and the busiest thread's CPU seconds."""
    t0 = time.perf_counter()
    out_file = tempfile.TemporaryFile()
    p = subprocess.Popen(cmd, stdout=out_file, stderr=subprocess.DEVNULL)
    threads = {}
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        thread_cpu(p.pid, threads)
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    out_file.seek(0)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, out_file.read(), max(threads.values(), default=0)


def main():
    exe, model = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    size = os.path.getsize(model)
    with open(model, "rb") as f:
        while f.read(1 << 24):
            pass
    cmds = {"md5": ["openssl", "dgst", "-md5", model], "sha256": ["openssl", "dgst", "-sha256", model],
            "inspect": [exe, "inspect", model, "--json"]}
    best = {k: None for k in cmds}
    for _ in range(runs):
        for k, cmd in cmds.items():
            r = measure(cmd)
            if best[k] is None or r[0] < best[k][0]:
                best[k] = r
    j = json.loads(best["inspect"][3])
    md5 = best["md5"][3].split()[-1].decode()
    sha = best["sha256"][3].split()[-1].decode()
    if (j["md5"], j["sha256"]) != (md5, sha):
        sys.exit(f"inspect hashes {j['md5']} {j['sha256']} differ from openssl's {md5} {sha}")
    md5_s, md5_cpu = best["md5"][:2]
    ins_s, ins_cpu, ins_rss, _, ins_critical = best["inspect"]
    print(f"model identity, {os.path.basename(model)}: {size / 2**20:.0f} MiB, "
          f"{len(j['initializers'])} initializers, best of {runs}")
    print(f"  openssl dgst -sha256  {best['sha256'][0]:6.2f} s")
    print(f"  openssl dgst -md5     {md5_s:6.2f} s   cpu {md5_cpu:5.2f} s")
    print(f"  onnxprobe inspect     {ins_s:6.2f} s   cpu {ins_cpu:5.2f} s   busiest thread {ins_critical:5.2f} s"
          f"   peak RSS {ins_rss / 2**20:.0f} MiB")
    print(f"  inspect / md5 wall    {ins_s / md5_s:6.2f}x  (target <= 1.2x)")
    print(f"  busiest thread / md5  {ins_critical / md5_cpu:6.2f}x  cpu: MD5, SHA-256 and the scan with per-weight "
          f"SHA-256 run on their own threads; with free cores the wall time is the busiest thread's "
          f"(all threads together: {ins_cpu / md5_cpu:.2f}x)")
    print(f"  peak RSS / file size  {ins_rss / size:6.3f}x  (target <= 0.5x)")

if __name__ == "__main__":
    main()
