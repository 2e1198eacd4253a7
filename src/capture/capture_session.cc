#include <algorithm>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {

Expected<std::unique_ptr<CaptureSession>> CaptureSession::Create(
    const Model& model, Backend& backend, const std::vector<std::string>& tensors,
    const SessionOptions& options) {
  OP_ASSIGN_OR_RETURN(std::string bytes, MarkOutputs(model, tensors));
  auto cs = std::unique_ptr<CaptureSession>(new CaptureSession());
  OP_ASSIGN_OR_RETURN(cs->session_, backend.CreateSession(bytes, model.dir(), options));
  cs->fetch_ = tensors;
  for (const auto& o : model.summary().outputs) {
    if (std::find(cs->fetch_.begin(), cs->fetch_.end(), o.name) == cs->fetch_.end()) {
      cs->fetch_.push_back(o.name);
    }
  }
  return cs;
}

Status CaptureSession::Run(const std::vector<NamedTensor>& inputs) {
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& nt : inputs) refs.emplace_back(nt.name, &nt.tensor);
  return session_->RunInto(refs, fetch_, &outputs_);
}

}  // namespace onnxprobe
