#include "engine/pairing.h"

#include <algorithm>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace onnxprobe {
namespace {

Expected<std::vector<const SideTensor*>> Select(const std::vector<SideTensor>& all,
                                                const TensorSelection& sel) {
  OP_ASSIGN_OR_RETURN(auto match, MakeTensorMatcher(sel));
  std::set<std::string> missing(sel.names.begin(), sel.names.end());
  std::vector<const SideTensor*> out;
  for (const auto& t : all) {
    if (!match(t.name, t.op_type)) continue;
    out.push_back(&t);
    missing.erase(t.name);
  }
  if (!missing.empty()) return NotFound("side A has no tensor '" + *missing.begin() + "'");
  return out;
}

bool ClassificationLike(const SideTensor& a, const SideTensor* b, const Shape& shape) {
  bool output = a.is_graph_output || (b != nullptr && b->is_graph_output);
  return output && shape.size() >= 2 && shape.back() >= 2;
}

// Marks rows as introduced or inherited by propagating taint through the graph in topological
// order: a tensor is tainted when its row failed, or when it was not compared and its
// producer reads a tainted tensor.
void MarkRoles(const Model& model, ComparisonResult* r) {
  const GraphIndex& g = model.index();
  // the graph may be either side's: know rows by both names. Several rows can share one tensor
  // (a PyTorch module and the containers whose last child it is): they share its role.
  // A's names first: a B name equal to another A tensor's (a quantized model's pre-Relu
  // tensor keeps the Relu output's name) must not take that tensor's row
  std::unordered_map<std::string, std::vector<int>> by_a, by_b;
  for (size_t i = 0; i < r->rows.size(); ++i) by_a[r->rows[i].name].push_back(static_cast<int>(i));
  for (size_t i = 0; i < r->rows.size(); ++i) {
    const std::string& nb = r->rows[i].name_b;
    if (!by_a.count(nb)) by_b[nb].push_back(static_cast<int>(i));
  }
  auto rows_of = [&](const std::string& name) -> const std::vector<int>* {
    if (auto it = by_a.find(name); it != by_a.end()) return &it->second;
    if (auto it = by_b.find(name); it != by_b.end()) return &it->second;
    return nullptr;
  };
  std::unordered_set<std::string> tainted;
  for (const auto& node : g.nodes()) {
    bool input_tainted = false;
    for (const auto& in : node.inputs)
      input_tainted = input_tainted || (!in.empty() && tainted.count(in));
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      const std::vector<int>* rows = rows_of(out);
      bool compared = false, failed = false;
      for (int i : rows ? *rows : std::vector<int>{}) {
        const TensorResult& row = r->rows[i];
        compared = compared || row.state != RowState::kNotCompared;
        failed = failed || !row.pass;
      }
      if (!compared) {  // no value: it carries what it reads
        if (input_tainted) tainted.insert(out);
        continue;
      }
      if (!failed) continue;
      tainted.insert(out);
      // the first failing row (the smallest module) makes the error; the containers it is the
      // last child of only pass it on
      bool first = true;
      for (int i : *rows) {
        if (r->rows[i].pass) continue;
        r->rows[i].role = first && !input_tainted ? Role::kIntroduced : Role::kInherited;
        first = false;
      }
    }
  }
  // rows the graph does not know (renamed, missing) are judged on their own
  for (auto& row : r->rows) {
    if (!row.pass && row.role == Role::kPass) row.role = Role::kIntroduced;
  }
  r->frontier_from_graph = true;
}

