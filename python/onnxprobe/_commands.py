"""The library's commands as functions, built at import from the library's own option table
(``onnxprobe/command/command.h``: the declarations the command line parses argv with), so a
function's keywords are the command's flags and cannot drift from them:

    onnxprobe.lint("model.onnx", fail_on="warning", disable=["OP003"])   # onnxprobe lint ...
    onnxprobe.baseline_check("model.onnx", "model.baseline", localize=2)

Keywords: a flag's long name without dashes, ``-`` as ``_`` (``--fail-on`` is ``fail_on``,
``-o/--output`` is ``output``). Values: True for a switch (False/None: not given); a string,
number or path; a list or tuple for a repeatable flag (one occurrence each) or joined with ``,``
(``/`` where the flag's value reads ``I/N``); a dict for ``KEY=VALUE``-style flags (``dim={"batch":
1}`` is ``--dim batch=1``). The library checks every value with the command line's messages.
Each call runs in this process (GIL released) and returns a ``CommandResult``.
"""
import functools
import inspect as _inspect
import json as _json
import keyword as _keyword
import numbers
import os
import re

from . import _onnxprobe, _progress, _runtime
from ._errors import InvalidArgument, error_class
from ._request import _path


class CommandResult:
    """What a command returns: ``exit_code`` (0, or 1 for a mismatch / a finding at the fail-on
    level / models that differ), ``passed`` (exit code 0), ``text()`` (what the command line
    prints), ``to_dict()`` (its JSON document, the schema of its ``--json``), ``html()``,
    ``junit()`` and ``document(format)`` where the command writes them (else None), ``notes`` (the command line's
    stderr lines, each led by its kind: "note: ...", "warning: ...")."""

    def __init__(self, command, out):
        self.command = command
        self.exit_code = out["exit_code"]
        self.notes = list(out["notes"])
        self._out = out

    @property
    def passed(self):
        return self.exit_code == 0

    def text(self):
        """The console output of the command line (with a bare ``json=True``: the JSON)."""
        return self._out["text"]

    def json(self):
        """The JSON document as text, or None for a command without one."""
        return self.document("json")

    def to_dict(self):
        """The JSON document as a new dict (what ``--json`` writes)."""
        text = self.document("json")
        if not text:
            raise InvalidArgument(f"onnxprobe {self.command} has no JSON report (see .text())")
        return _json.loads(text)

    def html(self):
        """The HTML report (a self-contained page), or None where the command has none."""
        return self.document("html")

    def junit(self):
        """The JUnit XML document, or None where the command has none."""
        return self.document("junit")

    def document(self, format):
        """The document the command rendered in `format` ("json", "html", "junit", and compare's
        other report formats), or None where it has none."""
        return self._out["documents"].get(format) or None

    def _repr_html_(self):
        return self.html()

    def __repr__(self):
        return f"<onnxprobe.CommandResult {self.command!r} exit code {self.exit_code}>"


_RUNTIME_KEYWORDS = ("ort_lib", "ort_version", "runtime_version")


def function_name(command):
    """The function of a command: "baseline check" -> baseline_check, "import-polygraphy" ->
    import_polygraphy."""
    return command.replace(" ", "_").replace("-", "_")


def keyword_of(option_name):
    """The keyword of a flag: "--fail-on" -> "fail_on"."""
    return option_name.lstrip("-").replace("-", "_")


def _text(value, what):
    if isinstance(value, bool):
        raise InvalidArgument(f"{what}: expected a value, not {value!r} (True/False are for switches)")
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, numbers.Integral):  # numpy's integers too
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    raise InvalidArgument(f"{what}: expected a string, number or path, not {type(value).__name__}")


def _joined(value, sep, what):
    if isinstance(value, (list, tuple)):
        return sep.join(_text(v, what) for v in value)
    return _text(value, what)


