#include "onnxprobe/comparison.h"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace onnxprobe {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kPass: return "pass";
    case Role::kIntroduced: return "introduced";
    case Role::kInherited: return "inherited";
  }
  return "?";
}

namespace {

struct Pair {
  const SideTensor* a;
  const SideTensor* b;
  bool topk = false;
};

Expected<std::vector<const SideTensor*>> Select(const std::vector<SideTensor>& all, const TensorSelection& sel) {
  std::vector<const SideTensor*> out;
  bool every = sel.names.empty() && sel.op_types.empty() && sel.regex.empty();
  std::regex re;
  if (!sel.regex.empty()) {
    try {
      re = std::regex(sel.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument("bad --regex '" + sel.regex + "': " + e.what());
    }
  }
  std::set<std::string> names(sel.names.begin(), sel.names.end()), ops(sel.op_types.begin(), sel.op_types.end());
  for (const auto& t : all) {
    if (every || names.count(t.name) || ops.count(t.op_type) || (!sel.regex.empty() && std::regex_search(t.name, re))) {
      out.push_back(&t);
      names.erase(t.name);
    }
  }
  if (!names.empty()) return NotFound("side A has no tensor '" + *names.begin() + "'");
  return out;
}

bool ClassificationLike(const SideTensor& a, const SideTensor* b, const Shape& shape) {
  bool output = a.is_graph_output || (b != nullptr && b->is_graph_output);
  return output && shape.size() >= 2 && shape.back() >= 2;
}

// Marks rows as introduced or inherited by propagating taint through the graph in topological
// order: a tensor is tainted when its row failed, or when it was not compared and its
// producer reads a tainted tensor.
void Localize(const Model& model, ComparisonResult* r) {
  const GraphIndex& g = model.index();
  std::unordered_map<std::string, int> row_of;
  for (size_t i = 0; i < r->rows.size(); ++i) row_of[r->rows[i].name] = static_cast<int>(i);
  std::unordered_set<std::string> tainted;
  for (const auto& node : g.nodes()) {
    bool input_tainted = false;
    for (const auto& in : node.inputs) input_tainted = input_tainted || (!in.empty() && tainted.count(in));
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      auto it = row_of.find(out);
      if (it == row_of.end()) {
        if (input_tainted) tainted.insert(out);
        continue;
      }
      TensorResult& row = r->rows[it->second];
      if (row.pass) continue;
      tainted.insert(out);
      row.role = input_tainted ? Role::kInherited : Role::kIntroduced;
    }
  }
  // rows the graph does not know (renamed, missing) are judged on their own
  for (auto& row : r->rows) {
    if (!row.pass && row.role == Role::kPass) row.role = Role::kIntroduced;
  }
  r->frontier_from_graph = true;
}

}  // namespace

