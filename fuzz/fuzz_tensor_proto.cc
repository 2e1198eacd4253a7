#include <string>

#include "onnxprobe/tensor/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto t = onnxprobe::ParseTensorProto(bytes, "fuzz.pb");
  if (t.ok()) (void)onnxprobe::SerializeTensorProto(t->tensor, t->name);
  return 0;
}