def occurrences(option, value):
    """The (flag, value) pairs one keyword's value stands for, as the command line would give
    them (an empty value: a switch)."""
    flag, value_name = option["name"], option["value_name"]
    what = f"{keyword_of(flag)} ({flag})"
    if value is None or value is False:
        return []
    if not value_name:  # a switch
        if value is not True:
            raise InvalidArgument(f"{what} is a switch: give True or False, not {value!r}")
        return [(flag, "")]
    if option["bare_value"] and value is True:  # --json alone
        return [(flag, "")]
    if option["bare_value"] and isinstance(value, (str, os.PathLike)) and not os.fspath(value):
        raise InvalidArgument(f"{what}: an empty file name (give a file, or True for stdout)")
    sep = "/" if "/" in value_name and "," not in value_name else ","
    if isinstance(value, dict):
        kv = ":" if ":" in value_name and "=" not in value_name else "="
        pairs = [(flag, f"{k}{kv}{_joined(v, ',', what)}") for k, v in value.items()]
        if len(pairs) > 1 and not option["repeatable"]:
            raise InvalidArgument(f"{what} takes one {value_name}, got {len(pairs)}")
        return pairs
    if isinstance(value, (list, tuple)) and option["repeatable"]:
        return [(flag, _joined(v, sep, what)) for v in value]
    return [(flag, _joined(value, sep, what))]


def bind(signature, command, args, kwargs):
    """signature.bind(*args, **kwargs); a keyword the command has no option for, or a missing or
    extra positional, raises the command line's InvalidArgument for the same mistake (the
    library checks them: ``compare: unknown option '--nosuch' (see onnxprobe compare --help)``)."""
    try:
        return signature.bind(*args, **kwargs)
    except TypeError:
        params = signature.parameters.values()
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        unknown = [k for k in kwargs if k not in signature.parameters]
        missing = [p for p in positional[len(args):] if p.default is p.empty and p.name not in kwargs]
        extra = len(args) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params)
        if unknown or missing or extra:
            texts = [os.fspath(a) if isinstance(a, (str, os.PathLike)) else str(a) for a in args]
            flags = [("--" + k.replace("_", "-"), "") for k in unknown]
            _onnxprobe.check_arguments(command, texts, flags)
        raise


def execute(command, positionals, pairs, progress=None, default_runtime=True):
    """Runs a library command on option occurrences and returns its CommandResult; with
    `default_runtime`, no runtime named: the one the package resolves (the onnxruntime
    package's in a wheel)."""
    if default_runtime:
        library = _runtime.resolve()
        if library:
            pairs = pairs + [("--ort-lib", library)]
    on_progress, close = _progress.callback(progress)
    try:
        out = _onnxprobe.run_command(command, positionals, pairs, on_progress)
    finally:
        close()
    result = CommandResult(command, out)
    if out["error"] is not None:
        code, message = out["error"]
        error = error_class(code)(message)
        error.result = result  # what the command produced before it failed
        raise error
    return result


def front_door(command):
    """Decorator of a wrapper over `command`'s front door (compare(), run(), ...): an unknown
    keyword or a missing or extra positional raises the command line's message (bind)."""
    def wrap(fn):
        signature = _inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            bind(signature, command, args, kwargs)
            return fn(*args, **kwargs)
        return call
    return wrap


def options_by_flag(command):
    """{flag: option} of `command`'s option table, each spelling of a flag ("-o", "--output")."""
    table = next(t for t in _onnxprobe.command_tables() if t["name"] == command)
    return {n: dict(o, name=n) for o in table["options"] for n in o["names"].split(",")}


def keyword_options(command, fn, flag_of=None, own=()):
    """{keyword: option} of `command`'s option table for each keyword of `fn` (a typed
    wrapper), the flag being "--" + the keyword with '-' for '_' unless `flag_of` names it;
    keywords in `own` are the wrapper's. A keyword without its option fails (the wrapper cannot
    drift from the command)."""
    by_flag = options_by_flag(command)
    out = {}
    for kw, p in _inspect.signature(fn).parameters.items():
        if kw in own or p.kind != p.KEYWORD_ONLY and p.default is p.empty:
            continue
        flag = (flag_of or {}).get(kw, "--" + kw.replace("_", "-"))
        if flag not in by_flag:
            raise RuntimeError(f"{command}(): keyword {kw} has no option {flag} in onnxprobe {command}")
        out[kw] = by_flag[flag]
    return out


