// Quantized layers below the limit alone: an input whose quantization clips side A's values (a
// scale too small for what the layer meets; at a graph input, a calibration set that did not
// cover these inputs), with what each calibration method would give on side A's values.
#include <cmath>

#include "diagnose/causes.h"
#include "onnxprobe/format.h"

namespace onnxprobe::diagnose {
namespace {

// A range clips when its values beyond it cost more than 3 dB (half the noise power) over what
// the unclipped MinMax range of the same values gives: the range, not the step, limits it.
constexpr double kClippingMarginDb = 3.0;

std::string Db(double x) { return std::isfinite(x) ? FormatNumber(x) + " dB" : "inf dB"; }
std::string Range(double lo, double hi) {
  return "[" + FormatNumber(lo) + ", " + FormatNumber(hi) + "]";
}

}  // namespace

void QuantCauses(Ctx& cx, std::vector<Finding>* found) {
  const QuantReport* q = cx.in.quant;
  if (q == nullptr || !q->active()) return;
  size_t diagnosed = 0;
  for (const QuantLayer& l : q->layers) {
    if (!l.isolated || !l.below_limit) continue;
    if (diagnosed++ >= cx.options.max_cases) break;
    const InputQuantization& iq = l.input_quantization;
    bool clips = iq.measured && iq.saturated > 0 && iq.minmax_db > iq.sqnr_db + kClippingMarginDb;
    if (!clips) {
      Unexplained u{l.node_a, l.op_type, l.tensor_a,
                    iq.measured ? "its worst input (" + l.input_tensor + ") is not clipped (" +
                                      Db(iq.sqnr_db) + " through side B's quantization)"
                                : "no quantized input measured"};
      cx.unexplained.push_back(std::move(u));
      continue;
    }
    bool at_input = l.input_owner.empty();
    Finding f;
    f.node = l.node_a;
    f.op_type = l.op_type;
    f.tensor = l.tensor_a;
    f.cause = at_input ? Cause::kCalibrationRange : Cause::kQuantSaturation;
    f.certainty = l.input_caused ? Certainty::kConfirmed : Certainty::kLikely;
    std::string pct = FormatNumber(100 * iq.saturated) + "%";
    f.summary = at_input ? "the graph input " + l.input_tensor +
                               " reaches values beyond the range the model was calibrated for"
                         : "the quantization scale of " + l.input_tensor +
                               " is too small for the values it meets (they saturate)";
    f.evidence = "side A's " + l.input_tensor + " spans " + Range(iq.lo_a, iq.hi_a) +
                 "; side B's quantization of it represents " + Range(iq.lo_b, iq.hi_b) + " (" +
                 pct + " of the values clipped); SQNR through side B's quantization " +
                 Db(iq.sqnr_db) +
                 ", through the range calibration on these values would choose: MinMax " +
                 Db(iq.minmax_db) + ", Percentile " + Db(iq.percentile_db) + ", Entropy " +
                 Db(iq.entropy_db) + "; the layer alone: " + Db(l.sqnr_db) +
                 (l.input_caused ? ", within the limit with float inputs" : "");
    const char* best = "MinMax";
    double top = iq.minmax_db;
    if (iq.percentile_db > top) best = "Percentile", top = iq.percentile_db;
    if (iq.entropy_db > top) best = "Entropy", top = iq.entropy_db;
    f.fix.keep_float_nodes = {l.node_a};
    if (!l.input_owner.empty()) f.fix.keep_float_nodes.push_back(l.input_owner);
    std::string keep;
    for (const auto& n : f.fix.keep_float_nodes) keep += (keep.empty() ? "" : ", ") + n;
    f.fix.summary = at_input
                        ? "calibrate on data that covers the inputs the model meets (these reach " +
                              Range(iq.lo_a, iq.hi_a) + "), or keep " + keep +
                              " in float (onnxruntime.quantization nodes_to_exclude)"
                        : "keep " + keep +
                              " in float (onnxruntime.quantization nodes_to_exclude), or "
                              "calibrate with " +
                              best + " (" + Db(top) + " on these values)";
    found->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::diagnose
