#!/usr/bin/python3
"""`onnxprobe generate` over a long teacher-forced generation against two plain generations,
measured side by side in one run.

usage: /usr/bin/python3 bench/generate_bench.py ONNXPROBE PYTHON OUT_DIR [--steps N]

PYTHON is an interpreter with the `onnxruntime` package of the version onnxprobe loads (the
bootstrap's .deps/pyenv). A LLaMA-style decoder (random weights, rotary embeddings, grouped-query
attention; tests/python/decoder_models.py) generates N tokens greedily with its cache:
  - onnxprobe: `generate MODEL --b-opt-level all --steps N --isolate none` (both sides
    free-running and teacher-forced, every step's logits and cache judged), wall time of the
    whole process and its peak resident memory;
  - plain: two ONNX Runtime sessions (optimizations disabled and all), each generating the same
    N tokens greedily from the same prompt: session creation plus steps, timed inside the Python
    child (its interpreter start and imports left out), and that child's peak memory.
Goal (issue 29): <= 3x the plain generations.
"""
import json
import os
import subprocess
import sys
import time

GOAL = 3.0
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

PLAIN = r"""
import sys, time, json, numpy as np, onnxruntime as ort
model, steps, prompt = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
levels = [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL]
t0 = time.perf_counter()
tokens = []
for level in levels:
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    past = {}
    for i in s.get_inputs():
        if i.name.startswith("past"):
            past[i.name] = np.zeros([1 if d == "batch" else 0 if isinstance(d, str) else d
                                     for d in i.shape], np.float32)
    outs = [o.name for o in s.get_outputs()]
    ids, out = np.array([prompt], np.int64), []
    for _ in range(steps):
        n = next(iter(past.values())).shape[2]
        feed = dict(input_ids=ids, attention_mask=np.ones((1, n + ids.shape[1]), np.int64),
                    position_ids=np.arange(n, n + ids.shape[1])[None], **past)
        res = dict(zip(outs, s.run(None, feed)))
        tok = int(res["logits"][0, -1].argmax())
        out.append(tok)
        ids = np.array([[tok]], np.int64)
        past = {k: res[k.replace("past_key_values", "present")] for k in past}
    tokens.append(out)
import resource
print(json.dumps({"seconds": time.perf_counter() - t0, "tokens": tokens,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main():
    onnxprobe, python, out_dir = sys.argv[1:4]
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 256
    import decoder_models as dm  # torch: Debian's interpreter

    os.makedirs(out_dir, exist_ok=True)
    model = os.path.join(out_dir, "llama_bench.onnx")
    dims = dict(d=256, heads=8, kv_heads=4, vocab=4096)
    if not os.path.exists(model):
        dm.export(dm.build("llama", layers=6, **dims), model)
    prompt = list(range(1, 9))
    report = os.path.join(out_dir, "generate_bench.json")
    if os.path.exists(report):
        os.remove(report)
    t0 = time.perf_counter()
    child = subprocess.Popen([onnxprobe, "generate", model, "--b-opt-level", "all", "--steps",
                              str(steps), "--isolate", "none", "--prompt-ids",
                              ",".join(map(str, prompt)), "--json", report, "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
    ours = time.perf_counter() - t0
    ours_rss = usage.ru_maxrss / 1024
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"onnxprobe generate failed with exit code {os.waitstatus_to_exitcode(status)}")
    doc = json.load(open(report))
    p = subprocess.run([python, "-c", PLAIN, model, str(steps), json.dumps(prompt)],
                       capture_output=True, text=True, check=True)
    plain = json.loads(p.stdout)
    plain_rss = plain["peak_mib"]
    same = doc["free_running"]["tokens_a"] == plain["tokens"][0]
    ratio = ours / plain["seconds"]
    print(f"LLaMA-style decoder (6 layers, d 256, GQA 8/4 heads, vocab 4096), {steps} steps, "
          f"prompt {len(prompt)} tokens")
    print(f"  plain: two ONNX Runtime generations (opt disabled + all): {plain['seconds']:.2f} s")
    print(f"  onnxprobe generate (free-running + teacher-forced, every step judged): "
          f"{ours:.2f} s = {ratio:.2f}x (goal <= {GOAL:g}x: "
          f"{'met' if ratio <= GOAL else 'NOT met'}); verdict {doc['verdict']}")
    print(f"  peak memory: onnxprobe {ours_rss:.0f} MiB, plain generations {plain_rss:.0f} MiB "
          f"(Python, numpy and ONNX Runtime's module included) = {ours_rss / plain_rss:.2f}x")
    print(f"  side A's tokens equal ONNX Runtime's own greedy generation: {same}")


if __name__ == "__main__":
    main()
