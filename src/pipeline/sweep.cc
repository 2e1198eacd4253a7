// CompareSweep: one comparison session run at each combination of symbolic dimension values.
#include "onnxprobe/pipeline/sweep.h"

#include <set>

#include "onnxprobe/pipeline/comparison_session.h"

namespace onnxprobe {
namespace {

constexpr size_t kMaxPoints = 256;

Status CheckAxes(const SweepRequest& req) {
  if (req.axes.empty()) return InvalidArgument("a sweep needs at least one dimension");
  std::set<std::string> seen;
  size_t points = 1;
  for (const SweepAxis& a : req.axes) {
    if (a.values.empty()) return InvalidArgument("sweep of '" + a.dim + "' has no values");
    if (!seen.insert(a.dim).second)
      return InvalidArgument("dimension '" + a.dim + "' is swept twice");
    if (req.compare.inputs.dim_params.count(a.dim)) {
      return InvalidArgument("dimension '" + a.dim + "' is both swept and fixed to " +
                             std::to_string(req.compare.inputs.dim_params.at(a.dim)));
    }
    for (int64_t v : a.values) {
      if (v < 1) {
        return InvalidArgument("sweep of '" + a.dim + "': " + std::to_string(v) +
                               " is not a dimension (must be at least 1)");
      }
    }
    points *= a.values.size();
    if (points > kMaxPoints) {
      return InvalidArgument("the sweep has more than " + std::to_string(kMaxPoints) +
                             " shapes (one comparison each)");
    }
  }
  const InputOptions& in = req.compare.inputs;
  if (!in.files.empty() || !in.tensors.empty()) {
    return InvalidArgument(
        "inputs given as files or arrays have fixed shapes: a sweep over dimensions would "
        "compare the same shape each time");
  }
  if (!req.compare.localize_options.repro_dir.empty() && points > 1) {
    return InvalidArgument("a repro bundle (" + req.compare.localize_options.repro_dir +
                           ") is written for one comparison; a sweep runs " +
                           std::to_string(points));
  }
  return Status::Ok();
}

int WorstRow(const ComparisonResult& r) {
  int worst = -1;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TensorResult& row = r.rows[i];
    if (row.state != RowState::kCompared) continue;
    if (worst < 0 || row.tolerance_ratio > r.rows[worst].tolerance_ratio)
      worst = static_cast<int>(i);
  }
  return worst;
}

}  // namespace

std::string SweepPointLabel(const SweepPoint& p) {
  std::string s;
  for (const auto& [d, v] : p.dims) s += (s.empty() ? "" : ", ") + d + "=" + std::to_string(v);
  return s;
}

Expected<SweepReport> CompareSweep(const SweepRequest& req) {
  OP_RETURN_IF_ERROR(CheckAxes(req));
  SweepReport out;
  out.axes = req.axes;
  std::vector<size_t> at(req.axes.size(), 0);  // odometer over the axes, last axis fastest
  size_t points = 1;
  for (const auto& axis : req.axes) points *= axis.values.size();
  SessionOpenOptions open;
  open.hold_sessions = points > 1;
  OP_ASSIGN_OR_RETURN(auto session, ComparisonSession::Open(req.compare, open));
  for (bool more = true; more;) {
    SweepPoint p;
    SessionRun run = SingleRun(req.compare);
    for (size_t i = 0; i < req.axes.size(); ++i) {
      int64_t v = req.axes[i].values[at[i]];
      p.dims.emplace_back(req.axes[i].dim, v);
      run.inputs.dim_params[req.axes[i].dim] = v;
    }
    run.inputs_given = true;
    auto report = session->Run(run);
    if (!report.ok()) {
      // a runtime that rejects one shape is a finding of the sweep; bad input is not
      if (report.status().code() != ErrorCode::kBackend || out.points.empty())
        return report.status().WithContext("at " + SweepPointLabel(p));
      p.error = report.status();
    } else {
      p.report = std::move(*report);
      p.worst_row = WorstRow(p.report.comparison);
    }
    if (!p.passed()) ++out.failed_points;
    out.points.push_back(std::move(p));
    more = false;
    for (size_t i = req.axes.size(); i-- > 0;) {
      if (++at[i] < req.axes[i].values.size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  return out;
}

}  // namespace onnxprobe
