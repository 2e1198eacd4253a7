// Internal: one side of a generation run one step at a time, its cache carried from step to
// step: a decoder run live, or a saved run (PyTorch's, from the companion) replayed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/generate/generate.h"
#include "onnxprobe/tensor/tensor_proto.h"

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

// One side of a generation: a decoder run live, or a saved run replayed.
class DecoderSide {
 public:
  virtual ~DecoderSide() = default;
  virtual const DecoderIo& io() const = 0;
  virtual std::string Describe() const = 0;
  // The model run live; null for a saved run.
  virtual const Model* model() const { return nullptr; }
  // The cache before the first step: every slot with zero positions.
  virtual Expected<DecoderCache> EmptyCache() const = 0;
  // The model's inputs for `tokens` after `cache` (live sides; a saved run: kUnsupported).
  virtual Expected<std::vector<NamedTensor>> StepInputs(const std::vector<int64_t>& tokens,
                                                        const DecoderCache& cache) const = 0;
  // Runs one step; `cache` becomes the presents.
  virtual Expected<DecoderStep> Step(const std::vector<int64_t>& tokens, DecoderCache* cache) = 0;
  // Left padding (live sides): the first `n` cache positions are masked out and take position
  // id 0; later positions count from 0 after them.
  virtual void SetPadding(int n) { (void)n; }
  // A saved run: its prompt and tokens (a replay can only follow them); null when live.
  virtual const std::vector<int64_t>* saved_prompt() const { return nullptr; }
  virtual const std::vector<int64_t>* saved_tokens() const { return nullptr; }
  // A saved run: the folder of step `step`'s module-activation capture, "" when none.
  virtual std::string StepCapture(int step) const {
    (void)step;
    return "";
  }
};

// A saved run's folder (generation.json inside), as written by onnxprobe_torch.capture_generation.
bool IsSavedGeneration(const std::string& path);

// Opens `side.path`: a saved run's folder, else a decoder .onnx run live. `label` ("side A")
// prefixes errors.
Expected<std::unique_ptr<DecoderSide>> OpenDecoderSide(const GenerateSide& side,
                                                       const std::string& label);
Expected<std::unique_ptr<DecoderSide>> OpenSavedGeneration(const std::string& path,
                                                           const std::string& label);

class DecoderSession : public DecoderSide {
 public:
  // Loads the model, finds its roles (`side.io` hints) and opens a session.
  static Expected<std::unique_ptr<DecoderSession>> Open(const GenerateSide& side,
                                                        const std::string& label);
  const DecoderIo& io() const override { return io_; }
  const Model* model() const override { return &model_; }
  std::string Describe() const override;  // "m.onnx on onnxruntime 1.32.0 CPU..., opt ..."
  Expected<DecoderCache> EmptyCache() const override;
  Expected<std::vector<NamedTensor>> StepInputs(const std::vector<int64_t>& tokens,
                                                const DecoderCache& cache) const override;
  Expected<DecoderStep> Step(const std::vector<int64_t>& tokens, DecoderCache* cache) override;
  void SetPadding(int n) override { pad_ = n; }

 private:
  DecoderSession(Model model, DecoderIo io) : model_(std::move(model)), io_(std::move(io)) {}
  Model model_;
  DecoderIo io_;
  GenerateSide side_;
  std::string label_;
  std::shared_ptr<Backend> backend_;
  std::unique_ptr<BackendSession> session_;
  std::vector<std::string> fetch_;
  int pad_ = 0;
};

// `t` as float32 (float16/bfloat16/float64 converted; float32 shared).
Expected<Tensor> AsFloat32(const Tensor& t);
// The positions [from, to) of `t` along `axis`, copied.
Expected<Tensor> SliceAxis(const Tensor& t, int axis, int64_t from, int64_t to);
// `a` and `b` joined along `axis` (equal other dimensions and dtype).
Expected<Tensor> ConcatAxis(const Tensor& a, const Tensor& b, int axis);

}  // namespace onnxprobe
