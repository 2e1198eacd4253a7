"""``onnxprobe.generate``: two decoders over a generation with their key/value cache
(``onnxprobe generate``, docs/generate.md), one library call."""
import json as _json
import os

from . import _commands, _onnxprobe, _runtime
from . import _request as rq


class GenerationReport:
    """What ``onnxprobe.generate`` returns. ``to_dict()`` is the JSON document of ``onnxprobe
    generate --json FILE`` (schema "onnxprobe-generate"); ``html(path)``/``json(path)`` write
    the reports the command line writes; ``str()`` is its console output."""

    def __init__(self, native):
        self._native = native
        self._doc = None

    def to_dict(self):
        if self._doc is None:
            self._doc = self._native.render_json()
        return _json.loads(self._doc)

    @property
    def passed(self):
        """Every teacher-forced step's logits and cache within tolerance."""
        return self._native.passed

    @property
    def born(self):
        """Where the error is born: dict with step, layer, where, node, op_type; None on PASS."""
        return self.to_dict()["born"]

    @property
    def tokens(self):
        """Both sides' free-running tokens: (side A's, side B's)."""
        fr = self.to_dict()["free_running"]
        return fr["tokens_a"], fr["tokens_b"]

    def json(self, path):
        self._native.write_json(os.fspath(path))

    def html(self, path=None):
        """Writes the HTML page to `path`; without one, returns it as a string."""
        if path is None:
            return self._native.render_html()
        self._native.write_html(os.fspath(path))
        return None

    def _repr_html_(self):
        return self._native.render_html()

    def text(self, quiet=False):
        """The console report of ``onnxprobe generate``."""
        return self._native.render_console(bool(quiet))

    def __str__(self):
        return self.text()


# keywords whose flag is not "--" + the keyword with '-' for '_'
_FLAG_OF = {"provider_options": "--provider-option", "a_provider_options": "--a-provider-option",
            "b_provider_options": "--b-provider-option", "save_a": "--save-a"}


_OPTIONS = {}


def _occurrences(flag, value):
    """A keyword's option occurrences, as compare() makes them (_commands.occurrences); a flag
    generate lacks is passed on for the library to name."""
    if not _OPTIONS:
        _OPTIONS.update(_commands.options_by_flag("generate"))
    if flag not in _OPTIONS:
        return [] if value is None or value is False else [(flag, "")]
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        value = dict(value)  # (role, name) pairs
    return _commands.occurrences(_OPTIONS[flag], value)


@_commands.front_door("generate")
def generate(a, b=None, *, steps=None, prompt=None, prompt_length=None, seed=None, pad_left=None,
             pad_id=None, top_k=None, io=None, a_io=None, b_io=None, atol=None, rtol=None,
             absolute_atol=False, tol=None, op_tol=None, judge=None, rel_eps=None, isolate=None,
             quant=None, quant_min_sqnr=None, max_memory=None, on_step=None, save_a=None,
             **sessions):
    """Compares decoder B with decoder A over `steps` greedy steps from `prompt` (token ids, or
    an .npy file of them; None: `prompt_length` seeded random ids; `pad_left` masked `pad_id`
    tokens before it) and returns a GenerationReport. Keywords are ``onnxprobe generate``'s
    flags, read by the library's parser (the command line's defaults and messages).

    A: a decoder .onnx run live, or a saved PyTorch run (onnxprobe_torch.capture_generation);
    B: a decoder .onnx (default: A, told apart by a_*/b_* settings). Session settings as in
    compare(): provider, opt_level, ort_version, ... for both sides, a_.../b_... for one. io /
    a_io / b_io: {role or past name: input/output name} where discovery cannot map the model
    (roles input_ids, attention_mask, position_ids, logits). save_a: a folder where side A's
    run is saved (--save-a; compare with it later as side A). on_step(phase, step): progress,
    called after each step of each phase ("A", "B teacher-forced", "B free"); an exception it
    raises stops the calls and is raised when the comparison returns."""
    given = dict(locals())
    given.pop("sessions")
    given.update(sessions)  # an unknown keyword is an unknown flag: the library names it
    positionals = [rq._path(a, "a")] + ([] if b is None else [rq._path(b, "b")])
    pairs = []
    for kw, value in given.items():
        if kw in ("a", "b", "on_step", "prompt"):
            continue
        pairs += _occurrences(_FLAG_OF.get(kw, "--" + kw.replace("_", "-")), value)
    if isinstance(prompt, (str, os.PathLike)):
        pairs.append(("--prompt", rq._path(prompt, "prompt")))
    elif prompt is not None:
        pairs.append(("--prompt-ids", ",".join(str(int(t)) for t in list(getattr(prompt, "flat", prompt)))))
    return GenerationReport(_onnxprobe.generate(positionals, pairs, _runtime.resolve(), on_step))
