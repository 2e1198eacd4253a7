"""PyTorch vs ONNX end to end: capture with the companion, export with it, compare with
onnxprobe. Aligned tensors must pass; an injected fault must be named by torch module and node."""
import copy
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.environ.get("ONNXPROBE_SRC", ""), "python"))
import torch_models  # noqa: E402
from conftest import run  # noqa: E402
from onnxprobe_torch import capture, export  # noqa: E402


def prepare(tmp_path, model, shape, name="m", float64=True):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    export(model, x, str(tmp_path / f"{name}.onnx"), ["input"], ["output"])
    capture(model, x, str(tmp_path / f"{name}.cap"), ["input"], float64=float64)
    return tmp_path / f"{name}.onnx", tmp_path / f"{name}.cap"


def compare(onnxprobe, tmp_path, a, b, *extra):
    r = run([onnxprobe, "compare", a, b, "--json", tmp_path / "r.json", "--html", tmp_path / "r.html"] + list(extra))
    return r, json.loads((tmp_path / "r.json").read_text())


def exported(tmp_path, model, x, name, **capture_kw):
    """Exports `model` on `x` to tmp_path/NAME.onnx and captures it to tmp_path/NAME.cap."""
    onnx_path, cap = tmp_path / f"{name}.onnx", tmp_path / f"{name}.cap"
    export(model, x, str(onnx_path))
    capture(model, x, str(cap), **capture_kw)
    return onnx_path, cap


def _change_initializer(path, out, name, index, delta):
    m = onnx.load(str(path))
    init = next(i for i in m.graph.initializer if i.name == name)
    w = numpy_helper.to_array(init).copy()
    w.flat[index] += delta
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    onnx.save(m, str(out))
    return m


@pytest.mark.parametrize("factory,shape,min_rows", [
    (torch_models.net, (2, 3, 16, 16), 15),
    (torch_models.tuple_net, (3, 6), 3),
    (torch_models.vit, (1, 3, 16, 16), 5),
    (lambda: torch_models.torchvision_model("resnet50"), (1, 3, 224, 224), 120),
    (lambda: torch_models.torchvision_model("mobilenet_v2"), (1, 3, 224, 224), 100),
], ids=["cnn", "tuple", "vit", "resnet50", "mobilenet_v2"])
def test_every_aligned_tensor_passes(onnxprobe, tmp_path, factory, shape, min_rows):
    model_path, cap = prepare(tmp_path, factory(), shape)
    r, rep = compare(onnxprobe, tmp_path, cap, model_path)
    assert r.returncode == 0, r.stdout[-3000:]
    assert rep["summary"]["first_divergence"] is None
    assert rep["summary"]["compared"] >= min_rows
    assert rep["side_a"]["description"].startswith("PyTorch capture")
    methods = {a["method"] for a in rep["alignment"]}
    assert "scope" in methods
    assert "alignment of" in r.stdout


def test_alignment_table_explains_what_the_exporter_changed(onnxprobe, tmp_path):
    model_path, cap = prepare(tmp_path, torch_models.net(), (2, 3, 16, 16))
    r, rep = compare(onnxprobe, tmp_path, cap, model_path)
    al = {a["torch"]: a for a in rep["alignment"]}
    # BatchNorm folded into the Conv: BN's output is the Conv node's output; the pre-BN
    # activation has no counterpart and is not a failure
    assert al["layer1.0.bn1"]["method"] == "bn-folded"
    assert al["layer1.0.bn1"]["onnx"] == "/layer1/layer1.0/conv1/Conv_output_0"
    assert al["layer1.0.conv1"]["onnx"] is None and "fused" in al["layer1.0.conv1"]["note"]
    assert "layer1.0.conv1" in rep["only_in_a"]
    # one ReLU module called twice
    assert al["layer1.0.relu"]["onnx"] == "/layer1/layer1.0/relu/Relu_output_0"
    assert al["layer1.0.relu_1"]["onnx"] == "/layer1/layer1.0/relu_1/Relu_output_0"
    assert al["layer1.0"]["method"] == "container"
    # a module with no nodes (Dropout in eval, after functional code): the tensor its consumer reads
    assert al["drop"]["method"] == "no-nodes"
    assert al["drop"]["onnx"] == "/Flatten_output_0"
    assert "PyTorch &harr; ONNX alignment" in (tmp_path / "r.html").read_text()


def perturb(path, out, node_name, scale=1.05):
    m = onnx.load(str(path))
    n = next(n for n in m.graph.node if n.name == node_name)
    t = next(i for i in m.graph.initializer if i.name == n.input[1])
    w = numpy_helper.to_array(t).copy()
    w[1] *= np.float32(scale)
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(m, str(out))


def test_a_perturbed_weight_is_named_by_module_and_node(onnxprobe, tmp_path):
    model_path, cap = prepare(tmp_path, torch_models.net(), (2, 3, 16, 16))
    perturb(model_path, tmp_path / "bad.onnx", "/layer1/layer1.1/conv2/Conv")
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "bad.onnx", "--repro", tmp_path / "repro")
    assert r.returncode == 1
    first = rep["tensors"][[t["name"] for t in rep["tensors"]].index(rep["summary"]["first_divergence"])]
    assert first["name"] == "layer1.1.bn2"  # the torch module (its BN folded into the Conv)
    assert first["node"] == "/layer1/layer1.1/conv2/Conv"  # and the ONNX node
    assert rep["localization"]["culprits"][0]["node"] == "/layer1/layer1.1/conv2/Conv"
    assert "first divergence: layer1.1.bn2 (Conv node /layer1/layer1.1/conv2/Conv)" in r.stdout
    assert run([onnxprobe, "replay", tmp_path / "repro"]).returncode == 1
    # where in the user's code: the module and the line of torch_models.py that called it (found here by
    # reading the source, not from the tool)
    lines = open(torch_models.__file__).read().splitlines()
    line = next(i + 1 for i, text in enumerate(lines) if "self.bn2(self.conv2(y))" in text)
    origin = rep["localization"]["culprits"][0]["origin"]
    assert origin == f"module layer1.1.bn2 called at {torch_models.__file__}:{line}", origin
    assert f"in PyTorch: {origin}" in r.stdout


