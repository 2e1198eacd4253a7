#!/usr/bin/python3
"""The CPU provider against OpenVINO (the bootstrap's onnxruntime-openvino build) on many models,
measured in one run: verdict, where differences are born, coverage, time against two plain runs.

usage: /usr/bin/python3 bench/openvino_bench.py ONNXPROBE MODELS_DIR [--quick]

Models: torchvision networks with random weights (bench/make_models.py) and a transformer
block. Per model and OpenVINO precision hint (`precision` provider option: FP32, and ACCURACY /
FP16 where the CPU plugin takes it):
  - the verdict of `compare MODEL --ort-version 1.24.1-openvino --b-provider OpenVINO` and the
    nodes where differences are born (drift origins; culprits on a FAIL), by op type;
  - coverage: the share of side A's tensors compared (the rest are fused away on OpenVINO or
    fixed by the model alone) and of the nodes OpenVINO runs (placement with fallback allowed);
  - time: the comparison against the baseline of two plain sessions (CPU and OpenVINO: session
    creation and one run each, `onnxprobe profile --runs 1`), measured side by side.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_0", "shufflenet_v2_x0_5",
          "efficientnet_b0", "regnet_y_400mf", "mnasnet0_5", "googlenet", "densenet121"]
QUICK = ["resnet18", "mobilenet_v2", "squeezenet1_0"]
OPENVINO = ["--ort-version", "1.24.1-openvino"]
HINTS = ["FP32", "ACCURACY", "FP16"]


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r, time.perf_counter() - t0


def plain_seconds(exe, model, provider, tmp):
    out = os.path.join(tmp, "p.json")
    r, _ = timed([exe, "profile", model, *OPENVINO, "--provider", provider, "--runs", "1",
                  f"--json={out}"])
    if r.returncode != 0:
        return None
    lat = json.load(open(out))["latency_ms"]
    return (lat["session_creation"] + lat["median"]) / 1000


def transformer(path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
    import test_openvino  # the transformer block the tests use
    import pathlib
    test_openvino._attention_block(pathlib.Path(path))


def main():
    exe, folder = sys.argv[1], sys.argv[2]
    names = QUICK if "--quick" in sys.argv else MODELS
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["/usr/bin/python3", os.path.join(here, "make_models.py"), folder, *names],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    paths = [(n, os.path.join(folder, f"{n}.onnx")) for n in names]
    block = os.path.join(folder, "transformer_block.onnx")
    transformer(block)
    paths.append(("transformer_block", block))
    print(f"{'model':<20} {'hint':<9} {'verdict':<8} {'compared':>9} {'coverage':>9} "
          f"{'time':>7} {'plain x2':>9} {'ratio':>6}  differences born at (op types)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in paths:
            base = [plain_seconds(exe, model, p, tmp) for p in ("CPU", "OpenVINO")]
            for hint in HINTS:
                out = os.path.join(tmp, "r.json")
                if os.path.exists(out):
                    os.remove(out)
                r, seconds = timed([exe, "compare", model, *OPENVINO, "--b-provider", "OpenVINO",
                                    "--b-provider-option", f"precision={hint}", "-q",
                                    "--json", out])
                if r.returncode not in (0, 1) or not os.path.exists(out):
                    why = (r.stderr.strip().splitlines() or ["?"])[-1][:110]
                    print(f"{name:<20} {hint:<9} {'n/a':<8} {why}")
                    continue
                rep = json.load(open(out))
                s = rep["summary"]
                fused = len(rep.get("fused_in_b", []))
                coverage = s["compared"] / max(1, s["compared"] + fused)
                origins = rep.get("drift_origins", []) + [
                    c for c in rep["localization"]["culprits"] if c.get("introduced")]
                ops = collections.Counter(o["op_type"] for o in origins)
                born = ", ".join(f"{op} {k}" for op, k in ops.most_common(4)) or "-"
                plain = sum(b for b in base if b) if all(base) else None
                ratio = f"{seconds / plain:6.1f}" if plain else "   n/a"
                plain_s = f"{plain:8.2f}s" if plain else "      n/a"
                print(f"{name:<20} {hint:<9} {rep['verdict']:<8} {s['compared']:>9} "
                      f"{coverage:>8.0%} {seconds:6.2f}s {plain_s} {ratio}  {born}")
    print("(coverage: compared tensors over those A captures that B has; the others are fused "
          "away on OpenVINO or fixed by the model alone. ratio: the comparison, with localization "
          "of where differences are born, over two plain sessions created and run once)")


if __name__ == "__main__":
    main()
