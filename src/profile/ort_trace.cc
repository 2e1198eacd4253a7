// ParseOrtTrace: kernel events of ONNX Runtime's profiler grouped by the run they belong to.
// The trace is read one event at a time, never as one document tree: a long profile of a large
// model holds hundreds of thousands of events.
#include "profile/ort_trace.h"

#include <algorithm>
#include <functional>

#include "onnxprobe/common/json_value.h"

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

// Calls `each` with the text and offset of every top-level element of a JSON array.
Status ForEachElement(const std::string& text, const std::string& what,
                      const std::function<Status(const std::string&, size_t)>& each) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || text[i] != '[') return Corrupt(what + ": not a trace-event array");
  int depth = 0;
  bool in_string = false;
  size_t start = 0;
  for (++i; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth++ == 0) start = i;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return c == ']' ? Status::Ok() : Corrupt(what + ": unbalanced '}'");
      if (--depth == 0) OP_RETURN_IF_ERROR(each(text.substr(start, i + 1 - start), start));
    }
  }
  return Corrupt(what + ": the trace-event array is not closed (truncated trace)");
}

// One event: a run ("model_run"), a kernel (a "Node" event naming its provider), or neither.
void AddEvent(const JsonValue& e, std::vector<TraceRun>* runs, std::vector<KernelEvent>* kernels) {
  if (!e.is_object()) return;
  const std::string* cat = StringField(e, "cat");
  const std::string* name = StringField(e, "name");
  double ts = 0, dur = 0;
  if (cat == nullptr || name == nullptr || !NumberField(e, "ts", &ts) ||
      !NumberField(e, "dur", &dur)) {
    return;
  }
  if (*cat == "Session" && *name == "model_run") {
    runs->push_back({ts, dur, {}});
    return;
  }
  if (*cat != "Node") return;
  const JsonValue* args = e.Find("args");
  if (args == nullptr) return;
  const std::string* provider = StringField(*args, "provider");
  const std::string* op = StringField(*args, "op_name");
  if (provider == nullptr || op == nullptr) return;  // fence events carry no provider
  static const std::string kSuffix = "_kernel_time";
  std::string node = *name;
  if (node.size() >= kSuffix.size() &&
      node.compare(node.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    node.resize(node.size() - kSuffix.size());
  }
  kernels->push_back({node, *op, *provider, ts, dur});
}

}  // namespace

Expected<std::vector<TraceRun>> ParseOrtTrace(const std::string& text, const std::string& what) {
  std::vector<TraceRun> runs;
  std::vector<KernelEvent> kernels;
  OP_RETURN_IF_ERROR(ForEachElement(text, what, [&](const std::string& item, size_t at) -> Status {
    OP_ASSIGN_OR_RETURN(JsonValue e,
                        ParseJson(item, what + " (event at byte " + std::to_string(at) + ")"));
    AddEvent(e, &runs, &kernels);
    return Status::Ok();
  }));
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
