// Run-to-run determinism: the reference session's first run is kept; every later run (same
// session, a fresh session, other thread settings) is compared with it bitwise.
#include "onnxprobe/capture/determinism.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "common/file_util.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/common/budget_planner.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"

namespace onnxprobe {
namespace {

// max |a - b| (NaN against a number or a differing NaN/Inf pattern counts as infinite)
double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.BitwiseEqual(b)) return 0;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  double m = 0;
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    double d = x == y ? 0 : std::fabs(x - y);
    if (std::isnan(d)) d = INFINITY;
    m = std::max(m, d);
  }
  // bitwise different but numerically equal (-0 vs 0, NaN payloads): still a difference
  return m > 0 ? m : std::numeric_limits<double>::denorm_min();
}

Expected<Tensor> CopyOf(const Tensor& t) {
  OP_ASSIGN_OR_RETURN(Tensor c, Tensor::Allocate(t.dtype(), t.shape()));
  if (t.byte_size() > 0) std::memcpy(c.data(), t.data(), t.byte_size());
  return c;
}

struct Config {
  std::string label;
  SessionOptions options;
  bool same_settings;
};

std::vector<Config> Configurations(const DeterminismRequest& req) {
  std::vector<Config> out;
  SessionOptions base = req.session;
  if (req.fresh_session) out.push_back({"fresh session", base, true});
  if (req.vary_threads) {
    SessionOptions o = base;
    o.intra_op_threads = base.intra_op_threads == 1 ? 2 : 1;
    out.push_back({"intra-op threads " + std::to_string(o.intra_op_threads), o, false});
  }
  if (req.vary_execution) {
    SessionOptions o = base;
    o.sequential = !base.sequential;
    if (!o.sequential && o.inter_op_threads == 0) o.inter_op_threads = 2;
    out.push_back({o.sequential ? "sequential execution" : "parallel execution", o, false});
  }
  return out;
}

// Groups of tensors whose reference copy plus one run's worth fit the budget.
std::vector<std::vector<std::string>> Groups(const Model& model,
                                             const std::vector<NamedTensor>& inputs,
                                             const std::vector<std::string>& names,
                                             uint64_t budget) {
  if (budget == 0) return {names};
  // each tensor is held twice (the reference and a run's copy): half the budget per copy
  auto groups =
      PlanNameBatches(names, EstimateTensorBytes(model, inputs), std::max<uint64_t>(budget / 2, 1));
  if (groups.empty()) groups.emplace_back();
  return groups;
}

}  // namespace

