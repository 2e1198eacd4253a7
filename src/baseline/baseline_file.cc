// baseline.json: the baseline's index (samples and their dumps, stored tensors, thresholds,
// environment). Read back field by field; anything malformed names the file and the field.
#include "baseline/baseline_file.h"

#include <cmath>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

void WriteTolerance(const Tolerance& t, JsonWriter& j) {
  j.Key("atol").Number(t.atol).Key("rtol").Number(t.rtol).Key("scale_atol").Bool(t.scale_atol);
}

void WriteEnvironment(const Environment& e, JsonWriter& j) {
  j.BeginObject();
  j.Key("onnxprobe_version").String(e.onnxprobe_version);
  j.Key("runtime_version").String(e.runtime_version);
  j.Key("runtime_library").String(e.runtime_library);
  j.Key("runtime_library_sha256").String(e.runtime_library_sha256);
  j.Key("provider").String(e.session.provider);
  j.Key("provider_options").BeginObject();
  for (const auto& [k, v] : e.session.provider_options) j.Key(k).String(v);
  j.EndObject();
  j.Key("optimization_level").String(OptLevelName(e.session.optimization_level));
  j.Key("sequential").Bool(e.session.sequential);
  j.Key("intra_op_threads").Int(e.session.intra_op_threads);
  j.Key("inter_op_threads").Int(e.session.inter_op_threads);
  j.Key("cpu_model").String(e.cpu_model);
  j.Key("cpu_flags").BeginArray();
  for (const auto& f : e.cpu_flags) j.String(f);
  j.EndArray();
  j.Key("cpu_count").Int(e.cpu_count);
  j.Key("os").String(e.os);
  j.Key("model_sha256").String(e.model_sha256);
  j.EndObject();
}

// Typed field readers: `where` names the file and the enclosing object.
struct Reader {
  std::string where;
  Status Str(const JsonValue& o, const char* key, std::string* out) const {
    const JsonValue* v = o.Find(key);
    if (v == nullptr || !v->is_string())
      return Corrupt(where + ": \"" + key + "\" is missing or not a string");
    *out = v->as_string();
    return Status::Ok();
  }
  Status Num(const JsonValue& o, const char* key, double* out) const {
    const JsonValue* v = o.Find(key);
    if (v == nullptr || !v->is_number() || !std::isfinite(v->as_number()))
      return Corrupt(where + ": \"" + key + "\" is missing or not a number");
    *out = v->as_number();
    return Status::Ok();
  }
  Status Int(const JsonValue& o, const char* key, int64_t lo, int64_t hi, int64_t* out) const {
    double d = 0;
    OP_RETURN_IF_ERROR(Num(o, key, &d));
    if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
      return Corrupt(where + ": \"" + key + "\" is not an integer in [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "]");
    *out = static_cast<int64_t>(d);
    return Status::Ok();
  }
  Status Bool(const JsonValue& o, const char* key, bool* out) const {
    const JsonValue* v = o.Find(key);
    if (v == nullptr || !v->is_bool())
      return Corrupt(where + ": \"" + key + "\" is missing or not true/false");
    *out = v->as_bool();
    return Status::Ok();
  }
  Status Strings(const JsonValue& o, const char* key, std::vector<std::string>* out) const {
    const JsonValue* v = o.Find(key);
    if (v == nullptr || !v->is_array())
      return Corrupt(where + ": \"" + key + "\" is missing or not an array");
    for (const auto& x : v->items()) {
      if (!x.is_string()) return Corrupt(where + ": \"" + key + "\" holds a non-string");
      out->push_back(x.as_string());
    }
    return Status::Ok();
  }
  Expected<const JsonValue*> Obj(const JsonValue& o, const char* key) const {
    const JsonValue* v = o.Find(key);
    if (v == nullptr || !v->is_object())
      return Corrupt(where + ": \"" + key + "\" is missing or not an object");
    return v;
  }
  Reader In(const std::string& field) const { return Reader{where + " " + field}; }
};

Status ReadTolerance(const Reader& r, const JsonValue& o, Tolerance* t) {
  OP_RETURN_IF_ERROR(r.Num(o, "atol", &t->atol));
  OP_RETURN_IF_ERROR(r.Num(o, "rtol", &t->rtol));
  OP_RETURN_IF_ERROR(r.Bool(o, "scale_atol", &t->scale_atol));
  if (t->atol < 0 || t->rtol < 0) return Corrupt(r.where + ": a negative tolerance");
  return Status::Ok();
}

