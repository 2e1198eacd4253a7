#!/usr/bin/python3
"""Writes seed inputs for the fuzz targets: numpy-written .npy/.npz, manifests, option strings."""
import io
import json
import os
import sys

import numpy as np


def put(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def main(corpus):
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array(3, dtype=np.int64),
              np.zeros((0, 4), np.float16), np.asfortranarray(np.ones((3, 2), np.int16)),
              np.array([True, False]), np.arange(4).astype(">f8")]
    for i, a in enumerate(arrays):
        for v in ((1, 0), (2, 0), (3, 0)):
            put(f"{corpus}/fuzz_npy", f"seed{i}_{v[0]}", npy_bytes(a, v))
    for i, save in enumerate((np.savez, np.savez_compressed)):
        buf = io.BytesIO()
        save(buf, a=arrays[0], b=arrays[1], c=arrays[2])
        put(f"{corpus}/fuzz_npz", f"seed{i}", buf.getvalue())
    manifest = {"format": "onnxprobe-dump", "format_version": 1, "model": "m.onnx", "runs": 1,
                "tensors": [{"name": "x", "kind": "tensor", "node": "n", "op_type": "Relu", "topo_index": 0,
                             "dtype": "float32", "shape": [2, 3], "file": "00000_x.npy",
                             "stats": {"min": 0, "max": 1, "mean": 0.5, "std": 0.1, "nan": 0, "inf": 0}}]}
    put(f"{corpus}/fuzz_manifest", "seed0", json.dumps(manifest).encode())
    put(f"{corpus}/fuzz_manifest", "seed1", b'{"a": [1, 2.5e3, "\\u00e9\\ud83d\\ude00", true, null, {}]}')
    for i, s in enumerate(["1x3x224x224", "input:1,3,32,32", "x:-1,1", "512M", "2.5G", "device_id=0",
                           "12", "a,b,,c", "scalar", "X:0x0"]):
        put(f"{corpus}/fuzz_cli_specs", f"seed{i}", s.encode())


if __name__ == "__main__":
    main(sys.argv[1])
