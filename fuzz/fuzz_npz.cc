#include "fuzz_util.h"
#include "onnxprobe/tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = onnxprobe::fuzz::WriteScratch("a.npz", data, size);
  auto z = onnxprobe::NpzReader::Open(path);
  if (!z.ok()) return 0;
  for (const auto& k : (*z)->keys()) (void)(*z)->Read(k);
  (void)(*z)->ReadRaw("manifest.json");
  return 0;
}
