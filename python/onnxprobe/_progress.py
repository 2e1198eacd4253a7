"""Progress of long calls: ``progress=`` is False (none), a callable ``(phase, done, total)``, or
True: a tqdm bar per phase when tqdm is installed, else a line on stderr. The phases are the
library's (onnxprobe/command/command.h Phase, the command line's progress line shows the same):
"compare" rows done of rows, "isolate" isolation runs so far (total 0), "sample" samples done of
samples, "capture" tensors captured of tensors, "generate" decoding steps so far (total 0)."""
import sys


class _Bars:
    """True: one tqdm bar per phase (a count without total for "isolate")."""

    def __init__(self, tqdm):
        self._tqdm, self._bars = tqdm, {}

    def __call__(self, phase, done, total):
        bar = self._bars.get(phase)
        if bar is None:
            bar = self._bars[phase] = self._tqdm(total=total or None, desc=phase, leave=False)
        if total and bar.total != total:  # a new sample's rows
            bar.reset(total=total)
        bar.n = done
        bar.refresh()

    def close(self):
        for bar in self._bars.values():
            bar.close()


class _Line:
    """True without tqdm: "\\r<phase> done/total" on stderr."""

    def __call__(self, phase, done, total):
        sys.stderr.write(f"\r{phase} {done}/{total}" if total else f"\r{phase} {done}")
        sys.stderr.flush()

    def close(self):
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def callback(progress):
    """(the callable for the library or None, a close() to call when the call returns)."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is True:
        try:
            from tqdm.auto import tqdm
            shown = _Bars(tqdm)
        except ImportError:
            shown = _Line()
        return shown, shown.close
    from ._errors import InvalidArgument
    raise InvalidArgument(f"progress must be True, False or a callable (phase, done, total), not {progress!r}")
