// The application's sessions as the preload sees them: which runs to capture, a copy of those
// runs' inputs, and one background worker that runs the shadow captures and writes the dumps.
// The application's thread waits only for the process's first capture (run in place, once) and
// when it gets 4 captures ahead of the worker.
#pragma once

#include <onnxruntime_c_api.h>

#include <memory>
#include <string>

#include "preload_config.h"
#include "recorded_options.h"

namespace onnxprobe::preload {

// Called once before any other function here: the configuration, the real API table (for the
// preload's own reads of the application's inputs) and the runtime library's path.
void StartCapturing(const PreloadConfig& config, const OrtApi* real_api,
                    const std::string& ort_library);

// After the application's CreateSession / CreateSessionFromArray succeeded.
void OnSessionCreated(const OrtSession* session, const char* model_path,
                      std::shared_ptr<const std::string> model_bytes,
                      const OrtSessionOptions* options);
void OnSessionReleased(const OrtSession* session);
// After the application's Run succeeded: counts the run and, when chosen, queues a capture of
// it with a copy of its inputs.
void OnRun(const OrtSession* session, const char* const* input_names, const OrtValue* const* inputs,
           size_t input_count);

}  // namespace onnxprobe::preload
