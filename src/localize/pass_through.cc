#include "localize/pass_through.h"

#include <map>
#include <set>

namespace onnxprobe {
namespace {

// Element-wise arithmetic without attributes, and Concat (an axis only): every value input
// counts.
bool Arithmetic(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Neg" ||
         op == "Identity" || op == "Concat";
}

// Data movement whose other inputs give a shape or a window only: the data input (0) counts.
bool Movement(const std::string& op) {
  return op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Expand" ||
         op == "Flatten" || op == "Transpose" || op == "Slice" || op == "ReorderOutput" ||
         op == "ReorderInput";  // ONNX Runtime's blocked layout
}

// Element-wise functions of one input without attributes: given the right input they give the
// right output, so an error they show was made before them.
bool Unary(const std::string& op) {
  static const std::set<std::string> ops = {
      "Erf", "Sqrt", "Exp",        "Log",      "Tanh",     "Sigmoid", "Relu", "Abs",
      "Sin", "Cos",  "Reciprocal", "Softplus", "Softsign", "Floor",   "Ceil", "Sign"};
  return ops.count(op) > 0;
}

// Values that depend on shapes only (zeros_like is ConstantOfShape of a Shape).
bool Source(const std::string& op) {
  return op == "Constant" || op == "Shape" || op == "Size" || op == "ConstantOfShape";
}

class Trust {
 public:
  Trust(const GraphIndex& idx, const std::set<int>& nodes, const std::set<std::string>& fed)
      : idx_(idx), nodes_(nodes), fed_(fed) {}

  bool Fixed(const std::string& x) {
    if (x.empty() || fed_.count(x)) return true;
    const TensorEntry* e = idx_.Find(x);
    if (e == nullptr) return false;
    if (e->kind == TensorKind::kInitializer || e->kind == TensorKind::kGraphInput) return true;
    if (e->producer < 0 || !nodes_.count(e->producer)) return false;
    auto memo = memo_.find(e->producer);
    if (memo != memo_.end()) return memo->second;
    memo_[e->producer] = false;  // cycles cannot occur in a DAG; guards recursion anyway
    const NodeInfo& n = idx_.nodes()[e->producer];
    bool fixed = Source(n.op_type);
    if (!fixed && (Arithmetic(n.op_type) || Movement(n.op_type))) {
      fixed = true;
      for (const auto& in : Values(n)) fixed = fixed && Fixed(in);
    }
    memo_[e->producer] = fixed;
    return fixed;
  }

  static std::vector<std::string> Values(const NodeInfo& n) {
    if (Movement(n.op_type)) return {n.inputs.empty() ? std::string() : n.inputs[0]};
    return n.inputs;
  }

 private:
  const GraphIndex& idx_;
  const std::set<int>& nodes_;
  const std::set<std::string>& fed_;
  std::map<int, bool> memo_;
};

// Nothing computed reaches `out`: only fixed values, moved and combined by pass-through nodes.
// The error is then in a fixed value or in how a node moves values (a Transpose's perm, a
// Concat's input order, a Slice's window): the earliest such node of the set on the way to
// `out`, when it is not `out` itself; else -1.
int MovesValues(const GraphIndex& idx, const std::set<int>& in_set, int out) {
  static const std::set<std::string> moving = {"Transpose", "Slice", "Concat"};
  std::vector<int> todo = {out};
  std::set<int> seen = {out};
  int earliest = -1;
  for (size_t k = 0; k < todo.size(); ++k) {
    const NodeInfo& n = idx.nodes()[todo[k]];
    if (!Arithmetic(n.op_type) && !Movement(n.op_type)) continue;
    if (moving.count(n.op_type) && todo[k] != out &&
        (earliest < 0 || n.topo_index < idx.nodes()[earliest].topo_index))
      earliest = todo[k];
    for (const auto& in : Trust::Values(n)) {
      const TensorEntry* e = in.empty() ? nullptr : idx.Find(in);
      if (e != nullptr && e->producer >= 0 && in_set.count(e->producer) &&
          seen.insert(e->producer).second)
        todo.push_back(e->producer);
    }
  }
  return earliest;
}

// `unary` reads a value made from fixed values only: the arithmetic node making it (through
// data movement) used a wrong constant or operand order; with none, `unary` itself.
int FixedInputMaker(const GraphIndex& idx, const std::set<int>& in_set, int unary) {
  const NodeInfo& n = idx.nodes()[unary];
  const TensorEntry* e = n.inputs.empty() ? nullptr : idx.Find(n.inputs[0]);
  for (size_t steps = 0; e != nullptr && steps <= in_set.size(); ++steps) {
    if (e->producer < 0 || !in_set.count(e->producer)) break;
    const NodeInfo& p = idx.nodes()[e->producer];
    if (Arithmetic(p.op_type) && p.op_type != "Identity" && p.op_type != "Concat")
      return e->producer;
    if (!Movement(p.op_type) && p.op_type != "Identity") break;
    e = p.inputs.empty() ? nullptr : idx.Find(p.inputs[0]);
  }
  return unary;
}

}  // namespace

int PassThroughSource(const GraphIndex& idx, const std::vector<int>& nodes,
                      const std::set<std::string>& fed, const std::string& output) {
  std::set<int> in_set(nodes.begin(), nodes.end());
  const TensorEntry* t = idx.Find(output);
  if (t == nullptr || !in_set.count(t->producer)) return -1;
  Trust trust(idx, in_set, fed);
  int cur = t->producer;
  for (size_t steps = 0; steps <= nodes.size(); ++steps) {
    const NodeInfo& n = idx.nodes()[cur];
    bool unary = Unary(n.op_type);
    if (!unary && !Arithmetic(n.op_type) && !Movement(n.op_type)) break;
    std::string passed;
    int open = 0;
    for (const auto& in : Trust::Values(n)) {
      if (trust.Fixed(in)) continue;
      passed = in;
      ++open;
    }
    if (open == 0 && unary) {
      int k = FixedInputMaker(idx, in_set, cur);
      return k == t->producer ? -1 : k;
    }
    if (open == 0) return steps == 0 ? MovesValues(idx, in_set, cur) : -1;
    if (open != 1) break;
    const TensorEntry* e = idx.Find(passed);
    if (e == nullptr || e->producer < 0 || !in_set.count(e->producer)) break;
    cur = e->producer;
  }
  return cur == t->producer ? -1 : cur;
}

}  // namespace onnxprobe
