#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "onnxprobe/hash.h"

namespace onnxprobe {

Expected<FileHashes> HashFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  Md5 md5;
  Sha256 sha;
  FileHashes out;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    md5.Update(buf.data(), n);
    sha.Update(buf.data(), n);
    out.size += n;
  }
  if (in.bad()) return IoError(path + ": read failed");
  out.md5 = md5.HexDigest();
  out.sha256 = sha.HexDigest();
  return out;
}

}  // namespace onnxprobe
