"""Small decoders with a key/value cache (random, seeded weights) for `onnxprobe generate`.

Two families, exported the way causal-LM exports name their I/O (input_ids, attention_mask,
position_ids, past_key_values.N.key/value -> logits, present.N.key/value):
- "gpt2": learned positions, LayerNorm, one fused QKV projection, tanh GELU, tied LM head;
- "llama": RMSNorm, rotary position embeddings, grouped-query attention (fewer key/value heads
  than query heads), SwiGLU MLP.
`mask_fill` is the value added to masked attention scores ("min": the dtype's minimum).
Run with Debian's python3 (torch 1.13): python3 decoder_models.py OUT_DIR [gpt2|llama ...]
"""
import math
import os
import sys

import torch
from torch import nn

VOCAB = 96


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def causal_bias(attention_mask, q_len, past_len, fill):
    """(1, 1, q, total) additive bias: future positions and padding get `fill`."""
    total = attention_mask.shape[1]
    rows = torch.arange(q_len).unsqueeze(1) + past_len
    cols = torch.arange(total).unsqueeze(0)
    allowed = (cols <= rows).unsqueeze(0).unsqueeze(0) & (attention_mask[:, None, None, :] > 0)
    value = torch.finfo(torch.float32).min if fill == "min" else float(fill)
    return torch.where(allowed, torch.zeros(()), torch.full((), value))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        rep = self.heads // self.kv_heads
        kr = k.unsqueeze(2).expand(-1, -1, rep, -1, -1).flatten(1, 2)
        vr = v.unsqueeze(2).expand(-1, -1, rep, -1, -1).flatten(1, 2)
        scores = q @ kr.transpose(-1, -2) / math.sqrt(self.hd) + bias
        y = (scores.softmax(-1) @ vr).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(y), k, v


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = LlamaAttention(d, heads, kv_heads)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj = nn.Linear(d, 2 * d, bias=False)
        self.up_proj = nn.Linear(d, 2 * d, bias=False)
        self.down_proj = nn.Linear(2 * d, d, bias=False)

    def forward(self, x, cos, sin, bias, pk, pv):
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, bias, pk, pv)
        x = x + a
        h = self.post_attention_layernorm(x)
        x = x + self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))
        return x, k, v


class Llama(nn.Module):
    def __init__(self, layers=3, d=64, heads=4, kv_heads=2, mask_fill="min", vocab=VOCAB):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaLayer(d, heads, kv_heads) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.hd, self.kv_heads, self.mask_fill = d // heads, kv_heads, mask_fill
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("inv_freq", inv)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        x = self.embed_tokens(input_ids)
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat([freqs, freqs], dim=-1)[:, None]
        cos, sin = emb.cos(), emb.sin()
        bias = causal_bias(attention_mask, input_ids.shape[1], past[0].shape[2], self.mask_fill)
        presents = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, bias, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)


class Gpt2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x, bias, pk, pv):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, self.hd).transpose(1, 2) for z in (q, k, v))
        k = torch.cat([pk, k], dim=2)
        v = torch.cat([pv, v], dim=2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + bias
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.c_proj(y)
        h = nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h), k, v


class Gpt2(nn.Module):
    def __init__(self, layers=3, d=64, heads=4, mask_fill="min", vocab=VOCAB):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(256, d)
        self.h = nn.ModuleList([Gpt2Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.hd, self.kv_heads, self.mask_fill = d // heads, heads, mask_fill

    def forward(self, input_ids, attention_mask, position_ids, *past):
        x = self.wte(input_ids) + self.wpe(position_ids)
        bias = causal_bias(attention_mask, input_ids.shape[1], past[0].shape[2], self.mask_fill)
        presents = []
        for i, block in enumerate(self.h):
            x, k, v = block(x, bias, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.ln_f(x) @ self.wte.weight.t(), *presents)


def build(kind, layers=3, mask_fill="min", seed=0, **dims):
    """`dims`: d, heads (and kv_heads for llama), vocab."""
    torch.manual_seed(seed)
    model = (Llama if kind == "llama" else Gpt2)(layers=layers, mask_fill=mask_fill, **dims)
    with torch.no_grad():
        for p in model.parameters():  # larger weights than the default init: logits far apart
            if p.dim() == 2:
                p.mul_(2.0)
    return model.eval()


def export(model, path):
    n = len(model.layers) if hasattr(model, "layers") else len(model.h)
    past_len, q_len = 2, 3
    vocab = (model.embed_tokens if hasattr(model, "embed_tokens") else model.wte).num_embeddings
    ids = torch.randint(0, vocab, (1, q_len))
    mask = torch.ones(1, past_len + q_len, dtype=torch.int64)
    pos = torch.arange(past_len, past_len + q_len).unsqueeze(0)
    past = [torch.randn(1, model.kv_heads, past_len, model.hd) for _ in range(2 * n)]
    past_names, present_names, axes = [], [], {}
    for i in range(n):
        for kind in ("key", "value"):
            past_names.append(f"past_key_values.{i}.{kind}")
            present_names.append(f"present.{i}.{kind}")
            axes[past_names[-1]] = {0: "batch", 2: "past_sequence_length"}
            axes[present_names[-1]] = {0: "batch", 2: "total_sequence_length"}
    axes.update({"input_ids": {0: "batch", 1: "sequence_length"},
                 "attention_mask": {0: "batch", 1: "total_sequence_length"},
                 "position_ids": {0: "batch", 1: "sequence_length"},
                 "logits": {0: "batch", 1: "sequence_length"}})
    torch.onnx.export(model, (ids, mask, pos, *past), path, opset_version=14,
                      input_names=["input_ids", "attention_mask", "position_ids", *past_names],
                      output_names=["logits", *present_names], dynamic_axes=axes,
                      do_constant_folding=True)


def greedy(model, prompt, steps):
    """Greedy tokens of `model` from `prompt` (a list of ids) with its cache, as the export runs."""
    n = len(model.layers) if hasattr(model, "layers") else len(model.h)
    past = [torch.zeros(1, model.kv_heads, 0, model.hd) for _ in range(2 * n)]
    ids, out = torch.tensor([prompt]), []
    with torch.no_grad():
        for _ in range(steps):
            p = past[0].shape[2]
            mask = torch.ones(1, p + ids.shape[1], dtype=torch.int64)
            pos = torch.arange(p, p + ids.shape[1]).unsqueeze(0)
            logits, *past = model(ids, mask, pos, *past)
            tok = int(logits[0, -1].argmax())
            out.append(tok)
            ids = torch.tensor([[tok]])
    return out


if __name__ == "__main__":
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for kind in sys.argv[2:] or ["gpt2", "llama"]:
        export(build(kind), os.path.join(out_dir, f"{kind}_decoder.onnx"))
