#include <sstream>

#include "common/file_util.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {

Expected<std::map<std::string, std::string>> ReadTensorMapping(const std::string& path) {
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(path, 64ull << 20));
  std::map<std::string, std::string> out;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    OP_ASSIGN_OR_RETURN(JsonValue v, ParseJson(text, path));
    for (const auto& [k, val] : v.members()) {
      if (!val.is_string())
        return InvalidArgument(path + ": mapping for '" + k + "' is not a string");
      out[k] = val.as_string();
    }
    return out;
  }
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string x, y, extra;
    if (!(fields >> x)) continue;
    if (!(fields >> y) || (fields >> extra)) {
      return InvalidArgument(path + ":" + std::to_string(n) +
                             ": expected two columns (name in A, name in B)");
    }
    out[x] = y;
  }
  return out;
}

}  // namespace onnxprobe
