// Causes in a PyTorch side A, from what the companion recorded at capture: module calls that
// computed as in training mode although the model ran in eval mode (random numbers drawn, buffers
// written), and tensors PyTorch computed in a lower precision than the ONNX model.
#include <cmath>
#include <set>

#include "diagnose/causes.h"
#include "onnxprobe/align/align.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::diagnose {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Significant bits of a reduced precision (0: not one).
int ReducedBits(const std::string& dtype) {
  return dtype == "bfloat16" ? 8 : dtype == "float16" ? 11 : 0;
}

// PyTorch computed the culprit's tensor in bfloat16 or float16 (autocast, .half()) and the ONNX
// model in float32 or wider: the reference itself carries that precision's rounding.
void CapturePrecision(const Ctx& cx, const Culprit& c, const std::string& torch_dtype,
                      const CaptureFacts& facts, std::vector<Finding>* found) {
  const ComparisonResult* r = cx.in.comparison;
  if (c.row < 0 || r == nullptr || c.row >= static_cast<int>(r->rows.size())) return;
  const TensorMetrics& m = r->rows[c.row].metrics;
  std::string a = !torch_dtype.empty() ? torch_dtype : DTypeName(m.dtype_a);
  std::string b = DTypeName(m.dtype_b);
  int bits = ReducedBits(a);
  if (bits == 0 || (b != "float32" && b != "float64")) return;
  Finding f;
  f.node = c.node;
  f.op_type = c.op_type;
  f.tensor = c.tensor;
  f.cause = Cause::kCapturePrecision;
  f.certainty = Certainty::kLikely;  // the precision is recorded; its share of the error is not
  std::string autocast;
  for (const auto& [device, dtype] : facts.autocast)
    autocast += (autocast.empty() ? "" : ", ") + device + " " + dtype;
  f.summary = "PyTorch computed " + c.tensor + " in " + a + " and the ONNX model computes it in " +
              b + ": the reference carries " + a + "'s rounding" +
              (autocast.empty() ? "" : " (autocast was on at capture: " + autocast + ")");
  f.evidence = "the capture records " + c.tensor + " computed in " + a +
               (torch_dtype.empty() ? "" : " (saved as float32)") + "; " + a + " keeps " +
               std::to_string(bits) + " significant bits (relative rounding up to " +
               FormatNumber(std::ldexp(1.0, -bits)) + "), the tensor's largest relative error is " +
               FormatNumber(m.max_rel);
  f.fix.summary =
      "capture in the precision the ONNX model computes in (without autocast, model.float()), "
      "or compare against a model exported in " +
      a;
  found->push_back(std::move(f));
}

}  // namespace

void TorchCauses(Ctx& cx, std::vector<Finding>* found) {
  const LocalizeResult* l = cx.in.localization;
  const CaptureFacts* facts = cx.in.capture;
  if (l == nullptr || facts == nullptr || facts->origins.size() != l->culprits.size()) return;
  std::set<std::string> named;  // a module is named once, at its first culprit
  for (size_t i = 0; i < l->culprits.size(); ++i) {
    const Culprit& c = l->culprits[i];
    if (!c.introduced && c.evidence != Evidence::kIsolation) continue;
    CapturePrecision(cx, c, facts->torch_dtypes[i], *facts, found);
    std::vector<std::string> drew, wrote, modules;
    for (const TrainingRemnant& r : facts->remnants[i]) {
      if (!named.insert(r.module).second) continue;
      modules.push_back(r.module);
      if (r.rng_draws) drew.push_back(r.module);
      wrote.insert(wrote.end(), r.buffers_written.begin(), r.buffers_written.end());
    }
    if (modules.empty()) continue;
    Finding f;
    f.node = c.node;
    f.op_type = c.op_type;
    f.tensor = c.tensor;
    f.cause = Cause::kTrainingMode;
    // the companion saw it happen during the call, with the model in eval mode
    f.certainty = Certainty::kConfirmed;
    std::string how;
    if (!drew.empty()) how = "drew random numbers (a dropout or sampling left on)";
    if (!wrote.empty())
      how += std::string(how.empty() ? "" : " and ") +
             "wrote its buffers (batch statistics or counters updated)";
    f.summary = "PyTorch computed " + Join(modules) + " as in training mode although the model " +
                "ran in eval mode: it " + how;
    f.evidence = "at capture (model.eval())";
    if (!drew.empty())
      f.evidence += ", torch's random number generator advanced inside the own code of " +
                    Join(drew) + " (not inside a child module)";
    if (!wrote.empty()) f.evidence += ", the buffers " + Join(wrote) + " changed during the call";
    f.evidence += "; the capture's " + c.tensor + " differs from the ONNX model's " +
                  (c.isolated ? "even with the module run alone" : "there");
    f.fix.summary =
        "make the module's code follow its mode (F.dropout(..., training=self.training), "
        "F.batch_norm(..., training=self.training)) or remove the random call, then export and "
        "capture again";
    found->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::diagnose
