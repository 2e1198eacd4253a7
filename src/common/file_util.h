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
// Through a symbolic link the link stays and its target is written (OutputPath); a stream or
// device (/dev/stdout, a FIFO, /dev/null) is written as it is, never replaced.
Status WriteFileAtomic(const std::string& path, const std::string& data);

// Where an output named `path` is written: a symbolic link (the last component, followed link
// by link) is written through, to its target, never replaced; a standard stream named through
// /proc/self/fd or /dev/fd (/dev/stdout) stops there. `path` itself otherwise.
std::string OutputPath(const std::string& path);
// Whether `path` (after OutputPath) is a stream or device to write as it is: a process's file
// descriptor (/proc/self/fd/N, /dev/fd/N), a character or block device, a FIFO or a socket.
bool IsStreamOutput(const std::string& path);

// The folder holding `path` ("" for a bare name); a trailing '/' names the folder itself, so
// "out/" and "out" have the same parent.
std::string ParentFolder(const std::string& path);

// A path for a temporary sibling of `path` (same folder, unique suffix), registered for removal
// on SIGINT/SIGTERM/SIGHUP (onnxprobe/common/cleanup.h) until RenameTemporary or RemoveTemporary.
std::string TempSiblingPath(const std::string& path);

// Removes what a killed onnxprobe left beside `path`: temporary siblings "<path>.tmp-<pid>-<n>"
// whose process is gone (SIGKILL leaves them; SIGINT/SIGTERM do not). Those of a live process
// stay. Returns how many were removed.
size_t RemoveStaleTemporaries(const std::string& path);

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
