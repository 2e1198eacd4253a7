"""Thin PyTorch companion of onnxprobe: debug-friendly export, activation capture, and verify()
(export + capture + compare in one call: in this process with the onnxprobe package installed,
else through the onnxprobe binary).

Export and capture write files the C++ core reads; nothing here compares tensors.
"""
from ._io import InputError
from .capture import capture
from .export import export
from .generation import capture_generation
from .verify import VerifyError, alignment_summary, verify

__all__ = ["capture", "capture_generation", "export", "verify", "alignment_summary", "InputError", "VerifyError"]
