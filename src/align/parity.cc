// Parameter parity: every saved PyTorch parameter and buffer against the ONNX initializer of the
// same name (SHA-256 of the bytes; the values of those that differ, to say how much). Runs before
// any activation is compared: a weight that differs is named at the node that reads it, whatever
// the module boundaries. (Initializers the exporter renamed, e.g. a convolution with a BatchNorm
// folded in, are checked by the comparison of that convolution's output.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "align/finalize.h"
#include "onnxprobe/graph.h"
#include "onnxprobe/hash.h"

namespace onnxprobe {
namespace align {
namespace {

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct Diff {
  uint64_t differing = 0;
  double max_abs = 0;
};

// Elements of b beyond `allowed` from a (0: bitwise-equal values required).
Diff Difference(const Tensor& a, const std::vector<double>& ref, double allowed) {
  Diff d;
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    double x = ElementAsDouble(a, i), y = ref[i];
    double e = std::fabs(x - y);
    if (std::isnan(x) != std::isnan(y)) e = INFINITY;
    if (e > allowed || (allowed == 0 && x != y && !(std::isnan(x) && std::isnan(y)))) ++d.differing;
    if (e > d.max_abs) d.max_abs = e;
  }
  return d;
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (uint64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

class Parity {
 public:
  Parity(Side& torch_side, Side& onnx_side, const TorchCalls& calls, const CallGraph& graph)
      : torch_(torch_side),
        onnx_(onnx_side),
        calls_(calls),
        graph_(graph),
        g_(onnx_side.model()->index()) {
    for (size_t c = 0; c < calls.calls.size(); ++c) {
      for (const auto& names : calls.calls[c].params) {
        for (const auto& n : names) module_of_[n] = calls.calls[c].module;
      }
      for (const auto& n : calls.calls[c].buffers) module_of_[n] = calls.calls[c].module;
      called_.insert(calls.calls[c].module);
    }
  }

  // The initializer a name stands for: itself, or the initializer an Identity chain copies
  // (the exporter shares identical initializers that way).
  std::string Initializer(const std::string& name) const {
    std::string n = name;
    for (int hops = 0; hops < 8; ++hops) {
      const TensorEntry* e = g_.Find(n);
      if (e == nullptr) return "";
      if (e->kind == TensorKind::kInitializer) return n;
      if (e->producer < 0) return "";
      const NodeInfo& p = g_.nodes()[e->producer];
      if (p.op_type != "Identity" || p.inputs.size() != 1) return "";
      n = p.inputs[0];
    }
    return "";
  }

  // The first node reading a static tensor together with data computed from the graph inputs.
  const NodeInfo* Reader(const std::string& name) const {
    std::vector<std::string> todo = {name};
    std::set<std::string> seen;
    for (size_t k = 0; k < todo.size() && k < 64; ++k) {
      const TensorEntry* e = g_.Find(todo[k]);
      if (e == nullptr) continue;
      for (int c : e->consumers) {
        const NodeInfo& n = g_.nodes()[c];
        bool dynamic = false;
        for (const auto& i : n.inputs) dynamic = dynamic || graph_.dynamic(i);
        if (dynamic) return &n;
        for (const auto& o : n.outputs) {
          if (seen.insert(o).second) todo.push_back(o);
        }
      }
    }
    return nullptr;
  }

  Status Run(ParityReport* report) {
    report->ran = true;
    report->parameters = calls_.params.size();
    OP_ASSIGN_OR_RETURN(auto hashes, onnx_.model()->InitializerHashes());
    std::unordered_map<std::string, std::string> hash(hashes.begin(), hashes.end());
    std::unordered_map<std::string, const InitializerInfo*> info;
    for (const auto& i : onnx_.model()->summary().initializers) info[i.name] = &i;
    for (size_t p = 0; p < calls_.params.size(); ++p) {
      const TorchParam& tp = calls_.params[p];
      std::string init, name;
      for (const auto& n : tp.names) {
        init = Initializer(n);
        name = n;
        if (!init.empty()) break;
      }
      if (init.empty() || !hash.count(init) || !info.count(init)) continue;
      ++report->by_name;
      auto dt = DTypeFromOnnx(info[init]->elem_type);
      if (!dt.ok() || *dt != tp.dtype || info[init]->dims != tp.shape) {
        Report(ParityIssue::kShapeDiffers, init, name, 0, Diff(), report);
        continue;
      }
      OP_ASSIGN_OR_RETURN(const Tensor* t, TorchValue(p));
      if (Sha256Hex(t->data(), t->byte_size()) == hash[init]) continue;
      Diff d;
      d.differing = t->num_elements();  // until the values say how many
      auto values = InitializerValue(init);
      if (values.ok()) d = Difference(*values, AsDoubles(*t), 0);
      if (d.differing > 0) Report(ParityIssue::kDiffers, init, name, t->num_elements(), d, report);
    }
    return Status::Ok();
  }

 private:
  // An initializer's values: the node reading it, run alone on the ONNX side's runtime with its
  // other inputs as that side computes them, handing the initializer out as an output.
  Expected<Tensor> InitializerValue(const std::string& init) {
    const TensorEntry* e = g_.Find(init);
    if (e == nullptr || e->consumers.empty()) return NotFound("no node reads '" + init + "'");
    const NodeInfo& n = g_.nodes()[e->consumers.front()];
    SubgraphSpec spec;
    spec.nodes = {n.topo_index};
    std::vector<std::string> fetch;
    for (const auto& i : n.inputs) {
      const TensorEntry* ie = g_.Find(i);
      if (i.empty() || ie == nullptr || ie->kind == TensorKind::kInitializer) continue;
      if (std::find(spec.inputs.begin(), spec.inputs.end(), i) == spec.inputs.end())
        spec.inputs.push_back(i);
    }
    std::vector<RunOutput> values;
    OP_ASSIGN_OR_RETURN(auto recorded, torch_.RecordedInputs());
    for (const auto& i : spec.inputs) {
      auto r = std::find_if(recorded.begin(), recorded.end(),
                            [&](const NamedTensor& x) { return x.name == i; });
      if (r != recorded.end())
        values.push_back({i, r->tensor, ""});
      else
        fetch.push_back(i);
    }
    if (!fetch.empty()) {
      OP_ASSIGN_OR_RETURN(auto got, onnx_.Fetch(fetch));
      for (auto& v : got) values.push_back(std::move(v));
    }
    std::vector<std::pair<std::string, const Tensor*>> feed;
    for (const auto& i : spec.inputs) {
      auto v = std::find_if(values.begin(), values.end(),
                            [&](const RunOutput& x) { return x.name == i; });
      if (v == values.end() || v->tensor.empty()) return NotFound("no value for '" + i + "'");
      spec.input_types.emplace_back(v->tensor.dtype(), v->tensor.shape());
      feed.emplace_back(i, &v->tensor);
    }
    spec.outputs = {init};
    OP_ASSIGN_OR_RETURN(std::string bytes, ExtractSubgraph(*onnx_.model(), spec));
    OP_ASSIGN_OR_RETURN(auto out, onnx_.RunOther(bytes, onnx_.model()->dir(), feed, {init}));
    if (out.empty() || out[0].tensor.empty())
      return NotFound("the runtime handed out no '" + init + "'");
    return std::move(out[0].tensor);
  }

  Expected<const Tensor*> TorchValue(size_t p) {
    auto it = torch_values_.find(p);
    if (it == torch_values_.end()) {
      OP_ASSIGN_OR_RETURN(Tensor t, LoadTorchParam(torch_.info().path, calls_.params[p]));
      it = torch_values_.emplace(p, std::move(t)).first;
    }
    return &it->second;
  }

  // The module owning a parameter; for a module that is never called (its parent uses its
  // weights in functional code), the nearest called module above it.
  std::string ModuleOf(const std::string& param) const {
    auto it = module_of_.find(param);
    if (it != module_of_.end()) return it->second;
    for (auto dot = param.rfind('.'); dot != std::string::npos && dot > 0;
         dot = param.rfind('.', dot - 1)) {
      if (called_.count(param.substr(0, dot))) return param.substr(0, dot);
    }
    return "";
  }

  void Report(ParityIssue issue, const std::string& init, const std::string& param, uint64_t count,
              const Diff& d, ParityReport* report) {
    ParityFinding f;
    f.issue = issue;
    f.initializer = init;
    f.parameter = param;
    f.module = ModuleOf(param);
    if (const NodeInfo* reader = Reader(init); reader != nullptr) {
      f.node = reader->name;
      f.op_type = reader->op_type;
    }
    f.count = count;
    f.differing = d.differing;
    f.max_abs = d.max_abs;
    std::string where = f.node.empty()
                            ? "initializer '" + init + "'"
                            : "node " + f.node + " (" + f.op_type + ") reads '" + init + "', which";
    std::string owner = f.module.empty() ? "parameter '" + param + "'"
                                         : "module " + f.module + "'s parameter '" + param + "'";
    if (issue == ParityIssue::kShapeDiffers) {
      f.message = where + " has another type or shape than " + owner;
    } else {
      f.message = where + " differs from " + owner + ": " + std::to_string(d.differing) + " of " +
                  std::to_string(count) + " elements, max abs " + Fmt(d.max_abs);
    }
    report->findings.push_back(std::move(f));
  }

  Side& torch_;
  Side& onnx_;
  const TorchCalls& calls_;
  const CallGraph& graph_;
  const GraphIndex& g_;
  std::unordered_map<std::string, std::string> module_of_;
  std::set<std::string> called_;
  std::map<size_t, Tensor> torch_values_;
};

}  // namespace

Status CheckParameterParity(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                            const CallGraph& graph, Alignment* alignment) {
  if (calls.params.empty() || onnx_side.model() == nullptr) return Status::Ok();
  Parity parity(torch_side, onnx_side, calls, graph);
  OP_RETURN_IF_ERROR(parity.Run(&alignment->parity));
  // the rows of the module a finding belongs to say so
  for (const auto& f : alignment->parity.findings) {
    for (auto& r : alignment->rows) {
      if (f.module.empty() || r.module != f.module) continue;
      r.note += std::string(r.note.empty() ? "" : "; ") + "parameter parity: " + f.message;
    }
  }
  return Status::Ok();
}

}  // namespace align

const char* ParityIssueName(ParityIssue k) {
  switch (k) {
    case ParityIssue::kDiffers:
      return "differs";
    case ParityIssue::kShapeDiffers:
      return "shape-differs";
  }
  return "differs";
}

}  // namespace onnxprobe
