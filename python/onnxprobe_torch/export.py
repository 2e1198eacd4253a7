"""torch.onnx.export with debugging defaults, plus a checklist of what was set and what looks risky."""
import json

import torch
from torch import nn

from . import _io
from ._atomic import temporary_for


def _risks(model, was_training):
    risks = []
    if was_training:
        risks.append("the model was in training mode; it was switched to eval() for export")
    untouched = []  # one line for all of them: a fresh model has dozens
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            if (int(m.num_batches_tracked) == 0 and torch.all(m.running_mean == 0)
                    and torch.all(m.running_var == 1)):
                untouched.append(name)
        if isinstance(m, nn.modules.dropout._DropoutNd) and m.training:
            risks.append(f"Dropout '{name}' is in training mode")
    if untouched:
        shown = ", ".join(f"'{n}'" for n in untouched[:3]) + (f" and {len(untouched) - 3} more"
                                                              if len(untouched) > 3 else "")
        risks.append(f"{len(untouched)} BatchNorm layer{'s' if len(untouched) > 1 else ''} ({shown}) "
                     f"{'have' if len(untouched) > 1 else 'has'} running statistics that were never updated "
                     "(mean 0, var 1, no batches tracked): eval-mode outputs will not match training")
    return risks


def export(model, args, path, input_names=None, output_names=None, opset=13, dynamic_batch=True,
           checklist=True):
    """Exports `model` for debugging and returns the checklist (a dict).

    `args` is a tensor, a tuple of positional arguments or a dict of keyword arguments (as for
    capture()). Eval mode and TrainingMode.EVAL, constant folding off (nodes stay where the modules
    are), inputs named after forward()'s parameters and outputs after dict keys unless names are
    given, dynamic batch axes on inputs *and* outputs, a chosen opset, and onnx.checker afterwards.
    Writes PATH.checklist.json next to the model. Nothing is left behind on failure or interruption.
    """
    import onnx  # imported late: only export needs it

    args = _io.positional_args(model, args)
    was_training = model.training
    risks = _risks(model, was_training)
    model.eval()
    with torch.no_grad():
        outputs = model(*args)
    input_names = list(input_names) if input_names else _io.input_names(model, args)
    output_names = list(output_names) if output_names else _io.output_names(outputs)
    ranked = [(n, t) for n, t in zip(input_names, _io.flatten(args))] + \
        [(n, t) for n, t in zip(output_names, _io.flatten(outputs))]
    dynamic_axes = {n: {0: "batch"} for n, t in ranked if t.dim() > 0} if dynamic_batch else None
    checker = "passed"
    with temporary_for(path) as tmp:
        try:
            torch.onnx.export(model, _io.export_args(args), tmp, opset_version=opset, input_names=input_names,
                              output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=False,
                              training=torch.onnx.TrainingMode.EVAL)
        except Exception as e:  # an op without a symbolic, most often
            text = str(e).strip()
            hint = " (an op without an ONNX symbolic: register one or pick another opset)" \
                if "symbolic" in text.lower() or "not supported" in text.lower() else ""
            first = text.splitlines()[0] if text else type(e).__name__
            raise RuntimeError(f"export of {type(model).__name__} failed{hint}: {first}") from e
        exported = onnx.load(tmp)
        try:
            onnx.checker.check_model(exported)
        except Exception as e:  # advisory: the runtime may still accept it
            checker = f"failed: {str(e).splitlines()[0]}"
            risks.append(f"onnx.checker: {checker}")
        for node in exported.graph.node:
            if not onnx.defs.has(node.op_type, node.domain):
                risks.append(f"node '{node.name}' is op '{node.domain or 'ai.onnx'}::{node.op_type}', which no "
                             "ONNX schema defines (a custom op without a symbolic?)")
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
        with temporary_for(path + ".checklist.json") as tmp:
            with open(tmp, "w") as f:
                json.dump(report, f, indent=1)
    return report
