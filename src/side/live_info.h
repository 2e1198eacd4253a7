// Internal: what a live side says about itself, whether its runtime runs in this process
// (side.cc) or in a child process (isolated_side.cc).
#pragma once

#include <string>

#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Everything but the model hash, which each side computes its own way.
SideInfo LiveSideInfo(const std::string& model_path, const std::string& runtime_version,
                      const std::string& runtime_library, const SessionOptions& options);

// A live side's session options: the side's own, plus the runtime's worker threads stop
// spinning as soon as a run returns. Two sides run in turn in one process (or two), and threads
// left spinning after one side's run take the cores the other side's run and the comparison
// need (measured: 15-30% of a comparison of ResNet-50 on a loaded 2-core machine). What a run
// computes is unchanged; a value the user set wins. Every live side's session, in this process
// or in its isolated worker, opens with these.
SessionOptions LiveSessionOptions(const SessionOptions& side);

}  // namespace onnxprobe
