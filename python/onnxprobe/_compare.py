"""compare(): a typed wrapper over the library's one front door for ``onnxprobe compare``
(``onnxprobe/command/compare_plan.h``). Keywords become the command line's option occurrences
(``b_opt_level="all"`` is ``--b-opt-level all``, ``dims={"batch": 1}`` is ``--dim batch=1``) and
the library parses and checks them with the command line's declarations, defaults, rules and
messages; only values the command line names as files (input arrays, a rename dict) travel as
values. Nothing here decides what a request means."""
from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union

from . import _commands, _onnxprobe, _progress, _runtime
from . import _request as rq
from ._errors import InvalidArgument, error_class
from ._report import Report, SweepReport
from ._samples import SamplesReport

PathLike = Union[str, "os.PathLike[str]"]
Tolerances = Mapping[str, Tuple[float, float]]

# keywords whose flag is not "--" + the keyword with '-' for '_'
_FLAG_OF = {
    "shapes": "--shape", "dims": "--dim", "inputs_dir": "--inputs",
    "provider_options": "--provider-option", "a_provider_options": "--a-provider-option",
    "b_provider_options": "--b-provider-option",
}
# keywords the wrapper turns into flags or values itself
_OWN = ("a", "b", "inputs", "ranges", "map", "diagnose", "bisect", "progress")


_OPTIONS = {}


def _own_flags(diagnose, bisect, map):
    pairs, rename = [], {}
    if diagnose == "all":
        pairs.append(("--diagnose", ""))
    elif diagnose is False:
        pairs.append(("--no-diagnose", ""))
    elif diagnose is not True and diagnose is not None:
        raise InvalidArgument(f"diagnose must be True, 'all' or False, not {diagnose!r}")
    if bisect is True:
        pairs.append(("--bisect", ""))
    elif bisect not in (None, False):
        pairs.append(("--bisect-per-run", _commands._text(bisect, "bisect")))
    if isinstance(map, Mapping):
        rename = {str(k): str(v) for k, v in map.items()}
    elif map is not None:
        pairs.append(("--map", rq._path(map, "map")))
    return pairs, rename