def input_occurrences(inputs):
    """--input occurrences for files, and {name: array} for arrays: inputs is a file, a list of
    files, or a dict name -> numpy array or file."""
    if inputs is None:
        return [], {}
    if isinstance(inputs, (str, os.PathLike)):
        return [("--input", _path(inputs, "inputs"))], {}
    if isinstance(inputs, dict):
        pairs, arrays = [], {}
        for name, v in inputs.items():
            if isinstance(v, (str, os.PathLike)):
                pairs.append(("--input", f"{name}={_path(v, 'inputs')}"))
            else:
                arrays[str(name)] = v
        return pairs, arrays
    try:
        return [("--input", _path(f, "inputs")) for f in inputs], {}
    except TypeError:
        raise InvalidArgument("inputs must be a file, a list of files or a dict name -> array or file, "
                              f"not {type(inputs).__name__}") from None


def range_occurrences(ranges):
    """--range: (lo, hi) for every input, {name: (lo, hi)}, or the command line's [NAME:]LO,HI."""
    if ranges is None:
        return []
    if isinstance(ranges, str):
        return [("--range", ranges)]
    if isinstance(ranges, (tuple, list)):
        return [("--range", _joined(ranges, ",", "ranges"))]
    return [("--range", f"{k}:" + _joined(v, ",", "ranges")) for k, v in ranges.items()]


def _docstring(table, names):
    lines = [table["summary"][0].upper() + table["summary"][1:] + f" (``onnxprobe {table['name']}``).", ""]
    if table["footer"]:
        lines += [table["footer"], ""]
    lines.append("Arguments:")
    for p in table["positionals"]:
        lines.append(f"  {names[p['name']]}: {p['help']}" + ("" if p["required"] else " (optional)"))
    for o in table["options"]:
        value = f" {o['value_name']}" if o["value_name"] else ""
        lines.append(f"  {keyword_of(o['name'])} ({o['name']}{value}): {o['help']}")
    lines.append("  progress: True (a tqdm bar), or a callable (phase, done, total); an exception it raises is "
                 "raised again, stopping the call at its next sample where it has samples")
    lines += ["", "Returns a CommandResult; raises onnxprobe.Error subclasses with the command line's messages."]
    return "\n".join(lines)


def _make(table):
    P = _inspect.Parameter
    params, names = [], {}
    for p in table["positionals"]:
        name = re.sub(r"\W", "_", p["name"].split(".")[0].lower())  # "SHARD.json" -> shard
        if _keyword.iskeyword(name):
            name += "_"
        names[p["name"]] = name
        if p["many"]:
            params.append(P(name, P.VAR_POSITIONAL))
        else:
            params.append(P(name, P.POSITIONAL_OR_KEYWORD, default=P.empty if p["required"] else None))
    options = {}
    for o in table["options"]:
        kw = keyword_of(o["name"])
        if kw in options or kw in names.values() or _keyword.iskeyword(kw) or kw == "progress":
            raise RuntimeError(f"onnxprobe {table['name']}: option {o['name']} has no keyword of its own")
        options[kw] = o
        params.append(P(kw, P.KEYWORD_ONLY, default=None))
    params.append(P("progress", P.KEYWORD_ONLY, default=None))
    signature = _inspect.Signature(params)
    command = table["name"]

    def call(*args, **kwargs):
        bound = bind(signature, command, args, kwargs)
        positionals = []
        for p in table["positionals"]:
            v = bound.arguments.get(names[p["name"]])
            for item in (v if p["many"] else [v]):
                if item is not None:
                    positionals.append(_text(item, names[p["name"]]))
        pairs = []
        for kw, o in options.items():
            pairs += occurrences(o, bound.arguments.get(kw))
        # replay's bundle records its own runtime, which a flag would override
        runtime_given = command == "replay" or any(bound.arguments.get(k) for k in _RUNTIME_KEYWORDS)
        return execute(command, positionals, pairs, bound.arguments.get("progress"),
                       default_runtime="ort_lib" in options and not runtime_given)

    call.__name__ = call.__qualname__ = function_name(command)
    call.__signature__ = signature
    call.__doc__ = _docstring(table, names)
    return call


_BUILT = {}


def build():
    """{function name: function} for every library command (built once, at the first call)."""
    if not _BUILT:
        _BUILT.update({function_name(t["name"]): _make(t) for t in _onnxprobe.command_tables()})
    return dict(_BUILT)


def build_one(name):
    """The function of one library command ("run", "baseline check")."""
    return build()[function_name(name)]
