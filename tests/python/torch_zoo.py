"""A zoo of PyTorch models for PyTorch-vs-ONNX checks: hand-written nets covering what alignment
must handle (recurrent layers, attention, int64 token inputs, several and keyword inputs, dict
outputs, functional code, a module called twice, shared modules, a BatchNorm subclass with a
built-in activation) and torchvision models at small inputs. Weights are random and seeded;
BatchNorm statistics are warmed by a few forward passes in train mode, then the model is put in
eval mode. Also faults injected into an ONNX file at mid depth: one weight element of a
Conv/Gemm/MatMul, a changed attribute, an inserted float16 round trip.

Used by tests/python/test_torch_zoo.py (a representative subset) and bench/torch_zoo.py (all).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.environ.get("ONNXPROBE_SRC", os.path.join(os.path.dirname(__file__), "..", "..")),
                                "python"))
from onnxprobe_torch import capture, export  # noqa: E402


# ---- hand-written nets -------------------------------------------------------------------------

class Recurrent(nn.Module):
    """Token ids -> Embedding -> 2-layer LSTM -> GRU -> Linear on the last step."""

    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, 5)

    def forward(self, tokens):
        x, _ = self.lstm(self.embed(tokens))
        x, h = self.gru(x)
        return self.head(x[:, -1] + h[0])


class TokenTransformer(nn.Module):
    """Token ids and a keyword padding mask -> Embedding -> TransformerEncoder -> dict outputs."""

    def __init__(self, vocab=60, dim=32, heads=4, depth=2, classes=7):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, 32, dim) * 0.1)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens, scale=None):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        if scale is not None:
            x = x * scale
        h = self.encoder(x)
        return {"logits": self.head(h.mean(1)), "hidden": h}


class AttentionPool(nn.Module):
    """nn.MultiheadAttention called with its attention weights: a tuple output."""

    def __init__(self, dim=24, heads=3):
        super().__init__()
        self.proj = nn.Linear(8, dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 4)

    def forward(self, x):
        h = self.proj(x)
        a, w = self.attn(h, h, h)
        return self.out(self.norm(a + h).mean(1)), w


class BnAct(nn.BatchNorm2d):
    """A BatchNorm subclass with a built-in activation (as fused norm+act layers are written)."""

    def forward(self, x):
        return F.hardswish(super().forward(x))


class TwoInputs(nn.Module):
    """An image and a vector; a custom BatchNorm+activation; a block called twice; functional ops."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 12, 3, padding=1, bias=False)
        self.bn1 = BnAct(12)
        self.block = nn.Sequential(nn.Conv2d(12, 12, 3, padding=1), nn.BatchNorm2d(12), nn.ReLU())
        self.conv2 = nn.Conv2d(12, 16, 3, stride=2, padding=1)
        self.w_extra = nn.Parameter(torch.randn(16, 16, 1, 1) * 0.2)
        self.mlp = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16))
        self.head = nn.Linear(32, 3)

    def forward(self, image, vector):
        x = self.bn1(self.conv1(image))
        x = self.block(x)
        x = self.block(x) + x  # the same module called twice
        x = self.conv2(x)
        x = F.conv2d(F.gelu(x), self.w_extra)  # functional code in the root's scope
        pooled = torch.cat([x.mean((2, 3)), self.mlp(vector)], dim=1)
        return self.head(pooled)


