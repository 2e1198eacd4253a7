"""inspect and run: one library call each (compare: _compare.py), keyword arguments named after the command
line's flags (``--b-opt-level all`` is ``b_opt_level="all"``, ``--dim batch=1`` is
``dims={"batch": 1}``)."""
import json
import os

from . import _onnxprobe
from . import _request as rq
from ._errors import InvalidArgument


def inspect(path, tensors=False):
    """The model's summary as a dict: the document ``onnxprobe inspect --json`` prints (with
    ``tensors=True``, ``--tensors`` too)."""
    return json.loads(_onnxprobe.inspect_json(rq._path(path, "model"), bool(tensors)))


class RunResult(dict):
    """Captured tensors by name, in topological order (numpy arrays sharing the capture's
    memory). ``inputs``: the inputs the run used (given or seeded random); ``skipped``: tensors
    that could not be captured, with the reason."""

    def __init__(self, captured, inputs, skipped):
        super().__init__(captured)
        self.inputs = dict(inputs)
        self.skipped = list(skipped)


def run(model, inputs=None, tensors=None, op_types=None, regex=None, opt_level="disabled", provider="CPU",
        dims=None, seed=0, *, shapes=None, ranges=None, provider_options=None, intra_threads=None,
        inter_threads=None, parallel=False, ort_lib=None, ort_version=None, custom_op_lib=None, max_memory=None,
        allow_fallback=False, platform=None, remote=None, session_config=None, allow_nonfinite_inputs=False, output=None, force=False,
        json=None, quiet=False, inputs_dir=None, samples=None, fail_on_nonfinite=False, check_observer=False,
        capture_fused=False, progress=None, precision="float32"):
    """Runs `model` and returns its intermediate tensors (``onnxprobe run``): every capturable
    tensor, or those named in `tensors`, produced by `op_types`, or matching `regex`.

    inputs: None (seeded random, `seed`), a file (.npy, .npz, .pb, dump), a list of files, or a
    dict name -> numpy array or file. Raises onnxprobe.Error subclasses on bad input
    (InvalidArgument, NotFound, Corrupt, ...) and BackendError when the runtime fails.

    With `output` (a dump folder or FILE.npz), `inputs_dir` / `samples` (a dump per sample under
    `output`), `fail_on_nonfinite`, `check_observer` or `capture_fused`, the tensors are written
    as ``onnxprobe run -o`` writes them and a CommandResult is returned (its ``to_dict()`` is
    ``--json``'s document; exit code 1 when a NaN/Inf tensor was found or the observer check
    failed); inputs are then files (not arrays). precision: "float32" (the model as it is) or
    "float64" (``--precision float64``: its exact reference, every floating-point tensor computed
    in float64; written with output= only).
    """
    if precision not in ("float32", "float64"):
        raise InvalidArgument(f"--precision: expected float32 or float64, got '{precision}'")
    if precision == "float64" and output is None and inputs_dir is None and samples is None:
        raise InvalidArgument("precision='float64' writes a dump: give output= (a folder or FILE.npz)")
    if (output is not None or inputs_dir is not None or samples is not None or json not in (None, False)
            or fail_on_nonfinite or check_observer or capture_fused):
        return _run_to_dump(locals())
    idle = [k for k, v in (("force", force), ("quiet", quiet), ("progress", progress)) if v not in (None, False)]
    if idle:
        raise InvalidArgument(f"{idle[0]} does nothing without output= (the tensors are returned, nothing is written)")
    session = rq.session_dict(provider, provider_options, opt_level, intra_threads, inter_threads, parallel,
                              custom_op_lib, allow_fallback, session_config)
    selection = rq.selection_dict(tensors, op_types, regex)
    given = rq.inputs_dict(inputs, shapes, dims, ranges, seed, allow_nonfinite_inputs)
    captured, used, skipped = _onnxprobe.run(rq._path(model, "model"), selection, given, session,
                                             rq.ort_library(ort_lib, ort_version, platform, remote),
                                             rq.parse_bytes(max_memory))
    return RunResult(captured, used, skipped)


def _run_to_dump(kw):
    """run() with its keywords as the ``run`` command's flags (onnxprobe/_commands.py)."""
    from ._commands import build_one
    files = kw["inputs"]
    if isinstance(files, dict):
        if not all(isinstance(v, (str, os.PathLike)) for v in files.values()):
            raise InvalidArgument("inputs: arrays cannot be written with output=...; give files (.npy, .npz, .pb)")
        files = [f"{k}={os.fspath(v)}" for k, v in files.items()]
    elif isinstance(files, (str, os.PathLike)):
        files = [files]
    ranges = kw["ranges"]
    if isinstance(ranges, (tuple, list)):
        ranges = {"*": ranges}
    flags = dict(input=files, shape=kw["shapes"], dim=kw["dims"], range=ranges, seed=kw["seed"],
                 tensors=rq.names(kw["tensors"]), op_types=rq.names(kw["op_types"]), regex=kw["regex"],
                 opt_level=kw["opt_level"], provider=kw["provider"], provider_option=kw["provider_options"],
                 intra_threads=kw["intra_threads"], inter_threads=kw["inter_threads"], parallel=kw["parallel"],
                 ort_lib=kw["ort_lib"], ort_version=kw["ort_version"], custom_op_lib=kw["custom_op_lib"],
                 platform=kw["platform"], remote=kw["remote"], max_memory=kw["max_memory"], allow_fallback=kw["allow_fallback"],
                 session_config=kw["session_config"], allow_nonfinite_inputs=kw["allow_nonfinite_inputs"],
                 output=kw["output"], force=kw["force"], json=kw["json"], quiet=kw["quiet"],
                 inputs=kw["inputs_dir"], samples=kw["samples"], fail_on_nonfinite=kw["fail_on_nonfinite"],
                 check_observer=kw["check_observer"], capture_fused=kw["capture_fused"], progress=kw["progress"],
                 precision=None if kw["precision"] == "float32" else kw["precision"])
    return build_one("run")(kw["model"], **flags)


def import_polygraphy(results, output, *, inputs=None, model=None, runner=None, iteration=0):
    """Writes Polygraphy's saved results (``polygraphy run --save-outputs``; ``inputs``: its
    ``--save-inputs`` file) as a dump at `output` (``onnxprobe import-polygraphy``), which
    compare() and run() read as a side; returns what was imported as a dict (runners, runner,
    iterations, tensors, inputs, not_in_model)."""
    return _onnxprobe.import_polygraphy(rq._path(results), rq._path(output),
                                        "" if inputs is None else rq._path(inputs),
                                        "" if model is None else rq._path(model),
                                        "" if runner is None else str(runner), int(iteration))
