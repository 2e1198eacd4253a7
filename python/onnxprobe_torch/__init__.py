"""Thin PyTorch companion of onnxprobe: debug-friendly export and activation capture.

Both write files the C++ core reads; nothing here compares tensors.
"""
from .capture import capture
from .export import export

__all__ = ["capture", "export"]
