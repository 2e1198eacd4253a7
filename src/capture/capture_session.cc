#include <algorithm>
#include <functional>

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

Expected<std::vector<std::string>> TensorsBreakingCompilation(
    const Model& model, Backend& backend, const std::vector<std::string>& marked,
    const SessionOptions& options, const Status& failed) {
  if (failed.code() != ErrorCode::kBackend || !OpenMarkedSession(model, backend, {}, options).ok())
    return failed;  // not the marking's doing
  std::vector<std::string> refused;
  std::function<void(const std::vector<std::string>&)> halve =
      [&](const std::vector<std::string>& part) {
        if (part.empty() || OpenMarkedSession(model, backend, part, options).ok()) return;
        if (part.size() == 1) {
          refused.push_back(part[0]);
          return;
        }
        auto mid = part.begin() + static_cast<std::ptrdiff_t>(part.size() / 2);
        halve(std::vector<std::string>(part.begin(), mid));
        halve(std::vector<std::string>(mid, part.end()));
      };
  halve(marked);
  std::vector<std::string> rest;
  for (const auto& n : marked)
    if (std::find(refused.begin(), refused.end(), n) == refused.end()) rest.push_back(n);
  if (refused.empty() || !OpenMarkedSession(model, backend, rest, options).ok())
    return failed;  // no tensor alone breaks it: the error as it came
  return refused;
}

std::string DescribeUnmarkable(const std::vector<std::string>& refused, size_t marked,
                               const std::string& provider) {
  std::string names;
  for (size_t i = 0; i < refused.size() && i < 8; ++i) names += (i ? ", " : "") + refused[i];
  if (refused.size() > 8) names += ", ... " + std::to_string(refused.size() - 8) + " more";
  return std::to_string(refused.size()) + " of " + std::to_string(marked) +
         " tensors marked as outputs break " + FullProviderName(provider) +
         "'s compilation (each alone; not captured, the tensors around them are): " + names;
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
