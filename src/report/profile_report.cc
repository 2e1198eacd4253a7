// Text and JSON renderings of a ProfileReport (schema "onnxprobe-profile", docs/profile.md).
#include "onnxprobe/report/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/profile/profile.h"

namespace onnxprobe {
namespace {

constexpr int kProfileSchemaVersion = 1;
constexpr const char* kMemorySource = "process resident set (/proc/self/status VmRSS, VmHWM)";
constexpr size_t kTopInJson = 10;

std::string Ms(double us) { return FormatMs(us / 1000.0); }
std::string Pct(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", share * 100);
  return b;
}
std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// Indices of nodes, slowest first (ties: run order).
std::vector<size_t> Slowest(const ProfileReport& r) {
  std::vector<size_t> order(r.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return r.nodes[a].median_us > r.nodes[b].median_us; });
  return order;
}

std::map<std::string, std::vector<const NodeProfile*>> Placement(const ProfileReport& r) {
  std::map<std::string, std::vector<const NodeProfile*>> p;
  for (const NodeProfile& n : r.nodes) p[n.provider].push_back(&n);
  return p;
}

void GroupsText(std::string* s, const char* title, const std::vector<TimeGroup>& groups) {
  size_t w = 12;
  for (const auto& g : groups) w = std::max(w, g.name.size());
  char head[64];
  std::snprintf(head, sizeof head, "  %5s  %-11s  %6s\n", "nodes", "total", "share");
  *s += std::string("\n") + title + "\n  " + Pad("", w) + head;
  for (const auto& g : groups) {
    char line[64];
    std::snprintf(line, sizeof line, "  %5zu  %-11s  %6s\n", g.nodes, Ms(g.total_us).c_str(),
                  Pct(g.share).c_str());
    *s += "  " + Pad(g.name, w) + line;
  }
}

}  // namespace

std::string RenderProfileText(const ProfileReport& r, size_t top) {
  const LatencyStats& l = r.latency;
  std::string s = "profile     " + r.model_path + " on " + r.runtime + ", " + r.session.provider +
                  ", optimizations " + OptLevelName(r.session.optimization_level) + "\n";
  s += "runs        " + std::to_string(l.runs) + " measured after " + std::to_string(l.warmup) +
       " warm-up: median " + FormatMs(l.median_ms) + " wall (min " + FormatMs(l.min_ms) + ", max " +
       FormatMs(l.max_ms) + "); runtime's own run " + Ms(r.run_median_us) + "; session creation " +
       FormatMs(l.session_ms) + "\n";
  s += "nodes       " + std::to_string(r.nodes.size()) + " ran: their medians sum to " +
       Ms(r.nodes_total_us) + "; all kernels of a run take " + Ms(r.kernels_run_median_us) +
       " (median)\n";
  if (r.memory.measured) {
    s += "memory      peak resident +" + FormatBytes(r.memory.delta()) + " over " +
         FormatBytes(r.memory.rss_before) + " before the session (" +
         (r.memory.reset ? "session creation and runs" : "peak since process start") + ")\n";
  } else {
    s += "memory      not measured (/proc/self/status unreadable)\n";
  }
  GroupsText(&s, "by op type", r.by_op_type);
  GroupsText(&s, "by provider", r.by_provider);
  size_t n = std::min(top, r.nodes.size());
  size_t w = 8;
  std::vector<size_t> order = Slowest(r);
  for (size_t i = 0; i < n; ++i) w = std::max(w, r.nodes[order[i]].node.size());
  w = std::min<size_t>(w, 60);
  char head[96];
  std::snprintf(head, sizeof head, "  %-11s  %6s  %5s  %s\n", "median", "share", "calls", "topo");
  s += "\ntop " + std::to_string(n) + " nodes\n  " + Pad("node", w) + "  " + Pad("op", 16) + head;
  for (size_t i = 0; i < n; ++i) {
    const NodeProfile& p = r.nodes[order[i]];
    char line[96];
    std::snprintf(line, sizeof line, "  %-11s  %6s  %5d  %s\n", Ms(p.median_us).c_str(),
                  Pct(p.share).c_str(), p.calls,
                  p.topo_index >= 0 ? std::to_string(p.topo_index).c_str() : "-");
    s += "  " + Pad(p.node, w) + "  " + Pad(p.op_type, 16) + line;
    if (!p.original_nodes.empty()) {
      std::string from;
      for (const auto& o : p.original_nodes) from += (from.empty() ? "" : " + ") + o;
      s += "    = " + from + "\n";
    }
  }
  s += "\nplacement\n";
  for (const auto& [provider, nodes] : Placement(r)) {
    s += "  " + provider + ": " + std::to_string(nodes.size()) + " node" +
         (nodes.size() == 1 ? "" : "s") + "\n";
  }
  if (!r.not_run.empty()) {
    s +=
        "\nnot in the trace (fused or folded by the runtime): " + std::to_string(r.not_run.size()) +
        " node" + (r.not_run.size() == 1 ? "" : "s") + "\n";
    for (const auto& name : r.not_run) s += "  " + name + "\n";
  }
  return s;
}

