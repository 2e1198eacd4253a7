// generate's front door: the options of `onnxprobe generate`, parsed and checked once (the same
// declarations, defaults, rules and messages as the command line), as its typed request. The
// Python package's generate() builds the same option occurrences from its keywords.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/common/status.h"
#include "onnxprobe/generate/generate.h"

namespace onnxprobe::cmd {

// `positionals` (A [B]) and `options` as (flag, value) pairs in command-line order, applied as
// `onnxprobe generate` applies argv; `default_ort_library`: the runtime of a side whose
// options name none ("" the library's default).
Expected<GenerateRequest> PlanGenerate(
    const std::vector<std::string>& positionals,
    const std::vector<std::pair<std::string, std::string>>& options,
    const std::string& default_ort_library = "");

}  // namespace onnxprobe::cmd
