// A saved generation replayed as a side: generation.json plus each step's logits and the cache
// positions it added (steps/NNNNN.npz), written by onnxprobe_torch.capture_generation.
#include <cmath>
#include <filesystem>
#include <set>

#include "common/file_util.h"
#include "decoder_session.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "onnxprobe-generation";

struct SavedStep {
  std::string file, capture;  // relative to the folder; capture "" when none
};

class SavedGeneration : public DecoderSide {
 public:
  const DecoderIo& io() const override { return io_; }
  std::string Describe() const override {
    return "saved run " + path_ + (runtime_.empty() ? "" : " (" + runtime_ + ")");
  }
  Expected<DecoderCache> EmptyCache() const override {
    DecoderCache c;
    for (size_t i = 0; i < empty_.size(); ++i) {
      OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtypes_[i], empty_[i]));
      c.tensors.push_back(std::move(t));
    }
    return c;
  }
  Expected<std::vector<NamedTensor>> StepInputs(const std::vector<int64_t>&,
                                                const DecoderCache&) const override {
    return Unsupported(label_ + " (" + path_ + ") is a saved run: it is not run again");
  }
  Expected<DecoderStep> Step(const std::vector<int64_t>& tokens, DecoderCache* cache) override {
    size_t k = next_++;
    if (k >= steps_.size()) {
      return InvalidArgument(label_ + " (" + path_ + "): the saved run has " +
                             std::to_string(steps_.size()) + " steps (give --steps " +
                             std::to_string(steps_.size()) + " or fewer)");
    }
    std::vector<int64_t> expected = k == 0 ? prompt_ : std::vector<int64_t>{tokens_[k - 1]};
    if (tokens != expected) {
      return InvalidArgument(label_ + " (" + path_ +
                             "): a saved run replays its own tokens, but "
                             "step " +
                             std::to_string(k + 1) +
                             " was fed other ones (a saved run can be side A only)");
    }
    std::string file = (fs::path(path_) / steps_[k].file).string();
    OP_ASSIGN_OR_RETURN(auto arrays, ReadNpz(file));
    DecoderStep out;
    std::vector<Tensor> added(io_.cache.size());
    bool have_logits = false;
    for (auto& [name, t] : arrays) {
      if (name == io_.logits) {
        OP_ASSIGN_OR_RETURN(Tensor f, AsFloat32(t));
        if (f.shape().empty() || f.num_elements() == 0) {
          return InvalidArgument(file + ": logits '" + name + "' are empty");
        }
        int64_t vocab = f.shape().back();
        OP_ASSIGN_OR_RETURN(out.logits, SliceLast(f, vocab));
        have_logits = true;
        continue;
      }
      for (size_t i = 0; i < io_.cache.size(); ++i) {
        if (io_.cache[i].present == name) added[i] = t;
      }
    }
    if (!have_logits) return InvalidArgument(file + ": no array '" + io_.logits + "'");
    int64_t grown = cache->length + static_cast<int64_t>(tokens.size());
    for (size_t i = 0; i < added.size(); ++i) {
      const CacheSlot& slot = io_.cache[i];
      if (added[i].empty()) return InvalidArgument(file + ": no array '" + slot.present + "'");
      auto joined = ConcatAxis(cache->tensors[i], added[i], slot.seq_axis);
      if (!joined.ok()) return joined.status().WithContext(file + ": '" + slot.present + "'");
      if (joined->shape()[slot.seq_axis] != grown) {
        return InvalidArgument(file + ": '" + slot.present + "' adds " +
                               std::to_string(added[i].shape()[slot.seq_axis]) +
                               " positions, expected " + std::to_string(tokens.size()));
      }
      out.present.push_back(*joined);
    }
    cache->tensors = out.present;
    cache->length = grown;
    return out;
  }
  const std::vector<int64_t>* saved_prompt() const override { return &prompt_; }
  const std::vector<int64_t>* saved_tokens() const override { return &tokens_; }
  std::string StepCapture(int step) const override {
    if (step < 1 || static_cast<size_t>(step) > steps_.size()) return "";
    const std::string& c = steps_[static_cast<size_t>(step - 1)].capture;
    return c.empty() ? "" : (fs::path(path_) / c).string();
  }

  static Expected<Tensor> SliceLast(const Tensor& f, int64_t n) {
    OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DType::kFloat32, Shape{n}));
    const float* src = f.data_as<float>() + (f.num_elements() - static_cast<uint64_t>(n));
    std::copy(src, src + n, out.data_as<float>());
    return out;
  }

  std::string path_, label_, runtime_;
  DecoderIo io_;
  std::vector<int64_t> prompt_, tokens_;
  std::vector<Shape> empty_;
  std::vector<DType> dtypes_;
  std::vector<SavedStep> steps_;
  size_t next_ = 0;
};

// A path inside the folder: relative, no "..".
bool Inside(const std::string& rel) {
  fs::path p(rel);
  if (rel.empty() || p.is_absolute()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

Expected<std::vector<int64_t>> Ints(const JsonValue& doc, const std::string& key,
                                    const std::string& what) {
  const JsonValue* v = doc.Find(key);
  if (v == nullptr || !v->is_array()) return Corrupt(what + ": \"" + key + "\" is not a list");
  std::vector<int64_t> out;
  for (const auto& x : v->items()) {
    if (!x.is_number() || x.as_number() < 0) {
      return Corrupt(what + ": \"" + key + "\" holds something other than token ids");
    }
    out.push_back(static_cast<int64_t>(x.as_number()));
  }
  return out;
}

}  // namespace

bool IsSavedGeneration(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "generation.json", ec);
}

