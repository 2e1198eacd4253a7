// Model loading, graph indexing, hashing and output marking on arbitrary bytes; the streaming
// graph-only load (wire-format scan) must agree with the full load wherever both succeed.
#include <cstdlib>

#include "fuzz_util.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = onnxprobe::fuzz::WriteScratch("model.onnx", data, size);
  auto g = onnxprobe::Model::Load(path, onnxprobe::LoadMode::kGraphOnly);
  auto m = onnxprobe::Model::Load(path);
  if (!m.ok()) return 0;
  auto hashes = m->InitializerHashes();
  if (g.ok()) {
    auto g_hashes = g->InitializerHashes();
    if (g->Hashes().sha256 != m->Hashes().sha256 || g_hashes.ok() != hashes.ok() ||
        (hashes.ok() && *g_hashes != *hashes) ||
        g->index().nodes().size() != m->index().nodes().size()) {
      std::abort();
    }
  }
  auto names = m->index().CapturableTensors();
  (void)onnxprobe::MarkOutputs(*m, names);
  (void)onnxprobe::SelectTensors(*m, onnxprobe::TensorSelection());
  onnxprobe::InputOptions io;
  (void)onnxprobe::PrepareInputs(*m, io);
  return 0;
}
