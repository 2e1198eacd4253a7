// Streaming the bytes of a tensor as stored in .npy files (bfloat16 widened to float32).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

// Bytes the .npy payload of `t` occupies.
uint64_t NpyPayloadSize(const Tensor& t);
// Calls `sink` with consecutive chunks of the payload; stops and returns false if it does.
bool ForEachNpyPayloadChunk(const Tensor& t, const std::function<bool(const void*, size_t)>& sink);

}  // namespace onnxprobe
