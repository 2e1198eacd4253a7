// ParseOrtTrace: kernel events of ONNX Runtime's profiler grouped by the run they belong to.
#include "profile/ort_trace.h"

#include <algorithm>

#include "onnxprobe/json_value.h"

namespace onnxprobe {
namespace {

const std::string* StringField(const JsonValue& o, const char* key) {
  const JsonValue* v = o.Find(key);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

bool NumberField(const JsonValue& o, const char* key, double* out) {
  const JsonValue* v = o.Find(key);
  if (v == nullptr || !v->is_number()) return false;
  *out = v->as_number();
  return true;
}

}  // namespace

Expected<std::vector<TraceRun>> ParseOrtTrace(const std::string& text, const std::string& what) {
  OP_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, what));
  if (!doc.is_array()) return Corrupt(what + ": not a trace-event array");
  std::vector<TraceRun> runs;
  std::vector<KernelEvent> kernels;
  for (const JsonValue& e : doc.items()) {
    if (!e.is_object()) continue;
    const std::string* cat = StringField(e, "cat");
    const std::string* name = StringField(e, "name");
    double ts = 0, dur = 0;
    if (cat == nullptr || name == nullptr || !NumberField(e, "ts", &ts) ||
        !NumberField(e, "dur", &dur)) {
      continue;
    }
    if (*cat == "Session" && *name == "model_run") {
      runs.push_back({ts, dur, {}});
      continue;
    }
    if (*cat != "Node") continue;
    const JsonValue* args = e.Find("args");
    if (args == nullptr) continue;
    const std::string* provider = StringField(*args, "provider");
    const std::string* op = StringField(*args, "op_name");
    if (provider == nullptr || op == nullptr) continue;  // fence events carry no provider
    static const std::string kSuffix = "_kernel_time";
    std::string node = *name;
    if (node.size() >= kSuffix.size() &&
        node.compare(node.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
      node.resize(node.size() - kSuffix.size());
    }
    kernels.push_back({node, *op, *provider, ts, dur});
  }
  if (runs.empty()) return Corrupt(what + ": no model_run event (the trace records no run)");
  std::sort(runs.begin(), runs.end(),
            [](const TraceRun& a, const TraceRun& b) { return a.ts_us < b.ts_us; });
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const KernelEvent& a, const KernelEvent& b) { return a.ts_us < b.ts_us; });
  // each kernel belongs to the last run that started at or before it
  for (KernelEvent& k : kernels) {
    auto it = std::upper_bound(runs.begin(), runs.end(), k.ts_us,
                               [](double ts, const TraceRun& r) { return ts < r.ts_us; });
    if (it == runs.begin()) continue;  // before any run (cannot happen in a well-formed trace)
    (it - 1)->kernels.push_back(std::move(k));
  }
  return runs;
}

}  // namespace onnxprobe
