// One comparison over several input samples: Compare() per sample, and each tensor's metrics
// aggregated across the samples (worst and mean, with the worst sample named).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/capture/samples.h"
#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

// One tensor across samples (rows compared in full; rows not compared are left out).
struct TensorAggregate {
  std::string name;
  size_t samples = 0, failures = 0;
  // the largest max_abs and max_rel over the samples, each taken on its own
  double worst_max_abs = 0, worst_max_rel = 0, worst_tolerance_ratio = 0;
  std::string worst_sample;  // the sample with the largest tolerance ratio (first on ties)
  double mean_max_abs = 0, mean_max_rel = 0;
};

struct NamedComparison {
  std::string sample;
  const ComparisonResult* result = nullptr;
};
// Aggregates over the samples for each name in `names` (in that order; empty: every row name of
// the first sample).
std::vector<TensorAggregate> AggregateSamples(const std::vector<NamedComparison>& samples,
                                              const std::vector<std::string>& names = {});

struct SampleCompare {
  std::string name;
  CompareReport report;
  std::map<std::string, double> row_seconds;  // per compared tensor: time since the previous
  double seconds = 0;
};

struct SamplesCompareReport {
  // A shard's report (docs/shard.md): which shard, of how many samples in all, and each of
  // `samples`' position in the full list; `onnxprobe merge` joins the shards' reports.
  SampleShard shard;
  size_t total_samples = 0;
  std::vector<size_t> positions;
  std::vector<SampleCompare> samples;
  std::vector<TensorAggregate> tensors;
  size_t failed_samples = 0;
  bool aborted = false;  // a side failed mid-way in the last sample checked
  Status abort_status;
  bool stopped = false;  // the caller's SampleCallback stopped the loop before every sample ran
  bool passed() const { return !aborted && !stopped && failed_samples == 0; }
};

// Progress over the samples: called before each sample with the samples done so far, the
// total (this shard's) and the sample about to run, and once at the end (done == total, or fewer
// when the loop stopped; sample ""). Returning false before a sample stops the loop there (the
// caller cancels: the report holds the samples compared, `stopped` set).
using SampleCallback = std::function<bool(size_t done, size_t total, const std::string& sample)>;

// Runs `request` once per sample with the sample's inputs (request.inputs is replaced); with a
// shard, only that shard's samples. Fails like Compare(), naming the sample; a side failing
// mid-way stops with `aborted` set.
Expected<SamplesCompareReport> CompareSamples(const CompareRequest& request,
                                              const std::vector<InputSample>& samples,
                                              const SampleShard& shard = {},
                                              const SampleCallback& on_sample = nullptr);

// The sample a single-sample report should show: the first failing one, else the one closest to
// its tolerance (the first when none has a compared row). Null when there is none.
const SampleCompare* FocusSample(const SamplesCompareReport& r);

}  // namespace onnxprobe
