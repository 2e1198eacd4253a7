"""Keyword arguments (named after the command line's flags) turned into the plain dicts the
extension module converts into library requests. Only argument shaping happens here: every
check on models, inputs and tensors is the library's.

Dict keys, as python/bindings/request.cc reads them:
  session   provider, provider_options, opt_level, intra_threads, inter_threads, parallel,
            custom_op_libraries
  inputs    files, tensors (name -> array), shapes, dims, ranges, seed, allow_nonfinite
  selection names, op_types, regex
  side      path, session, session_given, ort_library
  compare   a, b, inputs, inputs_given, isolate_runtime, exact_reference, policy (atol, rtol, scale_atol, rules, judge, rel_eps), selection,
            rename, topk, max_memory, mapping_file, graph_model, noise_floor_file,
            bisect_per_run, isolate, repro_dir, explain_optimizations, latency_runs, quant,
            quant_min_sqnr, diagnose_cases, knowledge_file
"""
import os
import re

from . import _onnxprobe, _runtime
from ._errors import InvalidArgument



def _path(p):
    return os.fspath(p)


def names(v):
    if v is None:
        return None
    if isinstance(v, (str, os.PathLike)):
        return [s for s in str(v).split(",") if s]
    return [str(s) for s in v]


def _paths(v):
    if v is None:
        return []
    return [v] if isinstance(v, (str, os.PathLike)) else list(v)


def inputs_dict(inputs=None, shapes=None, dims=None, ranges=None, seed=0, allow_nonfinite=False):
    """inputs: None (seeded random), a file (.npy, .npz, .pb, dump), a list of files, or a dict
    name -> numpy array or file."""
    files, tensors = [], {}
    if inputs is None:
        pass
    elif isinstance(inputs, (str, os.PathLike)):
        files.append(_path(inputs))
    elif isinstance(inputs, dict):
        for name, v in inputs.items():
            if isinstance(v, (str, os.PathLike)):
                files.append(f"{name}={_path(v)}")
            else:
                tensors[str(name)] = v
    else:
        try:
            files = [_path(f) for f in inputs]
        except TypeError:
            raise InvalidArgument("inputs must be a file, a list of files or a dict name -> array or file, "
                                  f"not {type(inputs).__name__}") from None
    for name, n in (dims or {}).items():
        if int(n) < 0:
            raise InvalidArgument(f"dimension {name} must not be negative")
    if isinstance(ranges, (tuple, list)):
        ranges = {"*": ranges}
    return {
        "files": files,
        "tensors": tensors,
        "shapes": {str(k): [int(d) for d in v] for k, v in (shapes or {}).items()},
        "dims": {str(k): int(v) for k, v in (dims or {}).items()},
        "ranges": {str(k): (float(v[0]), float(v[1])) for k, v in (ranges or {}).items()},
        "seed": int(seed) % (1 << 64),  # as the command line reads --seed
        "allow_nonfinite": bool(allow_nonfinite),
    }


def session_dict(provider=None, provider_options=None, opt_level=None, intra_threads=None, inter_threads=None,
                 parallel=None, custom_op_lib=None, allow_fallback=None, session_config=None):
    for what, n in (("intra_threads", intra_threads), ("inter_threads", inter_threads)):
        if n is not None and not 0 <= int(n) <= 4096:
            raise InvalidArgument(f"{what} must be between 0 and 4096")
    return {
        "provider": provider,
        "provider_options": {str(k): str(v) for k, v in (provider_options or {}).items()},
        "opt_level": None if opt_level is None else str(opt_level),
        "intra_threads": None if intra_threads is None else int(intra_threads),
        "inter_threads": None if inter_threads is None else int(inter_threads),
        "parallel": None if parallel is None else bool(parallel),
        "custom_op_libraries": [_path(p) for p in _paths(custom_op_lib)],
        "allow_fallback": None if allow_fallback is None else bool(allow_fallback),
        "session_config": {str(k): str(v) for k, v in (session_config or {}).items()},
    }


def ort_library(ort_lib=None, ort_version=None):
    if ort_lib and ort_version:
        raise InvalidArgument("give ort_lib or ort_version, not both")
    if ort_version:
        return _onnxprobe.ort_library_for_version(str(ort_version))
    if ort_lib:
        return _path(ort_lib)
    return _runtime.resolve()


def side_dict(path, shared, own):
    """One side: the shared session settings with this side's own on top (None = not given).
    session_given, as on the command line: the side's own settings only (a dump side refuses
    them)."""
    merged = dict(shared)
    merged.update({k: v for k, v in own.items() if v is not None})
    given = {k: v for k, v in merged.items() if v is not None}
    return {
        "path": _path(path),
        "session": session_dict(**{k: v for k, v in given.items() if k not in ("ort_lib", "ort_version")}),
        "session_given": any(v is not None for v in own.values()),
        "ort_library": ort_library(given.get("ort_lib"), given.get("ort_version")),
    }


def parse_bytes(v):
    """512M, 2G, or a number of bytes."""
    if v is None:
        return 0
    if isinstance(v, int):
        return v
    m = re.fullmatch(r"([0-9.]+)\s*(B|K|KB|KiB|M|MB|MiB|G|GB|GiB)?", str(v).strip())
    if not m or float(m.group(1)) <= 0:
        raise InvalidArgument(f"bad byte size '{v}' (expected e.g. 512M or 2G)")
    unit = (m.group(2) or "B")[0]
    return int(float(m.group(1)) * {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[unit])


def policy_dict(atol, rtol, absolute_atol, tol, op_tol, judge, rel_eps):
    rules = [(str(p), False, float(t[0]), float(t[1])) for p, t in (tol or {}).items()]
    rules += [(str(p), True, float(t[0]), float(t[1])) for p, t in (op_tol or {}).items()]
    return {
        "atol": float(atol),
        "rtol": float(rtol),
        "scale_atol": not absolute_atol,
        "rules": rules,
        "judge": str(judge),
        "rel_eps": None if rel_eps is None else float(rel_eps),
    }


def selection_dict(tensors=None, op_types=None, regex=None):
    return {"names": names(tensors), "op_types": names(op_types), "regex": regex}
