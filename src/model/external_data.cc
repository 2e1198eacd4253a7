#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/decimal.h"
#include "model/model_impl.h"

namespace fs = std::filesystem;

namespace onnxprobe {

Expected<std::string> ResolveExternalData(const onnx::TensorProto& t, const std::string& model_dir,
                                          uint64_t* offset, uint64_t* length) {
  std::string where = "initializer '" + t.name() + "'";
  std::string location;
  *offset = 0;
  *length = UINT64_MAX;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() != "offset" && kv.key() != "length") continue;
    if (!ParseDecimal(kv.value(), INT64_MAX, kv.key() == "offset" ? offset : length)) {
      return InvalidArgument(where + ": external data " + kv.key() + " '" + kv.value() +
                             "' is not a number (a whole count of bytes)");
    }
  }
  if (location.empty()) return InvalidArgument(where + ": external data has no location");
  fs::path loc(location);
  if (loc.is_absolute()) {
    return InvalidArgument(where + ": external data location '" + location +
                           "' is an absolute path (must be relative to the model folder)");
  }
  for (const auto& part : loc) {
    if (part == "..") {
      return InvalidArgument(where + ": external data location '" + location +
                             "' escapes the model folder");
    }
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(model_dir), ec);
  fs::path full = fs::path(model_dir) / loc;
  if (!fs::exists(full, ec)) {
    return InvalidArgument(where + ": external data file '" + full.string() + "' is missing");
  }
  fs::path real = fs::canonical(full, ec);
  if (ec) return IoError(where + ": cannot resolve external data '" + full.string() + "'");
  auto rel = real.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return InvalidArgument(where + ": external data location '" + location +
                           "' resolves outside the model folder (symlink to " + real.string() +
                           ")");
  }
  if (!fs::is_regular_file(real, ec)) {
    return InvalidArgument(where + ": external data '" + full.string() + "' is not a regular file");
  }
  uint64_t size = fs::file_size(real, ec);
  if (*offset > size) {
    return InvalidArgument(where + ": external data offset " + std::to_string(*offset) +
                           " is past the end of '" + full.string() + "' (" + std::to_string(size) +
                           " bytes)");
  }
  if (*length == UINT64_MAX) *length = size - *offset;
  if (*length > size - *offset) {
    return InvalidArgument(where + ": external data range " + std::to_string(*offset) + "+" +
                           std::to_string(*length) + " runs past the end of '" + full.string() +
                           "' (" + std::to_string(size) + " bytes)");
  }
  return real.string();
}

Expected<std::string> ReadExternalData(const onnx::TensorProto& t, const std::string& model_dir) {
  uint64_t offset, length;
  OP_ASSIGN_OR_RETURN(std::string file, ResolveExternalData(t, model_dir, &offset, &length));
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError(file + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(static_cast<std::streamoff>(offset));
  std::string data;
  try {
    data.resize(length);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(file + ": cannot allocate " + std::to_string(length) + " bytes");
  }
  if (length > 0 && !in.read(data.data(), static_cast<std::streamsize>(length))) {
    return IoError(file + ": read failed for initializer '" + t.name() + "'");
  }
  return data;
}

}  // namespace onnxprobe
