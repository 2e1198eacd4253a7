// .npz writing: stored (uncompressed) entries so dumps are written at disk bandwidth; zip64
// records are emitted only when a size or offset needs them, as numpy does.
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/tensor/npy.h"
#include "tensor/payload.h"
#include "tensor/zip_format.h"

namespace onnxprobe {

using namespace zip;  // NOLINT(google-build-using-namespace)

struct NpzWriter::Impl {
  struct Record {
    std::string name;
    uint32_t crc;
    uint64_t size, offset;
  };
  std::string path, tmp;
  FILE* f = nullptr;
  uint64_t offset = 0;
  std::vector<Record> records;

  bool Write(const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f) != n) return false;
    offset += n;
    return true;
  }
  Status Fail(const std::string& what) {
    Status st = IoError(path + ": " + what + " (" + std::strerror(errno) + ")");
    Abort();
    return st;
  }
  Status AddEntry(const std::string& entry, const std::string& header, const Tensor* t);
  void Abort() {
    if (f != nullptr) std::fclose(f);
    f = nullptr;
    if (!tmp.empty()) RemoveTemporary(tmp);
    tmp.clear();
  }
};

NpzWriter::NpzWriter() : impl_(new Impl) {}
NpzWriter::~NpzWriter() { impl_->Abort(); }

Status NpzWriter::Open(const std::string& user_path) {
  const std::string path = OutputPath(user_path);  // through a link, never replacing it
  impl_->Abort();
  impl_->path = path;
  impl_->tmp = TempSiblingPath(path);
  impl_->f = std::fopen(impl_->tmp.c_str(), "wb");
  if (impl_->f == nullptr) {
    Status st = IoError(path + ": cannot create (" + std::strerror(errno) + ")");
    RemoveTemporary(impl_->tmp);
    impl_->tmp.clear();
    return st;
  }
  impl_->offset = 0;
  impl_->records.clear();
  return Status::Ok();
}

Status NpzWriter::Add(const std::string& name, const Tensor& t) {
  return impl_->AddEntry(name + ".npy", NpyHeaderBytes(t.dtype(), t.shape()), &t);
}

Status NpzWriter::AddRaw(const std::string& entry_name, const std::string& bytes) {
  return impl_->AddEntry(entry_name, bytes, nullptr);
}

Status NpzWriter::Impl::AddEntry(const std::string& entry, const std::string& header,
                                 const Tensor* t) {
  Impl& m = *this;
  if (m.f == nullptr) return InvalidArgument("npz writer is not open");
  if (entry.size() > 65535) return InvalidArgument("name too long for an .npz entry: " + entry);
  uint64_t size = header.size() + (t != nullptr ? NpyPayloadSize(*t) : 0);
  bool z64 = size >= kMax32;
  std::string lh;
  Put32(lh, kLocalSig);
  Put16(lh, z64 ? 45 : 20);
  Put16(lh, 0);     // flags
  Put16(lh, 0);     // stored
  Put16(lh, 0);     // time
  Put16(lh, 0x21);  // date 1980-01-01
  Put32(lh, 0);     // crc, patched below
  Put32(lh, z64 ? kMax32 : uint32_t(size));
  Put32(lh, z64 ? kMax32 : uint32_t(size));
  Put16(lh, uint16_t(entry.size()));
  Put16(lh, z64 ? 20 : 0);
  lh += entry;
  if (z64) {
    Put16(lh, kZip64ExtraId);
    Put16(lh, 16);
    Put64(lh, size);
    Put64(lh, size);
  }
  uint64_t local_offset = m.offset;
  if (!m.Write(lh.data(), lh.size()) || !m.Write(header.data(), header.size())) {
    return m.Fail("write failed");
  }
  uLong crc = crc32_z(0L, reinterpret_cast<const Bytef*>(header.data()), header.size());
  bool ok = t == nullptr || ForEachNpyPayloadChunk(*t, [&](const void* p, size_t n) {
              crc = crc32_z(crc, static_cast<const Bytef*>(p), n);
              return m.Write(p, n);
            });
  if (!ok) return m.Fail("write failed");
  std::string c;
  Put32(c, uint32_t(crc));
  if (fseeko(m.f, off_t(local_offset + 14), SEEK_SET) != 0 ||
      std::fwrite(c.data(), 1, 4, m.f) != 4 || fseeko(m.f, 0, SEEK_END) != 0) {
    return m.Fail("seek failed");
  }
  m.records.push_back({entry, uint32_t(crc), size, local_offset});
  return Status::Ok();
}

