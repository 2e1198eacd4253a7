#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "common/chunk_fanout.h"
#include "common/file_util.h"
#include "model/model_impl.h"
#include "model/model_scan.h"
#include "tensor/tensor_proto_convert.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// Parses the file and keeps its bytes: they are the model's serialization, reused for sessions.
Status ParseModelFile(const std::string& path, onnx::ModelProto* proto, std::string* file_bytes) {
  OP_RETURN_IF_ERROR(CheckModelFile(path).status());
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  bool ok;
  {
    google::protobuf::io::ArrayInputStream raw(bytes->data(), static_cast<int>(bytes->size()));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    ok = proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  *file_bytes = std::move(*bytes);
  if (!ok)
    return Corrupt(path + ": not a valid ONNX model (protobuf parse failed: truncated or corrupt)");
  return Status::Ok();
}

void IndexValueInfos(const onnx::GraphProto& g, Model::Impl* m) {
  for (const auto& v : g.input()) m->value_infos[v.name()] = ValueInfoFromProto(v);
  for (const auto& v : g.output()) m->value_infos[v.name()] = ValueInfoFromProto(v);
  for (const auto& v : g.value_info()) m->value_infos[v.name()] = ValueInfoFromProto(v);
}

// Validates external data references everywhere, including inside subgraph bodies.
Status CheckExternalData(const onnx::GraphProto& g, const std::string& dir) {
  for (const auto& t : g.initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    uint64_t off, len;
    OP_RETURN_IF_ERROR(ResolveExternalData(t, dir, &off, &len).status());
  }
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) OP_RETURN_IF_ERROR(CheckExternalData(a.g(), dir));
      for (const auto& sg : a.graphs()) OP_RETURN_IF_ERROR(CheckExternalData(sg, dir));
    }
  }
  return Status::Ok();
}

void Summarize(Model::Impl* m) {
  const auto& p = m->proto;
  const auto& g = p.graph();
  ModelSummary& s = m->summary;
  s.ir_version = p.ir_version();
  for (const auto& o : p.opset_import()) s.opsets.push_back({o.domain(), o.version()});
  s.producer_name = p.producer_name();
  s.producer_version = p.producer_version();
  s.domain = p.domain();
  s.model_version = p.model_version();
  s.graph_name = g.name();
  std::unordered_map<std::string, bool> is_init;
  for (const auto& t : g.initializer()) is_init[t.name()] = true;
  for (const auto& v : g.input()) {
    if (!is_init.count(v.name())) s.inputs.push_back(ValueInfoFromProto(v));
  }
  for (const auto& v : g.output()) s.outputs.push_back(ValueInfoFromProto(v));
  for (const auto& n : g.node()) {
    std::string key = n.domain().empty() || n.domain() == "ai.onnx"
                          ? n.op_type()
                          : n.domain() + "." + n.op_type();
    ++s.op_counts[key];
  }
  for (const auto& t : g.initializer()) {
    InitializerInfo ii;
    ii.name = t.name();
    ii.elem_type = t.data_type();
    ii.dims.assign(t.dims().begin(), t.dims().end());
    ii.external = t.data_location() == onnx::TensorProto::EXTERNAL;
    auto dt = DTypeFromOnnx(t.data_type());
    auto n = NumElements(ii.dims);
    ii.num_elements = n.ok() ? *n : 0;
    ii.num_bytes = dt.ok() ? ii.num_elements * DTypeSize(*dt) : 0;
    s.param_count += ii.num_elements;
    s.param_bytes += ii.num_bytes;
    if (t.data_type() == onnx::TensorProto::FLOAT) s.float32_param_bytes += ii.num_bytes;
    s.initializers.push_back(std::move(ii));
  }
  // weights some exporters (paddle2onnx, tf2onnx, spox) keep in Constant nodes
  for (const auto& n : g.node()) {
    if (n.op_type() != "Constant" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() != "value" || a.type() != onnx::AttributeProto::TENSOR) continue;
      std::vector<int64_t> dims(a.t().dims().begin(), a.t().dims().end());
      auto dt = DTypeFromOnnx(a.t().data_type());
      auto count = NumElements(dims);
      uint64_t elements = count.ok() ? *count : 0;
      ++s.constant_nodes;
      s.constant_param_count += elements;
      s.param_count += elements;
      s.param_bytes += dt.ok() ? elements * DTypeSize(*dt) : 0;
      if (a.t().data_type() == onnx::TensorProto::FLOAT) s.float32_param_bytes += elements * 4;
    }
  }
}

}  // namespace

ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& v) {
  ValueInfo out;
  out.name = v.name();
  if (v.has_type() && v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    out.elem_type = tt.elem_type();
    if (tt.has_shape()) {
      out.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value();
        if (d.has_dim_param()) dim.param = d.dim_param();
        out.dims.push_back(dim);
      }
    }
  }
  return out;
}

