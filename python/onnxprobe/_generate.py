"""``onnxprobe.generate``: two decoders over a generation with their key/value cache
(``onnxprobe generate``, docs/generate.md), one library call."""
import json as _json
import os

from . import _onnxprobe
from . import _request as rq
from ._errors import InvalidArgument

_SESSION_KEYS = ("provider", "provider_options", "opt_level", "intra_threads", "inter_threads",
                 "parallel", "ort_lib", "ort_version", "custom_op_lib", "allow_fallback", "platform",
                 "remote")


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


def _io_pairs(io):
    if io is None:
        return []
    items = io.items() if isinstance(io, dict) else io
    return [(str(k), str(v)) for k, v in items]


def generate(a, b=None, *, steps=16, prompt=None, prompt_length=8, seed=0, pad_left=0, pad_id=0,
             top_k=5, io=None,
             a_io=None, b_io=None, atol=1e-5, rtol=1e-3, absolute_atol=False, tol=None,
             op_tol=None, judge="elementwise", rel_eps=None, isolate="frontier", quant="auto",
             quant_min_sqnr=20.0, max_memory=None, on_step=None, save_a=None, **sessions):
    """Compares decoder B with decoder A over `steps` greedy steps from `prompt` (token ids;
    None: `prompt_length` seeded random ids; `pad_left` masked `pad_id` tokens before it) and
    returns a GenerationReport.

    A: a decoder .onnx run live, or a saved PyTorch run (onnxprobe_torch.capture_generation);
    B: a decoder .onnx (default: A, told apart by a_*/b_* settings). Session settings as in
    compare(): provider, opt_level, ort_version, ... for both sides, a_.../b_... for one. io /
    a_io / b_io: {role or past name: input/output name} where discovery cannot map the model
    (roles input_ids, attention_mask, position_ids, logits). save_a: a folder where side A's
    run is saved (--save-a; compare with it later as side A). on_step(phase, step): progress,
    called after each step of each phase ("A", "B teacher-forced", "B free"); an exception it
    raises stops the calls and is raised when the comparison returns."""
    shared, own = {}, {"a": {}, "b": {}}
    for key, value in sessions.items():
        side = key[:2] if key[:2] in ("a_", "b_") else ""
        name = key[len(side):]
        if name not in _SESSION_KEYS:
            raise TypeError(f"generate() got an unexpected keyword argument '{key}'")
        (own[side[0]] if side else shared)[name] = value
    for d in (shared, own["a"], own["b"]):
        for k in _SESSION_KEYS:
            d.setdefault(k, None)
    if b is None:
        if all(v is None for v in list(own["a"].values()) + list(own["b"].values())):
            raise InvalidArgument("one side given and no a_/b_ setting to tell the sides apart "
                                  "(e.g. b_opt_level='all')")
        b = a
    side_a = rq.side_dict(a, shared, own["a"])
    side_b = rq.side_dict(b, shared, own["b"])
    side_a["io"] = _io_pairs(io) + _io_pairs(a_io)
    side_b["io"] = _io_pairs(io) + _io_pairs(b_io)
    request = {
        "a": side_a, "b": side_b,
        "prompt": [] if prompt is None else [int(t) for t in list(getattr(prompt, "flat", prompt))],
        "prompt_length": int(prompt_length), "seed": int(seed), "steps": int(steps),
        "pad_left": int(pad_left), "pad_id": int(pad_id),
        "top_k": int(top_k),
        "policy": rq.policy_dict(atol, rtol, absolute_atol, tol, op_tol, judge, rel_eps),
        "isolate": str(isolate),
        "quant": str(quant), "quant_min_sqnr": float(quant_min_sqnr),
        "max_memory": rq.parse_bytes(max_memory),
        "save_a": "" if save_a is None else os.fspath(save_a),
    }
    if save_a is not None:  # side A's run, saved for later comparisons (--save-a)
        _onnxprobe.guard_output(request["save_a"], "generation", [os.fspath(a), os.fspath(b)])
    return GenerationReport(_onnxprobe.generate(request, on_step))
