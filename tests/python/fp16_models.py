"""Models for the fp16 suite and bench/peer_fp16.py, built with onnx.helper (never committed)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def overflow_model(path):
    """x in [0, 1): a large Mul before a ReduceSum (the sum passes 65504) and a decomposed
    LayerNorm of 1000 * x (the squared deviations pass 65504)."""
    n = 64
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Mul", ["x", "k3000"], ["big"], name="mul_big"),
        helper.make_node("ReduceSum", ["big", "axes"], ["sum_raw"], name="reduce_sum", keepdims=1),
        helper.make_node("Mul", ["sum_raw", "k_small"], ["total"], name="scale_sum"),
        helper.make_node("Mul", ["x", "k1000"], ["h"], name="mul_h"),
        helper.make_node("ReduceMean", ["h"], ["mean"], name="ln_mean", axes=[1]),
        helper.make_node("Sub", ["h", "mean"], ["d"], name="ln_sub"),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="ln_pow"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="ln_var", axes=[1]),
        helper.make_node("Add", ["var", "eps"], ["var_eps"], name="ln_add_eps"),
        helper.make_node("Sqrt", ["var_eps"], ["std"], name="ln_sqrt"),
        helper.make_node("Div", ["d", "std"], ["norm"], name="ln_div"),
        helper.make_node("Mul", ["norm", "gamma"], ["scaled"], name="ln_gamma"),
        helper.make_node("Add", ["scaled", "beta"], ["ln"], name="ln_beta"),
    ]
    inits = [
        const("k3000", 3000.0), const("k_small", 1e-3), const("k1000", 1000.0),
        const("two", 2.0), const("eps", 1e-5),
        const("gamma", rng.uniform(0.5, 1.5, n)), const("beta", rng.uniform(-0.5, 0.5, n)),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
    ]
    g = helper.make_graph(
        nodes, "fp16_overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("ln", TensorProto.FLOAT, [1, n])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)
    return {i.name: numpy_helper.to_array(i) for i in inits}


def overflow_reference(x, w):
    """numpy float64 reference of overflow_model."""
    x = x.astype(np.float64)
    total = (x * 3000).sum(axis=1, keepdims=True) * 1e-3
    h = x * 1000
    d = h - h.mean(axis=1, keepdims=True)
    var = (d ** 2).mean(axis=1, keepdims=True)
    ln = d / np.sqrt(var + 1e-5) * w["gamma"] + w["beta"]
    return {"total": total, "ln": ln}


def conv_model(path):
    rng = np.random.default_rng(1)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3))
    w2 = rng.normal(0, 0.2, (8, 8, 3, 3))
    fc = rng.normal(0, 0.3, (10, 8))
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"], name="fc", transB=1),
    ]
    inits = [const("w1", w1), const("b1", rng.normal(0, 0.1, 8)), const("w2", w2),
             const("b2", rng.normal(0, 0.1, 8)), const("fc", fc),
             const("fcb", rng.normal(0, 0.1, 10))]
    g = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def stacked_layernorm_model(path, blocks=8, width=64):
    """A transformer-like stack: each block is x -> x + Linear(LayerNorm(x)) with the LayerNorm
    decomposed (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add). The input is scaled
    so that every block's squared deviations pass 65504: each Pow -> ReduceMean -> Add -> Sqrt
    must stay in float32, everything else can be float16. Constants are per block and the only
    graph output is the last block's (onnxconverter-common's converter fails on an initializer
    shared by a kept and a converted node, and on a graph output that another node reads)."""
    rng = np.random.default_rng(5)
    nodes, inits = [], [const("scale", 1000.0)]
    nodes.append(helper.make_node("Mul", ["x", "scale"], ["h0"], name="scale_in"))
    for b in range(blocks):
        p, h = f"b{b}_", f"h{b}"
        inits += [const(p + "gamma", rng.uniform(0.5, 1.5, width)),
                  const(p + "beta", rng.uniform(-0.5, 0.5, width)),
                  const(p + "w", rng.normal(0, 30.0 / np.sqrt(width), (width, width))),
                  const(p + "bias", rng.normal(0, 1.0, width)),
                  const(p + "two", 2.0), const(p + "eps", 1e-5)]
        nodes += [
            helper.make_node("ReduceMean", [h], [p + "mean"], name=p + "ln_mean", axes=[1]),
            helper.make_node("Sub", [h, p + "mean"], [p + "d"], name=p + "ln_sub"),
            helper.make_node("Pow", [p + "d", p + "two"], [p + "d2"], name=p + "ln_pow"),
            helper.make_node("ReduceMean", [p + "d2"], [p + "var"], name=p + "ln_var", axes=[1]),
            helper.make_node("Add", [p + "var", p + "eps"], [p + "ve"], name=p + "ln_add_eps"),
            helper.make_node("Sqrt", [p + "ve"], [p + "std"], name=p + "ln_sqrt"),
            helper.make_node("Div", [p + "d", p + "std"], [p + "norm"], name=p + "ln_div"),
            helper.make_node("Mul", [p + "norm", p + "gamma"], [p + "g"], name=p + "ln_gamma"),
            helper.make_node("Add", [p + "g", p + "beta"], [p + "ln"], name=p + "ln_beta"),
            helper.make_node("MatMul", [p + "ln", p + "w"], [p + "mm"], name=p + "linear"),
            helper.make_node("Add", [p + "mm", p + "bias"], [p + "y"], name=p + "linear_bias"),
            helper.make_node("Add", [h, p + "y"], [f"h{b + 1}"], name=p + "residual"),
        ]
    g = helper.make_graph(
        nodes, "stacked_layernorm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(f"h{blocks}", TensorProto.FLOAT, [1, width])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def cancellation_model(path):
    """y = 2 * ((x * 1 + 1000) - 1000) for x in [0, 1): in float16 x + 1000 is rounded to a
    multiple of 0.5, so the Sub's result loses everything; keeping the Sub in float32 alone does
    not help, its input must be float32 too."""
    nodes = [
        helper.make_node("Mul", ["x", "one"], ["x1"], name="pre"),
        helper.make_node("Add", ["x1", "k1000"], ["shifted"], name="shift"),
        helper.make_node("Sub", ["shifted", "k1000"], ["back"], name="unshift"),
        helper.make_node("Mul", ["back", "k2"], ["y"], name="post"),
    ]
    inits = [const("one", 1.0), const("k1000", 1000.0), const("k2", 2.0)]
    g = helper.make_graph(
        nodes, "cancellation", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)
