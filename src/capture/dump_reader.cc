#include <cmath>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

Status ReadString(const JsonValue& obj, const char* key, std::string* out, const std::string& where,
                  bool required = true) {
  const JsonValue* v = obj.Find(key);
  if (v == nullptr) {
    return required ? Corrupt(where + ": missing \"" + key + "\"") : Status::Ok();
  }
  if (!v->is_string()) return Corrupt(where + ": \"" + key + "\" is not a string");
  *out = v->as_string();
  return Status::Ok();
}

// `paths`: the file field names a file in a dump folder (not an .npz entry) and must stay inside.
Status ParseEntry(const JsonValue& t, const std::string& where, bool paths, DumpEntry* e) {
  if (!t.is_object()) return Corrupt(where + " is not an object");
  OP_RETURN_IF_ERROR(ReadString(t, "name", &e->name, where));
  std::string kind;
  OP_RETURN_IF_ERROR(ReadString(t, "kind", &kind, where));
  OP_RETURN_IF_ERROR(ReadString(t, "file", &e->file, where));
  OP_RETURN_IF_ERROR(ReadString(t, "node", &e->node, where, false));
  OP_RETURN_IF_ERROR(ReadString(t, "op_type", &e->op_type, where, false));
  OP_RETURN_IF_ERROR(ReadString(t, "module", &e->module, where, false));
  OP_RETURN_IF_ERROR(ReadString(t, "module_type", &e->module_type, where, false));
  for (auto [key, field] : {std::pair<const char*, int*>{"call_index", &e->call_index},
                            {"output_index", &e->output_index}}) {
    const JsonValue* v = t.Find(key);
    if (v != nullptr && v->is_number() && v->as_number() >= 0 && v->as_number() < 1e6) {
      *field = static_cast<int>(v->as_number());
    }
  }
  const JsonValue* f64 = t.Find("float64_error");
  if (f64 != nullptr) {
    if (!f64->is_number() || !(f64->as_number() >= 0) || !std::isfinite(f64->as_number()))
      return Corrupt(where + ": \"float64_error\" is not a finite number >= 0");
    e->float64_error = f64->as_number();
  }
  if (kind != DumpEntryKindName(DumpEntryKind::kInput) &&
      kind != DumpEntryKindName(DumpEntryKind::kTensor))
    return Corrupt(where + ": unknown kind '" + kind + "'");
  e->kind = kind == DumpEntryKindName(DumpEntryKind::kInput) ? DumpEntryKind::kInput
                                                             : DumpEntryKind::kTensor;
  std::string dtype;
  OP_RETURN_IF_ERROR(ReadString(t, "dtype", &dtype, where));
  auto dt = DTypeFromName(dtype);
  if (!dt.ok()) return Corrupt(where + ": " + dt.status().message());
  e->dtype = *dt;
  const JsonValue* topo = t.Find("topo_index");
  if (topo != nullptr && topo->is_number()) e->topo_index = static_cast<int>(topo->as_number());
  const JsonValue* shape = t.Find("shape");
  if (shape == nullptr || !shape->is_array()) return Corrupt(where + ": \"shape\" is not an array");
  for (const auto& d : shape->items()) {
    if (!d.is_number() || d.as_number() < 0 || d.as_number() > 9.2e18 ||
        d.as_number() != std::floor(d.as_number())) {
      return Corrupt(where + ": \"shape\" holds a value that is not a dimension");
    }
    e->shape.push_back(static_cast<int64_t>(d.as_number()));
  }
  Status st = NumElements(e->shape).status();
  if (!st.ok()) return Corrupt(where + ": " + st.message());
  if (!paths) return Status::Ok();
  fs::path f(e->file);
  if (f.is_absolute()) return Corrupt(where + ": file '" + e->file + "' is an absolute path");
  for (const auto& part : f) {
    if (part == "..") return Corrupt(where + ": file '" + e->file + "' leaves the dump folder");
  }
  return Status::Ok();
}

}  // namespace

bool IsDumpPath(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  if (fs::path(path).extension() != ".npz") return false;
  auto z = NpzReader::Open(path);
  return z.ok() && (*z)->ReadRaw("manifest.json").ok();
}

DumpReader::~DumpReader() = default;

