// MergeSampleShards: the shards' samples reports joined into the single-process report.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/file_util.h"
#include "onnxprobe/json.h"
#include "onnxprobe/json_value.h"
#include "onnxprobe/report/merge.h"
#include "report/report_json.h"

namespace onnxprobe {
namespace {

constexpr uint64_t kMaxReportBytes = 1ull << 30;

struct Shard {
  std::string path;
  JsonValue doc;
  size_t index = 0, count = 1, total = 0;
  std::vector<size_t> positions;
};

const JsonValue* Member(const JsonValue& v, const char* key) { return v.Find(key); }

double Num(const JsonValue* v, double if_null) {
  return v != nullptr && v->is_number() ? v->as_number() : if_null;
}

std::string Text(const JsonValue* v) {
  if (v == nullptr) return "";
  JsonWriter j(false);
  WriteJsonValue(*v, &j);
  return j.str();
}

Expected<Shard> ParseShard(const ShardReport& report) {
  Shard s;
  const std::string& path = report.name;
  s.path = path;
  OP_ASSIGN_OR_RETURN(s.doc, ParseJson(report.json, path));
  const JsonValue* schema = Member(s.doc, "schema");
  const JsonValue* samples = Member(s.doc, "samples");
  if (schema == nullptr || !schema->is_string() ||
      schema->as_string() != "onnxprobe-compare-samples" || samples == nullptr ||
      !samples->is_array()) {
    return InvalidArgument(path + " is not a samples report (compare --inputs/--samples --json)");
  }
  size_t n = samples->items().size();
  const JsonValue* shard = Member(s.doc, "shard");
  if (shard == nullptr) {  // an unsharded report: shard 0 of 1
    s.total = n;
    for (size_t k = 0; k < n; ++k) s.positions.push_back(k);
    return s;
  }
  s.index = static_cast<size_t>(Num(Member(*shard, "index"), -1));
  s.count = static_cast<size_t>(Num(Member(*shard, "count"), 0));
  s.total = static_cast<size_t>(Num(Member(*shard, "total_samples"), 0));
  const JsonValue* pos = Member(*shard, "positions");
  if (pos == nullptr || !pos->is_array() || pos->items().size() != n || s.count == 0 ||
      s.index >= s.count)
    return Corrupt(path + ": \"shard\" is malformed (index, count, total_samples, positions)");
  for (const auto& p : pos->items()) {
    double k = Num(&p, -1);
    if (!(k >= 0) || k >= static_cast<double>(s.total) || k != std::floor(k))
      return Corrupt(path + ": a shard position is not a sample of " + std::to_string(s.total));
    s.positions.push_back(static_cast<size_t>(k));
  }
  return s;
}

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

bool Passed(const JsonValue& sample) {
  const JsonValue* p = Member(sample, "passed");
  return p != nullptr && p->is_bool() && p->as_bool();
}

// The report's rows ("tensors") of a sample.
const std::vector<JsonValue>& Rows(const JsonValue& sample) {
  static const std::vector<JsonValue> kNone;
  const JsonValue* r = Member(sample, "report");
  const JsonValue* t = r != nullptr ? Member(*r, "tensors") : nullptr;
  return t != nullptr && t->is_array() ? t->items() : kNone;
}

bool Compared(const JsonValue& row) {
  const JsonValue* s = Member(row, "state");
  return s != nullptr && s->is_string() && s->as_string() == "compared";
}

std::string Str(const JsonValue& v, const char* key) {
  const JsonValue* x = Member(v, key);
  return x != nullptr && x->is_string() ? x->as_string() : "";
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

// As AggregateSamples, over the JSON rows (numbers there read back exactly).
std::vector<TensorAggregate> Aggregate(const std::vector<const JsonValue*>& samples) {
  std::vector<TensorAggregate> out;
  if (samples.empty()) return out;
  for (const auto& first : Rows(*samples.front())) {
    TensorAggregate a;
    a.name = Str(first, "name");
    for (const JsonValue* s : samples) {
      for (const auto& row : Rows(*s)) {
        if (Str(row, "name") != a.name || !Compared(row)) continue;
        double ratio = Num(Member(row, "tolerance_ratio"), std::numeric_limits<double>::infinity());
        double abs = Num(Member(row, "max_abs"), std::numeric_limits<double>::infinity());
        double rel = Num(Member(row, "max_rel"), std::numeric_limits<double>::infinity());
        ++a.samples;
        if (Str(row, "verdict") != "PASS") ++a.failures;
        a.mean_max_abs += abs;
        a.mean_max_rel += rel;
        if (a.worst_sample.empty() || ratio > a.worst_tolerance_ratio) {
          a.worst_sample = Str(*s, "name");
          a.worst_tolerance_ratio = ratio;
        }
        a.worst_max_abs = std::max(a.worst_max_abs, abs);
        a.worst_max_rel = std::max(a.worst_max_rel, rel);
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
  std::vector<Shard> shards;
  for (const auto& r : reports) {
    OP_ASSIGN_OR_RETURN(Shard s, ParseShard(r));
    shards.push_back(std::move(s));
  }
  const Shard& first = shards.front();
  std::map<size_t, const Shard*> by_index;
  for (const Shard& s : shards) {
    if (s.count != first.count || s.total != first.total) {
      return InvalidArgument(s.path + ": shard of " + std::to_string(s.count) + " over " +
                             std::to_string(s.total) + " samples, " + first.path + " of " +
                             std::to_string(first.count) + " over " + std::to_string(first.total));
    }
    auto [it, fresh] = by_index.emplace(s.index, &s);
    if (!fresh)
      return InvalidArgument("shard " + std::to_string(s.index) + "/" + std::to_string(s.count) +
                             " given twice: " + it->second->path + " and " + s.path);
    OP_RETURN_IF_ERROR(SameSettings(first, s));
  }
  for (size_t i = 0; i < first.count; ++i) {
    if (!by_index.count(i))
      return InvalidArgument("shard " + std::to_string(i) + "/" + std::to_string(first.count) +
                             " is missing");
  }
  // every sample once, in its place in the full list
  std::vector<const JsonValue*> samples(first.total, nullptr);
  bool aborted = false;
  std::string error;
  for (const Shard& s : shards) {
    const auto& items = Member(s.doc, "samples")->items();
    for (size_t k = 0; k < items.size(); ++k) {
      if (samples[s.positions[k]] != nullptr)
        return InvalidArgument(s.path + ": sample " + std::to_string(s.positions[k]) +
                               " is in another shard too");
      samples[s.positions[k]] = &items[k];
    }
    const JsonValue* ab = Member(s.doc, "aborted");
    if (ab != nullptr && ab->is_bool() && ab->as_bool() && !aborted) {
      aborted = true;
      error = Str(s.doc, "error");
    }
  }
  std::vector<const JsonValue*> present;
  for (const JsonValue* s : samples)
    if (s != nullptr) present.push_back(s);
  if (!aborted && present.size() != first.total)
    return InvalidArgument("the shards hold " + std::to_string(present.size()) + " of " +
                           std::to_string(first.total) + " samples");

  MergedSamples out;
  out.shards = shards.size();
  out.samples = present.size();
  for (const JsonValue* s : present) out.failed_samples += !Passed(*s);
  out.aborted = aborted;
  out.passed = !aborted && out.failed_samples == 0;
  out.tensors = Aggregate(present);
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
