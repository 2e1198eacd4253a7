#!/usr/bin/python3
"""How small a fault onnxprobe names, and how often it cries wolf, per pairing and fault kind.

  /usr/bin/python3 bench/sensitivity.py ONNXPROBE_BIN [--work DIR] [--quick] [--only a,b]
                                        [--pairings torch,same,opt_all,ort1.20.1] [--json FILE]

Models: the hand-written nets and families of tests/python/torch_zoo.py and torchvision
classifiers at small inputs (random seeded weights, BatchNorm statistics warmed), exported and
captured with the PyTorch companion. Pairings (side A -> side B):
  torch      the PyTorch capture -> the (faulted) ONNX model
  same       the ONNX model -> its faulted copy, same runtime, optimizations off
  opt_all    the ONNX model (off) -> its faulted copy at optimization level all
  ort1.20.1  the ONNX model on the default runtime -> its faulted copy on ONNX Runtime 1.20.1
  onnxsim, onnxslim, onnxoptimizer
             the ONNX model -> the graph tool's copy of its faulted copy (BatchNormalization and
             constant Mul/Add folded into the Conv, Identity removed, nodes renamed: models from
             the wild); a fault counts as named when the top culprit is the faulted node or the
             node of the copy that computes its folded chain (the culprit's tensor is the
             faulted node's output or that of a BatchNormalization/Mul/Add folded into it)
  P+exact    pairing P judged with the exact reference (`--reference exact`: each row allowed
             twice the smaller distance of the two sides from the model computed in float64),
             side by side with P under the elementwise tolerance alone
Fault kinds, each placed without asking the tool under test:
  weight     the largest-magnitude element of the weight of the mid-depth Conv/Gemm/MatMul scaled
             by 1+e, e = 1e-4, 1e-3, 1e-2, 1e-1 (the smallest e that is named is reported)
  attribute  one attribute of the mid-depth candidate node (pads shifted, alpha/epsilon doubled)
  fp16       a float16 round trip (Cast, Cast) after the mid-depth compute node
A fault counts as named when the top culprit (or a parameter-parity finding, or on a PASS the
first drift origin) is the faulted node; faults whose effect is nil are counted apart ("no
effect": ONNX Runtime's Python API, not onnxprobe, runs the faulted node's output both ways, or
for the opt_all pairing every graph output at optimization level all, where the optimizer may
fold the fault away).
Benign variants: the unfaulted model at every pairing, with the capture's inputs and two more
input seeds (ONNX pairings) and 1 vs 2 intra-op threads (same runtime): any FAIL is a false alarm.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("ONNXPROBE_SRC", ROOT)
import graph_tools as gt  # noqa: E402
import torch_zoo as Z  # noqa: E402

PYENV = os.path.join(ROOT, ".deps", "pyenv", "bin", "python")
EPSILONS = (1e-4, 1e-3, 1e-2, 1e-1)
PAIRINGS = ("torch", "same", "opt_all", "ort1.20.1")
TOOL_PAIRINGS = gt.TOOLS
QUICK_VISION = [("resnet18", 64), ("mobilenet_v3_small", 96), ("squeezenet1_1", 64)]
FULL_VISION = [("resnet18", 64), ("resnet50", 64), ("mobilenet_v2", 64), ("mobilenet_v3_small", 96),
               ("mobilenet_v3_large", 96), ("efficientnet_b0", 96), ("shufflenet_v2_x1_0", 96),
               ("regnet_x_400mf", 64), ("regnet_y_400mf", 64), ("squeezenet1_1", 64), ("densenet121", 64),
               ("mnasnet0_5", 96), ("convnext_tiny", 64), ("resnext50_32x4d", 64), ("wide_resnet50_2", 64),
               ("resnet34", 64)]

# Runs two models with ONNX Runtime's Python API on the capture's inputs and prints whether the
# tensor `tensor` (optimizations off) or every graph output (optimizations all: the node's output
# may be fused away, or the optimizer may remove the fault) differs: the independent check that a
# fault has any effect on the pairing's side B.
EFFECT = r"""
import sys, numpy as np, onnx, onnxruntime as ort
a, b, tensor, level = sys.argv[1:5]
feeds = {}
for spec in sys.argv[5:]:
    name, path = spec.split("=", 1)
    feeds[name] = np.load(path)
def run(path):
    m = onnx.load(path)
    names = [o.name for o in m.graph.output]
    so = ort.SessionOptions()
    if level == "off":
        if tensor not in names:
            m.graph.output.append(onnx.ValueInfoProto(name=tensor))
        names = [tensor]
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    else:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    ins = [i.name for i in s.get_inputs()]
    return s.run(names, {k: v for k, v in feeds.items() if k in ins})
