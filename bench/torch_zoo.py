#!/usr/bin/python3
"""PyTorch vs ONNX over a zoo: every torchvision classification model that exports at opset >= 13
at a small input, the segmentation models, and the hand-written nets of tests/python/torch_zoo.py.

  /usr/bin/python3 bench/torch_zoo.py ONNXPROBE_BIN [--work DIR] [--size 64] [--only a,b] [--quick]

Per model: export + capture (random seeded weights, BatchNorm statistics warmed in train mode),
`onnxprobe compare` of the unfaulted export (must PASS), then of four faulted copies, each at mid
depth: one weight element of a Conv/Gemm/MatMul changed, one attribute changed (pads shifted, or
alpha/epsilon doubled), a float16 round trip inserted after a node, a scalar constant x1.1 (an eps, a
GELU coefficient, an attention scale, an exponent: tests/python/torch_zoo.py
inject_scalar_constant_fault). A weight or attribute fault
must FAIL with the faulted node as the top culprit; a float16 round trip may stay within
tolerance, so it counts as named when the top culprit or (on a PASS) the first drift origin is the
inserted Cast. Prints one line per model (alignment coverage = share of PyTorch activations
paired structurally; noise = the largest tolerance_ratio (error / allowed error) of the unfaulted
comparison; per fault kind the verdict and whether the node was named; "parity" says whether a
parameter-parity finding names the weight fault's node) and the totals.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
os.environ.setdefault("ONNXPROBE_SRC", os.path.join(HERE, ".."))
# the faults' effect is checked with ONNX Runtime's Python API of the bootstrap's test environment
os.environ.setdefault("ONNXPROBE_PYENV", os.path.join(HERE, "..", ".deps", "pyenv", "bin", "python"))
import torch_zoo as Z  # noqa: E402

# architectures whose constructor needs a larger input than --size (they are run at 224)
MIN_SIZE = {"inception_v3": 299, "googlenet": 224}


def entries(size, quick):
    out = [(n, Z.HANDWRITTEN[n]) for n in Z.HANDWRITTEN]
    cls = Z.torchvision_names("classification")
    seg = Z.torchvision_names("segmentation")
    if quick:
        cls = [n for n in cls if n in ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "shufflenet_v2_x1_0",
                                       "regnet_x_400mf", "squeezenet1_0")]
        seg = seg[:1]
    for n in cls:
        out.append((n, Z.torchvision_entry(n, "classification", max(size, MIN_SIZE.get(n, size)))))
    for n in seg:
        out.append((n, Z.torchvision_entry(n, "segmentation", max(size, 96))))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("onnxprobe")
    p.add_argument("--work", help="keep models and reports here (default: a temporary folder)")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--only", default="")
    p.add_argument("--quick", action="store_true", help="a handful of models")
    p.add_argument("--max-params", type=float, default=150e6,
                   help="skip larger models (memory of a small machine); 0: no limit")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    work = a.work or tempfile.mkdtemp(prefix="onnxprobe_zoo_")
    only = {n for n in a.only.split(",") if n}
    rows = []
    print(f"{'model':28} {'cover':>6} {'noise':>6} {'unfaulted':>9} {'weight':>11} {'attribute':>11}"
          f" {'fp16':>11} {'scalar':>11} {'parity':>6}  {'time':>7}  misses: named (faulted)")
    for name, entry in entries(a.size, a.quick):
        if only and name not in only:
            continue
        folder = os.path.join(work, name)
        t0 = time.time()
        if a.max_params:
            try:
                n_params = sum(p.numel() for p in entry[0]().parameters())
            except Exception:  # a constructor that refuses the small size: counted at 224
                kind = "segmentation" if name in Z.torchvision_names("segmentation") else "classification"
                n_params = sum(p.numel() for p in Z.torchvision_entry(name, kind, 224)[0]().parameters())
            if n_params > a.max_params:
                print(f"{name:28} skipped: {n_params / 1e6:.0f}M parameters (over --max-params)", flush=True)
                continue
        try:
            onnx_path, cap = Z.prepare(folder, name, *entry)
        except Exception as e:  # export limits of torch 1.13 at this size: try the usual size once
            if name in Z.HANDWRITTEN or "224" in name:
                print(f"{name:28} skipped: {str(e).strip().splitlines()[0][:100]}", flush=True)
                continue
            kind = "segmentation" if name in Z.torchvision_names("segmentation") else "classification"
            try:
                onnx_path, cap = Z.prepare(folder, name, *Z.torchvision_entry(name, kind, 224))
            except Exception as e2:
                print(f"{name:28} skipped: {str(e2).strip().splitlines()[0][:100]}", flush=True)
                continue
        prep = time.time() - t0
        rc, rep, secs, out = Z.compare(a.onnxprobe, cap, onnx_path, os.path.join(folder, "unfaulted.json"))
        if rep is None:
            print(f"{name:28} compare failed (exit {rc}): {out.strip().splitlines()[-1][:100]}", flush=True)
            rows.append((name, None, False, {}, 0.0, None))
            continue
        kinds = {}
        parity = None
        secs_f = 0.0
        def scalar(onnx_path, bad, **kw):
            got = Z.inject_scalar_constant_fault(onnx_path, bad, **kw)
            return got[0] if got else None
        for kind, inject in (("weight", Z.inject_weight_fault), ("attr", Z.inject_attribute_fault),
                             ("fp16", Z.inject_fp16_roundtrip), ("scalar", scalar)):
            bad = os.path.join(folder, f"faulted_{kind}.onnx")
            target = inject(onnx_path, bad, onnxprobe=a.onnxprobe, capture=cap)
            if not target:
                kinds[kind] = ("-", None, "-")
                continue
            rc_f, rep_f, s_f, _ = Z.compare(a.onnxprobe, cap, bad, os.path.join(folder, f"faulted_{kind}.json"))
            secs_f += s_f
            if rep_f is None:
                kinds[kind] = (f"exit {rc_f}", False, f"- ({target})")
                continue
            got = Z.named(rep_f)
            ok = got == target and (kind == "fp16" or rep_f["verdict"] == "FAIL")
            kinds[kind] = (rep_f["verdict"], ok, f"{got} ({target})")
            if kind == "weight":
                parity = Z.parity_names(rep_f, target)
        cov = Z.coverage(rep)
        noise = Z.noise_ratio(rep)
        rows.append((name, cov, rep["verdict"] == "PASS", kinds, noise, parity))
        cols = "".join(f" {kinds[k][0]:>5} {str(kinds[k][1] if kinds[k][1] is not None else '-'):>5}"
                       for k in ("weight", "attr", "fp16", "scalar"))
        wrong = "; ".join(f"{k}: {kinds[k][2]}" for k in kinds if kinds[k][1] is False)
        print(f"{name:28} {cov:6.2f} {noise:6.3f} {rep['verdict']:>9}{cols}"
              f" {str(parity if parity is not None else '-'):>6}  {prep + secs + secs_f:6.1f}s  {wrong}", flush=True)
        if not a.work:
            shutil.rmtree(folder, ignore_errors=True)
    done = [r for r in rows if r[1] is not None]
    if done:
        parts = []
        for k, label in (("weight", "weight top-1"), ("attr", "attribute top-1"), ("fp16", "fp16 round trip named"),
                         ("scalar", "scalar constant top-1")):
            tried = [r for r in done if r[3].get(k, ("-", None))[1] is not None]
            hit = sum(1 for r in tried if r[3][k][1])
            parts.append(f"{label} {hit}/{len(tried)} ({100.0 * hit / max(1, len(tried)):.0f}%)")
        weights = [r for r in done if r[3].get("weight", ("-", None))[1] is not None]
        print(f"\n{len(done)} models: unfaulted PASS {sum(r[2] for r in done)}/{len(done)}"
              f" ({100.0 * sum(r[2] for r in done) / len(done):.0f}%), " + ", ".join(parts) +
              f", weight fault named by parity {sum(1 for r in weights if r[5])}/{len(weights)}, mean coverage"
              f" {sum(r[1] for r in done) / len(done):.2f}, largest noise / tolerance"
              f" {max(r[4] for r in done):.3f}")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if done and all(r[2] for r in done) else 1


if __name__ == "__main__":
    sys.exit(main())
