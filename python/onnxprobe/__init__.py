"""onnxprobe: which node made my ONNX model's numbers wrong, and why.

    import onnxprobe
    report = onnxprobe.compare("model.onnx", b_opt_level="all")   # optimizations off vs all
    report.passed, report.culprits, report.html("report.html")

``inspect``, ``run``, ``compare``, ``generate`` and the functions of the other commands
(``lint``, ``diff``, ``determinism``, ``fp16``, ``profile``, ``replay``, ``baseline_save``,
``baseline_check``: keywords are the flags, built from the library's option table) are the C++
core's library calls (the same ones the ``onnxprobe`` command runs), with the GIL released while
they work. ``onnxprobe.torch`` is the
PyTorch companion (export, capture). Errors raise ``onnxprobe.Error`` subclasses carrying the
command line's one-line messages. The ONNX Runtime library used: see ``onnxprobe.ort_library()``.
"""
from . import _onnxprobe
from ._api import RunResult, import_polygraphy, inspect, run
from ._compare import compare
from ._generate import GenerationReport, generate
from ._errors import (BackendError, Corrupt, Error, InvalidArgument, IoError, NotFound, ResourceExhausted,
                      Unsupported)
from ._cli import command_path, preload_library
from ._commands import CommandResult, build as _build_commands
from ._ray import compare_on_ray
from ._report import Report, SweepReport
from ._samples import MergedReport, SamplesReport, merge
from ._runtime import default_library as ort_library

__version__ = _onnxprobe.__version__

# lint, diff, determinism, fp16, profile, replay, baseline_save, baseline_check: built from the
# library's option table (onnxprobe/_commands.py); run() above keeps its in-memory form and
# hands the command's flags to the built one
_COMMANDS = {k: v for k, v in _build_commands().items() if k not in globals()}
globals().update(_COMMANDS)

__all__ = ["command_path", "preload_library", "inspect", "run", "compare", "merge", "compare_on_ray", "SamplesReport", "MergedReport", "generate", "GenerationReport", "import_polygraphy", "Report", "SweepReport", "RunResult", "ort_library", "Error", "InvalidArgument",
           "NotFound", "IoError", "Corrupt", "Unsupported", "BackendError", "ResourceExhausted", "CommandResult"] + sorted(_COMMANDS)