print("differs" if any(not np.array_equal(x, y) for x, y in zip(run(a), run(b))) else "same")
"""


def rewritten(tool, path):
    """The graph tool's copy of `path`, made once (beside it)."""
    out = path[:-len(".onnx")] + f".{tool}.onnx"
    if not os.path.exists(out):
        gt.rewrite(tool, path, out)
    return out


def pairing_args(pairing, base, faulty, cap, inputs, extra=()):
    if pairing == "torch":
        return ["compare", cap, faulty, *extra]
    if pairing in TOOL_PAIRINGS:
        faulty = rewritten(pairing, faulty)
    args = ["compare", base, faulty, *extra]
    for i in inputs:
        args += ["--input", i]
    if pairing == "opt_all":
        args += ["--b-opt-level", "all"]
    elif pairing.startswith("ort"):
        args += ["--b-ort-version", pairing[3:]]
    return args


def compare(exe, args, report):
    if os.path.exists(report):
        os.remove(report)
    r = subprocess.run([exe, *args, "--json", report, "-q", "--latency-runs", "0"], capture_output=True,
                       text=True, timeout=1800)
    rep = json.load(open(report)) if r.returncode in (0, 1) and os.path.exists(report) else None
    return r.returncode, rep, r.stdout + r.stderr


def named_nodes(rep):
    """The nodes a report names first: the top culprit (and the nodes it ran), parity findings,
    and on a PASS the first drift origin."""
    out = set(Z.culprit_names(Z.top_culprit(rep)))
    for f in rep.get("parity", {}).get("findings", []):
        out.add(f["node"])
        out.update(f.get("readers", []))
    if rep["verdict"] == "PASS" and rep.get("drift_origins"):
        d = rep["drift_origins"][0]
        out.add(d["node"])
        out.update(d.get("nodes", []))
    out.discard(None)
    return out


def has_effect(base, faulty, tensor, inputs, level="off"):
    r = subprocess.run([PYENV, "-c", EFFECT, base, faulty, tensor, level, *inputs], capture_output=True,
                       text=True, timeout=600)
    return r.stdout.strip() == "differs"


def effect_for(pairing, effects, base, faulty, tensor, inputs):
    """Whether the fault changes what side B computes: at optimizations all for that pairing (the
    optimizer may fold a round trip away); for a graph tool, the outputs of its copies of the
    model and of the faulted model (the tool may fold a fault away); else at the faulted tensor
    with optimizations off."""
    if pairing in TOOL_PAIRINGS:
        if pairing not in effects:
            try:
                effects[pairing] = has_effect(rewritten(pairing, base), rewritten(pairing, faulty), tensor,
                                              inputs, "all")
            except RuntimeError:
                effects[pairing] = False
        return effects[pairing]
    level = "all" if pairing == "opt_all" else "off"
    if level not in effects:
        effects[level] = has_effect(base, faulty, tensor, inputs, level)
    return effects[level]


def folded_outputs(base, node):
    """`node`'s outputs in `base` and those of the BatchNormalization/Mul/Add chain after it that a
    graph tool folds into it (each the only reader, its other inputs weights)."""
    import onnx
    m = onnx.load(base, load_external_data=False)
    weights = {t.name for t in m.graph.initializer}
    weights |= {o for n in m.graph.node if n.op_type == "Constant" for o in n.output}
    by_name = {n.name: n for n in m.graph.node}
    if node not in by_name:
        return set()
    out, cur = set(by_name[node].output), by_name[node]
    while True:
        readers = [n for n in m.graph.node if cur.output[0] in n.input]
        if len(readers) != 1 or readers[0].op_type not in ("BatchNormalization", "Mul", "Add"):
            return out
        r = readers[0]
        if any(x != cur.output[0] and x not in weights for x in r.input):
            return out
        out.update(r.output)
        cur = r


def readers_when_folded(faulty, tool_copy, target):
    """When the graph tool folded the faulted node away (a Cast round trip on a constant becomes a
    rounded weight), the nodes of the faulted model that read what it made (through the rest of
    the injected chain and the nodes the tool folded with it): they compute with the fault in the
    tool's copy. Empty otherwise."""
    import onnx
    copy_nodes = {n.name for n in onnx.load(tool_copy, load_external_data=False).graph.node}
    if target in copy_nodes:
        return set()
    m = onnx.load(faulty, load_external_data=False)
    by_name = {n.name: n for n in m.graph.node}
    if target not in by_name:
        return set()
    made, readers, todo = set(), set(), list(by_name[target].output)
    while todo:
        t = todo.pop()
        made.add(t)
        for n in m.graph.node:
            if t not in n.input:
                continue
            if n.name.startswith("injected_") or n.name not in copy_nodes:  # folded by the tool too
                todo.extend(o for o in n.output if o not in made)
            else:
                readers.add(n.name)
    return readers


