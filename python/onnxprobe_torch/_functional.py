"""Values inside modules: the outputs of the torch functions a module's forward calls itself.

PyTorch exposes a module such as nn.MultiheadAttention, or a block written with functional code
(F.softmax, torch.matmul, +, *), as one call holding many ONNX nodes; forward hooks see only its
boundary. While capturing, a TorchFunctionMode sees every torch function call. Each call that
makes arithmetic (not layout) is recorded for the module call running it — the innermost one: a
child module's functions are the child's — with the function's name and its ordinal among the
calls of that function in that module call (softmax, softmax_1, ...). The aligner pairs these
records with the ONNX tensors the call's own nodes make, so that localization can isolate a node
inside such a module from PyTorch's values around it.

Recorded: single float tensor outputs, computed (not sharing memory with an argument: views,
in-place updates and identities are skipped, as are functions that only move values: reshape,
transpose, cat, contiguous, ...). Functions written in Python (F.multi_head_attention_forward,
F.layer_norm) are entered, so the torch operations they run are what is recorded. The volume is
bounded by a byte budget; past it, nothing more is recorded and the manifest says so.
"""
import types

import torch
from torch.overrides import TorchFunctionMode

# functions that only move, select or copy values: their outputs hold nothing an arithmetic
# fault could change that their inputs do not already show
LAYOUT = frozenset("""
view view_as reshape reshape_as transpose permute contiguous expand expand_as squeeze unsqueeze
flatten unflatten getitem setitem chunk split unbind narrow select cat concat concatenate stack
repeat repeat_interleave tile t clone detach to type float double half bfloat16 movedim moveaxis
flip roll index_select gather masked_select take pad constant_pad_nd zeros_like ones_like
empty_like full_like new_zeros new_ones new_empty new_full new_tensor tensor as_strided cpu cuda
numpy requires_grad_ dropout alpha_dropout feature_alpha_dropout dropout1d dropout2d dropout3d
triu tril
""".split())

_REFLECTED = {"radd": "add", "rsub": "sub", "rmul": "mul", "rtruediv": "div", "rdiv": "div",
              "rmatmul": "matmul", "rpow": "pow", "truediv": "div", "true_divide": "div",
              "iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div", "idiv": "div",
              "floordiv": "floor_divide", "subtract": "sub", "multiply": "mul", "divide": "div"}

_FLOAT = (torch.float16, torch.float32, torch.float64, torch.bfloat16)


def function_name(func):
    """The name a function is recorded under: Tensor.__add__, torch.add and x + y are all "add";
    reflected and in-place spellings are folded ("__rtruediv__", "div_" -> "div")."""
    name = getattr(func, "__name__", None) or str(func)
    name = name.strip("_")
    return _REFLECTED.get(name, name)


_unchecked_globals = {}


def _unchecked(func):
    """A copy of a Python-level torch function whose has_torch_function checks answer False, so
    that it runs its body (with the mode active) instead of dispatching to the mode again."""
    g = func.__globals__
    pg = _unchecked_globals.get(id(g))
    if pg is None:
        pg = dict(g)
        for k in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic"):
            if k in pg:
                pg[k] = lambda *a, **kw: False
        _unchecked_globals[id(g)] = pg
    f = types.FunctionType(func.__code__, pg, func.__name__, func.__defaults__, func.__closure__)
    f.__kwdefaults__ = func.__kwdefaults__
    return f


def _tensors(obj, out):
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _tensors(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out)
    return out


def _storage(t):
    try:
        return t.storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


class FunctionalMode(TorchFunctionMode):
    """Records computed function outputs through `record(function_name, output, argument
    tensors)` (the recorder decides the module call). `enabled()` answers False while the recorder's own hooks run."""

    def __init__(self, record, enabled):
        super().__init__()
        self._record = record
        self._enabled = enabled
        self._entered = set()  # Python functions whose body is running

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        if isinstance(func, types.FunctionType) and self._enabled() and func not in self._entered:
            self._entered.add(func)
            try:
                with self:  # the mode is popped while this runs: push it again for the body's calls
                    return _unchecked(func)(*args, **kwargs)
            finally:
                self._entered.discard(func)
        if isinstance(func, types.FunctionType):
            # dispatched again from inside its own body (a wrapper such as F.max_pool2d's calls a
            # function that dispatches under the wrapper's name): run it as one function
            with torch._C.DisableTorchFunction():
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        if not self._enabled() or not isinstance(out, torch.Tensor) or out.dtype not in _FLOAT:
            return out
        name = function_name(func)
        if name in LAYOUT or out.numel() == 0:
            return out
        ptr = _storage(out)
        tensors = _tensors((args, kwargs), [])
        if not tensors:
            return out  # made from no tensor (torch.zeros, arange): a constant, not a computed value
        if ptr is None or any(_storage(a) == ptr for a in tensors):
            return out  # a view, an in-place update or the argument itself
        self._record(name, out, tensors)
        return out