def test_a_changed_constant_in_a_transformer_is_found(onnxprobe, tmp_path):
    model_path, cap = prepare(tmp_path, torch_models.vit(), (1, 3, 16, 16))
    m = onnx.load(str(model_path))
    # LayerNorm's epsilon in opset 13 is a Constant feeding Add: make it 0.5
    for n in m.graph.node:
        if n.op_type == "Add" and "norm" in n.name:
            c = next((c for c in m.graph.node if c.op_type == "Constant" and c.output[0] in n.input), None)
            if c is not None:
                c.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(0.5, np.float32), c.attribute[0].t.name))
                target = c.name
                break
    onnx.save(m, str(tmp_path / "bad.onnx"))
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "bad.onnx")
    assert r.returncode == 1, r.stdout[-2000:]
    assert rep["localization"]["culprits"][0]["node"] in (target,) or \
        any(target in c["nodes"] for c in rep["localization"]["culprits"][:1])


# ---- alignment built on the exporter's guarantees ---------------------------------------------

sys.path.insert(0, os.path.dirname(__file__))
import torch_zoo  # noqa: E402


def aligned(onnxprobe, tmp_path, name):
    onnx_path, cap = torch_zoo.prepare(str(tmp_path), name, *torch_zoo.HANDWRITTEN[name])
    r, rep = compare(onnxprobe, tmp_path, cap, onnx_path)
    assert r.returncode == 0, r.stdout[-3000:]
    producer = {o: n for n in onnx.load(onnx_path).graph.node for o in n.output}
    return {a["torch"]: a for a in rep["alignment"]}, producer, rep


def test_batchnorm_subclass_with_activation_and_a_module_called_twice(onnxprobe, tmp_path):
    al, producer, _ = aligned(onnxprobe, tmp_path, "two_inputs")
    # BnAct(BatchNorm2d) + hardswish after a Conv: the exporter folded the normalization into the
    # Conv (its weight is no longer conv1.weight), so conv1's own output exists nowhere
    conv = producer["/conv1/Conv_output_0"]
    assert conv.input[1] != "conv1.weight"
    assert al["conv1"]["onnx"] is None and al["conv1"]["method"] == "none"
    assert al["bn1"]["method"] == "fused-norm-act"
    assert producer[al["bn1"]["onnx"]].name.startswith("/bn1/")
    # the same Sequential called twice: the second call's children carry _1 on their own scope
    assert al["block.2"]["onnx"] == producer_output(producer, "/block/block.2/Relu")
    assert al["block.2_1"]["onnx"] == producer_output(producer, "/block/block.2_1/Relu")
    assert al["block_1"]["method"] == "container" and al["block_1"]["onnx"] == al["block.2_1"]["onnx"]
    assert al["block.1_1"]["method"] == "bn-folded"
    assert al["block.1_1"]["onnx"] == producer_output(producer, "/block/block.0_1/Conv")


def producer_output(producer, node_name):
    return next(o for o, n in producer.items() if n.name == node_name)


def test_shared_module_and_dropout_without_nodes(onnxprobe, tmp_path):
    al, producer, _ = aligned(onnxprobe, tmp_path, "shared_stem")
    # one Sequential object under two attribute names: its second call is left_1, its children's
    # nodes are /left/left.k_1 (the exporter names a shared module by its first path)
    assert al["left.2_1"]["onnx"] == producer_output(producer, "/left/left.2_1/Clip")
    assert al["left_1"]["onnx"] == al["left.2_1"]["onnx"]
    # Dropout after functional code (amax) has no nodes: the tensor fc reads
    assert al["drop"]["method"] == "no-nodes"
    assert producer[al["drop"]["onnx"]].op_type == "ReduceMax"


def test_attention_tuple_output_is_never_paired_with_integers(onnxprobe, tmp_path):
    al, producer, rep = aligned(onnxprobe, tmp_path, "attention_pool")
    # (attn_output, attn_weights): the weights are the model's second output
    assert al["attn:1"]["onnx"] == "output_1"
    assert al["attn"]["onnx"] is not None and producer[al["attn"]["onnx"]].name.startswith("/attn/")
    rows = {t["name"]: t for t in rep["tensors"]}
    for name in ("attn", "attn:1"):
        assert rows[name]["dtype_b"] == "float32" and rows[name]["shape_a"] == rows[name]["shape_b"]


