// Internal: SHA-256 of a file's bytes, streamed (runtime libraries, model files).
#pragma once

#include <string>

namespace onnxprobe {

// Lowercase hex; "" when the file cannot be read.
std::string FileSha256(const std::string& path);

}  // namespace onnxprobe
