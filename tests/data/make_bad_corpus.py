#!/usr/bin/python3
"""Writes the hand-made bad-input corpus under tests/data/bad/ and its case table cases.json.

Each case: the file, the command to run on it ({file} is the case file, {chain} a valid model
whose input X is float32[2, 3]), the exit code expected, and words the one-line error must hold.
Run with Debian's interpreter: /usr/bin/python3 tests/data/make_bad_corpus.py
"""
import io
import json
import os
import shutil
import struct
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bad")
CASES = []


def case(name, data, cmd, code, needles):
    path = os.path.join(OUT, name)
    if isinstance(data, dict):  # a folder
        os.makedirs(path, exist_ok=True)
        for k, v in data.items():
            with open(os.path.join(path, k), "wb") as f:
                f.write(v)
    else:
        with open(path, "wb") as f:
            f.write(data)
    CASES.append({"file": name, "cmd": cmd, "code": code, "needles": needles})


def model_bytes(nodes, inputs, outputs, inits=(), opset=13, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, 1) for d in domains])
    m.ir_version = 8
    return m.SerializeToString()


def vi(name, t=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, t, list(shape))


def npy_raw(header_dict, payload=b"", version=1):
    h = header_dict.encode()
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H", len(h)) + h + payload


def npy(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def external(location, offset="0", length="24"):
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 3], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        e = t.external_data.add()
        e.key, e.value = k, v
    return model_bytes([helper.make_node("Add", ["X", "W"], ["Y"])], [vi("X")], [vi("Y")], [t])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    demo = open(os.path.join(HERE, "demo", "demo_cnn.onnx"), "rb").read()
    inspect = ["inspect", "{file}"]
    run_model = ["run", "{file}", "--dim", "batch=1", "-o", "{out}"]
    run_input = ["run", "{chain}", "--input", "{file}", "-o", "{out}"]
    run_fixed = ["run", "{file}", "-o", "{out}"]  # no symbolic dimension: --dim would be an error

    # models
    case("empty.onnx", b"", inspect, 2, ["empty"])
    case("truncated.onnx", demo[: len(demo) // 2], inspect, 2, ["truncated or corrupt"])
    case("truncated_tail.onnx", demo[:-7], run_model, 2, ["truncated or corrupt"])
    case("text.onnx", b"this is a text file, not a model\n" * 4, inspect, 2, ["not"])
    case("zeros.onnx", b"\0" * 1024, inspect, 2, ["not"])
    rng = np.random.default_rng(1)
    case("random_bytes.onnx", rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(), inspect, 2, ["random_bytes.onnx"])
    flipped = bytearray(demo)
    for i in range(0, len(flipped), 97):
        flipped[i] ^= 0xFF
    case("bitflipped.onnx", bytes(flipped), run_model, 2, ["bitflipped.onnx"])
    case("no_graph.onnx", onnx.ModelProto(ir_version=8).SerializeToString(), inspect, 2, ["no graph"])
    case("cycle.onnx", model_bytes([helper.make_node("Relu", ["b"], ["a"], name="r1"),
                                    helper.make_node("Relu", ["a"], ["b"], name="r2")], [vi("X")], [vi("a")]),
         inspect, 2, ["cycle"])
    case("dangling_input.onnx", model_bytes([helper.make_node("Relu", ["ghost"], ["Y"], name="r")], [vi("X")], [vi("Y")]),
         inspect, 2, ["ghost"])
    case("produced_twice.onnx", model_bytes([helper.make_node("Relu", ["X"], ["Y"], name="a"),
                                             helper.make_node("Neg", ["X"], ["Y"], name="b")], [vi("X")], [vi("Y")]),
         inspect, 2, ["more than once"])
    case("ext_dotdot.onnx", external("../weights.bin"), inspect, 2, ["escapes the model folder"])
    case("ext_absolute.onnx", external("/etc/passwd"), inspect, 2, ["absolute path"])
    case("ext_missing.onnx", external("no_such_weights.bin"), inspect, 2, ["missing"])
    case("ext_range.bin", b"\0" * 16, inspect, 0, [])  # side file for ext_range.onnx (too short)
    CASES.pop()
    case("ext_range.onnx", external("ext_range.bin", "8", "24"), inspect, 2, ["runs past the end"])
    case("ext_bad_offset.onnx", external("ext_range.bin", "lots"), inspect, 2, ["not a number"])
    case("unsupported_op.onnx", model_bytes([helper.make_node("Frobnicate", ["X"], ["Y"], domain="com.bad")],
                                            [vi("X")], [vi("Y")], domains=["com.bad"]), run_fixed, 3, ["Frobnicate"])
    case("opset_from_the_future.onnx", model_bytes([helper.make_node("Relu", ["X"], ["Y"])], [vi("X")], [vi("Y")],
                                                   opset=999), run_fixed, 3, ["999"])
    case("string_input.onnx", model_bytes([helper.make_node("Identity", ["X"], ["Y"])],
                                          [vi("X", TensorProto.STRING)], [vi("Y", TensorProto.STRING)]),
         run_fixed, 2, ["input 'X'", "STRING"])

    # .npy inputs
    case("bad_magic.npy", b"\x93NUMPZ\x01\x00" + b"\0" * 80, run_input, 2, ["magic"])
    case("header_past_end.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }")[:40],
         run_input, 2, ["past the end"])
    case("truncated_data.npy", npy(np.zeros((2, 3), np.float32))[:-5], run_input, 2, ["expected 24"])
    case("unknown_dtype.npy", npy_raw("{'descr': '<x4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24),
         run_input, 2, ["<x4"])
    case("object_dtype.npy", npy_raw("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }"), run_input, 2,
         ["|O"])
    case("negative_dim.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }"), run_input, 2,
         ["negative"])
    case("claims_1e12_elements.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }"),
         run_input, 2, ["expected 4000000000000"])
    case("dims_overflow_int64.npy",
         npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"),
         run_input, 2, ["overflows"])
    case("version9.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24, version=9),
         run_input, 2, ["version 9"])
    case("fortran_maybe.npy", npy_raw("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", b"\0" * 24),
         run_input, 2, ["fortran_order"])
    case("X_wrong_shape.npy", npy(np.zeros((2, 5), np.float32)), ["run", "{chain}", "--input", "X={file}", "-o", "{out}"],
         2, ["input 'X'", "[2, 5]"])
    case("X_wrong_dtype.npy", npy(np.zeros((2, 3), np.float64)), ["run", "{chain}", "--input", "X={file}", "-o", "{out}"],
         2, ["input 'X'", "float64"])
    case("empty.npy", b"", run_input, 2, ["not a .npy"])

    # .npz inputs
    buf = io.BytesIO()
    np.savez(buf, X=np.zeros((2, 3), np.float32))
    good = buf.getvalue()
    case("truncated.npz", good[: len(good) - 30], run_input, 2, ["truncated.npz"])
    cd = good.rfind(b"PK\x01\x02")
    lie = bytearray(good)
    lie[cd + 20:cd + 28] = struct.pack("<II", 0x7FFFFFFF, 0x7FFFFFFF)
    case("lying_sizes.npz", bytes(lie), run_input, 2, ["X.npy"])
    crc = bytearray(good)
    crc[cd + 16] ^= 0x55
    case("bad_crc.npz", bytes(crc), run_input, 2, ["CRC"])
    meth = bytearray(good)
    meth[cd + 10:cd + 12] = struct.pack("<H", 99)
    case("method99.npz", bytes(meth), run_input, 2, ["method 99"])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("X.npy", npy(np.zeros((2, 3), np.float32)))
    deflated = bytearray(buf.getvalue())
    cd = deflated.rfind(b"PK\x01\x02")
    deflated[cd + 24:cd + 28] = struct.pack("<I", 0x7FFFFFFF)
    case("deflate_bomb_claim.npz", bytes(deflated), run_input, 2, ["impossible"])
    case("empty.npz", b"", run_input, 2, ["too short"])
    case("not_a_zip.npz", b"PK but not really a zip archive" * 10, run_input, 2, ["central directory"])

    # TensorProto inputs
    t = numpy_helper.from_array(np.zeros((2, 3), np.float32), "X")
    t.raw_data = t.raw_data[:-4]
    case("raw_wrong_length.pb", t.SerializeToString(), run_input, 2, ["raw data is 20 bytes"])
    t = TensorProto(name="X", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0] * 5)
    case("typed_count_wrong.pb", t.SerializeToString(), run_input, 2, ["5 values"])
    t = helper.make_tensor("X", TensorProto.STRING, [1], [b"hi"])
    case("string_tensor.pb", t.SerializeToString(), run_input, 2, ["STRING"])
    case("garbage.pb", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", run_input, 2, ["TensorProto"])

    # dumps given as --input
    manifest = {"format": "onnxprobe-dump", "format_version": 1, "tensors": [
        {"name": "X", "kind": "input", "dtype": "float32", "shape": [2, 3], "file": "inputs/00000_X.npy"}]}
    x = npy(np.zeros((2, 3), np.float32))
    case("dump_no_manifest", {"README": b"a folder without manifest.json\n"}, run_input, 2, ["no manifest.json"])
    case("dump_bad_json", {"manifest.json": b'{"format": "onnxprobe-dump", "tensors": [}'}, run_input, 2, ["invalid JSON"])
    case("dump_wrong_format", {"manifest.json": json.dumps(dict(manifest, format="other")).encode()}, run_input, 2,
         ["other"])
    esc = dict(manifest, tensors=[dict(manifest["tensors"][0], file="../../../etc/passwd")])
    case("dump_escaping_file", {"manifest.json": json.dumps(esc).encode()}, run_input, 2, ["leaves the dump folder"])
    case("dump_missing_file", {"manifest.json": json.dumps(manifest).encode()}, run_input, 2, ["no such file"])
    mism = dict(manifest, tensors=[dict(manifest["tensors"][0], file="x.npy", shape=[3, 2])])
    case("dump_shape_mismatch", {"manifest.json": json.dumps(mism).encode(), "x.npy": x}, run_input, 2,
         ["manifest says"])
    deep = b"[" * 10000 + b"]" * 10000
    case("dump_deep_json", {"manifest.json": deep}, run_input, 2, ["deeper than 64"])
    neg = dict(manifest, tensors=[dict(manifest["tensors"][0], shape=[-1, 3])])
    case("dump_negative_shape", {"manifest.json": json.dumps(neg).encode()}, run_input, 2, ["not a dimension"])

    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
