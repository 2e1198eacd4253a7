// Option values shared by the command line and the Python package, parsed once in the library
// (the messages name the accepted values; callers prefix their option's name).
#pragma once

#include <string>

#include "onnxprobe/common/status.h"
#include "onnxprobe/localize/localize.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe {

// "frontier" (the default), "failing", "all" or "none": which candidates localization runs
// alone, or none at all.
struct IsolateChoice {
  bool isolate = true;
  Candidates candidates = Candidates::kFrontier;
};
Expected<IsolateChoice> ParseIsolate(const std::string& s);

// "auto" or "off" (the quantization-aware pairing and rule, docs/quantization.md).
Expected<QuantMode> ParseQuantMode(const std::string& s);

// A number of dB (the quantization rule's minimum SQNR): finite, decimal.
Expected<double> ParseSqnrDb(const std::string& s);

}  // namespace onnxprobe
