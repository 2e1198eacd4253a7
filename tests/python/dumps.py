"""Writes onnxprobe dump folders from numpy arrays, so comparisons can be fed known data."""
import json
import os

import numpy as np


def write_dump(folder, tensors, inputs=None, model="synthetic.onnx"):
    """tensors: list of (name, array) or (name, array, op_type) in topological order."""
    os.makedirs(folder, exist_ok=True)
    entries = []
    for i, (name, a) in enumerate((inputs or {}).items()):
        os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
        f = f"inputs/{i:05d}_{name}.npy"
        np.save(os.path.join(folder, f), a)
        entries.append({"name": name, "kind": "input", "dtype": str(a.dtype).replace("bool", "bool"),
                        "shape": list(a.shape), "file": f})
    for i, t in enumerate(tensors):
        name, a = t[0], t[1]
        op = t[2] if len(t) > 2 else "Identity"
        f = f"{i + 1:05d}_{name.replace('/', '_')}.npy"
        np.save(os.path.join(folder, f), a)
        entries.append({"name": name, "kind": "tensor", "node": f"node_{name}", "op_type": op, "topo_index": i,
                        "dtype": a.dtype.name, "shape": list(a.shape), "file": f})
    manifest = {"format": "onnxprobe-dump", "format_version": 1, "model": model, "runtime": "numpy",
                "provider": "none", "tensors": entries}
    with open(os.path.join(folder, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    return folder
