"""Small random-weight models exported by real tools other than torch.onnx, for bench/real_world.py.

  .deps/realworld-env/bin/python bench/make_real_world.py OUTDIR [--only a,b] [--no-tools]

(the environment: bash bench/real_world_env.sh). Every model is written to OUTDIR/NAME/model.onnx
with its inputs (seeded, one .npy per input under OUTDIR/NAME/inputs/) and, for float models, the
copies the graph tools of tests/python/graph_tools.py make (model.onnxsim.onnx, ...). Weights are
seeded random; every BatchNorm gets random running statistics so folding it changes numbers.

  tf2onnx      keras_cnn (NHWC Conv2D/BatchNormalization/ReLU/DepthwiseConv2D/pooling/Dense),
               keras_rnn (Embedding + LSTM + GRU + Dense), keras_attention (MultiHeadAttention +
               LayerNormalization + feed-forward)
  paddle2onnx  paddle_cnn (Conv2D/BatchNorm/ReLU/pool/Linear), paddle_crnn (OCR-recognizer-like:
               conv stack, bidirectional LSTM, Linear head), paddle_transformer
               (TransformerEncoderLayer)
  skl2onnx     sk_forest (RandomForestClassifier, ZipMap output), sk_mlp (MLPClassifier),
               sk_pipeline (StandardScaler + LogisticRegression)
  spox         spox_vad (voice-activity-detector-like: a flag input picks the If branch that holds
               the computation; weights are Constant nodes inside the branches)
  onnxruntime.quantization
               paddle_cnn_qdq (quantize_static, QDQ, random calibration reader),
               paddle_transformer_dyn (quantize_dynamic)

OUTDIR/manifest.json lists every model (exporter, tool versions, inputs: name, shape, dtype, seed,
file, the graph tool copies) and every failure (an exporter or graph tool that failed, with its
error); a failure is recorded and the other models are still made.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("ONNXPROBE_SRC", ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

SEED = 0
OPSET = 17


def save_inputs(folder, feeds):
    """feeds: [(name, array, seed, kind)] -> manifest entries (the .npy under folder/inputs)."""
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    out = []
    for i, (name, x, seed, kind) in enumerate(feeds):
        f = os.path.join("inputs", f"in{i}.npy")
        np.save(os.path.join(folder, f), x)
        out.append({"name": name, "shape": list(x.shape), "dtype": str(x.dtype), "seed": seed, "kind": kind,
                    "file": f})
    return out


def randn(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ----------------------------------------------------------------------------------------- tf2onnx
def _keras_random_bn(model, seed):
    import tensorflow as tf
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            g, b, m, v = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, g.shape).astype(np.float32),
                               rng.normal(0, 0.2, b.shape).astype(np.float32),
                               rng.normal(0, 0.3, m.shape).astype(np.float32),
                               rng.uniform(0.5, 2.0, v.shape).astype(np.float32)])


def _tf2onnx(model, specs, path):
    import tensorflow as tf
    import tf2onnx
    sig = [tf.TensorSpec(s, d, name=n) for n, s, d in specs]
    tf2onnx.convert.from_keras(model, input_signature=sig, opset=OPSET, output_path=path)


def keras_cnn(folder):
    import tensorflow as tf
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    x = inp = L.Input((32, 32, 3), batch_size=1, name="image")
    x = L.Conv2D(16, 3, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    x = L.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU(max_value=6.0)(x)
    x = L.Conv2D(32, 1, use_bias=False)(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    x = L.MaxPooling2D(2)(x)
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = L.AveragePooling2D(2)(x)
    x = L.Conv2D(48, 3, padding="same")(x)
    x = L.LeakyReLU(0.1)(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(32, activation="relu")(x)
    x = L.Dense(10, activation="softmax")(x)
    model = tf.keras.Model(inp, x)
    _keras_random_bn(model, SEED)
    path = os.path.join(folder, "model.onnx")
    _tf2onnx(model, [("image", (1, 32, 32, 3), tf.float32)], path)
    return path, [("image", randn((1, 32, 32, 3), 1), 1, "normal")]


def keras_rnn(folder):
    import tensorflow as tf
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    inp = L.Input((16,), batch_size=1, dtype="int32", name="tokens")
    x = L.Embedding(100, 24)(inp)
    x = L.LSTM(32, return_sequences=True)(x)
    x = L.GRU(24)(x)
    x = L.Dense(5)(x)
    model = tf.keras.Model(inp, x)
    path = os.path.join(folder, "model.onnx")
    _tf2onnx(model, [("tokens", (1, 16), tf.int32)], path)
    tokens = np.random.default_rng(1).integers(0, 100, (1, 16)).astype(np.int32)
    return path, [("tokens", tokens, 1, "tokens[0,100)")]


def keras_attention(folder):
    import tensorflow as tf
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    inp = L.Input((16, 32), batch_size=1, name="x")
    a = L.MultiHeadAttention(num_heads=4, key_dim=8)(inp, inp)
    x = L.LayerNormalization(epsilon=1e-5)(inp + a)
    f = L.Dense(64, activation="gelu")(x)
    f = L.Dense(32)(f)
    x = L.LayerNormalization(epsilon=1e-5)(x + f)
    model = tf.keras.Model(inp, x)
    rng = np.random.default_rng(SEED)
    for layer in model.layers:  # non-trivial LayerNorm gamma/beta
        if isinstance(layer, L.LayerNormalization):
            g, b = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, g.shape).astype(np.float32),
                               rng.normal(0, 0.2, b.shape).astype(np.float32)])
    path = os.path.join(folder, "model.onnx")
    _tf2onnx(model, [("x", (1, 16, 32), tf.float32)], path)
    return path, [("x", randn((1, 16, 32), 1), 1, "normal")]


def keras_unet(folder):
    """A segmentation-like encoder/decoder: SeparableConv2D, Conv2DTranspose, UpSampling2D, skip
    Concatenate, sigmoid mask."""
    import tensorflow as tf
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    inp = L.Input((32, 32, 3), batch_size=1, name="image")
    e1 = L.ReLU()(L.BatchNormalization()(L.Conv2D(16, 3, padding="same", use_bias=False)(inp)))
    e2 = L.MaxPooling2D(2)(e1)
    e2 = L.ReLU()(L.BatchNormalization()(L.SeparableConv2D(32, 3, padding="same", use_bias=False)(e2)))
    e3 = L.MaxPooling2D(2)(e2)
    e3 = L.Conv2D(48, 3, padding="same", activation="relu")(e3)
    d2 = L.Conv2DTranspose(32, 2, strides=2, padding="same")(e3)
    d2 = L.Concatenate()([d2, e2])
    d2 = L.Conv2D(32, 3, padding="same", activation="relu")(d2)
    d1 = L.UpSampling2D(2)(d2)
    d1 = L.Concatenate()([d1, e1])
    d1 = L.ReLU()(L.BatchNormalization()(L.Conv2D(16, 3, padding="same", use_bias=False)(d1)))
    out = L.Conv2D(2, 1, activation="sigmoid")(d1)
    model = tf.keras.Model(inp, out)
    _keras_random_bn(model, SEED)
    path = os.path.join(folder, "model.onnx")
    _tf2onnx(model, [("image", (1, 32, 32, 3), tf.float32)], path)
    return path, [("image", randn((1, 32, 32, 3), 1), 1, "normal")]


def keras_bilstm(folder):
    """A sensor/keyword-spotting-like sequence model: Conv1D + BatchNormalization + ReLU,
    Bidirectional LSTM, GlobalMaxPooling1D, Dense."""
    import tensorflow as tf
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    inp = L.Input((16, 8), batch_size=1, name="signal")
    x = L.ReLU()(L.BatchNormalization()(L.Conv1D(16, 3, padding="same")(inp)))
    x = L.Bidirectional(L.LSTM(16, return_sequences=True))(x)
    x = L.GlobalMaxPooling1D()(x)
    x = L.Dense(3)(x)
    model = tf.keras.Model(inp, x)
    _keras_random_bn(model, SEED)
    path = os.path.join(folder, "model.onnx")
    _tf2onnx(model, [("signal", (1, 16, 8), tf.float32)], path)
    return path, [("signal", randn((1, 16, 8), 1), 1, "normal")]


def tf_loop(folder):
    """A tf.function (no Keras) with a tf.while_loop (-> Loop) iterating a dense refinement step
    `steps` times and a tf.cond (-> If) on the result, converted by tf2onnx.convert.from_function."""
    import tensorflow as tf
    import tf2onnx
    rng = np.random.default_rng(SEED)
    w_np = rng.normal(0, 0.35, (16, 16)).astype(np.float32)
    b_np = rng.normal(0, 0.1, (16,)).astype(np.float32)
    w2_np = rng.normal(0, 0.3, (16, 4)).astype(np.float32)
    spec = [tf.TensorSpec((1, 16), tf.float32, name="x"), tf.TensorSpec((), tf.int32, name="steps")]

    @tf.function(input_signature=spec)
    def f(x, steps):
        # constants made inside the function: captured eager tensors would become graph inputs
        W, b, W2 = tf.constant(w_np), tf.constant(b_np), tf.constant(w2_np)

        def body(i, h):
            return i + 1, tf.tanh(tf.matmul(h, W) + b) * 0.9 + h * 0.1
        _, h = tf.while_loop(lambda i, h: i < steps, body, [tf.constant(0), x])
        h = tf.cond(tf.reduce_sum(h) > 0.0, lambda: h * 1.5, lambda: h - 0.5)
        return tf.matmul(h, W2)

    path = os.path.join(folder, "model.onnx")
    tf2onnx.convert.from_function(f, input_signature=spec, opset=OPSET, output_path=path)
    return path, [("x", randn((1, 16), 1), 1, "normal"), ("steps", np.array(3, np.int32), None, "steps=3")]


def keras_flatten_cnn(folder):
    """An older-style Keras classifier at opset 13: valid-padding strided Conv2D, Dropout (inference:
    identity), Flatten of an NHWC map (tf2onnx keeps a Transpose before the Reshape), Dense."""
    import tensorflow as tf
    import tf2onnx
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(SEED)
    inp = L.Input((28, 28, 1), batch_size=1, name="digits")
    x = L.Conv2D(8, 5, strides=2, activation="relu")(inp)
    x = L.BatchNormalization()(x)
    x = L.Conv2D(16, 3, activation="elu")(x)
    x = L.MaxPooling2D(2)(x)
    x = L.Dropout(0.3)(x)
    x = L.Flatten()(x)
    x = L.Dense(32, activation="tanh")(x)
    x = L.Dense(10)(x)
    model = tf.keras.Model(inp, x)
    _keras_random_bn(model, SEED)
    path = os.path.join(folder, "model.onnx")
    tf2onnx.convert.from_keras(model, input_signature=[tf.TensorSpec((1, 28, 28, 1), tf.float32, name="digits")],
                               opset=13, output_path=path)
    return path, [("digits", randn((1, 28, 28, 1), 1), 1, "normal")]


# ------------------------------------------------------------------------------------- paddle2onnx
def _paddle_random_bn(layer, seed):
    import paddle
    rng = np.random.default_rng(seed)
    for sub in layer.sublayers():
        if isinstance(sub, (paddle.nn.BatchNorm2D, paddle.nn.BatchNorm1D)):
            c = sub._mean.shape[0]
            sub.weight.set_value(rng.uniform(0.5, 1.5, c).astype(np.float32))
            sub.bias.set_value(rng.normal(0, 0.2, c).astype(np.float32))
            sub._mean.set_value(rng.normal(0, 0.3, c).astype(np.float32))
            sub._variance.set_value(rng.uniform(0.5, 2.0, c).astype(np.float32))


def _paddle_export(layer, folder, specs):
    import paddle
    layer.eval()
    prefix = os.path.join(folder, "paddle", "model")
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    # paddle.onnx.export prints paddle2onnx's error and calls sys.exit: keep the error for the manifest
    log = os.path.join(folder, "paddle", "export.log")
    sys.stderr.flush()
    sys.stdout.flush()
    saved, saved_out = os.dup(2), os.dup(1)
    with open(log, "w") as f:
        os.dup2(f.fileno(), 2)
        os.dup2(f.fileno(), 1)
        try:
            paddle.onnx.export(layer, prefix, input_spec=[paddle.static.InputSpec(s, d, n) for n, s, d in specs],
                               opset_version=OPSET)
        except SystemExit as e:
            os.dup2(saved, 2)
            os.dup2(saved_out, 1)
            err = [x.strip() for x in open(log, errors="replace") if "ERROR" in x or "Hint" in x]
            raise RuntimeError(f"paddle2onnx (sys.exit({e.code})): " + " ".join(err)[-600:]) from None
        finally:
            os.dup2(saved, 2)
            os.dup2(saved_out, 1)
            os.close(saved)
            os.close(saved_out)
    src = prefix + ".onnx"
    path = os.path.join(folder, "model.onnx")
    os.replace(src, path)
    return path


def paddle_cnn(folder):
    import paddle
    from paddle import nn
    paddle.seed(SEED)

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2D(3, 16, 3, padding=1, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU(),
                nn.Conv2D(16, 16, 3, padding=1, groups=16, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU(),
                nn.MaxPool2D(2),
                nn.Conv2D(16, 32, 3, padding=1, bias_attr=False), nn.BatchNorm2D(32), nn.ReLU(),
                nn.Conv2D(32, 32, 3, padding=1), nn.BatchNorm2D(32), nn.Hardswish(),
                nn.AvgPool2D(2),
                nn.Conv2D(32, 48, 3, padding=1), nn.ReLU(),
                nn.AdaptiveAvgPool2D(1))
            self.head = nn.Linear(48, 10)

        def forward(self, x):
            return paddle.nn.functional.softmax(self.head(paddle.flatten(self.features(x), 1)))

    net = Net()
    _paddle_random_bn(net, SEED)
    path = _paddle_export(net, folder, [("x", [1, 3, 32, 32], "float32")])
    return path, [("x", randn((1, 3, 32, 32), 1), 1, "normal")]


def paddle_crnn(folder):
    import paddle
    from paddle import nn
    paddle.seed(SEED)

    class CRNN(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv2D(1, 16, 3, padding=1, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU(),
                nn.MaxPool2D(2),                                       # 16x32
                nn.Conv2D(16, 32, 3, padding=1, bias_attr=False), nn.BatchNorm2D(32), nn.ReLU(),
                nn.MaxPool2D(2),                                       # 8x16
                nn.Conv2D(32, 48, 3, padding=1, bias_attr=False), nn.BatchNorm2D(48), nn.ReLU(),
                nn.MaxPool2D((2, 1), (2, 1)),                          # 4x16
                nn.Conv2D(48, 48, 3, padding=1, bias_attr=False), nn.BatchNorm2D(48), nn.ReLU(),
                nn.AdaptiveAvgPool2D((1, 16)))                         # 1x16
            self.rnn = nn.LSTM(48, 32, direction="bidirect", time_major=False)
            self.head = nn.Linear(64, 37)

        def forward(self, x):
            f = self.conv(x)                       # N, C, 1, W
            f = paddle.squeeze(f, axis=2)          # N, C, W
            f = paddle.transpose(f, [0, 2, 1])     # N, W, C
            y, _ = self.rnn(f)
            return paddle.nn.functional.softmax(self.head(y), axis=2)

    net = CRNN()
    _paddle_random_bn(net, SEED)
    path = _paddle_export(net, folder, [("image", [1, 1, 32, 64], "float32")])
    return path, [("image", randn((1, 1, 32, 64), 1), 1, "normal")]


def paddle_transformer(folder):
    import paddle
    from paddle import nn
    paddle.seed(SEED)

    class Enc(nn.Layer):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(16, 32)
            self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu")
            self.out = nn.Linear(32, 8)

        def forward(self, x):
            return self.out(self.layer(self.proj(x)))

    net = Enc()
    rng = np.random.default_rng(SEED)
    for sub in net.sublayers():
        if isinstance(sub, nn.LayerNorm):
            sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))
            sub.bias.set_value(rng.normal(0, 0.2, sub.bias.shape).astype(np.float32))
    path = _paddle_export(net, folder, [("x", [1, 16, 16], "float32")])
    return path, [("x", randn((1, 16, 16), 1), 1, "normal")]


def paddle_mobilenet(folder):
    """A MobileNetV3-like block stack: Conv/BatchNorm/Hardswish, depthwise Conv, squeeze-excite
    (AdaptiveAvgPool, 1x1 Conv, ReLU, 1x1 Conv, Hardsigmoid, multiply), residual Add."""
    import paddle
    from paddle import nn
    paddle.seed(SEED)

    class SE(nn.Layer):
        def __init__(self, c):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.fc1 = nn.Conv2D(c, c // 4, 1)
            self.fc2 = nn.Conv2D(c // 4, c, 1)

        def forward(self, x):
            return x * nn.functional.hardsigmoid(self.fc2(nn.functional.relu(self.fc1(self.pool(x)))))

    class Block(nn.Layer):
        def __init__(self, c, e):
            super().__init__()
            self.expand = nn.Sequential(nn.Conv2D(c, e, 1, bias_attr=False), nn.BatchNorm2D(e), nn.Hardswish())
            self.dw = nn.Sequential(nn.Conv2D(e, e, 3, padding=1, groups=e, bias_attr=False), nn.BatchNorm2D(e),
                                    nn.Hardswish())
            self.se = SE(e)
            self.project = nn.Sequential(nn.Conv2D(e, c, 1, bias_attr=False), nn.BatchNorm2D(c))

        def forward(self, x):
            return x + self.project(self.se(self.dw(self.expand(x))))

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2D(3, 16, 3, stride=2, padding=1, bias_attr=False), nn.BatchNorm2D(16),
                                      nn.Hardswish())
            self.blocks = nn.Sequential(Block(16, 48), Block(16, 64))
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            return self.head(paddle.flatten(self.pool(self.blocks(self.stem(x))), 1))

    net = Net()
    _paddle_random_bn(net, SEED)
    path = _paddle_export(net, folder, [("x", [1, 3, 32, 32], "float32")])
    return path, [("x", randn((1, 3, 32, 32), 1), 1, "normal")]


def paddle_dbhead(folder, size=None):
    """An OCR-detector-like (DBNet) head: conv backbone at two scales, bilinear interpolate
    (Resize), Concat, Conv2DTranspose upsampling, sigmoid probability map."""
    import paddle
    from paddle import nn
    import paddle.nn.functional as F
    paddle.seed(SEED)

    class DB(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Sequential(nn.Conv2D(3, 16, 3, stride=2, padding=1, bias_attr=False), nn.BatchNorm2D(16),
                                    nn.ReLU())
            self.c2 = nn.Sequential(nn.Conv2D(16, 32, 3, stride=2, padding=1, bias_attr=False), nn.BatchNorm2D(32),
                                    nn.ReLU())
            self.lat = nn.Conv2D(32, 16, 1)
            self.fuse = nn.Sequential(nn.Conv2D(32, 16, 3, padding=1, bias_attr=False), nn.BatchNorm2D(16), nn.ReLU())
            self.up = nn.Conv2DTranspose(16, 8, 2, stride=2)
            self.bn = nn.BatchNorm2D(8)
            self.out = nn.Conv2D(8, 1, 1)

        def forward(self, x):
            f1 = self.c1(x)                                     # 16x16
            f2 = self.c2(f1)                                    # 8x8
            if size is None:
                u = F.interpolate(self.lat(f2), scale_factor=2, mode="bilinear", align_corners=False)
            else:
                u = F.interpolate(self.lat(f2), size=size, mode="bilinear", align_corners=False)
            y = self.fuse(paddle.concat([u, f1], axis=1))
            y = F.relu(self.bn(self.up(y)))                     # 32x32
            return F.sigmoid(self.out(y))

    net = DB()
    _paddle_random_bn(net, SEED)
    path = _paddle_export(net, folder, [("x", [1, 3, 32, 32], "float32")])
    return path, [("x", randn((1, 3, 32, 32), 1), 1, "normal")]


def paddle_gru_attention(folder):
    """A paddle sequence tagger: bidirectional GRU, MultiHeadAttention over its states with an
    additive key mask, LayerNorm, Linear + GELU head."""
    import paddle
    from paddle import nn
    paddle.seed(SEED)

    class Tagger(nn.Layer):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(12, 16, direction="bidirect")
            self.att = nn.MultiHeadAttention(32, 4)
            self.norm = nn.LayerNorm(32)
            self.head = nn.Linear(32, 6)

        def forward(self, x, mask):
            h, _ = self.gru(x)
            a = self.att(h, h, h, attn_mask=mask)
            return nn.functional.gelu(self.head(self.norm(h + a)))

    net = Tagger()
    mask = np.zeros((1, 1, 16, 16), np.float32)
    mask[..., 12:] = -1e4  # the last 4 steps are padding
    path = _paddle_export(net, folder, [("x", [1, 16, 12], "float32"), ("mask", [1, 1, 16, 16], "float32")])
    return path, [("x", randn((1, 16, 12), 1), 1, "normal"), ("mask", mask, None, "padding mask")]


# ---------------------------------------------------------------------------------------- skl2onnx
def _sk_data(seed=SEED, n=200, features=8, classes=3):
    from sklearn.datasets import make_classification
    return make_classification(n_samples=n, n_features=features, n_informative=6, n_classes=classes,
                               random_state=seed)


def _sk_save(est, folder, features=8, options=None):
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType
    onx = to_onnx(est, initial_types=[("X", FloatTensorType([None, features]))], options=options,
                  target_opset={"": OPSET, "ai.onnx.ml": 3})
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    X = randn((64, features), 1, 2.0)
    return path, [("X", X, 1, "normal*2")]


def sk_forest(folder):
    from sklearn.ensemble import RandomForestClassifier
    X, y = _sk_data()
    est = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=SEED).fit(X, y)
    return _sk_save(est, folder)  # default: ZipMap on the probabilities


def sk_mlp(folder):
    from sklearn.neural_network import MLPClassifier
    X, y = _sk_data()
    est = MLPClassifier((32, 16), max_iter=300, random_state=SEED).fit(X, y)
    return _sk_save(est, folder, options={id(est): {"zipmap": False}})


def sk_pipeline(folder):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = _sk_data()
    X = X * 3 + 1
    est = Pipeline([("scale", StandardScaler()), ("lr", LogisticRegression(max_iter=500))]).fit(X, y)
    return _sk_save(est, folder, options={id(est): {"zipmap": False}})


def sk_gbm(folder):
    from sklearn.ensemble import GradientBoostingClassifier
    X, y = _sk_data()
    est = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=SEED).fit(X, y)
    return _sk_save(est, folder, options={id(est): {"zipmap": False}})


def sk_svm(folder):
    from sklearn.svm import SVC
    X, y = _sk_data()
    est = SVC(kernel="rbf", probability=True, random_state=SEED).fit(X, y)
    return _sk_save(est, folder, options={id(est): {"zipmap": False}})


def sk_knn(folder):
    from sklearn.neighbors import KNeighborsClassifier
    X, y = _sk_data()
    est = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    return _sk_save(est, folder, options={id(est): {"zipmap": False}})


# -------------------------------------------------------------------------------------------- spox
def spox_vad(folder):
    """A voice-activity-detector-like graph: feats [1, 16, 20] (frames x mel bins) and a bool
    flag; the flag's then branch runs the full detector (two dense layers, a temporal smoothing
    Conv, a temperature Mul, Sigmoid), the else branch a cheap energy detector. Weights are
    Constant nodes (spox's op.constant) inside the branches."""
    import onnx
    import spox.opset.ai.onnx.v17 as op
    from spox import Tensor, argument, build
    rng = np.random.default_rng(SEED)

    def const(x):
        return op.constant(value=np.asarray(x, dtype=np.float32))

    feats = argument(Tensor(np.float32, (1, 16, 20)))
    flag = argument(Tensor(np.bool_, ()))
    w1 = rng.normal(0, 0.3, (20, 32))
    b1 = rng.normal(0, 0.1, (32,))
    w2 = rng.normal(0, 0.25, (32, 16))
    b2 = rng.normal(0, 0.1, (16,))
    wc = rng.normal(0, 0.3, (1, 16, 3))   # Conv over time: [out 1, in 16, k 3]

    def full():
        # per-frame normalization: (x - mean) / sqrt(var + eps)
        mean = op.reduce_mean(feats, axes=[2], keepdims=1)
        c = op.sub(feats, mean)
        var = op.reduce_mean(op.mul(c, c), axes=[2], keepdims=1)
        x = op.div(c, op.sqrt(op.add(var, const(1e-3))))
        h = op.relu(op.add(op.matmul(x, const(w1)), const(b1)))
        h = op.tanh(op.add(op.matmul(h, const(w2)), const(b2)))
        h = op.transpose(h, perm=[0, 2, 1])                                # 1, 16, T
        s = op.conv(h, const(wc), pads=[1, 1], kernel_shape=[3])          # 1, 1, T
        s = op.mul(op.reshape(s, op.constant(value=np.array([1, 16], np.int64))), const(1.7))
        return [op.sigmoid(op.add(s, const(-0.2)))]

    def cheap():
        e = op.reduce_mean(op.mul(feats, feats), axes=[2], keepdims=0)    # 1, 16
        return [op.sigmoid(op.sub(e, const(1.0)))]

    (prob,) = op.if_(flag, then_branch=full, else_branch=cheap)
    model = build(inputs={"feats": feats, "use_detector": flag}, outputs={"speech_prob": prob})
    model = onnx.shape_inference.infer_shapes(model)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    return path, [("feats", randn((1, 16, 20), 1), 1, "normal"),
                  ("use_detector", np.array(True), None, "flag=True")]


def spox_scan(folder):
    """An Elman RNN written with Scan (h_t = tanh(x_t W + h_(t-1) U + b), one sequence: frames [T, F],
    state [24]), weights as Constant
    nodes of the main graph read from inside the body, a Gemm head on the last state."""
    import onnx
    import spox.opset.ai.onnx.v17 as op
    from spox import Tensor, argument, build
    rng = np.random.default_rng(SEED)
    x = argument(Tensor(np.float32, (16, 8)))             # T, F
    h0 = argument(Tensor(np.float32, (24,)))
    W = op.constant(value=rng.normal(0, 0.35, (8, 24)).astype(np.float32))
    U = op.constant(value=rng.normal(0, 0.2, (24, 24)).astype(np.float32))
    b = op.constant(value=rng.normal(0, 0.1, (24,)).astype(np.float32))

    def body(h, xt):
        hn = op.tanh(op.add(op.add(op.matmul(xt, W), op.matmul(h, U)), b))
        return [hn, hn]

    last, seq = op.scan([h0, x], body=body, num_scan_inputs=1)
    Wo = op.constant(value=rng.normal(0, 0.3, (24, 4)).astype(np.float32))
    bo = op.constant(value=rng.normal(0, 0.1, (4,)).astype(np.float32))
    logits = op.gemm(op.reshape(last, op.constant(value=np.array([1, 24], np.int64))), Wo, bo)
    model = build(inputs={"frames": x, "h0": h0}, outputs={"logits": logits, "states": seq})
    model = onnx.shape_inference.infer_shapes(model)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    return path, [("frames", randn((16, 8), 1), 1, "normal"), ("h0", np.zeros((24,), np.float32), None, "zeros")]


# --------------------------------------------------------------------------- onnxruntime.quantization
class _Reader:
    def __init__(self, name, shape, n=8, seed=100):
        self.data = iter([{name: randn(shape, seed + i)} for i in range(n)])

    def get_next(self):
        return next(self.data, None)


def _source(outdir, name):
    src = os.path.join(outdir, name, "model.onnx")
    if not os.path.exists(src):
        raise RuntimeError(f"{name} was not made")
    return src


def _static(folder, outdir, name, input_name, shape, fmt, per_channel):
    """`name`'s model quantized static (uint8 activations, int8 weights) in format `fmt`."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    path = os.path.join(folder, "model.onnx")
    quantize_static(_source(outdir, name), path, _Reader(input_name, shape),
                    quant_format=getattr(QuantFormat, fmt), activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=per_channel)
    return path, [(input_name, randn(shape, 1), 1, "normal")]


def _dynamic(folder, outdir, name):
    """`name`'s model quantized dynamic (int8 weights)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    path = os.path.join(folder, "model.onnx")
    quantize_dynamic(_source(outdir, name), path, weight_type=QuantType.QInt8)
    return path


def paddle_cnn_qdq(folder, outdir):
    return _static(folder, outdir, "paddle_cnn", "x", (1, 3, 32, 32), "QDQ", False)


def paddle_transformer_dyn(folder, outdir):
    return _dynamic(folder, outdir, "paddle_transformer"), [("x", randn((1, 16, 16), 1), 1, "normal")]


def keras_cnn_qdq(folder, outdir):
    """tf2onnx's NHWC CNN (Transposes around it) quantized static, QDQ, per-channel weights."""
    return _static(folder, outdir, "keras_cnn", "image", (1, 32, 32, 3), "QDQ", True)


def keras_attention_dyn(folder, outdir):
    return _dynamic(folder, outdir, "keras_attention"), [("x", randn((1, 16, 32), 1), 1, "normal")]


def paddle_mobilenet_qop(folder, outdir):
    """paddle_mobilenet quantized static in the QOperator format (QLinearConv, QLinearAdd, ...)."""
    return _static(folder, outdir, "paddle_mobilenet", "x", (1, 3, 32, 32), "QOperator", True)


def keras_rnn_dyn(folder, outdir):
    """keras_rnn (LSTM + GRU) quantized dynamic: LSTM -> DynamicQuantizeLSTM, MatMul -> integer."""
    tokens = np.random.default_rng(1).integers(0, 100, (1, 16)).astype(np.int32)
    return _dynamic(folder, outdir, "keras_rnn"), [("tokens", tokens, 1, "tokens[0,100)")]


MODELS = [  # name, exporter, maker, float (graph tool copies are made of float models)
    ("keras_cnn", "tf2onnx", keras_cnn, True),
    ("keras_rnn", "tf2onnx", keras_rnn, True),
    ("keras_attention", "tf2onnx", keras_attention, True),
    ("keras_unet", "tf2onnx", keras_unet, True),
    ("keras_bilstm", "tf2onnx", keras_bilstm, True),
    ("tf_loop", "tf2onnx (from_function)", tf_loop, True),
    ("keras_flatten_cnn", "tf2onnx (opset 13)", keras_flatten_cnn, True),
    ("paddle_cnn", "paddle2onnx", paddle_cnn, True),
    ("paddle_crnn", "paddle2onnx", paddle_crnn, True),
    ("paddle_transformer", "paddle2onnx", paddle_transformer, True),
    ("paddle_mobilenet", "paddle2onnx", paddle_mobilenet, True),
    ("paddle_dbhead", "paddle2onnx", paddle_dbhead, True),           # interpolate(scale_factor=2)
    ("paddle_gru_attention", "paddle2onnx", paddle_gru_attention, True),
    ("paddle_dbhead_size", "paddle2onnx", lambda folder: paddle_dbhead(folder, [16, 16]), True),
    ("sk_forest", "skl2onnx", sk_forest, True),
    ("sk_mlp", "skl2onnx", sk_mlp, True),
    ("sk_pipeline", "skl2onnx", sk_pipeline, True),
    ("sk_gbm", "skl2onnx", sk_gbm, True),
    ("sk_svm", "skl2onnx", sk_svm, True),
    ("sk_knn", "skl2onnx", sk_knn, True),
    ("spox_vad", "spox", spox_vad, True),
    ("spox_scan", "spox", spox_scan, True),
    ("paddle_cnn_qdq", "onnxruntime.quantization (quantize_static, QDQ)", paddle_cnn_qdq, False),
    ("paddle_transformer_dyn", "onnxruntime.quantization (quantize_dynamic)", paddle_transformer_dyn, False),
    ("keras_cnn_qdq", "onnxruntime.quantization (quantize_static, QDQ per-channel)", keras_cnn_qdq, False),
    ("keras_attention_dyn", "onnxruntime.quantization (quantize_dynamic)", keras_attention_dyn, False),
    ("paddle_mobilenet_qop", "onnxruntime.quantization (quantize_static, QOperator)", paddle_mobilenet_qop, False),
    ("keras_rnn_dyn", "onnxruntime.quantization (quantize_dynamic)", keras_rnn_dyn, False),
]


def versions():
    out = {}
    for mod, pkg in (("tensorflow", "tensorflow-cpu"), ("tf2onnx", "tf2onnx"), ("paddle", "paddlepaddle"),
                     ("paddle2onnx", "paddle2onnx"), ("sklearn", "scikit-learn"), ("skl2onnx", "skl2onnx"),
                     ("spox", "spox"), ("onnx", "onnx"), ("onnxruntime", "onnxruntime"), ("numpy", "numpy")):
        try:
            from importlib.metadata import version
            out[pkg] = version(pkg)
        except Exception as e:  # noqa: BLE001
            out[pkg] = f"missing: {e}"
    return out


def check_runs(path, inputs, folder):
    """Runs the model once with ONNX Runtime (optimizations off) so a broken export is caught here."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    s.run(None, {i["name"]: np.load(os.path.join(folder, i["file"])) for i in inputs})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--only", default="")
    p.add_argument("--no-tools", action="store_true", help="skip the graph tools' copies")
    a = p.parse_args()
    outdir = os.path.abspath(a.outdir)
    os.makedirs(outdir, exist_ok=True)
    man_path = os.path.join(outdir, "manifest.json")
    man = {"versions": versions(), "opset": OPSET, "models": {}, "failures": []}
    if os.path.exists(man_path) and a.only:
        old = json.load(open(man_path))
        man["models"] = old.get("models", {})
        man["failures"] = [f for f in old.get("failures", []) if f["model"] not in a.only.split(",")]
    import graph_tools as gt
    only = set(x for x in a.only.split(",") if x)
    for name, exporter, maker, is_float in MODELS:
        if only and name not in only:
            continue
        folder = os.path.join(outdir, name)
        os.makedirs(folder, exist_ok=True)
        t0 = time.time()
        try:
            path, feeds = maker(folder) if is_float else maker(folder, outdir)
            inputs = save_inputs(folder, feeds)
            check_runs(path, inputs, folder)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - an exporter that fails is recorded, not fatal
            # (paddle.onnx.export calls sys.exit when paddle2onnx fails)
            if isinstance(e, SystemExit):
                e = RuntimeError(f"the exporter called sys.exit({e.code}); its error is above in the log")
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            print(f"{name:24s} FAILED ({exporter}): {msg}", flush=True)
            man["failures"].append({"model": name, "exporter": exporter, "error": msg,
                                    "traceback": traceback.format_exc()[-3000:]})
            man["models"].pop(name, None)
            continue
        entry = {"exporter": exporter, "file": os.path.relpath(path, outdir), "float": is_float,
                 "inputs": inputs, "tools": {}}
        if is_float and not a.no_tools and gt.available():
            for tool in gt.TOOLS:
                dst = os.path.join(folder, f"model.{tool}.onnx")
                try:
                    gt.rewrite(tool, path, dst)
                    check_runs(dst, inputs, folder)
                    entry["tools"][tool] = os.path.relpath(dst, outdir)
                except Exception as e:  # noqa: BLE001
                    msg = str(e).strip().splitlines()[-1][:400] if str(e).strip() else type(e).__name__
                    entry["tools"][tool] = None
                    man["failures"].append({"model": name, "exporter": tool, "error": msg})
                    print(f"{name:24s} {tool} failed: {msg}", flush=True)
        import onnx
        m = onnx.load(path)
        entry["nodes"] = len(m.graph.node)
        entry["op_types"] = sorted({n.op_type for n in m.graph.node})
        man["models"][name] = entry
        print(f"{name:24s} {exporter}: {entry['nodes']} nodes, tools "
              f"{','.join(t for t, v in entry['tools'].items() if v) or '-'} [{time.time() - t0:.0f} s]", flush=True)
        with open(man_path, "w") as f:
            json.dump(man, f, indent=1)
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1)
    print(f"{len(man['models'])} models, {len(man['failures'])} failures -> {man_path}")


if __name__ == "__main__":
    main()
