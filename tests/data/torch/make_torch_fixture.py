#!/usr/bin/python3
"""Makes the PyTorch fixture of tests/unit/align (run with Debian's torch 1.13 from the repo root):

  /usr/bin/python3 tests/data/torch/make_torch_fixture.py tests/data/torch

attn.onnx (a Linear, an nn.MultiheadAttention returning its weights, a Linear; random seeded
weights), attn.cap/ (its PyTorch capture with parameters, by python/onnxprobe_torch) and
attn_faulty.onnx (0.5 added to one element of the attention's input projection weight).
"""
import os
import sys

import onnx
import torch
from onnx import numpy_helper
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
from onnxprobe_torch import capture, export  # noqa: E402


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = self.proj(x)
        a, w = self.attn(h, h, h)
        return self.out(a), w


def main(out):
    torch.manual_seed(0)
    model = Attn().eval()
    x = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(1))
    export(model, x, os.path.join(out, "attn.onnx"), checklist=False)
    capture(model, x, os.path.join(out, "attn.cap"))
    m = onnx.load(os.path.join(out, "attn.onnx"))
    t = next(i for i in m.graph.initializer if i.name == "attn.in_proj_weight")
    w = numpy_helper.to_array(t).copy()
    w[2, 1] += 0.5
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(m, os.path.join(out, "attn_faulty.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
