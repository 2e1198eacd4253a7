// Dump folders: manifest.json parsing and validation, then loading what it names.
#include <filesystem>

#include "fuzz_util.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/common/json_value.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)onnxprobe::ParseJson(text, "fuzz.json");
  std::string dir = onnxprobe::fuzz::ScratchDir() + "/dump";
  std::filesystem::create_directories(dir);
  onnxprobe::fuzz::WriteScratch("dump/manifest.json", data, size);
  auto r = onnxprobe::DumpReader::Open(dir);
  if (!r.ok()) return 0;
  for (const auto& e : (*r)->entries()) (void)(*r)->Load(e);
  return 0;
}
