"""onnxprobe: which node made my ONNX model's numbers wrong, and why.

    import onnxprobe
    report = onnxprobe.compare("model.onnx", b_opt_level="all")   # optimizations off vs all
    report.passed, report.culprits, report.html("report.html")

``inspect``, ``run`` and ``compare`` are the C++ core's library calls (the same ones the
``onnxprobe`` command runs), with the GIL released while they work. ``onnxprobe.torch`` is the
PyTorch companion (export, capture). Errors raise ``onnxprobe.Error`` subclasses carrying the
command line's one-line messages. The ONNX Runtime library used: see ``onnxprobe.ort_library()``.
"""
from . import _onnxprobe
from ._api import RunResult, compare, import_polygraphy, inspect, run
from ._generate import GenerationReport, generate
from ._errors import (BackendError, Corrupt, Error, InvalidArgument, IoError, NotFound, ResourceExhausted,
                      Unsupported)
from ._cli import command_path, preload_library
from ._ray import compare_on_ray
from ._report import Report
from ._samples import MergedReport, SamplesReport, merge
from ._runtime import default_library as ort_library

__version__ = _onnxprobe.__version__

__all__ = ["command_path", "preload_library", "inspect", "run", "compare", "merge", "compare_on_ray", "SamplesReport", "MergedReport", "generate", "GenerationReport", "import_polygraphy", "Report", "RunResult", "ort_library", "Error", "InvalidArgument",
           "NotFound", "IoError", "Corrupt", "Unsupported", "BackendError", "ResourceExhausted"]
