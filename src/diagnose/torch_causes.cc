// Causes in a PyTorch side A: module calls that computed as in training mode although the
// companion ran the model in eval mode (random numbers drawn, buffers written), read from the
// capture's module calls.
#include <set>

#include "align/torch_calls.h"
#include "diagnose/causes.h"

namespace onnxprobe::diagnose {
namespace {

bool Within(const align::TorchCalls& tc, int call, int ancestor) {
  for (int k = call; k >= 0; k = tc.calls[k].parent) {
    if (k == ancestor) return true;
  }
  return false;
}

// The calls whose code made the capture tensor `name`: its producing call and every call under
// it; for an argument made between module calls (a call input), the parent's own code and the
// children it called before. Empty when the capture does not know the tensor.
std::vector<int> MakersOf(const align::TorchCalls& tc, const std::string& name) {
  int call = -1, before = -1;
  for (const auto& t : tc.tensors) {
    if (t.name == name) call = t.call;
  }
  for (const auto& f : tc.functional) {
    if (f.tensor == name) call = f.call;
  }
  for (const auto& x : tc.call_inputs) {
    if (x.tensor == name && x.call >= 0 && x.call < static_cast<int>(tc.calls.size()))
      call = tc.calls[x.call].parent, before = x.call;
  }
  std::vector<int> out;
  if (call < 0 || call >= static_cast<int>(tc.calls.size())) return out;
  for (int k = call; k < static_cast<int>(tc.calls.size()); ++k) {
    if (before >= 0 && k >= before) break;
    if (Within(tc, k, call)) out.push_back(k);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void TorchCauses(Ctx& cx, std::vector<Finding>* found) {
  const LocalizeResult* l = cx.in.localization;
  if (l == nullptr || l->culprits.empty()) return;
  auto tc = align::ReadTorchCalls(cx.in.a.path, {});
  if (!tc.ok()) return;  // the comparison read it already: nothing new to say
  std::set<int> named;   // a call is named once, at its first culprit
  for (const Culprit& c : l->culprits) {
    if (!c.introduced && c.evidence != Evidence::kIsolation) continue;
    std::vector<std::string> drew, wrote, modules;
    for (int k : MakersOf(*tc, c.tensor)) {
      const align::TorchCall& call = tc->calls[k];
      if ((!call.rng_draws && call.buffers_written.empty()) || !named.insert(k).second) continue;
      modules.push_back(call.module);
      if (call.rng_draws) drew.push_back(call.module);
      wrote.insert(wrote.end(), call.buffers_written.begin(), call.buffers_written.end());
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
