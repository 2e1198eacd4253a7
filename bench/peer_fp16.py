"""onnxprobe fp16 against onnxconverter-common's auto_convert_mixed_precision, same models, same
inputs, same tolerance (numpy.allclose, rtol 1e-2, atol 1% of the output range), side by side:
model runs, sessions, wall time, block list size, and whether each converted model passes when
every float16 activation is really rounded (onnxruntime's CPU provider otherwise computes chains
of float16 nodes without float16 kernels in float32; see docs/fp16.md).

Runs in the bench virtual environment (bench/.venv: onnxruntime, onnx, onnxconverter-common).
usage: peer_fp16.py ONNXPROBE WORK_DIR MODEL...
  MODEL: a .onnx path, or "overflow", "cnn", "stacked_ln", "cancel" (tests/python/fp16_models.py)
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
RTOL = 1e-2


def peer(model_path, feeds_path, out_json, out_model, atol, rounded):
    """In a child process: the peer with every onnxruntime run and session counted. `rounded`:
    its checks see float16 rounding (storage barriers, optimizations off), like onnxprobe's."""
    import onnxruntime as ort
    from onnxconverter_common import auto_mixed_precision, float16

    atol, rounded = float(atol), rounded == "1"
    if rounded:
        get_values = auto_mixed_precision.get_tensor_values_using_ort

        def rounded_values(model, feed, output_names=None, sess_options=None):
            if output_names is not None:  # the dtype probe: no float16 in the model yet
                return get_values(model, feed, output_names, sess_options)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            return get_values(barred_model(model), feed, None, so)

        auto_mixed_precision.get_tensor_values_using_ort = rounded_values

    counts = {"runs": 0, "sessions": 0}
    run, init = ort.InferenceSession.run, ort.InferenceSession.__init__

    def counted_run(self, *a, **k):
        counts["runs"] += 1
        return run(self, *a, **k)

    def counted_init(self, *a, **k):
        counts["sessions"] += 1
        return init(self, *a, **k)

    ort.InferenceSession.run, ort.InferenceSession.__init__ = counted_run, counted_init
    last = {}
    convert = float16.convert_float_to_float16

    def recording_convert(*a, **k):
        last["block"] = list(k.get("node_block_list") or [])
        return convert(*a, **k)

    float16.convert_float_to_float16 = recording_convert
    feeds = dict(np.load(feeds_path))
    model = onnx.load(model_path)
    t0 = time.perf_counter()
    error = ""
    try:
        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                converted = auto_mixed_precision.auto_convert_mixed_precision(
                    model, feeds, rtol=RTOL, atol=atol, keep_io_types=True)
            finally:
                sys.stdout = stdout
        onnx.save(converted, out_model)
    except Exception as e:  # the peer raises when no list validates
        error = f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - t0
    with open(out_json, "w") as f:
        json.dump({**counts, "seconds": seconds, "block": len(last.get("block", [])),
                   "error": error}, f)


def with_storage_barriers(src, dst):
    onnx.save(barred_model(onnx.load(src)), dst)


def barred_model(model):
    """Two Identities after every float16 node output (the rule onnxprobe verifies with)."""
    m = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in m.graph.value_info}
    nodes = []
    for n in m.graph.node:
        nodes.append(n)
        for i, o in enumerate(list(n.output)):
            if types.get(o) == TensorProto.FLOAT16:
                n.output[i] = o + "__stored"
                nodes.append(helper.make_node("Identity", [o + "__stored"], [o + "__mid"]))
                nodes.append(helper.make_node("Identity", [o + "__mid"], [o]))
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.value_info[:]
    return m


