"""inspect and run: one library call each (compare: _compare.py), keyword arguments named after the command
line's flags (``--b-opt-level all`` is ``b_opt_level="all"``, ``--dim batch=1`` is
``dims={"batch": 1}``)."""
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _commands, _onnxprobe, _runtime
from . import _request as rq
from ._errors import InvalidArgument


@_commands.front_door("inspect")
def inspect(path, tensors=False):
    """The summary of a model, or of a dump (folder or .npz), as a dict: the document
    ``onnxprobe inspect --json`` prints (with ``tensors=True``, ``--tensors`` too). The inspect
    command runs it: its errors are the command line's."""
    pairs = [("--tensors", "")] if tensors is True else _commands.occurrences(
        {"name": "--tensors", "value_name": "", "bare_value": "", "repeatable": False}, tensors)
    return _commands.execute("inspect", [rq._path(path, "model")], pairs, default_runtime=False).to_dict()


PathLike = Union[str, "os.PathLike[str]"]


class RunResult(dict):
    """Captured tensors by name, in topological order (numpy arrays sharing the capture's
    memory). ``inputs``: the inputs the run used (given or seeded random); ``skipped``: tensors
    that could not be captured, with the reason."""

    def __init__(self, captured, inputs, skipped):
        super().__init__(captured)
        self.inputs = dict(inputs)
        self.skipped = list(skipped)


_RUN_FLAG_OF = {"shapes": "--shape", "dims": "--dim", "inputs_dir": "--inputs",
                "provider_options": "--provider-option", "output": "-o"}
_RUN_OWN = ("model", "inputs", "ranges", "progress")
# keywords that write a dump: run() then returns the command's CommandResult
_WRITES = ("output", "json", "inputs_dir", "samples", "fail_on_nonfinite", "check_observer", "capture_fused")
_RUN_OPTIONS = {}


@_commands.front_door("run")
def run(model: PathLike, inputs: Any = None, tensors: Any = None, op_types: Any = None,
        regex: Optional[str] = None, opt_level: Optional[str] = None, provider: Optional[str] = None,
        dims: Optional[Mapping[str, int]] = None, seed: Optional[int] = None, *,
        shapes: Optional[Mapping[str, Sequence[int]]] = None, ranges: Any = None,
        provider_options: Optional[Mapping[str, Any]] = None, provider_library: Optional[PathLike] = None,
        intra_threads: Optional[int] = None,
        inter_threads: Optional[int] = None, parallel: bool = False, ort_lib: Optional[PathLike] = None,
        ort_version: Optional[str] = None, custom_op_lib: Any = None, max_memory: Union[None, int, str] = None,
        allow_fallback: bool = False, platform: Optional[str] = None, remote: Optional[str] = None,
        session_config: Optional[Mapping[str, Any]] = None, allow_nonfinite_inputs: bool = False,
        output: Optional[PathLike] = None, force: bool = False, json: Union[None, bool, PathLike] = None,
        quiet: bool = False, inputs_dir: Optional[PathLike] = None, samples: Optional[int] = None,
        fail_on_nonfinite: bool = False, check_observer: bool = False, capture_fused: bool = False,
        progress: Union[bool, Callable[[str, int, int], Any], None] = None, precision: Optional[str] = None):
    """Runs `model` and returns its intermediate tensors (``onnxprobe run``): every capturable
    tensor, or those named in `tensors`, produced by `op_types`, or matching `regex`. Keywords are
    run's flags, read by the library's parser (the command line's defaults and messages).

    inputs: None (seeded random, `seed`), a file (.npy, .npz, .pb, dump), a list of files, or a
    dict name -> numpy array or file. Raises onnxprobe.Error subclasses on bad input
    (InvalidArgument, NotFound, Corrupt, ...) and BackendError when the runtime fails.

    With `output` (a dump folder or FILE.npz), `inputs_dir` / `samples` (a dump per sample under
    `output`), `json`, `fail_on_nonfinite`, `check_observer` or `capture_fused`, the tensors are
    written as ``onnxprobe run -o`` writes them and a CommandResult is returned (its
    ``to_dict()`` is ``--json``'s document; exit code 1 when a NaN/Inf tensor was found or the
    observer check failed); inputs are then files (not arrays). precision: "float32" (the model
    as it is) or "float64" (``--precision float64``: its exact reference, every floating-point
    tensor computed in float64; written with output= only).
    """
    given = locals()
    if not _RUN_OPTIONS:
        _RUN_OPTIONS.update(_commands.keyword_options("run", run, _RUN_FLAG_OF, _RUN_OWN))
    pairs, arrays = _commands.input_occurrences(inputs)
    pairs += _commands.range_occurrences(ranges)
    for kw, option in _RUN_OPTIONS.items():
        pairs += _commands.occurrences(option, given[kw])
    positionals = [rq._path(model, "model")]
    if any(given[k] not in (None, False) for k in _WRITES):
        if arrays:
            raise InvalidArgument("inputs: arrays cannot be written with output=...; give files (.npy, .npz, .pb)")
        runtime_given = any(given[k] for k in ("ort_lib", "ort_version", "platform", "remote"))
        return _commands.execute("run", positionals, pairs, progress, default_runtime=not runtime_given)
    if progress not in (None, False):
        raise InvalidArgument("progress does nothing without output= (the tensors are returned, nothing is written)")
    plan = _onnxprobe.capture_plan(positionals, pairs, arrays, _runtime.resolve())
    captured, used, skipped = _onnxprobe.run(plan)
    return RunResult(captured, used, skipped)


def import_polygraphy(results, output, *, inputs=None, model=None, runner=None, iteration=0):
    """Writes Polygraphy's saved results (``polygraphy run --save-outputs``; ``inputs``: its
    ``--save-inputs`` file) as a dump at `output` (``onnxprobe import-polygraphy``), which
    compare() and run() read as a side; returns what was imported as a dict (runners, runner,
    iterations, tensors, inputs, not_in_model)."""
    return _onnxprobe.import_polygraphy(rq._path(results), rq._path(output),
                                        "" if inputs is None else rq._path(inputs),
                                        "" if model is None else rq._path(model),
                                        "" if runner is None else str(runner), int(iteration))
