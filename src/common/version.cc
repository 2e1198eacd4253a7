#include "onnxprobe/common/version.h"

namespace onnxprobe {

const char* Version() { return ONNXPROBE_VERSION; }

}  // namespace onnxprobe
