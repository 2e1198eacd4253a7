"""Tiny ONNX models built with onnx.helper for the CLI tests, with numpy references."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

W = np.linspace(-1, 1, 3, dtype=np.float32)
B = np.linspace(0.5, -0.5, 12, dtype=np.float32).reshape(3, 4)


def chain_model(path, shuffle=False, symbolic=True, opset=13):
    """Y = Sigmoid(Relu(X + W) @ B); X: float32[batch, 3] (batch symbolic unless told)."""
    nodes = [
        helper.make_node("Add", ["X", "W"], ["added"], name="add"),
        helper.make_node("Relu", ["added"], ["relu_out"], name="relu"),
        helper.make_node("MatMul", ["relu_out", "B"], ["mm"], name="matmul"),
        helper.make_node("Sigmoid", ["mm"], ["Y"], name="sigmoid"),
    ]
    if shuffle:
        nodes = [nodes[2], nodes[0], nodes[3], nodes[1]]
    batch = "batch" if symbolic else 2
    g = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, 4])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxprobe-tests")
    m.ir_version = 8
    onnx.save(m, str(path))
    return m


def chain_reference(x):
    added = x + W
    relu = np.maximum(added, 0)
    mm = relu @ B
    return {"added": added, "relu_out": relu, "mm": mm, "Y": 1 / (1 + np.exp(-mm))}


def external_data_model(folder, location="weights.bin", write_data=True):
    """Y = X @ Wbig with Wbig stored outside the model file at `location`."""
    wbig = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    t = numpy_helper.from_array(wbig, "Wbig")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(wbig.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("MatMul", ["X", "Wbig"], ["mm"], name="mm"),
         helper.make_node("Relu", ["mm"], ["Y"], name="relu")], "ext",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])], [t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = folder / "model.onnx"
    path.write_bytes(m.SerializeToString())
    if write_data:
        (folder / location).write_bytes(wbig.tobytes())
    return path, wbig


def custom_op_model(path):
    g = helper.make_graph(
        [helper.make_node("NoSuchOp", ["X"], ["Y"], name="mystery", domain="com.example")], "custom",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    m.ir_version = 8
    onnx.save(m, str(path))


def if_model(path):
    """An If whose branches hold tensors that cannot be captured."""
    then_g = helper.make_graph([helper.make_node("Neg", ["X"], ["then_inner"], name="neg"),
                                helper.make_node("Abs", ["then_inner"], ["then_out"], name="abs")], "then", [],
                               [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["X"], ["else_out"], name="id")], "else", [],
                               [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["X"], ["s"], name="sum", keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
         helper.make_node("If", ["cond"], ["Y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "ifg", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))
