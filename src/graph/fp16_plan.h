// Internal: per-node float16 plan from the ONNX operator schemas (graph/ only: sees protobuf).
#pragma once

#include <onnx/onnx_pb.h>

#include <vector>

#include "onnxprobe/graph/fp16_graph.h"

namespace onnxprobe {

struct Fp16NodePlan {
  Fp16Eligibility eligibility = Fp16Eligibility::kNoFloat;
  std::vector<bool> input_fp16;   // per node input: becomes float16 when the node is converted
  std::vector<bool> output_fp16;  // per node output
};

// An input may become float16 when it is float32 and its formal parameter allows float16; an
// output also needs its type bound by an input (Cast, Constant, RandomNormal take theirs from
// attributes and stay float32).
Fp16NodePlan PlanFp16Node(const onnx::NodeProto& node, int64_t default_opset,
                          const TensorTypes& types);

// The model's opset for the default ONNX domain (0 when it imports none).
int64_t DefaultOpset(const onnx::ModelProto& model);

// A float32 TensorProto (raw, typed or external data already read in `external`) converted to
// float16, values beyond the float16 range clamped to +-65504.
Expected<onnx::TensorProto> ToFp16Initializer(const onnx::TensorProto& t, const std::string& name,
                                              const std::string& model_dir);

}  // namespace onnxprobe
