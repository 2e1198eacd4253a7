#include "localize/repro.h"

#include <algorithm>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/localize/localize.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace fs = std::filesystem;

namespace onnxprobe {

Status WriteReproBundle(const std::string& user_dir, const ReproBundle& bundle,
                        const Culprit& culprit, const Side& b, const ComparisonResult& r) {
  const std::string dir = OutputPath(user_dir);  // through a link, never replacing it
  std::error_code ec;
  fs::path parent = ParentFolder(dir);
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return NotFound(dir + ": parent folder " + parent.string() + " does not exist");
  if (fs::exists(dir, ec) && !fs::exists(fs::path(dir) / "onnxprobe.json", ec) &&
      !fs::is_empty(dir, ec)) {
    return InvalidArgument(dir +
                           ": exists and is not an onnxprobe repro bundle; refusing to replace it");
  }
  auto standalone = EmbedExternalData(bundle.model_bytes, bundle.model_dir);
  if (!standalone.ok()) return standalone.status().WithContext(dir + ": the isolated model");
  std::string tmp = TempSiblingPath(dir);
  fs::create_directories(fs::path(tmp) / "test_data_set_0", ec);
  fs::create_directories(fs::path(tmp) / "observed", ec);
  if (ec) {
    RemoveTemporary(tmp);
    return IoError(dir + ": cannot create (" + ec.message() + ")");
  }
  auto fail = [&](const Status& st) {  // named by the folder asked for, not our temporary
    RemoveTemporary(tmp);
    std::string m = st.message();
    for (size_t at = m.find(tmp); at != std::string::npos; at = m.find(tmp, at + dir.size()))
      m.replace(at, tmp.size(), dir);
    return Status(st.code(), m);
  };
  Status st = WriteFileAtomic(tmp + "/model.onnx", *standalone);
  for (size_t k = 0; st.ok() && k < bundle.inputs.size(); ++k) {
    st = WriteTensorProto(tmp + "/test_data_set_0/input_" + std::to_string(k) + ".pb",
                          *bundle.inputs[k].second, bundle.inputs[k].first);
  }
  for (size_t k = 0; st.ok() && k < bundle.expected.size(); ++k) {
    st = WriteTensorProto(tmp + "/test_data_set_0/output_" + std::to_string(k) + ".pb",
                          *bundle.expected[k].second, bundle.expected[k].first);
  }
  for (size_t k = 0; st.ok() && k < bundle.observed.size(); ++k) {
    st = WriteTensorProto(tmp + "/observed/output_" + std::to_string(k) + ".pb",
                          *bundle.observed[k].second, bundle.observed[k].first);
  }
  if (!st.ok()) return fail(st);

  const SideInfo& si = b.info();
  ReproSettings settings;
  settings.session = b.session_options();
  settings.ort_version = si.runtime_version;
  settings.policy.judge = r.policy.judge;
  settings.policy.rel_eps = r.policy.rel_eps;
  settings.policy.global = r.policy.For(culprit.tensor, culprit.op_type);
  if (culprit.row >= 0 && culprit.row < static_cast<int>(r.rows.size()))
    settings.policy.global = r.rows[culprit.row].tolerance;
  const SessionOptions& so = settings.session;
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String("onnxprobe-repro").Key("format_version").Int(1);
  j.Key("culprit")
      .BeginObject()
      .Key("node")
      .String(culprit.node)
      .Key("op_type")
      .String(culprit.op_type);
  j.Key("tensor").String(culprit.tensor).Key("nodes").BeginArray();
  for (const auto& n : culprit.nodes) j.String(n);
  j.EndArray().Key("nodes_only_in_b").BeginArray();
  for (const auto& n : culprit.nodes_only_in_b) j.String(n);
  j.EndArray().EndObject();
  j.Key("reference").String(r.describe_a).Key("under_test").String(r.describe_b);
  j.Key("runtime").String(si.runtime).Key("runtime_library").String(si.runtime_library);
  WriteReproSettings(settings, &j);
  j.Key("isolated_max_abs")
      .Number(culprit.metrics.max_abs)
      .Key("isolated_max_rel")
      .Number(culprit.metrics.max_rel);
  j.EndObject();
  st = WriteFileAtomic(tmp + "/onnxprobe.json", j.str() + "\n");
  std::string level = OptLevelName(so.optimization_level);
  std::string readme =
      "onnxprobe repro bundle\n\n"
      "Node " +
      culprit.node + " (" + culprit.op_type +
      "), run on the runtime under test with the\n"
      "reference's exact inputs; output checked: " +
      (bundle.expected.empty() ? culprit.tensor : bundle.expected[0].first) +
      ".\n"
      "reference (A):  " +
      r.describe_a +
      "\n"
      "under test (B): " +
      r.describe_b +
      "\n"
      "culprit: " +
      culprit.reason +
      "\n"
      "nodes in the culprit's isolation: " +
      std::to_string(culprit.nodes.size()) +
      (culprit.nodes_only_in_b.empty() ? ""
                                       : " (" + std::to_string(culprit.nodes_only_in_b.size()) +
                                             " have no counterpart in the reference)") +
      "\n\n"
      "Layout (ONNX backend test): model.onnx; test_data_set_0/input_K.pb are the inputs;\n"
      "test_data_set_0/output_K.pb the reference's outputs (expected); observed/output_K.pb what "
      "the\n"
      "runtime under test produced. Any ONNX test runner can replay it.\n\n"
      "Replay with onnxprobe (exit code 1 when the mismatch reproduces):\n"
      "  onnxprobe replay " +
      dir +
      "\n"
      "which runs on " +
      si.runtime + ", provider " + so.provider + ", optimizations " + level +
      " (from onnxprobe.json); override with --provider, --opt-level, --ort-version.\n";
  if (st.ok()) st = WriteFileAtomic(tmp + "/README.txt", readme);
  if (!st.ok()) return fail(st);
  if (fs::exists(dir, ec)) fs::remove_all(dir, ec);
  ec = RenameTemporary(tmp, dir);
  if (ec) return fail(IoError(dir + ": cannot move the bundle into place (" + ec.message() + ")"));
  return Status::Ok();
}

void WriteReproSettings(const ReproSettings& s, JsonWriter* jp) {
  JsonWriter& j = *jp;
  const SessionOptions& so = s.session;
  j.Key("runtime_version").String(s.ort_version);
  j.Key("provider").String(so.provider).Key("provider_options").BeginObject();
  for (const auto& [k, v] : so.provider_options) j.Key(k).String(v);
  j.EndObject();
  j.Key("optimization_level")
      .Int(OptLevelNumber(so.optimization_level))
      .Key("sequential")
      .Bool(so.sequential);
  j.Key("intra_op_threads").Int(so.intra_op_threads);
  j.Key("inter_op_threads").Int(so.inter_op_threads);
  const TolerancePolicy& p = s.policy;
  j.Key("atol").Number(p.global.atol).Key("rtol").Number(p.global.rtol);
  j.Key("scale_atol").Bool(p.global.scale_atol).Key("rel_eps").Number(p.rel_eps);
  j.Key("judge").String(JudgeByName(p.judge));
}

Expected<ReproSettings> ReadReproSettings(const std::string& dir) {
  ReproSettings out;
  std::string path = (fs::path(dir) / "onnxprobe.json").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(path, 16u << 20));
  OP_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, path));
  if (!j.is_object()) return Corrupt(path + ": not a JSON object");
  auto str = [&j](const char* k) {
    const JsonValue* v = j.Find(k);
    return v != nullptr && v->is_string() ? v->as_string() : std::string();
  };
  auto num = [&j](const char* k, double fallback) {
    const JsonValue* v = j.Find(k);
    return v != nullptr && v->is_number() ? v->as_number() : fallback;
  };
  auto flag = [&j](const char* k, bool fallback) {
    const JsonValue* v = j.Find(k);
    return v != nullptr && v->is_bool() ? v->as_bool() : fallback;
  };
  SessionOptions& so = out.session;
  if (!str("provider").empty()) so.provider = str("provider");
  auto level = OptLevelFromNumber(num("optimization_level", 0));
  if (!level.ok()) return Corrupt(path + ": " + level.status().message());
  so.optimization_level = *level;
  so.sequential = flag("sequential", so.sequential);
  so.intra_op_threads = static_cast<int>(num("intra_op_threads", 0));
  so.inter_op_threads = static_cast<int>(num("inter_op_threads", 0));
  if (const JsonValue* po = j.Find("provider_options"); po != nullptr && po->is_object()) {
    for (const auto& [k, v] : po->members()) {
      if (v.is_string()) so.provider_options[k] = v.as_string();
    }
  }
  out.ort_version = str("runtime_version");
  if (!out.ort_version.empty()) {
    auto lib = OrtLibraryForVersion(out.ort_version);  // the runtime the mismatch was seen on
    if (lib.ok()) out.ort_library = *lib;
  }
  TolerancePolicy& p = out.policy;
  p.global.atol = num("atol", p.global.atol);
  p.global.rtol = num("rtol", p.global.rtol);
  p.rel_eps = num("rel_eps", p.rel_eps);
  p.global.scale_atol = flag("scale_atol", p.global.scale_atol);
  if (std::string judge = str("judge"); !judge.empty()) {
    OP_ASSIGN_OR_RETURN(p.judge, ParseJudgeBy(judge));
  }
  return out;
}