@_commands.front_door("compare")
def compare(a: PathLike, b: Optional[PathLike] = None, *,
            inputs: Any = None, shapes: Optional[Mapping[str, Sequence[int]]] = None,
            dims: Optional[Mapping[str, int]] = None, ranges: Any = None, seed: Optional[int] = None,
            allow_nonfinite_inputs: bool = False,
            provider: Optional[str] = None, provider_options: Optional[Mapping[str, Any]] = None,
            provider_library: Optional[PathLike] = None,
            opt_level: Optional[str] = None, intra_threads: Optional[int] = None,
            inter_threads: Optional[int] = None, parallel: bool = False, ort_lib: Optional[PathLike] = None,
            ort_version: Optional[str] = None, custom_op_lib: Any = None, allow_fallback: bool = False,
            platform: Optional[str] = None, remote: Optional[str] = None,
            session_config: Optional[Mapping[str, Any]] = None,
            a_provider: Optional[str] = None, a_provider_options: Optional[Mapping[str, Any]] = None,
            a_provider_library: Optional[PathLike] = None,
            a_opt_level: Optional[str] = None, a_intra_threads: Optional[int] = None,
            a_inter_threads: Optional[int] = None, a_parallel: bool = False,
            a_ort_lib: Optional[PathLike] = None, a_ort_version: Optional[str] = None,
            a_custom_op_lib: Any = None, a_allow_fallback: bool = False, a_platform: Optional[str] = None,
            a_remote: Optional[str] = None, a_session_config: Optional[Mapping[str, Any]] = None,
            b_provider: Optional[str] = None, b_provider_options: Optional[Mapping[str, Any]] = None,
            b_provider_library: Optional[PathLike] = None,
            b_opt_level: Optional[str] = None, b_intra_threads: Optional[int] = None,
            b_inter_threads: Optional[int] = None, b_parallel: bool = False,
            b_ort_lib: Optional[PathLike] = None, b_ort_version: Optional[str] = None,
            b_custom_op_lib: Any = None, b_allow_fallback: bool = False, b_platform: Optional[str] = None,
            b_remote: Optional[str] = None, b_session_config: Optional[Mapping[str, Any]] = None,
            atol: Optional[float] = None, rtol: Optional[float] = None, absolute_atol: bool = False,
            tol: Optional[Tolerances] = None, op_tol: Optional[Tolerances] = None,
            judge: Optional[str] = None, rel_eps: Optional[float] = None,
            tensors: Any = None, op_types: Any = None, regex: Optional[str] = None, map: Any = None,
            topk: Any = None, model: Optional[PathLike] = None, explain_optimizations: bool = False,
            noise_floor: Optional[PathLike] = None, max_memory: Union[None, int, str] = None,
            isolate_runtime: bool = False, isolate: Optional[str] = None, repro: Optional[PathLike] = None,
            bisect: Union[bool, int, None] = False, fixed_tolerance: bool = False,
            diagnose: Union[bool, str] = True, knowledge: Optional[PathLike] = None,
            inputs_dir: Optional[PathLike] = None, samples: Optional[int] = None, shard: Any = None,
            progress: Union[bool, Callable[[str, int, int], Any], None] = None,
            latency_runs: Optional[int] = None, quant: Optional[str] = None,
            quant_min_sqnr: Optional[float] = None, bisect_per_run: Optional[int] = None,
            sweep: Optional[Mapping[str, Any]] = None, reference: Optional[str] = None):
    """Compares side B against side A (``onnxprobe compare A [B]``) and returns a Report.

    Keywords are compare's flags (docs/python.md): ``b_opt_level="all"`` is ``--b-opt-level all``;
    a dict for KEY=VALUE flags (``dims={"batch": 1}``, ``session_config={...}``,
    ``provider_options={...}``, ``tol={regex: (atol, rtol)}``, ``sweep={"batch": [1, 4]}``); a
    list for repeatable ones. The library reads them with the command line's parser: defaults,
    rules and error messages are the command line's.

    A and B: an .onnx model (run live) or a dump (folder or .npz, also a PyTorch capture); B
    defaults to A, told apart by the a_*/b_* settings. Session settings without a prefix apply
    to both sides. inputs: a file, a list of files, or a dict name -> numpy array or file
    (``--input``); ranges: (lo, hi) for every input or {name: (lo, hi)}; map: a mapping file or
    a dict {name in A: name in B}; bisect: True (4 tensors per run) or the tensors per run;
    diagnose: True (the first two introduced culprits), "all" (--diagnose) or False
    (--no-diagnose); inputs_dir / samples: several input samples (``--inputs``, ``--samples``;
    returns a SamplesReport), shard "I/N" or (I, N); sweep: one comparison per combination
    (returns a SweepReport); reference="exact": every row also shows both sides' distance from
    a float64 computation (docs/metrics.md). isolate_runtime: live sides run in child
    processes (refused, Unsupported, once this process has loaded ONNX Runtime).

    progress: True (a tqdm bar per phase when tqdm is installed, else a line on stderr) or a
    callable (phase, done, total): "compare" rows done of rows, "isolate" runs so far (total 0),
    "sample" samples done of samples; an exception it raises (Ctrl-C included) stops the
    comparison before its next batch of tensors, isolated run or sample, and is raised then.

    The output flags are the report's methods: ``json(path)``, ``html(path)``, ``junit(path)``,
    ``model_explorer(path)``, ``text(quiet)``. A comparison that stops because a side failed
    mid-way raises the error with the partial report as its ``report`` attribute.
    """
    given = locals()
    if not _OPTIONS:
        _OPTIONS.update(_commands.keyword_options("compare", compare, _FLAG_OF, _OWN))
    positionals = [rq._path(a, "side")] + ([] if b is None else [rq._path(b, "side")])
    pairs, arrays = _commands.input_occurrences(inputs)
    pairs += _commands.range_occurrences(ranges)
    own, rename = _own_flags(diagnose, bisect, map)
    pairs += own
    for kw, option in _OPTIONS.items():
        pairs += _commands.occurrences(option, given[kw])
    plan = _onnxprobe.compare_plan(positionals, pairs, arrays, rename, _runtime.resolve())
    on_progress, close = _progress.callback(progress)
    try:
        if plan.kind == "sweep":
            return SweepReport(_onnxprobe.compare_sweep(plan, on_progress))
        if plan.kind == "samples":
            return _unless_aborted(SamplesReport(_onnxprobe.compare_samples(plan, on_progress)))
        return _unless_aborted(Report(_onnxprobe.compare(plan, on_progress)))
    finally:
        close()


def _unless_aborted(report):
    """The report, or, when a side failed mid-way, its error raised with the partial report as
    its ``report`` attribute."""
    native = report._native
    if native.aborted:
        err = error_class(native.abort_code)(native.abort_message.replace("\n", " ").rstrip())
        err.report = report
        raise err
    return report
