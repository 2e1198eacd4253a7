#!/usr/bin/python3
"""Model identity at the speed of the disk: `onnxprobe inspect --json` (file MD5 and SHA-256 plus
every initializer's SHA-256) against `openssl dgst -md5` of the same file, in the same run.

usage: identity_bench.py ONNXPROBE MODEL [RUNS]

The file is read once first so every command sees a warm page cache. Each command runs RUNS
times, interleaved; the best wall time of each is compared (the machine may be shared). Peak RSS
is the child's ru_maxrss from wait4 (resident pages, including any touched file pages).
Targets: inspect <= 1.2x the MD5 wall time, peak RSS <= 0.5x the file size.
"""
import hashlib
import json
import os
import subprocess
import sys
import time


def measure(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, out


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
    ins_s, ins_cpu, ins_rss = best["inspect"][:3]
    print(f"model identity, {os.path.basename(model)}: {size / 2**20:.0f} MiB, "
          f"{len(j['initializers'])} initializers, best of {runs}")
    print(f"  openssl dgst -sha256  {best['sha256'][0]:6.2f} s")
    print(f"  openssl dgst -md5     {md5_s:6.2f} s   cpu {md5_cpu:5.2f} s")
    print(f"  onnxprobe inspect     {ins_s:6.2f} s   cpu {ins_cpu:5.2f} s   peak RSS {ins_rss / 2**20:.0f} MiB")
    print(f"  inspect / md5 wall    {ins_s / md5_s:6.2f}x  (target <= 1.2x; cpu {ins_cpu / md5_cpu:.2f}x: "
          f"MD5, SHA-256 and per-weight SHA-256 run on their own threads, so wall time needs 3 free cores)")
    print(f"  peak RSS / file size  {ins_rss / size:6.3f}x  (target <= 0.5x)")


if __name__ == "__main__":
    main()