Expected<std::unique_ptr<DumpReader>> DumpReader::Open(const std::string& path) {
  std::unique_ptr<DumpReader> r(new DumpReader());
  r->path_ = path;
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path + ": no such dump (folder or .npz)");
  std::string manifest_text, manifest_name;
  if (fs::is_directory(path, ec)) {
    manifest_name = (fs::path(path) / "manifest.json").string();
    auto text = ReadFile(manifest_name, 256ull << 20);
    if (!text.ok()) {
      return text.status().code() == ErrorCode::kNotFound
                 ? InvalidArgument(path + ": not an onnxprobe dump (no manifest.json)")
                 : text.status();
    }
    manifest_text = std::move(*text);
  } else {
    r->npz_ = true;
    OP_ASSIGN_OR_RETURN(r->npz_reader_, NpzReader::Open(path));
    manifest_name = path + ":manifest.json";
    auto text = r->npz_reader_->ReadRaw("manifest.json");
    if (!text.ok()) {
      return text.status().code() == ErrorCode::kNotFound
                 ? InvalidArgument(path + ": not an onnxprobe dump (no manifest.json entry)")
                 : text.status();
    }
    manifest_text = std::move(*text);
  }
  OP_ASSIGN_OR_RETURN(JsonValue m, ParseJson(manifest_text, manifest_name));
  if (!m.is_object()) return Corrupt(manifest_name + ": not a JSON object");
  std::string format;
  OP_RETURN_IF_ERROR(ReadString(m, "format", &format, manifest_name));
  if (format != "onnxprobe-dump")
    return Corrupt(manifest_name + ": format is '" + format + "', not onnxprobe-dump");
  const JsonValue* version = m.Find("format_version");
  if (version == nullptr || !version->is_number() || version->as_number() != 1) {
    return Unsupported(manifest_name + ": unsupported format_version (this onnxprobe reads 1)");
  }
  OP_RETURN_IF_ERROR(ReadString(m, "model", &r->meta_.model_path, manifest_name, false));
  OP_RETURN_IF_ERROR(ReadString(m, "model_sha256", &r->meta_.model_sha256, manifest_name, false));
  OP_RETURN_IF_ERROR(ReadString(m, "runtime", &r->meta_.runtime, manifest_name, false));
  OP_RETURN_IF_ERROR(
      ReadString(m, "runtime_version", &r->meta_.runtime_version, manifest_name, false));
  OP_RETURN_IF_ERROR(ReadString(m, "provider", &r->meta_.provider, manifest_name, false));
  OP_RETURN_IF_ERROR(ReadString(m, "source", &r->meta_.source, manifest_name, false));
  const JsonValue* level = m.Find("optimization_level");
  if (level != nullptr && level->is_number()) {
    auto known = OptLevelFromNumber(level->as_number());
    if (!known.ok()) return Corrupt(manifest_name + ": " + known.status().message());
    r->meta_.optimization_level = *known;
  }
  const JsonValue* seed = m.Find("seed");
  if (seed != nullptr && seed->is_number() && seed->as_number() >= 0 && seed->as_number() < 2e19) {
    r->meta_.seed = static_cast<uint64_t>(seed->as_number());
  }
  const JsonValue* tensors = m.Find("tensors");
  if (tensors == nullptr || !tensors->is_array())
    return Corrupt(manifest_name + ": \"tensors\" is not an array");
  for (size_t i = 0; i < tensors->items().size(); ++i) {
    DumpEntry e;
    OP_RETURN_IF_ERROR(ParseEntry(
        tensors->items()[i], manifest_name + ": tensors[" + std::to_string(i) + "]", !r->npz_, &e));
    r->entries_.push_back(std::move(e));
  }
  return r;
}

const char* DumpEntryKindName(DumpEntryKind kind) {
  return kind == DumpEntryKind::kInput ? "input" : "tensor";
}

const DumpEntry* DumpReader::Find(const std::string& name, DumpEntryKind kind) const {
  for (const auto& e : entries_) {
    if (e.name == name && e.kind == kind) return &e;
  }
  return nullptr;
}

Expected<Tensor> DumpReader::Load(const DumpEntry& e) const {
  Expected<Tensor> t =
      npz_ ? npz_reader_->Read(e.kind == DumpEntryKind::kInput ? "input:" + e.name : e.name)
           : ReadNpy((fs::path(path_) / e.file).string());
  if (!t.ok()) return t.status();
  DType on_disk = e.dtype == DType::kBFloat16 ? DType::kFloat32 : e.dtype;
  if (t->dtype() != on_disk || t->shape() != e.shape) {
    return Corrupt(path_ + ": tensor '" + e.name + "' is " + DTypeName(t->dtype()) +
                   ShapeToString(t->shape()) + " on disk but the manifest says " +
                   DTypeName(e.dtype) + ShapeToString(e.shape));
  }
  if (e.dtype == DType::kBFloat16) {
    OP_ASSIGN_OR_RETURN(Tensor b, Tensor::Allocate(DType::kBFloat16, e.shape));
    const float* src = t->data_as<float>();
    for (uint64_t i = 0; i < b.num_elements(); ++i)
      b.data_as<uint16_t>()[i] = FloatToBFloat16(src[i]);
    return b;
  }
  return t;
}

}  // namespace onnxprobe
