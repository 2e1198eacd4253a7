// Values inside modules (see functional.h): a module PyTorch exposes as one call (attention,
// functional code) holds many ONNX nodes; the companion records the outputs of the torch functions
// the call ran itself, and they are paired here with tensors the call's own nodes made, so that
// comparison and localization have boundaries inside the module.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "align/evidence.h"
#include "align/functional.h"

namespace onnxprobe::align {
namespace {

const std::map<std::string, std::vector<std::string>>& FunctionTable() {
  // torch function -> the op types that can end its export (decompositions end in their last
  // node: linear as MatMul then Add, gelu as ... Mul, layer_norm as ... Add)
  static const std::map<std::string, std::vector<std::string>> table = {
      {"softmax", {"Softmax"}},
      {"softmin", {"Softmax"}},
      {"log_softmax", {"LogSoftmax"}},
      {"matmul", {"MatMul", "Gemm"}},
      {"bmm", {"MatMul"}},
      {"mm", {"MatMul", "Gemm"}},
      {"einsum", {"Einsum", "MatMul"}},
      {"baddbmm", {"Add", "Gemm"}},
      {"addmm", {"Gemm", "Add"}},
      {"addbmm", {"Add"}},
      {"linear", {"Gemm", "MatMul", "Add"}},
      {"bilinear", {"Add", "MatMul"}},
      {"add", {"Add", "Sum"}},
      {"sub", {"Sub"}},
      {"rsub", {"Sub"}},
      {"mul", {"Mul"}},
      {"square", {"Mul", "Pow"}},
      {"div", {"Div"}},
      {"pow", {"Pow", "Mul"}},
      {"neg", {"Neg"}},
      {"abs", {"Abs"}},
      {"exp", {"Exp"}},
      {"log", {"Log"}},
      {"sqrt", {"Sqrt"}},
      {"rsqrt", {"Reciprocal", "Div"}},
      {"reciprocal", {"Reciprocal"}},
      {"sin", {"Sin"}},
      {"cos", {"Cos"}},
      {"tanh", {"Tanh"}},
      {"sigmoid", {"Sigmoid"}},
      {"erf", {"Erf"}},
      {"relu", {"Relu"}},
      {"relu6", {"Clip"}},
      {"hardtanh", {"Clip"}},
      {"clamp", {"Clip", "Max", "Min"}},
      {"clip", {"Clip", "Max", "Min"}},
      {"maximum", {"Max"}},
      {"minimum", {"Min"}},
      {"gelu", {"Gelu", "Mul"}},
      {"silu", {"Mul"}},
      {"mish", {"Mul"}},
      {"hardswish", {"HardSwish", "Mul", "Div"}},
      {"hardsigmoid", {"HardSigmoid"}},
      {"leaky_relu", {"LeakyRelu"}},
      {"elu", {"Elu"}},
      {"selu", {"Selu"}},
      {"celu", {"Celu"}},
      {"softplus", {"Softplus"}},
      {"softsign", {"Softsign"}},
      {"prelu", {"PRelu"}},
      {"layer_norm", {"LayerNormalization", "Add", "Mul"}},
      {"group_norm", {"Add", "Mul", "InstanceNormalization"}},
      {"instance_norm", {"InstanceNormalization", "Add", "Mul"}},
      {"batch_norm", {"BatchNormalization"}},
      {"normalize", {"Div"}},
      {"conv1d", {"Conv"}},
      {"conv2d", {"Conv"}},
      {"conv3d", {"Conv"}},
      {"convolution", {"Conv", "ConvTranspose"}},
      {"conv_transpose1d", {"ConvTranspose"}},
      {"conv_transpose2d", {"ConvTranspose"}},
      {"conv_transpose3d", {"ConvTranspose"}},
      {"mean", {"ReduceMean"}},
      {"sum", {"ReduceSum"}},
      {"amax", {"ReduceMax"}},
      {"amin", {"ReduceMin"}},
      {"prod", {"ReduceProd"}},
      {"logsumexp", {"ReduceLogSumExp", "Add", "Log"}},
      {"norm", {"ReduceL2", "Sqrt"}},
      {"cumsum", {"CumSum"}},
      {"where", {"Where"}},
      {"masked_fill", {"Where"}},
      {"embedding", {"Gather"}},
      {"avg_pool1d", {"AveragePool"}},
      {"avg_pool2d", {"AveragePool"}},
      {"avg_pool3d", {"AveragePool"}},
      {"max_pool1d", {"MaxPool"}},
      {"max_pool2d", {"MaxPool"}},
      {"max_pool3d", {"MaxPool"}},
      {"adaptive_avg_pool1d", {"GlobalAveragePool", "AveragePool", "ReduceMean"}},
      {"adaptive_avg_pool2d", {"GlobalAveragePool", "AveragePool", "ReduceMean"}},
      {"adaptive_avg_pool3d", {"GlobalAveragePool", "AveragePool", "ReduceMean"}},
      {"adaptive_max_pool2d", {"GlobalMaxPool", "MaxPool"}},
      {"interpolate", {"Resize"}},
      {"upsample", {"Resize"}},
      {"upsample_nearest2d", {"Resize"}},
      {"upsample_bilinear2d", {"Resize"}},
  };
  return table;
}

// Whether `op` computes all of `function` from its arguments (one node, arguments in order), so
// that the node's inputs are the function's arguments: the first op of the table, for functions
// whose first op is not the last node of a decomposition (a decomposed layer_norm ends in an Add
// whose first input is the normalized value, not the function's argument).
bool OneNode(const std::string& function, const std::string& op) {
  static const std::set<std::string> decomposed = {"softmin",  "group_norm", "baddbmm", "addbmm",
                                                   "bilinear", "rsub",       "silu",    "mish"};
  const auto& ops = OpsForFunction(function);
  return !ops.empty() && ops.front() == op && !decomposed.count(function);
}

std::string Ordinal(int k) {
  switch (k) {
    case 0:
      return "first";
    case 1:
      return "second";
    case 2:
      return "third";
    default:
      return std::to_string(k + 1) + "th";
  }
}

struct Meta {
  DType dtype = DType::kFloat32;
  Shape shape;
};

}  // namespace

const std::vector<std::string>& OpsForFunction(const std::string& function) {
  static const std::vector<std::string> none;
  auto it = FunctionTable().find(function);
  return it == FunctionTable().end() ? none : it->second;
}

std::vector<std::vector<int>> OrderedWindows(const std::vector<std::vector<int>>& fits) {
  const size_t n = fits.size();
  std::vector<int> earliest(n, -1), latest(n, -1);
  bool complete = true;
  int prev = -1;
  for (size_t i = 0; i < n; ++i) {
    if (fits[i].empty()) continue;
    auto it = std::upper_bound(fits[i].begin(), fits[i].end(), prev);
    if (it == fits[i].end()) {
      complete = false;
      break;
    }
    earliest[i] = prev = *it;
  }
  int next = std::numeric_limits<int>::max();
  for (size_t i = n; complete && i-- > 0;) {
    if (fits[i].empty()) continue;
    auto it = std::lower_bound(fits[i].begin(), fits[i].end(), next);
    if (it == fits[i].begin()) {
      complete = false;
      break;
    }
    latest[i] = next = *(it - 1);
  }
  std::vector<std::vector<int>> windows(n);
  for (size_t i = 0; i < n; ++i) {
    if (!complete) {
      windows[i] = fits[i];
      continue;
    }
    for (int p : fits[i]) {
      if (p >= earliest[i] && p <= latest[i]) windows[i].push_back(p);
    }
  }
  return windows;
}

Status PairFunctional(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                      const CallGraph& graph, const Model& model, Alignment* al) {
  if (calls.functional.empty()) return Status::Ok();
  const GraphIndex& g = model.index();
  // per call: the dynamic tensors its own nodes make, in the exporter's node order
  std::map<int, std::vector<std::string>> made;
  std::set<int> wanted_calls;
  for (const auto& f : calls.functional) wanted_calls.insert(f.call);
  std::vector<int> order;
  for (const auto& n : g.nodes()) order.push_back(n.topo_index);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return g.nodes()[a].file_index < g.nodes()[b].file_index; });
  std::set<std::string> capturable;
  for (const auto& t : onnx_side.tensors()) capturable.insert(t.name);
  std::vector<std::string> fetch;
  for (int k : order) {
    const NodeInfo& node = g.nodes()[k];
    int c = graph.owner(k);
    if (c < 0 || !wanted_calls.count(c) || !graph.certain(c)) continue;
    for (const auto& o : node.outputs) {
      if (o.empty() || !graph.dynamic(o) || !capturable.count(o)) continue;
      made[c].push_back(o);
      fetch.push_back(o);
    }
  }
  std::unordered_map<std::string, Meta> meta;
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, fetch, calls.fetch_budget, [&](const RunOutput& o) {
    if (!o.tensor.empty()) meta[o.name] = {o.tensor.dtype(), o.tensor.shape()};
  }));
  auto producer = [&](const std::string& t) -> const NodeInfo* {
    const TensorEntry* e = g.Find(t);
    return e == nullptr || e->producer < 0 ? nullptr : &g.nodes()[e->producer];
  };

  // candidates per record: ordered windows within each call
  const auto& fs = calls.functional;
  std::vector<std::vector<std::string>> window(fs.size());
  std::vector<std::string> why(fs.size());
  // a record that holds exactly the values of an output of a call its call made (`total = 0;
  // total = total + block(x)` starts with 0 + x): the exporter leaves no node for it, so it
  // takes no place in the call's node order
  static const std::set<std::string> can_be_identity = {"add", "sub", "mul", "div"};
  std::vector<bool> identity(fs.size(), false);
  for (size_t i = 0; i < fs.size(); ++i) {
    const TorchFunctional& f = fs[i];
    if (f.input >= 0 || !f.known_type || !can_be_identity.count(f.function)) continue;
    std::vector<std::string> names = {f.tensor};
    for (const auto& t : calls.tensors) {
      if (t.known_type && t.call >= 0 && calls.calls[t.call].parent == f.call &&
          t.dtype == f.dtype && t.shape == f.shape)
        names.push_back(t.name);
    }
    if (names.size() < 2) continue;
    auto tv = torch_side.Fetch(names);  // a value the capture lacks: no identity
    for (size_t k = 1; tv.ok() && k < tv->size() && !identity[i]; ++k) {
      if (!(*tv)[0].tensor.empty() && !(*tv)[k].tensor.empty() &&
          (*tv)[0].tensor.BitwiseEqual((*tv)[k].tensor)) {
        identity[i] = true;
        why[i] = "holds exactly the values of " + (*tv)[k].name +
                 " (an addition of 0 or the like): the exporter leaves no node for it";
      }
    }
  }
  std::map<int, std::vector<size_t>> by_call;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].input < 0 && !identity[i]) by_call[fs[i].call].push_back(i);
  }
  for (const auto& [c, members] : by_call) {
    const std::vector<std::string>& ts = made[c];
    std::vector<std::vector<int>> fits(members.size());
    for (size_t m = 0; m < members.size(); ++m) {
      const TorchFunctional& f = fs[members[m]];
      const auto& ops = OpsForFunction(f.function);
      if (!graph.certain(c)) {
        why[members[m]] = "the call's nodes are not known (repeated calls of its scope)";
        continue;
      }
      if (ops.empty()) {
        why[members[m]] = "no ONNX op is known to make '" + f.function + "'";
        continue;
      }
      if (!f.known_type) {
        why[members[m]] = "its dtype and shape are not recorded";
        continue;
      }
      for (size_t p = 0; p < ts.size(); ++p) {
        const NodeInfo* node = producer(ts[p]);
        auto mt = meta.find(ts[p]);
        if (node == nullptr || mt == meta.end() || mt->second.dtype != f.dtype ||
            mt->second.shape != f.shape ||
            std::find(ops.begin(), ops.end(), node->op_type) == ops.end())
          continue;
        fits[m].push_back(static_cast<int>(p));
      }
      if (fits[m].empty())
        why[members[m]] = "no tensor of its type made by the call's own nodes comes from " +
                          std::string("an op that computes '") + f.function + "'";
    }
    std::vector<std::vector<int>> w = OrderedWindows(fits);
    for (size_t m = 0; m < members.size(); ++m) {
      std::vector<std::string> names;
      for (int p : w[m]) names.push_back(ts[p]);
      // a decomposition's inner nodes (linear's MatMul before its Add): a candidate read only by
      // another candidate of the same record is not the function's value
      if (names.size() > 1) {
        std::set<int> producers;
        for (const auto& x : names) producers.insert(producer(x)->topo_index);
        std::vector<std::string> last;
        for (const auto& x : names) {
          const TensorEntry* e = g.Find(x);
          bool inner = e != nullptr && !e->consumers.empty();
          for (int k : e == nullptr ? std::vector<int>{} : e->consumers)
            inner = inner && producers.count(k) && k != e->producer;
          if (!inner) last.push_back(x);
        }
        if (!last.empty()) names = std::move(last);
      }
      window[members[m]] = std::move(names);
    }
  }

  // several candidates: values choose
  std::vector<size_t> open;
  std::set<std::string> onnx_names;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (window[i].size() < 2) continue;
    open.push_back(i);
    onnx_names.insert(window[i].begin(), window[i].end());
  }
  std::vector<int> chosen(fs.size(), -1);
  std::vector<double> confidence(fs.size(), 1);
  for (size_t i = 0; i < fs.size(); ++i) {
    if (window[i].size() == 1) chosen[i] = 0;
  }
  if (!open.empty()) {
    std::vector<std::string> tnames;
    for (size_t i : open) tnames.push_back(fs[i].tensor);
    OP_ASSIGN_OR_RETURN(auto tv, torch_side.Fetch(tnames));
    std::unordered_map<std::string, const Tensor*> tval;
    for (const auto& o : tv) tval[o.name] = &o.tensor;
    std::unordered_map<std::string, std::vector<double>> dist;
    for (size_t i : open) dist[fs[i].tensor].assign(window[i].size(), HUGE_VAL);
    std::vector<std::string> on(onnx_names.begin(), onnx_names.end());
    OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, on, calls.fetch_budget, [&](const RunOutput& o) {
      if (o.tensor.empty()) return;
      for (size_t i : open) {
        auto t = tval.find(fs[i].tensor);
        if (t == tval.end()) continue;
        for (size_t k = 0; k < window[i].size(); ++k) {
          if (window[i][k] == o.name)
            dist[fs[i].tensor][k] = RelativeDistance(*t->second, o.tensor);
        }
      }
    }));
    for (size_t i : open) {
      const auto& d = dist[fs[i].tensor];
      std::string w;
      int k = ChooseByValue(d, &w);
      if (k < 0) {
        why[i] = w;
        continue;
      }
      chosen[i] = k;
      confidence[i] = std::max(0.0, 1.0 - d[k]);
      why[i] = "values chose among " + std::to_string(d.size()) + " structural candidates" +
               (w.empty() ? "" : " (" + w + ")");
    }
  }

  std::vector<std::string> target(fs.size());
  for (size_t i = 0; i < fs.size(); ++i) {
    if (chosen[i] >= 0) target[i] = window[i][chosen[i]];
  }
  // a function's arguments: the inputs of the node that made its output, when that node computes
  // the whole function (OneNode); a decomposition's first node reads them
  std::map<std::tuple<int, std::string, int>, size_t> output_of;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].input < 0) output_of[{fs[i].call, fs[i].function, fs[i].ordinal}] = i;
  }
  std::vector<std::string> more;
  std::vector<const NodeInfo*> node_of(fs.size(), nullptr);
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].input < 0) continue;
    auto o = output_of.find({fs[i].call, fs[i].function, fs[i].ordinal});
    if (o == output_of.end() || target[o->second].empty()) {
      why[i] = "the function's output has no counterpart";
      continue;
    }
    const NodeInfo* made = producer(target[o->second]);
    if (made == nullptr || !OneNode(fs[i].function, made->op_type)) {
      why[i] = "the function's output is the last node of a decomposition (" +
               (made != nullptr ? made->op_type : std::string("?")) +
               "): its inputs are not the function's arguments";
      continue;
    }
    node_of[i] = made;
    for (const auto& x : node_of[i]->inputs) {
      if (!x.empty() && graph.dynamic(x) && capturable.count(x) && !meta.count(x))
        more.push_back(x);
    }
  }
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, more, calls.fetch_budget, [&](const RunOutput& o) {
    if (!o.tensor.empty()) meta[o.name] = {o.tensor.dtype(), o.tensor.shape()};
  }));
  for (size_t i = 0; i < fs.size(); ++i) {
    const NodeInfo* node = node_of[i];
    if (node == nullptr) continue;
    const TorchFunctional& f = fs[i];
    std::vector<size_t> fit;
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      auto mt = meta.find(node->inputs[k]);
      if (f.known_type && mt != meta.end() && mt->second.dtype == f.dtype &&
          mt->second.shape == f.shape)
        fit.push_back(k);
    }
    // several inputs of its type: the exporter keeps the argument's position
    if (fit.size() > 1 &&
        std::find(fit.begin(), fit.end(), static_cast<size_t>(f.input)) != fit.end())
      fit = {static_cast<size_t>(f.input)};
    if (fit.size() == 1) {
      target[i] = node->inputs[fit[0]];
      why[i] = "input " + std::to_string(fit[0]) + " of " + node->op_type + " " + node->name +
               ", which makes the function's output";
    } else {
      why[i] = fit.empty() ? "no input of " + node->op_type + " " + node->name + " is of its type"
                           : "several inputs of " + node->name + " are of its type";
    }
  }

  // rows; a tensor another row already pairs is not paired twice
  std::unordered_map<std::string, std::string> claimed;
  for (const auto& r : al->rows) {
    if (!r.onnx_tensor.empty()) claimed.emplace(r.onnx_tensor, r.torch_name);
  }
  for (size_t i = 0; i < fs.size(); ++i) {
    const TorchFunctional& f = fs[i];
    const TorchCall& call = calls.calls[f.call];
    AlignmentRow row = CallRow(call, f.tensor, -1);
    row.inside = true;
    std::string what = (f.input < 0 ? "" : "argument " + std::to_string(f.input) + " of ") +
                       "the " + Ordinal(f.ordinal) + " '" + f.function + "' run inside the call";
    if (target[i].empty()) {
      row.note =
          what + ": " +
          (why[i].empty() ? "no candidate among the call's own nodes in call order" : why[i]);
      al->rows.push_back(std::move(row));
      continue;
    }
    const std::string& t = target[i];
    // the same ONNX tensor as another row (a function whose value is also a call's argument):
    // that row compares it already
    if (claimed.count(t)) continue;
    const NodeInfo* node = producer(t);
    row.onnx_tensor = t;
    row.method = AlignMethod::kFunctional;
    row.confidence = confidence[i];
    if (f.input < 0) {
      row.note = what + ": made by " + (node != nullptr ? node->op_type : std::string("a node")) +
                 " among the call's own nodes, in call order" +
                 (why[i].empty() ? "" : "; " + why[i]);
    } else {
      row.note = what + ": " + why[i];
    }
    claimed.emplace(t, f.tensor);
    al->rename[row.torch_name] = t;
    al->rows.push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace onnxprobe::align
