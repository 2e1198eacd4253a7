// MergeSampleShards: the shards' samples reports joined into the single-process report.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/file_util.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/report/merge.h"
#include "report/merge_shards.h"
#include "report/report_json.h"

namespace onnxprobe {
using namespace merge;  // NOLINT(google-build-using-namespace)
namespace {

constexpr uint64_t kMaxReportBytes = 1ull << 30;

// The fields two shards of one comparison share: the sides and the tolerances.
Status SameSettings(const Shard& first, const Shard& other) {
  const auto& a = Member(first.doc, "samples")->items();
  const auto& b = Member(other.doc, "samples")->items();
  if (a.empty() || b.empty()) return Status::Ok();
  const JsonValue* ra = Member(a.front(), "report");
  const JsonValue* rb = Member(b.front(), "report");
  if (ra == nullptr || rb == nullptr) return Corrupt(other.path + ": a sample has no report");
  for (const char* key : {"side_a", "side_b", "tolerance"}) {
    if (Text(Member(*ra, key)) != Text(Member(*rb, key)))
      return InvalidArgument(other.path + ": " + key + " differs from " + first.path +
                             "'s: shards of one comparison share their sides and tolerances");
  }
  return Status::Ok();
}

// The report's rows ("tensors") of a sample.
const std::vector<JsonValue>& Rows(const JsonValue& sample) {
  static const std::vector<JsonValue> kNone;
  const JsonValue* r = Member(sample, "report");
  const JsonValue* t = r != nullptr ? Member(*r, "tensors") : nullptr;
  return t != nullptr && t->is_array() ? t->items() : kNone;
}

// As FocusSample: the first failing sample, else the one closest to its tolerance.
size_t Focus(const std::vector<const JsonValue*>& samples) {
  for (size_t i = 0; i < samples.size(); ++i)
    if (!Passed(*samples[i])) return i;
  size_t best = 0;
  double worst = -1;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (const auto& row : Rows(*samples[i])) {
      double r = Num(Member(row, "tolerance_ratio"), std::numeric_limits<double>::infinity());
      if (Compared(row) && r > worst) worst = r, best = i;
    }
  }
  return best;
}

}  // namespace

Expected<MergedSamples> MergeSampleShards(const std::vector<std::string>& paths) {
  std::vector<ShardReport> reports;
  for (const auto& p : paths) {
    OP_ASSIGN_OR_RETURN(std::string text, ReadFile(p, kMaxReportBytes));
    reports.push_back({p, std::move(text)});
  }
  return MergeSampleShards(reports);
}

Expected<MergedSamples> MergeSampleShards(const std::vector<ShardReport>& reports) {
  if (reports.empty()) return InvalidArgument("merge: no shard reports given");
  // the first report's kind decides: a compare over samples or a baseline check
  std::vector<Shard> shards;
  std::string schema;
  for (const auto& r : reports) {
    OP_ASSIGN_OR_RETURN(Shard s, ParseShard(r, schema));
    if (schema.empty()) schema = Str(s.doc, "schema");
    shards.push_back(std::move(s));
  }
  if (schema == "onnxprobe-baseline-check") return MergeBaselineShards(shards, reports);
  OP_ASSIGN_OR_RETURN(Samples all, Collect(shards, SameSettings));
  const std::vector<const JsonValue*>& present = all.present;
  bool aborted = all.aborted;
  const std::string& error = all.error;

  MergedSamples out;
  out.shards = shards.size();
  out.samples = present.size();
  for (const JsonValue* s : present) out.failed_samples += !Passed(*s);
  out.aborted = aborted;
  out.passed = !aborted && out.failed_samples == 0;
  out.tensors = Aggregate(present, Rows);
  // a single process looks for where differences below tolerance are born on one sample only
  // (the focus); each shard did on its own focus: theirs are dropped, the report's form of
  // "not localized" taken from the reporter itself
  JsonValue blank;
  {
    JsonWriter j;
    WriteComparisonJson(CompareReport(), j);
    OP_ASSIGN_OR_RETURN(blank, ParseJson(j.str(), "an empty report"));
  }
  size_t focus = Focus(present);
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-compare-samples").Key("schema_version").Int(1);
  j.Key("passed").Bool(out.passed).Key("aborted").Bool(aborted);
  if (aborted) j.Key("error").String(error);
  j.Key("failed_samples").UInt(out.failed_samples);
  j.Key("merged").BeginObject().Key("shards").UInt(shards.size()).Key("files").BeginArray();
  for (const auto& r : reports) j.String(r.name);
  j.EndArray().EndObject();
  j.Key("samples").BeginArray();
  for (size_t i = 0; i < present.size(); ++i) {
    const JsonValue& s = *present[i];
    bool keep = !Passed(s) || (out.failed_samples == 0 && i == focus);
    j.BeginObject();
    for (const auto& [key, value] : s.members()) {
      j.Key(key);
      if (key != "report" || keep) {
        WriteJsonValue(value, &j);
        continue;
      }
      j.BeginObject();
      for (const auto& [rk, rv] : value.members()) {
        j.Key(rk);
        bool localized = rk == "localization" || rk == "drift_origins" || rk == "drift_unexamined";
        const JsonValue* b = localized ? blank.Find(rk) : nullptr;
        WriteJsonValue(b != nullptr ? *b : rv, &j);
      }
      j.EndObject();
    }
    j.EndObject();
  }
  j.EndArray();
  AggregatesJson(out.tensors, j);
  j.EndObject();
  out.json = j.str() + "\n";
  return out;
}

}  // namespace onnxprobe
