"""Captures every module call's outputs with forward hooks into an onnxprobe dump (a folder, or
one .npz when the path ends in .npz).

Each activation is named by its module path, with "_k" for the k-th extra call of one module (a
ReLU used three times is relu, relu_1, relu_2) and ":j" for the j-th tensor of a structured
output. The manifest's "torch" section describes every module call for the aligner: the scope
name the ONNX exporter gives its nodes (built from the call stack exactly as torch.onnx does), the
parent call, which capture tensors or model inputs it read, which of its outputs are the very same
tensor as something captured before (containers, identities), and whether the module is a
BatchNorm (any subclass of torch.nn.modules.batchnorm._BatchNorm, told by isinstance).

Inside modules (`functional=True`, the default): the outputs of the torch functions each module
call runs itself (softmax, bmm, linear, +, * ... inside nn.MultiheadAttention or functional code;
not its children's, not views or other layout moves), named "<call>::<function>_k" for the k-th
call of that function in that module call, marked in their manifest entry ("functional") and
listed in the "torch" section. The aligner pairs them with the ONNX nodes of the call's own scope
so that a fault inside a module PyTorch exposes as one block can be narrowed to its ONNX node.
`functional_budget` bounds their bytes (see _functional.py).
"""
import io
import json
import os
import sys
import zipfile

import numpy as np
import torch

from . import _float64, _io
from ._functional import _FLOAT, FunctionalMode
from ._atomic import temporary_for

TORCH_SECTION_VERSION = 1


# frames of these folders are not the user's: a module call's site is the nearest frame outside
_NOT_USER = (os.path.dirname(os.path.abspath(torch.__file__)), os.path.dirname(os.path.abspath(__file__)))