std::string RenderProfileJson(const ProfileReport& r) {
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-profile");
  j.Key("schema_version").Int(kProfileSchemaVersion);
  j.Key("model").String(r.model_path).Key("runtime").String(r.runtime);
  j.Key("runtime_version").String(r.runtime_version);
  j.Key("session").BeginObject().Key("provider").String(r.session.provider);
  j.Key("optimization_level").String(OptLevelName(r.session.optimization_level));
  j.Key("sequential").Bool(r.session.sequential);
  j.Key("intra_op_threads").Int(r.session.intra_op_threads).EndObject();
  const LatencyStats& l = r.latency;
  j.Key("latency_ms").BeginObject().Key("runs").Int(l.runs).Key("warmup").Int(l.warmup);
  j.Key("median").Number(l.median_ms).Key("min").Number(l.min_ms).Key("max").Number(l.max_ms);
  j.Key("session_creation").Number(l.session_ms).Key("each").BeginArray();
  for (double v : l.run_ms) j.Number(v);
  j.EndArray().EndObject();
  j.Key("run_median_us").Number(r.run_median_us);
  j.Key("kernels_run_median_us").Number(r.kernels_run_median_us);
  j.Key("nodes_total_us").Number(r.nodes_total_us);
  j.Key("memory").BeginObject().Key("measured").Bool(r.memory.measured);
  j.Key("source").String(kMemorySource).Key("peak_reset").Bool(r.memory.reset);
  j.Key("rss_before").UInt(r.memory.rss_before).Key("rss_peak").UInt(r.memory.rss_peak);
  j.Key("peak_delta").UInt(r.memory.delta()).EndObject();
  for (auto [key, groups, field] :
       {std::tuple<const char*, const std::vector<TimeGroup>*, const char*>{
            "by_op_type", &r.by_op_type, "op_type"},
        {"by_provider", &r.by_provider, "provider"}}) {
    j.Key(key).BeginArray();
    for (const TimeGroup& g : *groups) {
      j.BeginObject().Key(field).String(g.name).Key("nodes").UInt(g.nodes);
      j.Key("total_us").Number(g.total_us).Key("share").Number(g.share).EndObject();
    }
    j.EndArray();
  }
  j.Key("placement").BeginObject();
  for (const auto& [provider, nodes] : Placement(r)) {
    j.Key(provider).BeginArray();
    for (const NodeProfile* n : nodes) j.String(n->node);
    j.EndArray();
  }
  j.EndObject();
  j.Key("top_nodes").BeginArray();
  std::vector<size_t> order = Slowest(r);
  for (size_t i = 0; i < std::min(kTopInJson, order.size()); ++i) j.String(r.nodes[order[i]].node);
  j.EndArray();
  j.Key("nodes").BeginArray();
  for (const NodeProfile& n : r.nodes) {
    j.BeginObject().Key("name").String(n.node).Key("op_type").String(n.op_type);
    j.Key("provider").String(n.provider).Key("topo_index");
    if (n.topo_index >= 0) {
      j.Int(n.topo_index);
    } else {
      j.Null();
    }
    j.Key("original_nodes").BeginArray();
    for (const auto& o : n.original_nodes) j.String(o);
    j.EndArray();
    j.Key("calls").Int(n.calls).Key("median_us").Number(n.median_us);
    j.Key("min_us").Number(n.min_us).Key("max_us").Number(n.max_us);
    j.Key("share").Number(n.share).EndObject();
  }
  j.EndArray().Key("not_run").BeginArray();
  for (const auto& n : r.not_run) j.String(n);
  j.EndArray().EndObject();
  return j.str() + "\n";
}

}  // namespace onnxprobe