std::string ValueInfoTypeString(const ValueInfo& v) {
  std::string s;
  auto dt = DTypeFromOnnx(v.elem_type);
  s = dt.ok() ? DTypeName(*dt) : (v.elem_type == 0 ? "?" : OnnxTypeName(v.elem_type));
  if (!v.has_shape) return s + "[?]";
  s += "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ", ";
    const Dim& d = v.dims[i];
    s += d.value >= 0 ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
  }
  return s + "]";
}

Expected<uint64_t> CheckModelFile(const std::string& path) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return IoError(path + ": cannot open (" + ec.message() + ")");
  }
  if (!fs::exists(st)) return NotFound(path + ": no such file");
  if (fs::is_directory(path, ec))
    return InvalidArgument(path + ": is a directory, expected an .onnx file");
  if (!fs::is_regular_file(st))
    return InvalidArgument(path +
                           ": is not a regular file (a device, FIFO or socket), expected an "
                           ".onnx file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) return IoError(path + ": cannot read its size (" + ec.message() + ")");
  if (size == 0) return Corrupt(path + ": empty file, not an ONNX model");
  if (size >= uint64_t(INT_MAX)) {
    return Unsupported(path + ": the .onnx file itself is " + std::to_string(size) +
                       " bytes; protobuf cannot parse a message over 2 GB (store weights as "
                       "external data)");
  }
  return size;
}

Status IndexModel(Model::Impl* impl, const std::vector<bool>& set_aside) {
  const std::string& path = impl->path;
  if (!impl->proto.has_graph() || impl->proto.ir_version() <= 0) {
    return Corrupt(path + ": not an ONNX model (no graph or IR version)");
  }
  try {
    OP_RETURN_IF_ERROR(CheckExternalData(impl->proto.graph(), impl->dir).WithContext(path));
    OP_RETURN_IF_ERROR(BuildGraphIndex(impl->proto.graph(), &impl->index).WithContext(path));
  } catch (const std::exception& e) {
    return Corrupt(path + ": " + e.what());
  }
  IndexValueInfos(impl->proto.graph(), impl);
  Summarize(impl);
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(impl->proto.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& o : impl->proto.opset_import())
      opsets[o.domain()] = static_cast<int>(o.version());
    ctx.set_opset_imports(opsets);
    ctx.set_model_dir(impl->dir);
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(impl->proto.graph(), ctx, lex);
  } catch (const std::exception& e) {
    impl->checker_warnings.push_back(std::string("ONNX 1.12 checker (advisory): ") + e.what());
  }
  // The parsed graph keeps no large weight bytes: the file's own bytes (kept for sessions) hold
  // them already. Small initializers stay, as shape inference folds shape constants.
  auto* inits = impl->proto.mutable_graph()->mutable_initializer();
  for (int i = 0; i < inits->size(); ++i) {
    auto& t = (*inits)[i];
    bool aside = size_t(i) < set_aside.size() && set_aside[size_t(i)];
    // clear_raw_data() would keep the string's capacity: the weights' memory is released here
    if (aside || t.raw_data().size() > kKeptRawDataBytes) std::string().swap(*t.mutable_raw_data());
  }
  return Status::Ok();
}

Status LoadParsed(Model::Impl* impl) {
  try {
    OP_RETURN_IF_ERROR(ParseModelFile(impl->path, &impl->proto, &impl->serialized));
  } catch (const std::exception& e) {
    return Corrupt(impl->path + ": " + e.what());
  }
  return IndexModel(impl, {});
}

