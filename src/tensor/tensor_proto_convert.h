// Internal: conversion between onnx::TensorProto and Tensor, shared by tensor/ and model/.
// Only .cc files include this (it pulls in the generated protobuf header).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

// `external_bytes` (may be null) supplies the data of a tensor stored outside the proto.
Expected<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::string& what,
                                 const std::string* external_bytes = nullptr);
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* p);

}  // namespace onnxprobe
