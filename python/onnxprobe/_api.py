"""inspect, run and compare: one library call each, keyword arguments named after the command
line's flags (``--b-opt-level all`` is ``b_opt_level="all"``, ``--dim batch=1`` is
``dims={"batch": 1}``)."""
import json
import os

from . import _onnxprobe, _progress
from . import _request as rq
from ._errors import InvalidArgument, error_class
from ._report import Report, SweepReport
from ._samples import SamplesReport, parse_shard


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


def compare(a, b=None, *, inputs=None, shapes=None, dims=None, ranges=None, seed=0,
            provider=None, provider_options=None, opt_level=None, intra_threads=None, inter_threads=None,
            parallel=None, ort_lib=None, ort_version=None, custom_op_lib=None, allow_fallback=None, platform=None,
            remote=None, a_provider=None, a_provider_options=None, a_opt_level=None, a_intra_threads=None, a_inter_threads=None,
            a_parallel=None, a_ort_lib=None, a_ort_version=None, a_custom_op_lib=None, a_allow_fallback=None,
            a_platform=None, a_remote=None,
            b_provider=None, b_provider_options=None, b_opt_level=None, b_intra_threads=None, b_inter_threads=None,
            b_parallel=None, b_ort_lib=None, b_ort_version=None, b_custom_op_lib=None, b_allow_fallback=None,
            b_platform=None, b_remote=None,
            atol=1e-5, rtol=1e-3, absolute_atol=False, tol=None, op_tol=None, judge="elementwise", rel_eps=None,
            tensors=None, op_types=None, regex=None, map=None, topk=None, model=None,
            explain_optimizations=False, noise_floor=None, max_memory=None, isolate_runtime=False,
            isolate="frontier", repro=None, bisect=False, fixed_tolerance=False, session_config=None,
            a_session_config=None, b_session_config=None, diagnose=True, knowledge=None,
            inputs_dir=None, samples=None, shard=None, progress=None, latency_runs=None, quant=None,
            quant_min_sqnr=None, bisect_per_run=None, allow_nonfinite_inputs=False, sweep=None, reference=None):
    """Compares side B against side A (``onnxprobe compare A [B]``) and returns a Report.

    A and B: an .onnx model (run live) or a dump (folder or .npz, also a PyTorch capture); B
    defaults to A, told apart by the a_*/b_* settings. Session settings without a prefix apply
    to both sides. tol / op_tol: {regex or op type: (atol, rtol)} (op_tol wins over tol); map: a
    mapping file or a dict {name in A: name in B}; bisect: True (4 tensors per run) or the
    tensors per run; isolate: "frontier", "failing", "all" or "none"; allow_fallback: the CPU
    provider may run the nodes another provider does not take (report.placement lists them;
    refused by default, naming them); isolate_runtime: live sides
    run in child processes, so a crashing runtime raises BackendError instead of ending Python
    (the library refuses it, raising Unsupported, once this process has loaded ONNX Runtime).
    fixed_tolerance: accepted for older callers; every row is judged at the given tolerance,
    which no error measured upstream raises (docs/metrics.md). session_config: ONNX Runtime
    session configuration entries {key: value} (--session-config). diagnose: True (the first two
    introduced culprits), "all" (--diagnose) or False (--no-diagnose): why each culprit differs,
    with a fix (report.to_dict()["diagnosis"], docs/diagnose.md); knowledge: a knowledge file
    (--knowledge). latency_runs: each live side's latency over N plain runs (--latency-runs; off
    by default). quant: "auto" or "off" and quant_min_sqnr: dB (--quant, --quant-min-sqnr,
    docs/quantization.md). bisect_per_run: tensors per bisection run (--bisect-per-run).
    allow_nonfinite_inputs: run a given input that is NaN/Inf in every value
    (--allow-nonfinite-inputs). sweep: {dimension: [values]}, one comparison per combination
    (--sweep; returns a SweepReport). reference: "exact" (--reference exact) also computes side
    A's model (else B's) in float64 on the same inputs; every row then shows both sides' distance
    from it (``exact_error_a``/``exact_error_b``, ``closer``) and is allowed twice the smaller
    (docs/metrics.md, "The exact reference"). The output flags are the report's methods: ``json(path)``,
    ``html(path)``, ``junit(path)``, ``model_explorer(path)``, ``text(quiet)``.

    Over several input samples (``--inputs DIR``, ``--samples N``): `inputs_dir` a folder of
    samples (.npz files, or ONNX test_data_set_N/ folders) and/or `samples` seeded ones; returns a
    SamplesReport (each tensor aggregated over the samples). `shard`: "I/N" or (I, N), only the
    samples at positions I, I+N, ... (``--shard``), joined with ``onnxprobe.merge``.

    progress: True (a tqdm bar per phase when tqdm is installed, else a line on stderr) or a
    callable (phase, done, total): "compare" rows done of rows, "isolate" runs so far (total 0),
    "sample" samples done of samples; an exception it raises (Ctrl-C included) stops the
    comparison before its next batch of tensors, isolated run or sample, and is raised then.

    A comparison that stops because a side failed mid-way raises the error with the partial
    report as its ``report`` attribute.
    """
    shared = dict(provider=provider, provider_options=provider_options, opt_level=opt_level,
                  intra_threads=intra_threads, inter_threads=inter_threads, parallel=parallel, ort_lib=ort_lib,
                  ort_version=ort_version, custom_op_lib=custom_op_lib, allow_fallback=allow_fallback,
                  session_config=session_config, platform=platform, remote=remote)
    own_a = dict(provider=a_provider, provider_options=a_provider_options, opt_level=a_opt_level,
                 intra_threads=a_intra_threads, inter_threads=a_inter_threads, parallel=a_parallel,
                 ort_lib=a_ort_lib, ort_version=a_ort_version, custom_op_lib=a_custom_op_lib,
                 allow_fallback=a_allow_fallback, session_config=a_session_config, platform=a_platform,
                 remote=a_remote)
    own_b = dict(provider=b_provider, provider_options=b_provider_options, opt_level=b_opt_level,
                 intra_threads=b_intra_threads, inter_threads=b_inter_threads, parallel=b_parallel,
                 ort_lib=b_ort_lib, ort_version=b_ort_version, custom_op_lib=b_custom_op_lib,
                 allow_fallback=b_allow_fallback, session_config=b_session_config, platform=b_platform,
                 remote=b_remote)
    if b is None:
        if all(v is None for v in list(own_a.values()) + list(own_b.values())):
            raise InvalidArgument("one side given and no a_/b_ setting to tell the sides apart "
                                  "(e.g. b_opt_level='all')")
        b = a
    rename, mapping_file = {}, ""
    if isinstance(map, dict):
        rename = {str(k): str(v) for k, v in map.items()}
    elif map is not None:
        mapping_file = os.fspath(map)
    if bisect is True:
        bisect = 4
    if bisect_per_run is not None:
        bisect = int(bisect_per_run)
    request = {
        "a": rq.side_dict(a, shared, own_a),
        "b": rq.side_dict(b, shared, own_b),
        "inputs": rq.inputs_dict(inputs, shapes, dims, ranges, seed, allow_nonfinite_inputs),
        "inputs_given": any(v is not None for v in (inputs, shapes, dims, ranges)),
        "isolate_runtime": bool(isolate_runtime),
        "exact_reference": reference == "exact",
        "policy": rq.policy_dict(atol, rtol, absolute_atol, tol, op_tol, judge, rel_eps),
        "selection": rq.selection_dict(tensors, op_types, regex),
        "rename": rename,
        "topk": rq.names(topk),
        "max_memory": rq.parse_bytes(max_memory),
        "mapping_file": mapping_file,
        "graph_model": "" if model is None else os.fspath(model),
        "noise_floor_file": "" if noise_floor is None else os.fspath(noise_floor),
        "bisect_per_run": int(bisect or 0),
        "isolate": str(isolate),
        "repro_dir": "" if repro is None else os.fspath(repro),
        "explain_optimizations": bool(explain_optimizations),
        "fixed_tolerance": bool(fixed_tolerance),
        "diagnose_cases": 2 if diagnose is True else 16 if diagnose == "all" else 0 if diagnose is False else -1,
        "knowledge_file": "" if knowledge is None else os.fspath(knowledge),
        "latency_runs": None if latency_runs is None else int(latency_runs),
        "quant": None if quant is None else str(quant),
        "quant_min_sqnr": None if quant_min_sqnr is None else float(quant_min_sqnr),
    }
    if reference not in (None, "exact"):
        raise InvalidArgument(f"--reference: expected exact, got '{reference}'")
    if latency_runs is not None and not 0 <= int(latency_runs) <= 10000:
        raise InvalidArgument("latency_runs must be between 0 and 10000")
    if latency_runs and isolate_runtime:
        raise InvalidArgument("latency_runs does nothing with isolate_runtime (latency is measured in this "
                              "process, which an isolated comparison keeps free of the runtime)")
    if request["diagnose_cases"] < 0:
        raise InvalidArgument(f"diagnose must be True, 'all' or False, not {diagnose!r}")
    if request["repro_dir"]:
        _onnxprobe.guard_output(request["repro_dir"], "repro-bundle", [os.fspath(a), os.fspath(b)])
    if sweep is not None:
        if inputs_dir is not None or samples is not None:
            raise InvalidArgument("sweep and inputs_dir/samples: give one (each point of a sweep runs one input)")
        axes = [(str(d), [int(v) for v in (vs if isinstance(vs, (list, tuple)) else [vs])])
                for d, vs in dict(sweep).items()]
        on_progress, close = _progress.callback(progress)
        try:
            return SweepReport(_onnxprobe.compare_sweep(request, axes, on_progress))
        finally:
            close()
    if inputs_dir is not None or samples is not None:
        if inputs is not None:
            raise InvalidArgument("inputs and inputs_dir/samples: give one (each sample brings its inputs)")
        shard_index, shard_count = parse_shard(shard)
        count = 0 if samples is None else int(samples)
        if count < 0:
            raise InvalidArgument(f"samples must not be negative, not {samples}")
        on_progress, close = _progress.callback(progress)
        try:
            native = _onnxprobe.compare_samples(request, "" if inputs_dir is None else os.fspath(inputs_dir),
                                                count, shard_index, shard_count, on_progress)
        finally:
            close()
        return _unless_aborted(SamplesReport(native))
    if shard is not None:
        raise InvalidArgument("shard does nothing without inputs_dir or samples (it splits the samples)")
    on_progress, close = _progress.callback(progress)
    try:
        report = Report(_onnxprobe.compare(request, on_progress))
    finally:
        close()
    return _unless_aborted(report)


def _unless_aborted(report):
    """The report, or, when a side failed mid-way, its error raised with the partial report as
    its ``report`` attribute."""
    native = report._native
    if native.aborted:
        err = error_class(native.abort_code)(native.abort_message.replace("\n", " ").rstrip())
        err.report = report
        raise err
    return report


def import_polygraphy(results, output, *, inputs=None, model=None, runner=None, iteration=0):
    """Writes Polygraphy's saved results (``polygraphy run --save-outputs``; ``inputs``: its
    ``--save-inputs`` file) as a dump at `output` (``onnxprobe import-polygraphy``), which
    compare() and run() read as a side; returns what was imported as a dict (runners, runner,
    iterations, tensors, inputs, not_in_model)."""
    return _onnxprobe.import_polygraphy(rq._path(results), rq._path(output),
                                        "" if inputs is None else rq._path(inputs),
                                        "" if model is None else rq._path(model),
                                        "" if runner is None else str(runner), int(iteration))
