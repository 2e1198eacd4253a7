#include <algorithm>
#include <cmath>
#include <regex>

#include "common/user_regex.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/compare/compare.h"

namespace onnxprobe {

const char* JudgeByName(JudgeBy j) {
  switch (j) {
    case JudgeBy::kElementwise:
      return "elementwise";
    case JudgeBy::kMax:
      return "max";
    case JudgeBy::kMean:
      return "mean";
    case JudgeBy::kP99:
      return "p99";
  }
  return "?";
}

Expected<JudgeBy> ParseJudgeBy(const std::string& s) {
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99}) {
    if (s == JudgeByName(j)) return j;
  }
  return InvalidArgument("judging mode '" + s + "' is not one of elementwise, max, mean, p99");
}

const char* GradeName(Grade g) {
  switch (g) {
    case Grade::kExcellent:
      return "excellent";
    case Grade::kAcceptable:
      return "acceptable";
    case Grade::kHighRisk:
      return "high-risk";
  }
  return "?";
}

Grade GradeFor(double max_rel) {
  if (max_rel < 1e-4) return Grade::kExcellent;
  if (max_rel < 1e-3) return Grade::kAcceptable;
  return Grade::kHighRisk;
}

Status TolerancePolicy::Validate() const {
  if (!(global.atol >= 0) || !(global.rtol >= 0)) return InvalidArgument("tolerances must be >= 0");
  for (const auto& r : rules) {
    if (!(r.tolerance.atol >= 0) || !(r.tolerance.rtol >= 0)) {
      return InvalidArgument("tolerance for '" + r.pattern + "' must be >= 0");
    }
    if (r.by_op_type) continue;
    auto re = CompileUserRegex(r.pattern, "tolerance pattern");
    if (!re.ok()) return re.status();
  }
  return Status::Ok();
}

Tolerance TolerancePolicy::For(const std::string& tensor, const std::string& op_type) const {
  Tolerance t = global;
  for (const auto& r : rules) {
    if (r.by_op_type) {
      if (r.pattern == op_type) t = r.tolerance;
      continue;
    }
    // Validate() reports malformed patterns before any comparison; one here matches nothing
    auto re = CompileUserRegex(r.pattern, "tolerance pattern");
    if (re.ok() && std::regex_search(tensor, *re)) t = r.tolerance;
  }
  if (auto it = noise_floor.find(tensor); it != noise_floor.end()) t.noise_floor = it->second;
  return t;
}

Tolerance Float32RoundingBudget(Tolerance t, double float64_error) {
  if (!(float64_error > 0)) return t;
  t.float64_error = float64_error;
  t.noise_floor = std::max(t.noise_floor, kFloat32RoundingSum * float64_error);
  return t;
}

Tolerance PeriodicBudget(Tolerance t, double argument_scale) {
  if (!t.scale_atol || !(argument_scale > 1)) return t;  // an absolute atol passes through as is
  t.noise_floor = std::max(t.noise_floor, t.atol * argument_scale);
  return t;
}

namespace {

std::string Index(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

}  // namespace

CompareOptions KernelOptionsFor(const TolerancePolicy& policy, CompareOptions options) {
  if (policy.judge == JudgeBy::kP99) options.full_histogram = true;
  return options;
}

bool Judge(const TensorMetrics& m, const Tolerance& tol_in, JudgeBy judge, std::string* reason) {
  Tolerance tol = tol_in;
  if (m.shape_match && m.dtype_match) tol.atol = m.atol_used;
  if (!m.dtype_match) {
    *reason = std::string("dtype ") + DTypeName(m.dtype_b) + ", reference " + DTypeName(m.dtype_a);
    return false;
  }
  if (!m.shape_match) {
    *reason = "shape " + ShapeToString(m.shape_b) + ", reference " + ShapeToString(m.shape_a);
    return false;
  }
  if (m.nonfinite_new > 0) {
    *reason = std::to_string(m.nonfinite_new) + " NaN/Inf where the reference is finite";
    return false;
  }
  if (m.nonfinite_differ > 0) {
    *reason =
        std::to_string(m.nonfinite_differ) + " positions where NaN/Inf differ from the reference";
    return false;
  }
  double abs_stat = m.max_abs, rel_stat = m.max_rel;
  switch (judge) {
    case JudgeBy::kElementwise:
      if (m.mismatches == 0) return true;
      *reason = std::to_string(m.mismatches) + " of " + std::to_string(m.count) + " elements (" +
                FormatNumber(100 * m.mismatch_fraction) +
                "%) beyond atol+rtol*|a|; max abs error " + FormatNumber(m.max_abs) + " at " +
                Index(m.max_abs_index);
      return false;
    case JudgeBy::kMax:
      break;
    case JudgeBy::kMean:
      abs_stat = m.mean_abs;
      rel_stat = m.mean_rel;
      break;
    case JudgeBy::kP99:
      abs_stat = m.p99_abs;
      rel_stat = m.p99_rel;
      break;
  }
  if (abs_stat <= tol.atol || rel_stat <= tol.rtol) return true;
  *reason = std::string(JudgeByName(judge)) + " abs error " + FormatNumber(abs_stat) + " > atol " +
            FormatNumber(tol.atol) + " and " + JudgeByName(judge) + " rel error " +
            FormatNumber(rel_stat) + " > rtol " + FormatNumber(tol.rtol);
  return false;
}

double ToleranceRatio(const TensorMetrics& m, const Tolerance& tol_in, JudgeBy judge) {
  if (!m.dtype_match || !m.shape_match || m.nonfinite_differ > 0) return INFINITY;
  double atol = m.atol_used > 0 ? m.atol_used : tol_in.atol;
  double abs_stat = m.max_abs, rel_stat = m.max_rel;
  switch (judge) {
    case JudgeBy::kElementwise:
      return m.max_tol_ratio;
    case JudgeBy::kMax:
      break;
    case JudgeBy::kMean:
      abs_stat = m.mean_abs;
      rel_stat = m.mean_rel;
      break;
    case JudgeBy::kP99:
      abs_stat = m.p99_abs;
      rel_stat = m.p99_rel;
      break;
  }
  // passes when either error is within its own tolerance: the nearer of the two decides
  auto ratio = [](double err, double allowed) {
    if (err == 0) return 0.0;
    return allowed > 0 ? err / allowed : INFINITY;
  };
  return std::min(ratio(abs_stat, atol), ratio(rel_stat, tol_in.rtol));
}

}  // namespace onnxprobe
