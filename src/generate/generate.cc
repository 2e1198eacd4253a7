// Two decoders generating from one prompt: free-running and teacher-forced, per-step judging,
// the born step compared tensor by tensor.
#include "onnxprobe/generate/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "decoder_session.h"
#include "generation_writer.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

std::string OpOf(const Model& m, const std::string& tensor) {
  const TensorEntry* e = m.index().Find(tensor);
  if (e == nullptr || e->producer < 0) return "";
  return m.index().nodes()[static_cast<size_t>(e->producer)].op_type;
}

int64_t Argmax(const Tensor& logits) {
  const float* p = logits.data_as<float>();
  int64_t best = 0;
  for (uint64_t i = 1; i < logits.num_elements(); ++i) {
    if (p[i] > p[best]) best = static_cast<int64_t>(i);
  }
  return best;
}

std::vector<int64_t> TopK(const Tensor& logits, int k) {
  std::vector<int64_t> idx(logits.num_elements());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  const float* p = logits.data_as<float>();
  size_t kk = std::min(idx.size(), static_cast<size_t>(k));
  auto value = [p](int64_t i) { return std::isnan(p[i]) ? -INFINITY : p[i]; };  // a strict order
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk), idx.end(),
                    [&value](int64_t x, int64_t y) {
                      float vx = value(x), vy = value(y);
                      return vx > vy || (vx == vy && x < y);
                    });
  idx.resize(kk);
  return idx;
}

// KL(softmax a || softmax b) in nats.
double KlDivergence(const Tensor& a, const Tensor& b) {
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  uint64_t n = a.num_elements();
  double ma = -INFINITY, mb = -INFINITY;
  for (uint64_t i = 0; i < n; ++i) {
    ma = std::max(ma, static_cast<double>(pa[i]));
    mb = std::max(mb, static_cast<double>(pb[i]));
  }
  double za = 0, zb = 0;
  for (uint64_t i = 0; i < n; ++i) {
    za += std::exp(pa[i] - ma);
    zb += std::exp(pb[i] - mb);
  }
  double lza = std::log(za) + ma, lzb = std::log(zb) + mb, kl = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double la = pa[i] - lza, lb = pb[i] - lzb;
    kl += std::exp(la) * (la - lb);
  }
  return std::isnan(kl) ? kl : std::max(0.0, kl);  // NaN logits: no figure (null in JSON)
}

double Margin(const Tensor& logits) {
  std::vector<int64_t> top = TopK(logits, 2);
  if (top.size() < 2) return INFINITY;
  const float* p = logits.data_as<float>();
  return static_cast<double>(p[top[0]]) - p[top[1]];
}

// Pairs side B's cache slots with side A's by (layer, kind).
Expected<std::vector<size_t>> PairCache(const DecoderIo& a, const DecoderIo& b) {
  std::map<std::pair<int, char>, size_t> in_b;
  for (size_t i = 0; i < b.cache.size(); ++i) {
    if (!in_b.emplace(std::make_pair(b.cache[i].layer, b.cache[i].kind), i).second) {
      return InvalidArgument("side B has two cache tensors for layer " +
                             std::to_string(b.cache[i].layer) + " and the same kind ('" +
                             b.cache[i].past + "'); map them with --b-io PAST=PRESENT");
    }
  }
  std::vector<size_t> pair;
  std::set<size_t> used;
  for (const auto& s : a.cache) {
    auto it = in_b.find({s.layer, s.kind});
    if (it == in_b.end() || a.cache.size() != b.cache.size() || !used.insert(it->second).second) {
      return InvalidArgument("the sides' caches differ: side A has " +
                             std::to_string(a.cache.size()) + " cache tensors over " +
                             std::to_string(a.layers) + " layers, side B " +
                             std::to_string(b.cache.size()) + " over " + std::to_string(b.layers) +
                             " (no match for side A's '" + s.past + "')");
    }
    pair.push_back(it->second);
  }
  return pair;
}

