#!/usr/bin/python3
"""onnxprobe on models from exporters other than torch.onnx: false alarms and faults named.

  /usr/bin/python3 bench/real_world.py ONNXPROBE_BIN [--models DIR] [--env DIR] [--quick]
                                       [--only a,b] [--json FILE] [--work DIR]

Models: bench/make_real_world.py's set (tf2onnx, paddle2onnx, skl2onnx, spox, onnxruntime
quantization; seeded random weights, inputs saved with the model). --models DIR holds them
(DIR/manifest.json); when it has none they are made there first with the environment of
bench/real_world_env.sh (--env, default .deps/realworld-env, made when missing).

Benign pairings (side A -> side B, the unfaulted model, each on three input sets: the saved
inputs and two redrawn, the third with a bool flag flipped; any FAIL is a false alarm, and an exit
code other than 0/1 is counted apart as "could not run"):
  same           the model -> itself, 1 vs 2 intra-op threads
  opt_all        optimizations off -> all
  ort1.20.1      the default ONNX Runtime -> ONNX Runtime 1.20.1 (installed by the bootstrap)
  onnxsim, onnxslim, onnxoptimizer
                 the model -> the graph tool's copy made by make_real_world.py
Faults (bench/real_world_faults.py: placed from the graph's structure alone, mid-depth by a walk
that enters If branches), each on `same` (A the model, B its faulted copy) and `opt_all` (B the
faulted copy at optimizations all): weight e=1e-2 and 1e-1, attribute, scalar (x1.1). A fault is
named when the top culprit of the JSON report's localization (its node or the nodes it ran) is the
faulted node, a node of its weight's static chain or the Constant holding the faulted value. A
fault whose graph outputs ONNX Runtime's Python API finds bit-identical to the model's (at
optimizations off for `same`, all for `opt_all`) is counted apart as "no effect" (it is still run:
the table says how many of those onnxprobe fails on inner tensors and names). A PASS whose first
drift origin (or the nodes it ran together) is the faulted node is counted in the "drift" column:
the fault stayed below tolerance and onnxprobe still said where the first difference is born.
The tables also list every false alarm, run that could not run and fault not named, with a one-line
reason from the JSON report; --json keeps each run's command line, verdict, failing rows, culprits,
drift origins and diagnosis, and each fault's ONNX Runtime measurements (bench/real_world_faults.py).
--quick: five models (< 5 minutes).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("ONNXPROBE_SRC", ROOT)
import graph_tools as gt  # noqa: E402

BENIGN = ("same", "opt_all", "ort1.20.1") + gt.TOOLS
FAULT_PAIRINGS = ("same", "opt_all")
KINDS = ("weight_0.01", "weight_0.1", "attribute", "scalar")
QUICK = ("keras_cnn", "paddle_transformer", "sk_mlp", "spox_vad", "paddle_cnn_qdq")


def input_args(entry, folder):
    out = []
    for i in entry["inputs"]:
        out += ["--input", f"{i['name']}={os.path.join(folder, i['file'])}"]
    return out


def input_variants(entry, folder, work):
    """The model's saved inputs (seed 1) and two more sets: float inputs redrawn from seeds 2 and 3
    (same shape, dtype and scale), token ids redrawn in their range, a bool flag flipped in the
    third set (the If's other branch), other inputs (lengths, steps, zero states) kept."""
    import numpy as np
    out = [("seed1", input_args(entry, folder))]
    for k, seed in ((1, 2), (2, 3)):
        args = []
        for j, i in enumerate(entry["inputs"]):
            x = np.load(os.path.join(folder, i["file"]))
            kind = i.get("kind", "")
            rng = np.random.default_rng(seed * 1000 + j)
            if kind.startswith("normal"):
                scale = float(kind.split("*")[1]) if "*" in kind else 1.0
                x = (rng.standard_normal(x.shape) * scale).astype(x.dtype)
            elif kind.startswith("tokens["):
                hi = int(kind.split(",")[1].rstrip(")"))
                x = rng.integers(0, hi, x.shape).astype(x.dtype)
            elif kind.startswith("flag") and k == 2:
                x = np.logical_not(x)
            path = os.path.join(work, f"in_seed{seed}_{j}.npy")
            np.save(path, x)
            args += ["--input", f"{i['name']}={path}"]
        out.append((f"seed{seed}", args))
    return out


def compare(exe, args, report):
    if os.path.exists(report):
        os.remove(report)
    cmd = [exe, *args, "--json", report, "-q", "--latency-runs", "0"]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, out = 124, "timed out after 600 s"
    rep = None
    if rc in (0, 1) and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
    return {"rc": rc, "rep": rep, "out": out, "cmd": shlex.join(cmd), "seconds": round(time.time() - t0, 2)}


def top_culprit(rep):
    cul = (rep.get("localization") or {}).get("culprits") or []
    return cul[0] if cul else None


def summarize(r):
    """The facts of one run the tables and the JSON keep (not the whole report)."""
    s = {"rc": r["rc"], "cmd": r["cmd"], "seconds": r["seconds"]}
    rep = r["rep"]
    if rep is None:
        lines = [x for x in r["out"].strip().splitlines() if x.strip()]
        s["error"] = lines[-1][:300] if lines else f"exit {r['rc']}"
        return s
    sm = rep.get("summary", {})
    s["verdict"] = rep.get("verdict")
    s["compared"], s["failed"] = sm.get("compared"), sm.get("failed")
    s["first_divergence"] = sm.get("first_divergence")
    s["first_difference"] = sm.get("first_difference")
    rows = [t for t in rep.get("tensors", []) if t.get("verdict") == "FAIL"]
    rows.sort(key=lambda t: -(t.get("tolerance_ratio") if t.get("tolerance_ratio") is not None else 1e300))
    s["failing_rows"] = [{"name": t["name"], "node": t.get("node"), "op_type": t.get("op_type"),
                          "tolerance_ratio": t.get("tolerance_ratio"), "max_abs": t.get("max_abs"),
                          "max_rel": t.get("max_rel"), "role": t.get("role"), "reason": t.get("reason")}
                         for t in rows[:5]]
    c = top_culprit(rep)
    s["culprit"] = None if c is None else {k: c.get(k) for k in ("node", "op_type", "tensor", "nodes", "row",
                                                                  "introduced", "isolated_max_abs",
                                                                  "isolated_max_rel", "error", "reason")}
    s["culprits"] = [x.get("node") for x in (rep.get("localization") or {}).get("culprits") or []]
    s["drift_origins"] = [d.get("node") for d in rep.get("drift_origins") or []][:5]
    s["drift_origin_nodes"] = [[d.get("node")] + list(d.get("nodes") or []) for d in rep.get("drift_origins") or []][:5]
    s["unpaired_outputs"] = rep.get("unpaired_outputs") or []
    s["origin_note"] = sm.get("origin_note") or ""
    s["diagnosis"] = [f"{f.get('cause')} ({f.get('certainty')}): {f.get('summary')}"
                      for f in (rep.get("diagnosis") or {}).get("findings", [])][:3]
    s["notes"] = rep.get("notes") or []
    return s


def reason(s):
    """One line: why a run failed (or could not run)."""
    if "error" in s:
        return f"exit {s['rc']}: {s['error']}"
    parts = [f"{s['failed']}/{s['compared']} rows fail"]
    if s["failing_rows"]:
        w = s["failing_rows"][0]
        ratio = w["tolerance_ratio"]
        parts.append(f"worst {w['name']} ({w['op_type']}) {'x%.3g' % ratio if ratio is not None else 'mismatch'}"
                     f" of tolerance")
    if s["unpaired_outputs"]:
        parts.append("unpaired: " + "; ".join(s["unpaired_outputs"])[:200])
    if s["culprit"]:
        parts.append(f"top culprit {s['culprit']['node']} ({s['culprit']['op_type']})")
    elif s["origin_note"]:
        parts.append(s["origin_note"][:160])
    if s["diagnosis"]:
        parts.append("diagnosis " + s["diagnosis"][0][:160])
    return "; ".join(parts)


def named(s, accept):
    c = s.get("culprit")
    if not c:
        return False
    return bool(({c.get("node")} | set(c.get("nodes") or [])) & set(accept))


def drift_named(s, accept):
    """On a PASS: the first drift origin (its node or the nodes it ran together, when B fuses them)
    is the faulted node (the fault is below tolerance and onnxprobe still says where the first
    difference is born)."""
    return (s.get("verdict") == "PASS" and bool(s.get("drift_origin_nodes"))
            and bool(set(s["drift_origin_nodes"][0]) & set(accept)))


def ensure_models(models, env):
    if os.path.exists(os.path.join(models, "manifest.json")):
        return
    py = os.path.join(env, "bin", "python")
    if not os.path.exists(py):
        subprocess.run(["bash", os.path.join(HERE, "real_world_env.sh"), env], check=True)
    subprocess.run(["nice", "-n", "10", py, os.path.join(HERE, "make_real_world.py"), models], check=True)


def faults_for(models, name, entry, work, fault_python):
    folder = os.path.join(models, name)
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    spec = os.path.join(out, "inputs.json")
    with open(spec, "w") as f:
        json.dump([{"name": i["name"], "path": os.path.join(folder, i["file"])} for i in entry["inputs"]], f)
    r = subprocess.run([fault_python, os.path.join(HERE, "real_world_faults.py"), os.path.join(models, entry["file"]),
                        spec, out], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"fault injection failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    with open(os.path.join(out, "faults.json")) as f:
        return {x["kind"]: x for x in json.load(f)}


def run_model(exe, models, name, entry, work, fault_python, res):
    folder = os.path.join(models, name)
    base = os.path.join(models, entry["file"])
    ins = input_args(entry, folder)
    report = os.path.join(work, name, "report.json")
    os.makedirs(os.path.dirname(report), exist_ok=True)
    variants = input_variants(entry, folder, os.path.join(work, name))
    t0 = time.time()
    mres = res["models"].setdefault(name, {"exporter": entry["exporter"], "benign": {}, "faults": {}})
    cells = []
    for p in BENIGN:
        if p in gt.TOOLS:
            copy = (entry.get("tools") or {}).get(p)
            if not copy:
                why = "not a float model" if not entry.get("float") else "the tool failed (manifest failures)"
                mres["benign"][p] = {"skipped": why}
                cells.append(f"{p} -")
                continue
            args = ["compare", base, os.path.join(models, copy)]
        elif p == "same":
            args = ["compare", base, "--a-intra-threads", "1", "--b-intra-threads", "2"]
        elif p == "opt_all":
            args = ["compare", base, "--b-opt-level", "all"]
        else:
            args = ["compare", base, "--b-ort-version", p[3:]]
        runs = []
        for label, vins in variants:
            s = summarize(compare(exe, args + vins, report))
            s["inputs"] = label
            runs.append(s)
        mres["benign"][p] = runs
        cells.append(f"{p} " + "".join("." if s["rc"] == 0 else "F" if s["rc"] == 1 else "E" for s in runs))
    try:
        faults = faults_for(models, name, entry, work, fault_python)
    except Exception as e:  # noqa: BLE001
        faults = {k: {"kind": k, "skipped": str(e)} for k in KINDS}
    for kind in KINDS:
        f = faults.get(kind, {"skipped": "not made"})
        fr = mres["faults"].setdefault(kind, {k: v for k, v in f.items() if k != "file"})
        if "skipped" in f:
            cells.append(f"{kind} -")
            continue
        for p in FAULT_PAIRINGS:
            effect = f["effect_off"] if p == "same" else f["effect_all"]
            args = ["compare", base, f["file"]] + (["--b-opt-level", "all"] if p == "opt_all" else [])
            s = summarize(compare(exe, args + ins, report))
            s["named"] = named(s, f["accept"])
            s["drift_named"] = drift_named(s, f["accept"])
            s["named_enclosing"] = not s["named"] and named(s, f.get("enclosing") or [])
            s["no_effect"] = not effect  # run all the same: inner tensors may still change
            fr[p] = s
            cells.append(f"{kind}/{p} {'n/e:' if not effect else ''}{'named' if s['named'] else 'MISSED'}"
                         f"({s.get('verdict') or 'rc' + str(s['rc'])})")
    mres["seconds"] = round(time.time() - t0, 1)
    print(f"{name:24s} " + " ".join(cells) + f"  [{mres['seconds']:.0f} s]", flush=True)


def tables(res):
    lines = ["", "benign pairings (3 input sets per model; any FAIL is a false alarm)",
             f"{'pairing':14s} {'passes/total':>13s} {'could not run':>14s} {'models skipped':>15s}"]
    alarms, errors, missed = [], [], []
    res["totals"] = {"benign": {}, "faults": {}}
    for p in BENIGN:
        ok = tot = err = skip = 0
        for name, m in res["models"].items():
            runs = m["benign"].get(p)
            if runs is None or "skipped" in runs:
                skip += 1
                continue
            for s in runs:
                if s["rc"] not in (0, 1):
                    err += 1
                    errors.append((name, p, s))
                    continue
                tot += 1
                ok += s["rc"] == 0
                if s["rc"] == 1:
                    alarms.append((name, p, s))
        res["totals"]["benign"][p] = {"passes": ok, "total": tot, "could_not_run": err, "skipped": skip}
        lines.append(f"{p:14s} {f'{ok}/{tot}':>13s} {err:>14d} {skip:>15d}")
    lines += ["", "faults: named top-1 / with effect; FAIL verdicts; of the rest, named by the first drift origin",
              "on a PASS or by the enclosing If/Loop/Scan; no effect (ORT: outputs bit-identical; still run: how",
              "many of those onnxprobe FAILs on inner tensors / names); not applicable",
              f"{'kind':12s} {'pairing':8s} {'named/effect':>13s} {'FAIL':>5s} {'drift':>6s} {'encl':>5s} "
              f"{'no effect':>10s} {'n/e FAIL/nm':>12s} {'n/a':>4s}"]
    for kind in KINDS:
        for p in FAULT_PAIRINGS:
            nm = eff = fail = ne = na = dn = en = ne_fail = ne_named = 0
            for name, m in res["models"].items():
                f = m["faults"].get(kind)
                if f is None or "skipped" in f:
                    na += 1
                    continue
                s = f.get(p, {})
                if s.get("no_effect"):
                    ne += 1
                    ne_fail += s.get("rc") == 1
                    ne_named += bool(s.get("named"))
                    continue
                eff += 1
                nm += bool(s.get("named"))
                dn += bool(s.get("drift_named")) and not s.get("named")
                en += bool(s.get("named_enclosing"))
                fail += s.get("rc") == 1
                if not s.get("named"):
                    missed.append((name, kind, p, f, s))
            res["totals"]["faults"][f"{kind}/{p}"] = {"named": nm, "with_effect": eff, "fail_verdicts": fail,
                                                      "drift_named_on_pass": dn, "named_enclosing": en,
                                                      "no_effect": ne, "no_effect_fail": ne_fail,
                                                      "no_effect_named": ne_named, "not_applicable": na}
            lines.append(f"{kind:12s} {p:8s} {f'{nm}/{eff}':>13s} {fail:>5d} {dn:>6d} {en:>5d} {ne:>10d} "
                         f"{f'{ne_fail}/{ne_named}':>12s} {na:>4d}")
    if alarms:
        lines += ["", "false alarms:"]
        lines += [f"  {n} [{p}, {s['inputs']}]: {reason(s)}" for n, p, s in alarms]
    if errors:
        lines += ["", "could not run:"]
        lines += [f"  {n} [{p}, {s['inputs']}]: {reason(s)}" for n, p, s in errors]
    if missed:
        lines += ["", "faults not named:"]
        for n, k, p, f, s in missed:
            got = (f"named {s['culprit']['node']} ({s['culprit']['op_type']})" if s.get("culprit")
                   else f"verdict {s.get('verdict')}, no culprit, first drift origin "
                        f"{(s.get('drift_origins') or ['-'])[0]}" if "error" not in s else reason(s))
            if s.get("drift_named"):
                got += " (its nodes include the faulted node)"
            lvl = "off" if p == "same" else "all"
            got += (f"; ORT: graph outputs x{f.get('output_tolerance_ratio_' + lvl, 0):.3g} of tolerance"
                    + (f", faulted node's output x{f['node_tolerance_ratio_off']:.3g} (off)"
                       if f.get("node_tolerance_ratio_off") is not None else ""))
            lines.append(f"  {n} {k} [{p}]: fault {f['what']}; {got}"
                         + (f"; {reason(s)}" if s.get("rc") == 1 and not s.get("culprit") else ""))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("onnxprobe")
    p.add_argument("--models", default=os.path.join(ROOT, ".deps", "realworld-models"))
    p.add_argument("--env", default=os.path.join(ROOT, ".deps", "realworld-env"))
    p.add_argument("--work", help="faulted models and reports (default MODELS/_bench)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--json")
    a = p.parse_args()
    exe = os.path.abspath(a.onnxprobe)
    models = os.path.abspath(a.models)
    ensure_models(models, a.env)
    with open(os.path.join(models, "manifest.json")) as f:
        man = json.load(f)
    work = os.path.abspath(a.work or os.path.join(models, "_bench"))
    env_py = os.path.join(a.env, "bin", "python")
    fault_python = env_py if os.path.exists(env_py) else gt.PYTHON
    names = list(man["models"])
    if a.quick:
        names = [n for n in names if n in QUICK]
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    res = {"onnxprobe": exe, "models_dir": models, "versions": man.get("versions"),
           "make_failures": man.get("failures", []), "models": {}}
    for f in man.get("failures", []):
        print(f"(not made or not copied: {f['model']} by {f['exporter']}: {f['error'][:160]})")
    t0 = time.time()
    for name in names:
        run_model(exe, models, name, man["models"][name], work, fault_python, res)
    res["seconds"] = round(time.time() - t0, 1)
    text = tables(res)
    print(text)
    print(f"\n{len(names)} models, {res['seconds']:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
