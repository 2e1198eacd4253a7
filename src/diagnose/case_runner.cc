#include "diagnose/case_runner.h"

#include <cctype>
#include <cmath>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe::diagnose {

std::vector<std::pair<std::string, const Tensor*>> CaseRunner::Feed() const {
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const auto& nt : case_.inputs) feed.emplace_back(nt.name, &nt.tensor);
  return feed;
}

Expected<std::vector<Tensor>> CaseRunner::Run(const std::string& library,
                                              const SessionOptions& options, int n) {
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(library));
  OP_ASSIGN_OR_RETURN(auto session,
                      backend->CreateSession(case_.model_bytes, case_.model_dir, options));
  std::vector<Tensor> out;
  auto feed = Feed();
  for (int k = 0; k < n; ++k) {
    OP_ASSIGN_OR_RETURN(auto got, session->Run(feed, {case_.output}));
    if (runs_ != nullptr) ++*runs_;
    if (got.empty() || got[0].tensor.empty())
      return BackendError("the isolated run of '" + case_.node + "' gave no '" + case_.output +
                          "'");
    out.push_back(std::move(got[0].tensor));
  }
  return out;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.BitwiseEqual(b)) return 0;
  Tolerance tol;
  TensorMetrics m = CompareTensors(a, b, tol, -1, CompareOptions());
  if (!m.shape_match || !m.dtype_match || m.nonfinite_differ > 0) return INFINITY;
  return m.max_abs;
}

bool WithinTolerance(const Tensor& expected, const Tensor& got, const TolerancePolicy& policy,
                     const std::string& tensor, const std::string& op_type) {
  TensorResult row;
  row.tolerance = policy.For(tensor, op_type);
  JudgeRow(expected, got, policy, CompareOptions(), &row);
  return row.within_tolerance;
}

std::string RuntimeName(const std::string& library) {
  auto backend = LoadBackend(library);
  if (!backend.ok()) return library.empty() ? "the default runtime" : library;
  return RuntimeLabel(**backend);
}

std::vector<std::string> RuntimeFlags(const DiagnoseSide& side) {
  std::vector<std::string> f;
  const SessionOptions& s = side.session;
  if (!s.provider.empty() && !IsCpuProvider(s.provider))
    f.insert(f.end(), {"--provider", s.provider});
  if (!s.provider_library.empty()) f.insert(f.end(), {"--provider-library", s.provider_library});
  for (const auto& [k, v] : s.provider_options)
    f.insert(f.end(), {"--provider-option", k + "=" + v});
  if (s.optimization_level != OptLevel::kDisabled)
    f.insert(f.end(), {"--opt-level", OptLevelName(s.optimization_level)});
  if (s.intra_op_threads != 0)
    f.insert(f.end(), {"--intra-threads", std::to_string(s.intra_op_threads)});
  if (!s.sequential) f.push_back("--parallel");
  if (!side.ort_library.empty()) f.insert(f.end(), {"--ort-lib", side.ort_library});
  for (const auto& lib : s.custom_op_libraries) f.insert(f.end(), {"--custom-op-lib", lib});
  for (const auto& [k, v] : s.config_entries) f.insert(f.end(), {"--session-config", k + "=" + v});
  return f;
}

}  // namespace onnxprobe::diagnose

namespace onnxprobe {

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    bool plain = !a.empty();
    for (char ch : a) {
      if (!(std::isalnum(static_cast<unsigned char>(ch)) ||
            std::string("-_./=,:+@%").find(ch) != std::string::npos))
        plain = false;
    }
    std::string q = plain ? a : "'";
    if (!plain) {
      for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      q += "'";
    }
    out += (out.empty() ? "" : " ") + q;
  }
  return out;
}

}  // namespace onnxprobe