def _call_site():
    """"file:line" of the nearest caller outside torch and this package: the line of the user's
    forward that called the module now starting ("" when there is none)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(_NOT_USER) and not name.startswith("<frozen"):
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return ""


class _FromBfloat16(np.ndarray):
    """A float32 copy of a bfloat16 tensor (numpy has no bfloat16): its entry records the dtype
    PyTorch computed in (torch_dtype)."""


def _np(t):
    t = t.detach().cpu().clone()  # a copy: in-place ops later in the forward pass must not change it
    if t.dtype == torch.bfloat16:
        return t.float().contiguous().numpy().view(_FromBfloat16)
    return t.contiguous().numpy()


def _settings(model, inputs):
    """What changes PyTorch's numbers besides the module: devices, autocast, deterministic
    algorithms, and on CUDA TF32 and cuDNN's algorithm choice."""
    devices = {str(p.device) for p in model.parameters()} | {str(t.device) for t in inputs if torch.is_tensor(t)}
    autocast = {}
    if torch.is_autocast_cpu_enabled():
        autocast["cpu"] = str(torch.get_autocast_cpu_dtype()).replace("torch.", "")
    if torch.is_autocast_enabled():
        autocast["cuda"] = str(torch.get_autocast_gpu_dtype()).replace("torch.", "")
    s = {"devices": sorted(devices), "autocast": autocast,
         "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled())}
    if any(d.startswith("cuda") for d in devices):
        s["cuda"] = {"device_name": torch.cuda.get_device_name(), "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
                     "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
                     "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
                     "cudnn_deterministic": bool(torch.backends.cudnn.deterministic)}
    return s


def _dtype_name(a):
    return "bool" if a.dtype == np.bool_ else a.dtype.name


def _unqualified(qualified_name):
    """The exporter's scope name of a module: its path from the last non-numeric atom on
    ("layer1.0.conv1" -> "conv1", "features.4.block.1" -> "block.1"); as torch.onnx.utils does."""
    atoms = qualified_name.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return qualified_name


class _Recorder:
    """Forward pre/post hooks on every named module: a call stack, tensor identities, records."""

    def __init__(self, model, root_name, functional_budget=0):
        self.root_name = root_name
        self.busy = False  # the hooks themselves run torch functions: never record those
        self.fn_budget = functional_budget
        self.fn_bytes = 0
        self.fn_truncated = False
        self.fn_count = {}  # (call, function) -> calls so far
        self.fn_pending = {}  # call -> [(key, record index)] until the call returns
        self.dropped = set()  # record indices to leave out
        self.paths = {}
        for path, module in model.named_modules():  # shared modules keep their first path
            self.paths.setdefault(id(module), path)
        # every name of every parameter (tied weights have several), by module
        self.param_names = {}
        names_of = {}
        for path, module in model.named_modules(remove_duplicate=False):
            for pname, p in module.named_parameters(recurse=False):
                names_of.setdefault(id(p), []).append(f"{path}.{pname}" if path else pname)
        for module in model.modules():
            self.param_names[id(module)] = [names_of[id(p)] for _, p in module.named_parameters(recurse=False)]
        # parameters and buffers: saved apart (params/), never a function's recorded argument
        self.state_ids = {id(t) for m in model.modules() for t in list(m.parameters(recurse=False))
                          + list(m.buffers(recurse=False))}
        self.stack = []
        self.calls = []
        self.calls_of_path = {}
        self.scope_count = {}
        # (call, output index, array, input index or None); functional records have
        # ("fn", function, ordinal) as output index
        self.fresh = set()  # (id, version) of call inputs recorded (made by functional code)
        self.origin = {}  # (id, version) -> reference of a tensor seen before
        self.alive = []  # keeps seen tensors alive so that their ids stay unique
        self.held = set()  # (id, version) of every tensor whose value is recorded
        self.records = []
        # training-mode remnants: random numbers drawn by a call's own code (not a child's) and
        # buffers a call wrote, though the model runs in eval mode
        self.rng_last = self._rng()
        self.buffers_before = {}  # call -> [(name, buffer, version)]

    @staticmethod
    def _rng():
        states = [torch.get_rng_state()]
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            states += torch.cuda.get_rng_state_all()
        return states

    def _note_draws(self):
        """Random numbers drawn since the last hook were drawn by the innermost running call's own code."""
        now = self._rng()
        # generators in both snapshots (CUDA may start during the forward pass: not a draw)
        drew = any(not torch.equal(a, b) for a, b in zip(now, self.rng_last))
        if drew and self.stack:
            self.calls[self.stack[-1]]["rng_draws"] = True
        self.rng_last = now

    def recording_functions(self):
        return not self.busy and bool(self.stack)

    def function_output(self, name, t, args):
        """A torch function called inside the innermost running module call made `t` from the
        tensors `args`. Its float arguments whose value nothing recorded holds (a view such as
        q.transpose(0, 1) feeding bmm) are recorded too, as its inputs: isolation can then start
        right at the node that computes the function."""
        fresh = []
        for p, a in enumerate(args):
            if a.dtype in _FLOAT and a.numel() > 0 and id(a) not in self.state_ids \
                    and self._key(a) not in self.held:
                fresh.append((p, a))
        size = sum(x.numel() * x.element_size() for x in [t] + [a for _, a in fresh])
        if self.fn_bytes + size > self.fn_budget:
            self.fn_truncated = True
            return
        self.busy = True
        try:
            c = self.stack[-1]
            k = self.fn_count.get((c, name), 0)
            self.fn_count[(c, name)] = k + 1
            self.fn_bytes += size
            group = []
            for p, a in fresh:
                self._hold(a)
                group.append(len(self.records))
                self.records.append((c, ("fn", name, k, p), _np(a), None))
            self._hold(t)
            group.append(len(self.records))
            self.fn_pending.setdefault(c, []).append((self._key(t), group))
            self.records.append((c, ("fn", name, k, None), _np(t), None))
        finally:
            self.busy = False

    def _hold(self, t):
        """Keeps `t` alive (its id stays unique) and remembers that its value is recorded."""
        self.held.add(self._key(t))
        self.alive.append(t)

    @staticmethod
    def _key(t):
        return id(t), t._version

    def note_inputs(self, names, tensors):
        for name, t in zip(names, tensors):
            self.origin[self._key(t)] = {"input": name}
            self._hold(t)

    def pre(self, module, args):
        self.busy = True
        try:
            self._pre(module, args)
        finally:
            self.busy = False

    def post(self, module, args, output):
        self.busy = True
        try:
            self._post(module, args, output)
        finally:
            self.busy = False

    def _pre(self, module, args):
        self._note_draws()
        path = self.paths[id(module)]
        parent = self.stack[-1] if self.stack else -1
        scope = "" if parent < 0 else self.calls[parent]["scope"] + "/" + _unqualified(path)
        if parent < 0 and path != "":
            scope = "/" + _unqualified(path)
        ordinal = self.scope_count.get(scope, 0)
        self.scope_count[scope] = ordinal + 1
        k = self.calls_of_path.get(path, 0)
        self.calls_of_path[path] = k + 1
        inputs = []
        for pos, t in enumerate(_io.flatten(args)):
            ref = self.origin.get(self._key(t))
            inputs.append(ref)
            # a tensor no module made and no model input is: made by functional code between
            # modules. Its value is the call's boundary, recorded once (alignment pairs it with
            # the ONNX tensor the call's nodes read, so isolation can start there).
            if ref is None and parent >= 0 and torch.is_tensor(t) and self._key(t) not in self.fresh:
                self.fresh.add(self._key(t))
                self._hold(t)
                self.records.append((len(self.calls), ("in", pos), _np(t), pos))
        is_bn = isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
        buffers = [f"{path}.{n}" if path else n for n, _ in module.named_buffers(recurse=False)]
        self.calls.append({"module": path or self.root_name, "type": type(module).__name__, "call_index": k,
                           "parent": parent, "scope": scope, "scope_ordinal": ordinal, "batchnorm": is_bn,
                           "params": self.param_names.get(id(module), []), "buffers": buffers,
                           "eps": float(module.eps) if is_bn else 0.0, "inputs": inputs, "outputs": [],
                           "rng_draws": False, "buffers_written": [], "source": _call_site()})
        # native kernels (batch_norm's running statistics) write in place without moving the
        # version counter: values are compared (buffers up to 64 MiB each)
        self.buffers_before[len(self.calls) - 1] = [
            (n, f"{path}.{n}" if path else n, b.detach().clone()) for n, b in module.named_buffers(recurse=False)
            if b is not None and b.numel() * b.element_size() <= 64 << 20]
        self.stack.append(len(self.calls) - 1)

    def _post(self, module, args, output):
        self._note_draws()
        c = self.stack.pop()
        call = self.calls[c]
        # read by name again: a module may rebind a buffer (self.count = self.count + 1)
        now = dict(module.named_buffers(recurse=False))
        call["buffers_written"] = [full for n, full, v in self.buffers_before.pop(c, [])
                                   if n not in now or now[n] is None or not _same(now[n].detach(), v)]
        # a function whose output is the call's output (F.linear in nn.Linear): the call's row
        out_keys = {self._key(t) for t in _io.flatten(output)}
        for key, group in self.fn_pending.pop(c, []):
            if key in out_keys:
                self.dropped.update(group)
        for j, t in enumerate(_io.flatten(output)):
            ref = {"call": c, "output": j}
            entry = {"same_as": self.origin.get(self._key(t))}
            self.origin.setdefault(self._key(t), ref)
            self._hold(t)
            call["outputs"].append(entry)
            self.records.append((c, j, _np(t), None))


def _same(a, b):
    """Equal shapes and values, NaN equal to NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


def _state(model):
    """Every parameter and buffer once (tied ones have several names), in state_dict order."""
    entries = {}
    for path, module in model.named_modules(remove_duplicate=False):
        own = list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False))
        for pname, t in own:
            if t is None:
                continue
            full = f"{path}.{pname}" if path else pname
            e = entries.setdefault(id(t), {"names": [], "tensor": t})
            if full not in e["names"]:
                e["names"].append(full)
    return list(entries.values())


def _names(calls, records):
    """Capture tensor names: path, path_k for repeated calls, :j for structured outputs; unique."""
    used, names = set(), {}
    for c, j, _, k_in in records:
        call = calls[c]
        path, k = call["module"], call["call_index"]
        leaf = path.split(".")[-1]
        call_name = path if k == 0 else path[: len(path) - len(leaf)] + f"{leaf}_{k}"
        if isinstance(j, tuple) and j[0] == "fn":
            name = f"{call_name}::{j[1]}" + (f"_{j[2]}" if j[2] else "") + \
                ("" if j[3] is None else f":in{j[3]}")
        elif k_in is not None:
            name = f"{call_name}:in{k_in}"
        else:
            name = call_name if j == 0 else f"{call_name}:{j}"
        base, n = name, 1
        while name in used:
            name, n = f"{base}#{n}", n + 1
        used.add(name)
        names[(c, j)] = name
    return names


def _reference(ref, names):
    if ref is None:
        return None
    if "input" in ref:
        return {"input": ref["input"]}
    return {"tensor": names[(ref["call"], ref["output"])]}


def _record(model, args, input_names, root_name, budget, functional, records=None):
    """Runs `model` on `args` with the recording hooks; returns the recorder. `records`: where the
    recorder puts its records (a list by default; the float64 run's ErrorSink)."""
    rec = _Recorder(model, root_name, budget)
    if records is not None:
        rec.records = records
    rec.note_inputs(input_names, _io.flatten(args))
    hooks = []
    for module in {id(m): m for m in model.modules()}.values():
        hooks.append(module.register_forward_pre_hook(rec.pre))
        hooks.append(module.register_forward_hook(rec.post))
    try:
        with torch.enable_grad():
            if functional:
                with FunctionalMode(rec.function_output, rec.recording_functions):
                    model(*args)
            else:
                model(*args)
    finally:
        for h in hooks:
            h.remove()
    return rec


def capture(model, inputs, out, input_names=None, root_name="model", onnx_path=None, parameters=True,
            functional=True, functional_budget=512 << 20, float64=True):
    """Runs `model` on `inputs` (a tensor, a tuple of positional arguments or a dict of keyword
    arguments) in eval mode and writes `out`: a dump folder (manifest.json + .npy files, inputs
    under inputs/) or, when `out` ends in .npz, one archive. Input names default to forward()'s
    parameter names, or the graph inputs of `onnx_path` when given. With `parameters`, every
    parameter and buffer is saved too (params/), for the parameter parity check against the ONNX
    initializers. With `functional`, the outputs of the torch functions each module call runs
    itself are saved too (values inside modules, for narrowing a fault down to an ONNX node), up to
    `functional_budget` bytes. With `float64`, a float64 copy of the model runs on the same inputs
    and each float tensor's entry records "float64_error", the largest |float32 - float64| of its
    value: the float32 rounding PyTorch's own value carries, which the comparison allows on top of
    the tolerance (docs/metrics.md). Returns the manifest dict.

    The forward pass runs with autograd enabled (nothing is backpropagated) so that fused
    inference fast paths (e.g. TransformerEncoderLayer's) do not bypass submodules and hooks."""
    args = _io.positional_args(model, inputs)
    flat_inputs = _io.flatten(args)
    if input_names is None and onnx_path is not None:
        input_names = _onnx_input_names(onnx_path)
    input_names = list(input_names) if input_names else _io.input_names(model, args)
    if len(input_names) != len(flat_inputs):
        raise _io.InputError(f"{len(input_names)} input names ({', '.join(input_names)}) for "
                             f"{len(flat_inputs)} input tensors")
    model.eval()
    budget = functional_budget if functional else 0
    rng = torch.get_rng_state()  # a forward pass that draws random numbers draws them again in float64
    rec = _record(model, args, input_names, root_name, budget, functional)
    kept = [i for i in range(len(rec.records)) if i not in rec.dropped]
    records = [rec.records[i] for i in kept]
    names = _names(rec.calls, records)
    rounding, rounding_note = {}, "off"
    if float64:
        # the float64 copy records twice the bytes at the same places, so it gets twice the budget
        by_index, why = _float64.measure(
            model, args, rec.records, rng,
            lambda m, a, sink: _record(m, a, input_names, root_name, 2 * budget, functional, sink))
        rounding = {order: by_index[i] for order, i in enumerate(kept) if i in by_index}
        rounding_note = "measured" if why is None else f"not measured: {why}"

    files = []  # (file in a folder, entry in an .npz, array)
    entries = []
    for i, (name, t) in enumerate(zip(input_names, flat_inputs)):
        a = _np(t)
        f = f"inputs/{i:05d}_{name.replace('/', '_')}.npy"
        files.append((f, f"input:{name}.npy", a))
        entries.append({"name": name, "kind": "input", "dtype": _dtype_name(a), "shape": list(a.shape), "file": f})
    call_inputs, functions = [], []
    for order, (c, j, a, k_in) in enumerate(records):
        call = rec.calls[c]
        name = names[(c, j)]
        f = f"{order + 1:05d}_{name.replace('/', '_').replace(':', '-').replace('#', '-')}.npy"
        files.append((f, f"{name}.npy", a))
        entry = {"name": name, "kind": "tensor", "node": call["module"], "op_type": call["type"],
                 "topo_index": order, "dtype": _dtype_name(a), "shape": list(a.shape), "file": f,
                 "module": call["module"], "module_type": call["type"], "call_index": call["call_index"]}
        if order in rounding:
            entry["float64_error"] = rounding[order]
        if isinstance(a, _FromBfloat16):
            entry["torch_dtype"] = "bfloat16"
        if isinstance(j, tuple) and j[0] == "fn":
            fn = {"call": c, "function": j[1], "ordinal": j[2]}
            if j[3] is not None:
                fn["input"] = j[3]
            entry["functional"] = fn
            functions.append(dict(fn, tensor=name))
        elif k_in is None:
            entry["output_index"] = j
        else:
            call_inputs.append({"call": c, "input": k_in, "tensor": name})
        entries.append(entry)
    calls = []
    for c, call in enumerate(rec.calls):
        calls.append({"module": call["module"], "type": call["type"], "call_index": call["call_index"],
                      "parent": call["parent"], "scope": call["scope"], "scope_ordinal": call["scope_ordinal"],
                      "batchnorm": call["batchnorm"], "params": call["params"], "eps": call["eps"],
                      "buffers": call["buffers"], "rng_draws": call["rng_draws"], "source": call["source"],
                      "buffers_written": call["buffers_written"],
                      "inputs": [_reference(r, names) for r in call["inputs"]],
                      "outputs": [{"tensor": names[(c, j)], "same_as": _reference(o["same_as"], names)}
                                  for j, o in enumerate(call["outputs"])]})
    params = []
    if parameters:
        for i, e in enumerate(_state(model)):
            a = _np(e["tensor"])
            f = f"params/{i:05d}.npy"
            files.append((f, f"param:{i:05d}.npy", a))
            params.append({"names": e["names"], "file": f, "key": f"param:{i:05d}", "dtype": _dtype_name(a),
                           "shape": list(a.shape)})
    manifest = {"format": "onnxprobe-dump", "format_version": 1, "model": type(model).__name__,
                "runtime": f"torch {torch.__version__}", "provider": "pytorch", "source": "torch-capture",
                "tensors": entries,
                "torch": {"version": TORCH_SECTION_VERSION, "calls": calls, "params": params,
                          "settings": _settings(model, flat_inputs),
                          "call_inputs": call_inputs, "functional": functions,
                          "functional_recorded": bool(functional) and not rec.fn_truncated,
                          "functional_truncated": rec.fn_truncated, "float64_reference": rounding_note}}
    _write(out, files, manifest)
    return manifest


def _write(out, files, manifest):
    text = json.dumps(manifest)
    with temporary_for(out) as tmp:
        if out.endswith(".npz"):
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
                for _, key, a in files:
                    buf = io.BytesIO()
                    np.save(buf, a)
                    z.writestr(key, buf.getvalue())
                z.writestr("manifest.json", text)
        else:
            os.makedirs(os.path.join(tmp, "inputs"))
            os.makedirs(os.path.join(tmp, "params"))
            for f, _, a in files:
                np.save(os.path.join(tmp, f), a)
            with open(os.path.join(tmp, "manifest.json"), "w") as fh:
                fh.write(text)


def _onnx_input_names(path):
    import onnx  # only needed when names come from a model file

    g = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    return [i.name for i in g.input if i.name not in inits]
