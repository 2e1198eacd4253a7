"""torch.onnx.export with debugging defaults, plus a checklist of what was set and what looks risky."""
import json
import os

import torch
from torch import nn


def _risks(model, was_training):
    risks = []
    if was_training:
        risks.append("the model was in training mode; it was switched to eval() for export")
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            untouched = (int(m.num_batches_tracked) == 0 and torch.all(m.running_mean == 0)
                         and torch.all(m.running_var == 1))
            if untouched:
                risks.append(f"BatchNorm '{name}' has running statistics that were never updated "
                             "(mean 0, var 1, no batches tracked): eval-mode outputs will not match training")
        if isinstance(m, nn.modules.dropout._DropoutNd) and m.training:
            risks.append(f"Dropout '{name}' is in training mode")
    return risks


def export(model, args, path, input_names=None, output_names=None, opset=13, dynamic_batch=True,
           checklist=True):
    """Exports `model` for debugging and returns the checklist (a dict).

    Eval mode and TrainingMode.EVAL, constant folding off (nodes stay where the modules are),
    named inputs and outputs, dynamic batch axes on inputs *and* outputs, a chosen opset, and
    onnx.checker afterwards. Writes PATH.checklist.json next to the model.
    """
    import onnx  # imported late: only export needs it

    args = args if isinstance(args, tuple) else (args,)
    was_training = model.training
    risks = _risks(model, was_training)
    model.eval()
    with torch.no_grad():
        outputs = model(*args)
    n_out = len(outputs) if isinstance(outputs, (tuple, list)) else 1
    input_names = input_names or [f"input_{i}" for i in range(len(args))]
    output_names = output_names or [f"output_{i}" for i in range(n_out)]
    dynamic_axes = {n: {0: "batch"} for n in input_names + output_names} if dynamic_batch else None
    tmp = path + ".tmp"
    try:
        torch.onnx.export(model, args, tmp, opset_version=opset, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.EVAL)
    except Exception as e:  # an op without a symbolic, most often
        if os.path.exists(tmp):
            os.remove(tmp)
        text = str(e)
        hint = " (an op without an ONNX symbolic: register one or pick another opset)" if "symbolic" in text.lower() \
            or "not supported" in text.lower() else ""
        raise RuntimeError(f"export of {type(model).__name__} failed{hint}: {text.splitlines()[0]}") from e
    checker = "passed"
    exported = onnx.load(tmp)
    try:
        onnx.checker.check_model(exported)
    except Exception as e:  # advisory: the runtime may still accept it
        checker = f"failed: {str(e).splitlines()[0]}"
        risks.append(f"onnx.checker: {checker}")
    for node in exported.graph.node:
        if not onnx.defs.has(node.op_type, node.domain):
            risks.append(f"node '{node.name}' is op '{node.domain or 'ai.onnx'}::{node.op_type}', which no ONNX "
                         "schema defines (a custom op without a symbolic?)")
    os.replace(tmp, path)
    report = {
        "model": type(model).__name__,
        "path": path,
        "settings": {"eval_mode": True, "training": "EVAL", "do_constant_folding": False, "opset": opset,
                     "input_names": input_names, "output_names": output_names,
                     "dynamic_axes": dynamic_axes or {}},
        "onnx_checker": checker,
        "risks": risks,
    }
    if checklist:
        with open(path + ".checklist.json", "w") as f:
            json.dump(report, f, indent=1)
    return report
