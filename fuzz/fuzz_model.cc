// Model loading, graph indexing, hashing and output marking on arbitrary bytes.
#include "fuzz_util.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/graph.h"
#include "onnxprobe/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = onnxprobe::fuzz::WriteScratch("model.onnx", data, size);
  auto m = onnxprobe::Model::Load(path);
  if (!m.ok()) return 0;
  (void)m->InitializerHashes();
  auto names = m->index().CapturableTensors();
  (void)onnxprobe::MarkOutputs(*m, names);
  (void)onnxprobe::SelectTensors(*m, onnxprobe::TensorSelection());
  onnxprobe::InputOptions io;
  (void)onnxprobe::PrepareInputs(*m, io);
  return 0;
}