class StackedLstm(torch.nn.Module):
    """A 2-layer bidirectional LSTM whose hidden state is a model output and whose cell state
    nothing reads: the exporter drops the cell state's tensor, and the hidden state's is the only
    one of that type left in the LSTM's scope."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(6, 6, batch_first=True)
        self.lstm = torch.nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        g, _ = self.gru(x)  # the GRU's final state is returned but not used
        y, (h, c) = self.lstm(g)
        return self.fc(y), h


def test_an_output_the_exporter_dropped_is_unaligned_not_paired_with_its_sibling(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = StackedLstm().eval()
    x = torch.randn(2, 7, 6)
    exported(tmp_path, model, x, "l")
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "l.cap", tmp_path / "l.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    al = {a["torch"]: a for a in rep["alignment"]}
    # PyTorch's own values say which output the tensor is: h, not c
    _, (h, c) = model.lstm(x)
    assert not torch.allclose(h, c, atol=1e-2)
    assert al["lstm:1"]["onnx"] == "output_1" and al["lstm:1"]["method"] == "scope"
    assert al["lstm:2"]["onnx"] is None and "lstm:1" in al["lstm:2"]["note"]
    assert "lstm:2" not in {t["name"] for t in rep["tensors"]}
    # the GRU node's final-state output, which nothing reads, is still the GRU's own output
    m = onnx.load(str(tmp_path / "l.onnx"))
    gru = next(n for n in m.graph.node if n.op_type == "GRU")
    assert al["gru:1"]["onnx"] == gru.output[1] and al["gru:1"]["method"] == "scope"
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["gru:1"]["state"] == "compared" and rows["gru:1"]["verdict"] == "PASS"


class ResidualAndSkip(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.res = torch.nn.Conv1d(4, 4, 1)
        self.skip = torch.nn.Conv1d(4, 4, 1)

    def forward(self, x):
        return x + self.res(x), self.skip(x)


class KeepsTheSkip(torch.nn.Module):
    """The caller discards the block's residual sum: the exporter drops it, and the block's scope
    hands on only its skip convolution's output."""

    def __init__(self):
        super().__init__()
        self.blk = ResidualAndSkip()

    def forward(self, x):
        _, s = self.blk(x)
        return s


def test_an_output_the_caller_discards_is_not_paired_with_the_returned_submodule_output(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = KeepsTheSkip().eval()
    x = torch.randn(1, 4, 8)
    exported(tmp_path, model, x, "s")
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "s.cap", tmp_path / "s.onnx")
    assert r.returncode == 0, r.stdout[-3000:]  # was a FAIL: the residual sum against the skip
    al = {a["torch"]: a for a in rep["alignment"]}
    assert al["blk"]["onnx"] is None and "blk:1" in al["blk"]["note"]
    assert al["blk:1"]["onnx"] == al["blk.skip"]["onnx"] is not None


class SquareMemory(torch.nn.Module):
    """A feature map flattened and transposed into (batch, positions, channels) with as many
    positions as channels, read by a batch-first decoder: the exporter merges that transpose with
    the decoder's own, so the square tensor before it is the only one of the argument's type the
    decoder reads."""

    def __init__(self, d=16):
        super().__init__()
        self.backbone = torch.nn.Conv2d(3, d, 3, 4, 1)
        self.queries = torch.nn.Embedding(5, d)
        layer = torch.nn.TransformerDecoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, 1)
        self.head = torch.nn.Linear(d, 4)

    def forward(self, x):
        memory = self.backbone(x).flatten(2).transpose(1, 2)
        q = self.queries.weight.unsqueeze(0).repeat(x.shape[0], 1, 1)
        return self.head(self.decoder(q, memory))


def test_an_argument_matching_a_tensor_only_by_type_is_not_paired(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = SquareMemory().eval()
    x = torch.randn(2, 3, 16, 16)
    exported(tmp_path, model, x, "d")
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "d.cap", tmp_path / "d.onnx")
    assert r.returncode == 0, r.stdout[-3000:]  # was a FAIL: the memory against its transpose
    al = {a["torch"]: a for a in rep["alignment"]}
    assert al["decoder:in1"]["onnx"] is None and "another order" in al["decoder:in1"]["note"]
    assert al["decoder:in0"]["onnx"] is not None  # the queries keep their pair
    # with the backbone's weight changed in the ONNX file, the ONNX values no longer show the
    # permutation; PyTorch's own values (the backbone's output) still do
    conv = next(n for n in onnx.load(str(tmp_path / "d.onnx")).graph.node if n.op_type == "Conv")
    _change_initializer(tmp_path / "d.onnx", tmp_path / "bad.onnx", conv.input[1], 7, 1.0)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "d.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    al = {a["torch"]: a for a in rep["alignment"]}
    assert al["decoder:in1"]["onnx"] is None and "another order" in al["decoder:in1"]["note"]
    assert rep["localization"]["culprits"][0]["node"] == conv.name


class TiedLm(torch.nn.Module):
    """An embedding whose weight the output projection reuses (tied weights)."""

    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.body = torch.nn.Linear(d, d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.body(self.embed(ids))))


def test_a_tied_weight_is_named_at_the_reader_whose_output_it_changes(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = TiedLm().eval()
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    exported(tmp_path, model, ids, "t")
    # row 30 (token 30) is not in the input: only the output projection sees the change
    m = _change_initializer(tmp_path / "t.onnx", tmp_path / "bad.onnx", "embed.weight", 30 * 16 + 3, 2.0)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "t.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    readers = {n.name for n in m.graph.node if n.op_type in ("Gather", "MatMul", "Gemm")
               and not n.name.startswith("/body")}
    (finding,) = rep["parity"]["findings"]
    assert set(finding["readers"]) == readers and len(readers) == 2
    top = rep["localization"]["culprits"][0]
    assert top["evidence"] == "parity" and top["node"].startswith("/lm_head/")
    why = [f for f in rep["diagnosis"]["findings"] if f["node"] == top["node"]]
    assert why and why[0]["cause"] == "weight-changed" and "PyTorch" in why[0]["summary"]
    assert "embed.weight" in why[0]["evidence"]