class SharedStem(nn.Module):
    """One module object reached under two paths (a shared module) and a Dropout in eval."""

    def __init__(self):
        super().__init__()
        stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU6())
        self.left = stem
        self.right = stem
        self.mix = nn.Conv2d(16, 8, 1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        a = self.left(x)
        b = self.right(torch.flip(x, [3]))
        y = self.mix(torch.cat([a, b], 1))
        return self.fc(self.drop(y.amax((2, 3))))


class FusedFunctions(nn.Module):
    """Modules exported as several nodes from one torch function: Hardswish (HardSigmoid, Mul),
    GroupNorm (InstanceNormalization, Reshape, Mul, Add), LayerNorm and GELU at opset 13, a Linear
    on a sequence (MatMul, Add), and a gate computed in functional code."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.act = nn.Hardswish()
        self.norm = nn.GroupNorm(4, 16)
        self.gate_conv = nn.Conv2d(16, 16, 3, padding=1)
        self.gate = nn.Hardsigmoid()
        self.ln = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 16)
        self.gelu = nn.GELU()
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        y = self.norm(self.act(self.conv(x)))
        y = self.gate_conv(y) * self.gate(y)
        t = y.flatten(2).transpose(1, 2)
        return self.head(self.gelu(self.fc(self.ln(t)))).mean(1)


def _tokens(batch, seq, vocab, seed):
    return torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(seed))


def _randn(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# name -> (factory, inputs, warm-up inputs)
HANDWRITTEN = {
    "recurrent": (Recurrent, lambda: (_tokens(2, 9, 50, 1),), lambda: (_tokens(4, 9, 50, 2),)),
    "token_transformer": (TokenTransformer,
                          lambda: {"tokens": _tokens(2, 12, 60, 1), "scale": torch.tensor(0.5)},
                          lambda: (_tokens(4, 12, 60, 2),)),
    "attention_pool": (AttentionPool, lambda: (_randn(2, 10, 8),), lambda: (_randn(4, 10, 8, seed=2),)),
    "two_inputs": (TwoInputs, lambda: (_randn(1, 3, 16, 16), _randn(1, 6, seed=3)),
                   lambda: (_randn(4, 3, 16, 16, seed=2), _randn(4, 6, seed=4))),
    "shared_stem": (SharedStem, lambda: (_randn(1, 3, 16, 16),), lambda: (_randn(4, 3, 16, 16, seed=2),)),
    "fused_functions": (FusedFunctions, lambda: (_randn(2, 3, 8, 8),), lambda: (_randn(4, 3, 8, 8, seed=2),)),
}
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_zoo_families import FAMILIES  # noqa: E402

HANDWRITTEN.update(FAMILIES)


# ---- torchvision --------------------------------------------------------------------------------

def torchvision_names(kind="classification"):
    """torchvision's registry (0.14) of the given kind; nothing is downloaded."""
    import torchvision

    module = {"classification": torchvision.models, "segmentation": torchvision.models.segmentation}[kind]
    return sorted(torchvision.models.list_models(module=module))


def torchvision_entry(name, kind="classification", size=64):
    import torchvision

    module = {"classification": torchvision.models, "segmentation": torchvision.models.segmentation}[kind]

    def make():
        kw = {"weights": None}
        if kind == "segmentation":
            kw["weights_backbone"] = None
            kw["aux_loss"] = False
        if name.startswith("inception") or name.startswith("googlenet"):
            kw["aux_logits"] = False
            kw["init_weights"] = False
        if name.startswith("vit") or name.startswith("swin") or name.startswith("maxvit"):
            kw["image_size"] = size  # only the architectures whose constructor takes it
        try:
            return module.get_model(name, **kw) if hasattr(module, "get_model") else \
                torchvision.models.get_model(name, **kw)
        except TypeError:
            kw.pop("image_size", None)
            return torchvision.models.get_model(name, **kw)

    return make, (lambda: (_randn(1, 3, size, size),)), (lambda: (_randn(2, 3, size, size, seed=2),))


# ---- preparing a case ---------------------------------------------------------------------------

def warm(model, warm_inputs, passes=3):
    """Random seeded weights stay; BatchNorm statistics come from a few train-mode passes."""
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.train()
        with torch.no_grad():
            for _ in range(passes):
                ins = warm_inputs()
                model(*ins) if isinstance(ins, tuple) else model(**ins)
    return model.eval()


def reseed(model, seed=0):
    """Seeded random weights for every parameter, so that cloned layers differ."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            fan_in = p[0].numel() if p.dim() > 1 else p.numel()
            p.copy_(torch.randn(p.shape, generator=g) / max(1.0, fan_in) ** 0.5)
    return model


def build(name, factory, inputs, warm_inputs):
    torch.manual_seed(0)
    model = factory()
    if name in HANDWRITTEN:
        reseed(model)
    return warm(model, warm_inputs), inputs()


def prepare(folder, name, factory, inputs, warm_inputs, opset=13):
    """Exports and captures one model into `folder`; returns (onnx path, capture path)."""
    model, x = build(name, factory, inputs, warm_inputs)
    os.makedirs(folder, exist_ok=True)
    onnx_path = os.path.join(folder, f"{name}.onnx")
    cap = os.path.join(folder, f"{name}.cap")
    export(model, x, onnx_path, opset=opset)
    capture(model, x, cap, onnx_path=onnx_path)
    return onnx_path, cap


# ---- faults -------------------------------------------------------------------------------------

def _static_source(graph, name, producers, inits):
    """The initializer a weight input comes from through nodes without graph inputs (e.g. a
    Transpose of the weight), or None."""
    seen = 0
    while name not in inits and seen < 8:
        node = producers.get(name)
        if node is None or len(node.input) != 1:
            return None
        name = node.input[0]
        seen += 1
    return name if name in inits else None


def fault_candidates(model_proto):
    """Conv/Gemm/MatMul nodes whose weight (input 1) is an initializer, directly or through a
    static chain, in graph order: (node name, initializer name)."""
    g = model_proto.graph
    inits = {i.name for i in g.initializer}
    producers = {o: n for n in g.node for o in n.output}
    out = []
    for n in g.node:
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1:
            src = _static_source(g, n.input[1], producers, inits)
            if src is not None:
                out.append((n.name, src))
    # a weight read by one node only (the exporter shares identical initializers)
    uses = {}
    for _, src in out:
        uses[src] = uses.get(src, 0) + 1
    return [(n, src) for n, src in out if uses[src] == 1]


def _capture_inputs(cap):
    with open(os.path.join(cap, "manifest.json")) as f:
        man = json.load(f)
    return [f"{e['name']}={os.path.join(cap, e['file'])}" for e in man["tensors"] if e["kind"] == "input"]


def inject_weight_fault(onnx_path, out_path, position=0.5, scale=1.0, onnxprobe=None, capture=None, tries=6):
    """Changes one element of the weight of the Conv/Gemm/MatMul at `position` of the way through
    the graph: an element of large magnitude gets scale * max|w| added. With `onnxprobe` set, a
    change whose effect on the node's output stays within twice the tolerance (its input channel is
    zero or small for these inputs) is undone and the next element tried, then the same with ten
    times the change, judged by ONNX Runtime's Python API and numpy (_has_effect) on the inputs of
    `capture`. Returns the faulted node's name (None when no candidate node exists or none of the
    tried elements has an effect)."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(onnx_path)
    cands = fault_candidates(m)
    if not cands:
        return None
    node, init = cands[min(len(cands) - 1, int(position * len(cands)))]
    out = next(n.output[0] for n in m.graph.node if n.name == node)
    t = next(i for i in m.graph.initializer if i.name == init)
    original = numpy_helper.to_array(t).copy()
    order = np.argsort(-np.abs(original).ravel(), kind="stable")
    # one element per input channel (axis 1), largest first
    channel_of = np.unravel_index(order, original.shape)[1] if original.ndim > 1 else order
    picked, seen = [], set()
    for k, ch in zip(order, channel_of):
        if int(ch) not in seen:
            seen.add(int(ch))
            picked.append(int(k))
        if len(picked) == tries:
            break
    for k, factor in [(k, f) for f in (1.0, 10.0) for k in picked]:  # larger if none shows
        w = original.copy()
        w.flat[k] += np.float32(factor * scale * np.abs(original).max()) * (1 if w.flat[k] >= 0 else -1)
        t.CopyFrom(numpy_helper.from_array(w, init))
        onnx.save(m, out_path)
        if onnxprobe is None or _has_effect(onnxprobe, capture, onnx_path, out_path, out):
            return node
    return None


