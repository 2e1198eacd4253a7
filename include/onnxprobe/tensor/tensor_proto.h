// ONNX TensorProto files (.pb), as used by the ONNX backend test suite (input_0.pb, output_0.pb).
#pragma once

#include <string>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Parses a serialized TensorProto (raw_data or typed fields). `what` names the source in errors.
// Fails on string/complex dtypes, external data, or payloads whose length does not match the dims.
Expected<NamedTensor> ParseTensorProto(const std::string& bytes, const std::string& what);
Expected<NamedTensor> ReadTensorProto(const std::string& path);

// Serializes `t` as a TensorProto with raw_data.
std::string SerializeTensorProto(const Tensor& t, const std::string& name);
// Writes it atomically.
Status WriteTensorProto(const std::string& path, const Tensor& t, const std::string& name);

}  // namespace onnxprobe
