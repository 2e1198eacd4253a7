"""Models as tool chains other than torch.onnx write them, with their rewritten copies.

Every model is a small CNN built with onnx.helper and numpy (seeded weights). The rewrites are
the ones graph tools make: onnxsim/onnxoptimizer fold a BatchNormalization into the Conv before
it and keep the Conv's output name; other rewriters put a new Mul/Add pair where the
BatchNormalization was. The folds are computed here with numpy, so a test knows exactly which
copy is benign and which carries an injected fault (and where).
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EPS = 1e-5
C_IN, C1, C2, H = 3, 8, 8, 12


def _params(seed):
    rng = np.random.default_rng(seed)
    p = {}
    for name, cin, cout in (("c1", C_IN, C1), ("c2", C1, C2)):
        p[name + ".w"] = (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
        p[name + ".b"] = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        p[name + ".bn.scale"] = rng.uniform(0.5, 1.5, cout).astype(np.float32)
        p[name + ".bn.bias"] = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        p[name + ".bn.mean"] = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        p[name + ".bn.var"] = rng.uniform(0.5, 2.0, cout).astype(np.float32)
    p["fc.w"] = (rng.standard_normal((4, C2)) * 0.3).astype(np.float32)
    p["fc.b"] = (rng.standard_normal(4) * 0.1).astype(np.float32)
    return p


def _fold(p, conv, wrong_channel=None, wrong_factor=1.5):
    """The Conv's weight and bias with its BatchNormalization folded in (float64, rounded once)."""
    g = p[conv + ".bn.scale"].astype(np.float64) / np.sqrt(p[conv + ".bn.var"].astype(np.float64) + EPS)
    if wrong_channel is not None:
        g = g.copy()
        g[wrong_channel] *= wrong_factor
    w = p[conv + ".w"].astype(np.float64) * g[:, None, None, None]
    b = (p[conv + ".b"] - p[conv + ".bn.mean"]) * g + p[conv + ".bn.bias"]
    return w.astype(np.float32), b.astype(np.float32), g