Status ReadEnvironment(const Reader& r, const JsonValue& o, Environment* e) {
  OP_RETURN_IF_ERROR(r.Str(o, "onnxprobe_version", &e->onnxprobe_version));
  OP_RETURN_IF_ERROR(r.Str(o, "runtime_version", &e->runtime_version));
  OP_RETURN_IF_ERROR(r.Str(o, "runtime_library", &e->runtime_library));
  OP_RETURN_IF_ERROR(r.Str(o, "runtime_library_sha256", &e->runtime_library_sha256));
  OP_RETURN_IF_ERROR(r.Str(o, "provider", &e->session.provider));
  OP_ASSIGN_OR_RETURN(const JsonValue* po, r.Obj(o, "provider_options"));
  for (const auto& [k, v] : po->members()) {
    if (!v.is_string()) return Corrupt(r.where + ": provider option '" + k + "' is not a string");
    e->session.provider_options[k] = v.as_string();
  }
  std::string level;
  OP_RETURN_IF_ERROR(r.Str(o, "optimization_level", &level));
  auto lv = ParseOptLevelName(level);
  if (!lv.ok()) return Corrupt(r.where + ": " + lv.status().message());
  e->session.optimization_level = *lv;
  OP_RETURN_IF_ERROR(r.Bool(o, "sequential", &e->session.sequential));
  int64_t n = 0;
  OP_RETURN_IF_ERROR(r.Int(o, "intra_op_threads", 0, 4096, &n));
  e->session.intra_op_threads = static_cast<int>(n);
  OP_RETURN_IF_ERROR(r.Int(o, "inter_op_threads", 0, 4096, &n));
  e->session.inter_op_threads = static_cast<int>(n);
  OP_RETURN_IF_ERROR(r.Str(o, "cpu_model", &e->cpu_model));
  OP_RETURN_IF_ERROR(r.Strings(o, "cpu_flags", &e->cpu_flags));
  OP_RETURN_IF_ERROR(r.Int(o, "cpu_count", 0, 1 << 20, &n));
  e->cpu_count = static_cast<int>(n);
  OP_RETURN_IF_ERROR(r.Str(o, "os", &e->os));
  OP_RETURN_IF_ERROR(r.Str(o, "model_sha256", &e->model_sha256));
  return Status::Ok();
}

// A relative path that stays inside the baseline folder.
Status Confined(const Reader& r, const std::string& rel) {
  fs::path p(rel);
  if (rel.empty() || p.is_absolute())
    return Corrupt(r.where + ": dump '" + rel + "' is not relative");
  for (const auto& part : p)
    if (part == "..") return Corrupt(r.where + ": dump '" + rel + "' leaves the baseline folder");
  return Status::Ok();
}

}  // namespace

std::string BaselineJson(const Baseline& b) {
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String(kBaselineFormat).Key("version").Int(kBaselineFormatVersion);
  j.Key("created").String(b.created);
  j.Key("model").String(b.model_path);
  j.Key("model_kept").Bool(b.model_kept);
  j.Key("environment");
  WriteEnvironment(b.environment, j);
  const TolerancePolicy& p = b.policy;
  j.Key("thresholds").BeginObject();
  WriteTolerance(p.global, j);
  j.Key("judge").String(JudgeByName(p.judge)).Key("rel_eps").Number(p.rel_eps);
  j.Key("rules").BeginArray();
  for (const auto& rule : p.rules) {
    j.BeginObject().Key("pattern").String(rule.pattern).Key("by_op_type").Bool(rule.by_op_type);
    WriteTolerance(rule.tolerance, j);
    j.EndObject();
  }
  j.EndArray().EndObject();
  j.Key("selection").BeginObject();
  j.Key("names").BeginArray();
  for (const auto& n : b.selection.names) j.String(n);
  j.EndArray().Key("op_types").BeginArray();
  for (const auto& n : b.selection.op_types) j.String(n);
  j.EndArray().Key("regex").String(b.selection.regex).EndObject();
  j.Key("tensors").BeginArray();
  for (const auto& n : b.tensors) j.String(n);
  j.EndArray();
  j.Key("samples").BeginArray();
  for (const auto& s : b.samples) {
    j.BeginObject().Key("name").String(s.name).Key("source").String(SampleSourceName(s.source));
    if (s.source == SampleSource::kSeed) j.Key("seed").UInt(s.seed);
    j.Key("files").BeginArray();
    for (const auto& f : s.files) j.String(f);
    j.EndArray().Key("dump").String(s.dump).EndObject();
  }
  j.EndArray();
  j.EndObject();
  return j.str() + "\n";
}

