// Causes in a PyTorch side A: module calls that computed as in training mode although the
// companion ran the model in eval mode (random numbers drawn, buffers written), read from the
// capture's module calls.
#include <set>

#include "diagnose/causes.h"
#include "onnxprobe/align.h"

namespace onnxprobe::diagnose {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void TorchCauses(Ctx& cx, std::vector<Finding>* found) {
  const LocalizeResult* l = cx.in.localization;
  if (l == nullptr || l->culprits.empty()) return;
  std::vector<std::string> tensors;
  for (const Culprit& c : l->culprits) tensors.push_back(c.tensor);
  auto remnants = TrainingRemnants(cx.in.a.path, tensors);
  if (!remnants.ok()) return;  // the comparison read the capture already: nothing new to say
  std::set<std::string> named;  // a module is named once, at its first culprit
  for (size_t i = 0; i < l->culprits.size(); ++i) {
    const Culprit& c = l->culprits[i];
    if (!c.introduced && c.evidence != Evidence::kIsolation) continue;
    std::vector<std::string> drew, wrote, modules;
    for (const TrainingRemnant& r : (*remnants)[i]) {
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
