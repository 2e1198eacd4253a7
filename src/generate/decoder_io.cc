// Which inputs and outputs of a decoder are token ids, mask, positions, cache and logits.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "onnxprobe/generate/generate.h"

namespace onnxprobe {
namespace {

// Lower-case words and numbers of a name ("past_key_values.0.key" -> past key values 0 key;
// "past0" -> past 0).
std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u)) {
      flush();
      continue;
    }
    if (!cur.empty() &&
        (std::isdigit(u) != 0) != (std::isdigit(static_cast<unsigned char>(cur.back())) != 0))
      flush();
    cur.push_back(static_cast<char>(std::tolower(u)));
  }
  flush();
  return out;
}

bool Has(const std::vector<std::string>& w, const std::string& word) {
  return std::find(w.begin(), w.end(), word) != w.end();
}
bool Contains(const std::string& name, const std::string& part) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find(part) != std::string::npos;
}

bool IsInteger(int elem_type) {
  return elem_type == 6 || elem_type == 7;  // int32, int64
}
bool IsFloatType(int elem_type) {
  return elem_type == 1 || elem_type == 10 || elem_type == 16 || elem_type == 11;
}

// A cache tensor's name read as (layer, kind, the rest of its words): past and present of one
// slot agree on all three.
struct CacheKey {
  int layer = -1;
  char kind = 'c';
  std::string rest;
  bool operator<(const CacheKey& o) const {
    return std::tie(layer, kind, rest) < std::tie(o.layer, o.kind, o.rest);
  }
};

CacheKey ReadCacheName(const std::string& name) {
  static const std::set<std::string> kCacheWords = {"past", "present", "pkv",   "cache",
                                                    "kv",   "keys",    "values"};
  std::vector<std::string> w = Words(name);
  CacheKey key;
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i];
    if (std::isdigit(static_cast<unsigned char>(t[0]))) {
      if (key.layer < 0) key.layer = std::atoi(t.c_str());
      continue;
    }
    // "key_values" is the cache's name, not its kind
    if (t == "key" && i + 1 < w.size() && (w[i + 1] == "values" || w[i + 1] == "value") &&
        !(i + 2 >= w.size() && w[i + 1] == "value")) {
      ++i;
      continue;
    }
    if (t == "key" || t == "k") {
      key.kind = 'k';
    } else if (t == "value" || t == "v") {
      key.kind = 'v';
    } else if (!kCacheWords.count(t)) {
      key.rest += t + ".";
    }
  }
  return key;
}

// The axis a cache tensor grows along: its symbolic dimension other than the batch's, preferring
// one whose name says sequence/length; else the usual layout's ([batch, heads, seq, head_dim],
// or [2, batch, heads, seq, head_dim] for a key and value in one tensor).
int SeqAxis(const ValueInfo* v, char kind) {
  size_t rank = v != nullptr && v->has_shape ? v->dims.size() : 4;
  int batch_axis = (kind == 'c' && rank == 5) ? 1 : 0;
  int fallback = static_cast<int>(rank) - 2;
  if (v == nullptr || !v->has_shape) return fallback;
  std::vector<int> open;
  for (size_t i = 0; i < v->dims.size(); ++i) {
    if (static_cast<int>(i) == batch_axis || v->dims[i].value >= 0) continue;
    const std::string& p = v->dims[i].param;
    if (Contains(p, "seq") || Contains(p, "len") || Contains(p, "past") || Contains(p, "total"))
      return static_cast<int>(i);
    open.push_back(static_cast<int>(i));
  }
  return open.size() == 1 ? open[0] : fallback;
}

}  // namespace

int LayerFromName(const std::string& name) {
  // a number standing alone between separators, after a word: "layers.2/", "h.11."
  size_t i = 0;
  while (i < name.size()) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    // an index into a module list ("layers.2", "h.11"), not a counter ("Constant_12")
    bool before =
        i >= 2 && name[i - 1] == '.' && std::isalpha(static_cast<unsigned char>(name[i - 2]));
    bool after = j < name.size() && (name[j] == '.' || name[j] == '/');
    if (before && after) return std::atoi(name.substr(i, j - i).c_str());
    i = j;
  }
  return -1;
}

