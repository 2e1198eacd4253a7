// Numbers in messages and reports: magnitudes always in %g style, never fixed decimals (an error
// of 2.98e-07 must not read as 0.000000).
#pragma once

#include <string>

namespace onnxprobe {

// `v` with `digits` significant digits ("2.98e-07", "0.0107", "inf", "nan").
std::string FormatNumber(double v, int digits = 3);

}  // namespace onnxprobe
