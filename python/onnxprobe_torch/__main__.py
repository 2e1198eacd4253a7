"""Command line: python3 -m onnxprobe_torch {export,capture} --model pkg.mod:factory ...

The model comes from a factory callable (it must build the nn.Module; --weights loads a
state_dict into it). Inputs are seeded random of --shape, or read from --inputs FILE.npz (keys in
input order). No network access: nothing is downloaded.
"""
import argparse
import importlib
import sys

import numpy as np
import torch

from .capture import capture
from .export import export


def _load(spec, weights):
    mod, _, fn = spec.partition(":")
    if not fn:
        raise SystemExit(f"--model '{spec}': expected module.path:factory")
    model = getattr(importlib.import_module(mod), fn)()
    if weights:
        model.load_state_dict(torch.load(weights, map_location="cpu"))
    return model


def _inputs(args):
    if args.inputs:
        z = np.load(args.inputs)
        return tuple(torch.from_numpy(z[k]) for k in z.files)
    torch.manual_seed(args.seed)
    shapes = [[int(d) for d in s.split("x")] for s in args.shape]
    return tuple(torch.randn(*s) for s in shapes)


def main(argv=None):
    p = argparse.ArgumentParser(prog="onnxprobe_torch")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("export", "capture"):
        s = sub.add_parser(name)
        s.add_argument("--model", required=True, help="module.path:factory returning an nn.Module")
        s.add_argument("--weights", help="a state_dict saved with torch.save")
        s.add_argument("--shape", action="append", default=[], help="input shape, e.g. 1x3x224x224 (repeatable)")
        s.add_argument("--inputs", help=".npz of inputs, in input order")
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--input-names", default="", help="comma-separated")
        s.add_argument("-o", "--output", required=True)
        if name == "export":
            s.add_argument("--opset", type=int, default=13)
            s.add_argument("--output-names", default="")
    a = p.parse_args(argv)
    if not a.shape and not a.inputs:
        raise SystemExit("give --shape or --inputs")
    model = _load(a.model, a.weights)
    inputs = _inputs(a)
    in_names = [n for n in a.input_names.split(",") if n] or None
    if a.cmd == "export":
        out_names = [n for n in a.output_names.split(",") if n] or None
        r = export(model, inputs, a.output, in_names, out_names, opset=a.opset)
        print(f"exported {a.output}; checklist {a.output}.checklist.json")
        for risk in r["risks"]:
            print(f"risk: {risk}")
    else:
        m = capture(model, inputs, a.output, in_names)
        print(f"captured {sum(1 for t in m['tensors'] if t['kind'] == 'tensor')} activations into {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
