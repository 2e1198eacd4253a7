#include "onnxprobe/engine/index_ties.h"

#include <cmath>
#include <unordered_map>

#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// Every differing index pair picks tied values of `x` along `axis`; `differing` counts them.
bool OnlyTies(const Tensor& ia, const Tensor& ib, const Tensor& x, int64_t along, bool keepdims,
              const Tolerance& tol, uint64_t* differing, double* worst) {
  if (ia.empty() || ib.empty() || x.empty()) return false;
  const Shape& xs = x.shape();
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = along < 0 ? along + rank : along;
  if (axis < 0 || axis >= rank || ia.shape() != ib.shape()) return false;
  // the index tensor's shape with the axis kept (size k, or 1 for ArgMax/ArgMin)
  Shape is = ia.shape();
  if (!keepdims) is.insert(is.begin() + axis, 1);
  if (static_cast<int64_t>(is.size()) != rank) return false;
  for (int64_t d = 0; d < rank; ++d) {  // the index tensor spans x except along the axis
    if (d == axis ? is[d] > xs[d] : is[d] != xs[d]) return false;
  }
  if (ib.num_elements() != ia.num_elements() || x.num_elements() == 0) return false;
  std::vector<uint64_t> x_stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) x_stride[d] = x_stride[d + 1] * xs[d + 1];
  const uint64_t n = ia.num_elements();
  std::vector<int64_t> coord(rank, 0);
  *differing = 0;
  *worst = 0;
  for (uint64_t p = 0; p < n; ++p) {
    if (p > 0) {  // next coordinate in the index tensor's shape
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++coord[d] < is[d]) break;
        coord[d] = 0;
      }
    }
    auto ja = static_cast<int64_t>(ElementAsDouble(ia, p));
    auto jb = static_cast<int64_t>(ElementAsDouble(ib, p));
    if (ja == jb) continue;
    ++*differing;
    if (ja < 0 || jb < 0 || ja >= xs[axis] || jb >= xs[axis]) return false;
    uint64_t base = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) base += coord[d] * x_stride[d];
    }
    double va = ElementAsDouble(x, base + ja * x_stride[axis]);
    double vb = ElementAsDouble(x, base + jb * x_stride[axis]);
    double allowed = tol.atol + tol.rtol * std::max(std::fabs(va), std::fabs(vb));
    if (!(std::fabs(va - vb) <= allowed)) return false;
    if (allowed > 0) *worst = std::max(*worst, std::fabs(va - vb) / allowed);
  }
  return *differing > 0;
}

}  // namespace

bool IsIndexOutput(const NodeInfo& n, const std::string& tensor) {
  if (n.inputs.empty() || n.inputs[0].empty() || tensor.empty()) return false;
  if (n.op_type == "TopK") return n.outputs.size() > 1 && n.outputs[1] == tensor;
  return (n.op_type == "ArgMax" || n.op_type == "ArgMin") && n.outputs[0] == tensor;
}

bool OnlyIndexTies(const Model& graph, const NodeInfo& n, const Tensor& expected,
                   const Tensor& observed, const Tensor& x, const Tolerance& tol,
                   uint64_t* differing, double* ratio) {
  double worst = 0;
  bool ties =
      n.op_type == "TopK"
          ? OnlyTies(expected, observed, x, NodeIntAttribute(graph, n, "axis", -1), true, tol,
                     differing, &worst)
          : OnlyTies(expected, observed, x, NodeIntAttribute(graph, n, "axis", 0),
                     NodeIntAttribute(graph, n, "keepdims", 1) != 0, tol, differing, &worst);
  if (ratio != nullptr) *ratio = worst;
  return ties;
}

void SettleIndexTies(Side& a, Side& b, const Model& graph, ComparisonResult* r) {
  const GraphIndex& g = graph.index();
  std::vector<std::pair<size_t, const NodeInfo*>> rows;  // failing index rows, their node
  for (size_t i = 0; i < r->rows.size(); ++i) {
    const TensorResult& row = r->rows[i];
    if (row.pass || row.state != RowState::kCompared) continue;
    const TensorEntry* e = g.Find(row.name_b);
    if (e == nullptr || e->producer < 0) continue;
    const NodeInfo& n = g.nodes()[e->producer];
    if (IsIndexOutput(n, row.name_b)) rows.emplace_back(i, &n);
  }
  for (const auto& [i, node] : rows) {
    TensorResult& row = r->rows[i];
    auto va = a.Fetch({row.name});
    auto vb = b.Fetch({row.name_b, node->inputs[0]});
    if (!va.ok() || !vb.ok() || va->size() != 1 || vb->size() != 2) continue;
    uint64_t differing = 0;
    double ratio = 0;
    if (!OnlyIndexTies(graph, *node, (*va)[0].tensor, (*vb)[0].tensor, (*vb)[1].tensor,
                       row.tolerance, &differing, &ratio))
      continue;
    row.pass = true;
    row.tolerance_ratio = ratio;  // of the tied values, which decided
    row.reason = "indices differ at " + std::to_string(differing) + " of " +
                 std::to_string((*va)[0].tensor.num_elements()) + " positions, each between " +
                 "values of " + node->inputs[0] + " that tie within tolerance: " + node->op_type +
                 " broke the ties differently";
  }
}

}  // namespace onnxprobe