def passes_rounded(original, converted, feeds, atol):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    barred = converted + ".barred.onnx"
    with_storage_barriers(converted, barred)
    ref = ort.InferenceSession(original, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(barred, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    return all(np.allclose(a, b, rtol=RTOL, atol=atol) for a, b in zip(got, ref))


def output_atol(model, feeds):
    """1% of the smallest output range: the peer takes one atol for all outputs."""
    import onnxruntime as ort
    outs = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    return 1e-2 * min(float(np.abs(o).max()) for o in outs)


def make_inputs(model_path, path, low):
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.uniform(low, 1, shape).astype(np.float32)
    np.savez(path, **feeds)
    return feeds


def main():
    if sys.argv[1] == "--peer":
        peer(*sys.argv[2:8])
        return
    onnxprobe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    import fp16_models
    rows = []
    for spec in sys.argv[3:]:
        builders = {"overflow": fp16_models.overflow_model, "cnn": fp16_models.conv_model,
                    "stacked_ln": fp16_models.stacked_layernorm_model,
                    "cancel": fp16_models.cancellation_model}
        if spec in builders:
            model = os.path.join(work, f"{spec}.onnx")
            builders[spec](model)
        else:
            model = spec
        name = os.path.splitext(os.path.basename(model))[0]
        npz = os.path.join(work, f"{name}_in.npz")
        low = 0.0 if spec in ("overflow", "stacked_ln", "cancel") else -1.0
        feeds = make_inputs(model, npz, low)

        atol = output_atol(model, feeds)
        ours_model, ours_json = os.path.join(work, f"{name}_onnxprobe.onnx"), os.path.join(
            work, f"{name}_onnxprobe.json")
        t0 = time.perf_counter()
        r = subprocess.run([onnxprobe, "fp16", model, "--input", npz, "-o", ours_model, "--json",
                            ours_json, "--force", "--atol", repr(atol), "--atol-scale", "0",
                            "--rtol", repr(RTOL)], capture_output=True, text=True)
        ours_s = time.perf_counter() - t0
        rep = json.load(open(ours_json)) if os.path.exists(ours_json) else {}
        row = {"model": name, "atol": atol, "tools": [], "errors": []}
        row["tools"].append(("onnxprobe", rep.get("model_runs", -1), rep.get("sessions", -1),
                             ours_s, len(rep.get("block_list", [])), r.returncode,
                             r.returncode == 0 and passes_rounded(model, ours_model, feeds, atol)))
        for label, rounded in (("peer", "0"), ("peer-rnd", "1")):
            peer_model = os.path.join(work, f"{name}_{label}.onnx")
            peer_json = os.path.join(work, f"{name}_{label}.json")
            t0 = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--peer", model, npz, peer_json, peer_model,
                            repr(atol), rounded], capture_output=True, text=True)
            peer_s = time.perf_counter() - t0
            p = json.load(open(peer_json))
            ok = not p["error"]
            row["tools"].append((label, p["runs"], p["sessions"], peer_s, p["block"],
                                 0 if ok else 1,
                                 ok and passes_rounded(model, peer_model, feeds, atol)))
            if p["error"]:
                row["errors"].append(f"{label}: {p['error'][:150]}")
        rows.append(row)
    print(f"fp16 block list search, numpy.allclose with rtol {RTOL} and atol = 1% of the "
          "smallest output range, onnxruntime CPU. peer: auto_convert_mixed_precision as shipped;")
    print("peer-rnd: the same with its checks seeing float16 rounding, as onnxprobe's do "
          "(docs/fp16.md)")
    print(f"  {'model':<18} {'tool':<9} {'runs':>5} {'sessions':>8} {'wall s':>8} "
          f"{'blocked':>7} {'exit':>4}  passes with float16 activations rounded")
    for row in rows:
        for label, runs, sessions, secs, block, rc, rounded in row["tools"]:
            print(f"  {row['model']:<18} {label:<9} {runs:>5} {sessions:>8} {secs:>8.2f} "
                  f"{block:>7} {rc:>4}  {'yes' if rounded else 'NO'}")
        ours = row["tools"][0]
        for t in row["tools"][1:]:
            print(f"  {'':<18} {t[0]} / onnxprobe: {t[1] / max(ours[1], 1):.1f}x the runs, "
                  f"{t[3] / max(ours[3], 1e-9):.1f}x the wall time")
        for e in row["errors"]:
            print(f"  {'':<18} {e}")
        print(f"  {'':<18} (atol {row['atol']:.3g})")


if __name__ == "__main__":
    main()