class TopKOfRelu(torch.nn.Module):
    """TopK over ReLU outputs: more picks than positive values, so zeros tie."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)
        self.out = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.relu(self.fc(x) - 0.3)
        v, i = h.topk(6, dim=-1)
        return self.out(v), i


def test_indices_that_differ_only_between_tied_values_pass(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = TopKOfRelu().eval()
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
    exported(tmp_path, model, x, "k")
    # reference: ONNX Runtime's Python API breaks the zeros' ties otherwise than PyTorch
    script = ("import sys, numpy as np, onnxruntime as ort\n"
              "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
              "np.save(sys.argv[2], s.run(None, {s.get_inputs()[0].name: np.load(sys.argv[3])})[1])\n")
    np.save(tmp_path / "x.npy", x.numpy())
    py = os.environ.get("ONNXPROBE_PYENV", sys.executable)
    ref = subprocess.run([py, "-c", script, str(tmp_path / "k.onnx"), str(tmp_path / "i.npy"),
                          str(tmp_path / "x.npy")], capture_output=True, text=True, timeout=300)
    assert ref.returncode == 0, ref.stderr[-2000:]
    ort_i = np.load(tmp_path / "i.npy")
    with torch.no_grad():
        h = torch.relu(model.fc(x) - 0.3)
        torch_i = model(x)[1].numpy()
    differ = ort_i != torch_i
    assert differ.any()  # the case exists
    picked = h.numpy()
    rows = np.nonzero(differ)[0]
    assert np.array_equal(picked[rows, ort_i[differ]], picked[rows, torch_i[differ]])  # all ties
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "k.cap", tmp_path / "k.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    row = next(t for t in rep["tensors"] if t["dtype_a"] == "int64")
    assert row["verdict"] == "PASS" and "tie" in row["reason"]
    assert row["mismatches"] == int(differ.sum())
    # the share of tolerance reported is the tied values' (exactly equal zeros: none used)
    assert row["tolerance_ratio"] == 0.0, row


class TopTwoExperts(torch.nn.Module):
    """A router: softmax gate, top-2 experts, a gather of their outputs by the top-k indices."""

    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(8, 4)
        self.val = torch.nn.Linear(8, 4)

    def forward(self, x):
        probs = torch.nn.functional.softmax(self.gate(x), dim=-1)
        w, idx = torch.topk(probs, 2, dim=-1)
        return (torch.gather(self.val(x), -1, idx) * w).sum(-1)


def test_a_culprit_run_inside_another_culprits_span_comes_first(onnxprobe, tmp_path):
    # TopK's indices have no PyTorch value, so the Gather reading them is isolated together with
    # the TopK; with the TopK changed both are introduced, and the TopK explains the Gather
    torch.manual_seed(0)
    model = TopTwoExperts().eval()
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
    exported(tmp_path, model, x, "e")
    m = onnx.load(str(tmp_path / "e.onnx"))
    topk = next(n for n in m.graph.node if n.op_type == "TopK")
    next(a for a in topk.attribute if a.name == "largest").i = 0
    onnx.save(m, str(tmp_path / "bad.onnx"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "e.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    culprits = rep["localization"]["culprits"]
    assert culprits[0]["node"] == topk.name, [c["node"] for c in culprits]
    assert any(topk.name in c["nodes"] and c["node"] != topk.name for c in culprits[1:])


class SumFromZero(torch.nn.Module):
    """`total = 0; total = total + conv(x)`: the first addition adds 0 and leaves no ONNX node."""

    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([torch.nn.Conv1d(4, 4, 1) for _ in range(4)])
        self.post = torch.nn.Conv1d(4, 4, 1)

    def forward(self, x):
        total = 0
        for c in self.convs:
            total = total + c(x)
        return self.post(torch.relu(total))


def test_an_addition_of_zero_takes_no_place_among_the_calls_nodes(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = SumFromZero().eval()
    x = torch.randn(1, 4, 8)
    exported(tmp_path, model, x, "s", parameters=False)  # no parity: values must name it
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "s.cap", tmp_path / "s.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    al = {a["torch"]: a for a in rep["alignment"]}
    m = onnx.load(str(tmp_path / "s.onnx"))
    adds = [n for n in m.graph.node if n.op_type == "Add"]
    assert len(adds) == 3  # four additions in PyTorch, the first of them adds 0
    assert al["model::add"]["onnx"] is None and "exactly the values" in al["model::add"]["note"]
    for k, node in enumerate(adds, start=1):
        assert al[f"model::add_{k}"]["onnx"] == node.output[0]
    # a weight changed in the third convolution is named there, not at a mispaired Add
    conv = next(n for n in m.graph.node if n.name.startswith("/convs.2/"))
    _change_initializer(tmp_path / "s.onnx", tmp_path / "bad.onnx", conv.input[1], 5, 1.0)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "s.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    assert rep["localization"]["culprits"][0]["node"] == conv.name


class SharedHead(torch.nn.Module):
    """One head convolution applied to three pyramid levels (RetinaNet/FCOS style)."""

    def __init__(self):
        super().__init__()
        self.c3 = torch.nn.Conv2d(3, 8, 3, 2, 1)
        self.c4 = torch.nn.Conv2d(8, 8, 3, 2, 1)
        self.c5 = torch.nn.Conv2d(8, 8, 3, 2, 1)
        self.head = torch.nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        c3 = self.c3(x)
        c4 = self.c4(c3)
        c5 = self.c5(c4)
        return torch.cat([self.head(p).flatten(2) for p in (c3, c4, c5)], 2)


class BiasTable(torch.nn.Module):
    """Attention scores plus a bias gathered from a parameter table by a constant index buffer
    (LeViT/Swin style): the table is read by a Gather whose inputs are both initializers."""

    def __init__(self):
        super().__init__()
        self.qk = torch.nn.Linear(8, 16)
        self.table = torch.nn.Parameter(torch.randn(5))
        self.register_buffer("idx", torch.tensor([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]))
        self.out = torch.nn.Linear(4, 3)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, -1)
        return self.out((q @ k.transpose(-2, -1) + self.table[self.idx]).softmax(-1))


def test_a_weight_shared_by_several_calls_is_named_at_its_first_call(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = SharedHead().eval()
    x = torch.randn(1, 3, 32, 32)
    exported(tmp_path, model, x, "h")
    m = _change_initializer(tmp_path / "h.onnx", tmp_path / "bad.onnx", "head.weight", 11, 1.0)
    readers = [n.name for n in m.graph.node if "head.weight" in n.input]
    assert len(readers) == 3
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "h.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    (finding,) = rep["parity"]["findings"]
    assert finding["readers"] == readers  # the file's order: the exporter's call order
    assert rep["localization"]["culprits"][0]["node"] == readers[0]


def test_a_parameter_read_by_a_constant_gather_is_named_at_the_gather(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = BiasTable().eval()
    x = torch.randn(2, 4, 8)
    exported(tmp_path, model, x, "b")
    m = _change_initializer(tmp_path / "b.onnx", tmp_path / "bad.onnx", "table", 2, 1.5)
    gather = next(n for n in m.graph.node if n.op_type == "Gather" and "table" in n.input)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "b.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    assert rep["parity"]["findings"][0]["node"] == gather.name
    assert rep["localization"]["culprits"][0]["node"] == gather.name


class FourierFeatures(torch.nn.Module):
    """Random Fourier features: sin and cos of projections in the hundreds."""

    def __init__(self, sigma=25.0):
        super().__init__()
        self.register_buffer("B", torch.randn(3, 32, generator=torch.Generator().manual_seed(5)) * sigma)
        self.fc = torch.nn.Linear(64, 4)

    def forward(self, x):
        proj = 2 * 3.141592653589793 * x @ self.B
        return self.fc(torch.cat([torch.sin(proj), torch.cos(proj)], -1))


def test_sin_of_a_large_argument_is_judged_at_its_arguments_noise(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = FourierFeatures().eval()
    x = torch.rand(64, 3, generator=torch.Generator().manual_seed(1)) * 2 - 1
    exported(tmp_path, model, x, "f")
    # the reference: PyTorch in float64 shows float32's own error on the arguments (~1e-4 at a
    # magnitude of hundreds) reaching sin unchanged, far above a 1e-5 atol on values of size 1
    with torch.no_grad():
        proj32 = 2 * 3.141592653589793 * x @ model.B
        proj64 = 2 * 3.141592653589793 * x.double() @ model.B.double()
    assert proj32.abs().max() > 100
    assert (torch.sin(proj32).double() - torch.sin(proj64)).abs().max() > 1e-5
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "f.cap", tmp_path / "f.onnx")
    assert r.returncode == 0, r.stdout[-3000:]  # was a FAIL at the Sin/Cos rows
    # a float16 round trip on the arguments is still found
    m = onnx.load(str(tmp_path / "f.onnx"))
    sin = next(n for n in m.graph.node if n.op_type == "Sin")
    arg = sin.input[0]
    from onnx import helper
    m.graph.node.insert(list(m.graph.node).index(sin), helper.make_node("Cast", [arg + "_h"], [arg + "_f"], name="back", to=onnx.TensorProto.FLOAT))
    m.graph.node.insert(list(m.graph.node).index(sin) - 1, helper.make_node("Cast", [arg], [arg + "_h"], name="half", to=onnx.TensorProto.FLOAT16))
    sin.input[0] = arg + "_f"
    onnx.save(m, str(tmp_path / "bad.onnx"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "f.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1, r.stdout[-3000:]
    assert rep["localization"]["culprits"][0]["node"] == "half"


def test_renamed_initializers_are_not_taken_for_a_folded_batchnorm(onnxprobe, tmp_path):
    # a graph tool renames every initializer: only the convolution a BatchNorm follows in PyTorch
    # had its weights rewritten; the others keep their pairs, and a changed weight is named
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1))
    with torch.no_grad():
        model.train()(torch.randn(4, 3, 12, 12))
    model.eval()
    x = torch.randn(1, 3, 12, 12)
    exported(tmp_path, model, x, "c")
    m = onnx.load(str(tmp_path / "c.onnx"))
    names = {i.name: f"w{k}" for k, i in enumerate(m.graph.initializer)}
    for i in m.graph.initializer:
        i.name = names[i.name]
    for n in m.graph.node:
        for k, x_ in enumerate(n.input):
            n.input[k] = names.get(x_, x_)
    onnx.save(m, str(tmp_path / "renamed.onnx"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "c.cap", tmp_path / "renamed.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    al = {a["torch"]: a for a in rep["alignment"]}
    assert al["0"]["onnx"] is None and al["1"]["method"] == "bn-folded"
    assert al["3"]["onnx"] is not None and al["5"]["onnx"] is not None
    conv = [n for n in m.graph.node if n.op_type == "Conv"][1]
    _change_initializer(tmp_path / "renamed.onnx", tmp_path / "bad.onnx", conv.input[1], 4, 1.0)
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "c.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1
    assert rep["localization"]["culprits"][0]["node"] == conv.name


class Gate(torch.nn.Module):
    def forward(self, x, double):
        return x * 2 if double else x


class GatedNet(torch.nn.Module):
    """A module whose first call leaves no nodes and whose second does: the exporter names the
    second call's nodes as if it were the first, so structure cannot tell the calls apart."""

    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.fc = torch.nn.Linear(4, 4)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(self.gate(x, False))
        return self.out(torch.relu(self.gate(h, True)))  # read by functional code only


