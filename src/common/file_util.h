// File helpers shared by the library: whole-file reads, atomic writes, path checks.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

// Reads a whole regular file. Fails naming the path when missing, a directory, or unreadable.
Expected<std::string> ReadFile(const std::string& path, uint64_t max_bytes = UINT64_MAX);

// Writes `data` to `path` via a temporary sibling and rename, so the file is complete or absent.
Status WriteFileAtomic(const std::string& path, const std::string& data);

// The folder holding `path` ("" for a bare name); a trailing '/' names the folder itself, so
// "out/" and "out" have the same parent.
std::string ParentFolder(const std::string& path);

// A path for a temporary sibling of `path` (same folder, unique suffix), registered for removal
// on SIGINT/SIGTERM/SIGHUP (onnxprobe/common/cleanup.h) until RenameTemporary or RemoveTemporary.
std::string TempSiblingPath(const std::string& path);

// Renames temporary `tmp` (file or folder) to `path`; on success it is no longer a temporary.
std::error_code RenameTemporary(const std::string& tmp, const std::string& path);

// Creates a fresh private folder `<prefix>-XXXXXX` in $TMPDIR (or /tmp when unset), registered
// as a temporary: remove it with RemoveTemporary. Fails naming the folder it could not create in.
Expected<std::string> MakeTemporaryFolder(const std::string& prefix);

// Removes temporary `tmp` (file or folder tree), best effort, and forgets it.
void RemoveTemporary(const std::string& tmp);

// Removes a file or folder tree; best effort, used to clean up after failures.
void RemoveAll(const std::string& path);

}  // namespace onnxprobe