// A mapping entry pairs nothing unless side A has its first name and side B its second.
Status CheckMapping(const std::map<std::string, std::string>& rename, Side& a, Side& b) {
  std::unordered_set<std::string> in_a, in_b;
  for (const auto& t : a.tensors()) in_a.insert(t.name);
  for (const auto& t : b.tensors()) in_b.insert(t.name);
  in_b.insert(b.hidden().begin(), b.hidden().end());  // fused away: known, just not captured
  for (const auto& [na, nb] : rename) {
    // a name the side's graph knows (a graph input, say) exists even when it is not captured
    auto known = [](const Side& s, const std::string& n) {
      return s.model() != nullptr && s.model()->index().Find(n) != nullptr;
    };
    bool has_a = in_a.count(na) > 0 || known(a, na), has_b = in_b.count(nb) > 0 || known(b, nb);
    if (has_a && has_b) continue;
    std::string missing =
        !has_a && !has_b ? "side A has no tensor '" + na + "' and side B has no tensor '" + nb + "'"
        : !has_a         ? "side A has no tensor '" + na + "'"
                         : "side B has no tensor '" + nb + "'";
    return InvalidArgument("tensor mapping '" + na + "' -> '" + nb + "' pairs nothing: " + missing);
  }
  return Status::Ok();
}

bool Whole(const TensorSelection& s) {
  return s.names.empty() && s.op_types.empty() && s.regex.empty();
}

// Graph outputs no row pairs, where both sides are live models compared whole (a dump holds what
// its capture selected; a quantized B is paired by its own rule).
void CheckGraphOutputs(const Side& a, const Side& b, const CompareJob& job, ComparisonResult* r) {
  if (a.model() == nullptr || b.model() == nullptr || a.info().kind != SideKind::kLive ||
      b.info().kind != SideKind::kLive || !Whole(job.selection) || job.rename_only)
    return;
  std::unordered_set<std::string> paired_a, paired_b;
  for (const auto& row : r->rows) {
    paired_a.insert(row.name);
    paired_b.insert(row.name_b);
  }
  // outputs computed by a node (an output that is a graph input or a weight has no row)
  auto computed = [](const Model& m, const std::string& name) {
    const TensorEntry* e = m.index().Find(name);
    return e != nullptr && e->producer >= 0;
  };
  for (const auto& v : a.model()->summary().outputs) {
    if (!paired_a.count(v.name) && computed(*a.model(), v.name))
      r->unpaired_outputs.push_back("side A's graph output '" + v.name +
                                    "' has no counterpart in B");
  }
  for (const auto& v : b.model()->summary().outputs) {
    if (!paired_b.count(v.name) && computed(*b.model(), v.name))
      r->unpaired_outputs.push_back("side B's graph output '" + v.name +
                                    "' has no counterpart in A");
  }
}

}  // namespace

Expected<std::vector<Pair>> PairTensors(Side& a, Side& b, const CompareJob& job,
                                        std::vector<std::string>* only_a,
                                        std::vector<std::string>* only_b,
                                        std::vector<std::string>* hidden) {
  OP_RETURN_IF_ERROR(CheckMapping(job.rename, a, b));
  std::unordered_map<std::string, const SideTensor*> b_by_name;
  for (const auto& t : b.tensors()) b_by_name.emplace(t.name, &t);
  std::unordered_set<std::string> hidden_b(b.hidden().begin(), b.hidden().end());
  OP_ASSIGN_OR_RETURN(auto selected, Select(a.tensors(), job.selection));
  std::unordered_set<std::string> used_b;
  std::vector<Pair> pairs;
  for (const SideTensor* ta : selected) {
    auto m = job.rename.find(ta->name);
    if (m == job.rename.end() && (job.rename_only || job.distrusted.count(ta->name))) {
      only_a->push_back(ta->name);
      continue;
    }
    const std::string& nb = m == job.rename.end() ? ta->name : m->second;
    auto it = b_by_name.find(nb);
    if (it == b_by_name.end()) {
      (hidden_b.count(nb) ? hidden : only_a)->push_back(ta->name);
      continue;
    }
    used_b.insert(nb);
    pairs.push_back({ta, it->second});
  }
  for (const auto& t : b.tensors()) {
    if (!used_b.count(t.name)) only_b->push_back(t.name);
  }
  if (pairs.empty()) {
    return InvalidArgument(
        "sides have no tensor in common (A: " + std::to_string(a.tensors().size()) +
        " tensors, B: " + std::to_string(b.tensors().size()) +
        "); renamed tensors pair through a tensor mapping");
  }
  return pairs;
}

