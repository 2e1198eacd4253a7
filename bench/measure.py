#!/usr/bin/env python3
"""Runs a command and prints 'wall_seconds peak_rss_mib exit_code' (peak RSS of that child)."""
import os
import subprocess
import sys
import time

t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(f"{time.perf_counter() - t0:.3f} {usage.ru_maxrss / 1024:.0f} {os.waitstatus_to_exitcode(status)}")
