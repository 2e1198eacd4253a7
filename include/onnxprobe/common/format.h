// Numbers in messages and reports: magnitudes always in %g style, never fixed decimals (an error
// of 2.98e-07 must not read as 0.000000).
#pragma once

#include <cstdint>
#include <string>

namespace onnxprobe {

// `v` with `digits` significant digits ("2.98e-07", "0.0107", "inf", "nan").
std::string FormatNumber(double v, int digits = 3);

// A duration in milliseconds as a person reads it: "0.412 ms", "58.3 ms", "2580 ms" (three
// significant digits, never an exponent below 1e7 ms).
std::string FormatMs(double ms);

// A size in bytes as a person reads it: "512 B", "243.0 KiB", "2.1 MiB", "1.25 GiB" (binary
// units; one decimal, two from GiB on).
std::string FormatBytes(uint64_t bytes);

// printf into a string (a report line; any length).
std::string StringPrintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace onnxprobe
