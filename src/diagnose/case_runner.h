// Internal: an isolated case (a culprit's nodes alone, fed side A's exact tensors) run on a
// runtime with given settings, and the measures diagnosis reads from its outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/diagnose/diagnose.h"

namespace onnxprobe::diagnose {

class CaseRunner {
 public:
  CaseRunner(const IsolatedCase& c, size_t* runs) : case_(c), runs_(runs) {}
  // `n` runs of the case in one session on the runtime `library` ("" = default) with `options`.
  Expected<std::vector<Tensor>> Run(const std::string& library, const SessionOptions& options,
                                    int n = 1);
  // The case's feed as the backend takes it.
  std::vector<std::pair<std::string, const Tensor*>> Feed() const;
  const IsolatedCase& data() const { return case_; }
  size_t* runs() const { return runs_; }

 private:
  const IsolatedCase& case_;
  size_t* runs_;
};

// Largest |a - b| over positions where both are finite; +inf when shapes or dtypes differ or
// the NaN/Inf positions differ.
double MaxAbsDiff(const Tensor& a, const Tensor& b);
// Whether `got` passes against side A's `expected` under the comparison's rule for the tensor.
bool WithinTolerance(const Tensor& expected, const Tensor& got, const TolerancePolicy& policy,
                     const std::string& tensor, const std::string& op_type);
// The runtime's identity for a report: "onnxruntime 1.20.1".
std::string RuntimeName(const std::string& library);
// Side B's runtime flags (provider, options, level, threads, runtime, custom ops) for another
// onnxprobe command on its model.
std::vector<std::string> RuntimeFlags(const DiagnoseSide& side);

}  // namespace onnxprobe::diagnose
