// Renderings of profile results (src/report/profile_report.cc).
#pragma once

#include <string>

#include "onnxprobe/profile/profile.h"

namespace onnxprobe {

// Renderings (report/profile_report.cc): the JSON has "schema": "onnxprobe-profile"; the text
// lists the `top` slowest nodes.
std::string RenderProfileText(const ProfileReport& r, size_t top);
std::string RenderProfileJson(const ProfileReport& r);

}  // namespace onnxprobe