def test_a_pair_found_by_values_alone_is_advisory(onnxprobe, tmp_path):
    torch.manual_seed(0)
    model = GatedNet().eval()
    x = torch.randn(2, 4)
    export(model, x, str(tmp_path / "g.onnx"))
    capture(model, x, str(tmp_path / "g.cap"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "g.cap", tmp_path / "g.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    al = {a["torch"]: a for a in rep["alignment"]}
    assert al["gate"]["method"] == "no-nodes" and al["gate"]["onnx"] == "x"  # returns its input
    assert al["gate_1"]["method"] == "value"
    assert al["gate_1"]["onnx"] == "/gate/Mul_output_0" and "advisory" in al["gate_1"]["note"]
    assert al["model"]["onnx"] == "output_0" and al["model"]["method"] == "scope"


def test_parameter_parity_names_the_node_whose_weight_differs(onnxprobe, tmp_path):
    onnx_path, cap = torch_zoo.prepare(str(tmp_path), "token_transformer", *torch_zoo.HANDWRITTEN["token_transformer"])
    # one element of an attention projection's weight (read through a Transpose by a MatMul)
    m = onnx.load(onnx_path)
    name = "encoder.layers.1.self_attn.in_proj_weight"
    t = next(i for i in m.graph.initializer if i.name == name)
    w = numpy_helper.to_array(t).copy()
    w[3, 5] += np.float32(0.25)
    t.CopyFrom(numpy_helper.from_array(w, name))
    onnx.save(m, str(tmp_path / "bad.onnx"))
    # (small enough that the activations may stay within tolerance: parity is checked first)
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "bad.onnx")
    notes = {a["note"].split("parameter parity: ")[1] for a in rep["alignment"] if "parameter parity" in a["note"]}
    readers = [n.name for n in m.graph.node if any(i in n.input for i in
               [o for p in m.graph.node if name in p.input for o in p.output] + [name])
               and n.op_type in ("MatMul", "Gemm")]
    assert len(notes) == 1, notes
    note = notes.pop()
    assert f"reads '{name}'" in note and "1 of" in note and "max abs 0.25" in note
    assert any(f"node {reader} " in note for reader in readers), (note, readers)
    # unfaulted: no finding anywhere
    r, rep = compare(onnxprobe, tmp_path, cap, onnx_path)
    assert r.returncode == 0 and not [a for a in rep["alignment"] if "parameter parity" in a["note"]]


def test_capture_and_export_from_different_weights_are_caught(onnxprobe, tmp_path):
    torch.manual_seed(0)
    exported = torch_models.TupleNet().eval()
    torch.manual_seed(1)
    captured = torch_models.TupleNet().eval()  # an unseeded factory called twice
    x = torch.randn(3, 6)
    export(exported, x, str(tmp_path / "m.onnx"))
    capture(captured, x, str(tmp_path / "m.cap"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "m.cap", tmp_path / "m.onnx")
    assert r.returncode == 1
    proj = next(a for a in rep["alignment"] if a["torch"] == "proj")
    assert "module proj's parameter 'proj.weight'" in proj["note"] and "48 of 48 elements" in proj["note"]
    assert "module proj's parameter 'proj.bias'" in proj["note"]


def test_parity_of_a_submodule_that_is_never_called(onnxprobe, tmp_path):
    # nn.MultiheadAttention uses out_proj's weight in functional code, never calling out_proj:
    # the finding belongs to the nearest module that was called
    onnx_path, cap = torch_zoo.prepare(str(tmp_path), "attention_pool", *torch_zoo.HANDWRITTEN["attention_pool"])
    m = onnx.load(onnx_path)
    t = next(i for i in m.graph.initializer if i.name == "attn.out_proj.weight")
    w = numpy_helper.to_array(t).copy()
    w[0, 0] += np.float32(1.0)
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(m, str(tmp_path / "bad.onnx"))
    reader = next(n.name for n in m.graph.node if "attn.out_proj.weight" in n.input)
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "bad.onnx")
    attn = next(a for a in rep["alignment"] if a["torch"] == "attn")
    assert f"node {reader} (" in attn["note"] and "module attn's parameter 'attn.out_proj.weight'" in attn["note"]


def test_every_row_is_judged_at_the_given_tolerance(onnxprobe, tmp_path):
    """No row's tolerance follows the errors measured before it (docs/metrics.md, "Error
    budgets"): with an atol of 1e-9 every row is judged at 1e-9, and float rounding, which
    differs between the frameworks, fails where numpy says it exceeds that. (Without the float64
    run: with it, a row is also allowed twice PyTorch's own float32 rounding, tested below.)"""
    model_path, cap = prepare(tmp_path, torch_models.net(), (2, 3, 16, 16), float64=False)
    r, rep = compare(onnxprobe, tmp_path, cap, model_path, "--atol", "1e-9", "--rtol", "0",
                     "--report-detail", "full")
    rows = [t for t in rep["tensors"] if t["state"] == "compared"]
    assert rows and all(t["atol"] == 1e-9 for t in rows)
    assert r.returncode == 1  # rounding noise exceeds an atol of 1e-9 somewhere
    for t in rows:  # independent of the verdict: the allowed error is the given one, scaled
        scale = max(1.0, abs(t["stats_a"]["max"]), abs(t["stats_a"]["min"]))
        assert t["within_tolerance"] == (t["max_abs"] <= 1e-9 * scale * (1 + 1e-12)), t["name"]
    # --fixed-tolerance is accepted for older scripts and changes nothing
    r2, rep2 = compare(onnxprobe, tmp_path, cap, model_path, "--atol", "1e-9", "--rtol", "0", "--fixed-tolerance")
    assert r2.returncode == 1 and rep2["summary"]["failed"] == rep["summary"]["failed"]


def test_a_row_is_allowed_twice_the_float32_rounding_a_float64_run_measures(onnxprobe, tmp_path):
    """docs/metrics.md, "Float32 rounding measured against float64": at an atol of 1e-9 the
    allowed error of each row is the larger of 1e-9 (scaled) and twice |float32 - float64| of
    PyTorch's value, which the test measures itself with a float64 copy of the model."""
    model = torch_models.net()
    model_path, cap = prepare(tmp_path, model, (2, 3, 16, 16))
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out32 = model.eval()(x).numpy().astype(np.float64)
        out64 = copy.deepcopy(model).double()(x.double()).numpy()
    rounding = np.abs(out32 - out64).max()
    r, rep = compare(onnxprobe, tmp_path, cap, model_path, "--atol", "1e-9", "--rtol", "0",
                     "--report-detail", "full")
    rows = [t for t in rep["tensors"] if t["state"] == "compared"]
    out = next(t for t in rows if t["name_b" if "name_b" in t else "name"] == "output")
    assert out["float64_error"] == pytest.approx(rounding, rel=1e-9)
    for t in rows:
        scale = max(1.0, abs(t["stats_a"]["max"]), abs(t["stats_a"]["min"]))
        allowed = max(1e-9 * scale, 2 * t.get("float64_error", 0))
        assert t["atol_used"] == pytest.approx(allowed, rel=1e-12), t["name"]
        assert t["within_tolerance"] == (t["max_abs"] <= allowed * (1 + 1e-12)), t["name"]


class _Residual(torch.nn.Module):
    """Blocks joined by functional code (x = x + 0.5 * block(x)): no module outputs the sums."""

    def __init__(self, depth=40, dim=32):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.ReLU(), torch.nn.Linear(dim, dim))
            for _ in range(depth))

    def forward(self, x):
        for b in self.blocks:
            x = x + 0.5 * b(x)
        return x


