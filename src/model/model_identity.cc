// Model identity: file MD5/SHA-256 and per-initializer SHA-256, computed in one pass over the
// bytes. A kGraphOnly load streams the file once through three threads (MD5; SHA-256; the
// wire-format scan, which hashes each large raw_data as it goes by) and keeps only the graph.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <climits>

#include "common/chunk_fanout.h"
#include "model/model_impl.h"
#include "model/model_scan.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {
namespace {

// The scan as a consumer; `ok` says whether it followed the whole model (an allocation failure
// on a huge non-weight field counts as not following it: the full parse then reports it).
ChunkConsumer Scan(uint64_t size, ScanKeep keep, ModelScan* scan, bool* ok) {
  return [=](ChunkStream& s) {
    try {
      *ok = ScanModel(s, size, keep, scan);
    } catch (const std::exception&) {
      *ok = false;
    }
  };
}

ChunkConsumer Feed(Digest* d) {
  return [d](ChunkStream& s) {
    const uint8_t* p;
    size_t n;
    while (s.Next(&p, &n)) d->Update(p, n);
  };
}

// One initializer's SHA-256, with the same precedence as the data itself: external data, then
// raw_data (hashed by the scan when it was set aside), then typed fields as raw little-endian.
Expected<std::string> InitializerSha256(const onnx::TensorProto& t, const ScannedInitializer* s,
                                        const std::string& dir) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    uint64_t offset, length;
    OP_ASSIGN_OR_RETURN(std::string file, ResolveExternalData(t, dir, &offset, &length));
    Sha256 h;
    OP_RETURN_IF_ERROR(
        FanOutFile(file, offset, length, {Feed(&h)}).WithContext("initializer '" + t.name() + "'"));
    return h.HexDigest();
  }
  if (s != nullptr && s->raw_set_aside) return s->raw_sha256;
  if (t.has_raw_data()) return Sha256Hex(t.raw_data().data(), t.raw_data().size());
  OP_ASSIGN_OR_RETURN(Tensor v, TensorFromProto(t, "initializer '" + t.name() + "'"));
  return Sha256Hex(v.data(), v.byte_size());
}

// `scan`, when given, lines up with the graph's initializers by position.
Expected<std::vector<InitializerHash>> HashInitializers(const onnx::GraphProto& g,
                                                        const ModelScan* scan,
                                                        const std::string& dir) {
  std::vector<InitializerHash> out;
  for (int i = 0; i < g.initializer_size(); ++i) {
    const auto& t = g.initializer(i);
    const ScannedInitializer* s = scan ? &scan->initializers[size_t(i)] : nullptr;
    OP_ASSIGN_OR_RETURN(std::string h, InitializerSha256(t, s, dir));
    out.push_back({t.name(), std::move(h)});
  }
  return out;
}

struct IdentityParts {
  bool md5 = true, sha256 = true, initializers = true;
};

// The identity of a kFull model (the parts asked for), from the bytes it holds or, when it
// holds none, streamed from the file.
Expected<ModelIdentity> IdentityFromBytes(const Model::Impl& m, IdentityParts want) {
  const std::string& bytes = m.serialized;
  if (bytes.empty() && want.sha256 && !want.md5 && !want.initializers) {
    // the file's SHA-256 alone: the process's cache of file hashes (a baseline check hashed this
    // file before opening it); a file it cannot read fails below, naming it
    ModelIdentity id;
    id.file.sha256 = FileSha256(m.path, &id.file.size);
    if (!id.file.sha256.empty()) return id;
  }
  uint64_t size = bytes.size();
  if (bytes.empty()) {
    OP_ASSIGN_OR_RETURN(size, CheckModelFile(m.path));
  }
  Md5 md5;
  Sha256 sha;
  ModelScan scan;
  bool scanned = false;
  std::vector<ChunkConsumer> consumers;
  if (want.sha256) consumers.push_back(Feed(&sha));
  if (want.md5) consumers.push_back(Feed(&md5));
  if (want.initializers) {
    consumers.push_back(Scan(size, ScanKeep::kHashesOnly, &scan, &scanned));
  }
  if (bytes.empty()) {
    OP_RETURN_IF_ERROR(FanOutFile(m.path, 0, size, consumers));
  } else {
    FanOutMemory(bytes.data(), bytes.size(), consumers);
  }
  ModelIdentity id;
  id.file.size = size;
  if (want.sha256) id.file.sha256 = sha.HexDigest();
  if (want.md5) id.file.md5 = md5.HexDigest();
  if (!want.initializers) return id;
  const onnx::GraphProto& g = m.proto.graph();
  if (scanned && scan.initializers.size() == size_t(g.initializer_size())) {
    OP_ASSIGN_OR_RETURN(id.initializers, HashInitializers(g, &scan, m.dir));
    return id;
  }
  // shapes the scan does not follow: hash from a full parse of the bytes
  const onnx::ModelProto* full = m.FullProto();
  if (full == nullptr) return Corrupt(m.path + ": cannot re-read initializers");
  OP_ASSIGN_OR_RETURN(id.initializers, HashInitializers(full->graph(), nullptr, m.dir));
  return id;
}

}  // namespace

