"""The PyTorch companion (package onnxprobe_torch) as ``onnxprobe.torch``: export, capture and
whatever else it publishes in its ``__all__``."""
from onnxprobe_torch import *  # noqa: F401,F403
from onnxprobe_torch import __all__  # noqa: F401
