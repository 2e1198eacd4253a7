// Reading shards' reports and recomputing aggregates from their rows (merge_shards.h).
#include "report/merge_shards.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "onnxprobe/common/json.h"

namespace onnxprobe::merge {

const JsonValue* Member(const JsonValue& v, const char* key) { return v.Find(key); }

double Num(const JsonValue* v, double if_null) {
  return v != nullptr && v->is_number() ? v->as_number() : if_null;
}

std::string Str(const JsonValue& v, const char* key) {
  const JsonValue* x = Member(v, key);
  return x != nullptr && x->is_string() ? x->as_string() : "";
}

std::string Text(const JsonValue* v) {
  if (v == nullptr) return "";
  JsonWriter j(false);
  WriteJsonValue(*v, &j);
  return j.str();
}

bool Passed(const JsonValue& sample) {
  const JsonValue* p = Member(sample, "passed");
  return p != nullptr && p->is_bool() && p->as_bool();
}

Expected<Shard> ParseShard(const ShardReport& report, const std::string& schema) {
  Shard s;
  const std::string& path = report.name;
  s.path = path;
  OP_ASSIGN_OR_RETURN(s.doc, ParseJson(report.json, path));
  std::string kind = Str(s.doc, "schema");
  const JsonValue* samples = Member(s.doc, "samples");
  bool known = kind == "onnxprobe-compare-samples" || kind == "onnxprobe-baseline-check";
  if (schema.empty() && (!known || samples == nullptr || !samples->is_array())) {
    return InvalidArgument(path +
                           " is not a samples report (compare --inputs/--samples --json) nor a "
                           "baseline check's (baseline check --json)");
  }
  if (!schema.empty() && (kind != schema || samples == nullptr || !samples->is_array()))
    return InvalidArgument(path + " is not a report of the kind the first one is (" + schema + ")");
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

Expected<Samples> Collect(const std::vector<Shard>& shards,
                          const std::function<Status(const Shard&, const Shard&)>& same) {
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
    OP_RETURN_IF_ERROR(same(first, s));
  }
  for (size_t i = 0; i < first.count; ++i) {
    if (!by_index.count(i))
      return InvalidArgument("shard " + std::to_string(i) + "/" + std::to_string(first.count) +
                             " is missing");
  }
  // every sample once, in its place in the full list
  std::vector<const JsonValue*> samples(first.total, nullptr);
  Samples out;
  for (const Shard& s : shards) {
    const auto& items = Member(s.doc, "samples")->items();
    for (size_t k = 0; k < items.size(); ++k) {
      if (samples[s.positions[k]] != nullptr)
        return InvalidArgument(s.path + ": sample " + std::to_string(s.positions[k]) +
                               " is in another shard too");
      samples[s.positions[k]] = &items[k];
    }
    const JsonValue* ab = Member(s.doc, "aborted");
    if (ab != nullptr && ab->is_bool() && ab->as_bool() && !out.aborted) {
      out.aborted = true;
      out.error = Str(s.doc, "error");
    }
  }
  for (const JsonValue* s : samples)
    if (s != nullptr) out.present.push_back(s);
  if (!out.aborted && out.present.size() != first.total)
    return InvalidArgument("the shards hold " + std::to_string(out.present.size()) + " of " +
                           std::to_string(first.total) + " samples");
  return out;
}

bool Compared(const JsonValue& row) { return Str(row, "state") == "compared"; }

std::vector<TensorAggregate> Aggregate(const std::vector<const JsonValue*>& samples,
                                       const RowsOf& rows, std::vector<std::string> names) {
  std::vector<TensorAggregate> out;
  if (samples.empty()) return out;
  if (names.empty()) {
    for (const auto& first : rows(*samples.front())) names.push_back(Str(first, "name"));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const auto& name : names) {
    TensorAggregate a;
    a.name = name;
    for (const JsonValue* s : samples) {
      for (const auto& row : rows(*s)) {
        if (Str(row, "name") != a.name || !Compared(row)) continue;
        double ratio = Num(Member(row, "tolerance_ratio"), kInf);
        double abs = Num(Member(row, "max_abs"), kInf);
        double rel = Num(Member(row, "max_rel"), kInf);
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

}  // namespace onnxprobe::merge
