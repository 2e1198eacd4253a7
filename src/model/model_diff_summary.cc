// SummarizeModelDiff (model_diff.h): a ModelDiff in one line, for the reports of the layers
// above (a comparison of two model files states what differs statically).
#include <string>
#include <vector>

#include "onnxprobe/common/format.h"
#include "onnxprobe/model/model_diff.h"

namespace onnxprobe {
namespace {

std::string Or(const std::string& s, const char* absent) { return s.empty() ? absent : s; }

}  // namespace

std::string SummarizeModelDiff(const ModelDiff& d) {
  if (d.Identical()) return "identical graphs and weights";
  std::vector<std::string> parts;
  auto count = [&](size_t n, const char* what) {
    if (n > 0) parts.push_back(std::to_string(n) + " " + what);
  };
  count(d.CountNodes(DiffKind::kChanged), "changed");
  count(d.CountNodes(DiffKind::kAdded), "added");
  count(d.CountNodes(DiffKind::kRemoved), "removed");
  count(d.CountNodes(DiffKind::kRenamed), "renamed");
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "nodes: ") + parts[i];
  parts.clear();
  count(d.CountInitializers(DiffKind::kChanged), "changed");
  count(d.CountInitializers(DiffKind::kAdded), "added");
  count(d.CountInitializers(DiffKind::kRemoved), "removed");
  count(d.CountInitializers(DiffKind::kRenamed), "renamed");
  double max_diff = -1;
  for (const auto& i : d.initializers) {
    if (i.compared && i.max_abs_diff > max_diff) max_diff = i.max_abs_diff;
  }
  if (!parts.empty()) {
    s += s.empty() ? "" : "; ";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "initializers: ") + parts[i];
    if (max_diff >= 0) s += " (max |a-b| " + StringPrintf("%g", max_diff) + ")";
  }
  // one line: metadata keys (a graph tool writes a dozen, some kilobytes long) are counted, and
  // each value shown is clipped
  auto clip = [](const std::string& v) { return v.size() > 60 ? v.substr(0, 57) + "..." : v; };
  std::vector<std::string> metadata;
  for (const FieldChange& f : d.fields) {
    if (f.field.rfind("metadata ", 0) == 0) {
      metadata.push_back(f.field.substr(9));
      continue;
    }
    s += s.empty() ? "" : "; ";
    s += f.field + " " + clip(Or(f.a, "(none)")) + " -> " + clip(Or(f.b, "(none)"));
  }
  if (!metadata.empty()) {
    s += (s.empty() ? "" : "; ") + std::to_string(metadata.size()) + " metadata " +
         (metadata.size() == 1 ? "key differs (" : "keys differ (") + clip(metadata[0]) +
         (metadata.size() > 1 ? ", ..." : "") + ")";
  }
  return s;
}

}  // namespace onnxprobe