Status NpzWriter::Finish() {
  Impl& m = *impl_;
  if (m.f == nullptr) return InvalidArgument("npz writer is not open");
  uint64_t cd_start = m.offset;
  std::string cd;
  for (const auto& r : m.records) {
    bool big_size = r.size >= kMax32, big_off = r.offset >= kMax32;
    std::string extra;
    if (big_size || big_off) {
      Put16(extra, kZip64ExtraId);
      Put16(extra, uint16_t((big_size ? 16 : 0) + (big_off ? 8 : 0)));
      if (big_size) {
        Put64(extra, r.size);
        Put64(extra, r.size);
      }
      if (big_off) Put64(extra, r.offset);
    }
    Put32(cd, kCentralSig);
    Put16(cd, 45);
    Put16(cd, extra.empty() ? 20 : 45);
    Put16(cd, 0);
    Put16(cd, 0);
    Put16(cd, 0);
    Put16(cd, 0x21);
    Put32(cd, r.crc);
    Put32(cd, big_size ? kMax32 : uint32_t(r.size));
    Put32(cd, big_size ? kMax32 : uint32_t(r.size));
    Put16(cd, uint16_t(r.name.size()));
    Put16(cd, uint16_t(extra.size()));
    Put16(cd, 0);            // comment
    Put16(cd, 0);            // disk
    Put16(cd, 0);            // internal attributes
    Put32(cd, 0x81a40000u);  // external attributes: regular file, 0644
    Put32(cd, big_off ? kMax32 : uint32_t(r.offset));
    cd += r.name;
    cd += extra;
  }
  uint64_t n = m.records.size();
  bool z64 = n >= 0xffff || cd_start >= kMax32 || cd.size() >= kMax32;
  if (z64) {
    uint64_t z_off = cd_start + cd.size();
    Put32(cd, kZip64EndSig);
    Put64(cd, 44);
    Put16(cd, 45);
    Put16(cd, 45);
    Put32(cd, 0);
    Put32(cd, 0);
    Put64(cd, n);
    Put64(cd, n);
    Put64(cd, z_off - cd_start);
    Put64(cd, cd_start);
    Put32(cd, kZip64LocatorSig);
    Put32(cd, 0);
    Put64(cd, z_off);
    Put32(cd, 1);
  }
  uint64_t cd_size = z64 ? cd.size() - 56 - 20 : cd.size();
  Put32(cd, kEndSig);
  Put16(cd, 0);
  Put16(cd, 0);
  Put16(cd, z64 ? 0xffff : uint16_t(n));
  Put16(cd, z64 ? 0xffff : uint16_t(n));
  Put32(cd, z64 ? kMax32 : uint32_t(cd_size));
  Put32(cd, z64 ? kMax32 : uint32_t(cd_start));
  Put16(cd, 0);
  if (!m.Write(cd.data(), cd.size())) return m.Fail("write failed");
  FILE* f = m.f;
  m.f = nullptr;
  if (std::fclose(f) != 0) return m.Fail("close failed");
  std::error_code ec = RenameTemporary(m.tmp, m.path);
  if (ec) {
    Status st = IoError(m.path + ": rename failed (" + ec.message() + ")");
    m.Abort();
    return st;
  }
  m.tmp.clear();
  return Status::Ok();
}

}  // namespace onnxprobe
