"""More architecture families for the PyTorch-vs-ONNX zoo, written the way their public
implementations are (names and layouts are theirs; weights random): a LLaMA-style decoder (RMSNorm,
rotary embeddings, SwiGLU, a causal mask), a BERT-style encoder (three int64 inputs, an additive
mask, dict outputs), GPT-2 with its Conv1D (addmm) and tied embedding/output weights, a timm-style
EfficientNet (Conv2dSame padding, squeeze-excite, drop path), a DETR-style decoder over a square
feature memory (a transpose the exporter merges into the decoder), stacked bidirectional GRU and
LSTM whose final states are partly unused, a TopK over ReLU outputs (ties), and an ALBERT-style
layer module called four times (shared parameters, post-LayerNorm), a ViT with its attention scale
a Python float, nn.LayerNorm and the tanh GELU (several ONNX nodes per torch op), and RepVGG blocks
with padding average pools. Each of them found
a false alarm or a misnamed fault when first run. Imported by torch_zoo.py into HANDWRITTEN."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def _tokens(b, s, v, seed):
    return torch.randint(0, v, (b, s), generator=torch.Generator().manual_seed(seed))


def _randn(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttn(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.dh, 2).float() / self.dh))
        self.register_buffer("inv_freq", inv)

    def forward(self, x):
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.h, self.dh).transpose(1, 2)
        t = torch.arange(s, dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        i = torch.arange(s)
        mask = i[None, :] > i[:, None]
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        return self.o_proj(y)


class SwiGLU(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = LlamaAttn(d, h)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = SwiGLU(d, 2 * d)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class TinyLlama(nn.Module):
    def __init__(self, vocab=64, d=32, h=4, n=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaLayer(d, h) for _ in range(n)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for l in self.layers:
            x = l(x)
        return self.lm_head(self.norm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + ext_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), -1)


class BertLayer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.attention = BertSelfAttention(d, h)
        self.attn_out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, 4 * d)
        self.output = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, ext_mask):
        x = self.ln1(x + self.attn_out(self.attention(x, ext_mask)))
        return self.ln2(x + self.output(F.gelu(self.intermediate(x))))


class TinyBert(nn.Module):
    def __init__(self, vocab=80, d=32, h=4, n=2):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(64, d)
        self.tok_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(d, h) for _ in range(n)])
        self.pooler = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.tok_type(token_type_ids))
        ext = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for l in self.layers:
            x = l(x, ext)
        return {"last_hidden_state": x, "pooler_output": torch.tanh(self.pooler(x[:, 0]))}


class HFConv1D(nn.Module):
    """GPT-2's Conv1D: weight stored (in, out), y = addmm(b, x, W)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attn(nn.Module):
    def __init__(self, d, h, n_pos):
        super().__init__()
        self.h = h
        self.c_attn = HFConv1D(3 * d, d)
        self.c_proj = HFConv1D(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(n_pos, n_pos, dtype=torch.uint8)).view(1, 1, n_pos, n_pos))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = [t.view(b, s, self.h, d // self.h).permute(0, 2, 1, 3) for t in (q, k, v)]
        w = torch.matmul(q, k.transpose(-1, -2)) / (float(v.size(-1)) ** 0.5)
        mask = self.bias[:, :, :s, :s].bool()
        w = torch.where(mask, w, torch.tensor(-1e4, dtype=w.dtype))
        w = nn.functional.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous().view(b, s, d)
        return self.c_proj(a)


class GPT2Block(nn.Module):
    def __init__(self, d, h, n_pos):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = GPT2Attn(d, h, n_pos)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = HFConv1D(4 * d, d)
        self.c_proj = HFConv1D(d, 4 * d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = self.c_fc(self.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.c_proj(h)


class TiedGPT2(nn.Module):
    def __init__(self, vocab=70, d=32, h=4, n=2, n_pos=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_pos, d)
        self.h = nn.ModuleList([GPT2Block(d, h, n_pos) for _ in range(n)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


class Conv2dSame(nn.Conv2d):
    def forward(self, x):
        ih, iw = x.shape[-2:]
        kh, kw = self.weight.shape[-2:]
        sh, sw = self.stride
        ph = max((math.ceil(ih / sh) - 1) * sh + kh - ih, 0)
        pw = max((math.ceil(iw / sw) - 1) * sw + kw - iw, 0)
        x = F.pad(x, [pw // 2, pw - pw // 2, ph // 2, ph - ph // 2])
        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class SqueezeExcite(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.conv_reduce = nn.Conv2d(c, c // r, 1)
        self.conv_expand = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        s = self.conv_reduce(s)
        s = s * torch.sigmoid(s)
        return x * self.conv_expand(s).sigmoid()


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = torch.rand(x.shape[0], 1, 1, 1) > self.p
        return x * keep / (1 - self.p)


class MBConv(nn.Module):
    def __init__(self, c, e=4, stride=1):
        super().__init__()
        self.conv_pw = nn.Conv2d(c, c * e, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c * e)
        self.conv_dw = Conv2dSame(c * e, c * e, 3, stride, groups=c * e, bias=False)
        self.bn2 = nn.BatchNorm2d(c * e)
        self.se = SqueezeExcite(c * e)
        self.conv_pwl = nn.Conv2d(c * e, c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c)
        self.drop_path = DropPath(0.1)
        self.stride = stride

    def forward(self, x):
        sc = x
        x = self.bn1(self.conv_pw(x))
        x = x * torch.sigmoid(x)
        x = self.bn2(self.conv_dw(x))
        x = F.silu(x)
        x = self.bn3(self.conv_pwl(self.se(x)))
        return self.drop_path(x) + sc if self.stride == 1 else x


class TimmEff(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_stem = Conv2dSame(3, 16, 3, 2, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.blocks = nn.Sequential(MBConv(16), MBConv(16, stride=2), MBConv(16), MBConv(16))
        self.conv_head = nn.Conv2d(16, 32, 1)
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu6(self.bn1(self.conv_stem(x)))
        x = self.conv_head(self.blocks(x))
        return self.classifier(F.adaptive_avg_pool2d(x, 1).flatten(1))


class DetrLike(nn.Module):
    def __init__(self, d=16, q=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, d, 3, 2, 1), nn.BatchNorm2d(d), nn.ReLU(), nn.Conv2d(d, d, 3, 2, 1))
        self.query_embed = nn.Embedding(q, d)
        layer = nn.TransformerDecoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 2)
        self.class_embed = nn.Linear(d, 4)
        self.bbox_embed = nn.Linear(d, 4)

    def forward(self, x):
        f = self.backbone(x).flatten(2).transpose(1, 2)
        q = self.query_embed.weight.unsqueeze(0).repeat(x.shape[0], 1, 1)
        h = self.decoder(q, f)
        return {"pred_logits": self.class_embed(h), "pred_boxes": self.bbox_embed(h).sigmoid()}


class BiRnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 8, batch_first=True, bidirectional=True)
        self.lstm = nn.LSTM(16, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.gru(x)
        y, (h, c) = self.lstm(y)
        return self.fc(y), h


class TiesNet(nn.Module):
    """TopK over ReLU outputs (many exact zeros tie), argmax, and gathered values."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        h = torch.relu(self.fc(x) - 0.3)
        v, i = h.topk(6, dim=-1)
        return self.out(v), i, h.argmax(-1)


class AlbertLayer(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 2 * d)
        self.ff2 = nn.Linear(2 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        sh = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = sh(q), sh(k), sh(v)
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + mask
        a = s.softmax(-1) @ v
        x = self.ln1(x + self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class AlbertLike(nn.Module):
    def __init__(self, vocab=60, e=16, d=32, n=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, e)
        self.pos = nn.Embedding(16, e)
        self.eln = nn.LayerNorm(e)
        self.proj = nn.Linear(e, d)
        self.layer = AlbertLayer(d)
        self.n = n
        self.pool = nn.Linear(d, d)
        self.cls = nn.Linear(d, 2)

    def forward(self, ids, attn_mask):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device).unsqueeze(0)
        x = self.proj(self.eln(self.emb(ids) + self.pos(pos)))
        mask = (1.0 - attn_mask[:, None, None, :].float()) * -10000.0
        for _ in range(self.n):
            x = self.layer(x, mask)
        return self.cls(torch.tanh(self.pool(x[:, 0])))


class ManualAttention(nn.Module):
    """timm-style ViT attention: one qkv Linear, the scale a Python float, softmax, projection."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = ((q @ k.transpose(-2, -1)) * self.scale).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, t, d))


class ViTBlock(nn.Module):
    """Pre-norm block with nn.LayerNorm (opset 13: ReduceMean, Sub, Pow, Add eps, Sqrt, Div) and
    the tanh GELU of nn.GELU(approximate="tanh") (one torch op, seven ONNX nodes)."""

    def __init__(self, dim=16):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), ManualAttention(dim)
        self.norm2, self.fc1 = nn.LayerNorm(dim), nn.Linear(dim, 2 * dim)
        self.act, self.fc2 = nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class ManualViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.blocks = nn.Sequential(ViTBlock(), ViTBlock())
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(1))


class RepBlock(nn.Module):
    """RepVGG's training-time block: 3x3 Conv+BN, 1x1 Conv+BN and an identity BN, summed."""

    def __init__(self, c):
        super().__init__()
        self.dense = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
        self.point = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))
        self.identity = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(self.dense(x) + self.point(x) + self.identity(x))


class RepPool(nn.Module):
    """RepVGG blocks, an average pooling that pads (count_include_pad=False) and a padded one
    (PyTorch pads inside its pooling; the exporter writes Pad + AveragePool for the second)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(RepBlock(8), RepBlock(8))
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.pool2 = nn.AvgPool2d(3, stride=1, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = self.pool(self.blocks(F.relu(self.stem(x))))
        x = self.pool2(self.conv(F.pad(x, (1, 1, 1, 1), value=0.5)))
        return self.fc(x.mean((2, 3)))


FAMILIES = {
    "llama_decoder": (TinyLlama, lambda: (_tokens(2, 10, 64, 1),), lambda: (_tokens(2, 10, 64, 2),)),
    "bert_encoder": (TinyBert,
                     lambda: (_tokens(2, 12, 80, 1), torch.tensor([[1] * 12, [1] * 9 + [0] * 3]),
                              torch.tensor([[0] * 6 + [1] * 6] * 2)),
                     lambda: (_tokens(2, 12, 80, 1), torch.ones(2, 12, dtype=torch.long),
                              torch.zeros(2, 12, dtype=torch.long))),
    "gpt2_tied": (TiedGPT2, lambda: (_tokens(2, 11, 70, 1),), lambda: (_tokens(2, 11, 70, 2),)),
    "timm_efficientnet": (TimmEff, lambda: (_randn(2, 3, 32, 32),), lambda: (_randn(4, 3, 32, 32, seed=2),)),
    "detr_queries": (DetrLike, lambda: (_randn(2, 3, 16, 16),), lambda: (_randn(4, 3, 16, 16, seed=2),)),
    "bidirectional_rnn": (BiRnn, lambda: (_randn(2, 7, 6),), lambda: (_randn(2, 7, 6, seed=2),)),
    "topk_of_relu": (TiesNet, lambda: (_randn(3, 8),), lambda: (_randn(3, 8, seed=2),)),
    "albert_shared_layer": (AlbertLike,
                            lambda: (_tokens(2, 10, 60, 1), torch.tensor([[1] * 10, [1] * 7 + [0] * 3])),
                            lambda: (_tokens(2, 10, 60, 2), torch.ones(2, 10, dtype=torch.long))),
    "manual_vit": (ManualViT, lambda: (_randn(2, 10, 8),), lambda: (_randn(4, 10, 8, seed=2),)),
    "repvgg_pool": (RepPool, lambda: (_randn(2, 3, 16, 16),), lambda: (_randn(4, 3, 16, 16, seed=2),)),
}
