#!/usr/bin/python3
"""Writes a ~1 GB GPT-2-medium-shaped MLP stack with random weights for the identity benchmark.

usage: /usr/bin/python3 bench/make_identity_model.py OUT.onnx [LAYERS]

Each layer: x*gamma + beta (1024 floats each: kept in the parsed graph), then
MatMul 1024x4096 + bias, Relu, MatMul 4096x1024 + bias (set aside by the streaming scan).
32 layers hold 134 M parameters in 192 initializers (~1.07 GB). Never committed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, F = 1024, 4096


def build(layers):
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "X"

    def weight(name, shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape, dtype=np.float32) * 0.02, name))
        return name

    for i in range(layers):
        p = f"h{i}"
        steps = [("Mul", weight(f"{p}.ln.gamma", [D])), ("Add", weight(f"{p}.ln.beta", [D])),
                 ("MatMul", weight(f"{p}.fc.weight", [D, F])), ("Add", weight(f"{p}.fc.bias", [F])),
                 ("Relu", None),
                 ("MatMul", weight(f"{p}.proj.weight", [F, D])), ("Add", weight(f"{p}.proj.bias", [D]))]
        for k, (op, w) in enumerate(steps):
            out = f"{p}.{k}.{op.lower()}"
            nodes.append(helper.make_node(op, [x] + ([w] if w else []), [out], name=f"{p}/{op}_{k}"))
            x = out
    nodes.append(helper.make_node("Identity", [x], ["Y"], name="out"))
    g = helper.make_graph(nodes, "identity_bench",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", D])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxprobe-bench")
    m.ir_version = 8
    return m


if __name__ == "__main__":
    out = sys.argv[1]
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        tmp = out + ".tmp"
        with open(tmp, "wb") as f:
            f.write(build(int(sys.argv[2]) if len(sys.argv) > 2 else 32).SerializeToString())
        os.replace(tmp, out)
    print(out)
