// The onnxprobe library version.
#pragma once

namespace onnxprobe {

const char* Version();

}  // namespace onnxprobe
