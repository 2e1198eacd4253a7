// The quantized comparison's hooks into a comparison run (pipeline/ calls them): Attach()
// recognizes a float side A and a quantized side B and sets the job's structural pairing and
// quantization-aware judge; Finish() measures weights, isolates each quantized layer and ranks
// them; SettleRoles() gives failing rows their roles from that isolation.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/quant/quant.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace onnxprobe::quant {

struct QuantSession {
  QuantPairing pairing;
  QuantOptions options;
  std::mutex mu;
  std::map<std::string, QuantRowMetrics> by_a;  // figures of each compared row, by A's name
};

// Null when the comparison is not float-vs-quantized (or options say off), or when nothing of A
// pairs with B through its quantization (then `notes` says so and the comparison goes on by
// name). Explicit entries of job->rename win over the structural pairing. Fails when B's
// quantization parameters cannot be read.
Expected<std::shared_ptr<QuantSession>> Attach(Side& a, Side& b, const QuantOptions& options,
                                               CompareJob* job, std::vector<std::string>* notes);

// The quantization report of a finished comparison. Isolation problems are recorded per layer.
Expected<QuantReport> Finish(QuantSession& s, Side& a, Side& b,
                             const std::vector<NamedTensor>& inputs, const ComparisonResult& r);

// Failing rows of isolated layers: introduced when the layer is below the limit alone,
// inherited otherwise (the frontier is recomputed).
void SettleRoles(const QuantReport& q, ComparisonResult* r);

// Isolates the pairing's layers (quant_isolate.cc) into report->layers.
Status IsolateLayers(QuantSession& s, Side& a, Side& b, const std::vector<NamedTensor>& inputs,
                     QuantReport* report);

}  // namespace onnxprobe::quant
