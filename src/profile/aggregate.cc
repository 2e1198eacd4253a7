// AggregateTrace: per-node medians over the measured runs of a profiler trace, groupings and
// totals.
#include <algorithm>
#include <map>

#include "profile/ort_trace.h"

namespace onnxprobe {
namespace {

// Per node: its time in each measured run (0 in a run where it did not run).
struct NodeRuns {
  NodeProfile profile;
  std::vector<double> per_run;
  std::vector<int> calls;
};

std::vector<TimeGroup> Group(const std::vector<NodeProfile>& nodes, double total,
                             const std::string NodeProfile::*key) {
  std::map<std::string, TimeGroup> groups;
  for (const NodeProfile& n : nodes) {
    TimeGroup& g = groups[n.*key];
    g.name = n.*key;
    ++g.nodes;
    g.total_us += n.median_us;
  }
  std::vector<TimeGroup> out;
  for (auto& [name, g] : groups) {
    g.share = total > 0 ? g.total_us / total : 0;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimeGroup& a, const TimeGroup& b) { return a.total_us > b.total_us; });
  return out;
}

}  // namespace

Status AggregateTrace(const std::vector<TraceRun>& runs, int warmup,
                      const std::vector<std::string>& model_nodes, ProfileReport* report) {
  if (static_cast<int>(runs.size()) <= warmup) {
    return Corrupt("the profiler's trace records " + std::to_string(runs.size()) +
                   " runs, no more than the " + std::to_string(warmup) + " warm-up runs");
  }
  size_t measured = runs.size() - warmup;
  std::vector<NodeRuns> nodes;
  std::map<std::string, size_t> index;  // node name -> position in `nodes`
  std::vector<double> run_us, kernel_us;
  for (size_t r = 0; r < measured; ++r) {
    const TraceRun& run = runs[warmup + r];
    run_us.push_back(run.dur_us);
    kernel_us.push_back(0);
    for (const KernelEvent& k : run.kernels) {
      kernel_us.back() += k.dur_us;
      auto [it, fresh] = index.emplace(k.node, nodes.size());
      if (fresh) {
        NodeRuns n;
        n.profile.node = k.node;
        n.profile.op_type = k.op_type;
        n.profile.provider = k.provider;
        n.per_run.assign(measured, 0.0);
        n.calls.assign(measured, 0);
        nodes.push_back(std::move(n));
      }
      NodeRuns& n = nodes[it->second];
      n.per_run[r] += k.dur_us;
      ++n.calls[r];
    }
  }
  std::map<std::string, int> topo;
  for (size_t i = 0; i < model_nodes.size(); ++i) topo.emplace(model_nodes[i], static_cast<int>(i));
  for (NodeRuns& n : nodes) {
    NodeProfile& p = n.profile;
    auto t = topo.find(p.node);
    p.topo_index = t == topo.end() ? -1 : t->second;
    p.median_us = Median(n.per_run);
    p.min_us = *std::min_element(n.per_run.begin(), n.per_run.end());
    p.max_us = *std::max_element(n.per_run.begin(), n.per_run.end());
    p.calls = *std::max_element(n.calls.begin(), n.calls.end());
    report->nodes_total_us += p.median_us;
    report->nodes.push_back(p);
  }
  for (NodeProfile& p : report->nodes) {
    p.share = report->nodes_total_us > 0 ? p.median_us / report->nodes_total_us : 0;
  }
  report->by_op_type = Group(report->nodes, report->nodes_total_us, &NodeProfile::op_type);
  report->by_provider = Group(report->nodes, report->nodes_total_us, &NodeProfile::provider);
  report->run_median_us = Median(run_us);
  report->kernels_run_median_us = Median(kernel_us);
  for (const std::string& n : model_nodes) {
    if (!index.count(n)) report->not_run.push_back(n);
  }
  return Status::Ok();
}

}  // namespace onnxprobe
