// Joining the reports of a comparison over samples that ran as shards (compare --inputs/--samples
// --shard I/N, one job of an array each): the merged report is the one a single process would
// have written over all the samples (docs/shard.md).
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/pipeline/sample_compare.h"

namespace onnxprobe {

struct MergedSamples {
  std::string json;  // the merged samples report (schema onnxprobe-compare-samples)
  bool passed = false, aborted = false;
  size_t shards = 0, samples = 0, failed_samples = 0;
  std::vector<TensorAggregate> tensors;  // each tensor over every sample, as AggregateSamples
};

// Reads the shards' JSON reports and merges them: samples in their order in the full list, each
// tensor aggregated again over all of them, the verdict over all. Fails naming the file when a
// report is not a samples report, a shard is missing or given twice, the shards disagree on
// the sample count, or their sides or tolerances differ.
Expected<MergedSamples> MergeSampleShards(const std::vector<std::string>& paths);

// The same over reports held in memory (shards run as tasks that return their JSON): `name`
// stands for the file in messages.
struct ShardReport {
  std::string name, json;
};
Expected<MergedSamples> MergeSampleShards(const std::vector<ShardReport>& reports);

}  // namespace onnxprobe
