#!/usr/bin/python3
"""Writes a GPT-2-medium-shaped decoder (random, seeded weights) exported with Debian's torch.

usage: /usr/bin/python3 bench/make_gpt2_model.py OUT.onnx [LAYERS] [VOCAB]

A plain nn.Module (no model hub): token + position embeddings, LAYERS pre-norm blocks (causal
self-attention with 16 heads of 64, MLP 1024 -> 4096 -> 1024 with GELU), a final LayerNorm and
logits through the tied embedding. Defaults: 24 layers, vocabulary 50257, sequence 128: about
355 M parameters, a ~1.4 GB .onnx file (opset 14, so LayerNorm and GELU are exported as their
elementary ops: ~4,400 nodes). Input `input_ids` int64 [1, 128], output `logits` float32
[1, 128, VOCAB]. Written under a temporary name, then renamed; an existing file is kept.
"""
import math
import os
import sys

import torch
from torch import nn

D, HEADS, SEQ = 1024, 16, 128


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D)
        self.c_attn = nn.Linear(D, 3 * D)
        self.c_proj = nn.Linear(D, D)
        self.ln_2 = nn.LayerNorm(D)
        self.c_fc = nn.Linear(D, 4 * D)
        self.mlp_proj = nn.Linear(4 * D, D)
        self.register_buffer("mask", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ) == 0)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q, k, v = (y.view(b, t, HEADS, D // HEADS).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // HEADS))
        att = att.masked_fill(self.mask[:, :, :t, :t], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, D)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x))))


class Gpt2Shaped(nn.Module):
    def __init__(self, layers, vocab):
        super().__init__()
        self.wte = nn.Embedding(vocab, D)
        self.wpe = nn.Embedding(SEQ, D)
        self.h = nn.ModuleList(Block() for _ in range(layers))
        self.ln_f = nn.LayerNorm(D)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    vocab = int(sys.argv[3]) if len(sys.argv) > 3 else 50257
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        torch.manual_seed(0)
        model = Gpt2Shaped(layers, vocab).eval()
        with torch.no_grad():
            for p in model.parameters():  # GPT-2's init scale; LayerNorms keep 1 and 0
                if p.dim() >= 2:
                    p.normal_(0.0, 0.02)
        ids = torch.randint(0, vocab, (1, SEQ))
        tmp = out + ".tmp"
        with torch.no_grad():
            torch.onnx.export(model, (ids,), tmp, opset_version=14, input_names=["input_ids"],
                              output_names=["logits"], do_constant_folding=True)
        os.replace(tmp, out)
    print(out)


if __name__ == "__main__":
    main()
