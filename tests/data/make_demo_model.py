#!/usr/bin/python3
"""Generates the embedded default model: a small CNN with random, seeded weights, and a copy
with a known numerical fault in one node (output channel 5 of the second convolution's weights
scaled by 1.02), the pair `make demo` compares.

Run with Debian's interpreter (torch 1.13): /usr/bin/python3 tests/data/make_demo_model.py
Writes tests/data/demo/demo_cnn.onnx and demo_cnn_faulty.onnx (committed; well under 1 MB).
"""
import os
import sys

import torch
from torch import nn


class DemoCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(self.pool(x), 1)
        return torch.softmax(self.classifier(x), dim=1)


def main(out_dir):
    torch.manual_seed(0)
    model = DemoCnn()
    # give BatchNorm non-trivial running statistics, as a trained model would have
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model.eval()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "demo_cnn.onnx")
    torch.onnx.export(model, torch.randn(1, 3, 32, 32), path, opset_version=13,
                      input_names=["input"], output_names=["probs"],
                      dynamic_axes={"input": {0: "batch"}, "probs": {0: "batch"}},
                      do_constant_folding=False, training=torch.onnx.TrainingMode.EVAL)
    print(path)
    write_faulty(path, os.path.join(out_dir, "demo_cnn_faulty.onnx"))


FAULTY_NODE = "/features/features.3/Conv"
FAULTY_CHANNEL = 5


def write_faulty(src, dst):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(src)
    node = next(n for n in m.graph.node if n.name == FAULTY_NODE)
    init = next(i for i in m.graph.initializer if i.name == node.input[1])
    w = numpy_helper.to_array(init).copy()
    w[FAULTY_CHANNEL] *= np.float32(1.02)
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    onnx.save(m, dst)
    print(dst)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "demo"))