def _residual(tmp_path, parameters):
    torch.manual_seed(0)
    model = _Residual().eval()
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(1))
    export(model, x, str(tmp_path / "res.onnx"), ["input"], ["output"])
    capture(model, x, str(tmp_path / "res.cap"), ["input"], parameters=parameters)
    return tmp_path / "res.onnx", tmp_path / "res.cap"


def test_arguments_made_by_functional_code_are_aligned_and_compared(onnxprobe, tmp_path):
    model_path, cap = _residual(tmp_path, parameters=True)
    r, rep = compare(onnxprobe, tmp_path, cap, model_path)
    assert r.returncode == 0, r.stdout[-2000:]
    inputs = [a for a in rep["alignment"] if a["method"] == "call-input"]
    assert len(inputs) == 39  # blocks.1 .. blocks.39 read a sum; blocks.0 reads the model input
    # each pairs with the residual sum the block's nodes read: an Add outside any block's scope
    g = onnx.load(str(model_path)).graph
    producer = {o: n for n in g.node for o in n.output}
    for a in inputs:
        n = producer[a["onnx"]]
        assert n.op_type == "Add" and not n.name.startswith("/blocks"), (a, n.name)
        block = a["torch"].split(":")[0]
        assert any(a["onnx"] in m.input and m.name.startswith(f"/{block}/") for m in g.node), a
    rows = {t["name"]: t for t in rep["tensors"]}
    assert all(rows[a["torch"]]["state"] == "compared" for a in inputs)


