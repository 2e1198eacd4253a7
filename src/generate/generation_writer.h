// Internal: a live side A's generation saved as it runs, in the folder format a saved run is
// read back from (saved_generation.cc; onnxprobe_torch.capture_generation writes the same).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/generate/generate.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

class GenerationWriter {
 public:
  // Starts writing into a temporary sibling of `path`; nothing appears at `path` before
  // Finish(), and the temporary is removed when the writer is destroyed unfinished.
  static Expected<std::unique_ptr<GenerationWriter>> Open(const std::string& path);
  ~GenerationWriter();
  // One step: the last position's logits and, per cache slot, the positions the step added.
  Status AddStep(const Tensor& logits, const DecoderIo& io, const std::vector<Tensor>& added);
  // generation.json, then the folder moved into place (replacing an earlier saved generation).
  Status Finish(const std::string& runtime, const DecoderIo& io, const std::vector<int64_t>& prompt,
                const std::vector<int64_t>& tokens, const std::vector<Tensor>& empty_cache);

 private:
  GenerationWriter() = default;
  std::string path_, tmp_;
  int steps_ = 0;
  bool done_ = false;
};

}  // namespace onnxprobe
