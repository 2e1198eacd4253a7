"""A Hugging Face LlamaForCausalLM (use_cache=True) generating greedily, saved by the companion
(onnxprobe_torch.capture_generation) as a side for `onnxprobe generate`; prints the saved tokens
and those of transformers' own generate() (the independent reference) as JSON.

Runs in the bootstrap's GenAI environment:
  python capture_hf_generation.py CKPT ONNX_MODEL PROMPT_IDS STEPS OUT"""
import onnx  # noqa: F401  before torch: Debian's torch 1.13 would load an older onnx module
import json
import os
import sys

import torch
import transformers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import onnxprobe_torch  # noqa: E402


def main(ckpt, onnx_path, prompt, steps, out):
    model = transformers.LlamaForCausalLM.from_pretrained(ckpt).eval()
    prompt = [int(t) for t in prompt.split(",")]
    saved = onnxprobe_torch.capture_generation(model, prompt, int(steps), out, onnx_path=onnx_path)
    with torch.no_grad():
        ids = model.generate(torch.tensor([prompt]), max_new_tokens=int(steps), do_sample=False,
                             min_new_tokens=int(steps), pad_token_id=0)
    print(json.dumps({"saved": saved, "generate": ids[0, len(prompt):].tolist()}))


if __name__ == "__main__":
    main(*sys.argv[1:6])
