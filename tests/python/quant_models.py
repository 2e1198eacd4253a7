"""Float models and their quantized versions for test_quantization.py.

Runs in the test environment that has PyPI onnxruntime (ONNXPROBE_PYENV):
  python quant_models.py OUT_DIR KIND FORMAT PER_CHANNEL [--exclude a,b] [--outlier]
      [--reduce-range] [--scale-fault NAME=FACTOR] [--zp-fault NAME=DELTA] [--name quant.onnx]
      [--calib-scale F]
writes OUT_DIR/float.onnx, OUT_DIR/quant.onnx (or --name) and OUT_DIR/input.npy;
--scale-fault multiplies the scale initializer NAME of the quantized model by FACTOR;
--calib-scale multiplies the calibration samples (standard normal) by F;
--zp-fault adds DELTA to every value of the zero point initializer NAME (saturated to its type);
--anonymize renames every node and every tensor but the graph's inputs and outputs of the
quantized model (t0, t1, ...; n0, n1, ...): no name left to pair by;
--float-weights (QDQ) stores each quantized weight as its dequantized float values quantized in
the graph (QuantizeLinear -> DequantizeLinear), as fake-quantized exports from other producers
do; the model computes the same values.
  python quant_models.py --sqnr FLOAT.onnx QUANT.onnx INPUT.npy [TENSOR_A TENSOR_B [SCALE ZP]]
prints the SQNR (dB) of QUANT's tensor against FLOAT's (graph outputs by default), computed with
onnxruntime's Python API and numpy (optimizations off; QUANT's on with QUANT_MODELS_OPT=all),
dequantized with SCALE/ZP when given.
KIND: cnn (Conv/Relu/Conv/Relu/Conv/GlobalAveragePool/Gemm), mobilenet (pointwise/depthwise
Conv + Clip + residual Add), transformer (MatMul/Add/Softmax/LayerNorm-style block).
FORMAT: qdq or qop.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def cnn(rng, outlier):
    nodes, inits = [], []
    shape = [1, 3, 16, 16]
    chans = [3, 8, 16, 16]
    x = "input"
    for i in range(3):
        w = rng.standard_normal((chans[i + 1], chans[i], 3, 3)) * (1.0 / np.sqrt(9 * chans[i]))
        b = rng.standard_normal(chans[i + 1]) * 0.1
        if outlier and i == 1:
            # an activation outlier: channel 0 of conv2's output sits near 300 while the others
            # stay near 1, so r2's one (per-tensor) activation scale crushes them; conv3 ignores
            # channel 0, so the float model's output does not depend on it
            b[0] = 300.0
        if outlier and i == 2:
            w[:, 0] = 0.0
        inits += [_init(f"w{i + 1}", w), _init(f"b{i + 1}", b)]
        nodes.append(helper.make_node("Conv", [x, f"w{i + 1}", f"b{i + 1}"], [f"c{i + 1}"],
                                      name=f"conv{i + 1}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i + 1}"], [f"r{i + 1}"], name=f"relu{i + 1}"))
        x = f"r{i + 1}"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    inits += [_init("fcw", rng.standard_normal((10, 16)) * 0.25), _init("fcb", rng.standard_normal(10) * 0.1)]
    nodes.append(helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["logits"], name="fc", transB=1))
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    return g, shape


def mobilenet(rng, outlier):
    nodes, inits = [], []
    shape = [1, 3, 16, 16]

    def conv(x, out, cin, cout, k, group=1, stride=1, act=True, name=None):
        w = rng.standard_normal((cout, cin // group, k, k)) * (1.0 / np.sqrt(k * k * cin // group))
        inits.extend([_init(name + "_w", w), _init(name + "_b", rng.standard_normal(cout) * 0.1)])
        p = k // 2
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [out if not act else name + "_o"],
                                      name=name, pads=[p] * 4, group=group, strides=[stride] * 2))
        if act:
            nodes.append(helper.make_node("Clip", [name + "_o", "zero", "six"], [out], name=name + "_relu6"))
        return out

    inits += [_init("zero", np.array(0.0)), _init("six", np.array(6.0))]
    x = conv("input", "stem", 3, 16, 3, stride=2, name="stem_conv")
    # inverted residual: expand 1x1, depthwise 3x3, project 1x1, residual add
    for blk in range(2):
        e = conv(x, f"b{blk}_exp", 16, 32, 1, name=f"b{blk}_expand")
        d = conv(e, f"b{blk}_dw", 32, 32, 3, group=32, name=f"b{blk}_depthwise")
        p = conv(d, f"b{blk}_proj", 32, 16, 1, act=False, name=f"b{blk}_project")
        nodes.append(helper.make_node("Add", [x, p], [f"b{blk}_add"], name=f"b{blk}_add"))
        x = f"b{blk}_add"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    inits += [_init("fcw", rng.standard_normal((10, 16)) * 0.25), _init("fcb", rng.standard_normal(10) * 0.1)]
    nodes.append(helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["logits"], name="fc", transB=1))
    g = helper.make_graph(nodes, "mobilenet", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    return g, shape


def transformer(rng, outlier):
    t, d = 8, 16
    shape = [1, t, d]
    nodes, inits = [], []

    def lin(x, out, din, dout, name):
        inits.extend([_init(name + "_w", rng.standard_normal((din, dout)) / np.sqrt(din)),
                      _init(name + "_b", rng.standard_normal(dout) * 0.1)])
        nodes.append(helper.make_node("MatMul", [x, name + "_w"], [name + "_mm"], name=name))
        nodes.append(helper.make_node("Add", [name + "_mm", name + "_b"], [out], name=name + "_bias"))
        return out

    q = lin("input", "q", d, d, "q_proj")
    k = lin("input", "k", d, d, "k_proj")
    v = lin("input", "v", d, d, "v_proj")
    nodes.append(helper.make_node("Transpose", [k], ["kt"], name="k_t", perm=[0, 2, 1]))
    nodes.append(helper.make_node("MatMul", [q, "kt"], ["scores"], name="qk"))
    inits.append(_init("inv_sqrt_d", np.array(1.0 / np.sqrt(d))))
    nodes.append(helper.make_node("Mul", ["scores", "inv_sqrt_d"], ["scaled"], name="scale"))
    nodes.append(helper.make_node("Softmax", ["scaled"], ["attn"], name="softmax", axis=-1))
    nodes.append(helper.make_node("MatMul", ["attn", v], ["ctx"], name="attn_v"))
    o = lin("ctx", "o", d, d, "o_proj")
    nodes.append(helper.make_node("Add", ["input", o], ["res1"], name="residual"))
    h = lin("res1", "h", d, 2 * d, "fc1")
    nodes.append(helper.make_node("Relu", [h], ["h_act"], name="fc1_relu"))
    y = lin("h_act", "y", 2 * d, d, "fc2")
    nodes.append(helper.make_node("Add", ["res1", y], ["out"], name="residual2"))
    g = helper.make_graph(nodes, "transformer", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)], inits)
    return g, shape


KINDS = {"cnn": cnn, "mobilenet": mobilenet, "transformer": transformer}


class Reader:
    def __init__(self, samples):
        self.it = iter([{"input": s} for s in samples])

    def get_next(self):
        return next(self.it, None)


def _run(path, names, x, opt="disabled"):
    import onnxruntime as ort
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(onnx.ValueInfoProto(name=n))
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if opt == "all"
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, {"input": x}))), m


def sqnr(argv):
    fpath, qpath, xpath = argv[:3]
    x = np.load(xpath)
    if len(argv) >= 5:
        ta, tb = argv[3], argv[4]
    else:
        ta = tb = onnx.load(fpath).graph.output[0].name
    a = _run(fpath, [ta], x)[0][ta].astype(np.float64)
    # QUANT_MODELS_OPT=all: the quantized model with onnxruntime's optimizations (fused kernels)
    outs, m = _run(qpath, [tb], x, os.environ.get("QUANT_MODELS_OPT", "disabled"))
    b = outs[tb].astype(np.float64)
    if len(argv) >= 7:
        inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
        b = (b - inits[argv[6]].astype(np.float64)) * inits[argv[5]].astype(np.float64)
    print(10 * np.log10(np.sum(a * a) / np.sum((b - a) ** 2)))


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "--sqnr":
        return sqnr(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("format", choices=["qdq", "qop"])
    ap.add_argument("per_channel", choices=["per-tensor", "per-channel"])
    ap.add_argument("--exclude", default="")
    ap.add_argument("--outlier", action="store_true")
    ap.add_argument("--name", default="quant.onnx")
    ap.add_argument("--reduce-range", action="store_true")
    ap.add_argument("--scale-fault", default="")
    ap.add_argument("--zp-fault", default="")
    ap.add_argument("--anonymize", action="store_true")
    ap.add_argument("--float-weights", action="store_true")
    ap.add_argument("--calib-scale", type=float, default=1.0)
    args = ap.parse_args()
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    g, shape = KINDS[args.kind](rng, args.outlier)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="quant_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    fpath = os.path.join(args.out, "float.onnx")
    onnx.save(m, fpath)
    data_rng = np.random.default_rng(11)
    calib = [(data_rng.standard_normal(shape) * args.calib_scale).astype(np.float32) for _ in range(8)]
    np.save(os.path.join(args.out, "input.npy"), data_rng.standard_normal(shape).astype(np.float32))
    qpath = os.path.join(args.out, args.name)
    quantize_static(fpath, qpath, Reader(calib), reduce_range=args.reduce_range,
                    quant_format=QuantFormat.QDQ if args.format == "qdq" else QuantFormat.QOperator,
                    per_channel=args.per_channel == "per-channel", activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    nodes_to_exclude=[n for n in args.exclude.split(",") if n])
    for spec, edit in ((args.scale_fault, lambda a, v: (a * np.float32(v)).astype(a.dtype)),
                       (args.zp_fault, lambda a, v: np.clip(a.astype(np.int64) + int(v), np.iinfo(a.dtype).min,
                                                            np.iinfo(a.dtype).max).astype(a.dtype))):
        if not spec:
            continue
        name, value = spec.split("=")
        q = onnx.load(qpath)
        for i, init in enumerate(q.graph.initializer):
            if init.name == name:
                arr = edit(numpy_helper.to_array(init), value)
                q.graph.initializer[i].CopyFrom(numpy_helper.from_array(arr, name))
                break
        else:
            raise SystemExit(f"no initializer {name}")
        onnx.save(q, qpath)
    if args.float_weights:
        q = onnx.load(qpath)
        inits = {i.name: i for i in q.graph.initializer}
        nodes = []
        for node in q.graph.node:
            w = inits.get(node.input[0]) if node.op_type == "DequantizeLinear" else None
            if w is None or numpy_helper.to_array(w).dtype != np.int8:
                nodes.append(node)
                continue
            qv = numpy_helper.to_array(w).astype(np.float32)
            sc = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
            zp = numpy_helper.to_array(inits[node.input[2]]).astype(np.float32)
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            shape = [1] * qv.ndim
            if sc.size > 1:
                shape[axis] = -1
            fw = ((qv - zp.reshape(shape)) * sc.reshape(shape)).astype(np.float32)
            q.graph.initializer.remove(w)
            q.graph.initializer.append(numpy_helper.from_array(fw, w.name + "_float"))
            attrs = [a for a in node.attribute if a.name == "axis"]
            qn = helper.make_node("QuantizeLinear", [w.name + "_float", node.input[1], node.input[2]],
                                  [w.name], name=node.name + "_fakequant")
            qn.attribute.extend(attrs)
            nodes += [qn, node]
        del q.graph.node[:]
        q.graph.node.extend(nodes)
        onnx.save(q, qpath)
    if args.anonymize:
        q = onnx.load(qpath)
        keep = {i.name for i in q.graph.input} | {o.name for o in q.graph.output}
        names = {}

        def rename(n):
            if not n or n in keep:
                return n
            return names.setdefault(n, f"t{len(names)}")

        for init in q.graph.initializer:
            init.name = rename(init.name)
        for k, node in enumerate(q.graph.node):
            node.name = f"n{k}"
            for i, x in enumerate(node.input):
                node.input[i] = rename(x)
            for i, x in enumerate(node.output):
                node.output[i] = rename(x)
        del q.graph.value_info[:]
        onnx.save(q, qpath)


if __name__ == "__main__":
    main()
