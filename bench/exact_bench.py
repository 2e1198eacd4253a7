#!/usr/bin/python3
"""Cost of the exact reference: `compare M --b-opt-level all` with and without `--reference exact`,
whole-process wall time and peak RSS, the two alternated run by run (median of N pairs).

usage: bench/exact_bench.py ONNXPROBE MODELS_DIR [RUNS]
Models: MODELS_DIR/resnet50.onnx (bench/make_models.py) and a 6-layer transformer encoder
(d_model 512, 8 heads, GELU, sequence 128) exported here with random seeded weights.
"""
import os
import statistics
import subprocess
import sys
import time

MEASURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "measure.py")

TRANSFORMER = """
import sys, torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, activation="gelu", batch_first=True)
model = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).eval()
torch.onnx.export(model, (torch.randn(1, 128, 512),), sys.argv[1], input_names=["x"], output_names=["y"],
                  opset_version=17)
"""


def measure(cmd):
    out = subprocess.run(["/usr/bin/python3", MEASURE, *cmd], capture_output=True, text=True).stdout.split()
    secs, rss, code = float(out[0]), float(out[1]), int(out[2])
    if code not in (0, 1):
        sys.exit(f"failed ({code}): {' '.join(cmd)}")
    return secs, rss


def main():
    onnxprobe, models = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    transformer = os.path.join(models, "transformer6.onnx")
    if not os.path.exists(transformer):
        subprocess.run(["/usr/bin/python3", "-c", TRANSFORMER, transformer + ".tmp.onnx"], check=True,
                       capture_output=True)
        os.replace(transformer + ".tmp.onnx", transformer)
    print(f"{'model':<16} {'compare s':>10} {'+exact s':>10} {'ratio':>6} {'peak MiB':>9} {'+exact MiB':>11} {'ratio':>6}")
    for path in (os.path.join(models, "resnet50.onnx"), transformer):
        base = [onnxprobe, "compare", path, "--b-opt-level", "all", "-q"]
        plain, exact = [], []
        measure(base)  # warm the page cache
        for _ in range(runs):
            plain.append(measure(base))
            exact.append(measure(base + ["--reference", "exact"]))
        ts = [statistics.median(x[0] for x in v) for v in (plain, exact)]
        ms = [statistics.median(x[1] for x in v) for v in (plain, exact)]
        print(f"{os.path.basename(path):<16} {ts[0]:>10.2f} {ts[1]:>10.2f} {ts[1] / ts[0]:>6.2f} "
              f"{ms[0]:>9.0f} {ms[1]:>11.0f} {ms[1] / ms[0]:>6.2f}")


if __name__ == "__main__":
    main()
