// Parameter parity: every saved PyTorch parameter and buffer against the ONNX initializer of the
// same name (SHA-256 of the bytes; the values of those that differ, to say how much). Runs before
// any activation is compared: a weight that differs is named at the node that reads it, whatever
// the module boundaries. A convolution with a BatchNorm folded in reads renamed initializers: they
// are checked against the convolution's parameters with the BatchNorm's folded in, recomputed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "align/finalize.h"
#include "align/parity_layout.h"
#include "onnxprobe/common/hash.h"
#include "onnxprobe/graph/graph.h"

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
    for (size_t p = 0; p < calls.params.size(); ++p) {
      for (const auto& n : calls.params[p].names) param_of_[n] = p;
    }
  }

  // Convolutions the exporter folded a BatchNorm into (bn-folded rows): their weight and bias
  // initializers against W * s and (b - mean) * s + beta, s = gamma / sqrt(var + eps), computed
  // here in double from the saved parameters.
  Status RunFolded(const Alignment& al, ParityReport* report) {
    std::set<int> done;
    for (const auto& row : al.rows) {
      if (row.method != AlignMethod::kBnFolded || row.onnx_tensor.empty()) continue;
      const TensorEntry* e = g_.Find(row.onnx_tensor);
      if (e == nullptr || e->producer < 0 || !done.insert(e->producer).second) continue;
      const NodeInfo& conv = g_.nodes()[e->producer];
      if (conv.op_type != "Conv" || conv.inputs.size() < 2) continue;
      int bn = -1;
      for (size_t c = 0; c < calls_.calls.size(); ++c) {
        if (calls_.calls[c].module == row.module && calls_.calls[c].call_index == row.call_index)
          bn = static_cast<int>(c);
      }
      int owner = graph_.owner(e->producer);
      if (bn < 0 || owner < 0) continue;
      const TorchCall& bc = calls_.calls[bn];
      const TorchCall& cc = calls_.calls[owner];
      std::string w_name = Own(cc.params, "weight"), b_name = Own(cc.params, "bias");
      std::string gamma = Own(bc.params, "weight"), beta = Own(bc.params, "bias");
      std::string mean = OwnBuffer(bc.buffers, "running_mean");
      std::string var = OwnBuffer(bc.buffers, "running_var");
      if (w_name.empty() || mean.empty() || var.empty()) continue;
      OP_ASSIGN_OR_RETURN(const Tensor* w, Param(w_name));
      OP_ASSIGN_OR_RETURN(const Tensor* m, Param(mean));
      OP_ASSIGN_OR_RETURN(const Tensor* v, Param(var));
      const Tensor* g = nullptr;
      const Tensor* be = nullptr;
      const Tensor* b = nullptr;
      if (!gamma.empty()) {
        OP_ASSIGN_OR_RETURN(g, Param(gamma));
      }
      if (!beta.empty()) {
        OP_ASSIGN_OR_RETURN(be, Param(beta));
      }
      if (!b_name.empty()) {
        OP_ASSIGN_OR_RETURN(b, Param(b_name));
      }
      if (w->shape().empty()) continue;
      const uint64_t out = static_cast<uint64_t>(w->shape()[0]);
      if (m->num_elements() != out || v->num_elements() != out) continue;
      std::vector<double> s(out), wf(w->num_elements()), bf(out);
      const uint64_t per = w->num_elements() / out;
      double terms = 0;  // the bias is a sum: its rounding follows its largest term
      for (uint64_t o = 0; o < out; ++o) {
        s[o] = (g ? ElementAsDouble(*g, o) : 1.0) / std::sqrt(ElementAsDouble(*v, o) + bc.eps);
        double bb = (b ? ElementAsDouble(*b, o) : 0.0) * s[o];
        double mm = ElementAsDouble(*m, o) * s[o], beta_o = be ? ElementAsDouble(*be, o) : 0.0;
        bf[o] = bb - mm + beta_o;
        terms = std::max({terms, std::fabs(bb), std::fabs(mm), std::fabs(beta_o)});
        for (uint64_t k = 0; k < per; ++k)
          wf[o * per + k] = ElementAsDouble(*w, o * per + k) * s[o];
      }
      ++report->folded;
      std::string how = " with BatchNorm " + bc.module + " folded in";
      CheckFolded(conv.inputs[1], w_name + how, cc.module, wf, 0, report);
      if (conv.inputs.size() > 2 && !conv.inputs[2].empty())
        CheckFolded(conv.inputs[2], (b_name.empty() ? bc.module + ".bias" : b_name) + how,
                    cc.module, bf, terms, report);
    }
    return Status::Ok();
  }

  std::string Initializer(const std::string& name) const { return g_.InitializerBehind(name); }

  // The nodes reading a static tensor, directly or through static nodes that only change its
  // layout (a Transpose, Identity, Reshape, Cast the exporter added); a static node that computes
  // from it (a Gather of a bias table by a constant index) is itself the reader. In the model
  // file's order, which is the exporter's call order (a head shared by several pyramid levels is
  // read first by its first call).
  std::vector<const NodeInfo*> Readers(const std::string& name) const {
    static const std::set<std::string> layout = {"Transpose", "Identity", "Reshape", "Squeeze",
                                                 "Unsqueeze", "Flatten",  "Cast"};
    std::vector<std::string> todo = {name};
    std::set<std::string> seen;
    std::set<int> found;
    for (size_t k = 0; k < todo.size() && k < 64; ++k) {
      const TensorEntry* e = g_.Find(todo[k]);
      if (e == nullptr) continue;
      for (int c : e->consumers) {
        const NodeInfo& n = g_.nodes()[c];
        bool dynamic = false;
        for (const auto& i : n.inputs) dynamic = dynamic || graph_.dynamic(i);
        if (dynamic || !layout.count(n.op_type)) {
          found.insert(c);
          continue;
        }
        for (const auto& o : n.outputs) {
          if (seen.insert(o).second) todo.push_back(o);
        }
      }
    }
    std::vector<const NodeInfo*> out;
    for (int c : found) out.push_back(&g_.nodes()[c]);
    std::stable_sort(out.begin(), out.end(), [](const NodeInfo* a, const NodeInfo* b) {
      return a->file_index < b->file_index;
    });
    return out;
  }

  Status Run(ParityReport* report) {
    report->ran = true;
    report->parameters = calls_.params.size();
    OP_ASSIGN_OR_RETURN(auto hashes, onnx_.model()->InitializerHashes());
    hash_ = std::unordered_map<std::string, std::string>(hashes.begin(), hashes.end());
    const auto& hash = hash_;
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
      claimed_.insert(init);
      auto dt = DTypeFromOnnx(info[init]->elem_type);
      if (!dt.ok() || *dt != tp.dtype || info[init]->dims != tp.shape) {
        Report(ParityIssue::kShapeDiffers, init, name, 0, Diff(), report);
        continue;
      }
      OP_ASSIGN_OR_RETURN(const Tensor* t, TorchValue(p));
      if (Sha256Hex(t->data(), t->byte_size()) == hash.at(init)) continue;
      Diff d;
      d.differing = t->num_elements();  // until the values say how many
      auto values = InitializerValue(init);
      if (values.ok()) d = Difference(*values, AsDoubles(*t), 0);
      if (d.differing > 0) Report(ParityIssue::kDiffers, init, name, t->num_elements(), d, report);
    }
    return Status::Ok();
  }

  // The initializers of convolutions a BatchNorm was folded into (RunFolded's).
  std::set<std::string> FoldedInitializers(const Alignment& al) const {
    std::set<std::string> out;
    for (const auto& row : al.rows) {
      if (row.method != AlignMethod::kBnFolded || row.onnx_tensor.empty()) continue;
      const TensorEntry* e = g_.Find(row.onnx_tensor);
      if (e == nullptr || e->producer < 0) continue;
      const NodeInfo& conv = g_.nodes()[e->producer];
      for (size_t k = 1; k < conv.inputs.size(); ++k) out.insert(Initializer(conv.inputs[k]));
    }
    return out;
  }

  // Initializers no parameter names (`skip`: those RunFolded checks) against the parameters, for
  // the exporter's renames: first by the hash of the parameter's bytes as they are or transposed
  // (claimed, nothing to report); then an initializer left over is read and compared with the
  // parameters it could hold: when one of them matches it but for at most a tenth of its
  // elements, clearly closer than any other, the initializer is that parameter, changed.
  Status RunRenamed(const std::set<std::string>& skip, ParityReport* report) {
    std::vector<const InitializerInfo*> open;
    for (const auto& i : onnx_.model()->summary().initializers) {
      auto dt = DTypeFromOnnx(i.elem_type);
      if (i.num_elements < 2 || !dt.ok() || !IsFloating(*dt) || claimed_.count(i.name) ||
          skip.count(i.name) || !hash_.count(i.name) || g_.Find(i.name) == nullptr ||
          g_.Find(i.name)->consumers.empty())
        continue;
      open.push_back(&i);
    }
    if (open.empty()) return Status::Ok();
    // the parameters (and layouts) each open initializer could hold
    std::map<const InitializerInfo*, std::vector<std::pair<size_t, KeptAs>>> could;
    for (size_t p = 0; p < calls_.params.size(); ++p) {
      const TorchParam& tp = calls_.params[p];
      if (!IsFloating(tp.dtype)) continue;
      for (const InitializerInfo* i : open) {
        auto dt = DTypeFromOnnx(i->elem_type);
        if (*dt != tp.dtype) continue;
        for (KeptAs how : Layouts(tp.shape, i->dims)) could[i].emplace_back(p, how);
      }
    }
    std::map<std::pair<size_t, KeptAs>, std::string> hashed;  // of a parameter in a layout
    std::vector<const InitializerInfo*> left;
    for (const InitializerInfo* i : open) {
      bool same = false;
      for (const auto& pk : could[i]) {
        auto h = hashed.find(pk);
        if (h == hashed.end()) {
          OP_ASSIGN_OR_RETURN(const Tensor* t, TorchValue(pk.first));
          OP_ASSIGN_OR_RETURN(Tensor v, InLayout(*t, pk.second));
          h = hashed.emplace(pk, Sha256Hex(v.data(), v.byte_size())).first;
        }
        if (h->second == hash_.at(i->name)) {
          same = true;
          break;
        }
      }
      if (same) {
        ++report->renamed;
        claimed_.insert(i->name);
      } else if (!could[i].empty()) {
        left.push_back(i);
      }
    }
    for (const InitializerInfo* i : left) {
      auto values = InitializerValue(i->name);
      if (!values.ok() || values->num_elements() != i->num_elements) continue;
      Diff best, second;
      best.differing = second.differing = UINT64_MAX;
      std::pair<size_t, KeptAs> which{0, KeptAs::kSameOrder};
      for (const auto& pk : could[i]) {
        OP_ASSIGN_OR_RETURN(const Tensor* t, TorchValue(pk.first));
        OP_ASSIGN_OR_RETURN(Tensor v, InLayout(*t, pk.second));
        Diff d = Difference(*values, AsDoubles(v), 0);
        if (d.differing < best.differing) {
          second = best;
          best = d;
          which = pk;
        } else if (d.differing < second.differing) {
          second = d;
        }
      }
      if (best.differing == 0 || best.differing * 10 > i->num_elements ||
          (second.differing != UINT64_MAX && second.differing < 4 * best.differing))
        continue;
      ++report->renamed;
      claimed_.insert(i->name);
      const TorchParam& tp = calls_.params[which.first];
      Report(ParityIssue::kDiffers, i->name, tp.names.empty() ? "" : tp.names.front(),
             i->num_elements, best, report, "",
             which.second == KeptAs::kTransposed ? " (kept transposed)" : " (kept renamed)");
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
        values.push_back({i, r->tensor, {}});
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

  // The parameter (of a module's own, by its last name atom) or buffer; "" when absent.
  static std::string Own(const std::vector<std::vector<std::string>>& params,
                         const std::string& atom) {
    for (const auto& names : params) {
      for (const auto& n : names) {
        if (n == atom || (n.size() > atom.size() && n.compare(n.size() - atom.size() - 1,
                                                              std::string::npos, "." + atom) == 0))
          return n;
      }
    }
    return "";
  }
  static std::string OwnBuffer(const std::vector<std::string>& buffers, const std::string& atom) {
    return Own({buffers}, atom);
  }

  Expected<const Tensor*> Param(const std::string& name) {
    auto it = param_of_.find(name);
    if (it == param_of_.end()) return NotFound("the capture holds no parameter '" + name + "'");
    return TorchValue(it->second);
  }

  // A folded initializer against its recomputed values: float32 folding rounds, so elements
  // may differ by a few units in the last place of the largest value (or of the largest term
  // summed, `terms`).
  void CheckFolded(const std::string& input, const std::string& what, const std::string& module,
                   const std::vector<double>& expected, double terms, ParityReport* report) {
    std::string init = Initializer(input);
    if (init.empty()) return;
    auto values = InitializerValue(init);
    if (!values.ok() || values->num_elements() != expected.size()) return;
    double largest = 0;
    for (double x : expected) largest = std::max(largest, std::fabs(x));
    Diff d = Difference(*values, expected, 1e-5 * std::max({largest, terms, 1e-30}));
    if (d.differing > 0)
      Report(ParityIssue::kDiffers, init, what, expected.size(), d, report, module);
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
              const Diff& d, ParityReport* report, const std::string& module = "",
              const std::string& kept = "") {
    ParityFinding f;
    f.issue = issue;
    f.initializer = init;
    f.parameter = param;
    f.module = module.empty() ? ModuleOf(param) : module;
    for (const NodeInfo* reader : Readers(init)) {
      if (f.node.empty()) {
        f.node = reader->name;
        f.op_type = reader->op_type;
      }
      f.readers.push_back(reader->name);
    }
    f.count = count;
    f.differing = d.differing;
    f.max_abs = d.max_abs;
    std::string where = "initializer '" + init + "'";
    if (f.readers.size() == 1) {
      where = "node " + f.node + " (" + f.op_type + ") reads '" + init + "', which";
    } else if (f.readers.size() > 1) {  // a tied weight
      where = "nodes ";
      for (size_t k = 0; k < f.readers.size() && k < 4; ++k)
        where += (k ? ", " : "") + f.readers[k];
      if (f.readers.size() > 4) where += " and " + std::to_string(f.readers.size() - 4) + " more";
      where += " read '" + init + "', which";
    }
    std::string owner = f.module.empty() ? "parameter '" + param + "'"
                                         : "module " + f.module + "'s parameter '" + param + "'";
    if (issue == ParityIssue::kShapeDiffers) {
      f.message = where + " has another type or shape than " + owner;
    } else {
      f.message = where + " differs from " + owner + kept + ": " + std::to_string(d.differing) +
                  " of " + std::to_string(count) + " elements, max abs " + Fmt(d.max_abs);
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
  std::unordered_map<std::string, size_t> param_of_;  // every name of a saved parameter
  std::map<size_t, Tensor> torch_values_;
  std::unordered_map<std::string, std::string> hash_;  // of every initializer
  std::set<std::string> claimed_;                      // initializers a parameter stands for
};

}  // namespace

Status CheckParameterParity(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                            const CallGraph& graph, Alignment* alignment) {
  if (calls.params.empty() || onnx_side.model() == nullptr) return Status::Ok();
  Parity parity(torch_side, onnx_side, calls, graph);
  OP_RETURN_IF_ERROR(parity.Run(&alignment->parity));
  OP_RETURN_IF_ERROR(parity.RunFolded(*alignment, &alignment->parity));
  OP_RETURN_IF_ERROR(parity.RunRenamed(parity.FoldedInitializers(*alignment), &alignment->parity));
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