TensorResult ComparePair(const Pair& p, const RunOutput& oa, const RunOutput& ob,
                         const CompareJob& job, const RowBudget& budget, const RunOutput* oe) {
  TensorResult row;
  row.name = p.a->name;
  row.name_b = p.b->name;
  row.node = p.a->node.empty() ? p.b->node : p.a->node;
  row.op_type = p.a->op_type.empty() ? p.b->op_type : p.a->op_type;
  if (!p.a->module.empty() && !p.b->node.empty()) {  // a PyTorch capture: name the ONNX node
    row.node = p.b->node;
    row.op_type = p.b->op_type;
  }
  row.topo_index = p.a->topo_index;
  row.tolerance = job.policy.For(row.name, row.op_type);
  if (budget.argument_scale > 0)
    row.tolerance = PeriodicBudget(row.tolerance, budget.argument_scale);
  row.tolerance.noise_floor =
      std::max({row.tolerance.noise_floor, budget.carried, budget.quant_step});
  row.tolerance = Float32RoundingBudget(row.tolerance, p.a->float64_error);
  if (!oa.skipped.empty() || !ob.skipped.empty()) {
    row.state = RowState::kNotCompared;
    row.reason = oa.skipped.empty() ? ob.skipped.detail : oa.skipped.detail;
    return row;
  }
  if (job.advisory.count(row.name)) row.state = RowState::kAdvisory;
  if (oe != nullptr && oe->skipped.empty() && !oe->tensor.empty()) {
    row.exact_error_a = DistanceFromExact(oa.tensor, oe->tensor);
    row.exact_error_b = DistanceFromExact(ob.tensor, oe->tensor);
    // each side's own precision: a float16 side is allowed what float16 rounding must lose
    row.tolerance = ExactRoundingBudget(
        row.tolerance, row.exact_error_a, row.exact_error_b, UnitRoundoff(oa.tensor.dtype()),
        std::max(UnitRoundoff(ob.tensor.dtype()), budget.roundoff_b));
  }
  CompareOptions k = job.kernel;
  bool forced = std::find(job.topk_tensors.begin(), job.topk_tensors.end(), row.name) !=
                job.topk_tensors.end();
  k.topk = k.topk || forced || ClassificationLike(*p.a, p.b, oa.tensor.shape());
  k.reshaped_ok = job.reshaped_ok && !p.a->is_graph_output && !p.b->is_graph_output;
  if (job.judge) {
    job.judge(oa.tensor, ob.tensor, job.policy, k, &row);
  } else {
    JudgeRow(oa.tensor, ob.tensor, job.policy, k, &row);
  }
  return row;
}

BatchPlanner::BatchPlanner(const std::vector<Pair>& pairs, uint64_t max_memory, bool with_exact)
    : pairs_(pairs), planner_(max_memory), with_exact_(with_exact) {
  for (const auto& p : pairs) planner_.Learn(std::max(p.a->est_bytes, p.b->est_bytes));
}

std::vector<Pair> BatchPlanner::Next() {
  std::vector<Pair> batch;
  planner_.Close();
  for (; next_ < pairs_.size(); ++next_) {
    const Pair& p = pairs_[next_];
    // both sides' tensors are held; unnamed, as A and B may share a name
    std::vector<HeldTensor> held{{"", p.a->est_bytes}, {"", p.b->est_bytes}};
    if (with_exact_) held.push_back({"", 2 * p.a->est_bytes});
    if (!planner_.Fits(held)) break;
    planner_.Take(held);
    batch.push_back(p);
  }
  return batch;
}

void BatchPlanner::Learn(const std::vector<RunOutput>& fetched) {
  for (const auto& o : fetched) planner_.Learn(o.tensor.byte_size());
}

