// An in-memory Side for unit tests: tensors listed in topological order with node and op
// metadata, Fetch returning stored tensors, runs counted, an optional failure on the k-th fetch,
// and an optional graph (a real ONNX file written by BuildModel) for role marking.
#pragma once

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {
// gtest prints roles by name in failure messages
inline void PrintTo(Role r, std::ostream* os) { *os << RoleName(r); }
}  // namespace onnxprobe

namespace onnxprobe::fake {

// A float32 tensor of `shape` holding `values` (as many as the shape has elements).
Tensor MakeF32(const Shape& shape, const std::vector<float>& values);

struct GraphNode {
  std::string name, op_type;
  std::vector<std::string> inputs, outputs;
};

// Writes an ONNX model (protobuf wire format written by hand: no protobuf in the tests) with
// these nodes, float graph inputs and outputs, opset 17, to `path`, and loads it.
Expected<Model> BuildModel(const std::string& path, const std::vector<GraphNode>& nodes,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs);

class FakeSide : public Side {
 public:
  explicit FakeSide(std::string path = "fake");

  // Appends a tensor after the ones added so far (topological order). est_bytes is the
  // tensor's size unless `est_bytes` says otherwise.
  FakeSide& Add(const std::string& name, const std::string& node, const std::string& op_type,
                Tensor value, bool is_graph_output = false);
  // Appends a tensor whose value cannot be provided: Fetch returns it with `skipped` = reason.
  FakeSide& AddSkipped(const std::string& name, const std::string& node, const std::string& op_type,
                       const std::string& reason);
  void SetEstBytes(const std::string& name, uint64_t bytes);
  void SetModel(const Model* model) { model_ = model; }
  // The k-th call of Fetch (1-based) fails with `status`; earlier and later calls succeed.
  void FailOnFetch(size_t k, Status status);

  size_t fetches() const { return fetches_; }  // Fetch calls, failed ones included
  size_t fetched_tensors() const { return fetched_tensors_; }
  const std::vector<std::vector<std::string>>& fetch_log() const { return fetch_log_; }

  const SideInfo& info() const override { return info_; }
  const std::vector<SideTensor>& tensors() const override { return tensors_; }
  const Model* model() const override { return model_; }
  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    return std::vector<NamedTensor>();
  }
  Status SetInputs(const std::vector<NamedTensor>&) override { return Status::Ok(); }
  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override;
  size_t runs() const override { return runs_; }
  Expected<std::vector<RunOutput>> RunOther(
      const std::string&, const std::string&,
      const std::vector<std::pair<std::string, const Tensor*>>&,
      const std::vector<std::string>&) override {
    return Unsupported("a fake side cannot run models");
  }

 private:
  SideInfo info_;
  std::vector<SideTensor> tensors_;
  std::map<std::string, Tensor> values_;
  std::map<std::string, std::string> skipped_;
  const Model* model_ = nullptr;
  size_t fail_on_ = 0;
  Status fail_status_;
  size_t fetches_ = 0, fetched_tensors_ = 0, runs_ = 0;
  std::vector<std::vector<std::string>> fetch_log_;
};

}  // namespace onnxprobe::fake