Expected<DeterminismReport> CheckDeterminism(const DeterminismRequest& req) {
  if (req.runs < 2)
    return InvalidArgument("determinism needs at least 2 runs, got " + std::to_string(req.runs));
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  DeterminismReport rep;
  rep.model = req.model;
  rep.runtime = RuntimeLabel(*backend);
  OP_ASSIGN_OR_RETURN(rep.inputs, PrepareInputs(model, req.inputs));
  OP_ASSIGN_OR_RETURN(std::vector<std::string> names, SelectTensors(model, req.selection));
  std::vector<std::string> outputs;
  for (const auto& o : model.summary().outputs) outputs.push_back(o.name);

  const GraphIndex& idx = model.index();
  std::unordered_map<std::string, size_t> row_of;
  for (const auto& n : names) {
    DeterminismRow row;
    row.name = n;
    if (const TensorEntry* e = idx.Find(n); e != nullptr && e->producer >= 0) {
      row.node = idx.nodes()[e->producer].name;
      row.op_type = idx.nodes()[e->producer].op_type;
      row.topo_index = e->producer;
    }
    row.is_graph_output = std::find(outputs.begin(), outputs.end(), n) != outputs.end();
    row_of[n] = rep.rows.size();
    rep.rows.push_back(row);
  }
  std::vector<Config> configs = Configurations(req);
  rep.configurations.push_back("reference: " + std::to_string(req.runs) + " runs in one session");
  for (const auto& c : configs) rep.configurations.push_back(c.label);

  bool outputs_varied = false;
  for (const auto& group : Groups(model, rep.inputs, names, req.max_memory)) {
    OP_ASSIGN_OR_RETURN(auto ref_session,
                        CaptureSession::Create(model, *backend, group, req.session));
    OP_RETURN_IF_ERROR(ref_session->Run(rep.inputs));
    ++rep.runs;
    // outputs() holds the group, then graph outputs not in it
    std::vector<std::pair<std::string, Tensor>> reference;
    for (const auto& o : ref_session->outputs()) {
      if (o.tensor.empty()) continue;
      OP_ASSIGN_OR_RETURN(Tensor c, CopyOf(o.tensor));
      reference.emplace_back(o.name, std::move(c));
    }
    auto fold = [&](const std::vector<RunOutput>& got, const Config* cfg) {
      for (size_t k = 0; k < got.size() && k < reference.size(); ++k) {
        if (got[k].tensor.empty()) continue;
        double d = MaxAbsDiff(reference[k].second, got[k].tensor);
        bool is_output =
            std::find(outputs.begin(), outputs.end(), reference[k].first) != outputs.end();
        if (d > 0 && is_output && (cfg == nullptr || cfg->same_settings)) outputs_varied = true;
        auto it = row_of.find(reference[k].first);
        if (it == row_of.end()) continue;
        DeterminismRow& row = rep.rows[it->second];
        if (cfg == nullptr || cfg->same_settings) {
          row.run_max_abs = std::max(row.run_max_abs, d);
        } else {
          if (d > 0 && row.settings_varying.empty()) row.settings_varying = cfg->label;
          row.settings_max_abs = std::max(row.settings_max_abs, d);
        }
      }
    };
    for (int k = 1; k < req.runs; ++k) {
      OP_RETURN_IF_ERROR(ref_session->Run(rep.inputs));
      ++rep.runs;
      fold(ref_session->outputs(), nullptr);
    }
    ref_session.reset();
    for (const auto& cfg : configs) {
      OP_ASSIGN_OR_RETURN(auto s, CaptureSession::Create(model, *backend, group, cfg.options));
      OP_RETURN_IF_ERROR(s->Run(rep.inputs));
      ++rep.runs;
      fold(s->outputs(), &cfg);
    }
    for (const auto& [n, t] : reference) {
      auto it = row_of.find(n);
      if (it == row_of.end()) continue;
      TensorStats st = ComputeStats(t);
      rep.rows[it->second].max_abs_value = std::max(std::fabs(st.min), std::fabs(st.max));
    }
  }
  std::stable_sort(
      rep.rows.begin(), rep.rows.end(),
      [](const DeterminismRow& x, const DeterminismRow& y) { return x.topo_index < y.topo_index; });
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    if (rep.first_nondeterministic < 0 && rep.rows[i].run_max_abs > 0)
      rep.first_nondeterministic = static_cast<int>(i);
    if (rep.first_settings_dependent < 0 && rep.rows[i].settings_max_abs > 0)
      rep.first_settings_dependent = static_cast<int>(i);
  }
  rep.outputs_reproducible = !outputs_varied;
  return rep;
}

Status WriteNoiseFloor(const DeterminismReport& report, bool include_settings,
                       const std::string& path) {
  JsonWriter j;
  j.BeginObject().Key("format").String("onnxprobe-noise-floor").Key("format_version").Int(1);
  j.Key("model").String(report.model).Key("runtime").String(report.runtime);
  j.Key("includes_settings").Bool(include_settings);
  j.Key("tensors").BeginObject();
  for (const auto& row : report.rows) {
    double d = include_settings ? std::max(row.run_max_abs, row.settings_max_abs) : row.run_max_abs;
    if (d > 0) j.Key(row.name).Number(std::isinf(d) ? 1e300 : d);
  }
  j.EndObject().EndObject();
  return WriteFileAtomic(path, j.str() + "\n");
}

Expected<std::map<std::string, double>> ReadNoiseFloor(const std::string& path) {
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(path, 256u << 20));
  OP_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, path));
  const JsonValue* format = j.is_object() ? j.Find("format") : nullptr;
  if (format == nullptr || !format->is_string() || format->as_string() != "onnxprobe-noise-floor")
    return InvalidArgument(path +
                           ": not an onnxprobe noise-floor file (format onnxprobe-noise-floor)");
  const JsonValue* tensors = j.Find("tensors");
  if (tensors == nullptr || !tensors->is_object())
    return Corrupt(path + ": \"tensors\" is not an object");
  std::map<std::string, double> out;
  for (const auto& [name, v] : tensors->members()) {
    if (!v.is_number() || !(v.as_number() >= 0))
      return Corrupt(path + ": tensor '" + name + "' has no non-negative number");
    out[name] = v.as_number();
  }
  return out;
}

}  // namespace onnxprobe
