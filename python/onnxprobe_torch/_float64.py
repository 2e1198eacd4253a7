"""The float32 rounding of every captured value, measured against a float64 run of the same model.

A PyTorch activation is itself a float32 computation: its distance from the exact value grows with
depth (each layer's rounding is amplified by the layers after it). A float64 evaluation of the same
module on the same inputs is that exact value to about 1e-16, so max |float32 - float64| is the
rounding PyTorch's own value carries. ONNX Runtime's value of the same tensor carries rounding of
the same kind and size; the comparison allows their difference what the two roundings can add up
to (docs/metrics.md, "Float32 rounding measured against float64"). Nothing measured on the ONNX
side enters it, so no fault there can raise it.
"""
import copy

import numpy as np
import torch

_LOW = (torch.float16, torch.float32, torch.bfloat16)
# Mask fills (torch.finfo(dtype).min added to attention scores) are no computed values and differ
# with the dtype (-3.4e38 in float32, -1.8e308 in float64): like the tolerance's scale
# (docs/metrics.md, kFill in src/compare/metrics.cc), magnitudes of 1e30 or more are left out.
_FILL = 1e30


def to_float64(obj):
    """`obj` (a tensor or nested tuple/list/dict of them) with every floating tensor in float64."""
    if isinstance(obj, torch.Tensor):
        return obj.double() if obj.dtype in _LOW else obj
    if isinstance(obj, tuple):
        return tuple(to_float64(o) for o in obj)
    if isinstance(obj, list):
        return [to_float64(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_float64(o) for k, o in obj.items()}
    return obj


def _key(record):
    c, j, _, k_in = record
    return c, j, k_in


class ErrorSink:
    """Stands in for a recorder's record list on the float64 run: each value recorded there is
    compared at once with the float32 record made at the same place (same module call, output and
    function call) and only the largest difference is kept, so the float64 activations are never
    held together."""

    def __init__(self, records32):
        self.by_key = {_key(r): i for i, r in enumerate(records32)}
        self.records32 = records32
        self.errors = {}  # index of the float32 record -> max |float32 - float64|
        self.count = 0

    def __len__(self):
        return self.count

    def append(self, record):
        self.count += 1
        i = self.by_key.get(_key(record))
        if i is None:
            return
        a32 = self.records32[i][2]
        a64 = record[2]
        if a32.shape != a64.shape or a32.dtype.kind != "f" or a64.dtype.kind != "f" or a32.size == 0:
            return
        x32, x64 = a32.astype(np.float64), a64.astype(np.float64)
        d = np.abs(x32 - x64)
        computed = np.isfinite(d) & (np.abs(x32) < _FILL) & (np.abs(x64) < _FILL)
        if computed.any():
            self.errors[i] = float(d[computed].max())


def measure(model, args, records32, rng_state, record):
    """Runs a float64 copy of `model` on `args` through `record(model, args, sink)` (the capture's
    own hooks) and returns (errors by float32 record index, None), or ({}, why) when the model does
    not run in float64. The float32 run's random-number state (`rng_state`) is restored first."""
    sink = ErrorSink(records32)
    try:
        m64 = copy.deepcopy(model).double()
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(rng_state)
            record(m64, to_float64(args), sink)
    except Exception as e:  # noqa: BLE001 - any failure only means no measurement
        return {}, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    return sink.errors, None