def test_a_weight_behind_functional_code_is_isolated_without_parameters(onnxprobe, tmp_path):
    """Without the capture's parameters (no parity), isolation must start at the sum PyTorch
    recorded as the block's argument: the faulted Gemm alone is the culprit."""
    model_path, cap = _residual(tmp_path, parameters=False)
    perturb(model_path, tmp_path / "bad.onnx", "/blocks.20/blocks.20.0/Gemm", scale=1.5)
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "bad.onnx")
    assert r.returncode == 1, r.stdout[-2000:]
    top = rep["localization"]["culprits"][0]
    assert top["evidence"] == "isolation" and top["introduced"], top
    assert top["node"] == "/blocks.20/blocks.20.0/Gemm", top
    assert [n for n in top["nodes"] if not n.startswith("Identity")] == ["/blocks.20/blocks.20.0/Gemm"]


class SequenceHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(12)
        self.fc1 = torch.nn.Linear(12, 24)
        self.fc2 = torch.nn.Linear(24, 12)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(self.ln(x))))


def test_parity_finds_parameters_the_exporter_renamed_and_transposed(onnxprobe, tmp_path):
    # exported with constant folding (torch.onnx.export's default): a Linear on a sequence reads
    # its weight as a transposed copy, onnx::MatMul_N; parity finds it by its values
    torch.manual_seed(0)
    model = SequenceHead().eval()
    x = torch.randn(2, 5, 12)
    torch.onnx.export(model, x, str(tmp_path / "f.onnx"), opset_version=13)
    capture(model, x, str(tmp_path / "f.cap"), onnx_path=str(tmp_path / "f.onnx"))
    m = onnx.load(str(tmp_path / "f.onnx"))
    kept = [i.name for i in m.graph.initializer if i.name.startswith("onnx::MatMul")]
    assert len(kept) == 2, [i.name for i in m.graph.initializer]
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "f.cap", tmp_path / "f.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    assert rep["parity"]["renamed"] == 2 and not rep["parity"]["findings"], rep["parity"]
    # one element of fc2's transposed weight: [3, 5] of the copy is fc2.weight[5, 3]
    init = next(i for i in m.graph.initializer if i.name in kept and list(i.dims) == [24, 12])
    w = numpy_helper.to_array(init).copy()
    assert np.array_equal(w, model.fc2.weight.detach().numpy().T)  # independent: torch's own values
    w[3, 5] += np.float32(0.5)
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    onnx.save(m, str(tmp_path / "bad.onnx"))
    r, rep = compare(onnxprobe, tmp_path, tmp_path / "f.cap", tmp_path / "bad.onnx")
    assert r.returncode == 1, r.stdout[-3000:]
    (f,) = rep["parity"]["findings"]
    reader = next(n for n in m.graph.node if init.name in n.input)
    assert f["parameter"] == "fc2.weight" and f["node"] == reader.name and f["differing"] == 1, f
    assert "kept transposed" in f["message"] and f["max_abs"] == pytest.approx(0.5, rel=1e-6)
    culprit = rep["localization"]["culprits"][0]
    assert culprit["node"] == reader.name and culprit["evidence"] == "parity", culprit


