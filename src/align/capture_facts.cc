// ReadCaptureFacts (align.h): the companion's per-call records of random draws and buffer writes,
// gathered over the calls whose code made each tensor, and the precision it computed in.
#include "align/torch_calls.h"
#include "onnxprobe/align/align.h"

namespace onnxprobe {
namespace {

bool Within(const align::TorchCalls& tc, int call, int ancestor) {
  for (int k = call; k >= 0; k = tc.calls[k].parent) {
    if (k == ancestor) return true;
  }
  return false;
}

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

}  // namespace

Expected<CaptureFacts> ReadCaptureFacts(const std::string& capture_path,
                                        const std::vector<std::string>& tensors) {
  OP_ASSIGN_OR_RETURN(align::TorchCalls tc, align::ReadTorchCalls(capture_path, {}));
  CaptureFacts out;
  out.autocast = tc.autocast;
  for (const auto& name : tensors) {
    std::vector<int> makers = MakersOf(tc, name);  // the making call first
    std::vector<TrainingRemnant> found;
    for (int k : makers) {
      const align::TorchCall& c = tc.calls[k];
      if (c.rng_draws || !c.buffers_written.empty())
        found.push_back({c.module, c.rng_draws, c.buffers_written});
    }
    out.remnants.push_back(std::move(found));
    std::string origin;
    if (!makers.empty()) {
      const align::TorchCall& c = tc.calls[makers.front()];
      origin = "module " + c.module + (c.source.empty() ? "" : " called at " + c.source);
    }
    out.origins.push_back(origin);
    auto d = tc.torch_dtypes.find(name);
    out.torch_dtypes.push_back(d != tc.torch_dtypes.end() ? d->second : "");
  }
  return out;
}

}  // namespace onnxprobe
