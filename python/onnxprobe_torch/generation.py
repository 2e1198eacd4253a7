"""A PyTorch decoder's greedy generation with its key/value cache, saved for `onnxprobe generate`
as side A (the reference): per step the last position's logits and the cache positions the step
added, and for chosen steps every module's activations (a capture `compare` reads), so the step
where an ONNX export departs from PyTorch is compared tensor by tensor (docs/generate.md)."""
import json
import os
import re

import numpy as np
import torch

from ._atomic import temporary_for
from .capture import capture

FORMAT, FORMAT_VERSION = "onnxprobe-generation", 1


def _is_causal_lm(model):
    """A Hugging Face causal LM (transformers' PreTrainedModel): keyword inputs, a cache of
    (key, value) pairs per layer."""
    return hasattr(model, "config") and hasattr(model, "can_generate")


def _numpy(t):
    """A CPU numpy copy; bfloat16 (which numpy lacks) as float32, as in dumps."""
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy().copy()


def _default_forward(model, ids, mask, pos, past):
    """A Hugging Face causal LM: model(input_ids=, attention_mask=, position_ids=,
    past_key_values=((k, v), ...) or None at first, use_cache=True). Any other module:
    model(input_ids, attention_mask, position_ids, *past). (logits, presents) are read from an
    object with .logits and .past_key_values or from a tuple (logits, *presents)."""
    if _is_causal_lm(model):
        pairs = None
        if past and past[0].shape[2] > 0:
            pairs = tuple((past[i], past[i + 1]) for i in range(0, len(past), 2))
        out = model(input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=pairs,
                    use_cache=True)
    else:
        out = model(ids, mask, pos, *past)
    if hasattr(out, "logits"):
        presents = []
        for layer in out.past_key_values:
            presents.extend(layer if isinstance(layer, (tuple, list)) else [layer])
        return out.logits, presents
    return out[0], list(out[1:])


