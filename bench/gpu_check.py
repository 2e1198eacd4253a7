"""The GPU path, ready for the day a device is lent (docs/providers.md, "A GPU"): PyTorch on CUDA
against the ONNX model on ONNX Runtime's CPU provider, and CUDA against CPU PyTorch, in the
settings that change CUDA's numbers. The device image has PyTorch with CUDA but no onnxprobe
build and no ONNX Runtime GPU, so the work is split in three steps:

  /usr/bin/python3 bench/gpu_check.py prepare DIR   # here: models exported, inputs drawn (small)
  python3 bench/gpu_check.py capture DIR OUT        # on the device (one run, ~2 minutes):
                                                    # PyTorch captures per setting into OUT
  /usr/bin/python3 bench/gpu_check.py compare DIR OUT [ONNXPROBE]   # here: onnxprobe compares

Settings captured on CUDA: fp32 (TF32 off, cuDNN deterministic), tf32 (TF32 on for matmul and
cuDNN), benchmark (cuDNN autotuning), autocast16 (torch.autocast float16), and cpu (the same
PyTorch on the device's CPU). What `compare` checks, per model (a CNN with BatchNorm and a
transformer encoder layer):
  - fp32 and cpu PASS against the ONNX model on ONNX Runtime's CPU provider (float32 arithmetic
    on both sides, within PyTorch's measured float32 rounding);
  - tf32 differs from fp32 by more than float32 rounding (10-bit mantissa products) and the rows
    where it does are the matmul/conv outputs (the report's introduced rows);
  - autocast16 FAILs against the ONNX model and the first introduced rows are float16 ops;
  - benchmark vs fp32 (cuDNN's algorithm choice) is reported as measured, not asserted.
Nothing here is verified until it has run on a device: the closing notes say when it has.
GPU_CHECK_DEVICE=cpu runs the capture step on this CPU instead (a dry run of the script itself;
autocast then means bfloat16).
"""
import json
import os
import subprocess
import sys

import numpy as np

MODELS = ("cnn", "encoder")
SETTINGS = ("fp32", "tf32", "benchmark", "autocast16", "cpu")


def _models(torch):
    nn = torch.nn

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            layers, c = [], 3
            for width in (32, 64, 64, 128):
                layers += [nn.Conv2d(c, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU()]
                c = width
            self.features = nn.Sequential(*layers)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            return self.head(self.features(x).mean(dim=(2, 3)))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)

        def forward(self, x):
            return self.layer(x)

    torch.manual_seed(0)
    return {"cnn": (Cnn(), (1, 3, 32, 32)), "encoder": (Encoder(), (1, 16, 256))}


def prepare(folder):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    import onnxprobe_torch
    os.makedirs(folder, exist_ok=True)
    for name, (model, shape) in _models(torch).items():
        model.eval()
        x = torch.from_numpy(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
        for m in model.modules():  # BatchNorm with statistics of its own, not the identity
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
        torch.save(model.state_dict(), os.path.join(folder, f"{name}.pt"))
        np.save(os.path.join(folder, f"{name}_x.npy"), x.numpy())
        onnxprobe_torch.export(model, (x,), os.path.join(folder, f"{name}.onnx"), input_names=["x"])


def capture(folder, out):
    import torch
    gpu = os.environ.get("GPU_CHECK_DEVICE", "cuda")
    sys.path.insert(0, os.path.join(folder, "python"))  # onnxprobe_torch carried with the folder
    import onnxprobe_torch
    models = _models(torch)
    for name in MODELS:
        model, _ = models[name]
        model.load_state_dict(torch.load(os.path.join(folder, f"{name}.pt")))
        x = torch.from_numpy(np.load(os.path.join(folder, f"{name}_x.npy")))
        for setting in SETTINGS:
            dev = "cpu" if setting == "cpu" else gpu
            torch.backends.cuda.matmul.allow_tf32 = setting == "tf32"
            torch.backends.cudnn.allow_tf32 = setting == "tf32"
            torch.backends.cudnn.benchmark = setting == "benchmark"
            torch.backends.cudnn.deterministic = setting == "fp32"
            m = model.to(dev)
            path = os.path.join(out, f"{name}_{setting}.npz")
            if setting == "autocast16":
                with torch.autocast(gpu, dtype=torch.float16 if gpu == "cuda" else torch.bfloat16):
                    onnxprobe_torch.capture(m, (x.to(dev),), path, input_names=["x"], float64=False)
            else:
                onnxprobe_torch.capture(m, (x.to(dev),), path, input_names=["x"])
    with open(os.path.join(out, "device.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0) if gpu == "cuda" else gpu,
                   "torch": torch.__version__, "cuda": torch.version.cuda}, f)


def compare(folder, out, onnxprobe):
    rows = []
    for name in MODELS:
        model = os.path.join(folder, f"{name}.onnx")
        for setting in SETTINGS:
            cap = os.path.join(out, f"{name}_{setting}.npz")
            report = os.path.join(out, f"{name}_{setting}.json")
            r = subprocess.run([onnxprobe, "compare", cap, model, "--json", report],
                               capture_output=True, text=True)
            rep = json.load(open(report)) if os.path.exists(report) else {}
            worst = max((t.get("max_rel", 0) for t in rep.get("tensors", [])), default=float("nan"))
            first = next((c["node"] for c in rep.get("localization", {}).get("culprits", [])), "-")
            rows.append((name, setting, r.returncode, rep.get("verdict", r.stderr.strip()[:60]), worst, first))
    print(f"{'model':8} {'setting':11} {'exit':>4} {'verdict':8} {'worst rel':>10}  first introduced")
    for name, setting, code, verdict, worst, first in rows:
        print(f"{name:8} {setting:11} {code:>4} {verdict:8} {worst:10.2e}  {first}")
    expect = {"fp32": 0, "cpu": 0, "autocast16": 1}
    wrong = [(n, s) for n, s, code, *_ in rows if s in expect and code != expect[s]]
    print("as expected" if not wrong else f"NOT as expected: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else ""
    if step == "prepare" and len(sys.argv) == 3:
        prepare(sys.argv[2])
    elif step == "capture" and len(sys.argv) == 4:
        capture(sys.argv[2], sys.argv[3])
    elif step == "compare" and len(sys.argv) in (4, 5):
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else "build/onnxprobe"))
    else:
        sys.exit(__doc__)