// How `m` is quantized: "qdq", "qoperator", "mixed" (quant/), "weight-only: MatMulNBits" (ONNX
// Runtime's contrib ops that hold block-quantized weights and compute in float), or "".
std::string QuantKind(const Model& m) {
  QuantFormat f = DetectQuantFormat(m);
  if (f != QuantFormat::kNone) return QuantFormatName(f);
  static const std::set<std::string> kWeightOnly = {"MatMulNBits", "GatherBlockQuantized",
                                                    "MatMulBnb4", "MatMulFpQ4"};
  for (const auto& n : m.index().nodes()) {
    if (kWeightOnly.count(n.op_type)) return "weight-only: " + n.op_type;
  }
  return "";
}

// How a pair is judged: JudgeRow, or the quantization-aware rule for a quantized side B.
using PairJudge = std::function<void(const Tensor&, const Tensor&, TensorResult*)>;

// Judges the positions [from, to) of side A's and B's present tensors; per position, the
// largest absolute difference.
Expected<CacheRow> JudgeCache(const CacheSlot& sa, const CacheSlot& sb, const Tensor& a,
                              const Tensor& b, int64_t from, int64_t to, const CompareJob& job,
                              const std::string& op, const PairJudge& judge) {
  CacheRow c;
  c.layer = sa.layer;
  c.kind = sa.kind;
  OP_ASSIGN_OR_RETURN(Tensor na, SliceAxis(a, sa.seq_axis, from, to));
  OP_ASSIGN_OR_RETURN(Tensor nb, SliceAxis(b, sb.seq_axis, from, to));
  OP_ASSIGN_OR_RETURN(na, AsFloat32(na));
  OP_ASSIGN_OR_RETURN(nb, AsFloat32(nb));
  c.row.name = sa.present;
  c.row.name_b = sb.present;
  c.row.op_type = op;
  c.row.tolerance = job.policy.For(sa.present, op);
  judge(na, nb, &c.row);
  for (int64_t p = from; p < to; ++p) {
    OP_ASSIGN_OR_RETURN(Tensor pa, SliceAxis(na, sa.seq_axis, p - from, p - from + 1));
    OP_ASSIGN_OR_RETURN(Tensor pb, SliceAxis(nb, sb.seq_axis, p - from, p - from + 1));
    double m = 0;
    const float* x = pa.data_as<float>();
    const float* y = pb.data_as<float>();
    for (uint64_t i = 0; i < pa.num_elements() && i < pb.num_elements(); ++i) {
      double d = std::fabs(static_cast<double>(x[i]) - y[i]);
      m = std::isnan(d) ? INFINITY : std::max(m, d);
    }
    c.position_max_abs.push_back(m);
  }
  return c;
}

std::vector<int64_t> RandomPrompt(const GenerateRequest& req, int64_t vocab) {
  std::mt19937_64 rng(req.seed);
  std::uniform_int_distribution<int64_t> dist(0, vocab - 1);
  std::vector<int64_t> p(static_cast<size_t>(req.prompt_length));
  for (auto& t : p) t = dist(rng);
  return p;
}

