#!/usr/bin/env bash
# Localization on full-size models: fault-injected copies of ResNet-50, MobileNetV2 and a small
# ViT (random seeded weights). For each case: is the injected node the top culprit, does its repro
# bundle reproduce, and what does isolation cost next to the comparison alone (same run).
set -euo pipefail
BUILD="$1"
OUT="${2:-bench/models/faults}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -f "$OUT/cases.json" ] || /usr/bin/python3 "$ROOT/tests/localize/make_fault_cases.py" "$OUT" full >/dev/null 2>&1
python3 - "$BUILD/onnxprobe" "$OUT" "$ROOT/bench/measure.py" <<'PY'
import json, os, subprocess, sys, tempfile
exe, out, measure = sys.argv[1:]
cases = json.load(open(os.path.join(out, "cases.json")))
tmp = tempfile.mkdtemp()
def timed(args):
    r = subprocess.run([sys.executable, measure, exe] + args, capture_output=True, text=True)
    s, m, rc = r.stdout.split()
    return float(s), float(m), int(rc)
ok = 0
print(f"localization, {len(cases)} fault-injected cases:")
for c in cases:
    a, b = os.path.join(out, c["base"]), os.path.join(out, c["faulty"])
    t_cmp, _, _ = timed(["compare", a, b, "-q", "--isolate", "none", "--latency-runs", "0"])
    t_loc, _, rc = timed(["compare", a, b, "-q", "--latency-runs", "0", "--json", f"{tmp}/r.json",
                            "--repro", f"{tmp}/repro"])
    rep = json.load(open(f"{tmp}/r.json"))
    cul = rep["localization"]["culprits"]
    top = cul[0]["node"] if cul else None
    replay = subprocess.run([exe, "replay", f"{tmp}/repro"], capture_output=True).returncode
    good = top == c["node"] and replay == 1
    ok += good
    print(f"  {c['faulty']:32s} top culprit {'= injected node' if top == c['node'] else repr(top):20s} "
          f"repro {'reproduces' if replay == 1 else 'DOES NOT reproduce'}; compare {t_cmp:.2f} s, "
          f"compare + isolation {t_loc:.2f} s ({t_loc / t_cmp:.2f}x, target <= 3x), "
          f"{rep['localization']['isolation_runs']} isolation runs")
print(f"  {ok}/{len(cases)} cases localized to the injected node with a reproducing bundle")
PY
