"""One call: export (or take an existing ONNX file), capture, compare with the onnxprobe binary,
and return its JSON report as a dict."""
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
           opset=13, workdir=None, extra_args=(), echo=False, float64=True):
    """Checks an ONNX export of `model` against PyTorch on `inputs` (a tensor, a tuple or a dict of
    keyword arguments) and returns the onnxprobe JSON report as a dict (see docs/report-json.md;
    report["verdict"] is "PASS" or "FAIL").

    Exports with the companion's debugging defaults unless `onnx_path` names an existing model
    (its graph inputs then name the capture's inputs). `html`/`json_path` keep those reports;
    `workdir` keeps the capture (default: a temporary folder). `float64`: see capture(). Raises VerifyError when onnxprobe
    cannot compare (its one-line message), RuntimeError when the export fails."""
    binary = find_onnxprobe(onnxprobe)
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
