// SaveBaseline: capture every sample's graph outputs (and chosen intermediates) into dumps in a
// temporary folder, write baseline.json last, then move the folder into place.
#include <chrono>
#include <filesystem>
#include <set>

#include "baseline/baseline_file.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/baseline/baseline.h"
#include "onnxprobe/capture/dump.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

bool SelectionGiven(const TensorSelection& s) {
  return !s.names.empty() || !s.op_types.empty() || !s.regex.empty();
}

// Graph outputs plus the selection, in topological order.
Expected<std::vector<std::string>> StoredTensors(const Model& model, const BaselineSaveRequest& r) {
  std::set<std::string> chosen;
  if (r.all_tensors || SelectionGiven(r.selection)) {
    TensorSelection sel = r.all_tensors ? TensorSelection() : r.selection;
    OP_ASSIGN_OR_RETURN(auto names, SelectTensors(model, sel));
    chosen.insert(names.begin(), names.end());
  }
  std::vector<std::string> out;
  for (const auto& t : model.index().tensors()) {
    bool capturable = t.kind == TensorKind::kIntermediate || t.kind == TensorKind::kGraphOutput;
    if (capturable && (t.kind == TensorKind::kGraphOutput || chosen.count(t.name))) {
      out.push_back(t.name);
    }
  }
  if (out.empty())
    return InvalidArgument(model.path() + ": the model has no graph output to store");
  return out;
}

// Moves the finished temporary folder to `path`, replacing an earlier baseline there.
Status Publish(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  std::string old;
  if (fs::exists(path, ec)) {
    bool ours = fs::is_regular_file(fs::path(path) / kBaselineFile, ec);
    if (!ours && !(fs::is_directory(path, ec) && fs::is_empty(path, ec))) {
      return InvalidArgument(path +
                             ": exists and is not an onnxprobe baseline; refusing to "
                             "replace it");
    }
    old = TempSiblingPath(path);
    fs::rename(path, old, ec);
    if (ec) return IoError(path + ": cannot move the old baseline aside (" + ec.message() + ")");
  }
  ec = RenameTemporary(tmp, path);
  if (ec) {
    if (!old.empty()) fs::rename(old, path, ec);
    return IoError(path + ": cannot move the baseline into place (" + ec.message() + ")");
  }
  if (!old.empty()) RemoveTemporary(old);
  return Status::Ok();
}

uint64_t FolderBytes(const std::string& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) n += e.file_size(ec);
  }
  return n;
}

Status SaveInto(const std::string& tmp, const BaselineSaveRequest& req, BaselineSaveReport* rep) {
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model_path));
  OP_ASSIGN_OR_RETURN(std::vector<InputSample> samples, ListInputSamples(req.samples));
  OP_ASSIGN_OR_RETURN(std::vector<std::string> tensors, StoredTensors(model, req));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  std::string sha256 = model.Hashes(false).sha256;

  Baseline& b = rep->baseline;
  b.dir = req.output;
  b.model_path = req.model_path;
  b.created = UtcNowIso8601();
  b.environment = SnapshotEnvironment(*backend, req.session, sha256);
  b.policy = req.policy;
  b.selection = req.all_tensors ? TensorSelection{{}, {}, "."} : req.selection;
  b.tensors = tensors;

  CaptureOptions capture;
  capture.session = req.session;
  capture.max_memory = req.max_memory;
  fs::create_directories(fs::path(tmp) / "samples");
  for (size_t i = 0; i < samples.size(); ++i) {
    const InputSample& s = samples[i];
    std::string what = "sample '" + s.name + "'";
    InputPreparation prep;
    auto inputs = PrepareInputs(model, s.inputs, &prep);
    if (!inputs.ok()) return inputs.status().WithContext(what);
    for (const auto& n : prep.notes) rep->notes.push_back(what + ": " + n);
    BaselineSampleEntry e;
    e.name = s.name;
    e.source = s.source;
    e.seed = s.inputs.seed;
    e.files = s.inputs.files;
    e.dump = "samples/" + DumpFileName(i, s.name);
    e.dump.resize(e.dump.size() - 4);  // DumpFileName ends in ".npy"
    DumpMetadata meta;
    meta.model_path = req.model_path;
    meta.model_sha256 = sha256;
    meta.runtime = RuntimeLabel(*backend);
    meta.runtime_version = backend->version();
    meta.provider = req.session.provider;
    meta.optimization_level = req.session.optimization_level;
    meta.seed = s.inputs.seed;
    OP_ASSIGN_OR_RETURN(auto writer, DumpWriter::Create((fs::path(tmp) / e.dump).string(), meta));
    for (const auto& in : *inputs) OP_RETURN_IF_ERROR(writer->AddInput(in));
    auto captured = Capture(model, *backend, *inputs, tensors, capture, *writer);
    if (!captured.ok()) return captured.status().WithContext(what);
    if (!captured->skipped.empty()) {
      return Unsupported(what + ": tensor " + captured->skipped.front().ToString() +
                         " cannot be stored (not a plain tensor)");
    }
    OP_RETURN_IF_ERROR(writer->Finish(*captured));
    b.samples.push_back(std::move(e));
    if (req.on_sample && !req.on_sample(i + 1, samples.size()) && i + 1 < samples.size())
      return InvalidArgument("baseline save stopped by the caller after sample '" + s.name + "'");
    // tensors the optimized graph fuses away are not captured (capturing them would block the
    // fusion): the baseline lists what it stores
    if (i == 0 && !captured->fused.empty()) {
      std::set<std::string> fused(captured->fused.begin(), captured->fused.end());
      std::vector<std::string> kept;
      for (const auto& t : b.tensors)
        if (!fused.count(t)) kept.push_back(t);
      rep->notes.push_back(std::to_string(b.tensors.size() - kept.size()) +
                           " selected tensors are fused away by the runtime's optimizations "
                           "and not stored");
      b.tensors = std::move(kept);
    }
  }
  if (req.keep_model) {
    std::error_code ec;
    fs::copy_file(req.model_path, fs::path(tmp) / kBaselineModelFile, ec);
    if (ec)
      return IoError(req.model_path + ": cannot copy into the baseline (" + ec.message() + ")");
    b.model_kept = true;
  }
  return WriteFileAtomic((fs::path(tmp) / kBaselineFile).string(), BaselineJson(b));
}

}  // namespace

Expected<BaselineSaveReport> SaveBaseline(const BaselineSaveRequest& req) {
  ScopedAllocationLimit budget(req.max_memory);
  auto t0 = std::chrono::steady_clock::now();
  BaselineSaveReport rep;
  const std::string output = OutputPath(req.output);  // through a link, never replacing it
  std::string tmp = TempSiblingPath(output);
  Status st = SaveInto(tmp, req, &rep);
  if (st.ok()) {
    rep.bytes_written = FolderBytes(tmp);
    st = Publish(tmp, output);
  }
  if (!st.ok()) {
    RemoveTemporary(tmp);
    return st;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace onnxprobe