class ScoresToo(torch.nn.Module):
    """Attention returning its scores as well (Whisper's qkv_attention); the caller drops them."""

    def __init__(self, d=16, h=2):
        super().__init__()
        self.h = h
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.h, -1).permute(2, 0, 3, 1, 4)
        qk = q @ k.transpose(-1, -2)
        w = torch.softmax(qk, dim=-1)
        return self.out((w @ v).transpose(1, 2).reshape(b, s, d)), qk.detach()


class DropsScores(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = ScoresToo()
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.head(x + self.attn(x)[0])


def _insert_after(path, out, tensor, nodes):
    """Inserts `nodes` (a chain from `tensor` to tensor + "_end") after `tensor`'s producer."""
    m = onnx.load(str(path))
    g = m.graph
    for n in g.node:
        for k, x_ in enumerate(n.input):
            if x_ == tensor:
                n.input[k] = tensor + "_end"
    at = next(k for k, n in enumerate(g.node) if tensor in n.output) + 1
    for n in reversed(nodes):
        g.node.insert(at, n)
    onnx.save(m, str(out))


def test_nodes_a_graph_tool_inserted_inside_a_call_stay_in_it(onnxprobe, tmp_path):
    # a node named outside every scope, inserted after the attention's Softmax, made the Softmax
    # an output of the call: the dropped scores were paired with it (a false alarm on a no-op
    # Identity) and a float16 round trip there was named at the Softmax
    from onnx import helper
    torch.manual_seed(0)
    model = DropsScores().eval()
    x = torch.randn(2, 5, 16)
    onnx_path, cap = exported(tmp_path, model, x, "s")
    sm = next(n for n in onnx.load(str(onnx_path)).graph.node if n.op_type == "Softmax").output[0]
    _insert_after(onnx_path, tmp_path / "id.onnx", sm, [helper.make_node("Identity", [sm], [sm + "_end"],
                                                                         name="inserted_identity")])
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "id.onnx")
    assert r.returncode == 0, r.stdout[-3000:]
    assert not [a for a in rep["alignment"] if a["onnx"] in (sm, sm + "_end") and not a.get("inside")]
    half, back = helper.make_node("Cast", [sm], [sm + "_h"], name="to_fp16", to=onnx.TensorProto.FLOAT16), \
        helper.make_node("Cast", [sm + "_h"], [sm + "_end"], name="to_fp32", to=onnx.TensorProto.FLOAT)
    _insert_after(onnx_path, tmp_path / "half.onnx", sm, [half, back])
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "half.onnx")
    assert r.returncode in (0, 1), r.stdout[-3000:]
    named = (rep["localization"]["culprits"] or [{}])[0].get("node") if rep["verdict"] == "FAIL" \
        else (rep["drift_origins"] or [{}])[0].get("node")
    assert named == "to_fp16", (rep["verdict"], rep["localization"], rep["drift_origins"][:2])


class NormThenCoherentSum(torch.nn.Module):
    """A LayerNorm over 512 features, then a Linear whose weights share a sign: a constant shift
    of the normalized rows adds up over the 512 inputs."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(512)
        self.fc = torch.nn.Linear(512, 16)
        with torch.no_grad():
            self.fc.weight.copy_(0.05 + 0.01 * torch.randn(16, 512, generator=torch.Generator().manual_seed(0)))

    def forward(self, x):
        return self.fc(self.ln(x))


def test_a_round_trip_below_the_noise_where_it_sits_is_named_when_it_grows_past_tolerance(onnxprobe, tmp_path):
    # float16 rounding of the row means (offset 0.04) stays below the noise floor at the
    # LayerNorm's output and fails the Linear after it: the round trip is the culprit, not the
    # Linear whose own error is float32 rounding
    from onnx import helper
    torch.manual_seed(0)
    model = NormThenCoherentSum().eval()
    x = torch.randn(4, 6, 512, generator=torch.Generator().manual_seed(1)) + 0.04
    onnx_path, cap = exported(tmp_path, model, x, "n")
    mean = next(n for n in onnx.load(str(onnx_path)).graph.node if n.op_type == "ReduceMean").output[0]
    half, back = helper.make_node("Cast", [mean], [mean + "_h"], name="to_fp16", to=onnx.TensorProto.FLOAT16), \
        helper.make_node("Cast", [mean + "_h"], [mean + "_end"], name="to_fp32", to=onnx.TensorProto.FLOAT)
    _insert_after(onnx_path, tmp_path / "half.onnx", mean, [half, back])
    r, rep = compare(onnxprobe, tmp_path, cap, tmp_path / "half.onnx")
    assert r.returncode == 1, r.stdout[-3000:]
    rows = {t["name"]: t for t in rep["tensors"]}
    assert rows["ln"]["verdict"] == "PASS" and rows["fc"]["verdict"] == "FAIL"  # the case exists
    culprit = rep["localization"]["culprits"][0]
    assert culprit["node"] == "to_fp16" and culprit["introduced"], culprit
