"""Fault injection for bench/real_world.py, placed from the model's structure alone (never by asking
onnxprobe), and ONNX Runtime's own word on whether each fault changes the graph outputs.

  REALWORLD_PYTHON bench/real_world_faults.py MODEL.onnx INPUTS.json OUTDIR

(any python with onnx, numpy and onnxruntime: the realworld env or .deps/graphtools-env.)
INPUTS.json: [{"name": ..., "path": ...}]. Writes OUTDIR/<kind>.onnx and OUTDIR/faults.json:
one entry per fault: kind, file, target (the faulted node), accept (the nodes a report may name for
it: the node, the nodes of its weight's static chain, the Constant holding the value), enclosing
(the If/Loop/Scan nodes holding the faulted node, outermost first), what (one
line), effect_off / effect_all (whether any graph output differs from the unfaulted model's, ONNX
Runtime at optimizations off / all), output_change_* (max |difference| of the float outputs),
output_tolerance_ratio_* and node_tolerance_ratio_off (the same difference over onnxprobe's default
elementwise tolerance, 1e-5 x scale + 1e-3 x |a|, at the graph outputs and at the faulted node's own
outputs: above 1 the fault leaves tolerance there), or skipped (why no such fault exists).

Nodes are ordered by a walk of the main graph that visits an If/Loop/Scan node's subgraphs (then
before else) where the node stands; "mid-depth" is the middle of a kind's candidates in that order.
  weight     the largest-magnitude element of the weight of the mid-depth Conv/ConvTranspose/Gemm/
             MatMul/LSTM/GRU/RNN/MatMulInteger/ConvInteger (input 1; QLinearConv/QLinearMatMul input 3: an initializer or a Constant,
             directly or through Identity/Transpose/Reshape/Cast/Squeeze/Unsqueeze/
             DequantizeLinear), read by that node only; float: scaled by 1+e; int8/uint8
             (quantized): moved max(1, round(|w| e)) steps toward 0. Classical-ML operators hold
             their weights in attributes: LinearClassifier/LinearRegressor `coefficients`,
             SVM* `coefficients`, TreeEnsemble* `class_weights`/`target_weights` (every leaf value
             of the middle tree: one leaf is reached by few inputs) count as weights too.
             e = 1e-2 (weight_0.01.onnx) and 1e-1 (weight_0.1.onnx)
  attribute  the mid-depth node with a changeable attribute: symmetric Conv/pool pads shifted
             (p,p -> 2p,0: same shape, content moved), a float alpha/beta/epsilon/gamma/lambd
             doubled (0 -> 0.1), or for classical-ML operators the largest-magnitude element of
             Scaler `scale` doubled, TreeEnsemble* `nodes_values` (the middle tree's root
             threshold: doubled, or +0.5 when within 0.5 of 0), SVM* `kernel_params` gamma doubled
  scalar     a one-element constant (initializer or Constant, non-zero) feeding the mid-depth
             Mul/Add/Sub/Div/Pow/Max/Min: times 1.1; a constant read by other nodes too is copied
             first so only this node sees the change
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

WEIGHT_OPS = {"Conv": 1, "ConvTranspose": 1, "Gemm": 1, "MatMul": 1, "LSTM": 1, "GRU": 1, "RNN": 1,
              "MatMulInteger": 1, "ConvInteger": 1, "QLinearConv": 3, "QLinearMatMul": 3}
CHAIN_OPS = ("Identity", "Transpose", "Reshape", "Cast", "Squeeze", "Unsqueeze", "DequantizeLinear")
SCALAR_OPS = ("Mul", "Add", "Sub", "Div", "Pow", "Max", "Min")
ML_WEIGHT_ATTRS = {"LinearClassifier": ("coefficients",), "LinearRegressor": ("coefficients",),
                   "TreeEnsembleClassifier": ("class_weights",), "TreeEnsembleRegressor": ("target_weights",),
                   "TreeEnsemble": ("leaf_weights",), "SVMClassifier": ("coefficients",),
                   "SVMRegressor": ("coefficients",)}
FLOAT_ATTRS = ("alpha", "beta", "epsilon", "gamma", "lambd")
EPSILONS = (1e-2, 1e-1)


def walk(graph, scope=()):
    """(node, graph it lives in, the graphs enclosing it) in order, subgraphs where their node is."""
    for n in graph.node:
        yield n, graph, scope
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk(a.g, scope + (graph,))
            for g in a.graphs:
                yield from walk(g, scope + (graph,))


class Index:
    """Where every value of the model comes from: initializers and Constant nodes of any graph
    (visible to the graphs nested in it), producers, readers."""

    def __init__(self, model):
        self.model = model
        self.nodes = list(walk(model.graph))
        self.inits = {}      # name -> (TensorProto, graph)
        self.consts = {}     # name -> Constant node
        self.producer = {}
        self.readers = {}
        for g in [model.graph] + [a.g for n, _, _ in self.nodes for a in n.attribute
                                  if a.type == onnx.AttributeProto.GRAPH]:
            for t in g.initializer:
                self.inits[t.name] = (t, g)
        for n, g, _ in self.nodes:
            for o in n.output:
                self.producer[o] = n
            for i in n.input:
                self.readers.setdefault(i, []).append(n)
            if n.op_type == "Constant":
                self.consts[n.output[0]] = n
        # the If/Loop/Scan nodes enclosing each node (a report may name the whole control-flow node)
        self.holders = {}
        for n, _, _ in self.nodes:
            for a in n.attribute:
                subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
                for g in subs:
                    for m, _, _ in walk(g):
                        self.holders.setdefault(m.name, []).append(n.name)

    def static(self, name, depth=0):
        """(source value name, chain nodes) when `name` is a constant through a static chain."""
        if name in self.inits or name in self.consts:
            return name, []
        n = self.producer.get(name)
        if n is None or n.op_type not in CHAIN_OPS or depth > 6:
            return None
        for extra in n.input[1:]:  # Reshape shape, DequantizeLinear scale/zero point: constants
            if extra and extra not in self.inits and extra not in self.consts:
                return None
        r = self.static(n.input[0], depth + 1)
        return None if r is None else (r[0], r[1] + [n])

    def array(self, name):
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name][0])
        n = self.consts[name]
        a = next(a for a in n.attribute if a.name == "value")
        return numpy_helper.to_array(a.t)

    def set_array(self, name, x):
        if name in self.inits:
            self.inits[name][0].CopyFrom(numpy_helper.from_array(x, name))
        else:
            a = next(a for a in self.consts[name].attribute if a.name == "value")
            a.t.CopyFrom(numpy_helper.from_array(x, name))

    def uses(self, name):
        return len({id(n) for n in self.readers.get(name, [])})


def weight_candidates(ix):
    out = []
    for n, g, _ in ix.nodes:
        if n.op_type in WEIGHT_OPS and len(n.input) > WEIGHT_OPS[n.op_type]:
            r = ix.static(n.input[WEIGHT_OPS[n.op_type]])
            if r is None:
                continue
            src, chain = r
            if ix.uses(src) == 1 and all(ix.uses(c.output[0]) == 1 for c in chain):
                out.append(("input", n, src, chain))
        elif n.op_type in ML_WEIGHT_ATTRS:
            for a in n.attribute:
                if a.name in ML_WEIGHT_ATTRS[n.op_type] and len(a.floats):
                    out.append(("attr", n, a.name, []))
    return out


def inject_weight(path, out, e):
    m = onnx.load(path)
    ix = Index(m)
    cands = weight_candidates(ix)
    if not cands:
        return {"skipped": "no Conv/Gemm/MatMul/RNN weight (or weight attribute) read by one node only"}
    how, node, src, chain = cands[len(cands) // 2]
    tree_ids = next((a for a in node.attribute if a.name in ("class_treeids", "target_treeids")), None)
    if how == "attr" and tree_ids is not None:
        # a leaf is reached by few inputs: every leaf weight of the middle tree, scaled
        a = next(a for a in node.attribute if a.name == src)
        trees = sorted(set(tree_ids.ints))
        t = trees[len(trees) // 2]
        w = np.array(a.floats, dtype=np.float32)
        sel = np.array(tree_ids.ints) == t
        w[sel] = w[sel] * np.float32(1 + e)
        del a.floats[:]
        a.floats.extend(w.tolist())
        what = f"{node.op_type} {node.name} attribute {src} of tree {t} ({int(sel.sum())} leaf weights) x{1 + e:g}"
    elif how == "attr":
        a = next(a for a in node.attribute if a.name == src)
        w = np.array(a.floats, dtype=np.float32)
        k = int(np.argmax(np.abs(w)))
        old = float(w[k])
        w[k] = np.float32(w[k] * (1 + e))
        del a.floats[:]
        a.floats.extend(w.tolist())
        what = f"{node.op_type} {node.name} attribute {src}[{k}] {old:.6g} -> {float(w[k]):.6g} (x{1 + e:g})"
    else:
        w = ix.array(src).copy()
        k = int(np.argmax(np.abs(w.astype(np.float64))))
        old = w.flat[k]
        if np.issubdtype(w.dtype, np.integer):
            step = max(1, int(round(abs(int(old)) * e)))
            w.flat[k] = old - np.sign(int(old)) * step
        else:
            w.flat[k] = old * w.dtype.type(1 + e)
        ix.set_array(src, w)
        where = "Constant " + ix.consts[src].name if src in ix.consts else "initializer"
        what = (f"{node.op_type} {node.name} weight {src} ({where}{', via ' + '/'.join(c.op_type for c in chain) if chain else ''})"
                f"[{k}] {old} -> {w.flat[k]}")
    onnx.save(m, out)
    accept = [node.name] + [c.name for c in chain] + ([ix.consts[src].name] if how == "input" and src in ix.consts else [])
    return {"target": node.name, "op_type": node.op_type, "accept": accept, "enclosing": ix.holders.get(node.name, []),
            "what": what, "position":
            f"{len(cands) // 2 + 1} of {len(cands)} candidates"}


def _shift_pads(node):
    for a in node.attribute:
        if a.name == "pads" and len(a.ints) >= 2 and len(set(a.ints)) == 1 and a.ints[0] > 0:
            half, p = len(a.ints) // 2, a.ints[0]
            del a.ints[:]
            a.ints.extend([2 * p] * half + [0] * half)
            return f"pads [{p}]*{2 * half} -> {list(a.ints)}"
    return None


def _change_attribute(node):
    """Changes one attribute of `node` in place; returns what was done, or None."""
    if node.op_type in ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "ConvInteger", "QLinearConv"):
        r = _shift_pads(node)
        if r:
            return r
    for a in node.attribute:
        if a.name in FLOAT_ATTRS and a.type == onnx.AttributeProto.FLOAT:
            old = a.f
            a.f = a.f * 2 if a.f != 0 else 0.1
            return f"{a.name} {old:g} -> {a.f:g}"
    if node.op_type == "Scaler":
        a = next((a for a in node.attribute if a.name == "scale" and len(a.floats)), None)
        if a is not None:
            w = list(a.floats)
            k = int(np.argmax(np.abs(w)))
            old = w[k]
            w[k] *= 2
            del a.floats[:]
            a.floats.extend(w)
            return f"scale[{k}] {old:g} -> {w[k]:g}"
    if node.op_type.startswith("TreeEnsemble"):
        vals = next((a for a in node.attribute if a.name == "nodes_values"), None)
        tree = next((a for a in node.attribute if a.name == "nodes_treeids"), None)
        nid = next((a for a in node.attribute if a.name == "nodes_nodeids"), None)
        if vals is not None and tree is not None and nid is not None:
            trees = sorted(set(tree.ints))
            t = trees[len(trees) // 2]
            k = next(i for i in range(len(tree.ints)) if tree.ints[i] == t and nid.ints[i] == 0)
            w = list(vals.floats)
            old = w[k]
            w[k] = old * 2 if abs(old) > 0.5 else old + 0.5
            del vals.floats[:]
            vals.floats.extend(w)
            return f"nodes_values[{k}] (tree {t} root threshold) {old:g} -> {w[k]:g}"
    if node.op_type.startswith("SVM"):
        a = next((a for a in node.attribute if a.name == "kernel_params" and len(a.floats)), None)
        if a is not None and a.floats[0] != 0:
            w = list(a.floats)
            old = w[0]
            w[0] *= 2
            del a.floats[:]
            a.floats.extend(w)
            return f"kernel_params[0] (gamma) {old:g} -> {w[0]:g}"
    return None


def inject_attribute(path, out):
    base = onnx.load(path)
    names = [n.name for n, _, _ in Index(base).nodes
             if _change_attribute(onnx.NodeProto.FromString(n.SerializeToString()))]
    if not names:
        return {"skipped": "no node with pads, alpha/beta/epsilon/gamma/lambd or an ML float-list attribute"}
    name = names[len(names) // 2]
    m = onnx.load(path)
    node = next(n for n, _, _ in Index(m).nodes if n.name == name)
    what = _change_attribute(node)
    onnx.save(m, out)
    return {"target": name, "op_type": node.op_type, "accept": [name], "enclosing": Index(m).holders.get(name, []), "what": f"{node.op_type} {name} {what}",
            "position": f"{len(names) // 2 + 1} of {len(names)} candidates"}


def inject_scalar(path, out):
    m = onnx.load(path)
    ix = Index(m)
    cands = []
    for n, g, _ in ix.nodes:
        if n.op_type not in SCALAR_OPS:
            continue
        for j, i in enumerate(n.input):
            if (i in ix.inits or i in ix.consts):
                x = ix.array(i)
                if x.size == 1 and np.issubdtype(x.dtype, np.floating) and float(x.flat[0]) != 0:
                    cands.append((n, g, j, i))
                    break
    if not cands:
        return {"skipped": "no one-element non-zero float constant feeding Mul/Add/Sub/Div/Pow/Max/Min"}
    node, g, j, src = cands[len(cands) // 2]
    x = ix.array(src).copy()
    old = float(x.flat[0])
    x.flat[0] = x.flat[0] * x.dtype.type(1.1)
    accept = [node.name]
    if ix.uses(src) == 1:
        ix.set_array(src, x)
        if src in ix.consts:
            accept.append(ix.consts[src].name)
        how = "in place"
    else:  # shared: a copy for this node only, in the graph the node lives in
        name = src + "__faulted"
        g.initializer.append(numpy_helper.from_array(x, name))
        node.input[j] = name
        how = f"copied (was read by {ix.uses(src)} nodes)"
    onnx.save(m, out)
    return {"target": node.name, "op_type": node.op_type, "accept": accept, "enclosing": ix.holders.get(node.name, []),
            "what": f"{node.op_type} {node.name} input {j} {src} {old:g} -> {float(x.flat[0]):g} ({how})",
            "position": f"{len(cands) // 2 + 1} of {len(cands)} candidates"}


def run_outputs(path, feeds, level):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if level == "off"
                                   else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def same(x, y):
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return np.array_equal(np.asarray(x), np.asarray(y))
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    return x == y


ATOL, RTOL = 1e-5, 1e-3  # onnxprobe's default elementwise tolerance (docs/metrics.md), for reference


def tolerance_ratio(a, b):
    """max |b - a| / (ATOL * max(1, max|a|) + RTOL * |a|) over numeric outputs: above 1 a graph output
    leaves onnxprobe's default tolerance (an independent estimate, not onnxprobe's verdict)."""
    out = 0.0
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) and x.dtype.kind in "fiu" and x.size:
            x64, y64 = x.astype(np.float64), np.asarray(y, np.float64)
            allowed = ATOL * max(1.0, float(np.max(np.abs(x64)))) + RTOL * np.abs(x64)
            out = max(out, float(np.max(np.abs(y64 - x64) / allowed)))
    return out


def node_outputs_ratio(path, faulty, target, feeds):
    """The tolerance ratio at the faulted node's own outputs (optimizations off), when the node is
    in the main graph; else None."""
    def run(p):
        m = onnx.load(p)
        node = next((n for n in m.graph.node if n.name == target), None)
        if node is None:
            return None
        names = [o for o in node.output if o]
        del m.graph.output[:]
        m.graph.output.extend([onnx.ValueInfoProto(name=o) for o in names])
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return s.run(None, {k: v for k, v in feeds.items() if k in {i.name for i in s.get_inputs()}})
    try:
        a, b = run(path), run(faulty)
    except Exception:  # noqa: BLE001
        return None
    return None if a is None else tolerance_ratio(a, b)


def max_output_change(a, b):
    out = 0.0
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
            out = max(out, float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0)
    return out


def main():
    path, inputs_json, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    feeds = {i["name"]: np.load(i["path"]) for i in json.load(open(inputs_json))}
    faults = []
    jobs = [(f"weight_{e:g}", lambda o, e=e: inject_weight(path, o, e)) for e in EPSILONS]
    jobs += [("attribute", lambda o: inject_attribute(path, o)), ("scalar", lambda o: inject_scalar(path, o))]
    base = {lvl: run_outputs(path, feeds, lvl) for lvl in ("off", "all")}
    for kind, fn in jobs:
        out = os.path.join(outdir, f"{kind}.onnx")
        try:
            f = fn(out)
        except Exception as e:  # noqa: BLE001
            f = {"skipped": f"injection failed: {type(e).__name__}: {e}"}
        f["kind"] = kind
        if "skipped" not in f:
            f["file"] = out
            for lvl in ("off", "all"):
                try:
                    got = run_outputs(out, feeds, lvl)
                    f[f"effect_{lvl}"] = not all(same(x, y) for x, y in zip(base[lvl], got))
                    f[f"output_change_{lvl}"] = max_output_change(base[lvl], got)
                    f[f"output_tolerance_ratio_{lvl}"] = tolerance_ratio(base[lvl], got)
                except Exception as e:  # noqa: BLE001 - the fault breaks the model for the runtime
                    f[f"effect_{lvl}"] = True
                    f[f"runtime_error_{lvl}"] = str(e).splitlines()[0][:300]
            f["node_tolerance_ratio_off"] = node_outputs_ratio(path, out, f["target"], feeds)
        faults.append(f)
    with open(os.path.join(outdir, "faults.json"), "w") as fh:
        json.dump(faults, fh, indent=1)


if __name__ == "__main__":
    main()
