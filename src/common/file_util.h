// File helpers shared by the library: whole-file reads, atomic writes, path checks.
#pragma once

#include <cstdint>
#include <string>

#include "onnxprobe/status.h"

namespace onnxprobe {

// Reads a whole regular file. Fails naming the path when missing, a directory, or unreadable.
Expected<std::string> ReadFile(const std::string& path, uint64_t max_bytes = UINT64_MAX);

// Writes `data` to `path` via a temporary sibling and rename, so the file is complete or absent.
Status WriteFileAtomic(const std::string& path, const std::string& data);

// A path for a temporary sibling of `path` (same folder, unique suffix).
std::string TempSiblingPath(const std::string& path);

// Removes a file or folder tree; best effort, used to clean up after failures.
void RemoveAll(const std::string& path);

}  // namespace onnxprobe
