"""Small PyTorch models for the companion and alignment tests (random, seeded weights)."""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "localize"))
from make_fault_cases import TinyVit  # noqa: E402


class Block(nn.Module):
    """A residual block whose single ReLU module is called twice (relu, relu_1)."""

    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(x + y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(Block(8), Block(8))
        self.drop = nn.Dropout(0.1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        return self.fc(self.drop(torch.flatten(self.pool(x), 1)))


class Split(nn.Module):
    def forward(self, x):
        return x[:, :4], x[:, 4:] * 2


class TupleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)
        self.split = Split()

    def forward(self, x):
        a, b = self.split(self.proj(x))
        return a.sum(1) + b.sum(1)


def warm_bn(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked += 1
    return model


def net():
    torch.manual_seed(0)
    return warm_bn(Net()).eval()


def cold_net():
    torch.manual_seed(0)
    return Net()  # training mode, BatchNorm statistics never updated


def tuple_net():
    torch.manual_seed(0)
    return TupleNet().eval()


def vit():
    torch.manual_seed(0)
    return TinyVit().eval()


def torchvision_model(name):
    import torchvision
    torch.manual_seed(0)
    return warm_bn(getattr(torchvision.models, name)(weights=None)).eval()
