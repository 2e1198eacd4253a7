// One comparison session over several input samples, and per-tensor aggregates across them.
#include "onnxprobe/pipeline/sample_compare.h"

#include <algorithm>
#include <chrono>

#include "onnxprobe/pipeline/comparison_session.h"

namespace onnxprobe {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::vector<TensorAggregate> AggregateSamples(const std::vector<NamedComparison>& samples,
                                              const std::vector<std::string>& names) {
  std::vector<std::string> order = names;
  if (order.empty() && !samples.empty() && samples.front().result != nullptr) {
    for (const auto& row : samples.front().result->rows) order.push_back(row.name);
  }
  std::vector<TensorAggregate> out;
  for (const auto& name : order) {
    TensorAggregate a;
    a.name = name;
    for (const auto& s : samples) {
      if (s.result == nullptr) continue;
      for (const auto& row : s.result->rows) {
        if (row.name != name || row.state != RowState::kCompared) continue;
        ++a.samples;
        if (!row.pass) ++a.failures;
        a.mean_max_abs += row.metrics.max_abs;
        a.mean_max_rel += row.metrics.max_rel;
        if (a.worst_sample.empty() || row.tolerance_ratio > a.worst_tolerance_ratio) {
          a.worst_sample = s.sample;
          a.worst_tolerance_ratio = row.tolerance_ratio;
        }
        // each column its own worst: the sample of the largest |a-b| need not be the one
        // nearest its tolerance (a large value elsewhere has a larger allowance)
        a.worst_max_abs = std::max(a.worst_max_abs, row.metrics.max_abs);
        a.worst_max_rel = std::max(a.worst_max_rel, row.metrics.max_rel);
      }
    }
    if (a.samples > 0) {
      a.mean_max_abs /= static_cast<double>(a.samples);
      a.mean_max_rel /= static_cast<double>(a.samples);
    }
    out.push_back(std::move(a));
  }
  return out;
}

Expected<SamplesCompareReport> CompareSamples(const CompareRequest& request,
                                              const std::vector<InputSample>& all,
                                              const SampleShard& shard,
                                              const SampleCallback& on_sample) {
  SamplesCompareReport rep;
  rep.shard = shard;
  rep.total_samples = all.size();
  OP_ASSIGN_OR_RETURN(rep.positions, ShardPositions(all.size(), shard));
  std::vector<InputSample> samples;
  for (size_t k : rep.positions) samples.push_back(all[k]);
  bool several = samples.size() > 1;
  bool of_several = all.size() > 1;  // a shard of one sample is still one of several
  SessionOpenOptions open;
  open.hold_sessions = several;
  OP_ASSIGN_OR_RETURN(auto session, ComparisonSession::Open(request, open));
  for (const auto& sample : samples) {
    if (on_sample && !on_sample(rep.samples.size(), samples.size(), sample.name)) {
      rep.stopped = true;
      break;
    }
    SampleCompare sc;
    sc.name = sample.name;
    SessionRun run;
    run.inputs = sample.inputs;
    run.inputs_given = true;
    // a side's latency does not depend on the values: measured with the first sample only
    run.measure_resources = &sample == &samples.front();
    // where differences below tolerance are born is looked for once, on the focus sample (below)
    run.drift = !of_several;
    auto t0 = Clock::now();
    auto last = t0;
    run.on_row = [&](const TensorResult& row, size_t done, size_t total) {
      sc.row_seconds[row.name] = Since(last);
      last = Clock::now();
      if (request.on_row) request.on_row(row, done, total);
    };
    auto report = session->Run(run);
    if (!report.ok()) return report.status().WithContext("sample '" + sample.name + "'");
    sc.report = std::move(*report);
    sc.seconds = Since(t0);
    bool aborted = sc.report.comparison.aborted;
    if (aborted) {
      rep.aborted = true;
      rep.abort_status =
          sc.report.comparison.abort_status.WithContext("sample '" + sample.name + "'");
    } else if (!sc.report.passed()) {
      ++rep.failed_samples;
    }
    rep.samples.push_back(std::move(sc));
    if (aborted) break;
  }
  if (on_sample && !rep.stopped) on_sample(rep.samples.size(), samples.size(), "");
  // every sample passed: the focus sample's comparison is localized to say where its
  // differences are born (its sides run again only for what isolation needs)
  const SampleCompare* focus = FocusSample(rep);
  bool drift = request.localize && request.localize_options.drift;
  if (of_several && drift && !rep.aborted && !rep.stopped && rep.failed_samples == 0 &&
      focus != nullptr) {
    size_t i = static_cast<size_t>(focus - rep.samples.data());
    SampleCompare& sc = rep.samples[i];
    SessionRun run;
    run.inputs = samples[i].inputs;
    run.inputs_given = true;
    run.measure_resources = false;
    run.compared = &sc.report.comparison;
    auto t0 = Clock::now();
    auto again = session->Run(run);
    if (!again.ok()) return again.status().WithContext("sample '" + sc.name + "'");
    again->resources_a = sc.report.resources_a;
    again->resources_b = sc.report.resources_b;
    sc.report = std::move(*again);
    sc.seconds += Since(t0);
  }
  std::vector<NamedComparison> named;
  for (const auto& s : rep.samples) named.push_back({s.name, &s.report.comparison});
  rep.tensors = AggregateSamples(named);
  return rep;
}

const SampleCompare* FocusSample(const SamplesCompareReport& r) {
  for (const auto& s : r.samples)
    if (!s.report.passed()) return &s;
  const SampleCompare* best = r.samples.empty() ? nullptr : &r.samples.front();
  double worst = -1;
  for (const auto& s : r.samples) {
    for (const auto& row : s.report.comparison.rows) {
      if (row.state == RowState::kCompared && row.tolerance_ratio > worst) {
        worst = row.tolerance_ratio;
        best = &s;
      }
    }
  }
  return best;
}

}  // namespace onnxprobe
