// Internal: what merging the shards of a comparison over samples needs whatever the report's
// schema (compare over samples, baseline check): reading a shard, the order of the full sample
// list, the per-tensor aggregates recomputed from the samples' rows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnxprobe/common/json_value.h"
#include "onnxprobe/report/merge.h"

namespace onnxprobe::merge {

struct Shard {
  std::string path;
  JsonValue doc;
  size_t index = 0, count = 1, total = 0;
  std::vector<size_t> positions;
};

const JsonValue* Member(const JsonValue& v, const char* key);
double Num(const JsonValue* v, double if_null);
std::string Str(const JsonValue& v, const char* key);
// `v` as compact JSON text ("" for null): two fields compared as written.
std::string Text(const JsonValue* v);
bool Passed(const JsonValue& sample);
bool Compared(const JsonValue& row);  // a row whose state is "compared"

// Parses a shard's report of schema `schema` (empty: either kind merge knows; an unsharded report
// is shard 0 of 1). Fails naming the report when it is another kind of report or its "shard"
// section is malformed.
Expected<Shard> ParseShard(const ShardReport& report, const std::string& schema);

// Checks the shards make one set: the same count and sample total, each index once, none
// missing, `same(first, other)` for every shard; then returns every sample in its place in the
// full list (a shard that stopped early leaves its later samples out) and whether one stopped
// early, with its error.
struct Samples {
  std::vector<const JsonValue*> present;
  bool aborted = false;
  std::string error;
};
Expected<Samples> Collect(const std::vector<Shard>& shards,
                          const std::function<Status(const Shard&, const Shard&)>& same);

// As AggregateSamples over JSON rows (the reports' numbers read back exactly): for each name in
// `names` (empty: the row names of the first sample), over `rows(sample)` of every sample.
using RowsOf = std::function<const std::vector<JsonValue>&(const JsonValue& sample)>;
std::vector<TensorAggregate> Aggregate(const std::vector<const JsonValue*>& samples,
                                       const RowsOf& rows, std::vector<std::string> names = {});

// The merged baseline check (merge_baseline.cc).
Expected<MergedSamples> MergeBaselineShards(const std::vector<Shard>& shards,
                                            const std::vector<ShardReport>& reports);

}  // namespace onnxprobe::merge
