// Per-node isolation around the comparison's frontier.
#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <unordered_map>

#include "localize/repro.h"
#include "onnxprobe/graph.h"
#include "onnxprobe/localize.h"

namespace onnxprobe {
namespace {

struct Plan {
  int row;
  std::vector<int> nodes;                 // topo indices in the graph of B
  std::vector<std::string> boundary;      // tensors fed from side A (B names)
  std::vector<std::string> graph_inputs;  // tensors fed from the shared inputs
  std::string error;
};

// The candidate's node plus the nodes only side B has between it and tensors side A provides.
Plan MakePlan(const Model& g, const TensorResult& row, int row_index,
              const std::unordered_map<std::string, std::string>& b_to_a, const std::set<std::string>& a_names,
              size_t max_nodes) {
  Plan p;
  p.row = row_index;
  const GraphIndex& idx = g.index();
  const TensorEntry* t = idx.Find(row.name_b);
  if (t == nullptr || t->producer < 0) {
    p.error = "the model of side B has no node producing '" + row.name_b + "'";
    return p;
  }
  std::set<std::string> inputs;
  for (const auto& v : g.summary().inputs) inputs.insert(v.name);
  std::set<int> nodes{t->producer};
  std::deque<int> queue{t->producer};
  std::set<std::string> boundary, graph_inputs;
  while (!queue.empty()) {
    const NodeInfo& n = idx.nodes()[queue.front()];
    queue.pop_front();
    std::vector<std::string> reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (const auto& x : reads) {
      if (x.empty()) continue;
      const TensorEntry* e = idx.Find(x);
      if (e == nullptr) continue;  // resolved by the runtime (e.g. inside a body)
      if (e->kind == TensorKind::kInitializer) continue;  // embedded from side B's model
      if (e->kind == TensorKind::kGraphInput) {
        graph_inputs.insert(x);
        continue;
      }
      auto m = b_to_a.find(x);
      const std::string& in_a = m == b_to_a.end() ? x : m->second;
      if (a_names.count(in_a)) {
        boundary.insert(x);
      } else if (e->producer >= 0 && !nodes.count(e->producer)) {
        if (nodes.size() >= max_nodes) {
          p.error = "more than " + std::to_string(max_nodes) + " nodes between '" + row.name_b +
                    "' and tensors side A provides";
          return p;
        }
        nodes.insert(e->producer);
        queue.push_back(e->producer);
      }
    }
  }
  p.nodes.assign(nodes.begin(), nodes.end());
  p.boundary.assign(boundary.begin(), boundary.end());
  p.graph_inputs.assign(graph_inputs.begin(), graph_inputs.end());
  return p;
}

// For a consumer reading `x` through a chain of nodes only in B (e.g. an inserted Cast pair),
// the side A tensor at the start of that chain: single-input steps back until a boundary tensor.
std::string ChainStart(const Model& g, const std::string& x, const std::set<std::string>& boundary,
                       const std::set<int>& b_only) {
  const GraphIndex& idx = g.index();
  std::string cur = x;
  for (int steps = 0; steps < 16; ++steps) {
    if (boundary.count(cur)) return cur;
    const TensorEntry* e = idx.Find(cur);
    if (e == nullptr || e->producer < 0 || !b_only.count(e->producer)) return "";
    std::string next;
    int activations = 0;
    for (const auto& in : idx.nodes()[e->producer].inputs) {
      const TensorEntry* ie = idx.Find(in);
      if (in.empty() || ie == nullptr || ie->kind == TensorKind::kInitializer) continue;
      next = in;
      ++activations;
    }
    if (activations != 1) return "";
    cur = next;
  }
  return "";
}

}  // namespace

Status Localize(Side& a, Side& b, const std::vector<NamedTensor>& inputs, const CompareJob& job,
                const LocalizeOptions& options, ComparisonResult* r) {
  auto t0 = std::chrono::steady_clock::now();
  r->localized = true;
  const Model* g = b.model();
  if (g == nullptr) {
    r->localize_note = "side B is a dump: isolation needs side B's model and runtime";
    return Status::Ok();
  }
  std::vector<int> rows;
  for (size_t i = 0; i < r->rows.size(); ++i) {
    const TensorResult& t = r->rows[i];
    bool take = options.candidates == Candidates::kAll ||
                (options.candidates == Candidates::kFailing && !t.pass) ||
                (options.candidates == Candidates::kFrontier && t.role == Role::kIntroduced);
    if (take && t.reason.rfind("not compared", 0) != 0) rows.push_back(static_cast<int>(i));
  }
  if (rows.empty()) {
    r->localize_note = "no candidate to isolate";
    return Status::Ok();
  }
  std::unordered_map<std::string, std::string> b_to_a;
  for (const auto& [x, y] : job.rename) b_to_a[y] = x;
  std::set<std::string> a_names;
  for (const auto& t : a.tensors()) a_names.insert(t.name);

  std::vector<Plan> plans;
  std::set<std::string> fetch;  // side A names
  for (int i : rows) {
    plans.push_back(MakePlan(*g, r->rows[i], i, b_to_a, a_names, options.max_subgraph_nodes));
    if (!plans.back().error.empty()) continue;
    fetch.insert(r->rows[i].name);
    for (const auto& x : plans.back().boundary) {
      auto m = b_to_a.find(x);
      fetch.insert(m == b_to_a.end() ? x : m->second);
    }
  }
  std::unordered_map<std::string, Tensor> from_a;
  if (!fetch.empty()) {
    std::vector<std::string> names(fetch.begin(), fetch.end());
    auto got = a.Fetch(names);
    if (!got.ok()) {
      r->localize_note = "side A could not provide the candidates' inputs: " + got.status().message();
      return Status::Ok();
    }
    for (auto& o : *got) from_a[o.name] = std::move(o.tensor);
  }
  std::unordered_map<std::string, const Tensor*> shared;
  for (const auto& nt : inputs) shared[nt.name] = &nt.tensor;

  for (const Plan& p : plans) {
    TensorResult& row = r->rows[p.row];
    Culprit c;
    c.row = p.row;
    c.tensor = row.name;
    c.node = row.node;
    c.op_type = row.op_type;
    c.accumulated_max_rel = row.metrics.max_rel;
    c.error = p.error;
    const GraphIndex& idx = g->index();
    for (int k : p.nodes) {
      const NodeInfo& n = idx.nodes()[k];
      c.nodes.push_back(n.name.empty() ? n.op_type + "#" + std::to_string(k) : n.name);
      bool in_a = false;
      for (const auto& o : n.outputs) {
        auto m = b_to_a.find(o);
        in_a = in_a || a_names.count(m == b_to_a.end() ? o : m->second);
      }
      if (!in_a) c.nodes_only_in_b.push_back(c.nodes.back());
    }
    if (c.error.empty()) {
      SubgraphSpec spec;
      spec.nodes = p.nodes;
      std::vector<std::pair<std::string, const Tensor*>> feed;
      for (const auto& x : p.boundary) {
        auto m = b_to_a.find(x);
        auto it = from_a.find(m == b_to_a.end() ? x : m->second);
        if (it == from_a.end() || it->second.empty()) {
          c.error = "side A did not provide '" + x + "'";
          break;
        }
        const Tensor& t = it->second;
        spec.inputs.push_back(x);
        spec.input_types.emplace_back(t.dtype(), t.shape());
        feed.emplace_back(x, &t);
      }
      for (const auto& x : p.graph_inputs) {
        if (!c.error.empty()) break;
        auto it = shared.find(x);
        if (it == shared.end()) {
          c.error = "graph input '" + x + "' is not among the shared inputs";
          break;
        }
        spec.inputs.push_back(x);
        spec.input_types.emplace_back(it->second->dtype(), it->second->shape());
        feed.emplace_back(x, it->second);
      }
      static const Tensor kNone;
      auto e = from_a.find(row.name);
      const Tensor& expected = e == from_a.end() ? kNone : e->second;
      if (c.error.empty() && expected.empty()) c.error = "side A did not provide '" + row.name + "'";
      spec.outputs = {row.name_b};
      spec.output_types = {{expected.dtype(), expected.shape()}};
      Expected<std::string> bytes = c.error.empty() ? ExtractSubgraph(*g, spec) : Expected<std::string>(Status());
      if (!c.error.empty()) {
      } else if (!bytes.ok()) {
        c.error = bytes.status().message();
      } else {
        auto out = b.RunOther(*bytes, g->dir(), feed, spec.outputs);
        ++r->isolation_runs;
        if (!out.ok()) {
          c.error = out.status().message();
        } else {
          CompareOptions k = job.kernel;
          c.metrics = CompareTensors(expected, (*out)[0].tensor, row.tolerance, job.policy.rel_eps, k);
          c.isolated = true;
          c.introduced = !Judge(c.metrics, row.tolerance, job.policy.judge, &c.reason);
          if (c.introduced && !c.nodes_only_in_b.empty()) {
            // Does the candidate's own node still fail once the nodes only in B are bypassed
            // (fed side A's tensor where B reads their output)? If not, they are the culprit.
            const TensorEntry* te = g->index().Find(row.name_b);
            const NodeInfo& node = g->index().nodes()[te->producer];
            std::set<std::string> boundary(p.boundary.begin(), p.boundary.end());
            std::set<int> b_only;
            for (int k : p.nodes) {
              if (k != te->producer) b_only.insert(k);
            }
            SubgraphSpec alone;
            alone.nodes = {te->producer};
            std::vector<std::pair<std::string, const Tensor*>> feed2;
            bool ok = true;
            for (const auto& x : node.inputs) {
              if (x.empty() || std::find(alone.inputs.begin(), alone.inputs.end(), x) != alone.inputs.end()) continue;
              const TensorEntry* xe = g->index().Find(x);
              if (xe == nullptr || xe->kind == TensorKind::kInitializer) continue;
              std::string src = xe->kind == TensorKind::kGraphInput ? x : ChainStart(*g, x, boundary, b_only);
              const Tensor* t = nullptr;
              if (xe->kind == TensorKind::kGraphInput) {
                auto it = shared.find(x);
                t = it == shared.end() ? nullptr : it->second;
              } else if (!src.empty()) {
                auto m = b_to_a.find(src);
                auto it = from_a.find(m == b_to_a.end() ? src : m->second);
                t = it == from_a.end() ? nullptr : &it->second;
              }
              if (t == nullptr) {
                ok = false;
                break;
              }
              alone.inputs.push_back(x);
              alone.input_types.emplace_back(t->dtype(), t->shape());
              feed2.emplace_back(x, t);
            }
            alone.outputs = spec.outputs;
            alone.output_types = spec.output_types;
            auto bytes2 = ok ? ExtractSubgraph(*g, alone) : Expected<std::string>(Status(ErrorCode::kUnsupported, ""));
            auto out2 = bytes2.ok() ? b.RunOther(*bytes2, g->dir(), feed2, alone.outputs)
                                    : Expected<std::vector<RunOutput>>(bytes2.status());
            if (bytes2.ok()) ++r->isolation_runs;
            std::string why;
            if (out2.ok() &&
                Judge(CompareTensors(expected, (*out2)[0].tensor, row.tolerance, job.policy.rel_eps, job.kernel),
                      row.tolerance, job.policy.judge, &why)) {
              // the node is fine on its own: the error comes from the nodes only in B
              const NodeInfo* first = nullptr;
              for (int k : p.nodes) {
                if (b_only.count(k)) {
                  first = &g->index().nodes()[k];
                  break;
                }
              }
              if (first != nullptr) {
                c.reason = "nodes only in B (" + first->name + ", ...) introduce it; " + node.name +
                           " alone matches the reference: " + c.reason;
                c.node = first->name;
                c.op_type = first->op_type;
              }
            }
          }
          if (!options.repro_dir.empty() && r->repro_dir.empty() && c.introduced) {
            ReproBundle bundle{*bytes, feed, {{row.name_b, &expected}}, {{row.name_b, &(*out)[0].tensor}}};
            Status st = WriteReproBundle(options.repro_dir, bundle, c, b, *r);
            if (st.ok()) r->repro_dir = options.repro_dir;
            else r->localize_note = "repro bundle not written: " + st.message();
          }
        }
      }
    }
    if (c.isolated && !row.pass) row.role = c.introduced ? Role::kIntroduced : Role::kInherited;
    r->culprits.push_back(std::move(c));
  }
  // introduced first, then by isolated error; failures to isolate last
  std::stable_sort(r->culprits.begin(), r->culprits.end(), [](const Culprit& x, const Culprit& y) {
    if (x.introduced != y.introduced) return x.introduced;
    if (x.isolated != y.isolated) return x.isolated;
    return x.metrics.max_rel > y.metrics.max_rel;
  });
  if (!options.repro_dir.empty() && r->repro_dir.empty() && r->localize_note.empty()) {
    r->localize_note = "no isolated node reproduces the error: no repro bundle written";
  }
  r->frontier.clear();
  for (size_t i = 0; i < r->rows.size(); ++i) {
    if (r->rows[i].role == Role::kIntroduced) r->frontier.push_back(static_cast<int>(i));
  }
  r->localize_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

}  // namespace onnxprobe
