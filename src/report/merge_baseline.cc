// The shards of a baseline check (baseline check --shard I/N) joined into the report one process
// writes: samples in the baseline's order, the first failing ones localized as one process
// localizes them, each tensor aggregated again over every sample.
#include <cstdint>

#include "onnxprobe/common/json.h"
#include "report/merge_shards.h"
#include "report/report_json.h"

namespace onnxprobe::merge {
namespace {

// One check: the same model, baseline and environment.
Status SameCheck(const Shard& first, const Shard& other) {
  for (const char* key : {"model", "baseline", "baseline_created", "environment_changes"}) {
    if (Text(Member(first.doc, key)) != Text(Member(other.doc, key)))
      return InvalidArgument(other.path + ": " + key + " differs from " + first.path +
                             "'s: shards of one check share their model, baseline and "
                             "environment");
  }
  const JsonValue* a = Member(first.doc, "shard");
  const JsonValue* b = Member(other.doc, "shard");
  if (Text(a != nullptr ? Member(*a, "localize_samples") : nullptr) !=
      Text(b != nullptr ? Member(*b, "localize_samples") : nullptr))
    return InvalidArgument(other.path + ": --localize differs from " + first.path + "'s");
  return Status::Ok();
}

const std::vector<JsonValue>& Rows(const JsonValue& sample) {
  static const std::vector<JsonValue> kNone;
  const JsonValue* t = Member(sample, "tensors");
  return t != nullptr && t->is_array() ? t->items() : kNone;
}

// How one process writes a failing sample beyond the ones it localizes.
void SkippedLocalization(const JsonValue& sample, size_t localize_samples, JsonWriter& j) {
  std::string first, node;
  for (const auto& row : Rows(sample)) {
    if (Str(row, "verdict") == "PASS") continue;
    first = Str(row, "name");
    node = Str(row, "node");
    break;
  }
  j.BeginObject().Key("method").String("skipped");
  j.Key("note").String("not localized: only the first " + std::to_string(localize_samples) +
                       " failing sample(s) are localized (max_localized_samples)");
  j.Key("first_diverging").String(first).Key("first_diverging_node").String(node);
  j.Key("introducing").BeginArray().EndArray().EndObject();
}

}  // namespace

Expected<MergedSamples> MergeBaselineShards(const std::vector<Shard>& shards,
                                            const std::vector<ShardReport>& reports) {
  OP_ASSIGN_OR_RETURN(Samples all, Collect(shards, SameCheck));
  const JsonValue& doc = shards.front().doc;
  const JsonValue* sh = Member(doc, "shard");
  // an unsharded report (shard 0 of 1) is the whole check: its localizations stay as they are
  size_t localize =
      sh != nullptr ? static_cast<size_t>(Num(Member(*sh, "localize_samples"), 0)) : SIZE_MAX;
  MergedSamples out;
  out.shards = shards.size();
  out.samples = all.present.size();
  for (const JsonValue* s : all.present) out.failed_samples += !Passed(*s);
  out.aborted = all.aborted;
  out.passed = !all.aborted && out.failed_samples == 0;
  std::vector<std::string> names;  // the baseline's stored tensors, in its order
  if (const JsonValue* t = Member(doc, "tensors"); t != nullptr && t->is_array()) {
    for (const auto& x : t->items()) names.push_back(Str(x, "name"));
  }
  out.tensors = Aggregate(all.present, Rows, names);
  double seconds = 0;  // the work of every shard
  for (const Shard& s : shards) seconds += Num(Member(s.doc, "seconds"), 0);

  JsonWriter j;
  j.BeginObject();
  for (const char* key :
       {"schema", "version", "onnxprobe_version", "model", "baseline", "baseline_created"}) {
    if (const JsonValue* v = Member(doc, key); v != nullptr) WriteJsonValue(*v, &j.Key(key));
  }
  j.Key("passed").Bool(out.passed).Key("aborted").Bool(all.aborted);
  if (all.aborted) j.Key("error").String(all.error);
  j.Key("samples_checked").UInt(out.samples);
  j.Key("failed_samples").UInt(out.failed_samples).Key("seconds").Number(seconds);
  j.Key("merged").BeginObject().Key("shards").UInt(shards.size()).Key("files").BeginArray();
  for (const auto& r : reports) j.String(r.name);
  j.EndArray().EndObject();
  if (const JsonValue* v = Member(doc, "environment_changes"); v != nullptr)
    WriteJsonValue(*v, &j.Key("environment_changes"));
  j.Key("samples").BeginArray();
  size_t failing = 0;
  for (const JsonValue* s : all.present) {
    // the first `localize` failing samples keep their shard's localization, as one process
    bool skip = !Passed(*s) && ++failing > localize;
    j.BeginObject();
    for (const auto& [key, value] : s->members()) {
      j.Key(key);
      if (key == "localization" && skip) {
        SkippedLocalization(*s, localize, j);
      } else {
        WriteJsonValue(value, &j);
      }
    }
    j.EndObject();
  }
  j.EndArray();
  AggregatesJson(out.tensors, j);
  j.EndObject();
  out.json = j.str() + "\n";
  return out;
}

}  // namespace onnxprobe::merge