Expected<std::unique_ptr<DecoderSide>> OpenSavedGeneration(const std::string& path,
                                                           const std::string& label) {
  std::string what = (fs::path(path) / "generation.json").string();
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(what, 64 << 20));
  OP_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, what));
  const JsonValue* format = doc.Find("format");
  if (format == nullptr || !format->is_string() || format->as_string() != kFormat) {
    return Corrupt(what + ": not an onnxprobe generation (\"format\": \"" + kFormat + "\")");
  }
  const JsonValue* version = doc.Find("format_version");
  if (version == nullptr || !version->is_number() || version->as_number() != 1) {
    return Corrupt(what + ": format_version 1 expected");
  }
  auto g = std::make_unique<SavedGeneration>();
  g->path_ = path;
  g->label_ = label;
  if (const JsonValue* rt = doc.Find("runtime"); rt != nullptr && rt->is_string())
    g->runtime_ = rt->as_string();
  OP_ASSIGN_OR_RETURN(g->prompt_, Ints(doc, "prompt", what));
  OP_ASSIGN_OR_RETURN(g->tokens_, Ints(doc, "tokens", what));
  if (g->prompt_.empty()) return Corrupt(what + ": the prompt is empty");
  const JsonValue* logits = doc.Find("logits");
  if (logits == nullptr || !logits->is_string()) return Corrupt(what + ": no \"logits\" name");
  g->io_.logits = logits->as_string();
  const JsonValue* cache = doc.Find("cache");
  if (cache == nullptr || !cache->is_array() || cache->items().empty())
    return Corrupt(what + ": \"cache\" is not a non-empty list");
  std::set<int> layers;
  for (const auto& c : cache->items()) {
    const JsonValue *name = c.Find("name"), *layer = c.Find("layer"), *kind = c.Find("kind"),
                    *axis = c.Find("seq_axis"), *shape = c.Find("empty_shape"),
                    *dtype = c.Find("dtype");
    if (name == nullptr || !name->is_string() || layer == nullptr || !layer->is_number() ||
        kind == nullptr || !kind->is_string() || axis == nullptr || !axis->is_number() ||
        shape == nullptr || !shape->is_array() || dtype == nullptr || !dtype->is_string()) {
      return Corrupt(what +
                     ": a cache entry lacks name, layer, kind, seq_axis, empty_shape or "
                     "dtype");
    }
    CacheSlot slot;
    slot.present = name->as_string();
    const JsonValue* past = c.Find("past");
    slot.past = past != nullptr && past->is_string() ? past->as_string() : slot.present;
    double layer_number = layer->as_number();
    if (!(layer_number >= 0 && layer_number <= 65535) || layer_number != std::floor(layer_number))
      return Corrupt(what + ": '" + slot.present + "': layer must be a whole number 0..65535");
    slot.layer = static_cast<int>(layer_number);
    const std::string& k = kind->as_string();
    slot.kind = k == "key" ? 'k' : k == "value" ? 'v' : 'c';
    Shape s;
    for (const auto& d : shape->items()) {
      if (!d.is_number() || d.as_number() < 0 || d.as_number() > 1e12)
        return Corrupt(what + ": bad empty_shape");
      s.push_back(static_cast<int64_t>(d.as_number()));
    }
    double axis_number = axis->as_number();
    slot.seq_axis = axis_number >= 0 && axis_number < static_cast<double>(s.size())
                        ? static_cast<int>(axis_number)
                        : -1;
    if (slot.seq_axis < 0 || s[slot.seq_axis] != 0)
      return Corrupt(what + ": '" + slot.present + "': empty_shape must be 0 along seq_axis");
    auto dt = DTypeFromName(dtype->as_string());
    if (!dt.ok()) return dt.status().WithContext(what);
    g->io_.cache.push_back(slot);
    g->empty_.push_back(s);
    g->dtypes_.push_back(*dt);
    layers.insert(slot.layer);
  }
  g->io_.layers = static_cast<int>(layers.size());
  const JsonValue* steps = doc.Find("steps");
  if (steps == nullptr || !steps->is_array()) return Corrupt(what + ": \"steps\" is not a list");
  for (const auto& s : steps->items()) {
    const JsonValue *file = s.Find("file"), *capture = s.Find("capture");
    if (file == nullptr || !file->is_string() || !Inside(file->as_string()))
      return Corrupt(what + ": a step's \"file\" is not a path inside the folder");
    SavedStep st{file->as_string(), ""};
    if (capture != nullptr && capture->is_string()) {
      if (!Inside(capture->as_string()))
        return Corrupt(what + ": a step's \"capture\" is not a path inside the folder");
      st.capture = capture->as_string();
    }
    g->steps_.push_back(st);
  }
  if (g->steps_.size() != g->tokens_.size()) {
    return Corrupt(what + ": " + std::to_string(g->steps_.size()) + " steps but " +
                   std::to_string(g->tokens_.size()) + " tokens");
  }
  return std::unique_ptr<DecoderSide>(std::move(g));
}

}  // namespace onnxprobe
