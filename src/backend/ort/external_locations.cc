// ONNX Runtime before 1.23 resolves the external data of a model given as bytes against the
// working directory and ignores session.model_external_initializers_file_folder_path (measured
// on 1.20.1; 1.23.2 and later honour it and reject absolute locations). Sessions on those older
// runtimes get absolute locations.
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdio>
#include <filesystem>

#include "backend/ort/ort_api.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// True when any location was rewritten.
bool Rewrite(onnx::GraphProto* g, const std::filesystem::path& dir) {
  bool changed = false;
  for (auto& t : *g->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (auto& e : *t.mutable_external_data()) {
      if (e.key() != "location" || std::filesystem::path(e.value()).is_absolute()) continue;
      e.set_value((dir / e.value()).string());
      changed = true;
    }
  }
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) changed = Rewrite(a.mutable_g(), dir) || changed;
      for (auto& sg : *a.mutable_graphs()) changed = Rewrite(&sg, dir) || changed;
    }
  }
  return changed;
}

}  // namespace

bool HonorsExternalDataFolder(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return true;
  return major > 1 || (major == 1 && minor >= 23);
}

Expected<std::string> AbsoluteExternalLocations(const std::string& bytes, const std::string& dir) {
  onnx::ModelProto proto;
  if (bytes.size() >= size_t(INT_MAX) || !proto.ParseFromString(bytes))
    return Corrupt("the model bytes do not parse");
  std::error_code ec;
  auto base = std::filesystem::absolute(dir.empty() ? "." : dir, ec);
  if (ec) return IoError("cannot resolve the model folder '" + dir + "'");
  if (!Rewrite(proto.mutable_graph(), base)) return std::string();
  return proto.SerializeAsString();
}

Expected<std::string> LocateExternalData(const std::string& bytes, const std::string& dir,
                                         const std::string& version, const SessionOptions& o) {
  if (HonorsExternalDataFolder(version)) return std::string();
  if (o.optimization_level != OptLevel::kDisabled) return EmbedExternalData(bytes, dir);
  return AbsoluteExternalLocations(bytes, dir);
}

}  // namespace onnxprobe
