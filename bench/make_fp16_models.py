#!/usr/bin/python3
"""Exports the fp16 benchmark's ViT (torchvision vit_b_16, random seeded weights). torchvision
initializes the classification head to zeros, which makes every logit 0 whatever the precision;
the head gets random weights here so the outputs say something.

usage: /usr/bin/python3 bench/make_fp16_models.py OUT_DIR
"""
import os
import sys

import torch
import torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
path = os.path.join(out, "vit_b_16_head.onnx")
if not os.path.exists(path):
    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(weights=None).eval()
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    tmp = path + ".tmp"
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), tmp, opset_version=15,
                      input_names=["input"], output_names=["logits"], do_constant_folding=True,
                      training=torch.onnx.TrainingMode.EVAL)
    os.replace(tmp, path)
print(path)
