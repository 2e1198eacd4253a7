// The preload's configuration, read once from ONNXPROBE_* environment variables.
#pragma once

#include <cstdint>
#include <string>

#include "onnxprobe/capture/capture.h"

namespace onnxprobe::preload {

struct PreloadConfig {
  std::string dir;          // ONNXPROBE_CAPTURE: dumps go to DIR/<pid>-session<K>/run<N>
  uint64_t every = 1;       // ONNXPROBE_EVERY: capture runs 1, 1+E, 1+2E, ... of each session
  uint64_t max_runs = 10;   // ONNXPROBE_MAX_RUNS: captured runs per session (0 = no limit)
  uint64_t max_memory = 0;  // ONNXPROBE_MAX_MEMORY: captured bytes alive at once (0 = no limit)
  TensorSelection
      selection;  // ONNXPROBE_TENSORS, ONNXPROBE_OP_TYPES (comma lists), ONNXPROBE_REGEX
};

// What a bad configuration is about: the variable to name.
struct ConfigError {
  std::string variable;
  std::string message;
};

enum class ConfigState { kOff, kOn, kBad };

// kOff when ONNXPROBE_CAPTURE is unset or empty. kBad fills `error` for the first bad variable:
// an unparsable number or size, a bad regex, or a folder that cannot be created or written.
ConfigState ReadPreloadConfig(PreloadConfig* config, ConfigError* error);

// The variable(s) a selection error is about, for a message.
std::string SelectionVariables(const TensorSelection& selection);

}  // namespace onnxprobe::preload
