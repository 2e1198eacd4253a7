// Decoders run step by step with their key/value cache: two sides generate greedily from one
// prompt, free-running (where their tokens part) and teacher-forced (side B fed side A's tokens,
// so a divergence does not compound through sampling); per step the logits and the cache
// positions each step adds are judged under the comparison's error budget, the first step that
// fails is where the error is born, and that step is compared tensor by tensor with side A's
// exact cache as both sides' input, which names the node. `onnxprobe generate` is this call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/model/model.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe {

// One past input and the present output it is fed from, for one layer.
struct CacheSlot {
  std::string past, present;
  int layer = -1;
  char kind = 'k';   // 'k' key, 'v' value, 'c' both in one tensor
  int seq_axis = 2;  // the axis that grows by one position per step
};

// Which of a decoder's inputs and outputs play which part.
struct DecoderIo {
  std::string input_ids, attention_mask, position_ids, logits;  // "" when the model has none
  std::vector<CacheSlot> cache;                                 // by layer, then key, value
  int layers = 0;
};

// Names given by the user where discovery is ambiguous: "input_ids=NAME", "attention_mask=NAME",
// "position_ids=NAME", "logits=NAME", or "PAST=PRESENT" for one cache tensor.
using DecoderIoHints = std::vector<std::pair<std::string, std::string>>;

// Finds the decoder's roles from input/output names and shapes: token ids (an integer input
// named *input_ids* or *ids*), attention mask (*mask*), position ids (*position*), past tensors
// (*past*, with a layer number and key/value in the name) matched to present outputs (*present*)
// of the same layer and kind, and the logits (*logits*, else the one floating-point output that
// is not a present). Fails with kInvalidArgument naming what could not be mapped and the hint
// that would map it.
Expected<DecoderIo> DiscoverDecoderIo(const Model& model, const DecoderIoHints& hints = {});

struct GenerateSide {
  std::string path;  // .onnx decoder run live
  SessionOptions session;
  std::string ort_library;  // "" = default
  DecoderIoHints io;
};

struct GenerateRequest {
  GenerateSide a, b;            // A the reference, B the side under test
  std::vector<int64_t> prompt;  // token ids; empty: `prompt_length` seeded random ids
  int prompt_length = 8;
  uint64_t seed = 0;
  // Left padding: this many `pad_id` tokens before the prompt, masked out (attention mask 0)
  // and at position 0, as a batch of prompts of different lengths pads its shorter ones.
  int pad_left = 0;
  int64_t pad_id = 0;
  int steps = 16;  // tokens generated (the prompt's step is step 1)
  int top_k = 5;   // top-k agreement of each step's logits
  CompareJob job;  // tolerances (policy, kernel) for logits, cache and the compare
  // A float side A against a quantized side B (quant.mode auto): each step's logits and cache
  // are judged by the quantization-aware rule (SQNR >= quant.min_sqnr_db), as `compare` judges
  // such a pair, and the born step is compared as `compare` compares them.
  QuantOptions quant;
  bool localize = true;  // compare the born step tensor by tensor and isolate
  LocalizeOptions localize_options;
  // Side A's generation saved here as it runs (a folder: generation.json and a file per step,
  // written whole or not at all), to be side A of a later comparison. "" none.
  std::string save_a;
  // Called after each step of each phase ("A", "B teacher-forced", "B free") with the step.
  std::function<void(const std::string& phase, int step)> on_step;
};

// One cache tensor's positions added at one step, judged.
struct CacheRow {
  int layer = -1;
  char kind = 'k';
  TensorResult row;                      // the new positions of side A's present vs side B's
  std::vector<double> position_max_abs;  // per new position: the largest |a - b|
};

// One teacher-forced step: both sides fed side A's tokens, each with its own cache.
struct GenerateStep {
  int step = 0;                      // 1-based
  int64_t token_a = 0, token_b = 0;  // each side's greedy choice
  TensorResult logits;               // the last position's logits
  double kl_divergence = 0;          // KL(softmax A || softmax B), nats
  double margin_a = 0;               // A's top-1 minus top-2 logit
  double topk_agreement = 1;         // |top-k A ∩ top-k B| / k
  std::vector<CacheRow> cache;
  bool pass = true;
  int first_failing_layer = -1;  // lowest layer whose cache fails; -1 none (logits only)
};

// At the compared step, with side A's exact cache: the error each layer introduces (rows whose
// role is introduced, or a quantized side B's isolated layers, grouped by the layer in their
// node's module path).
struct LayerError {
  int layer = -1;  // -1: nodes outside any layer (embeddings, final norm, head)
  size_t introduced_rows = 0;
  double worst_ratio = 0;  // largest error / allowed error among them
  std::string worst_node, worst_op;
  double sqnr_db = 0;  // a quantized side B: the worst layer's isolated SQNR
};

struct GenerateReport {
  std::string model_a, model_b, describe_a, describe_b;
  DecoderIo io_a, io_b;
  std::vector<int64_t> prompt;
  bool prompt_generated = false;
  int pad_left = 0;  // padding tokens fed before the prompt
  uint64_t seed = 0;
  int top_k = 5;
  TolerancePolicy policy;
  // side B quantized, side A float: the steps were judged by SQNR >= this (0: by the policy)
  double quant_min_sqnr_db = 0;
  // free-running: each side's own greedy tokens
  std::vector<int64_t> tokens_a, tokens_b;
  int first_divergent_step = -1;  // 1-based; -1 when they agree throughout
  // A near-tie: the tokens parted at a step that passed its budget (A's top-two margin below
  // the logits' measured error); "" otherwise.
  std::string divergence_note;
  std::vector<GenerateStep> steps;  // teacher-forced
  int born_step = -1;               // first failing step (1-based), -1 when all pass
  int born_layer = -1;              // the cache's first failing layer at that step, or the node's
  std::string born_where;           // "layer 2 (present.2.key)", "logits"
  bool localized = false;           // the born step was compared tensor by tensor
  // The step compared tensor by tensor with side A's exact cache (the born step; step 1 for a
  // quantized side B that passes); -1 none.
  int compared_step = -1;
  CompareReport step_report;
  std::string culprit_node, culprit_op;  // the first introduced node, "" when none
  int culprit_layer = -1;                // from the node's module path, -1 unknown
  std::vector<LayerError> layer_errors;  // the largest introduced error first
  std::vector<std::string> notes;
  double seconds = 0;
  bool passed() const { return born_step < 0; }
};

Expected<GenerateReport> CompareGeneration(const GenerateRequest& request);

// A prompt's token ids from an integer .npy of shape [n] or [1, n]; fails naming the file and
// what it holds instead.
Expected<std::vector<int64_t>> ReadPromptIds(const std::string& path);

// The layer number in a node or tensor name from a module path ("/model/layers.2/attn/MatMul",
// "transformer.h.11.mlp"): the first number that follows "word." and is followed by '.' or '/';
// -1 when none (counters such as "Constant_12" are not layers).
int LayerFromName(const std::string& name);

}  // namespace onnxprobe
