// Internal: the current time as written in reports and records.
#pragma once

#include <string>

namespace onnxprobe {

// UTC now, ISO 8601 to the second: "2026-12-02T23:45:01Z" ("...:01" without the zone when
// with_zone is false, as JUnit's timestamp attribute wants it).
std::string UtcNowIso8601(bool with_zone = true);

}  // namespace onnxprobe
