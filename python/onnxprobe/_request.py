"""generate()'s keyword arguments turned into the plain dicts the extension module converts into
its request (python/bindings/request.cc). compare() and run() build no dict: their keywords go
through the library's front door as the command line's options (_compare.py, _api.py).

Dict keys:
  session   provider, provider_options, opt_level, intra_threads, inter_threads, parallel,
            custom_op_libraries
  side      path, session, session_given, ort_library
"""
import os

from . import _onnxprobe, _runtime
from ._errors import InvalidArgument



def _path(p, what="path"):
    if not isinstance(p, (str, os.PathLike)):
        raise InvalidArgument(f"{what}: expected a path (str or os.PathLike), not {type(p).__name__} {p!r}")
    return os.fspath(p)


def tolerance(value, flag):
    """atol / rtol, read as the command line reads --atol / --rtol (same messages)."""
    if isinstance(value, bool):
        raise InvalidArgument(f"bad {flag} '{value}' (expected a number >= 0)")
    return _onnxprobe.parse_tolerance(str(value), flag)


def _paths(v):
    if v is None:
        return []
    return [v] if isinstance(v, (str, os.PathLike)) else list(v)


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


def ort_library(ort_lib=None, ort_version=None, platform=None, remote=None):
    if ort_lib and ort_version:
        raise InvalidArgument("give ort_lib or ort_version, not both")
    if platform or remote:  # the library resolves them as --platform/--remote do (a runtime locator)
        return _onnxprobe.resolve_runtime(_path(ort_lib) if ort_lib else "", str(ort_version or ""),
                                          str(platform or ""), str(remote or ""))
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
        "path": _path(path, "side"),
        "session": session_dict(**{k: v for k, v in given.items() if k not in ("ort_lib", "ort_version", "platform", "remote")}),
        "session_given": any(v is not None for v in own.values()),
        "ort_library": ort_library(given.get("ort_lib"), given.get("ort_version"), given.get("platform"),
                                   given.get("remote")),
    }


def parse_bytes(v, flag="--max-memory"):
    """512M, 2G, or a number of bytes: the command line's grammar and messages."""
    if v is None:
        return 0
    if isinstance(v, bool):
        raise InvalidArgument(f"{flag}: bad byte size '{v}' (expected a positive size, e.g. 512M)")
    return _onnxprobe.parse_bytes(str(v), flag)


def policy_dict(atol, rtol, absolute_atol, tol, op_tol, judge, rel_eps):
    rules = [(str(p), False, float(t[0]), float(t[1])) for p, t in (tol or {}).items()]
    rules += [(str(p), True, float(t[0]), float(t[1])) for p, t in (op_tol or {}).items()]
    return {
        "atol": tolerance(atol, "--atol"),
        "rtol": tolerance(rtol, "--rtol"),
        "scale_atol": not absolute_atol,
        "rules": rules,
        "judge": str(judge),
        "rel_eps": None if rel_eps is None else float(rel_eps),
    }