def _cache_layout(onnx_path, n):
    """(past name, present name, layer, kind) of each cache tensor: from the ONNX model's inputs
    and outputs when given (so a capture's inputs carry its names), else the causal-LM export
    names (past_key_values.N.key/value -> present.N.key/value)."""
    if onnx_path is None:
        names = []
        for i in range(n // 2):
            for kind in ("key", "value"):
                names.append((f"past_key_values.{i}.{kind}", f"present.{i}.{kind}", i, kind))
        return names, ["input_ids", "attention_mask", "position_ids"], "logits"
    import onnx

    g = onnx.load(onnx_path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    pasts = [x for x in inputs if "past" in x.lower()]
    presents = [o.name for o in g.output if "present" in o.name.lower()]
    others = [o.name for o in g.output if o.name not in presents]
    if len(pasts) != n or len(presents) != n or len(others) != 1:
        raise ValueError(f"{onnx_path}: expected {n} past inputs, {n} present outputs and one "
                         f"logits output, found {len(pasts)}, {len(presents)}, {len(others)}")
    names = []
    for past, present in zip(pasts, presents):
        layer, kind = _read_cache_name(present)
        names.append((past, present, layer, kind))
    return names, [x for x in inputs if x not in pasts], others[0]


def _read_cache_name(name):
    """(layer, "key" | "value" | "kv") from a cache tensor's name, as onnxprobe reads it: the
    first number is the layer; the last key/k or value/v word the kind ("key_values" is the
    cache's name, not its kind)."""
    words = re.findall(r"[a-z]+|\d+", name.lower())
    layer, kind, i = None, "kv", 0
    while i < len(words):
        w = words[i]
        if w.isdigit():
            layer = int(w) if layer is None else layer
        elif w == "key" and i + 1 < len(words) and words[i + 1] in ("values", "value") and \
                not (i + 2 >= len(words) and words[i + 1] == "value"):
            i += 1
        elif w in ("key", "k"):
            kind = "key"
        elif w in ("value", "v"):
            kind = "value"
        i += 1
    if layer is None:
        raise ValueError(f"cache tensor '{name}' has no layer number in its name")
    return layer, kind


def capture_generation(model, prompt, steps, out, onnx_path=None, empty_cache=None,
                       capture_steps=8, forward=None, seq_axis=2):
    """Generates `steps` tokens greedily from `prompt` (token ids) with `model`'s cache and writes
    the folder `out` (generation.json, steps/, captures/), whole or not at all.

    - `forward(model, ids, mask, pos, past)` -> (logits, presents): one step; the default calls
      model(ids, mask, pos, *past) and reads a tuple (logits, *presents) or an object with
      .logits and .past_key_values.
    - `empty_cache`: the cache before the first step (tensors with 0 positions along
      `seq_axis`); by default made from `onnx_path`'s past inputs (batch 1).
    - `onnx_path`: the ONNX export; its input and output names name the cache, and each
      captured step's inputs, so `onnxprobe generate out model.onnx` pairs them.
    - `capture_steps`: module activations (onnxprobe_torch.capture) are saved for the first
      this-many steps: the born step, when among them, is then compared tensor by tensor
      (modules called positionally; not yet for a Hugging Face causal LM's keyword call).
    Returns the generated tokens."""
    forward = forward or _default_forward
    model.eval()
    if empty_cache is None:
        if onnx_path is None:
            raise ValueError("give empty_cache or onnx_path (the cache's shapes come from one)")
        import onnx

        g = onnx.load(onnx_path, load_external_data=False).graph
        empty_cache = []
        for i in g.input:
            if "past" not in i.name.lower():
                continue
            dims = [d.dim_value if d.HasField("dim_value") else (1 if k == 0 else 0)
                    for k, d in enumerate(i.type.tensor_type.shape.dim)]
            dims[seq_axis] = 0
            dtype = {10: torch.float16, 11: torch.float64}.get(i.type.tensor_type.elem_type,
                                                                torch.float32)
            empty_cache.append(torch.zeros(dims, dtype=dtype))
    layout, input_names, logits_name = _cache_layout(onnx_path, len(empty_cache))
    past, tokens, records = list(empty_cache), [], []
    ids = torch.tensor([list(prompt)], dtype=torch.int64)
    with torch.no_grad():
        for step in range(1, steps + 1):
            n = past[0].shape[seq_axis]
            mask = torch.ones(1, n + ids.shape[1], dtype=torch.int64)
            pos = torch.arange(n, n + ids.shape[1]).unsqueeze(0)
            logits, presents = forward(model, ids, mask, pos, past)
            tok = int(logits[0, -1].argmax())
            presents = [p.detach().cpu() for p in presents]
            added = {present: _numpy(p.narrow(seq_axis, n, p.shape[seq_axis] - n))
                     for (_, present, _, _), p in zip(layout, presents)}
            added[logits_name] = logits[0, -1].float().numpy().copy()
            records.append((step, added, (ids, mask, pos, list(past)) if step <= capture_steps
                            else None))
            tokens.append(tok)
            past, ids = list(presents), torch.tensor([[tok]], dtype=torch.int64)
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "runtime": f"torch {torch.__version__}",
           "model": type(model).__name__, "prompt": [int(t) for t in prompt], "tokens": tokens,
           "logits": logits_name,
           "cache": [{"name": present, "past": past_name, "layer": layer, "kind": kind,
                      "seq_axis": seq_axis, "empty_shape": list(e.shape),
                      "dtype": str(_numpy(e).dtype)}
                     for (past_name, present, layer, kind), e in zip(layout, empty_cache)],
           "steps": []}
    with temporary_for(out) as tmp:
        os.makedirs(os.path.join(tmp, "steps"))
        os.makedirs(os.path.join(tmp, "captures"))
        for step, added, feed in records:
            f = f"steps/{step:05d}.npz"
            np.savez(os.path.join(tmp, f), **added)
            entry = {"step": step, "file": f}
            if feed is not None and not _is_causal_lm(model):
                c = f"captures/{step:05d}"
                ids_, mask_, pos_, past_ = feed
                # (ids, mask, positions) named as the ONNX model names them, in that order
                roles = [next((x for x in input_names if k in x.lower()), default)
                         for k, default in (("ids", "input_ids"), ("mask", "attention_mask"),
                                            ("position", "position_ids"))]
                names = roles + [p for p, _, _, _ in layout]
                capture(model, (ids_, mask_, pos_, *past_), os.path.join(tmp, c),
                        input_names=names, parameters=step == 1)
                entry["capture"] = c
            doc["steps"].append(entry)
        with open(os.path.join(tmp, "generation.json"), "w") as fh:
            json.dump(doc, fh)
    return tokens
