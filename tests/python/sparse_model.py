"""A model whose external data file is over 2 GB but occupies a few MB of disk (a sparse file).

The embedding table E [ROWS, DIM] float32 is the big initializer: its bytes are holes (zeros)
except for REAL_ROWS rows spread over the whole table, the last one past the 2 GB mark. Small real
weights follow E in the same file, so their offsets are over 2 GB too. The graph:
    e = Gather(E, ids); h = Relu(MatMul(e, W1) + b1); y = MatMul(h, W2)
Inputs whose ids name the real rows give non-trivial outputs; `reference` computes them with numpy.

Used by tests/python/test_large_external.py and bench/external_bench.py.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

DIM = 256
ROWS = (2 << 30) // (DIM * 4) + 65536  # 2 GiB + 64 MiB of float32 rows
HIDDEN, OUT = 256, 64
REAL_ROWS = 64
SEQ = 16
DATA_FILE = "model.onnx.data"


def real_rows():
    return np.linspace(0, ROWS - 1, REAL_ROWS).astype(np.int64)


def weights(seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((REAL_ROWS, DIM)).astype(np.float32)
    w1 = (rng.standard_normal((DIM, HIDDEN)) / np.sqrt(DIM)).astype(np.float32)
    b1 = rng.standard_normal(HIDDEN).astype(np.float32) * np.float32(0.1)
    w2 = (rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN)).astype(np.float32)
    return rows, w1, b1, w2


def _external(name, dims, offset, length):
    t = TensorProto()
    t.name, t.data_type = name, TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", DATA_FILE), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def make(folder, seed=0):
    """Writes folder/model.onnx and its sparse folder/model.onnx.data; returns the .onnx path."""
    rows, w1, b1, w2 = weights(seed)
    table_bytes = ROWS * DIM * 4
    inits, offset = [], 0
    with open(os.path.join(folder, DATA_FILE), "wb") as f:
        f.truncate(table_bytes)  # all holes
        for r, values in zip(real_rows(), rows):
            f.seek(int(r) * DIM * 4)
            f.write(values.tobytes())
        inits.append(_external("E", [ROWS, DIM], 0, table_bytes))
        offset = table_bytes
        for name, a in (("W1", w1), ("b1", b1), ("W2", w2)):
            offset = (offset + 4095) // 4096 * 4096
            f.seek(offset)
            f.write(a.tobytes())
            inits.append(_external(name, list(a.shape), offset, a.nbytes))
            offset += a.nbytes
    return _write(folder, "model.onnx", "sparse_external", inits)


def _write(folder, file_name, graph_name, inits):
    """The graph (embedding, MatMul + bias, Relu, MatMul) over `inits`, saved as folder/file_name."""
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["emb"], name="embed"),
        helper.make_node("MatMul", ["emb", "W1"], ["mm1"], name="mm1"),
        helper.make_node("Add", ["mm1", "b1"], ["pre"], name="bias1"),
        helper.make_node("Relu", ["pre"], ["act"], name="relu1"),
        helper.make_node("MatMul", ["act", "W2"], ["y"], name="mm2"),
    ]
    g = helper.make_graph(nodes, graph_name,
                          [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, SEQ])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SEQ, OUT])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(folder, file_name)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def inputs(seed=1):
    """ids drawn from the real rows (the first and last always among them)."""
    rng = np.random.default_rng(seed)
    rows = real_rows()
    ids = rng.choice(rows, SEQ)
    ids[0], ids[-1] = rows[0], rows[-1]
    return {"ids": ids.reshape(1, SEQ)}


def reference(ids, seed=0):
    """Every tensor of the graph, computed with numpy from the weights make() wrote."""
    rows, w1, b1, w2 = weights(seed)
    lookup = {int(r): i for i, r in enumerate(real_rows())}
    emb = np.stack([rows[lookup[int(i)]] if int(i) in lookup else np.zeros(DIM, np.float32)
                    for i in ids.reshape(-1)]).reshape(1, SEQ, DIM)
    mm1 = emb @ w1
    pre = mm1 + b1
    act = np.maximum(pre, 0)
    return {"emb": emb, "mm1": mm1, "pre": pre, "act": act, "y": act @ w2}


def make_embedded(folder, rows=200_000, seed=0):
    """folder/embedded.onnx: the same graph with a smaller table (rows x DIM float32, ~195 MiB
    for the default) embedded as raw_data, REAL_ROWS random rows spread over it, zeros elsewhere;
    returns (path, the table's real rows as {row: values})."""
    _, w1, b1, w2 = weights(seed)
    rng = np.random.default_rng(seed + 7)
    table = np.zeros((rows, DIM), np.float32)
    picked = np.linspace(0, rows - 1, REAL_ROWS).astype(np.int64)
    table[picked] = rng.standard_normal((REAL_ROWS, DIM)).astype(np.float32)
    from onnx import numpy_helper
    inits = [numpy_helper.from_array(a, n) for n, a in (("E", table), ("W1", w1), ("b1", b1), ("W2", w2))]
    del table
    path = _write(folder, "embedded.onnx", "embedded", inits)
    return path, picked
