"""Comparisons over input samples (``compare --inputs DIR`` / ``--samples N``, one shard of them
with ``--shard I/N``) and the merge of shards' reports (``onnxprobe merge``), docs/shard.md."""
import json as _json
import os

from . import _onnxprobe
from ._errors import InvalidArgument
from ._report import JsonDocument


def parse_shard(shard):
    """None, "I/N" or (I, N) -> (I, N)."""
    if shard is None:
        return 0, 1
    if isinstance(shard, str):
        parts = shard.split("/")
        try:
            i, n = (int(p) for p in parts)
        except ValueError:
            raise InvalidArgument(f"shard {shard!r}: expected I/N (e.g. 0/4)") from None
    else:
        try:
            i, n = (int(v) for v in shard)
        except (TypeError, ValueError):
            raise InvalidArgument(f"shard {shard!r}: expected 'I/N' or (I, N)") from None
    if n < 1 or not 0 <= i < n:
        raise InvalidArgument(f"shard {i}/{n}: I must be in 0..N-1")
    return i, n


class SamplesReport(JsonDocument):
    """What ``onnxprobe.compare(..., inputs_dir=... | samples=N)`` returns: one comparison per
    sample, each tensor aggregated over them. ``to_dict()`` is the JSON document of ``onnxprobe
    compare --inputs DIR --json FILE`` (schema "onnxprobe-compare-samples"); a shard's report
    (``shard=``) is what ``onnxprobe.merge`` joins."""

    @property
    def passed(self):
        """Every sample within tolerance (and each ran to the end)."""
        return self._native.passed

    @property
    def failed_samples(self):
        return self._native.failed_samples

    @property
    def samples(self):
        """Samples compared here (a shard's own)."""
        return self._native.samples

    @property
    def total_samples(self):
        """Samples in the full list (every shard's)."""
        return self._native.total_samples

    def text(self):
        """The console's per-sample verdicts and aggregate table."""
        return self._native.render_console()

    def __repr__(self):
        return (f"<onnxprobe.SamplesReport {'PASS' if self.passed else 'FAIL'}: {self.failed_samples} of "
                f"{self.samples} samples fail>")


class MergedReport(SamplesReport):
    """What ``onnxprobe.merge`` returns: the report one process would have written over every
    sample (timings aside)."""

    @property
    def shards(self):
        return self._native.shards

    @property
    def total_samples(self):
        return self._native.samples

    def text(self):
        return f"merged {self.shards} shards: {self.samples} samples, {self.failed_samples} failed: " + \
            ("PASS" if self.passed else "FAIL") + "\n"

    def json(self, path=None):
        if path is None:
            return self._text()
        # the output guard as `onnxprobe merge --json`: a report of the shards' kind may be replaced
        kind = "baseline-check-json" if self.to_dict().get("schema") == "onnxprobe-baseline-check" else "json"
        _onnxprobe.guard_output(os.fspath(path), kind, getattr(self, "_shard_files", []))
        _onnxprobe.write_json_output(os.fspath(path), self._text())
        return os.fspath(path)

    def __repr__(self):
        return (f"<onnxprobe.MergedReport {'PASS' if self.passed else 'FAIL'}: {self.failed_samples} of "
                f"{self.samples} samples fail, {self.shards} shards>")


def _shard_text(i, shard):
    if isinstance(shard, SamplesReport):
        return f"shard report {i}", shard.json()
    if isinstance(shard, dict):
        return f"shard report {i}", _json.dumps(shard)
    if isinstance(shard, (str, os.PathLike)):
        text = os.fspath(shard)
        if text.lstrip().startswith("{"):
            return f"shard report {i}", text
        try:
            with open(text, encoding="utf-8") as f:
                return text, f.read()
        except OSError as e:
            raise InvalidArgument(f"{text}: {e.strerror}") from None
    raise InvalidArgument(f"shard {i}: a SamplesReport, a dict, JSON text or a file, not {type(shard).__name__}")


def merge(shards, json=None):
    """Joins the shards of a comparison over samples (``onnxprobe merge SHARD.json...``): each a
    SamplesReport, its dict, its JSON text or a file. Returns a MergedReport; `json`: also
    written there. Raises InvalidArgument when they do not make one comparison."""
    shards = list(shards)
    native = _onnxprobe.merge_shards([_shard_text(i, s) for i, s in enumerate(shards)])
    report = MergedReport(native)
    # files given as shards are inputs: never replaced by the merged report
    report._shard_files = [os.fspath(s) for s in shards if isinstance(s, os.PathLike)
                           or (isinstance(s, str) and not s.lstrip().startswith("{") and os.path.isfile(s))]
    if json is not None:
        report.json(json)
    return report
