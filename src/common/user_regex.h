// Regular expressions typed by users (--regex, tolerance rules) compiled without reaching the parts
// of std::regex that misbehave on hostile text: libstdc++ reads a back-reference number or a repeat
// count into a signed long with no overflow check (undefined behaviour on "\2222222222222222222").
#pragma once

#include <regex>
#include <string>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

// The compiled ECMAScript pattern, or InvalidArgument naming `what` and the pattern: a
// back-reference above \99, a repeat count above 100000 or a pattern std::regex refuses.
Expected<std::regex> CompileUserRegex(const std::string& pattern, const std::string& what);

}  // namespace onnxprobe
