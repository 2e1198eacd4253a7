#include <algorithm>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {

Expected<std::unique_ptr<BackendSession>> OpenMarkedSession(const Model& model, Backend& backend,
                                                            const std::vector<std::string>& marked,
                                                            const SessionOptions& options) {
  auto bytes = MarkOutputs(model, marked);
  if (!bytes.ok()) return bytes.status();
  auto session = backend.CreateSession(*bytes, model.dir(), options);
  if (!session.ok()) return session.status().WithContext(model.path());
  return std::move(*session);
}

Expected<std::unique_ptr<CaptureSession>> CaptureSession::Create(
    const Model& model, Backend& backend, const std::vector<std::string>& tensors,
    const SessionOptions& options) {
  auto cs = std::unique_ptr<CaptureSession>(new CaptureSession());
  OP_ASSIGN_OR_RETURN(cs->session_, OpenMarkedSession(model, backend, tensors, options));
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
