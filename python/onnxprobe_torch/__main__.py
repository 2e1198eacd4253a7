"""Command line: python3 -m onnxprobe_torch {export,capture,verify} --model pkg.mod:factory ...

The model comes from a factory callable (it must build the nn.Module; --weights loads a
state_dict into it). Inputs are seeded random of --shape, or read from --inputs FILE.npz whose keys
are the input names (forward()'s parameter names pass as keyword arguments; other keys are
positional, in file order). No network access: nothing is downloaded. Errors are one line on
stderr (exit 2); each distinct warning is printed once.
"""
import argparse
import importlib
import os
import sys
import warnings

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    pass


def _load(spec, weights):
    import torch

    mod, _, fn = spec.partition(":")
    if not mod or not fn:
        raise UsageError(f"--model '{spec}': expected module.path:factory")
    sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise UsageError(f"--model '{spec}': {e}") from e
    model = factory()
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"--model '{spec}' returned {type(model).__name__}, not an nn.Module")
    if weights:
        model.load_state_dict(torch.load(weights, map_location="cpu"))
    return model


def _inputs(args, model):
    """(inputs for the model, input names or None)"""
    import numpy as np
    import torch

    from ._io import _positional_params

    if args.inputs:
        with np.load(args.inputs) as z:
            arrays = {k: torch.from_numpy(z[k]) for k in z.files}
        if not arrays:
            raise UsageError(f"--inputs {args.inputs}: the file holds no arrays")
        params = {p.name for p in (_positional_params(model) or [])}
        if all(k in params for k in arrays):
            return arrays, list(arrays)
        return tuple(arrays.values()), list(arrays)
    if not args.shape:
        raise UsageError("give --shape or --inputs")
    torch.manual_seed(args.seed)
    try:
        shapes = [[int(d) for d in s.split("x")] for s in args.shape]
    except ValueError:
        raise UsageError(f"--shape {' '.join(args.shape)}: expected dimensions like 1x3x224x224") from None
    return tuple(torch.randn(*s) for s in shapes), None


def _warnings_once():
    warnings.simplefilter("once")
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        if text in seen:
            return
        seen.add(text)
        print(f"warning: {text}", file=sys.stderr)

    warnings.showwarning = show


def run(argv):
    from . import capture, export, verify

    p = argparse.ArgumentParser(prog="onnxprobe_torch")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("export", "capture", "verify"):
        s = sub.add_parser(name)
        s.add_argument("--model", required=True, help="module.path:factory returning an nn.Module")
        s.add_argument("--weights", help="a state_dict saved with torch.save")
        s.add_argument("--shape", action="append", default=[], help="input shape, e.g. 1x3x224x224 (repeatable)")
        s.add_argument("--inputs", help=".npz of inputs; its keys are the input names")
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--input-names", default="", help="comma-separated (default: forward()'s parameter names)")
        if name != "export":
            s.add_argument("--no-float64", dest="float64", action="store_false",
                           help="skip the float64 run that measures PyTorch's own float32 rounding")
        if name == "verify":
            s.add_argument("--onnx", help="an existing ONNX file (default: export one)")
            s.add_argument("--html", help="write the HTML report here")
            s.add_argument("--json", help="write the JSON report here")
            s.add_argument("--onnxprobe", help="the onnxprobe binary (default: $ONNXPROBE_BIN, then PATH)")
        else:
            s.add_argument("-o", "--output", required=True)
        if name == "export":
            s.add_argument("--opset", type=int, default=13)
            s.add_argument("--output-names", default="")
    a = p.parse_args(argv)
    model = _load(a.model, a.weights)
    inputs, names = _inputs(a, model)
    names = [n for n in a.input_names.split(",") if n] or names
    if a.cmd == "export":
        out_names = [n for n in a.output_names.split(",") if n] or None
        r = export(model, inputs, a.output, names, out_names, opset=a.opset)
        print(f"exported {a.output}; checklist {a.output}.checklist.json")
        for risk in r["risks"]:
            print(f"risk: {risk}")
        return 0
    if a.cmd == "capture":
        m = capture(model, inputs, a.output, names, float64=a.float64)
        print(f"captured {sum(1 for t in m['tensors'] if t['kind'] == 'tensor')} activations into {a.output}")
        return 0
    rep = verify(model, inputs, onnx_path=a.onnx, html=a.html, json_path=a.json, onnxprobe=a.onnxprobe,
                 input_names=names, echo=True, float64=a.float64)
    return 0 if rep["summary"]["failed"] == 0 and not rep["summary"].get("aborted") else 1


def main(argv=None):
    _warnings_once()
    try:
        return run(argv)
    except KeyboardInterrupt:
        print("onnxprobe_torch: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # one line, not a traceback: the message names what is wrong
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"onnxprobe_torch: error: {text}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