Expected<ComparisonResult> RunComparison(Side& a, Side& b, const CompareJob& job, const RowCallback& on_row) {
  auto t0 = std::chrono::steady_clock::now();
  OP_RETURN_IF_ERROR(job.policy.Validate());
  ComparisonResult r;
  r.policy = job.policy;

  // pair by exact name (or the user's mapping), in side A's topological order
  std::unordered_map<std::string, const SideTensor*> b_by_name;
  for (const auto& t : b.tensors()) b_by_name.emplace(t.name, &t);
  OP_ASSIGN_OR_RETURN(auto selected, Select(a.tensors(), job.selection));
  std::unordered_set<std::string> used_b;
  std::vector<Pair> pairs;
  for (const SideTensor* ta : selected) {
    auto m = job.rename.find(ta->name);
    const std::string& nb = m == job.rename.end() ? ta->name : m->second;
    auto it = b_by_name.find(nb);
    if (it == b_by_name.end()) {
      r.only_a.push_back(ta->name);
      continue;
    }
    used_b.insert(nb);
    pairs.push_back({ta, it->second});
  }
  for (const auto& t : b.tensors()) {
    if (!used_b.count(t.name)) r.only_b.push_back(t.name);
  }
  if (pairs.empty()) {
    return InvalidArgument("sides have no tensor in common (A: " + std::to_string(a.tensors().size()) +
                           " tensors, B: " + std::to_string(b.tensors().size()) +
                           "); pair renamed tensors with --map FILE");
  }

  // batches whose tensors, on both sides, fit the memory budget
  uint64_t known_max = 0;
  for (const auto& p : pairs) known_max = std::max({known_max, p.a->est_bytes, p.b->est_bytes});
  std::vector<std::vector<Pair>> batches(1);
  uint64_t in_batch = 0;
  for (const auto& p : pairs) {
    uint64_t bytes = (p.a->est_bytes ? p.a->est_bytes : known_max) + (p.b->est_bytes ? p.b->est_bytes : known_max);
    if (job.max_memory > 0 && !batches.back().empty() && in_batch + bytes > job.max_memory) {
      batches.emplace_back();
      in_batch = 0;
    }
    batches.back().push_back(p);
    in_batch += bytes;
  }
  r.batches = batches.size();

  std::set<std::string> forced_topk(job.topk_tensors.begin(), job.topk_tensors.end());
  size_t done = 0;
  for (const auto& batch : batches) {
    std::vector<std::string> na, nb;
    for (const auto& p : batch) {
      na.push_back(p.a->name);
      nb.push_back(p.b->name);
    }
    auto fa = a.Fetch(na);
    if (!fa.ok()) {
      r.aborted = true;
      r.abort_status = fa.status().WithContext("side A");
      break;
    }
    auto fb = b.Fetch(nb);
    if (!fb.ok()) {
      r.aborted = true;
      r.abort_status = fb.status().WithContext("side B");
      break;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      const Pair& p = batch[i];
      RunOutput& oa = (*fa)[i];
      RunOutput& ob = (*fb)[i];
      TensorResult row;
      row.name = p.a->name;
      row.name_b = p.b->name;
      row.node = p.a->node.empty() ? p.b->node : p.a->node;
      row.op_type = p.a->op_type.empty() ? p.b->op_type : p.a->op_type;
      row.topo_index = p.a->topo_index;
      row.tolerance = job.policy.For(row.name, row.op_type);
      if (!oa.skipped.empty() || !ob.skipped.empty()) {
        row.pass = true;
        row.reason = "not compared: " + (oa.skipped.empty() ? ob.skipped : oa.skipped);
      } else {
        CompareOptions k = job.kernel;
        k.topk = k.topk || forced_topk.count(row.name) || ClassificationLike(*p.a, p.b, oa.tensor.shape());
        row.metrics = CompareTensors(oa.tensor, ob.tensor, row.tolerance, job.policy.rel_eps, k);
        row.pass = Judge(row.metrics, row.tolerance, job.policy.judge, &row.reason);
        row.grade = GradeFor(row.metrics.max_rel);
      }
      oa = RunOutput();  // free both sides' tensor before the next one
      ob = RunOutput();
      r.rows.push_back(std::move(row));
      ++done;
      if (on_row) on_row(r.rows.back(), done, pairs.size());
    }
  }

  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].pass) continue;
    ++r.failures;
    if (r.first_failure < 0) r.first_failure = static_cast<int>(i);
  }
  const Model* graph = job.graph != nullptr ? job.graph : (a.model() != nullptr ? a.model() : b.model());
  if (graph != nullptr) {
    Localize(*graph, &r);
  } else if (r.first_failure >= 0) {
    // without a graph only the first failure can be said to introduce error
    for (auto& row : r.rows) {
      if (!row.pass) row.role = Role::kInherited;
    }
    r.rows[r.first_failure].role = Role::kIntroduced;
  }
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].role == Role::kIntroduced) r.frontier.push_back(static_cast<int>(i));
  }
  r.runs_a = a.runs();
  r.runs_b = b.runs();
  r.side_a = a.info();
  r.side_b = b.info();
  r.describe_a = a.Describe();
  r.describe_b = b.Describe();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace onnxprobe