Status LoadFull(Model::Impl* impl) {
  OP_ASSIGN_OR_RETURN(uint64_t size, CheckModelFile(impl->path));
  ModelScan scan;
  bool scanned = false;
  OP_RETURN_IF_ERROR(FanOutFile(impl->path, 0, size, {[&](ChunkStream& s) {
                                  try {
                                    scanned = ScanModel(s, size, ScanKeep::kFieldsUnhashed, &scan);
                                  } catch (const std::exception&) {
                                    scanned = false;
                                  }
                                }}));
  bool assembled = false;
  try {
    assembled = scanned && AssembleModel(scan, &impl->proto);
  } catch (const std::exception&) {
  }
  if (!assembled) {
    // a shape the scan does not follow, or corruption: protobuf says which
    impl->proto.Clear();
    return LoadParsed(impl);
  }
  std::vector<bool> set_aside;
  for (size_t i = 0; i < scan.initializers.size(); ++i) {
    const ScannedInitializer& s = scan.initializers[i];
    set_aside.push_back(s.raw_set_aside);
    if (s.raw_set_aside) impl->embedded.push_back({int(i), s.raw_offset, s.raw_size});
  }
  scan = ModelScan();
  return IndexModel(impl, set_aside);
}

const std::string& Model::Impl::SerializedProto() const {
  if (mode != LoadMode::kFull || !serialized.empty()) return serialized;
  std::call_once(session_once, [this] {
    onnx::ModelProto p = proto;  // the graph without its large weights: small
    auto* inits = p.mutable_graph()->mutable_initializer();
    const std::string& location = embedded_location;
    for (const FileRange& e : embedded) {
      onnx::TensorProto* t = inits->Mutable(e.initializer);
      t->clear_raw_data();
      t->clear_external_data();
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      for (const auto& [k, v] : {std::pair<const char*, std::string>{"location", location},
                                 {"offset", std::to_string(e.offset)},
                                 {"length", std::to_string(e.size)}}) {
        auto* entry = t->add_external_data();
        entry->set_key(k);
        entry->set_value(v);
      }
    }
    session_bytes = p.SerializeAsString();
  });
  return session_bytes;
}

namespace {

// A model reached through a symbolic link (a model hub's cache links each file to a blob stored
// elsewhere): ONNX Runtime resolves an external data location to its real path and refuses one
// outside the folder it was given, so the references to the weights the file holds itself name
// the real file in its real folder. Left as is when the model also reads external data files of
// its own: those are found next to the path as given, as ONNX Runtime alone would look for them.
void LocateThroughLinks(Model::Impl* impl) {
  if (impl->embedded.empty()) return;
  for (const auto& i : impl->summary.initializers) {
    if (i.external) return;
  }
  std::error_code ec;
  fs::path real = fs::canonical(impl->path, ec);
  if (ec) return;
  fs::path given = fs::weakly_canonical(impl->dir, ec);
  if (ec || real.parent_path() == given) return;
  impl->dir = real.parent_path().string();
  impl->embedded_location = real.filename().string();
}

}  // namespace

Expected<Model> Model::Load(const std::string& path, LoadMode mode) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->dir = fs::path(path).parent_path().string();
  if (impl->dir.empty()) impl->dir = ".";
  OP_RETURN_IF_ERROR(mode == LoadMode::kFull ? LoadFull(impl.get()) : LoadGraphOnly(impl.get()));
  impl->embedded_location = fs::path(path).filename().string();
  LocateThroughLinks(impl.get());
  Model m;
  m.impl_ = std::move(impl);
  return m;
}

Expected<onnx::ModelProto> Model::Impl::EditableProto(const std::string& label) const {
  OP_RETURN_IF_ERROR(RequireBytes());
  onnx::ModelProto p;
  if (!p.ParseFromString(SerializedProto()))
    return Corrupt(label + ": the model's serialization does not parse");
  return p;
}

Expected<Model> Model::Derived(const Model& base, std::string bytes) {
  auto impl = std::make_shared<Impl>();
  impl->path = base.path();
  impl->dir = base.dir();
  impl->embedded_location = base.impl().embedded_location;
  impl->serialized = std::move(bytes);
  if (!impl->proto.ParseFromString(impl->serialized))
    return Corrupt(base.path() + ": a rewritten copy of the model does not parse");
  OP_RETURN_IF_ERROR(IndexModel(impl.get(), {}));
  Model m;
  m.impl_ = std::move(impl);
  return m;
}

const std::string& Model::path() const { return impl_->path; }
const std::string& Model::dir() const { return impl_->dir; }
const GraphIndex& Model::index() const { return impl_->index; }
const ModelSummary& Model::summary() const { return impl_->summary; }
LoadMode Model::load_mode() const { return impl_->mode; }
const std::vector<std::string>& Model::checker_warnings() const { return impl_->checker_warnings; }

const ValueInfo* Model::FindValueInfo(const std::string& name) const {
  auto it = impl_->value_infos.find(name);
  return it == impl_->value_infos.end() ? nullptr : &it->second;
}

}  // namespace onnxprobe
