"""Cross-check of onnxprobe's CPU float16 emulation on a GPU with real float16 kernels (PyTorch,
CUDA). The overflow and stacked_ln models of tests/python/fp16_models.py are re-expressed in
PyTorch with the same seeded weights and inputs (those of bench/peer_fp16.py's first draws), run
in full float16 ("all16") and with onnxprobe's block list in float32 ("onnxprobe"); the relative
errors against float32 are to be compared with onnxruntime's CPU provider with storage barriers
(docs/fp16.md, "Checking float16 on a CPU").

usage: python3 bench/fp16_gpu_crosscheck.py      (needs torch with CUDA and numpy)
"""
import numpy as np
import torch

DEV, H, F = "cuda", torch.float16, torch.float32

rng = np.random.default_rng(0)  # bench/peer_fp16.py's inputs
x_overflow = rng.uniform(0, 1, (1, 64)).astype(np.float32)
x_stacked = rng.uniform(0, 1, (1, 64)).astype(np.float32)
rng = np.random.default_rng(5)  # stacked_layernorm_model's weights, in its order
BLOCKS = [[rng.uniform(0.5, 1.5, 64), rng.uniform(-0.5, 0.5, 64),
           rng.normal(0, 30 / 8, (64, 64)), rng.normal(0, 1, 64)] for _ in range(8)]


def t(a, dt):
    return torch.tensor(np.asarray(a, np.float32), device=DEV).to(dt)


def layernorm(h, gamma, beta, dt, mixed):
    """Decomposed LayerNorm; `mixed`: Pow -> ReduceMean -> Add -> Sqrt in float32 (the block
    list onnxprobe finds), the rest in `dt`."""
    d = h - h.mean(1, keepdim=True)
    if mixed:
        s = ((d.float() ** 2).mean(1, keepdim=True) + 1e-5).sqrt().to(dt)
    else:
        s = ((d ** 2).mean(1, keepdim=True) + 1e-5).sqrt()
    return d / s * t(gamma, dt) + t(beta, dt)


def stacked(dt, mixed):
    h = t(x_stacked, dt) * 1000
    for gamma, beta, w, bias in BLOCKS:
        h = h + (layernorm(h, gamma, beta, dt, mixed) @ t(w, dt) + t(bias, dt))
    return [h]


def overflow(dt, mixed):
    x = t(x_overflow, dt)
    big = x * 3000
    total = (big.float() if mixed else big).sum(1, keepdim=True) * 1e-3
    r = np.random.default_rng(0)  # overflow_model's gamma and beta
    gamma, beta = r.uniform(0.5, 1.5, 64), r.uniform(-0.5, 0.5, 64)
    return [total, layernorm(x * 1000, gamma, beta, dt, mixed)]


for name, f in [("overflow", overflow), ("stacked_ln", stacked)]:
    ref = [o.double() for o in f(F, False)]
    atol = 1e-2 * min(float(r.abs().max()) for r in ref)
    for label, mixed in [("all16", False), ("onnxprobe", True)]:
        got = [o.double() for o in f(H, mixed)]
        nonfinite = sum(int((~torch.isfinite(g)).sum()) for g in got)
        rel = max(float(torch.nan_to_num(g - r, posinf=1e30, neginf=1e30).norm() / r.norm())
                  for g, r in zip(got, ref))
        ok = all(bool(torch.allclose(g, r, rtol=1e-2, atol=atol)) for g, r in zip(got, ref))
        print(f"{name} {label} cuda float16: pass {ok} nonfinite {nonfinite} rel {rel:.3g}")
