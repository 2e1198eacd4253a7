#include "onnxprobe/pipeline/options.h"

#include <cmath>
#include <cstdlib>

namespace onnxprobe {

Expected<IsolateChoice> ParseIsolate(const std::string& s) {
  IsolateChoice c;
  if (s == "frontier") {
    c.candidates = Candidates::kFrontier;
  } else if (s == "failing") {
    c.candidates = Candidates::kFailing;
  } else if (s == "all") {
    c.candidates = Candidates::kAll;
  } else if (s == "none") {
    c.isolate = false;
  } else {
    return InvalidArgument("'" + s + "' is not one of frontier, failing, all, none");
  }
  return c;
}

Expected<QuantMode> ParseQuantMode(const std::string& s) {
  if (s == "auto") return QuantMode::kAuto;
  if (s == "off") return QuantMode::kOff;
  return InvalidArgument("'" + s + "' is not one of auto, off");
}

Expected<double> ParseSqnrDb(const std::string& s) {
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != '\0' || !std::isfinite(d))
    return InvalidArgument("'" + s + "' is not a number of dB");
  return d;
}

}  // namespace onnxprobe
