"""How the companion passes inputs to a model and names them, shared by export and capture so
that the ONNX graph's inputs and the capture's inputs carry the same names.

Inputs may be one tensor, a tuple/list of positional arguments, or a dict of keyword arguments
(names of forward()'s parameters). They are passed positionally in forward()'s order: the exporter
then sees exactly the tensors the capture sees (torch.onnx.export would otherwise turn omitted
keyword defaults into extra graph inputs).
"""
import inspect

import torch


class InputError(ValueError):
    """Inputs that cannot be passed to the model (a one-line message naming what is wrong)."""


def _positional_params(model):
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in sig.parameters.values() if p.kind in kinds]


def positional_args(model, inputs):
    """The model's arguments as a tuple, in forward()'s parameter order."""
    if isinstance(inputs, torch.Tensor):
        return (inputs,)
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs)
    if not isinstance(inputs, dict):
        raise InputError(f"inputs must be a tensor, a tuple/list or a dict, not {type(inputs).__name__}")
    params = _positional_params(model)
    if params is None:
        raise InputError(f"{type(model).__name__}.forward has no inspectable signature: pass inputs as a tuple")
    names = [p.name for p in params]
    unknown = [k for k in inputs if k not in names]
    if unknown:
        raise InputError(f"{type(model).__name__}.forward has no parameter {unknown[0]!r} "
                         f"(parameters: {', '.join(names) or 'none'})")
    last = max(names.index(k) for k in inputs) if inputs else -1
    args = []
    for p in params[:last + 1]:
        if p.name in inputs:
            args.append(inputs[p.name])
        elif p.default is not inspect.Parameter.empty:
            args.append(p.default)
        else:
            raise InputError(f"input {p.name!r} of {type(model).__name__}.forward is missing")
    return tuple(args)


def flatten(obj):
    """Tensors of a nested output or argument, in the order the exporter flattens them: tuples
    and lists in order, dicts (ModelOutput too) in insertion order; other values are skipped."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for o in obj for t in flatten(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in flatten(o)]
    return []


def _leaf_names(obj, prefix):
    if isinstance(obj, torch.Tensor):
        return [prefix]
    if isinstance(obj, (tuple, list)):
        items = [(str(i), o) for i, o in enumerate(obj)]
    elif isinstance(obj, dict):
        items = [(str(k), o) for k, o in obj.items()]
    else:
        return []
    names = []
    for key, o in items:
        names.extend(_leaf_names(o, f"{prefix}_{key}" if prefix else key))
    return names


def _unique(names):
    seen, out = set(), []
    for n in names:
        m, k = n, 1
        while m in seen:
            m, k = f"{n}_{k}", k + 1
        seen.add(m)
        out.append(m)
    return out


def input_names(model, args):
    """Names of the flattened tensor inputs: forward()'s parameter names (with _i / _key for
    nested arguments), input_K where the signature says nothing."""
    params = _positional_params(model) or []
    names = []
    for i, a in enumerate(args):
        base = params[i].name if i < len(params) else f"input_{i}"
        leaves = _leaf_names(a, "")
        names.extend(base if leaf == "" else f"{base}_{leaf}" for leaf in leaves)
    return _unique(names)


def output_names(outputs):
    """Names of the flattened outputs: dict keys where the model returns a dict, else output_K."""
    if isinstance(outputs, dict):
        return _unique(_leaf_names(outputs, ""))
    return [f"output_{i}" for i in range(len(flatten(outputs)))]


def export_args(args):
    """torch.onnx.export reads a trailing dict argument as keyword arguments: add an empty one
    when the model's last positional argument is itself a dict."""
    return args + ({},) if args and isinstance(args[-1], dict) else args
