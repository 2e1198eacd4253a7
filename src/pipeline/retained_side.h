// Internal: a side whose fetched tensors are kept for the rest of one comparison run, so
// localization and tie checks read side A's values from memory instead of running it again.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Wraps `inner` for one run. Every tensor a Fetch returns is kept (its buffer is shared, not
// copied); a later Fetch whose names are all kept is answered from them. Only without a memory
// budget: then the comparison holds every tensor of both sides at once anyway (one batch), so
// keeping side A's afterwards stays below that peak, but for the tensors AlsoFetch adds (held
// through side B's run). SetInputs forgets them.
class RetainedSide : public Side {
 public:
  explicit RetainedSide(Side& inner) : inner_(inner) {}
  // Tensors the next Fetch that runs the side also captures with the names asked for, kept for
  // later fetches (what localization will read); until SetInputs.
  void AlsoFetch(std::vector<std::string> names) { also_ = std::move(names); }
  const SideInfo& info() const override { return inner_.info(); }
  const std::vector<SideTensor>& tensors() const override { return inner_.tensors(); }
  const Model* model() const override { return inner_.model(); }
  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    return inner_.RecordedInputs();
  }
  Status SetInputs(const std::vector<NamedTensor>& inputs) override;
  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override;
  size_t runs() const override { return inner_.runs(); }
  Expected<std::vector<RunOutput>> RunOther(
      const std::string& model_bytes, const std::string& model_dir,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override {
    return inner_.RunOther(model_bytes, model_dir, inputs, outputs);
  }
  const std::vector<std::string>& hidden() const override { return inner_.hidden(); }
  SessionOptions session_options() const override { return inner_.session_options(); }

 private:
  Side& inner_;
  std::vector<std::string> also_;
  std::map<std::string, RunOutput> kept_;
};

}  // namespace onnxprobe
