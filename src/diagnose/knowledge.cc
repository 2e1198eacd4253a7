#include "diagnose/knowledge.h"

#include <filesystem>

#include "common/clock.h"
#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"

namespace onnxprobe::diagnose {
namespace {

constexpr const char* kSchema = "onnxprobe-knowledge";
constexpr int kVersion = 1;
constexpr uint64_t kMaxBytes = 64ull << 20;

std::string Field(const JsonValue& v, const char* key) {
  const JsonValue* x = v.Find(key);
  return x != nullptr && x->is_string() ? x->as_string() : "";
}

std::string FixText(const DiagnosisFix& f) {
  std::string s;
  if (!f.command.empty()) s += f.command;
  for (const auto& x : f.compare_flags) s += (s.empty() ? "" : " ") + x;
  return s.empty() ? f.summary : s;
}

}  // namespace

Expected<std::vector<KnowledgeEntry>> ReadKnowledge(const std::string& path) {
  std::vector<KnowledgeEntry> out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxBytes));
  OP_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, path));
  const JsonValue* schema = doc.Find("schema");
  if (schema == nullptr || !schema->is_string() || schema->as_string() != kSchema) {
    return InvalidArgument(path + " is not an onnxprobe knowledge file (no \"schema\": \"" +
                           kSchema + "\"): refusing to replace it");
  }
  const JsonValue* version = doc.Find("version");
  if (version == nullptr || !version->is_number() || version->as_number() != kVersion) {
    return InvalidArgument(path + ": knowledge file version " +
                           (version != nullptr && version->is_number()
                                ? FormatNumber(version->as_number())
                                : std::string("missing")) +
                           ", this onnxprobe reads version " + std::to_string(kVersion));
  }
  const JsonValue* entries = doc.Find("entries");
  if (entries == nullptr || !entries->is_array())
    return InvalidArgument(path + ": \"entries\" must be an array");
  for (const JsonValue& e : entries->items()) {
    if (!e.is_object()) return InvalidArgument(path + ": every entry must be an object");
    out.push_back({Field(e, "recorded"), Field(e, "model"), Field(e, "model_sha256"),
                   Field(e, "node"), Field(e, "op_type"), Field(e, "cause"), Field(e, "summary"),
                   Field(e, "fix")});
  }
  return out;
}

void CiteKnowledge(const std::vector<KnowledgeEntry>& earlier, std::vector<Finding>* found) {
  for (Finding& f : *found) {
    size_t count = 0;
    const KnowledgeEntry* last = nullptr;
    for (const auto& e : earlier) {
      if (e.cause != CauseName(f.cause) || e.op_type != f.op_type) continue;
      ++count;
      last = &e;
    }
    if (last == nullptr) continue;
    std::string model = std::filesystem::path(last->model).filename().string();
    f.seen_before = "seen " + std::to_string(count) + (count == 1 ? " time" : " times") +
                    " before on " + f.op_type + "; last on " + model + " (sha256 " +
                    last->model_sha256.substr(0, 12) + ") node " + last->node + ", " +
                    last->recorded + ": fix " + last->fix;
  }
}

Status RecordKnowledge(const std::string& path, std::vector<KnowledgeEntry> earlier,
                       const std::vector<Finding>& found, const std::string& model,
                       const std::string& model_sha256) {
  std::string now = UtcNowIso8601();
  for (const Finding& f : found) {
    earlier.push_back({now, model, model_sha256, f.node, f.op_type, CauseName(f.cause), f.summary,
                       FixText(f.fix)});
  }
  JsonWriter j;
  j.BeginObject().Key("schema").String(kSchema).Key("version").Int(kVersion);
  j.Key("entries").BeginArray();
  for (const auto& e : earlier) {
    j.BeginObject().Key("recorded").String(e.recorded).Key("model").String(e.model);
    j.Key("model_sha256").String(e.model_sha256).Key("node").String(e.node);
    j.Key("op_type").String(e.op_type).Key("cause").String(e.cause);
    j.Key("summary").String(e.summary).Key("fix").String(e.fix).EndObject();
  }
  j.EndArray().EndObject();
  return WriteFileAtomic(path, j.str() + "\n");
}

}  // namespace onnxprobe::diagnose
