// Internal: what a live side says about itself, whether its runtime runs in this process
// (side.cc) or in a child process (isolated_side.cc).
#pragma once

#include <string>

#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Everything but the model hash, which each side computes its own way.
SideInfo LiveSideInfo(const std::string& model_path, const std::string& runtime_version,
                      const std::string& runtime_library, const SessionOptions& options);

}  // namespace onnxprobe
