#include "onnxprobe/tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = onnxprobe::ParseNpy(data, size, "fuzz.npy");
  if (t.ok()) (void)onnxprobe::ComputeStats(*t);
  return 0;
}
