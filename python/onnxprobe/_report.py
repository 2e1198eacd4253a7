"""The comparison report: the library's complete result, seen through the versioned JSON
document of ``onnxprobe compare --json`` (docs/report-json.md) and its HTML page."""
import html as _html
import json as _json
import os

from . import _onnxprobe


class JsonDocument:
    """A library result seen through its JSON document: ``to_dict()`` (a new dict each time),
    ``json(path)`` (the text, or written atomically by the library's writer)."""

    def __init__(self, native):
        self._native = native
        self._json = None

    def _text(self):
        if self._json is None:
            self._json = self._native.render_json()
        return self._json

    def to_dict(self):
        """The JSON document as a new dict."""
        return _json.loads(self._text())

    def json(self, path=None):
        """The JSON document as text, or written to `path` (atomically) when given."""
        if path is None:
            return self._text()
        self._native.write_json(os.fspath(path))
        return os.fspath(path)


class Report(JsonDocument):
    """What ``onnxprobe.compare`` returns.

    ``to_dict()`` is the JSON document of ``onnxprobe compare --json FILE`` (schema
    "onnxprobe-compare"; the same writer renders both); ``html(path)`` and ``json(path)`` write
    the reports the command line writes. In a notebook the report shows as its HTML page.
    """

    def _text(self, detail="compact"):
        if detail == "compact":
            return super()._text()
        return self._native.render_json(detail)

    def to_dict(self, detail="compact"):
        """The JSON document as a new dict. `detail`: "compact" (``--report-detail``'s default:
        every measurement for the tensors that fail, lead to a culprit or are graph outputs, a
        summary row for the rest) or "full" (everything for every tensor)."""
        return _json.loads(self._text(detail))

    def json(self, path=None, detail="compact"):
        """The JSON document as text, or written to `path` (atomically) when given; `detail` as
        in ``to_dict``."""
        if path is None:
            return self._text(detail)
        return self.write("json", path, detail)

    @staticmethod
    def formats():
        """The report's formats, as ``render``/``write`` and compare's flags name them ("json",
        "html", "junit", "model-explorer", ...)."""
        return list(_onnxprobe.CompareReport.formats())

    def render(self, format, detail="compact"):
        """The report as text in `format` (one of ``formats()``: ``--FORMAT FILE`` writes the
        same document); `detail` as in ``to_dict``."""
        return self._native.render(str(format), detail)

    def write(self, format, path, detail="compact"):
        """Writes ``render(format)`` to `path`, atomically, where the output guard lets a report
        of that format go (never over someone else's file); returns the path."""
        self._native.write(str(format), os.fspath(path), detail)
        return os.fspath(path)

    @property
    def passed(self):
        """Every tensor within tolerance (and the comparison ran to the end)."""
        return self._native.passed

    @property
    def aborted(self):
        """A side failed mid-way; the rows compared before are kept."""
        return self._native.aborted

    @property
    def verdict(self):
        """"PASS", "FAIL" or "ERROR"."""
        return self.to_dict()["verdict"]

    @property
    def culprits(self):
        """Isolation's culprits (dicts as in the JSON document's localization.culprits)."""
        return self.to_dict()["localization"]["culprits"]

    @property
    def frontier(self):
        """Names of the tensors where error is introduced."""
        return self.to_dict()["summary"]["frontier"]

    @property
    def first_divergence(self):
        """Name of the first failing tensor in topological order, or None."""
        return self.to_dict()["summary"]["first_divergence"]

    @property
    def repro(self):
        """The repro bundle written (a folder), or None."""
        return self.to_dict()["localization"]["repro_dir"]

    def text(self, quiet=False):
        """The console report (`onnxprobe compare`'s table and summary; `quiet`: the summary)."""
        return self._native.render_console(bool(quiet))

    def html(self, path=None, detail="compact"):
        """The self-contained HTML page as text, or written to `path` (atomically) when given;
        `detail` as in ``to_dict``."""
        return self.render("html", detail) if path is None else self.write("html", path, detail)

    def junit(self, path=None):
        """The JUnit XML document (``--junit``: a test case per compared tensor; times are 0, the
        command line times each row), or written to `path` when given."""
        return self.render("junit") if path is None else self.write("junit", path)

    def model_explorer(self, path=None):
        """Google Model Explorer node data (``--model-explorer``), or written to `path`."""
        return self.render("model-explorer") if path is None else self.write("model-explorer", path)

    def _repr_html_(self):
        # the page in an iframe: its styles and scripts stay out of the notebook's own
        page = _html.escape(self.render("html"), quote=True)
        return (f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:1px solid #ccc" '
                'sandbox="allow-scripts"></iframe>')

    def __repr__(self):
        d = self.to_dict()
        s = d["summary"]
        text = f"<onnxprobe.Report {d['verdict']}: {s['failed']} of {s['compared']} tensors fail"
        if s.get("first_divergence"):
            text += f", first divergence {s['first_divergence']!r}"
        return text + ">"


class SweepReport(JsonDocument):
    """What ``onnxprobe.compare(..., sweep={"batch": [1, 2, 8]})`` returns: one complete comparison
    per shape (``--sweep``). ``to_dict()`` is the JSON document of ``compare --sweep ... --json
    FILE`` (schema "onnxprobe-sweep": a summary per shape and each shape's compare report)."""

    @property
    def passed(self):
        """Every shape's comparison passed."""
        return self._native.passed

    @property
    def failed_points(self):
        """Shapes whose comparison failed or whose run failed."""
        return self._native.failed_points

    def text(self):
        """The console table: one line per shape."""
        return self._native.render_console()

    def __repr__(self):
        verdict = "PASS" if self.passed else "FAIL"
        return f"<onnxprobe.SweepReport {verdict}: {self.failed_points} of {len(self.to_dict()['points'])} shapes fail>"
