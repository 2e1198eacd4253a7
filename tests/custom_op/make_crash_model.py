#!/usr/bin/python3
"""Writes crash_model.onnx: ordinary nodes around the test-only CrashOp (crash_op.cc).

    x[1,8] -> add(+1) -> mul(*2) -> crash (CrashOp) -> relu -> sub(-1) -> y
           \\-> neg -> z

The CrashOp segfaults when its first input element is 13, i.e. when x[0] == 5.5, and from its
second run in a process on when it is 16 (x[0] == 7).

usage: /usr/bin/python3 tests/custom_op/make_crash_model.py [OUT.onnx]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    one = numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one")
    two = numpy_helper.from_array(np.array([2.0], dtype=np.float32), "two")
    nodes = [
        helper.make_node("Add", ["x", "one"], ["a"], name="add"),
        helper.make_node("Mul", ["a", "two"], ["b"], name="mul"),
        helper.make_node("Neg", ["x"], ["z"], name="neg"),
        helper.make_node("CrashOp", ["b"], ["c"], name="crash", domain="onnxprobe.test"),
        helper.make_node("Relu", ["c"], ["d"], name="relu"),
        helper.make_node("Sub", ["d", "one"], ["y"], name="sub"),
    ]
    graph = helper.make_graph(
        nodes, "crash_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 8])],
        initializer=[one, two])
    model = helper.make_model(graph, producer_name="onnxprobe-tests", opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("onnxprobe.test", 1)])
    model.ir_version = 8
    return model


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "crash_model.onnx")
    onnx.save(build(), out)
    print(out)
