"""A small residual CNN that ONNX Runtime runs in its blocked channel layout (NCHWc) at
optimization level "all", and references from onnxruntime's Python API.

Runs in the test environment that has PyPI onnxruntime (ONNXPROBE_PYENV):
  python blocked_layout_models.py OUT_DIR
writes OUT_DIR/cnn.onnx, OUT_DIR/faulty.onnx (one weight of the second Conv changed),
OUT_DIR/input.npy and OUT_DIR/ref.npz: every intermediate tensor with optimizations off, the
graph output of a plain session at "all", `layout`, the optimized graph's NCHWc node count, and
`optimized_outputs`, the tensor names in the graph onnxruntime runs at "all". OUT_DIR/plain.onnx
is the model without its HardSwish branch, OUT_DIR/samples/ two inputs for it and
OUT_DIR/plain_ref.npz, for each input K: every tensor at "off" ("off/K/NAME"), the output of a
plain session at "all" ("all/K/y") and of one with the blocked tensors marked ("all marked/K/NAME").
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

FAULTY_CONV = "conv2"


def build(rng, hardswish=True):
    def weight(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name=FAULTY_CONV, pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s2"], name="add2"),
        helper.make_node("Relu", ["s2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w3", "b3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c3"], ["g"], name="gate"),
        helper.make_node("Mul", ["c3", "g"], ["m"], name="swish"),
        helper.make_node("Conv", ["p", "w4", "b4"], ["c4"], name="conv4", pads=[1, 1, 1, 1]),
        helper.make_node("HardSwish", ["c4"], ["h4"], name="hswish"),
        helper.make_node("Concat", ["m", "p", "h4"], ["cat"], name="concat", axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["y"], name="gap"),
    ]
    inits = [weight("w1", 32, 16, 3, 3), weight("b1", 32), weight("w2", 32, 32, 3, 3),
             weight("b2", 32), weight("w3", 32, 32, 3, 3), weight("b3", 32),
             weight("w4", 32, 32, 3, 3), weight("b4", 32)]
    if not hardswish:  # every blocked tensor can then be marked at once
        nodes = [n for n in nodes if n.name not in ("conv4", "hswish")]
        nodes[-2] = helper.make_node("Concat", ["m", "p"], ["cat"], name="concat", axis=1)
        inits = inits[:6]
    g = helper.make_graph(nodes, "blocked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def session(model, level, saved=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    if saved:
        so.optimized_model_filepath = saved
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    m = build(rng)
    onnx.save(m, os.path.join(out, "cnn.onnx"))
    f = onnx.ModelProto()
    f.CopyFrom(m)
    for t in f.graph.initializer:
        if t.name == "w2":
            w = numpy_helper.to_array(t).copy()
            w[5, 7, 1, 1] += 1.5
            t.CopyFrom(numpy_helper.from_array(w, "w2"))
    onnx.save(f, os.path.join(out, "faulty.onnx"))
    x = rng.standard_normal((1, 16, 24, 24)).astype(np.float32)
    np.save(os.path.join(out, "input.npy"), x)

    saved = os.path.join(out, "optimized.onnx")
    plain_all = session(m, ort.GraphOptimizationLevel.ORT_ENABLE_ALL, saved).run(None, {"x": x})[0]
    opt = onnx.load(saved, load_external_data=False)
    layout = sum(n.domain == "com.microsoft.nchwc" for n in opt.graph.node)
    every = onnx.ModelProto()
    every.CopyFrom(m)
    names = [o for n in m.graph.node for o in n.output if o != "y"]
    for n in names:
        every.graph.output.append(helper.make_empty_tensor_value_info(n))
    off = session(every, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(names, {"x": x})
    kept = sorted(o for n in opt.graph.node for o in n.output if o)
    np.savez(os.path.join(out, "ref.npz"), plain_all=plain_all, layout=np.array(layout),
             optimized_outputs=np.array(kept),
             **{"off/" + n: v for n, v in zip(names, off)})

    # without the HardSwish branch, over two samples: each sample's output at "off" and "all"
    plain = build(np.random.default_rng(3), hardswish=False)
    onnx.save(plain, os.path.join(out, "plain.onnx"))
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    # and every intermediate tensor at "off", the blocked ones at "all" marked as outputs
    blocked = ["r1", "r2", "p", "c3", "cat"]
    inner = [o for n in plain.graph.node for o in n.output if o != "y"]
    marked = {}
    for level, tag, names in ((ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "off", inner),
                              (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "all marked", blocked)):
        m = onnx.ModelProto()
        m.CopyFrom(plain)
        for n in names:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
        marked[tag] = session(m, level)
    outputs = {}
    for k in range(2):
        xk = x if k == 0 else rng.standard_normal((1, 16, 24, 24)).astype(np.float32)
        np.savez(os.path.join(out, "samples", f"sample_{k}.npz"), x=xk)
        outputs[f"all/{k}/y"] = session(plain, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(
            None, {"x": xk})[0]
        for tag, names in (("off", inner), ("all marked", blocked)):
            for n, v in zip(["y"] + names, marked[tag].run(["y"] + names, {"x": xk})):
                outputs[f"{tag}/{k}/{n}"] = v
    np.savez(os.path.join(out, "plain_ref.npz"), **outputs)


if __name__ == "__main__":
    main()