Status LoadGraphOnly(Model::Impl* m) {
  OP_ASSIGN_OR_RETURN(uint64_t size, CheckModelFile(m->path));
  Md5 md5;
  Sha256 sha;
  ModelScan scan;
  bool scanned = false;
  OP_RETURN_IF_ERROR(FanOutFile(
      m->path, 0, size, {Feed(&md5), Feed(&sha), Scan(size, ScanKeep::kFields, &scan, &scanned)}));
  bool assembled = false;
  try {
    assembled = scanned && AssembleModel(scan, &m->proto);
  } catch (const std::exception&) {
  }
  if (!assembled) {
    // a shape the scan does not follow, or corruption: protobuf parses the whole file and says
    // which; the bytes are dropped once hashed
    m->proto.Clear();
    OP_RETURN_IF_ERROR(LoadParsed(m));
    OP_ASSIGN_OR_RETURN(m->identity, IdentityFromBytes(*m, {}));
    std::string().swap(m->serialized);
    m->mode = LoadMode::kGraphOnly;
    return Status::Ok();
  }
  std::vector<bool> set_aside;
  for (auto& s : scan.initializers) {
    set_aside.push_back(s.raw_set_aside);
    std::string().swap(s.fields);
  }
  std::string().swap(scan.graph_fields);
  OP_RETURN_IF_ERROR(IndexModel(m, set_aside));
  m->identity.file = {md5.HexDigest(), sha.HexDigest(), size};
  OP_ASSIGN_OR_RETURN(m->identity.initializers, HashInitializers(m->proto.graph(), &scan, m->dir));
  m->mode = LoadMode::kGraphOnly;
  return Status::Ok();
}

Status Model::Impl::RequireBytes() const {
  if (mode == LoadMode::kFull) return Status::Ok();
  return Unsupported(path +
                     ": was loaded as a graph only (weights not kept); load it in full to run "
                     "it or rewrite its graph");
}

const onnx::ModelProto* Model::Impl::FullProto() const {
  if (mode != LoadMode::kFull) return nullptr;
  std::call_once(full_once, [this] {
    auto p = std::make_unique<onnx::ModelProto>();
    try {
      if (!serialized.empty()) {
        google::protobuf::io::ArrayInputStream raw(serialized.data(),
                                                   static_cast<int>(serialized.size()));
        google::protobuf::io::CodedInputStream coded(&raw);
        coded.SetTotalBytesLimit(INT_MAX);
        if (p->ParseFromCodedStream(&coded)) full = std::move(p);
        return;
      }
      // parsed from the file as it streams by: only the parsed weights are held
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      bool ok;
      {
        google::protobuf::io::FileInputStream raw(fd);
        google::protobuf::io::CodedInputStream coded(&raw);
        coded.SetTotalBytesLimit(INT_MAX);
        ok = p->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
      }
      close(fd);
      if (ok) full = std::move(p);
    } catch (const std::exception&) {
    }
  });
  return full.get();
}

Expected<ModelIdentity> Model::Identity() const {
  if (impl_->mode == LoadMode::kGraphOnly) return impl_->identity;
  return IdentityFromBytes(*impl_, {});
}

FileHashes Model::Hashes(bool with_md5) const {
  if (impl_->mode == LoadMode::kGraphOnly) return impl_->identity.file;
  std::lock_guard<std::mutex> lock(impl_->hashes_mu);
  FileHashes& h = impl_->hashes;
  if (h.sha256.empty() || (with_md5 && h.md5.empty())) {
    // cannot fail: no initializer is hashed
    h = IdentityFromBytes(*impl_, {with_md5, true, false})->file;
  }
  FileHashes out = h;
  if (!with_md5) out.md5.clear();
  return out;
}

Expected<std::vector<std::pair<std::string, std::string>>> Model::InitializerHashes() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (impl_->mode == LoadMode::kGraphOnly) {
    for (const auto& h : impl_->identity.initializers) out.emplace_back(h.name, h.sha256);
    return out;
  }
  OP_ASSIGN_OR_RETURN(ModelIdentity id, IdentityFromBytes(*impl_, {false, false, true}));
  for (auto& h : id.initializers) out.emplace_back(std::move(h.name), std::move(h.sha256));
  return out;
}

}  // namespace onnxprobe
