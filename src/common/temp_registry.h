// The process-wide list of live temporaries (see onnxprobe/common/cleanup.h). Thread-safe.
#pragma once

#include <string>

namespace onnxprobe {

// Adds `path` (a file or folder about to be created). Paths longer than PATH_MAX, or beyond the
// registry's fixed capacity, are not tracked (the registry never allocates at signal time).
void RegisterTemporary(const std::string& path);
// Removes `path` from the list once it was renamed into place or deleted.
void UnregisterTemporary(const std::string& path);

}  // namespace onnxprobe