// The error each layer introduces at the compared step: a quantized side B's layers by their
// isolated SQNR (quant/), else the rows whose role is introduced; the largest first.
void LayerErrors(GenerateReport* r) {
  std::map<int, LayerError> by_layer;
  const QuantReport& q = r->step_report.quant;
  if (q.active()) {
    for (const auto& l : q.layers) {
      if (!l.isolated) continue;
      int layer = LayerFromName(l.node_a);
      LayerError& e = by_layer[layer];
      e.layer = layer;
      ++e.introduced_rows;
      double ratio = std::isinf(l.sqnr_db) && l.sqnr_db > 0
                         ? 0
                         : std::pow(10.0, (q.min_sqnr_db - l.sqnr_db) / 20.0);
      if (ratio > e.worst_ratio || e.worst_node.empty()) {
        e.worst_ratio = ratio;
        e.worst_node = l.node_a;
        e.worst_op = l.op_type;
        e.sqnr_db = l.sqnr_db;
      }
    }
  } else if (r->quant_min_sqnr_db > 0) {
    // a quantized B that compare pairs by name (weight-only quantization): each isolated node's
    // own SQNR, judged by the same rule as the steps
    for (const auto& cu : r->step_report.localization.culprits) {
      if (!cu.isolated || !cu.error.empty()) continue;
      int layer = LayerFromName(cu.node);
      LayerError& e = by_layer[layer];
      e.layer = layer;
      ++e.introduced_rows;
      double snr = cu.metrics.snr_db;
      double ratio =
          std::isinf(snr) && snr > 0 ? 0 : std::pow(10.0, (r->quant_min_sqnr_db - snr) / 20.0);
      if (ratio > e.worst_ratio || e.worst_node.empty()) {
        e.worst_ratio = ratio;
        e.worst_node = cu.node;
        e.worst_op = cu.op_type;
        e.sqnr_db = snr;
      }
    }
  } else {
    for (const auto& row : r->step_report.comparison.rows) {
      if (row.role != Role::kIntroduced) continue;
      int layer = LayerFromName(row.node);
      LayerError& e = by_layer[layer];
      e.layer = layer;
      ++e.introduced_rows;
      if (row.tolerance_ratio > e.worst_ratio || e.worst_node.empty()) {
        e.worst_ratio = row.tolerance_ratio;
        e.worst_node = row.node;
        e.worst_op = row.op_type;
      }
    }
  }
  for (auto& [layer, e] : by_layer) r->layer_errors.push_back(e);
  std::stable_sort(
      r->layer_errors.begin(), r->layer_errors.end(),
      [](const LayerError& x, const LayerError& y) { return x.worst_ratio > y.worst_ratio; });
}

// Step `step` compared tensor by tensor: both sides fed side A's inputs of that step (its
// tokens and its exact cache), localized as `compare` localizes. The born step; or, for a
// quantized side B that passes, step 1 for its per-layer figures.
void LocalizeStep(const GenerateRequest& req, const DecoderSide& a, const DecoderSide& b, int step,
                  std::vector<NamedTensor> inputs, GenerateReport* r) {
  const std::string which = step == r->born_step ? "the born step" : "step " + std::to_string(step);
  std::string capture;
  if (a.model() == nullptr) {
    capture = a.StepCapture(step);
    if (capture.empty()) {
      r->notes.push_back(which +
                         " was not compared tensor by tensor: the saved run holds no module "
                         "activations for step " +
                         std::to_string(step) +
                         " (a PyTorch run saves them for its first capture_steps steps; with the "
                         "model side A was saved from run live, the node is named)");
      return;
    }
  }
  for (const auto& in : inputs) {
    const ValueInfo* vb = nullptr;
    for (const auto& v : b.model()->summary().inputs) {
      if (v.name == in.name) vb = &v;
    }
    if (vb == nullptr) {
      r->notes.push_back(which + " was not compared tensor by tensor: side B has no input '" +
                         in.name + "' (the sides' inputs are named differently)");
      return;
    }
  }
  CompareRequest c;
  if (capture.empty()) {
    c.a.path = req.a.path;
    c.a.session = req.a.session;
    c.a.ort_library = req.a.ort_library;
    c.a.session_given = true;
    c.inputs.tensors = std::move(inputs);
    c.inputs_given = true;
  } else {
    c.a.path = capture;  // PyTorch's module activations of that step, with its inputs
  }
  c.b.path = req.b.path;
  c.b.session = req.b.session;
  c.b.ort_library = req.b.ort_library;
  c.b.session_given = true;
  c.job = req.job;
  c.quant = req.quant;
  c.quant.isolate = req.localize;
  c.localize = req.localize;
  c.localize_options = req.localize_options;
  auto report = Compare(c);
  if (!report.ok()) {
    r->notes.push_back(which +
                       " could not be compared tensor by tensor: " + report.status().message());
    return;
  }
  r->step_report = std::move(*report);
  r->compared_step = step;
  LayerErrors(r);
  if (step != r->born_step) return;
  r->localized = true;
  // where the error is born: the introduced node earliest in the graph (culprits come largest
  // error first; the layer table below keeps that order)
  const Culprit* first = nullptr;
  for (const auto& cu : r->step_report.localization.culprits) {
    if (cu.introduced && (first == nullptr || cu.row < first->row)) first = &cu;
  }
  if (first != nullptr) {
    r->culprit_node = first->node;
    r->culprit_op = first->op_type;
  }
  if (r->culprit_node.empty() && !r->step_report.comparison.frontier.empty()) {
    const auto& row =
        r->step_report.comparison.rows[static_cast<size_t>(r->step_report.comparison.frontier[0])];
    r->culprit_node = row.node;
    r->culprit_op = row.op_type;
  }
  if (!r->culprit_node.empty()) r->culprit_layer = LayerFromName(r->culprit_node);
  if (r->step_report.passed()) {
    r->notes.push_back(
        r->born_step == 1
            ? "step 1 compared tensor by tensor passes on every tensor it pairs, though the "
              "step's logits or cache fail: no node to name"
            : "with side A's exact cache step " + std::to_string(r->born_step) +
                  " passes on every tensor: its error grew from differences below tolerance "
                  "that side B's own cache carried from earlier steps");
  }
}

}  // namespace

