#!/usr/bin/python3
"""Generates fault-injection cases for localization: base models (random, seeded weights) and
copies with a single-node fault each. Run with Debian's interpreter (torch 1.13):

  /usr/bin/python3 tests/localize/make_fault_cases.py OUT_DIR [small|full]

small: a CNN with BatchNorm kept as nodes, and a tiny ViT (make test).
full:  torchvision ResNet-50 and MobileNetV2 plus a small ViT (make bench / slow runs).
Writes OUT_DIR/<model>.onnx, OUT_DIR/<model>__<fault>.onnx and OUT_DIR/cases.json listing, per
case, the model pair and the node the fault was injected into.
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.head(x.mean(dim=(2, 3)))


class TinyVit(nn.Module):
    def __init__(self, dim=32, depth=2, heads=4, patch=4, image=16, classes=10):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        n = (image // patch) ** 2
        self.pos = nn.Parameter(torch.randn(1, n, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        x = self.norm(self.encoder(x))
        return self.head(x.mean(dim=1))


def randomize_bn(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def export(model, shape, path, fold=False):
    model.eval()
    torch.onnx.export(model, torch.randn(*shape), path, opset_version=13, input_names=["input"],
                      output_names=["logits"], do_constant_folding=fold,
                      training=torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE)
    return onnx.load(path)


def node_by(m, pred):
    return next(n for n in m.graph.node if pred(n))


def init_of(m, name):
    return next(i for i in m.graph.initializer if i.name == name)


def perturb_weight(m, op):
    inits = {i.name for i in m.graph.initializer}
    nodes = [n for n in m.graph.node if n.op_type == op and len(n.input) > 1 and n.input[1] in inits]
    n = nodes[len(nodes) // 2]
    t = init_of(m, n.input[1])
    w = numpy_helper.to_array(t).copy()
    w[0] *= np.float32(1.03)
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    return n.name


def change_epsilon(m):
    n = [n for n in m.graph.node if n.op_type == "BatchNormalization"][1]
    for a in n.attribute:
        if a.name == "epsilon":
            a.f = 0.3
            return n.name
    n.attribute.append(helper.make_attribute("epsilon", 0.3))
    return n.name


def change_pads(m):
    n = [n for n in m.graph.node if n.op_type == "Conv" and any(a.name == "pads" and list(a.ints) == [1, 1, 1, 1]
                                                                 for a in n.attribute)][1]
    for a in n.attribute:
        if a.name == "pads":
            del a.ints[:]
            a.ints.extend([2, 2, 0, 0])  # same output size, content shifted
    return n.name


def insert_fp16_roundtrip(m, op, index=1):
    n = [n for n in m.graph.node if n.op_type == op][index]
    src = n.output[0]
    half, back = src + "__fp16", src + "__fp32"
    cast1 = helper.make_node("Cast", [src], [half], name="injected_cast_to_fp16", to=onnx.TensorProto.FLOAT16)
    cast2 = helper.make_node("Cast", [half], [back], name="injected_cast_to_fp32", to=onnx.TensorProto.FLOAT)
    for other in m.graph.node:
        for i, x in enumerate(other.input):
            if x == src:
                other.input[i] = back
    for o in m.graph.output:
        if o.name == src:
            raise ValueError("cannot inject after a graph output")
    idx = list(m.graph.node).index(n)
    m.graph.node.insert(idx + 1, cast2)
    m.graph.node.insert(idx + 1, cast1)
    return "injected_cast_to_fp16"


def perturb_two_weights(m, op):
    """Two faults, the second downstream of the first: both must be named."""
    inits = {i.name for i in m.graph.initializer}
    nodes = [n for n in m.graph.node if n.op_type == op and len(n.input) > 1 and n.input[1] in inits]
    names = []
    for n, factor in ((nodes[0], 1.05), (nodes[-1], 1.5)):
        t = init_of(m, n.input[1])
        w = numpy_helper.to_array(t).copy()
        w[0] *= np.float32(factor)
        t.CopyFrom(numpy_helper.from_array(w, t.name))
        names.append(n.name)
    return names


def change_constant(m):
    # the ViT's attention scale or LayerNorm epsilon: a scalar Constant node feeding Div/Add/Mul
    for n in m.graph.node:
        if n.op_type != "Constant":
            continue
        t = n.attribute[0].t
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32 and a.size == 1 and float(a.reshape(-1)[0]) not in (0.0,):
            users = [u for u in m.graph.node if n.output[0] in u.input]
            if users and users[0].op_type in ("Div", "Mul", "Pow", "Add", "Sqrt"):
                n.attribute[0].t.CopyFrom(numpy_helper.from_array((a * np.float32(1.5)).astype(np.float32), t.name))
                return n.name
    raise ValueError("no scalar float Constant to change")


def write_case(out, base, base_model, fault, fn, cases, **extra):
    m = onnx.ModelProto()
    m.CopyFrom(base_model)
    node = fn(m)
    name = f"{base}__{fault}.onnx"
    onnx.save(m, os.path.join(out, name))
    nodes = node if isinstance(node, list) else [node]
    cases.append({"base": f"{base}.onnx", "faulty": name, "fault": fault, "node": nodes[0],
                  "nodes": nodes, **extra})


def main(out, size):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cases = []
    if size == "small":
        cnn = SmallCnn()
        randomize_bn(cnn)
        base = export(cnn, (1, 3, 16, 16), os.path.join(out, "cnn.onnx"))
        write_case(out, "cnn", base, "weight", lambda m: perturb_weight(m, "Conv"), cases)
        write_case(out, "cnn", base, "bn_epsilon", change_epsilon, cases)
        write_case(out, "cnn", base, "conv_pads", change_pads, cases)
        write_case(out, "cnn", base, "fp16_cast", lambda m: insert_fp16_roundtrip(m, "Relu"), cases)
        vit = TinyVit()
        base = export(vit, (1, 3, 16, 16), os.path.join(out, "vit.onnx"))
    else:
        import torchvision
        for name in ("resnet50", "mobilenet_v2"):
            model = getattr(torchvision.models, name)(weights=None)
            randomize_bn(model)
            base = export(model, (1, 3, 224, 224), os.path.join(out, f"{name}.onnx"), fold=True)
            write_case(out, name, base, "weight", lambda m: perturb_weight(m, "Conv"), cases)
            write_case(out, name, base, "conv_pads", change_pads, cases)
            write_case(out, name, base, "fp16_cast", lambda m: insert_fp16_roundtrip(m, "Conv"), cases)
        vit = TinyVit(dim=64, depth=4, image=32)
        base = export(vit, (1, 3, 32, 32), os.path.join(out, "vit.onnx"))
    write_case(out, "vit", base, "weight", lambda m: perturb_weight(m, "Gemm"), cases)
    write_case(out, "vit", base, "constant", change_constant, cases)
    write_case(out, "vit", base, "fp16_cast", lambda m: insert_fp16_roundtrip(m, "Softmax"), cases)
    if size == "small":  # issue 10: masked and sub-tolerance faults (after the single-fault cases)
        cnn = onnx.load(os.path.join(out, "cnn.onnx"))
        write_case(out, "cnn", cnn, "two_weights", lambda m: perturb_two_weights(m, "Conv"), cases,
                   expect="fail")
        write_case(out, "cnn", cnn, "fp16_subtol", lambda m: insert_fp16_roundtrip(m, "ReduceMean", 0), cases,
                   expect="pass")
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} cases in {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "small")
