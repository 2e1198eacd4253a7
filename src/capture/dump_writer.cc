#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe {

struct DumpWriter::Entry {
  DumpEntryKind kind = DumpEntryKind::kTensor;
  std::string name, node, op_type, file;
  int topo_index = -1;
  DType dtype = DType::kFloat32;
  Shape shape;
  TensorStats stats;
};

std::string DumpFileName(size_t index, const std::string& tensor_name) {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%05zu_", index);
  std::string s = prefix;
  for (char c : tensor_name) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    s += keep ? c : '_';
  }
  if (s.size() > 200) s.resize(200);  // file names stay well under NAME_MAX
  return s + ".npy";
}

Expected<std::unique_ptr<DumpWriter>> DumpWriter::Create(const std::string& user_path,
                                                         DumpMetadata meta) {
  const std::string path = OutputPath(user_path);  // through a link, never replacing it
  std::unique_ptr<DumpWriter> w(new DumpWriter());
  w->path_ = path;
  w->meta_ = std::move(meta);
  w->npz_ = fs::path(path).extension() == ".npz";
  fs::path parent = ParentFolder(path);
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    return NotFound(path + ": parent folder " + parent.string() + " does not exist");
  }
  if (w->npz_) {
    w->npz_writer_ = std::make_unique<NpzWriter>();
    OP_RETURN_IF_ERROR(w->npz_writer_->Open(path));
  } else {
    w->tmp_ = TempSiblingPath(path);
    fs::create_directories(w->tmp_, ec);
    if (ec) return IoError(path + ": cannot create folder " + w->tmp_ + " (" + ec.message() + ")");
  }
  return w;
}

DumpWriter::~DumpWriter() {
  if (!finished_ && !tmp_.empty()) RemoveTemporary(tmp_);
}

Status DumpWriter::Write(DumpEntryKind kind, const std::string& name, const Tensor& t,
                         const CapturedTensor* c) {
  auto e = std::make_unique<Entry>();
  e->kind = kind;
  e->name = name;
  if (c != nullptr) {
    e->node = c->node_name;
    e->op_type = c->op_type;
    e->topo_index = c->topo_index;
  }
  e->dtype = t.dtype();
  e->shape = t.shape();
  e->stats = ComputeStats(t);
  bool input = kind == DumpEntryKind::kInput;
  if (npz_) {
    e->file = input ? "input:" + name : name;  // the archive key (inputs kept apart)
    OP_RETURN_IF_ERROR(npz_writer_->Add(e->file, t));
  } else {
    e->file = (input ? "inputs/" : "") + DumpFileName(entries_.size(), name);
    if (input) {
      std::error_code ec;
      fs::create_directories(tmp_ + "/inputs", ec);
    }
    OP_RETURN_IF_ERROR(WriteNpy(tmp_ + "/" + e->file, t));
  }
  bytes_written_ += t.byte_size();
  entries_.push_back(std::move(e));
  return Status::Ok();
}

Status DumpWriter::AddInput(const NamedTensor& input) {
  return Write(DumpEntryKind::kInput, input.name, input.tensor, nullptr);
}

Status DumpWriter::Consume(CapturedTensor&& t) {
  if (!t.skipped.empty()) {
    skipped_.push_back({t.name, t.skipped});
    return Status::Ok();
  }
  return Write(DumpEntryKind::kTensor, t.name, t.tensor, &t);
}

Status DumpWriter::Finish(const CaptureReport& report) {
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String("onnxprobe-dump").Key("format_version").Int(1);
  j.Key("model").String(meta_.model_path).Key("model_sha256").String(meta_.model_sha256);
  j.Key("runtime").String(meta_.runtime).Key("runtime_version").String(meta_.runtime_version);
  j.Key("provider").String(meta_.provider);
  j.Key("optimization_level")
      .Int(OptLevelNumber(meta_.optimization_level))
      .Key("seed")
      .UInt(meta_.seed);
  j.Key("runs").UInt(report.runs);
  if (!meta_.settings.empty()) {
    j.Key("session").BeginObject();
    for (const auto& [k, v] : meta_.settings) j.Key(k).String(v);
    j.EndObject();
  }
  if (report.observer_checked) {
    j.Key("observer_identical").Bool(report.observer_identical);
  }
  WriteSkipped(skipped_, j);
  j.Key("tensors").BeginArray();
  for (const auto& e : entries_) {
    j.BeginObject();
    j.Key("name").String(e->name);
    j.Key("kind").String(DumpEntryKindName(e->kind));
    j.Key("node").String(e->node).Key("op_type").String(e->op_type);
    j.Key("topo_index").Int(e->topo_index);
    j.Key("dtype").String(DTypeName(e->dtype)).Key("shape").IntArray(e->shape);
    j.Key("file").String(e->file);
    j.Key("stats").BeginObject();
    j.Key("min").Number(e->stats.min).Key("max").Number(e->stats.max);
    j.Key("mean").Number(e->stats.mean).Key("std").Number(e->stats.std);
    j.Key("nan").UInt(e->stats.nan_count).Key("inf").UInt(e->stats.inf_count);
    j.EndObject();
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  std::string manifest = j.str() + "\n";
  if (npz_) {
    OP_RETURN_IF_ERROR(npz_writer_->AddRaw("manifest.json", manifest));
    OP_RETURN_IF_ERROR(npz_writer_->Finish());
  } else {
    OP_RETURN_IF_ERROR(WriteFileAtomic(tmp_ + "/manifest.json", manifest));
    std::error_code ec;
    if (fs::exists(path_, ec)) {
      if (!fs::exists(fs::path(path_) / "manifest.json", ec) && !fs::is_empty(path_, ec)) {
        return InvalidArgument(path_ +
                               ": exists and is not an onnxprobe dump; refusing to replace it");
      }
      fs::remove_all(path_, ec);
    }
    ec = RenameTemporary(tmp_, path_);
    if (ec) return IoError(path_ + ": cannot move dump into place (" + ec.message() + ")");
  }
  finished_ = true;
  return Status::Ok();
}

}  // namespace onnxprobe
