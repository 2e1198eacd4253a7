// The platform worker's LocateExternalData (ort_api.h): the host's RemoteBackend locates a
// model's external data for the worker's runtime version before it sends the model (it holds the
// ONNX graph code; the worker holds none), so what reaches the worker serves as it is.
#include "backend/ort/ort_api.h"

namespace onnxprobe {

Expected<std::string> LocateExternalData(const std::string&, const std::string&, const std::string&,
                                         const SessionOptions&) {
  return std::string();
}

}  // namespace onnxprobe
