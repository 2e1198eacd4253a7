// run's in-memory front door: the options of `onnxprobe run`, parsed and checked once (the same
// declarations, defaults, rules and messages as the command line), as a capture whose tensors
// the caller keeps instead of a dump (the Python package's run() without output=). Options that
// only shape what is written (-o, --json, --force, -q, ...) are refused here, naming the flag.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace onnxprobe::cmd {

struct CapturePlan {
  std::string model;
  TensorSelection selection;
  InputOptions inputs;
  CaptureOptions capture;   // its session: the one the options give
  std::string ort_library;  // a runtime locator (backend/platform.h LoadBackend)
};

// `positionals` (MODEL) and `options` as (flag, value) pairs in command-line order, applied as
// `onnxprobe run` applies argv; `tensors` join the inputs as --input files would;
// `default_ort_library`: the runtime when no option names one ("" the library's default).
Expected<CapturePlan> PlanCapture(const std::vector<std::string>& positionals,
                                  const std::vector<std::pair<std::string, std::string>>& options,
                                  std::vector<NamedTensor> tensors = {},
                                  const std::string& default_ort_library = "");

}  // namespace onnxprobe::cmd
