"""Models for diagnosis, each built to have exactly one cause (tests/python/test_diagnose.py and
bench/diagnose_bench.py)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _save(nodes, inits, path, shape_in, shape_out, extra_opsets=()):
    g = helper.make_graph(nodes, "diagnose", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), *extra_opsets])
    m.ir_version = 8
    onnx.save(m, str(path))


def cancellation_cnn(path, eps=1e-5, w2_bump=0.0):
    """Conv (bias 1e4) -> BatchNormalization (mean ~1e4, small variance) -> Relu -> Conv: the
    BatchNormalization cancels two values near 1e4, so how it is computed (folded into the Conv,
    or x * k + b' instead of (x - mean) * k) shows in float32."""
    rng = np.random.default_rng(0)
    c = 8
    w2 = rng.standard_normal((4, c, 3, 3)).astype(np.float32)
    w2[1, 2, 1, 1] += w2_bump
    inits = [numpy_helper.from_array((rng.standard_normal((c, 3, 3, 3)) * 0.01).astype(np.float32), "w"),
             numpy_helper.from_array(np.full(c, 1e4, np.float32), "cb"),
             numpy_helper.from_array(rng.uniform(0.5, 2, c).astype(np.float32), "scale"),
             numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "bias"),
             numpy_helper.from_array((1e4 + rng.standard_normal(c) * 0.1).astype(np.float32), "mean"),
             numpy_helper.from_array((rng.uniform(0.5, 2, c) * 1e-2).astype(np.float32), "var"),
             numpy_helper.from_array(w2, "w2")]
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"], name="bn",
                              epsilon=eps),
             helper.make_node("Relu", ["b"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1])]
    _save(nodes, inits, path, [1, 3, 16, 16], [1, 4, 16, 16])




def noise_model(path):
    """x + 1 -> NoiseOp (tests/custom_op/crash_op.cc: fresh random noise of up to 1e-3 each run)
    -> Relu."""
    one = numpy_helper.from_array(np.array([1.0], np.float32), "one")
    nodes = [helper.make_node("Add", ["x", "one"], ["a"], name="add"),
             helper.make_node("NoiseOp", ["a"], ["j"], name="noise", domain="onnxprobe.test"),
             helper.make_node("Relu", ["j"], ["y"], name="relu")]
    _save(nodes, [one], path, [1, 64], [1, 64], [helper.make_opsetid("onnxprobe.test", 1)])


def _float16_chain(path, half, keep, stages):
    """x [1, 64] -> stages (name, op, constant, output) -> y; half: computed in float16 (Casts at the graph's
    input and output and around kept nodes) except the nodes in keep, which compute in float32."""
    nodes, inits = [], [numpy_helper.from_array(np.array([1], np.int64), "axes")]
    cur, cur_half = "x", False
    def to(want_half, name):
        nonlocal cur, cur_half
        if want_half != cur_half:
            nodes.append(helper.make_node("Cast", [cur], [cur + ("_h" if want_half else "_f")], name="cast_" + name,
                                          to=TensorProto.FLOAT16 if want_half else TensorProto.FLOAT))
            cur, cur_half = cur + ("_h" if want_half else "_f"), want_half
    for name, op, k, out in stages:
        h = half and name not in keep
        to(h, name)
        if op == "Mul":
            inits.append(numpy_helper.from_array(np.array(k, np.float16 if h else np.float32), "k_" + name))
            nodes.append(helper.make_node("Mul", [cur, "k_" + name], [out], name=name))
        else:
            nodes.append(helper.make_node("ReduceSum", [cur, "axes"], [out], name=name, keepdims=1))
        cur = out
    to(False, "out")
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    out_shape = [1, 1] if any(op == "ReduceSum" for _, op, _, _ in stages) else [1, 64]
    g = helper.make_graph(nodes, "ov", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]); m.ir_version = 8
    onnx.save(m, str(path))


def float16_sum_model(path, half, keep=()):
    """x in [0, 1) -> Mul(3000) -> ReduceSum -> Mul(1e-3) -> y: the sum passes float16's 65504."""
    _float16_chain(path, half, keep, (("mul_big", "Mul", 3000.0, "big"), ("reduce_sum", "ReduceSum", None, "sum"),
                                      ("scale", "Mul", 1e-3, "y0")))


def float16_tiny_model(path, half, keep=()):
    """x in [0, 1) -> Mul(1e-6) -> ReduceSum -> Mul(1e4) -> y: the scaled-down values and their sum lie in
    float16's subnormal range (below 6.1e-5, steps of 6e-8), where they keep only a few significant bits."""
    _float16_chain(path, half, keep, (("shrink", "Mul", 1e-6, "tiny"), ("reduce_sum", "ReduceSum", None, "sum"),
                                      ("grow", "Mul", 1e4, "y0")))


def with_flags(args, flags):
    """`args` with a fix's compare flags set: a flag given before is replaced."""
    args = [str(a) for a in args]
    i = 0
    while i < len(flags):
        name = flags[i]
        value = flags[i + 1] if i + 1 < len(flags) and not flags[i + 1].startswith("--") else None
        if name in args:
            k = args.index(name)
            del args[k:k + (2 if value is not None else 1)]
        args += [name] + ([value] if value is not None else [])
        i += 2 if value is not None else 1
    return args
