"""Crafted models for the lint and diff tests: one finding each (onnx.helper)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
F16 = TensorProto.FLOAT16


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def save(path, nodes, inputs, outputs, inits=(), opset=13, ir=8, extra_opsets=(), **kw):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=opsets, producer_name="onnxprobe-tests", **kw)
    m.ir_version = ir
    onnx.save(m, str(path))
    return path


def dropout_training(path):
    """OP001: Dropout(ratio 0.1, training_mode = constant true)."""
    return save(path, [
        helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")],
        [vi("x", ["batch", 4])], [vi("y", ["batch", 4])],
        [const("ratio", 0.1), const("train", True, np.bool_)])


def dropout_runtime_mode(path):
    """OP001 (warning): training_mode is a graph input."""
    return save(path, [
        helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")],
        [vi("x", ["batch", 4]), vi("train", [], TensorProto.BOOL)], [vi("y", ["batch", 4])],
        [const("ratio", 0.1)])


def batchnorm_training(path):
    """OP002: BatchNormalization training_mode=1 with running statistics outputs (opset 14)."""
    c = 3
    inits = [const("s", np.ones(c)), const("b", np.zeros(c)), const("m", np.zeros(c)),
             const("v", np.ones(c))]
    return save(path, [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                         name="bn", training_mode=1)],
        [vi("x", ["batch", c, 4, 4])], [vi("y", ["batch", c, 4, 4])], inits, opset=14)


def reshape_baked(path):
    """OP003: x.view(1, -1) traced with batch 1 while the batch is dynamic."""
    return save(path, [
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten")],
        [vi("x", ["batch", 3, 4])], [vi("y", [1, "n"])], [const("shape", [1, -1], np.int64)])


def reshape_dynamic(path):
    """Clean: Reshape with 0 (copy the batch) and -1."""
    return save(path, [
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten")],
        [vi("x", ["batch", 3, 4])], [vi("y", ["batch", 12])], [const("shape", [0, -1], np.int64)])


def expand_baked(path):
    """OP003: a class token expanded to a constant batch of 2, concatenated with a dynamic x."""
    return save(path, [
        helper.make_node("Expand", ["cls", "shape"], ["cls_b"], name="expand_cls"),
        helper.make_node("Concat", ["cls_b", "x"], ["y"], name="concat", axis=1)],
        [vi("x", ["batch", 3, 4])], [vi("y", ["batch", 4, 4])],
        [const("cls", np.ones((1, 1, 4))), const("shape", [2, 1, 4], np.int64)])


def resize(path, mode, ctm, nearest_mode="round_prefer_floor", scales=(1, 1, 3, 3), name="resize"):
    attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
    if mode == "nearest":
        attrs["nearest_mode"] = nearest_mode
    return save(path, [
        helper.make_node("Resize", ["x", "", "scales"], ["y"], name=name, **attrs)],
        [vi("x", [1, 1, 4, 4])], [vi("y", None)], [const("scales", list(scales))])


def resize_half_pixel_to_one(path):
    """OP004 (info): linear + half_pixel resized to one pixel (sizes input)."""
    return save(path, [
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="linear",
                         coordinate_transformation_mode="half_pixel")],
        [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 1, 1])], [const("sizes", [1, 1, 1, 1], np.int64)])


def fp16_mask(path):
    """OP005: Where(mask, x, -1e9)."""
    return save(path, [
        helper.make_node("Where", ["mask", "x", "neg"], ["y"], name="masked")],
        [vi("x", ["batch", 4]), vi("mask", ["batch", 4], TensorProto.BOOL)], [vi("y", ["batch", 4])],
        [const("neg", -1e9)])


def fp16_tiny_eps(path):
    """OP005: an epsilon of 1e-12 added before Sqrt (0 in float16)."""
    return save(path, [
        helper.make_node("Add", ["x", "eps"], ["xe"], name="add_eps"),
        helper.make_node("Sqrt", ["xe"], ["y"], name="sqrt")],
        [vi("x", ["batch", 4])], [vi("y", ["batch", 4])], [const("eps", 1e-12)])


def duplicate_initializers(path):
    """OP006: two 16x16 float32 weights with the same bytes."""
    w = np.arange(256, dtype=np.float32).reshape(16, 16) / 256
    return save(path, [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="mm2")],
        [vi("x", ["batch", 16])], [vi("y", ["batch", 16])], [const("w1", w), const("w2", w.copy())])


def unused_initializer(path):
    """OP007: 'stale' is read by no node."""
    return save(path, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vi("x", ["batch", 4])], [vi("y", ["batch", 4])], [const("stale", np.ones(8))])


def unused_input(path):
    """OP008: graph input 'mask' is read by no node."""
    return save(path, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vi("x", ["batch", 4]), vi("mask", ["batch", 4])], [vi("y", ["batch", 4])])


def dead_node(path):
    """OP009: 'side' computes a tensor nothing reads and no output names."""
    return save(path, [
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["unused"], name="side")],
        [vi("x", ["batch", 4])], [vi("y", ["batch", 4])])


def opset(path, version, ir):
    return save(path, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vi("x", [2, 4])], [vi("y", [2, 4])], opset=version, ir=ir)


def custom_domain(path):
    """OP011: com.example.MyOp (warning) and com.microsoft.FastGelu (info)."""
    return save(path, [
        helper.make_node("MyOp", ["x"], ["h"], name="mine", domain="com.example"),
        helper.make_node("FastGelu", ["h"], ["y"], name="gelu", domain="com.microsoft")],
        [vi("x", ["batch", 4])], [vi("y", ["batch", 4])],
        extra_opsets=[("com.example", 1), ("com.microsoft", 1)])


def node_names(path):
    """OP012: one unnamed node, and two nodes named 'act'."""
    return save(path, [
        helper.make_node("Relu", ["x"], ["a"], name="act"),
        helper.make_node("Sigmoid", ["a"], ["b"], name="act"),
        helper.make_node("Neg", ["b"], ["y"])],
        [vi("x", ["batch", 4])], [vi("y", ["batch", 4])])


def scatter_nd_duplicates(path):
    """OP013: constant ScatterND indices [[1], [3], [1]] write row 1 twice."""
    return save(path, [
        helper.make_node("ScatterND", ["x", "idx", "upd"], ["y"], name="scatter")],
        [vi("x", [4, 2]), vi("upd", [3, 2])], [vi("y", [4, 2])],
        [const("idx", [[1], [3], [1]], np.int64)])


def scatter_elements_duplicates(path):
    """OP013: ScatterElements axis 1, indices [[0, 2], [1, 1]]: row 1 writes column 1 twice."""
    return save(path, [
        helper.make_node("ScatterElements", ["x", "idx", "upd"], ["y"], name="scatter", axis=1)],
        [vi("x", [2, 3]), vi("upd", [2, 2])], [vi("y", [2, 3])],
        [const("idx", [[0, 2], [1, 1]], np.int64)])


def scatter_elements_unique(path):
    """Clean: [[0, 2], [1, 0]] hit four different elements."""
    return save(path, [
        helper.make_node("ScatterElements", ["x", "idx", "upd"], ["y"], name="scatter", axis=1)],
        [vi("x", [2, 3]), vi("upd", [2, 2])], [vi("y", [2, 3])],
        [const("idx", [[0, 2], [1, 0]], np.int64)])


def scatter_runtime_indices(path):
    """OP013 (info): indices are a graph input."""
    return save(path, [
        helper.make_node("ScatterND", ["x", "idx", "upd"], ["y"], name="scatter")],
        [vi("x", [4, 2]), vi("idx", [3, 1], TensorProto.INT64), vi("upd", [3, 2])], [vi("y", [4, 2])])


def layernorm(path, elem=F16):
    """OP014 when `elem` is float16: ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div."""
    dt = np.float16 if elem == F16 else np.float32
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mu"], name="ln/mean", axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["d"], name="ln/sub"),
        helper.make_node("Pow", ["d", "two"], ["sq"], name="ln/pow"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="ln/var", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="ln/add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="ln/sqrt"),
        helper.make_node("Div", ["d", "sd"], ["y"], name="ln/div"),
    ]
    return save(path, nodes, [vi("x", ["batch", 8], elem)], [vi("y", ["batch", 8], elem)],
                [const("two", 2.0, dt), const("eps", 1e-5, dt)])
