// Internal: a provider's error message as one line a person reads.
#pragma once

#include <string>

namespace onnxprobe {

// OpenVINO's execution provider wraps the reason a model does not compile in the signature and
// source location of every layer it passed ("/onnxruntime/...cc:136 onnxruntime::...(...)
// [OpenVINO-EP] Exception while Loading Network for graph G: Exception from src/...cpp:114:
// Check '...' failed at src/...cpp:106: <reason>. Operation name: <tensor>"): the reason and the
// names it gives (node, tensor, subgraph) are kept, the frames dropped, whitespace collapsed. A
// message without those frames is returned as it is.
std::string ConciseProviderMessage(const std::string& message);

// Whether the message says the provider failed to read or compile a subgraph it had taken
// (OpenVINO: "Exception while Loading Network", "Exception while Reading network"): allowing CPU
// fallback does not change which nodes it takes (measured on OpenVINO 1.24.1 with models of
// scikit-learn and TensorFlow loops: the same error with and without fallback).
bool ProviderFailedOnItsOwnNodes(const std::string& message);

}  // namespace onnxprobe
