// Google Model Explorer node data: per-node error overlaid on the graph. The file maps a graph
// id to {"results": {node id: {"value": v}}, "thresholds": [...]}; the ONNX adapter
// (model-explorer-onnx) uses the graph's name as its id ("<main>" when unnamed) and node names
// as node ids.
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <map>

#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"
#include "report/sinks.h"

namespace onnxprobe {
namespace {

// Colors by error / allowed error: bit-exact, well within, near the limit, beyond it.
struct Band {
  double upto;
  const char* color;
};
constexpr Band kBands[] = {
    {0.0, "#e8f5e9"}, {0.5, "#a5d6a7"}, {1.0, "#fff59d"}, {DBL_MAX, "#ef9a9a"}};
// A node where an error is introduced stands out from those that inherit it.
constexpr const char* kIntroducedColor = "#e53935";

class ModelExplorerReporter : public Reporter {
 public:
  std::string Render(const CompareReport& report) const override {
    // per node: the largest error / allowed error over its compared outputs
    std::map<std::string, std::pair<double, bool>> nodes;  // value, introduced
    for (const TensorResult& row : report.comparison.rows) {
      if (row.state != RowState::kCompared || row.node.empty()) continue;
      // NaN/Inf where the other side is finite: beyond any tolerance (JSON has no infinity)
      double v = std::isfinite(row.tolerance_ratio) ? row.tolerance_ratio : DBL_MAX;
      auto [it, fresh] = nodes.emplace(row.node, std::make_pair(v, false));
      if (!fresh) it->second.first = std::max(it->second.first, v);
      it->second.second |= row.role == Role::kIntroduced;
    }
    JsonWriter j;
    j.BeginObject().Key(report.graph_name.empty() ? "<main>" : report.graph_name).BeginObject();
    j.Key("results").BeginObject();
    for (const auto& [node, v] : nodes) {
      j.Key(node).BeginObject().Key("value").Number(v.first);
      if (v.second) j.Key("bgColor").String(kIntroducedColor);
      j.EndObject();
    }
    j.EndObject().Key("thresholds").BeginArray();
    for (const Band& b : kBands) {
      j.BeginObject().Key("value").Number(b.upto).Key("bgColor").String(b.color).EndObject();
    }
    j.EndArray().EndObject().EndObject();
    return j.str() + "\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeModelExplorerReporter() {
  return std::make_unique<ModelExplorerReporter>();
}

namespace {

// {"<graph id>": {"results": ...: the shape of a Model Explorer node data file.
bool IsModelExplorerNodeData(const std::string& text) {
  size_t pos = 0;
  auto skip = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  auto take = [&](char c) {
    skip();
    if (pos >= text.size() || text[pos] != c) return false;
    ++pos;
    return true;
  };
  if (!take('{') || !take('"')) return false;
  while (pos < text.size() && text[pos] != '"') pos += text[pos] == '\\' ? 2 : 1;
  ++pos;
  skip();
  return take(':') && take('{') && (skip(), text.compare(pos, 9, "\"results\"") == 0);
}

}  // namespace

ReportSink ModelExplorerSink() {
  ReportSink k;
  k.format = "model-explorer";
  k.flag = "--model-explorer";
  k.help = "per-node error / allowed error as Google Model Explorer node data (JSON)";
  k.label = "Model Explorer node data";
  k.artifact.name = "Model Explorer node data file";
  k.artifact.ours = [](const std::string& path, bool is_dir) {
    return !is_dir && IsModelExplorerNodeData(FileHead(path, 4096));
  };
  k.render = [](const CompareReport& r, const RenderContext&) {
    return MakeModelExplorerReporter()->Render(r);
  };
  return k;
}

}  // namespace onnxprobe
