#!/usr/bin/python3
"""Exports benchmark models from torchvision with random, seeded weights (never committed).

usage: /usr/bin/python3 bench/make_models.py OUT_DIR [resnet50 mobilenet_v2 ...]
"""
import os
import sys

import torch
import torchvision


def export(name, out_dir):
    path = os.path.join(out_dir, f"{name}.onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    tmp = path + ".tmp"
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), tmp, opset_version=15,
                      input_names=["input"], output_names=["logits"],
                      do_constant_folding=True, training=torch.onnx.TrainingMode.EVAL)
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for n in sys.argv[2:] or ["resnet50", "mobilenet_v2"]:
        print(export(n, out))
