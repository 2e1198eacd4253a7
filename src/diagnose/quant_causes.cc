// Quantized layers below the limit alone: a quantized tensor that clips side A's values (its
// scale too small for what the layer meets; at a graph input, a calibration set that did not
// cover these inputs), with what each calibration method would give on side A's values.
#include <algorithm>
#include <cmath>

#include "diagnose/causes.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::diagnose {
namespace {

// A range clips when its values beyond it cost more than 3 dB (half the noise power) over what
// the unclipped MinMax range of the same values gives: the range, not the step, limits it.
constexpr double kClippingMarginDb = 3.0;

std::string Db(double x) {
  if (std::isnan(x)) return "n/a";
  return std::isfinite(x) ? FormatNumber(x) + " dB" : std::string(x > 0 ? "inf" : "-inf") + " dB";
}
std::string Range(double lo, double hi) {
  return "[" + FormatNumber(lo) + ", " + FormatNumber(hi) + "]";
}

bool Clips(const TensorQuantization& q) {
  return q.measured && q.saturated > 0 && q.minmax_db > q.sqnr_db + kClippingMarginDb;
}

std::string Evidence(const std::string& tensor, const TensorQuantization& q) {
  return "side A's " + tensor + " spans " + Range(q.lo_a, q.hi_a) +
         "; side B's quantization of it represents " + Range(q.lo_b, q.hi_b) + " (" +
         FormatNumber(100 * q.saturated) + "% of the values clipped); SQNR through side B's " +
         "quantization " + Db(q.sqnr_db) +
         ", through the range calibration on these values would " + "choose: MinMax " +
         Db(q.minmax_db) + ", Percentile " + Db(q.percentile_db) + ", Entropy " + Db(q.entropy_db);
}

std::string BestMethod(const TensorQuantization& q) {
  std::string best = "MinMax";
  double top = q.minmax_db;
  if (q.percentile_db > top) best = "Percentile", top = q.percentile_db;
  if (q.entropy_db > top) best = "Entropy", top = q.entropy_db;
  return best + " (" + Db(top) + " on these values)";
}

// Graph position of a layer's node in side A's model (layers come ranked by error).
int Position(const Model* m, const std::string& node) {
  if (m == nullptr) return 0;
  const auto& nodes = m->index().nodes();
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k].name == node) return static_cast<int>(k);
  }
  return static_cast<int>(nodes.size());
}

// The nodes that keep `tensor` unquantized when kept in float: the layer's node, the tensor's
// producer and every node that reads it (a quantized tensor stays quantized while either side
// of it is).
std::vector<std::string> KeepFloat(const Model* m, const std::string& layer,
                                   const std::string& tensor) {
  std::vector<std::string> keep = {layer};
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(keep.begin(), keep.end(), n) == keep.end()) keep.push_back(n);
  };
  const TensorEntry* t = m != nullptr ? m->index().Find(tensor) : nullptr;
  if (t == nullptr) return keep;
  const auto& nodes = m->index().nodes();
  if (t->producer >= 0) add(nodes[t->producer].name);
  for (int k : t->consumers) add(nodes[k].name);
  return keep;
}

std::string Listed(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void QuantCauses(Ctx& cx, std::vector<Finding>* found) {
  const QuantReport* q = cx.in.quant;
  if (q == nullptr || !q->active()) return;
  // the layers below the limit alone, upstream first: an upstream layer's clipping is the root
  std::vector<const QuantLayer*> layers;
  for (const QuantLayer& l : q->layers) {
    if (l.isolated && l.below_limit) layers.push_back(&l);
  }
  std::stable_sort(layers.begin(), layers.end(), [&](const QuantLayer* x, const QuantLayer* y) {
    return Position(cx.in.a.model, x->node_a) < Position(cx.in.a.model, y->node_a);
  });
  if (layers.size() > cx.options.max_cases) layers.resize(cx.options.max_cases);
  for (const QuantLayer* lp : layers) {
    const QuantLayer& l = *lp;
    const TensorQuantization &in = l.input_quantization, &out = l.output_quantization;
    Finding f;
    f.node = l.node_a;
    f.op_type = l.op_type;
    f.tensor = l.tensor_a;
    const Model* ma = cx.in.a.model;
    const TensorEntry* src = ma != nullptr ? ma->index().Find(l.input_tensor) : nullptr;
    bool graph_input = src != nullptr && src->kind == TensorKind::kGraphInput;
    if (Clips(in) && graph_input) {
      // a graph input beyond the calibrated range: every activation after it scales with it,
      // so keeping nodes in float does not help; the calibration data must cover such inputs
      f.cause = Cause::kCalibrationRange;
      f.certainty = l.input_caused ? Certainty::kConfirmed : Certainty::kLikely;
      f.summary = "the graph input " + l.input_tensor +
                  " reaches values beyond the range the model was calibrated for";
      f.evidence = Evidence(l.input_tensor, in) + "; the layer alone: " + Db(l.sqnr_db) +
                   (l.input_caused ? ", within the limit with float inputs" : "");
      f.fix.summary =
          "calibrate again on data that covers the inputs the model meets (these reach " +
          Range(in.lo_a, in.hi_a) + "; the calibration covered " + Range(in.lo_b, in.hi_b) + ")";
    } else if (Clips(out) && !l.input_caused) {
      f.cause = Cause::kQuantSaturation;
      f.certainty = Certainty::kConfirmed;  // its inputs are quantized exactly as B does
      f.summary = "the quantization scale of " + l.tensor_a +
                  " (this layer's output) is too small for its values (they saturate)";
      f.evidence = Evidence(l.tensor_a, out) + "; the layer alone: " + Db(l.sqnr_db);
      f.fix.keep_float_nodes = KeepFloat(ma, l.node_a, l.tensor_a);
      f.fix.summary = "keep " + Listed(f.fix.keep_float_nodes) +
                      " in float (onnxruntime.quantization nodes_to_exclude), or calibrate with " +
                      BestMethod(out);
    } else if (Clips(in)) {
      f.cause = Cause::kQuantSaturation;
      f.certainty = l.input_caused ? Certainty::kConfirmed : Certainty::kLikely;
      f.summary = "the quantization scale of " + l.input_tensor +
                  " is too small for the values it meets (they saturate)";
      f.evidence = Evidence(l.input_tensor, in) + "; the layer alone: " + Db(l.sqnr_db) +
                   (l.input_caused ? ", within the limit with float inputs" : "");
      f.fix.keep_float_nodes = KeepFloat(ma, l.node_a, l.input_tensor);
      f.fix.summary = "keep " + Listed(f.fix.keep_float_nodes) +
                      " in float (onnxruntime.quantization nodes_to_exclude), or calibrate with " +
                      BestMethod(in);
    } else {
      std::string tried =
          "neither its output (" +
          (out.measured ? Db(out.sqnr_db) + ", " + FormatNumber(100 * out.saturated) + "% clipped"
                        : std::string("not quantized")) +
          ") nor its worst input " + l.input_tensor + " (" +
          (in.measured ? Db(in.sqnr_db) + ", " + FormatNumber(100 * in.saturated) + "% clipped"
                       : std::string("not measured")) +
          ") is clipped beyond what its steps cost";
      cx.unexplained.push_back({l.node_a, l.op_type, l.tensor_a, tried});
      continue;
    }
    found->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::diagnose