# Run by the bootstrap's test environment (onnxruntime and onnx, not onnxprobe): `tensor` of the
# original and of the faulted model on the same inputs, as ONNX Runtime's Python API computes it,
# judged with numpy by the documented default rule (docs/metrics.md): an element fails when
# |b - a| > 1e-5 * max(1, max|a| over |a| < 1e30) + 1e-3 * |a|. Prints the largest
# (|b - a| / allowed) and whether any element differs at all.
_EFFECT_SCRIPT = r"""
import json, sys
import numpy as np, onnx, onnxruntime as ort
a_path, b_path, tensor, feeds = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
inputs = {k: np.load(v) for k, v in feeds.items()}
def value(path):
    m = onnx.load(path)
    if tensor not in [o.name for o in m.graph.output]:
        m.graph.output.append(onnx.ValueInfoProto(name=tensor))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    return np.asarray(s.run([tensor], {k: v for k, v in inputs.items() if k in names})[0], np.float64)
a, b = value(a_path), value(b_path)
finite = np.abs(a[np.isfinite(a)])
scale = max(1.0, float(finite[finite < 1e30].max(initial=0.0)))
allowed = 1e-5 * scale + 1e-3 * np.abs(a)
d = np.abs(b - a)
d[np.isnan(a) & np.isnan(b)] = 0
print(json.dumps({"ratio": float(np.max(d / allowed)) if d.size else 0.0,
                  "differs": bool(np.any(d > 0) or np.any(np.isnan(d)))}))
"""


