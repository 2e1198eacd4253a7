#include "pipeline/retained_side.h"

#include <set>

namespace onnxprobe {

Status RetainedSide::SetInputs(const std::vector<NamedTensor>& inputs) {
  kept_.clear();
  also_.clear();
  return inner_.SetInputs(inputs);
}

Expected<std::vector<RunOutput>> RetainedSide::Fetch(const std::vector<std::string>& names) {
  std::vector<std::string> missing;
  for (const auto& n : names) {
    if (!kept_.count(n)) missing.push_back(n);
  }
  if (!missing.empty()) {
    std::set<std::string> asked(missing.begin(), missing.end());
    for (const auto& n : also_)
      if (asked.insert(n).second) missing.push_back(n);
    also_.clear();
    OP_ASSIGN_OR_RETURN(auto got, inner_.Fetch(missing));
    for (auto& o : got) {
      std::string name = o.name;
      kept_[name] = std::move(o);
    }
  }
  std::vector<RunOutput> out;
  out.reserve(names.size());
  for (const auto& n : names) {
    auto it = kept_.find(n);
    if (it == kept_.end())
      return BackendError("side " + info().path + " did not return '" + n + "'");
    out.push_back(it->second);
  }
  return out;
}

}  // namespace onnxprobe