def is_named(pairing, rep, base, target, faulty=None):
    if rep is None:
        return False
    if target in named_nodes(rep):
        return True
    if pairing not in TOOL_PAIRINGS:
        return False
    # the copy's node computing the folded chain, under the tool's names (on a PASS: the first
    # drift origin)
    c = Z.top_culprit(rep) or ((rep.get("drift_origins") or [None])[0] if rep["verdict"] == "PASS" else None)
    if c is None:
        return False
    if c.get("tensor") in folded_outputs(base, target):
        return True
    return faulty is not None and c.get("node") in readers_when_folded(faulty, rewritten(pairing, faulty), target)


def weight_fault(base, out, e):
    import onnx
    from onnx import numpy_helper

    m = onnx.load(base)
    cands = Z.fault_candidates(m)
    if not cands:
        return None, None
    node, init = cands[len(cands) // 2]
    t = next(i for i in m.graph.initializer if i.name == init)
    w = numpy_helper.to_array(t).copy()
    k = int(np.argmax(np.abs(w)))
    w.flat[k] *= np.float32(1 + e)
    t.CopyFrom(numpy_helper.from_array(w, init))
    onnx.save(m, out)
    output = next(n.output[0] for n in m.graph.node if n.name == node)
    return node, output


def first_reader_output(faulty):
    """The output of the node reading the round trip's float32 copy (both models have it)."""
    import onnx

    g = onnx.load(faulty).graph
    back = next(n.output[0] for n in g.node if n.name == "injected_cast_to_fp32")
    return next(n.output[0] for n in g.node if back in n.input)


def seeded_inputs(cap, folder, seed):
    """The capture's inputs with every floating-point one redrawn from a seeded normal
    distribution (same shape and dtype); integer inputs (token ids, masks) are kept."""
    out = []
    for spec in Z._capture_inputs(cap):
        name, path = spec.split("=", 1)
        x = np.load(path)
        if np.issubdtype(x.dtype, np.floating):
            x = np.random.default_rng(seed).standard_normal(x.shape).astype(x.dtype)
        p = os.path.join(folder, f"seed{seed}_{len(out)}.npy")
        np.save(p, x)
        out.append(f"{name}={p}")
    return out


def output_of(path, node):
    import onnx

    return next(n.output[0] for n in onnx.load(path).graph.node if n.name == node)


def run_model(exe, work, name, entry, pairings, stats):
    folder = os.path.join(work, name)
    t0 = time.time()
    try:
        base, cap = Z.prepare(folder, name, *entry)
    except Exception as e:  # noqa: BLE001 - an architecture the exporter refuses is reported, not fatal
        print(f"{name:24s} export failed: {str(e).splitlines()[0][:80]}")
        return
    inputs = Z._capture_inputs(cap)
    rep_path = os.path.join(folder, "r.json")
    line = [f"{name:24s}"]
    faults = {}  # kind -> (faulty path, target node, tensor to check, effect per optimization level)
    for kind in ("attribute", "fp16"):
        faulty = os.path.join(folder, f"{kind}.onnx")
        target = (Z.inject_attribute_fault(base, faulty) if kind == "attribute"
                  else Z.inject_fp16_roundtrip(base, faulty))
        if target is None:
            faults[kind] = None
            continue
        tensor = output_of(base, target) if kind == "attribute" else first_reader_output(faulty)
        faults[kind] = (faulty, target, tensor, {})
    weights = {}
    for e in EPSILONS:
        faulty = os.path.join(folder, f"weight_{e:g}.onnx")
        node, out = weight_fault(base, faulty, e)
        weights[e] = None if node is None else (faulty, node, out, {})
    for policy in pairings:
        pairing = policy.split("+")[0]
        exact = ["--reference", "exact"] if policy.endswith("+exact") else []
        s = stats.setdefault(policy, {"benign": [0, 0], "attribute": [0, 0, 0], "fp16": [0, 0, 0],
                                       "weight": {e: [0, 0, 0] for e in EPSILONS}, "smallest": []})
        # benign variants
        # (a run the runtime refuses is counted as an error, not an alarm)
        variants = [(inputs, exact)]
        if pairing != "torch":
            variants += [(seeded_inputs(cap, folder, k), exact) for k in (1, 2)]
        if pairing == "same":
            variants.append((inputs, ["--a-intra-threads", "1", "--b-intra-threads", "2", *exact]))
        alarms = errors = 0
        for ins, v in variants:
            rc, rep, out = compare(exe, pairing_args(pairing, base, base, cap, ins, v), rep_path)
            if rc > 1:
                errors += 1
                continue
            s["benign"][1] += 1
            s["benign"][0] += rc == 1
            alarms += rc == 1
        cells = [f"{policy}: benign {len(variants) - alarms - errors}/{len(variants) - errors}"
                 + (f" ({errors} runs refused)" if errors else "")]
        for kind in ("attribute", "fp16"):
            f = faults[kind]
            if f is None:
                cells.append(f"{kind} -")
                continue
            faulty, target, tensor, effects = f
            if not effect_for(pairing, effects, base, faulty, tensor, inputs):
                s[kind][2] += 1
                cells.append(f"{kind} no-effect")
                continue
            rc, rep, _ = compare(exe, pairing_args(pairing, base, faulty, cap, inputs, exact), rep_path)
            ok = is_named(pairing, rep, base, target, faulty)
            s[kind][0] += ok
            s[kind][1] += 1
            cells.append(f"{kind} {'named' if ok else 'MISSED'}({'FAIL' if rc == 1 else 'PASS' if rc == 0 else rc})")
        smallest, tried = None, 0
        for e in EPSILONS:
            f = weights[e]
            if f is None:
                continue
            faulty, node, tensor, effects = f
            if not effect_for(pairing, effects, base, faulty, tensor, inputs):
                s["weight"][e][2] += 1
                continue
            tried += 1
            rc, rep, _ = compare(exe, pairing_args(pairing, base, faulty, cap, inputs, exact), rep_path)
            ok = is_named(pairing, rep, base, node, faulty)
            s["weight"][e][0] += ok
            s["weight"][e][1] += 1
            if ok and smallest is None:
                smallest = e
        if tried:
            s["smallest"].append(smallest)
        cells.append(f"weight e>={smallest:g}" if smallest else "weight never" if tried else "weight no-effect")
        line.append("; ".join(cells))
    print(" | ".join(line) + f"  [{time.time() - t0:.0f} s]", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("onnxprobe")
    p.add_argument("--work")
    p.add_argument("--quick", action="store_true", help="the hand-written nets and three torchvision models")
    p.add_argument("--only", default="")
    p.add_argument("--pairings", default=",".join(PAIRINGS))
    p.add_argument("--json", help="write the totals here")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    exe = os.path.abspath(a.onnxprobe)
    pairings = [x for x in a.pairings.split(",") if x]
    if any(x.startswith("ort") for x in pairings):
        for x in pairings:
            v = x.split("+")[0][3:]
            if x.startswith("ort") and not os.path.isdir(os.path.join(ROOT, ".deps", "ort", v)):
                print(f"ONNX Runtime {v} is not installed (ONNXPROBE_ORT_EXTRA_VERSIONS): pairing skipped")
                pairings.remove(x)
    if any(x.split("+")[0] in TOOL_PAIRINGS for x in pairings) and not gt.available():
        print("the graph tools' environment (.deps/graphtools-env) is missing: their pairings skipped")
        pairings = [x for x in pairings if x.split("+")[0] not in TOOL_PAIRINGS]
    models = [(n, Z.HANDWRITTEN[n]) for n in Z.HANDWRITTEN]
    models += [(n, Z.torchvision_entry(n, "classification", s)) for n, s in (QUICK_VISION if a.quick else FULL_VISION)]
    if a.only:
        keep = set(a.only.split(","))
        models = [m for m in models if m[0] in keep]
    work = a.work or tempfile.mkdtemp(prefix="onnxprobe-sensitivity-")
    stats = {}
    t0 = time.time()
    try:
        for name, entry in models:
            run_model(exe, work, name, entry, pairings, stats)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nsensitivity over {len(models)} models, {time.time() - t0:.0f} s")
    print(f"{'pairing':16s} {'false alarms':>14s} {'attribute top-1':>16s} {'fp16 named':>12s} "
          + " ".join(f"{'w e=' + format(e, 'g'):>10s}" for e in EPSILONS) + "  smallest e named (median)")
    for pairing in pairings:
        s = stats.get(pairing)
        if s is None:
            continue

        def rate(x):
            return f"{x[0]}/{x[1]}" + (f" ({x[2]} n/e)" if len(x) > 2 and x[2] else "")
        named = [e for e in s["smallest"] if e is not None]
        med = f"{sorted(named)[len(named) // 2]:g}" if named else "-"
        print(f"{pairing:16s} {rate(s['benign']):>14s} {rate(s['attribute']):>16s} {rate(s['fp16']):>12s} "
              + " ".join(f"{rate(s['weight'][e]):>10s}" for e in EPSILONS)
              + f"  {med} ({len(named)}/{len(s['smallest'])} models)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({p: {k: (v if k != "weight" else {format(e, "g"): x for e, x in v.items()})
                           for k, v in s.items()} for p, s in stats.items()}, f, indent=1)


if __name__ == "__main__":
    main()
