#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/tensor/npy.h"
#include "tensor/payload.h"

namespace onnxprobe {

Status WriteNpy(const std::string& user_path, const Tensor& t) {
  const std::string path = OutputPath(user_path);  // through a link, never replacing it
  std::string tmp = TempSiblingPath(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    Status st = IoError(path + ": cannot create (" + std::strerror(errno) + ")");
    RemoveTemporary(tmp);
    return st;
  }
  std::string header = NpyHeaderBytes(t.dtype(), t.shape());
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  ok = ok && ForEachNpyPayloadChunk(
                 t, [f](const void* p, size_t n) { return std::fwrite(p, 1, n, f) == n; });
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    Status st = IoError(path + ": write failed (" + std::strerror(errno) + ")");
    RemoveTemporary(tmp);
    return st;
  }
  std::error_code ec = RenameTemporary(tmp, path);
  if (ec) {
    RemoveTemporary(tmp);
    return IoError(path + ": rename failed (" + ec.message() + ")");
  }
  return Status::Ok();
}

}  // namespace onnxprobe
