// Internal: one side's decoder run one step at a time, its cache carried from step to step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend.h"
#include "onnxprobe/generate/generate.h"
#include "onnxprobe/tensor_proto.h"

namespace onnxprobe {

// The cache after some steps: one tensor per CacheSlot, `length` positions along each seq axis.
struct DecoderCache {
  std::vector<Tensor> tensors;
  int64_t length = 0;
};

struct DecoderStep {
  Tensor logits;                // the last position's logits, float32 [vocab]
  std::vector<Tensor> present;  // per CacheSlot, as the model returned them
};

class DecoderSession {
 public:
  // Loads the model, finds its roles (`side.io` hints) and opens a session. `label` ("side A")
  // prefixes errors.
  static Expected<std::unique_ptr<DecoderSession>> Open(const GenerateSide& side,
                                                        const std::string& label);
  const DecoderIo& io() const { return io_; }
  const Model& model() const { return model_; }
  std::string Describe() const;  // "m.onnx (onnxruntime 1.32.0, CPU, opt disabled)"

  // The cache before the first step: every slot with zero positions.
  Expected<DecoderCache> EmptyCache() const;
  // The model's inputs for `tokens` after `cache` (ids, mask of ones, positions, the cache).
  Expected<std::vector<NamedTensor>> StepInputs(const std::vector<int64_t>& tokens,
                                                const DecoderCache& cache) const;
  // Runs one step; `cache` becomes the presents.
  Expected<DecoderStep> Step(const std::vector<int64_t>& tokens, DecoderCache* cache);

 private:
  DecoderSession(Model model, DecoderIo io) : model_(std::move(model)), io_(std::move(io)) {}
  Model model_;
  DecoderIo io_;
  GenerateSide side_;
  std::string label_;
  std::shared_ptr<Backend> backend_;
  std::unique_ptr<BackendSession> session_;
  std::vector<std::string> fetch_;
};

// `t` as float32 (float16/bfloat16/float64 converted; float32 shared).
Expected<Tensor> AsFloat32(const Tensor& t);
// The positions [from, to) of `t` along `axis`, copied.
Expected<Tensor> SliceAxis(const Tensor& t, int axis, int64_t from, int64_t to);

}  // namespace onnxprobe
