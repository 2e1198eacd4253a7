"""A LLaMA-style decoder with random weights through ONNX Runtime GenAI's model builder (fused
GroupQueryAttention, SimplifiedLayerNormalization; int4: MatMulNBits), for test_generate.py.

Runs in the bootstrap's GenAI environment (.deps/genai-env: onnxruntime-genai, transformers):
  python make_builder_models.py OUT_DIR
writes OUT_DIR/ckpt (a transformers checkpoint with a word-level tokenizer, the builder wants
one), OUT_DIR/fp32/model.onnx and OUT_DIR/int4/model.onnx."""
import os
import subprocess
import sys

import torch
import transformers
from tokenizers import Tokenizer, models

VOCAB = 96


def main(out):
    ckpt = os.path.join(out, "ckpt")
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=3, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=256)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # larger weights than the default init: logits far apart
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(10.0)
    model.save_pretrained(ckpt, safe_serialization=False)
    tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(VOCAB)}, unk_token="t0"))
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0").save_pretrained(ckpt)
    for precision in ("fp32", "int4"):
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", ckpt, "-o",
                        os.path.join(out, precision), "-p", precision, "-e", "cpu"],
                       check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main(sys.argv[1])