def _has_effect(onnxprobe, capture, onnx_path, out_path, tensor, any_difference=False):
    """Whether the faulted model's `tensor` fails against the original's at the default tolerance
    by at least a factor of 2 (with `any_difference`: differs at all), on the inputs of `capture`.
    The reference is ONNX Runtime's Python API and numpy, never onnxprobe (whose argument is
    kept for the callers and not used): fault positions are not chosen by the tool under test."""
    del onnxprobe
    py = os.environ.get("ONNXPROBE_PYENV")
    assert py and os.path.exists(py), "ONNXPROBE_PYENV (bootstrap's test environment) is missing"
    feeds = dict(i.split("=", 1) for i in _capture_inputs(capture))
    r = subprocess.run([py, "-c", _EFFECT_SCRIPT, onnx_path, out_path, tensor, json.dumps(feeds)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    return got["differs"] if any_difference else got["ratio"] > 2


def _shift_pads(node):
    """Conv/pooling pads (p, p, ..., p, p) -> (2p, ..., 0, ...): same output size, content shifted."""
    for a in node.attribute:
        if a.name == "pads" and len(a.ints) >= 2 and len(set(a.ints)) == 1 and a.ints[0] > 0:
            half = len(a.ints) // 2
            p = a.ints[0]
            del a.ints[:]
            a.ints.extend([2 * p] * half + [0] * half)
            return True
    return False


def _scale_float_attribute(node):
    """alpha / beta / epsilon of an activation, Gemm or normalization: doubled (0 -> 0.1)."""
    import onnx

    for a in node.attribute:
        if a.name in ("alpha", "beta", "epsilon", "gamma", "lambd") and a.type == onnx.AttributeProto.FLOAT:
            a.f = a.f * 2 if a.f != 0 else 0.1
            return True
    return False


def inject_attribute_fault(onnx_path, out_path, position=0.5, onnxprobe=None, capture=None, tries=6):
    """Changes one attribute of a node at `position` of the way through the graph's candidates:
    symmetric Conv/pooling pads shifted (same output size), or a float attribute (alpha, beta,
    epsilon, ...) doubled. With `onnxprobe`, candidates whose change keeps the node's output
    within the default tolerance on the capture's inputs are skipped (the next ones tried).
    Returns the faulted node's name, or None."""
    import onnx

    base = onnx.load(onnx_path)
    names = [n.name for n in base.graph.node
             if (n.op_type in ("Conv", "ConvTranspose", "MaxPool", "AveragePool") and _shift_pads(onnx.NodeProto.FromString(n.SerializeToString())))
             or _scale_float_attribute(onnx.NodeProto.FromString(n.SerializeToString()))]
    if not names:
        return None
    start = min(len(names) - 1, int(position * len(names)))
    for name in (names[start:] + names[:start])[:tries]:
        m = onnx.load(onnx_path)
        node = next(n for n in m.graph.node if n.name == name)
        if not (node.op_type in ("Conv", "ConvTranspose", "MaxPool", "AveragePool") and _shift_pads(node)):
            _scale_float_attribute(node)
        onnx.save(m, out_path)
        if onnxprobe is None or _has_effect(onnxprobe, capture, onnx_path, out_path, node.output[0]):
            return name
    return None


SCALAR_READERS = ("Mul", "Div", "Add", "Sub", "Pow", "Pad", "Max", "Min", "Clip")


def scalar_constant_candidates(model_proto, scope=""):
    """Float scalar constants (a one-element Constant node or initializer) that exactly one node
    of SCALAR_READERS reads, in graph order: (reader node name, tensor name, value)."""
    from onnx import numpy_helper

    g = model_proto.graph
    values = {}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            t = numpy_helper.to_array(n.attribute[0].t)
            if t.size == 1 and t.dtype.kind == "f":
                values[n.output[0]] = float(t.reshape(-1)[0])
    for i in g.initializer:
        t = numpy_helper.to_array(i)
        if t.size == 1 and t.dtype.kind == "f":
            values[i.name] = float(t.reshape(-1)[0])
    readers = {}
    for n in g.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    out = []
    for n in g.node:
        if n.op_type not in SCALAR_READERS or not n.name.startswith(scope):
            continue
        for x in n.input:
            if x in values and len(readers[x]) == 1:
                out.append((n.name, x, values[x]))
    return out


def set_scalar_constant(onnx_path, out_path, tensor, value):
    """Saves the model with the scalar constant `tensor` (Constant node or initializer) = value."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(onnx_path)
    for n in m.graph.node:
        if n.op_type == "Constant" and n.output[0] == tensor:
            t = numpy_helper.to_array(n.attribute[0].t)
            n.attribute[0].t.CopyFrom(numpy_helper.from_array(np.full(t.shape, value, t.dtype)))
    for i in m.graph.initializer:
        if i.name == tensor:
            t = numpy_helper.to_array(i)
            i.CopyFrom(numpy_helper.from_array(np.full(t.shape, value, t.dtype), i.name))
    onnx.save(m, out_path)


def inject_scalar_constant_fault(onnx_path, out_path, position=0.5, onnxprobe=None, capture=None, tries=6,
                                 scope="", factor=1.1):
    """Scales one scalar constant (an exporter's eps, a GELU coefficient, an attention scale, an
    exponent) read by the node at `position` of the way through the candidates by `factor` (0 ->
    0.1). With `capture`, a change that keeps the reader's output within the default tolerance
    (checked with ONNX Runtime's Python API) is undone and the next one tried. Returns (reader node
    name, original value), or None."""
    import onnx

    cands = scalar_constant_candidates(onnx.load(onnx_path), scope)
    if not cands:
        return None
    start = min(len(cands) - 1, int(position * len(cands)))
    m = onnx.load(onnx_path)
    outputs = {n.name: n.output[0] for n in m.graph.node}
    for node, tensor, value in (cands[start:] + cands[:start])[:tries]:
        set_scalar_constant(onnx_path, out_path, tensor, value * factor if value != 0 else 0.1)
        if capture is None or _has_effect(onnxprobe, capture, onnx_path, out_path, outputs[node]):
            return node, value
    return None


FP16_AFTER = ("Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "Softmax", "Sigmoid", "Div", "Sub", "Clip",
              "HardSigmoid", "Tanh", "Erf", "Concat", "GlobalAveragePool", "ReduceMean")


def inject_fp16_roundtrip(onnx_path, out_path, position=0.5, onnxprobe=None, capture=None, tries=6):
    """Inserts Cast(float16) -> Cast(float32) after the float output of a compute node at
    `position` of the way through the graph (never a graph output); the consumers read the round
    trip. With `onnxprobe`, a place where the round trip changes nothing (values exact in
    float16) is skipped. Returns the name of the inserted Cast to float16, or None."""
    import onnx
    from onnx import helper

    base = onnx.load(onnx_path)
    outs = {o.name for o in base.graph.output}
    inits = {i.name for i in base.graph.initializer}
    # float32 outputs only: a round trip on an int64 shape computation changes a dtype, not a value
    typed = onnx.shape_inference.infer_shapes(base).graph.value_info
    is_float = {v.name for v in typed if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    names = [n.name for n in base.graph.node
             if n.op_type in FP16_AFTER and n.output[0] not in outs and n.output[0] in is_float
             and not all(x in inits for x in n.input)]
    if not names:
        return None
    start = min(len(names) - 1, int(position * len(names)))
    for name in (names[start:] + names[:start])[:tries]:
        m = onnx.load(onnx_path)
        g = m.graph
        node = next(n for n in g.node if n.name == name)
        src = node.output[0]
        half, back = src + "__fp16", src + "__fp32"
        for other in g.node:
            for i, x in enumerate(other.input):
                if x == src:
                    other.input[i] = back
        at = list(g.node).index(node) + 1
        g.node.insert(at, helper.make_node("Cast", [half], [back], name="injected_cast_to_fp32",
                                           to=onnx.TensorProto.FLOAT))
        g.node.insert(at, helper.make_node("Cast", [src], [half], name="injected_cast_to_fp16",
                                           to=onnx.TensorProto.FLOAT16))
        onnx.save(m, out_path)
        reader = next(n for n in g.node if back in n.input)
        if onnxprobe is None or _has_effect(onnxprobe, capture, onnx_path, out_path, reader.output[0],
                                            any_difference=True):
            return "injected_cast_to_fp16"
    return None


# ---- comparing ----------------------------------------------------------------------------------

def compare(onnxprobe, cap, onnx_path, report, *extra):
    """Runs onnxprobe compare; returns (exit code, report dict or None, seconds, output)."""
    t0 = time.time()
    r = subprocess.run([onnxprobe, "compare", cap, onnx_path, "--json", report, "-q"] + list(extra),
                       capture_output=True, text=True, timeout=1800)
    secs = time.time() - t0
    rep = None
    if r.returncode in (0, 1) and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
    return r.returncode, rep, secs, r.stdout + r.stderr


def coverage(rep):
    """Share of the module calls' outputs and arguments paired by structure (values recorded
    inside a call, `inside`, serve localization and are not counted)."""
    rows = [a for a in rep.get("alignment", []) if not a.get("inside")]
    if not rows:
        return 0.0
    paired = sum(1 for a in rows if a["onnx"] is not None and a["method"] != "value")
    return paired / len(rows)


def noise_ratio(rep):
    """How much of its tolerance the worst compared row used: the largest tolerance_ratio
    (error / allowed error), or, from reports without it, max-abs error / atol_used (an upper
    bound of it)."""
    ratios = []
    for t in rep.get("tensors", []):
        if t.get("tolerance_ratio") is not None:
            ratios.append(t["tolerance_ratio"])
        elif t.get("atol_used"):
            ratios.append(t["max_abs"] / t["atol_used"])
    return max(ratios or [0.0])


def parity_names(rep, node):
    """Whether a parameter-parity finding (in the alignment notes) names `node`."""
    return any(f"node {node} (" in a.get("note", "") for a in rep.get("alignment", []))


def top_culprit(rep):
    cul = (rep.get("localization") or {}).get("culprits") or rep.get("culprits") or []
    return cul[0] if cul else None


def named(rep):
    """The node a report names first: the top culprit, or on a passing comparison (a
    sub-tolerance fault) the first drift origin."""
    c = top_culprit(rep)
    if c is not None:
        return c.get("node")
    drift = rep.get("drift_origins") or []
    return drift[0].get("node") if drift else None


def culprit_names(c):
    if c is None:
        return []
    return [c.get("node")] + list(c.get("nodes", []))


def two_inputs():
    """A seeded factory for the companion's command line (module:function)."""
    return build("two_inputs", *HANDWRITTEN["two_inputs"])[0]


# ---- faults inside one module call (attention internals, functional code) ---------------------

ATTRIBUTE_FAULTS_INSIDE = ("softmax_axis", "gemm_alpha", "scale_constant")


def inject_attribute_fault_inside(onnx_path, out_path, scope, kind):
    """Changes one attribute of a node inside `scope` (a node-name prefix such as
    "/encoder/layers.1/self_attn/", i.e. inside one module call) and saves the model to
    `out_path`. Kinds: "softmax_axis" (a Softmax normalizes along another axis of the same size),
    "gemm_alpha" (a Gemm's alpha scaled), "scale_constant" (the Constant a Div or Mul scales by:
    its value attribute doubled). Returns the name of the node whose output changes first (the
    Softmax, the Gemm, the Div/Mul reading the constant), or None when `scope` has no such node."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(onnx_path)
    g = m.graph
    inside = [n for n in g.node if n.name.startswith(scope)]
    producers = {o: n for n in g.node for o in n.output}
    if kind == "softmax_axis":
        for n in inside:
            if n.op_type != "Softmax":
                continue
            axis = next((a for a in n.attribute if a.name == "axis"), None)
            if axis is None:
                axis = n.attribute.add()
                axis.name, axis.type, axis.i = "axis", onnx.AttributeProto.INT, -1
            # the axis before the last: a square score matrix keeps its shape, not its values
            axis.i = -2 if axis.i in (-1,) else -1
            onnx.save(m, out_path)
            return n.name
    elif kind == "gemm_alpha":
        for n in inside:
            if n.op_type != "Gemm":
                continue
            alpha = next((a for a in n.attribute if a.name == "alpha"), None)
            if alpha is None:
                alpha = n.attribute.add()
                alpha.name, alpha.type, alpha.f = "alpha", onnx.AttributeProto.FLOAT, 1.0
            alpha.f = alpha.f * 1.5
            onnx.save(m, out_path)
            return n.name
    elif kind == "scale_constant":
        for n in inside:
            if n.op_type not in ("Div", "Mul"):
                continue
            for x in n.input:
                c = producers.get(x)
                if c is None or c.op_type != "Constant":
                    continue
                value = next((a for a in c.attribute if a.name == "value"), None)
                if value is None:
                    continue
                arr = numpy_helper.to_array(value.t)
                if arr.dtype.kind != "f" or arr.size != 1:
                    continue
                value.t.CopyFrom(numpy_helper.from_array((arr * 2).astype(arr.dtype), value.t.name))
                onnx.save(m, out_path)
                return n.name
    else:
        raise ValueError(f"unknown fault kind {kind!r}")
    return None


def inject_weight_fault_inside(onnx_path, out_path, scope, position=0.5, **kw):
    """inject_weight_fault restricted to the Conv/Gemm/MatMul nodes inside `scope` (a node-name
    prefix); returns the faulted node's name or None."""
    import onnx

    m = onnx.load(onnx_path)
    inside = [(n, s) for n, s in fault_candidates(m) if n.startswith(scope)]
    if not inside:
        return None
    node = inside[min(len(inside) - 1, int(position * len(inside)))][0]
    all_cands = fault_candidates(m)
    pos = [n for n, _ in all_cands].index(node)
    # inject_weight_fault picks by position among all candidates: aim at this one
    return inject_weight_fault(onnx_path, out_path, position=(pos + 0.5) / len(all_cands), **kw)