def _model(nodes, inits, name):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, H, H])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph(nodes, name, [x], [y],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="wild_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _head(last):
    return [helper.make_node("GlobalAveragePool", [last], ["gap_out"], name="gap"),
            helper.make_node("Flatten", ["gap_out"], ["flat"], name="flatten"),
            helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"], name="fc", transB=1)]


def original(seed=0):
    """Conv -> BatchNormalization -> Relu, twice, then a pooled classifier head."""
    p = _params(seed)
    nodes, src = [], "x"
    for c in ("c1", "c2"):
        nodes.append(helper.make_node("Conv", [src, c + ".w", c + ".b"], [c + "_out"], name=c,
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("BatchNormalization",
                                      [c + "_out", c + ".bn.scale", c + ".bn.bias", c + ".bn.mean",
                                       c + ".bn.var"], [c + "_bn"], name=c + "_bn", epsilon=EPS))
        nodes.append(helper.make_node("Relu", [c + "_bn"], [c + "_relu"], name=c + "_relu"))
        src = c + "_relu"
    return _model(nodes + _head(src), p, "original")


def folded(seed=0, wrong=None):
    """onnxsim's fold: each BatchNormalization folded into its Conv, which keeps its output name
    and its weights' names (the values change). `wrong` = (conv, channel): that channel's folded
    scale is 1.5x what it should be (a broken rewrite)."""
    p = _params(seed)
    nodes, src, inits = [], "x", {"fc.w": p["fc.w"], "fc.b": p["fc.b"]}
    for c in ("c1", "c2"):
        ch = wrong[1] if wrong and wrong[0] == c else None
        w, b, _ = _fold(p, c, ch)
        inits[c + ".w"], inits[c + ".b"] = w, b
        nodes.append(helper.make_node("Conv", [src, c + ".w", c + ".b"], [c + "_out"], name=c,
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [c + "_out"], [c + "_relu"], name=c + "_relu"))
        src = c + "_relu"
    return _model(nodes + _head(src), inits, "folded")


def mul_add(seed=0, wrong=None):
    """A rewriter that replaces each BatchNormalization by a new Mul and Add of its own naming
    (per-channel scale and shift), the Conv left as it was. `wrong` = (conv, channel): that
    channel's scale is 1.5x what it should be, in the node the rewriter created."""
    p = _params(seed)
    nodes, src = [], "x"
    inits = {k: v for k, v in p.items() if ".bn." not in k}
    for c in ("c1", "c2"):
        ch = wrong[1] if wrong and wrong[0] == c else None
        _, _, g = _fold(p, c, ch)
        shift = p[c + ".bn.bias"] - p[c + ".bn.mean"] * g
        inits[c + ".k"] = g.astype(np.float32).reshape(1, -1, 1, 1)
        inits[c + ".s"] = shift.astype(np.float32).reshape(1, -1, 1, 1)
        nodes.append(helper.make_node("Conv", [src, c + ".w", c + ".b"], [c + "_out"], name=c,
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Mul", [c + "_out", c + ".k"], [c + "_scaled"],
                                      name="rewriter_mul_" + c))
        nodes.append(helper.make_node("Add", [c + "_scaled", c + ".s"], [c + "_shifted"],
                                      name="rewriter_add_" + c))
        nodes.append(helper.make_node("Relu", [c + "_shifted"], [c + "_relu"], name=c + "_relu"))
        src = c + "_relu"
    return _model(nodes + _head(src), inits, "mul_add")


def extra_output(seed=0):
    """The folded copy returning one more output (a Sigmoid of the logits) the original lacks."""
    m = folded(seed)
    m.graph.node.append(helper.make_node("Sigmoid", ["y"], ["probabilities"], name="probs"))
    m.graph.output.append(helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 4]))
    onnx.checker.check_model(m)
    return m


def as_constants(m):
    """paddle2onnx/tf2onnx style: every initializer becomes a Constant node (named after it, its
    output keeping the weight's name) placed first in the graph."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    consts = [helper.make_node("Constant", [], [t.name], name="const_" + t.name.replace(".", "_"), value=t)
              for t in m.graph.initializer]
    nodes = consts + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.initializer[:]
    onnx.checker.check_model(m)
    return m


def bumped(m, weight, index=5, delta=0.5, rename=None):
    """`m` with one element of `weight` changed by `delta` (an initializer or a Constant node's
    value); with `rename`, the weight also gets that name (what graph editors and quantizers do)."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    holders = [t for t in m.graph.initializer if t.name == weight]
    holders += [a.t for n in m.graph.node if n.op_type == "Constant" and list(n.output) == [weight]
                for a in n.attribute if a.name == "value"]
    [t] = holders
    v = numpy_helper.to_array(t).copy()
    v.flat[index] += delta
    t.CopyFrom(numpy_helper.from_array(v, t.name))
    if rename:
        t.name = rename
        for n in m.graph.node:
            n.input[:] = [rename if x == weight else x for x in n.input]
            if n.op_type == "Constant":
                n.output[:] = [rename if x == weight else x for x in n.output]
    onnx.checker.check_model(m)
    return m


def _branch(nodes, outputs, inits=()):
    return helper.make_graph(nodes, "branch", [], outputs, list(inits))


def if_wrapped(seed=0, fault=None, nested=False):
    """A voice-activity-detector-like model that computes everything inside an If (its
    condition, the input's maximum above -1e9, always holds): the then_branch is a small CNN
    whose first Conv reads an outer-scope initializer, whose second Conv's weight is the
    branch's own initializer and whose classifier weight sits in a Constant node; the
    else_branch pools straight away. `nested`: the CNN's second half sits in an inner If of the
    same kind. `fault` = "then_conv2": that Conv's output channel 3 scaled by 1.5."""
    p = _params(seed)
    w2 = p["c2.w"].copy()
    if fault == "then_conv2":
        w2[3] *= 1.5
    y_info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4])
    tail = [helper.make_node("Conv", ["t_relu1", "c2.w_branch", "c2.b"], ["t_conv2"], name="then_conv2",
                             pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["t_conv2"], ["t_relu2"], name="then_relu2"),
            helper.make_node("GlobalAveragePool", ["t_relu2"], ["t_gap"], name="then_gap"),
            helper.make_node("Flatten", ["t_gap"], ["t_flat"], name="then_flatten"),
            helper.make_node("Constant", [], ["t_fc_w"], name="then_fc_weight",
                             value=numpy_helper.from_array(p["fc.w"], "t_fc_w")),
            helper.make_node("Gemm", ["t_flat", "t_fc_w", "fc.b"], ["t_y"], name="then_fc", transB=1)]
    w2_init = numpy_helper.from_array(w2, "c2.w_branch")
    head = [helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["t_conv1"], name="then_conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["t_conv1"], ["t_relu1"], name="then_relu1")]
    if nested:
        inner_else = _branch([helper.make_node("GlobalAveragePool", ["t_relu1"], ["ie_gap"], name="inner_else_gap"),
                              helper.make_node("Flatten", ["ie_gap"], ["ie_flat"], name="inner_else_flatten"),
                              helper.make_node("Gemm", ["ie_flat", "fc.w8", "fc.b"], ["ie_y"], name="inner_else_fc",
                                               transB=1)], [y_info("ie_y")])
        inner_then = _branch(tail, [y_info("t_y")], [w2_init])
        then_nodes = head + [
            helper.make_node("ReduceMax", ["t_relu1"], ["t_max"], name="then_max", keepdims=0),
            helper.make_node("Greater", ["t_max", "minus_big"], ["t_cond"], name="then_cond"),
            helper.make_node("If", ["t_cond"], ["inner_y"], name="inner_if", then_branch=inner_then,
                             else_branch=inner_else)]
        then_g = _branch(then_nodes, [y_info("inner_y")])
    else:
        then_g = _branch(head + tail, [y_info("t_y")], [w2_init])
    else_g = _branch([helper.make_node("GlobalAveragePool", ["x"], ["e_gap"], name="else_gap"),
                      helper.make_node("Flatten", ["e_gap"], ["e_flat"], name="else_flatten"),
                      helper.make_node("Gemm", ["e_flat", "fc.w3", "fc.b"], ["e_y"], name="else_fc", transB=1)],
                     [y_info("e_y")])
    nodes = [helper.make_node("ReduceMax", ["x"], ["x_max"], name="cond_max", keepdims=0),
             helper.make_node("Greater", ["x_max", "minus_big"], ["cond"], name="cond"),
             helper.make_node("If", ["cond"], ["y"], name="If_0", then_branch=then_g, else_branch=else_g)]
    inits = {"c1.w": p["c1.w"], "c1.b": p["c1.b"], "c2.b": p["c2.b"], "fc.b": p["fc.b"],
             "fc.w3": p["fc.w"][:, :C_IN].copy(), "fc.w8": p["fc.w"][:, :C1].copy(),
             "minus_big": np.array(-1e9, np.float32)}
    return _model(nodes, inits, "if_wrapped")


def if_branch_plain(seed=0):
    """The computation if_wrapped's then_branch does, written as a plain graph under the same
    tensor names, every tensor an output: the reference for what a run inside the If captures."""
    p = _params(seed)
    names = ["t_conv1", "t_relu1", "t_conv2", "t_relu2", "t_gap", "t_flat", "t_y"]
    nodes = [helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["t_conv1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["t_conv1"], ["t_relu1"]),
             helper.make_node("Conv", ["t_relu1", "c2.w", "c2.b"], ["t_conv2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["t_conv2"], ["t_relu2"]),
             helper.make_node("GlobalAveragePool", ["t_relu2"], ["t_gap"]),
             helper.make_node("Flatten", ["t_gap"], ["t_flat"]),
             helper.make_node("Gemm", ["t_flat", "fc.w", "fc.b"], ["t_y"], transB=1)]
    inits = {k: p[k] for k in ("c1.w", "c1.b", "c2.w", "c2.b", "fc.w", "fc.b")}
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, H, H])
    graph = helper.make_graph(nodes, "plain", [x], [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                                    for n in names],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def zipmap(scale=None):
    """A classifier as skl2onnx ends one: logits -> Softmax -> ZipMap (ai.onnx.ml), whose output
    is a sequence of maps, class label -> probability; and the label as an int64 tensor.
    `scale`: the probabilities scaled by it just before the ZipMap (an edit a graph editor makes)."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((6, 3)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("Flatten", ["x"], ["flat"], name="flatten"),
             helper.make_node("MatMul", ["flat_small", "w"], ["logits"], name="linear"),
             helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
             helper.make_node("ArgMax", ["probs"], ["label_k"], name="argmax", axis=1, keepdims=0)]
    nodes.insert(1, helper.make_node("Slice", ["flat", "starts", "ends", "axes"], ["flat_small"], name="slice"))
    src = "probs"
    if scale is not None:
        nodes.append(helper.make_node("Mul", ["probs", "k"], ["probs_scaled"], name="edit_scale"))
        src = "probs_scaled"
    nodes.append(helper.make_node("ZipMap", [src], ["probabilities"], name="zipmap", domain="ai.onnx.ml",
                                  classlabels_int64s=[0, 1, 2]))
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([0], np.int64), "starts"),
             numpy_helper.from_array(np.array([6], np.int64), "ends"),
             numpy_helper.from_array(np.array([1], np.int64), "axes")]
    if scale is not None:
        inits.append(numpy_helper.from_array(np.array(scale, np.float32), "k"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, H, H])
    seq = onnx.ValueInfoProto(name="probabilities")
    seq.type.sequence_type.elem_type.map_type.key_type = TensorProto.INT64
    seq.type.sequence_type.elem_type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    label = helper.make_tensor_value_info("label_k", TensorProto.INT64, [1])
    graph = helper.make_graph(nodes, "zipmap", [x], [label, seq], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


T_STEPS = 5


def rnn_params(seed=4):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((4, 4)) * 0.5).astype(np.float32),
            (rng.standard_normal((4, 4)) * 0.5).astype(np.float32))


def scan_rnn(fault=False):
    """An RNN as tf2onnx writes one: a Scan over the time axis of seq [1, T, 4] with state h [1, 4]
    (an input); the body computes h' = tanh(x_t Wx + h Wh) and emits h' each step. `fault`: one
    element of Wh (a weight the body reads from the main graph) changed."""
    wx, wh = rnn_params()
    if fault:
        wh = wh.copy()
        wh[1, 2] += 0.5
    f = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["xw"], name="rnn_mm_x"),
         helper.make_node("MatMul", ["h", "Wh"], ["hw"], name="rnn_mm_h"),
         helper.make_node("Add", ["xw", "hw"], ["pre"], name="rnn_add"),
         helper.make_node("Tanh", ["pre"], ["h_new"], name="rnn_tanh"),
         helper.make_node("Identity", ["h_new"], ["y_t"], name="rnn_emit")],
        "rnn_body", [f("h", [1, 4]), f("x_t", [1, 4])], [f("h_new", [1, 4]), f("y_t", [1, 4])])
    scan = helper.make_node("Scan", ["h0", "seq"], ["h_last", "ys"], name="rnn", body=body,
                            num_scan_inputs=1, scan_input_axes=[1], scan_output_axes=[1])
    graph = helper.make_graph([scan, helper.make_node("Relu", ["ys"], ["y"], name="out_relu")], "scan_rnn",
                              [f("h0", [1, 4]), f("seq", [1, T_STEPS, 4])], [f("y", [1, T_STEPS, 4]), f("h_last", [1, 4])],
                              [numpy_helper.from_array(wx, "Wx"), numpy_helper.from_array(wh, "Wh")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def loop_mlp(fault=False):
    """A Loop with a trip count of 4 (a weight) and no condition: v' = relu(v W + b), each step's
    v' stacked as a scan output. `fault`: b's element 3 changed (the body's own initializer)."""
    wx, _ = rnn_params()
    b = np.linspace(-0.2, 0.2, 4).astype(np.float32)
    if fault:
        b = b.copy()
        b[3] += 0.5
    f = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["v", "W"], ["vw"], name="loop_mm"),
         helper.make_node("Add", ["vw", "bias"], ["pre"], name="loop_add"),
         helper.make_node("Relu", ["pre"], ["v_new"], name="loop_relu"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="loop_cond"),
         helper.make_node("Identity", ["v_new"], ["v_emit"], name="loop_emit")],
        "loop_body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                      helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), f("v", [1, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f("v_new", [1, 4]), f("v_emit", [1, 4])],
        [numpy_helper.from_array(b, "bias")])
    loop = helper.make_node("Loop", ["M", "", "v0"], ["v_last", "vs"], name="mlp_loop", body=body)
    graph = helper.make_graph([loop], "loop_mlp", [f("v0", [1, 4])], [f("v_last", [1, 4]), f("vs", [4, 1, 4])],
                              [numpy_helper.from_array(np.array(4, np.int64), "M"), numpy_helper.from_array(wx, "W")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def merged_transposes(merged=False):
    """An attention score's key path as paddle2onnx writes it: Reshape, Transpose (0,2,1,3),
    Transpose (0,1,3,2); merged: onnxsim's copy, one Transpose named as the second with the
    composed perm (0,2,3,1) reading the Reshape. Both compute the same scores exactly."""
    rng = np.random.default_rng(11)
    wq = numpy_helper.from_array((rng.standard_normal((32, 32)) * 0.2).astype(np.float32), "Wq")
    shape = numpy_helper.from_array(np.array([1, 16, 4, 8], np.int64), "shape")
    # the copy's key Reshape reads a shape written another way (as tools re-derive them): the
    # Reshape counts as changed, so its output's name alone does not pair it
    shape_k = numpy_helper.from_array(np.array([1, -1 if merged else 16, 4, 8], np.int64), "shape_k")
    N = helper.make_node
    nodes = [N("MatMul", ["x", "Wq"], ["q"], name="MatMul.0"),
             N("Reshape", ["q", "shape"], ["q4"], name="Reshape.0"),
             N("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3], name="Transpose.0"),
             N("Reshape", ["x", "shape_k"], ["k4"], name="Reshape.1")]
    if merged:
        nodes.append(N("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1], name="Transpose.3"))
    else:
        nodes += [N("Transpose", ["k4"], ["k1"], perm=[0, 2, 1, 3], name="Transpose.1"),
                  N("Transpose", ["k1"], ["kt"], perm=[0, 1, 3, 2], name="Transpose.3")]
    nodes += [N("MatMul", ["qt", "kt"], ["s"], name="MatMul.1"), N("Softmax", ["s"], ["y"], axis=-1, name="Softmax.0")]
    g = helper.make_graph(nodes, "attn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])], [wq, shape, shape_k])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def write_all(out):
    """name -> path of every model above (benign copies and the faulty ones)."""
    made = {
        "original": original(),
        "folded": folded(),
        "folded_wrong_c2": folded(wrong=("c2", 3)),
        "mul_add": mul_add(),
        "mul_add_wrong_c1": mul_add(wrong=("c1", 5)),
        "extra_output": extra_output(),
        "constants": as_constants(original()),
        "constants_bumped": bumped(as_constants(original()), "c2.w"),
        "renamed_bumped": bumped(original(), "c2.w", rename="c2.w_edited"),
        "if": if_wrapped(),
        "if_fault": if_wrapped(fault="then_conv2"),
        "if_nested": if_wrapped(nested=True),
        "if_nested_fault": if_wrapped(fault="then_conv2", nested=True),
        "if_plain": if_branch_plain(),
        "zipmap": zipmap(),
        "zipmap_scaled": zipmap(scale=1.5),
        "scan": scan_rnn(),
        "scan_fault": scan_rnn(fault=True),
        "loop": loop_mlp(),
        "loop_fault": loop_mlp(fault=True),
    }
    paths = {}
    for name, m in made.items():
        paths[name] = out / (name + ".onnx")
        onnx.save(m, str(paths[name]))
    return paths