Expected<DecoderIo> DiscoverDecoderIo(const Model& model, const DecoderIoHints& hints) {
  const ModelSummary& s = model.summary();
  const std::string& path = model.path();
  DecoderIo io;
  std::map<std::string, std::string> past_to_present;
  std::set<std::string> inputs, outputs;
  for (const auto& v : s.inputs) inputs.insert(v.name);
  for (const auto& v : s.outputs) outputs.insert(v.name);
  for (const auto& [role, name] : hints) {
    std::string* slot = role == "input_ids"        ? &io.input_ids
                        : role == "attention_mask" ? &io.attention_mask
                        : role == "position_ids"   ? &io.position_ids
                        : role == "logits"         ? &io.logits
                                                   : nullptr;
    if (slot != nullptr) {
      bool is_output = role == "logits";
      if (!(is_output ? outputs : inputs).count(name)) {
        return InvalidArgument(path + ": --io " + role + "=" + name + ": the model has no " +
                               (is_output ? "output" : "input") + " named '" + name + "'");
      }
      *slot = name;
    } else {
      if (!inputs.count(role) || !outputs.count(name)) {
        return InvalidArgument(path + ": --io " + role + "=" + name +
                               ": expected PAST=PRESENT naming a model input and output (or "
                               "input_ids|attention_mask|position_ids|logits=NAME)");
      }
      past_to_present[role] = name;
    }
  }

  std::set<std::string> hinted;
  for (const auto& h : hints) hinted.insert(h.second);
  for (const auto& [p, q] : past_to_present) hinted.insert(p);
  std::vector<const ValueInfo*> pasts;
  for (const auto& v : s.inputs) {
    if (hinted.count(v.name)) continue;
    std::vector<std::string> w = Words(v.name);
    bool cache = Has(w, "past") || Has(w, "pkv") || Contains(v.name, "past");
    if (cache && IsFloatType(v.elem_type)) {
      pasts.push_back(&v);
    } else if (Contains(v.name, "position") && io.position_ids.empty()) {
      io.position_ids = v.name;
    } else if (Contains(v.name, "mask") && io.attention_mask.empty()) {
      io.attention_mask = v.name;
    } else if (IsInteger(v.elem_type) && io.input_ids.empty() &&
               (Contains(v.name, "ids") || Has(w, "tokens") || Has(w, "input"))) {
      io.input_ids = v.name;
    } else {
      return InvalidArgument(path + ": input '" + v.name + "' (" + ValueInfoTypeString(v) +
                             ") is none of token ids, attention mask, position ids or past "
                             "cache; map it with --io ROLE=" +
                             v.name + " or use a decoder without it");
    }
  }
  if (io.input_ids.empty()) {
    return InvalidArgument(path +
                           ": no token ids input found (an integer input named *input_ids*); "
                           "give it with --io input_ids=NAME");
  }
  // presents by (layer, kind, rest), then each past finds its own
  std::map<CacheKey, std::vector<std::string>> presents;
  for (const auto& v : s.outputs) {
    std::vector<std::string> w = Words(v.name);
    if (Has(w, "present") || Contains(v.name, "present"))
      presents[ReadCacheName(v.name)].push_back(v.name);
  }
  for (const ValueInfo* p : pasts) {
    CacheKey key = ReadCacheName(p->name);
    auto it = presents.find(key);
    if (key.layer < 0 || it == presents.end() || it->second.size() != 1) {
      return InvalidArgument(
          path + ": past input '" + p->name +
          "' has no single present output of the same layer and kind (" +
          (it == presents.end() ? std::string("none") : std::to_string(it->second.size())) +
          " found); map it with --io " + p->name + "=PRESENT");
    }
    past_to_present[p->name] = it->second.front();
  }
  if (past_to_present.empty()) {
    return InvalidArgument(path +
                           ": no past key/value inputs found (inputs named *past*...): generate "
                           "needs a decoder exported with its cache");
  }
  std::set<std::string> used_outputs;
  for (const auto& [past, present] : past_to_present) {
    CacheSlot slot;
    slot.past = past;
    slot.present = present;
    CacheKey key = ReadCacheName(past);
    slot.layer = key.layer;
    slot.kind = key.kind;
    const ValueInfo* pv = model.FindValueInfo(past);
    slot.seq_axis = SeqAxis(pv, key.kind);
    if (pv != nullptr && pv->has_shape &&
        (slot.seq_axis < 0 || slot.seq_axis >= static_cast<int>(pv->dims.size()))) {
      return InvalidArgument(path + ": past input '" + past + "' (" + ValueInfoTypeString(*pv) +
                             ") has no axis a cache could grow along");
    }
    io.cache.push_back(slot);
    used_outputs.insert(present);
  }
  std::sort(io.cache.begin(), io.cache.end(), [](const CacheSlot& x, const CacheSlot& y) {
    return std::tie(x.layer, x.kind, x.past) < std::tie(y.layer, y.kind, y.past);
  });
  if (io.cache.front().layer < 0) {
    // hinted names without a layer number: in the order given
    for (size_t i = 0; i < io.cache.size(); ++i) io.cache[i].layer = static_cast<int>(i);
  }
  std::set<int> layers;
  for (const auto& c : io.cache) layers.insert(c.layer);
  io.layers = static_cast<int>(layers.size());

  if (io.logits.empty()) {
    std::vector<std::string> candidates;
    for (const auto& v : s.outputs) {
      if (used_outputs.count(v.name)) continue;
      if (Contains(v.name, "logits")) {
        candidates = {v.name};
        break;
      }
      if (IsFloatType(v.elem_type) || v.elem_type == 0) candidates.push_back(v.name);
    }
    if (candidates.size() != 1) {
      return InvalidArgument(path + ": cannot tell the logits output (" +
                             std::to_string(candidates.size()) +
                             " candidates besides the cache); give it with --io logits=NAME");
    }
    io.logits = candidates.front();
  }
  return io;
}

}  // namespace onnxprobe
