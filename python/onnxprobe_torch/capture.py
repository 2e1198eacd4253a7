"""Captures every module's output with forward hooks into an onnxprobe dump folder.

Each activation is named the way the ONNX exporter scopes it: the module path, with "_k" added
for the k-th extra call of one module (a ReLU used three times is relu, relu_1, relu_2). The
manifest records module path, module type, call index and output index for the aligner.
"""
import json
import os
import shutil

import numpy as np
import torch


def _flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(_flatten(o))
        return items
    if isinstance(out, dict):
        items = []
        for k in sorted(out):
            items.extend(_flatten(out[k]))
        return items
    return []


def _np(t):
    t = t.detach().cpu().clone()  # a copy: in-place ops later in the forward pass must not change it
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.contiguous().numpy()


def capture(model, inputs, out_dir, input_names=None, root_name="model"):
    """Runs `model` on `inputs` (a tensor or tuple) in eval mode and writes `out_dir` (a dump
    folder: manifest.json + .npy files, inputs under inputs/). Returns the manifest dict.

    The forward pass runs with autograd enabled (no backward is done) so that fused inference
    kernels do not skip the submodules; every module's hook fires as the exporter sees it."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    input_names = input_names or [f"input_{i}" for i in range(len(inputs))]
    model.eval()
    calls = {}
    records = []
    hooks = []

    def hook_for(path, module):
        def hook(_module, _args, output):
            k = calls.get(path, 0)
            calls[path] = k + 1
            for j, t in enumerate(_flatten(output)):
                records.append((path, type(module).__name__, k, j, _np(t)))
        return hook

    for path, module in model.named_modules():
        hooks.append(module.register_forward_hook(hook_for(path or root_name, module)))
    try:
        # with gradients enabled, so fused inference fast paths (e.g. TransformerEncoderLayer's)
        # do not bypass the submodules and their hooks; nothing is backpropagated
        with torch.enable_grad():
            model(*inputs)
    finally:
        for h in hooks:
            h.remove()

    tmp = out_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "inputs"))
    entries = []
    for i, (name, t) in enumerate(zip(input_names, inputs)):
        f = f"inputs/{i:05d}_{name}.npy"
        a = _np(t)
        np.save(os.path.join(tmp, f), a)
        entries.append({"name": name, "kind": "input", "dtype": a.dtype.name, "shape": list(a.shape), "file": f})
    for order, (path, mtype, k, j, a) in enumerate(records):
        leaf = path.split(".")[-1]
        call_name = path if k == 0 else path[: len(path) - len(leaf)] + f"{leaf}_{k}"
        name = call_name if j == 0 else f"{call_name}:{j}"
        f = f"{order + 1:05d}_{name.replace('/', '_')}.npy"
        np.save(os.path.join(tmp, f), a)
        entries.append({"name": name, "kind": "tensor", "node": path, "op_type": mtype, "topo_index": order,
                        "dtype": "bool" if a.dtype == np.bool_ else a.dtype.name, "shape": list(a.shape),
                        "file": f, "module": path, "module_type": mtype, "call_index": k, "output_index": j})
    manifest = {"format": "onnxprobe-dump", "format_version": 1, "model": type(model).__name__,
                "runtime": f"torch {torch.__version__}", "provider": "pytorch", "source": "torch-capture",
                "tensors": entries}
    with open(os.path.join(tmp, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)
    return manifest
