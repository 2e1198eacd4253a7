// .npz reading: walk the zip central directory, bounds-check every record against the file,
// and never trust a declared size before checking it against what the file can hold.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "onnxprobe/tensor/npy.h"
#include "tensor/zip_format.h"

namespace onnxprobe {
namespace {

using namespace zip;  // NOLINT(google-build-using-namespace)

// A read-only memory map of a whole file.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr && data_ != MAP_FAILED) munmap(data_, size_);
  }
  Status Open(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
    if (std::filesystem::is_directory(path, ec)) {
      return InvalidArgument(path + ": is a directory, expected an .npz file");
    }
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return IoError(path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    fstat(fd, &st);
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) data_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data_ == MAP_FAILED) return IoError(path + ": cannot map (" + std::strerror(errno) + ")");
    return Status::Ok();
  }
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  uint64_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

struct Entry {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t csize = 0, usize = 0, local_offset = 0;
};

Status ReadZip64Extra(const uint8_t* p, uint64_t len, Entry* e, const std::string& what) {
  uint64_t i = 0;
  while (i + 4 <= len) {
    uint16_t id = Get16(p + i), n = Get16(p + i + 2);
    if (i + 4 + n > len) return Corrupt(what + ": zip extra field runs past its record");
    if (id == kZip64ExtraId) {
      const uint8_t* q = p + i + 4;
      uint64_t left = n;
      auto take = [&](uint64_t* v) -> bool {
        if (*v != kMax32) return true;
        if (left < 8) return false;
        *v = Get64(q);
        q += 8;
        left -= 8;
        return true;
      };
      if (!take(&e->usize) || !take(&e->csize) || !take(&e->local_offset)) {
        return Corrupt(what + ": zip64 extra field too short for entry '" + e->name + "'");
      }
    }
    i += 4 + n;
  }
  return Status::Ok();
}

Expected<std::vector<Entry>> ReadDirectory(const MappedFile& f, const std::string& what) {
  const uint8_t* d = f.data();
  uint64_t size = f.size();
  if (size < 22) return Corrupt(what + ": not a zip/.npz file (too short)");
  uint64_t eocd = UINT64_MAX;
  uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t p = size - 22 + 1; p-- > lowest;) {
    if (Get32(d + p) == kEndSig) {
      eocd = p;
      break;
    }
  }
  if (eocd == UINT64_MAX)
    return Corrupt(what + ": not a zip/.npz file (no end of central directory)");
  uint64_t count = Get16(d + eocd + 10);
  uint64_t cd_size = Get32(d + eocd + 12);
  uint64_t cd_off = Get32(d + eocd + 16);
  if (eocd >= 20 && Get32(d + eocd - 20) == kZip64LocatorSig) {
    uint64_t z = Get64(d + eocd - 20 + 8);
    if (z > size || size - z < 56 || Get32(d + z) != kZip64EndSig) {
      return Corrupt(what + ": zip64 end record is missing or out of range");
    }
    count = Get64(d + z + 32);
    cd_size = Get64(d + z + 40);
    cd_off = Get64(d + z + 48);
  }
  if (cd_off > size || cd_size > size - cd_off) {
    return Corrupt(what + ": zip central directory lies outside the file");
  }
  if (count > cd_size / 46 + 1)
    return Corrupt(what + ": zip entry count larger than its directory");
  std::vector<Entry> entries;
  uint64_t p = cd_off, end = cd_off + cd_size;
  for (uint64_t k = 0; k < count; ++k) {
    if (end - p < 46 || Get32(d + p) != kCentralSig) {
      return Corrupt(what + ": zip central directory record " + std::to_string(k) + " is damaged");
    }
    Entry e;
    e.method = Get16(d + p + 10);
    e.crc = Get32(d + p + 16);
    e.csize = Get32(d + p + 20);
    e.usize = Get32(d + p + 24);
    uint64_t nlen = Get16(d + p + 28), xlen = Get16(d + p + 30), clen = Get16(d + p + 32);
    e.local_offset = Get32(d + p + 42);
    if (46 + nlen + xlen + clen > end - p) {
      return Corrupt(what + ": zip central directory record " + std::to_string(k) +
                     " is truncated");
    }
    e.name.assign(reinterpret_cast<const char*>(d + p + 46), nlen);
    OP_RETURN_IF_ERROR(ReadZip64Extra(d + p + 46 + nlen, xlen, &e, what));
    entries.push_back(std::move(e));
    p += 46 + nlen + xlen + clen;
  }
  return entries;
}

// Locates an entry's data, checking the local header against the directory.
Expected<const uint8_t*> EntryData(const MappedFile& f, const Entry& e, const std::string& what) {
  const uint8_t* d = f.data();
  std::string where = what + ": entry '" + e.name + "'";
  if (e.local_offset > f.size() || f.size() - e.local_offset < 30 ||
      Get32(d + e.local_offset) != kLocalSig) {
    return Corrupt(where + " has no valid local header");
  }
  uint64_t start =
      e.local_offset + 30 + Get16(d + e.local_offset + 26) + Get16(d + e.local_offset + 28);
  if (start > f.size() || e.csize > f.size() - start) {
    return Corrupt(where + " claims " + std::to_string(e.csize) + " bytes but the file ends first");
  }
  return d + start;
}