Expected<ReplayResult> ReplayBundle(const std::string& dir, const std::string& ort_library,
                                    const SessionOptions& options, const TolerancePolicy& policy) {
  OP_ASSIGN_OR_RETURN(Model model, Model::Load((fs::path(dir) / "model.onnx").string()));
  std::vector<NamedTensor> inputs, expected;
  for (size_t k = 0;; ++k) {
    fs::path p = fs::path(dir) / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) break;
    OP_ASSIGN_OR_RETURN(NamedTensor t, ReadTensorProto(p.string()));
    if (k < model.summary().inputs.size()) t.name = model.summary().inputs[k].name;
    inputs.push_back(std::move(t));
  }
  for (size_t k = 0;; ++k) {
    fs::path p = fs::path(dir) / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) break;
    OP_ASSIGN_OR_RETURN(NamedTensor t, ReadTensorProto(p.string()));
    if (k < model.summary().outputs.size()) t.name = model.summary().outputs[k].name;
    expected.push_back(std::move(t));
  }
  if (expected.empty())
    return InvalidArgument(dir + ": no test_data_set_0/output_0.pb to compare with");
  if (inputs.size() != model.summary().inputs.size()) {
    return InvalidArgument(dir + ": model.onnx has " +
                           std::to_string(model.summary().inputs.size()) +
                           " inputs but test_data_set_0 holds " + std::to_string(inputs.size()));
  }
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(ort_library));
  OP_ASSIGN_OR_RETURN(auto session, OpenMarkedSession(model, *backend, {}, options));
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& nt : inputs) refs.emplace_back(nt.name, &nt.tensor);
  std::vector<std::string> names;
  for (const auto& e : expected) names.push_back(e.name);
  OP_ASSIGN_OR_RETURN(auto outs, session->Run(refs, names));
  ReplayResult rr;
  rr.runtime = RuntimeLabel(*backend);
  for (size_t k = 0; k < expected.size(); ++k) {
    TensorResult row;
    row.name = row.name_b = expected[k].name;
    row.tolerance = policy.For(row.name, "");
    JudgeRow(expected[k].tensor, outs[k].tensor, policy, CompareOptions(), &row);
    rr.failures += !row.pass;
    rr.rows.push_back(std::move(row));
  }
  return rr;
}

}  // namespace onnxprobe
