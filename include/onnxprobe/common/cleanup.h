// Temporaries on interruption: every file the library writes goes to a temporary name first
// (then rename); these keep a ^C or a kill from leaving those temporaries behind.
#pragma once

#include "onnxprobe/common/status.h"

namespace onnxprobe {

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every temporary file and folder
// the library is writing, then end the process by the same signal (so its exit status is the
// signal's). A signal that is ignored, or already has a handler of the program, is left alone.
// Call once, early in main. Fails only when sigaction fails.
Status InstallTemporaryCleanup();

// Removes every temporary the library is writing now. Async-signal-safe (it allocates nothing),
// for a program that keeps its own signal handlers.
void RemoveLiveTemporaries();

}  // namespace onnxprobe