Expected<Baseline> ReadBaseline(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound(dir + ": no such baseline folder");
  std::string file = (fs::path(dir) / kBaselineFile).string();
  if (!fs::exists(file, ec))
    return NotFound(dir + ": not a baseline folder (no " + kBaselineFile + ")");
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(file, 64 << 20));
  OP_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, file));
  Reader r{file};
  if (!doc.is_object()) return Corrupt(file + ": not a JSON object");
  std::string format;
  OP_RETURN_IF_ERROR(r.Str(doc, "format", &format));
  if (format != kBaselineFormat)
    return Corrupt(file + ": format is '" + format + "', expected '" + kBaselineFormat + "'");
  int64_t version = 0;
  OP_RETURN_IF_ERROR(r.Int(doc, "version", 1, 1000, &version));
  if (version > kBaselineFormatVersion) {
    return Corrupt(file + ": baseline format version " + std::to_string(version) +
                   " is newer than this onnxprobe reads (" +
                   std::to_string(kBaselineFormatVersion) + ")");
  }
  Baseline b;
  b.dir = dir;
  OP_RETURN_IF_ERROR(r.Str(doc, "created", &b.created));
  OP_RETURN_IF_ERROR(r.Str(doc, "model", &b.model_path));
  OP_RETURN_IF_ERROR(r.Bool(doc, "model_kept", &b.model_kept));
  OP_ASSIGN_OR_RETURN(const JsonValue* env, r.Obj(doc, "environment"));
  OP_RETURN_IF_ERROR(ReadEnvironment(r.In("environment"), *env, &b.environment));
  OP_ASSIGN_OR_RETURN(const JsonValue* th, r.Obj(doc, "thresholds"));
  Reader rt = r.In("thresholds");
  OP_RETURN_IF_ERROR(ReadTolerance(rt, *th, &b.policy.global));
  std::string judge;
  OP_RETURN_IF_ERROR(rt.Str(*th, "judge", &judge));
  auto jb = ParseJudgeBy(judge);
  if (!jb.ok()) return Corrupt(rt.where + ": " + jb.status().message());
  b.policy.judge = *jb;
  const JsonValue* eps = th->Find("rel_eps");
  if (eps == nullptr || !(eps->is_number() || eps->type() == JsonValue::Type::kNull))
    return Corrupt(rt.where + ": \"rel_eps\" is missing or not a number");
  b.policy.rel_eps = eps->is_number() ? eps->as_number() : -1;
  const JsonValue* rules = th->Find("rules");
  if (rules == nullptr || !rules->is_array())
    return Corrupt(rt.where + ": \"rules\" is missing or not an array");
  for (const auto& x : rules->items()) {
    if (!x.is_object()) return Corrupt(rt.where + ": a rule is not an object");
    ToleranceRule rule;
    OP_RETURN_IF_ERROR(rt.Str(x, "pattern", &rule.pattern));
    OP_RETURN_IF_ERROR(rt.Bool(x, "by_op_type", &rule.by_op_type));
    OP_RETURN_IF_ERROR(ReadTolerance(rt, x, &rule.tolerance));
    b.policy.rules.push_back(std::move(rule));
  }
  Status valid = b.policy.Validate();
  if (!valid.ok()) return Corrupt(rt.where + ": " + valid.message());
  OP_ASSIGN_OR_RETURN(const JsonValue* sel, r.Obj(doc, "selection"));
  Reader rs = r.In("selection");
  OP_RETURN_IF_ERROR(rs.Strings(*sel, "names", &b.selection.names));
  OP_RETURN_IF_ERROR(rs.Strings(*sel, "op_types", &b.selection.op_types));
  OP_RETURN_IF_ERROR(rs.Str(*sel, "regex", &b.selection.regex));
  OP_RETURN_IF_ERROR(r.Strings(doc, "tensors", &b.tensors));
  const JsonValue* samples = doc.Find("samples");
  if (samples == nullptr || !samples->is_array() || samples->items().empty())
    return Corrupt(file + ": \"samples\" is missing, not an array or empty");
  for (size_t i = 0; i < samples->items().size(); ++i) {
    const JsonValue& x = samples->items()[i];
    Reader ri = r.In("sample " + std::to_string(i));
    if (!x.is_object()) return Corrupt(ri.where + ": not an object");
    BaselineSampleEntry s;
    OP_RETURN_IF_ERROR(ri.Str(x, "name", &s.name));
    std::string source;
    OP_RETURN_IF_ERROR(ri.Str(x, "source", &source));
    if (source == SampleSourceName(SampleSource::kSeed)) {
      s.source = SampleSource::kSeed;
      int64_t seed = 0;
      OP_RETURN_IF_ERROR(ri.Int(x, "seed", 0, int64_t(1) << 53, &seed));
      s.seed = static_cast<uint64_t>(seed);
    } else if (source == SampleSourceName(SampleSource::kFiles)) {
      s.source = SampleSource::kFiles;
    } else {
      return Corrupt(ri.where + ": unknown source '" + source + "'");
    }
    OP_RETURN_IF_ERROR(ri.Strings(x, "files", &s.files));
    OP_RETURN_IF_ERROR(ri.Str(x, "dump", &s.dump));
    OP_RETURN_IF_ERROR(Confined(ri, s.dump));
    fs::path dump = fs::path(dir) / s.dump;
    if (!fs::is_regular_file(dump / "manifest.json", ec))
      return NotFound(dump.string() + ": the dump of sample '" + s.name + "' is missing");
    b.samples.push_back(std::move(s));
  }
  if (b.model_kept && !fs::is_regular_file(fs::path(dir) / kBaselineModelFile, ec))
    return NotFound(dir + ": the model copy " + kBaselineModelFile + " is missing");
  return b;
}

}  // namespace onnxprobe