Expected<GenerateReport> CompareGeneration(const GenerateRequest& req) {
  auto t0 = std::chrono::steady_clock::now();
  if (req.steps < 1) return InvalidArgument("--steps must be at least 1");
  if (req.top_k < 1) return InvalidArgument("--top-k must be at least 1");
  OP_RETURN_IF_ERROR(req.job.policy.Validate());
  OP_ASSIGN_OR_RETURN(auto a, OpenDecoderSide(req.a, "side A"));
  OP_ASSIGN_OR_RETURN(auto b, OpenDecoderSide(req.b, "side B"));
  if (b->model() == nullptr) {
    return InvalidArgument("side B (" + req.b.path +
                           ") is a saved run: it cannot be fed side A's tokens; give it as side "
                           "A, the reference");
  }
  if (a->saved_tokens() != nullptr) {
    if (!req.prompt.empty() && req.prompt != *a->saved_prompt()) {
      return InvalidArgument("side A (" + req.a.path +
                             ") is a saved run with its own prompt; the prompt given differs");
    }
    if (static_cast<size_t>(req.steps) > a->saved_tokens()->size()) {
      return InvalidArgument("side A (" + req.a.path + ") holds " +
                             std::to_string(a->saved_tokens()->size()) + " steps; --steps " +
                             std::to_string(req.steps) + " asks for more");
    }
  }
  const Model& live = a->model() != nullptr ? *a->model() : *b->model();
  OP_ASSIGN_OR_RETURN(std::vector<size_t> pair, PairCache(a->io(), b->io()));

  GenerateReport r;
  r.model_a = req.a.path;
  r.model_b = req.b.path;
  r.describe_a = a->Describe();
  r.describe_b = b->Describe();
  r.io_a = a->io();
  r.io_b = b->io();
  r.policy = req.job.policy;
  r.top_k = req.top_k;
  r.seed = req.seed;
  r.prompt = a->saved_prompt() != nullptr ? *a->saved_prompt() : req.prompt;
  OP_ASSIGN_OR_RETURN(DecoderCache cache_a, a->EmptyCache());
  OP_ASSIGN_OR_RETURN(DecoderCache cache_b, b->EmptyCache());
  for (size_t i = 0; i < pair.size(); ++i) {
    const Shape& sa = cache_a.tensors[i].shape();
    const Shape& sb = cache_b.tensors[pair[i]].shape();
    if (sa != sb) {
      return InvalidArgument("the sides' caches differ: '" + a->io().cache[i].past + "' is " +
                             ShapeToString(sa) + " on side A, '" + b->io().cache[pair[i]].past +
                             "' is " + ShapeToString(sb) +
                             " on side B (with no positions yet): not two versions of one model");
    }
  }
  if (r.prompt.empty()) {
    if (req.prompt_length < 1) return InvalidArgument("--prompt-length must be at least 1");
    // the vocabulary from a first run of side A on token 0
    DecoderCache probe = cache_a;
    OP_ASSIGN_OR_RETURN(DecoderStep s, a->Step({0}, &probe));
    r.prompt = RandomPrompt(req, static_cast<int64_t>(s.logits.num_elements()));
    r.prompt_generated = true;
  }
  const ValueInfo* lv = live.FindValueInfo(a->model() != nullptr ? a->io().logits : b->io().logits);
  if (lv != nullptr && lv->has_shape && !lv->dims.empty() && lv->dims.back().value > 0) {
    if (req.pad_left > 0 && (req.pad_id < 0 || req.pad_id >= lv->dims.back().value)) {
      return InvalidArgument("--pad-id " + std::to_string(req.pad_id) +
                             " is outside the vocabulary of " +
                             std::to_string(lv->dims.back().value) + " tokens");
    }
    for (size_t i = 0; i < r.prompt.size(); ++i) {
      if (r.prompt[i] >= lv->dims.back().value) {
        return InvalidArgument("prompt token " + std::to_string(r.prompt[i]) + " at position " +
                               std::to_string(i) + " is outside the vocabulary of " +
                               std::to_string(lv->dims.back().value) + " tokens");
      }
    }
  }
  std::string quant_kind = QuantKind(*b->model());
  bool quantized = req.quant.mode == QuantMode::kAuto && !quant_kind.empty() &&
                   (a->model() == nullptr || QuantKind(*a->model()).empty());
  PairJudge judge = [&req](const Tensor& x, const Tensor& y, TensorResult* row) {
    JudgeRow(x, y, req.job.policy, req.job.kernel, row);
  };
  if (quantized) {
    r.quant_min_sqnr_db = req.quant.min_sqnr_db;
    judge = [&req](const Tensor& x, const Tensor& y, TensorResult* row) {
      JudgeQuantizedPair(x, y, req.job.policy, req.job.kernel, req.quant.min_sqnr_db, row);
    };
    r.notes.push_back("side B is quantized (" + quant_kind +
                      "): each step's logits and cache are judged by SQNR >= " +
                      FormatNumber(req.quant.min_sqnr_db) +
                      " dB, the quantization rule of compare (--quant off: by the tolerances)");
  }
  const std::string op_logits = OpOf(*b->model(), b->io().logits);
  std::vector<std::string> op_cache;
  for (size_t i = 0; i < pair.size(); ++i)
    op_cache.push_back(OpOf(*b->model(), b->io().cache[pair[i]].present));

  if (req.pad_left < 0) return InvalidArgument("--pad-left must be 0 or more");
  if (req.pad_left > 0) {
    if (a->model() == nullptr) {
      return InvalidArgument("--pad-left does nothing for side A (" + req.a.path +
                             "), a saved run: its prompt is replayed as saved");
    }
    if (a->io().attention_mask.empty() || b->io().attention_mask.empty()) {
      return InvalidArgument("--pad-left needs an attention mask input, which side " +
                             std::string(a->io().attention_mask.empty() ? "A" : "B") +
                             " does not have");
    }
    a->SetPadding(req.pad_left);
    b->SetPadding(req.pad_left);
  }
  if (req.job.max_memory > 0) {
    // what the caches hold at the last step: side A's, side B's teacher-forced, and B's own from
    // where its tokens parted (the born step's tensor-by-tensor comparison has the same budget)
    uint64_t per_position = 0;
    for (const auto* c : {&cache_a, &cache_b}) {
      for (const auto& t : c->tensors) {
        uint64_t n = DTypeSize(t.dtype());
        for (size_t i = 0; i < t.shape().size(); ++i) n *= t.shape()[i] > 0 ? t.shape()[i] : 1;
        per_position += n;
      }
    }
    per_position += per_position / 2;  // side B's second cache
    uint64_t positions =
        static_cast<uint64_t>(req.pad_left) + r.prompt.size() + static_cast<uint64_t>(req.steps);
    if (per_position * positions > req.job.max_memory) {
      return InvalidArgument("--max-memory " + FormatBytes(req.job.max_memory) +
                             ": the caches of " + std::to_string(positions) + " positions take " +
                             FormatBytes(per_position * positions) + " (" +
                             FormatBytes(per_position) +
                             " per position); give fewer --steps or "
                             "a larger budget");
    }
  }
  std::unique_ptr<GenerationWriter> save;
  if (!req.save_a.empty()) {
    if (a->model() == nullptr)
      return InvalidArgument("--save-a does nothing: side A (" + req.a.path + ") is saved already");
    if (req.pad_left > 0)
      return InvalidArgument("--save-a and --pad-left: a saved run replays an unpadded prompt");
    OP_ASSIGN_OR_RETURN(save, GenerationWriter::Open(req.save_a));
  }
  const std::vector<Tensor> empty_a = cache_a.tensors;
  // side A's tokens: both sides' input (teacher forcing); the padding first
  std::vector<int64_t> feed(static_cast<size_t>(req.pad_left), req.pad_id);
  feed.insert(feed.end(), r.prompt.begin(), r.prompt.end());
  r.pad_left = req.pad_left;
  std::vector<NamedTensor> born_inputs, first_inputs;
  DecoderCache b_free;  // side B's own cache where its token first differs from A's
  int64_t b_free_token = -1;
  for (int step = 1; step <= req.steps; ++step) {
    int64_t from = cache_a.length;
    std::vector<NamedTensor> inputs_a;
    if (a->model() != nullptr) {
      OP_ASSIGN_OR_RETURN(inputs_a, a->StepInputs(feed, cache_a));
    }
    OP_ASSIGN_OR_RETURN(DecoderStep sa, a->Step(feed, &cache_a));
    if (req.on_step) req.on_step("A", step);
    if (save != nullptr) {
      std::vector<Tensor> added;
      for (size_t i = 0; i < sa.present.size(); ++i) {
        OP_ASSIGN_OR_RETURN(
            Tensor t, SliceAxis(sa.present[i], a->io().cache[i].seq_axis, from, cache_a.length));
        added.push_back(std::move(t));
      }
      OP_RETURN_IF_ERROR(save->AddStep(sa.logits, a->io(), added));
    }
    OP_ASSIGN_OR_RETURN(DecoderStep sb, b->Step(feed, &cache_b));
    if (req.on_step) req.on_step("B teacher-forced", step);
    GenerateStep g;
    g.step = step;
    // a saved run follows the tokens it saved (its own argmax, NaN handling included)
    g.token_a = a->saved_tokens() != nullptr ? (*a->saved_tokens())[static_cast<size_t>(step - 1)]
                                             : Argmax(sa.logits);
    g.token_b = Argmax(sb.logits);
    if (sa.logits.num_elements() != sb.logits.num_elements()) {
      return InvalidArgument("the sides' vocabularies differ: side A's logits have " +
                             std::to_string(sa.logits.num_elements()) + " entries, side B's " +
                             std::to_string(sb.logits.num_elements()));
    }
    g.logits.name = a->io().logits;
    g.logits.name_b = b->io().logits;
    g.logits.op_type = op_logits;
    g.logits.tolerance = req.job.policy.For(g.logits.name, op_logits);
    judge(sa.logits, sb.logits, &g.logits);
    g.kl_divergence = KlDivergence(sa.logits, sb.logits);
    g.margin_a = Margin(sa.logits);
    std::vector<int64_t> ta = TopK(sa.logits, req.top_k), tb = TopK(sb.logits, req.top_k);
    size_t common = 0;
    for (int64_t t : ta) common += std::count(tb.begin(), tb.end(), t) > 0 ? 1 : 0;
    g.topk_agreement = static_cast<double>(common) / static_cast<double>(ta.size());
    g.pass = g.logits.pass;
    for (size_t i = 0; i < pair.size(); ++i) {
      const CacheSlot& sa_slot = a->io().cache[i];
      const CacheSlot& sb_slot = b->io().cache[pair[i]];
      OP_ASSIGN_OR_RETURN(CacheRow c,
                          JudgeCache(sa_slot, sb_slot, sa.present[i], sb.present[pair[i]], from,
                                     cache_a.length, req.job, op_cache[i], judge));
      if (!c.row.pass) {
        g.pass = false;
        if (g.first_failing_layer < 0 || c.layer < g.first_failing_layer)
          g.first_failing_layer = c.layer;
      }
      g.cache.push_back(std::move(c));
    }
    if (!g.pass && r.born_step < 0) {
      r.born_step = step;
      born_inputs = inputs_a;
    }
    if (step == 1 && quantized) first_inputs = std::move(inputs_a);
    if (g.token_a != g.token_b && r.first_divergent_step < 0) {
      r.first_divergent_step = step;
      b_free = cache_b;
      b_free_token = g.token_b;
      if (g.pass) {
        r.divergence_note = "the tokens part at step " + std::to_string(step) +
                            ", which passes its budget: side A's top-two margin there is " +
                            FormatNumber(g.margin_a) + " and the logits differ by up to " +
                            FormatNumber(g.logits.metrics.max_abs) +
                            " (a near-tie decided by differences within tolerance)";
      }
    }
    r.tokens_a.push_back(g.token_a);
    if (r.first_divergent_step < 0) r.tokens_b.push_back(g.token_b);
    feed = {g.token_a};
    r.steps.push_back(std::move(g));
  }
  if (r.first_divergent_step > 0) {
    // side B on its own from where it parted
    r.tokens_b.push_back(b_free_token);
    std::vector<int64_t> next{b_free_token};
    for (int step = r.first_divergent_step + 1; step <= req.steps; ++step) {
      OP_ASSIGN_OR_RETURN(DecoderStep s, b->Step(next, &b_free));
      if (req.on_step) req.on_step("B free", step);
      next = {Argmax(s.logits)};
      r.tokens_b.push_back(next[0]);
    }
  }
  if (save != nullptr) {
    OP_RETURN_IF_ERROR(save->Finish(r.describe_a, a->io(), r.prompt, r.tokens_a, empty_a));
  }
  if (r.born_step > 0) {
    const GenerateStep& g = r.steps[static_cast<size_t>(r.born_step - 1)];
    r.born_layer = g.first_failing_layer;
    if (g.first_failing_layer >= 0) {
      for (const auto& c : g.cache) {
        if (c.layer == g.first_failing_layer && !c.row.pass) {
          r.born_where = "layer " + std::to_string(c.layer) + " (" + c.row.name + ")";
          break;
        }
      }
    } else {
      r.born_where = "logits (" + g.logits.name + "; every cache tensor passes)";
    }
    LocalizeStep(req, *a, *b, r.born_step, std::move(born_inputs), &r);
    if (r.culprit_layer >= 0 && r.culprit_layer != r.born_layer) {
      // the node's own layer: a fault in a query projection first shows in the next layer's cache
      r.born_where =
          "layer " + std::to_string(r.culprit_layer) + " (node " + r.culprit_node +
          (r.born_where.empty() ? ")" : "; the cache first fails at " + r.born_where + ")");
      r.born_layer = r.culprit_layer;
    }
  }
  if (r.born_step < 0 && quantized && req.localize) {
    // every step within the quantization rule: step 1 still says which layers lose the most
    LocalizeStep(req, *a, *b, 1, std::move(first_inputs), &r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Expected<std::vector<int64_t>> ReadPromptIds(const std::string& path) {
  OP_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
  const Shape& s = t.shape();
  bool shape_ok = (s.size() == 1 || (s.size() == 2 && s[0] == 1)) && t.num_elements() > 0;
  if (IsFloating(t.dtype()) || t.dtype() == DType::kBool || !shape_ok) {
    return InvalidArgument(path + ": a prompt is integer token ids of shape [n] or [1, n], got " +
                           DTypeName(t.dtype()) + ShapeToString(s));
  }
  std::vector<int64_t> ids;
  for (uint64_t i = 0; i < t.num_elements(); ++i) {
    double v = ElementAsDouble(t, i);
    if (v < 0) {
      return InvalidArgument(path + ": token id " + std::to_string(static_cast<int64_t>(v)) +
                             " at position " + std::to_string(i) + " is negative");
    }
    ids.push_back(static_cast<int64_t>(v));
  }
  return ids;
}

}  // namespace onnxprobe