// Calls `use` with the entry's uncompressed bytes (in place for stored entries).
template <typename Use>
auto WithEntryBytes(const MappedFile& f, const Entry& e, const std::string& what, Use use)
    -> decltype(use(nullptr, 0, std::string())) {
  std::string where = what + ": entry '" + e.name + "'";
  OP_ASSIGN_OR_RETURN(const uint8_t* data, EntryData(f, e, what));
  if (e.method == 0) {
    if (e.usize != e.csize) return Corrupt(where + " is stored but its sizes differ");
    uLong crc = crc32_z(0L, data, e.csize);
    if (crc != e.crc) return Corrupt(where + " fails its CRC-32 check");
    return use(data, e.csize, where);
  }
  if (e.method != 8) {
    return Unsupported(where + " uses zip compression method " + std::to_string(e.method) +
                       " (only stored and deflated are supported)");
  }
  // deflate expands at most ~1032:1; a larger claim is a lie that must not drive an allocation
  if (e.usize / 1032 > e.csize + 1) {
    return Corrupt(where + " claims an uncompressed size of " + std::to_string(e.usize) +
                   " bytes, impossible for " + std::to_string(e.csize) + " compressed bytes");
  }
  std::string out;
  try {
    out.resize(e.usize);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(where + ": cannot allocate " + std::to_string(e.usize) + " bytes");
  }
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Corrupt(where + ": inflate init failed");
  const uint8_t* in = data;
  uint64_t in_left = e.csize, out_done = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_in = const_cast<Bytef*>(in);
    zs.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    zs.next_out = reinterpret_cast<Bytef*>(out.data()) + out_done;
    zs.avail_out = static_cast<uInt>(std::min<uint64_t>(e.usize - out_done, 1u << 30));
    uInt in_before = zs.avail_in, out_before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    in += in_before - zs.avail_in;
    in_left -= in_before - zs.avail_in;
    out_done += out_before - zs.avail_out;
    if (rc == Z_OK && in_before == zs.avail_in && out_before == zs.avail_out) break;  // stuck
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || out_done != e.usize) {
    return Corrupt(where + " does not inflate to its declared " + std::to_string(e.usize) +
                   " bytes");
  }
  if (crc32_z(0L, reinterpret_cast<const Bytef*>(out.data()), out.size()) != e.crc) {
    return Corrupt(where + " fails its CRC-32 check");
  }
  return use(reinterpret_cast<const uint8_t*>(out.data()), out.size(), where);
}

Expected<Tensor> ReadEntry(const MappedFile& f, const Entry& e, const std::string& what) {
  return WithEntryBytes(f, e, what, [](const uint8_t* p, uint64_t n, const std::string& where) {
    return ParseNpy(p, n, where);
  });
}

bool IsArray(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
}

std::string KeyOf(const std::string& name) {
  constexpr const char* kExt = ".npy";
  if (name.size() >= 4 && name.compare(name.size() - 4, 4, kExt) == 0) {
    return name.substr(0, name.size() - 4);
  }
  return name;
}

}  // namespace

struct NpzReader::Impl {
  std::string path;
  MappedFile file;
  std::vector<Entry> entries;
};

NpzReader::~NpzReader() = default;

Expected<std::unique_ptr<NpzReader>> NpzReader::Open(const std::string& path) {
  std::unique_ptr<NpzReader> r(new NpzReader());
  r->impl_ = std::make_unique<Impl>();
  r->impl_->path = path;
  OP_RETURN_IF_ERROR(r->impl_->file.Open(path));
  OP_ASSIGN_OR_RETURN(r->impl_->entries, ReadDirectory(r->impl_->file, path));
  for (const auto& e : r->impl_->entries) {
    if (IsArray(e.name)) r->keys_.push_back(KeyOf(e.name));
  }
  return r;
}

Expected<Tensor> NpzReader::Read(const std::string& key) const {
  for (const auto& e : impl_->entries) {
    if (IsArray(e.name) && KeyOf(e.name) == key) return ReadEntry(impl_->file, e, impl_->path);
  }
  return NotFound(impl_->path + ": no array '" + key + "'");
}

Expected<std::string> NpzReader::ReadRaw(const std::string& entry_name) const {
  for (const auto& e : impl_->entries) {
    if (e.name != entry_name) continue;
    return WithEntryBytes(
        impl_->file, e, impl_->path,
        [](const uint8_t* p, uint64_t n, const std::string&) -> Expected<std::string> {
          return std::string(reinterpret_cast<const char*>(p), n);
        });
  }
  return NotFound(impl_->path + ": no entry '" + entry_name + "'");
}

Expected<std::vector<std::pair<std::string, Tensor>>> ReadNpz(const std::string& path) {
  MappedFile f;
  OP_RETURN_IF_ERROR(f.Open(path));
  OP_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadDirectory(f, path));
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Entry& e : entries) {
    if (!IsArray(e.name)) continue;  // folders, manifests and other side entries
    OP_ASSIGN_OR_RETURN(Tensor t, ReadEntry(f, e, path));
    out.emplace_back(KeyOf(e.name), std::move(t));
  }
  return out;
}

Expected<std::vector<std::string>> ListNpz(const std::string& path) {
  MappedFile f;
  OP_RETURN_IF_ERROR(f.Open(path));
  OP_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadDirectory(f, path));
  std::vector<std::string> names;
  for (const Entry& e : entries) {
    if (IsArray(e.name)) names.push_back(KeyOf(e.name));
  }
  return names;
}

}  // namespace onnxprobe
