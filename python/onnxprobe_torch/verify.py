"""One call: export (or take an existing ONNX file), capture, compare, and return the JSON report
as a dict. The comparison runs in this process when the onnxprobe package (its compiled library) is
installed, else with the onnxprobe binary."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .capture import capture
from .export import export


class VerifyError(RuntimeError):
    """The comparison could not run (bad input, a runtime failure); the message is onnxprobe's."""


def _library():
    """The installed onnxprobe package, when its compiled library imports; else None."""
    try:
        import onnxprobe
        return onnxprobe if hasattr(onnxprobe, "compare") else None
    except Exception:  # noqa: BLE001 - not installed, or its library does not load here
        return None


def find_onnxprobe(path=None):
    """The onnxprobe binary: `path`, else $ONNXPROBE_BIN, else `onnxprobe` on PATH."""
    for candidate in (path, os.environ.get("ONNXPROBE_BIN"), shutil.which("onnxprobe")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    where = path or os.environ.get("ONNXPROBE_BIN")
    raise VerifyError(f"onnxprobe binary not found{f' at {where}' if where else ''}: pass onnxprobe=PATH, "
                      "set ONNXPROBE_BIN or put onnxprobe on PATH")


def alignment_summary(report):
    """A few lines: how PyTorch activations were paired (counts by method) and the unaligned."""
    rows = report.get("alignment", [])
    if not rows:
        return "no PyTorch alignment in the report"
    by = {}
    for r in rows:
        by[r["method"]] = by.get(r["method"], 0) + 1
    parts = ", ".join(f"{n} {m}" for m, n in sorted(by.items(), key=lambda x: -x[1]))
    lines = [f"alignment of {len(rows)} PyTorch activations: {parts}"]
    unaligned = [r for r in rows if r.get("onnx") is None]
    if unaligned:
        shown = ", ".join(r["torch"] for r in unaligned[:8])
        more = f" and {len(unaligned) - 8} more" if len(unaligned) > 8 else ""
        lines.append(f"unaligned (no ONNX counterpart; listed, never a failure): {shown}{more}")
    return "\n".join(lines)


def verify(model, inputs, onnx_path=None, html=None, *, json_path=None, onnxprobe=None, input_names=None,
           opset=13, workdir=None, extra_args=(), echo=False, float64=True, compare_options=None):
    """Checks an ONNX export of `model` against PyTorch on `inputs` (a tensor, a tuple or a dict of
    keyword arguments) and returns the onnxprobe JSON report as a dict (see docs/report-json.md;
    report["verdict"] is "PASS" or "FAIL").

    Exports with the companion's debugging defaults unless `onnx_path` names an existing model
    (its graph inputs then name the capture's inputs). `html`/`json_path` keep those reports;
    `workdir` keeps the capture (default: a temporary folder). `float64`: see capture().

    Where it compares: with `onnxprobe` (a binary path) or $ONNXPROBE_BIN, that binary, passed
    `extra_args` (command-line options); otherwise the installed onnxprobe package in this process,
    passed `compare_options` (keywords of onnxprobe.compare); without the package, `onnxprobe` on
    PATH. Raises VerifyError when onnxprobe cannot compare (its one-line message), RuntimeError
    when the export fails."""
    library = None if onnxprobe or os.environ.get("ONNXPROBE_BIN") or extra_args else _library()
    if library is None and compare_options:
        raise VerifyError("compare_options are keywords of the onnxprobe package, which is not installed "
                          "here (or a binary was given): pass extra_args for the binary instead")
    binary = None if library is not None else find_onnxprobe(onnxprobe)
    tmp = None if workdir else tempfile.mkdtemp(prefix="onnxprobe_verify_")
    folder = workdir or tmp
    os.makedirs(folder, exist_ok=True)
    try:
        model_file = onnx_path
        if model_file is None:
            model_file = os.path.join(folder, "model.onnx")
            export(model, inputs, model_file, input_names=input_names, opset=opset)
        cap = os.path.join(folder, "capture")
        capture(model, inputs, cap, input_names=input_names, onnx_path=None if input_names else model_file,
                float64=float64)
        if library is not None:
            return _in_process(library, cap, model_file, html, json_path, echo, compare_options or {})
        report_file = json_path or os.path.join(folder, "report.json")
        cmd = [binary, "compare", cap, model_file, "--json", report_file, "-q"]
        if html:
            cmd += ["--html", html]
        cmd += list(extra_args)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            lines = [l for l in (r.stderr or r.stdout).strip().splitlines() if l.strip()]
            raise VerifyError(lines[-1] if lines else f"onnxprobe exited with {r.returncode}")
        with open(report_file) as f:
            report = json.load(f)
        if echo:
            kept = [line for line in r.stdout.splitlines() if json_path or not line.startswith("JSON report: ")]
            print("\n".join(kept))
            print("\n".join(alignment_summary(report).splitlines()[1:]))  # the unaligned modules
        return report
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _in_process(library, cap, model_file, html, json_path, echo, options):
    try:
        rep = library.compare(cap, model_file, **options)
    except TypeError as e:  # an unknown keyword in compare_options
        raise VerifyError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - the library's errors carry its one-line message, as the binary's do
        raise VerifyError(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__) from None
    if json_path:
        rep.json(json_path)
    if html:
        rep.html(html)
    report = rep.to_dict()
    if echo:
        print(rep.text().rstrip("\n"))
        print("\n".join(alignment_summary(report).splitlines()[1:]))  # the unaligned modules
    return report
