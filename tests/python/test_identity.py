"""Model identity from `inspect --json` (one streaming pass) against hashlib, with the tensors'
bytes taken from the onnx package's own parse of the same file."""
import hashlib
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import run


def sha(b):
    return hashlib.sha256(b).hexdigest()


def mixed_storage_model(folder):
    """Initializers stored every way ONNX allows, some larger than a 4 MiB read chunk and of odd
    sizes so chunk edges fall inside fields; two in one external file at offsets."""
    rng = np.random.default_rng(7)
    inits = []
    for i, n in enumerate([1_500_001, 3, 1023, 1025, 777_777, 12_345, 2_000_003, 1]):
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"raw{i}"))
    inits.append(numpy_helper.from_array(rng.standard_normal(5000).astype(np.float16), "half"))
    inits.append(helper.make_tensor("typed_f", TensorProto.FLOAT, [4], [1.5, -2.0, 0.0, 3.25]))
    inits.append(helper.make_tensor("typed_i64", TensorProto.INT64, [3], [-1, 2**40, 7]))
    ext = [rng.standard_normal(3000).astype(np.float32), rng.standard_normal(10).astype(np.float32)]
    with open(folder / "weights.bin", "wb") as f:
        f.write(b"\0" * 100)
        offsets = []
        for a in ext:
            offsets.append(f.tell())
            f.write(a.tobytes())
    for k, (a, off) in enumerate(zip(ext, offsets)):
        t = TensorProto(name=f"ext{k}", data_type=TensorProto.FLOAT, dims=[a.size],
                        data_location=TensorProto.EXTERNAL)
        for key, v in (("location", "weights.bin"), ("offset", str(off)), ("length", str(a.nbytes))):
            e = t.external_data.add()
            e.key, e.value = key, v
        inits.append(t)
    nodes = [helper.make_node("Identity", [t.name], [f"out_{t.name}"], name=f"id_{t.name}") for t in inits]
    outs = [helper.make_tensor_value_info(f"out_{t.name}", t.data_type, None) for t in inits]
    g = helper.make_graph(nodes, "mixed", [], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def expected_hashes(path):
    """(name, sha256 of the little-endian data) for every initializer, as the onnx package reads it."""
    m = onnx.load(str(path))  # loads external data too
    return [(t.name, sha(numpy_helper.to_array(t).tobytes())) for t in m.graph.initializer]


def inspect_json(onnxprobe, path):
    r = run([onnxprobe, "inspect", path, "--json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_identity_of_every_storage_kind(onnxprobe, tmp_path):
    path = tmp_path / "mixed.onnx"
    path.write_bytes(mixed_storage_model(tmp_path).SerializeToString())
    j = inspect_json(onnxprobe, path)
    data = path.read_bytes()
    assert (j["file_size"], j["md5"], j["sha256"]) == (len(data), hashlib.md5(data).hexdigest(), sha(data))
    assert [(i["name"], i["sha256"]) for i in j["initializers"]] == expected_hashes(path)
    assert [i["external"] for i in j["initializers"]].count(True) == 2


def test_identity_of_a_model_whose_graph_is_given_twice(onnxprobe, tmp_path):
    # protobuf merges repeated message fields: a tail ModelProto{graph{...}} appended to the file
    # adds its initializers after the first graph's (onnxprobe's own output marking relies on it)
    path = tmp_path / "twice.onnx"
    first = mixed_storage_model(tmp_path)
    late = numpy_helper.from_array(np.arange(3000, dtype=np.float32), "late")
    tail = onnx.ModelProto(graph=helper.make_graph(
        [helper.make_node("Identity", ["late"], ["out_late"], name="id_late")], "mixed", [],
        [helper.make_tensor_value_info("out_late", TensorProto.FLOAT, None)], [late]))
    path.write_bytes(first.SerializeToString() + tail.SerializeToString())
    j = inspect_json(onnxprobe, path)
    assert j["sha256"] == sha(path.read_bytes())
    got = [(i["name"], i["sha256"]) for i in j["initializers"]]
    assert got == expected_hashes(path)
    assert got[-1] == ("late", sha(np.arange(3000, dtype=np.float32).tobytes()))