bool FetchExact(Side& exact, const std::vector<Pair>& batch, std::vector<RunOutput>* fe,
                ComparisonResult* r) {
  std::unordered_set<std::string> has;
  for (const auto& t : exact.tensors()) has.insert(t.name);
  std::vector<std::string> names;
  std::vector<size_t> where;
  for (size_t i = 0; i < batch.size(); ++i) {
    // the reference is side A's model (its names), or B's when A is a dump or a PyTorch capture
    const std::string& name = has.count(batch[i].a->name) ? batch[i].a->name : batch[i].b->name;
    if (!has.count(name)) continue;
    names.push_back(name);
    where.push_back(i);
  }
  fe->assign(batch.size(), RunOutput());
  if (names.empty()) return true;
  auto got = exact.Fetch(names);
  if (!got.ok()) {
    r->aborted = true;
    r->abort_status = got.status().WithContext("the exact reference");
    return false;
  }
  for (size_t k = 0; k < where.size() && k < got->size(); ++k)
    (*fe)[where[k]] = std::move((*got)[k]);
  return true;
}

bool FetchBoth(Side& a, Side& b, const std::vector<Pair>& batch, std::vector<RunOutput>* fa,
               std::vector<RunOutput>* fb, ComparisonResult* r) {
  std::vector<std::string> na, nb;
  for (const auto& p : batch) {
    na.push_back(p.a->name);
    nb.push_back(p.b->name);
  }
  auto ga = a.Fetch(na);
  if (!ga.ok()) {
    r->aborted = true;
    r->abort_status = ga.status().WithContext("side A");
    return false;
  }
  auto gb = b.Fetch(nb);
  if (!gb.ok()) {
    r->aborted = true;
    r->abort_status = gb.status().WithContext("side B");
    return false;
  }
  *fa = std::move(*ga);
  *fb = std::move(*gb);
  return true;
}

void FinishResult(Side& a, Side& b, const CompareJob& job, ComparisonResult* rp) {
  ComparisonResult& r = *rp;
  if (!job.confirm_by.empty()) {
    std::unordered_map<std::string, const TensorResult*> by_name;
    for (const auto& row : r.rows) by_name[row.name] = &row;
    for (auto& row : r.rows) {
      auto c = job.confirm_by.find(row.name);
      if (row.pass || row.state != RowState::kCompared || c == job.confirm_by.end()) continue;
      bool compared = false, failing = false;
      for (const auto& n : c->second) {
        auto it = by_name.find(n);
        if (it == by_name.end() || it->second->state != RowState::kCompared) continue;
        compared = true;
        // an output that passes using more than half of its tolerance carries the error too
        failing = failing || !it->second->pass || it->second->tolerance_ratio > kConfirmingShare;
      }
      if (!compared || failing) continue;
      row.state = RowState::kAdvisory;
      row.pass = true;
      row.reason =
          "differs, but the module call's outputs match: the pairing inside the call is "
          "not confirmed, so this row is not judged (" +
          row.reason + ")";
    }
  }
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.first_difference < 0 && !RowIdentical(r.rows[i]))
      r.first_difference = static_cast<int>(i);
    if (r.rows[i].pass) continue;
    ++r.failures;
    if (r.first_failure < 0) r.first_failure = static_cast<int>(i);
  }
  const Model* graph =
      job.graph != nullptr ? job.graph : (a.model() != nullptr ? a.model() : b.model());
  if (graph != nullptr) {
    MarkRoles(*graph, &r);
  } else if (r.first_failure >= 0) {
    // without a graph only the first failure can be said to introduce error
    for (auto& row : r.rows) {
      if (!row.pass) row.role = Role::kInherited;
    }
    r.rows[r.first_failure].role = Role::kIntroduced;
  }
  r.frontier = FrontierOf(r);
  if (!r.aborted) CheckGraphOutputs(a, b, job, &r);
  r.runs_a = a.runs();
  r.runs_b = b.runs();
  r.side_a = a.info();
  r.side_b = b.info();
  r.describe_a = a.Describe();
  r.describe_b = b.Describe();
}

}  // namespace onnxprobe
