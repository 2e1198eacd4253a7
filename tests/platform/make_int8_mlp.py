"""A 4-layer MLP (256 wide) with positive weights, quantized by onnxruntime.quantization's
quantize_dynamic (uint8 activations, int8 weights), and a positive input: large uint8 x int8
products side by side, which x86 CPUs without VNNI sum with saturation (vpmaddubsw) in ONNX
Runtime's AVX2 int8 kernels (tests/python/test_platform.py).
usage: python make_int8_mlp.py OUT_DIR   (writes mlp.onnx, mlp_int8.onnx, x.npy; seeded)"""
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
from onnxruntime.quantization import quantize_dynamic, QuantType
rng = np.random.default_rng(0)
d = 256
nodes, inits = [], []
x = "x"
for i in range(4):
    w = (rng.uniform(0.5, 1.0, (d, d)) * (1 if i == 3 else 0.01)).astype(np.float32)
    b = (rng.standard_normal(d) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
              helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}")]
    x = f"a{i}"
    if i < 3:
        nodes.append(helper.make_node("Relu", [x], [f"r{i}"], name=f"relu{i}"))
        x = f"r{i}"
g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, d])],
                      [helper.make_tensor_value_info(x, TensorProto.FLOAT, [8, d])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]); m.ir_version = 8
onnx.save(m, sys.argv[1] + "/mlp.onnx")
quantize_dynamic(sys.argv[1] + "/mlp.onnx", sys.argv[1] + "/mlp_int8.onnx", weight_type=QuantType.QInt8)
np.save(sys.argv[1] + "/x.npy", rng.uniform(0, 1, (8, d)).astype(np.float32))
