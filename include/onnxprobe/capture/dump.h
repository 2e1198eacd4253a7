// Dumps of captured tensors: a folder (one .npy per tensor + manifest.json) or one .npz (with
// the manifest stored as the entry "manifest.json"). Either appears complete or not at all.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/exact.h"

namespace onnxprobe {

struct DumpMetadata {
  std::string model_path;
  std::string model_sha256;
  std::string runtime;          // e.g. "onnxruntime 1.23.2"
  std::string runtime_version;  // e.g. "1.23.2"
  std::string provider;
  OptLevel optimization_level = OptLevel::kDisabled;
  uint64_t seed = 0;
  std::string source;  // kTorchCaptureSource for PyTorch activations
  // Session settings as recorded by the capturer (manifest "session" object; written when set)
  std::vector<std::pair<std::string, std::string>> settings;
};
// The manifest's "source" of a dump written by the PyTorch companion.
constexpr const char* kTorchCaptureSource = "torch-capture";

// What a dump entry holds: a graph input the run was fed, or a tensor it computed. The
// manifest spells them "input" and "tensor" (docs/dump-format.md).
enum class DumpEntryKind { kInput, kTensor };
const char* DumpEntryKindName(DumpEntryKind kind);

class DumpWriter : public CaptureSink {
 public:
  // `path` ending in ".npz" writes an archive, anything else a folder. An existing target is
  // replaced only on Finish().
  static Expected<std::unique_ptr<DumpWriter>> Create(const std::string& path, DumpMetadata meta);
  ~DumpWriter() override;

  Status AddInput(const NamedTensor& input);
  Status Consume(CapturedTensor&& t) override;
  // Writes the manifest and moves the dump into place.
  Status Finish(const CaptureReport& report);
  void set_model_sha256(const std::string& h) { meta_.model_sha256 = h; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  DumpWriter() = default;
  struct Entry;
  Status Write(DumpEntryKind kind, const std::string& name, const Tensor& t,
               const CapturedTensor* c);
  std::string path_, tmp_;
  bool npz_ = false;
  bool finished_ = false;
  DumpMetadata meta_;
  std::unique_ptr<class NpzWriter> npz_writer_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<SkippedTensor> skipped_;
  uint64_t bytes_written_ = 0;
};

struct DumpEntry {
  std::string name;
  DumpEntryKind kind = DumpEntryKind::kTensor;
  std::string node, op_type, file;
  int topo_index = -1;
  DType dtype = DType::kFloat32;  // as captured (bfloat16 is stored as float32 on disk)
  Shape shape;
  // PyTorch captures (python/onnxprobe_torch): the module that produced it
  std::string module, module_type;
  int call_index = 0, output_index = 0;
  // PyTorch captures: max |float32 value - float64 evaluation of the same model|, the float32
  // rounding the captured value carries; -1 when not measured
  double float64_error = -1;
};

// Reads a dump written by DumpWriter (folder or .npz). The manifest is validated up front: every
// field typed, file names confined to the dump folder. Tensors are loaded one at a time.
class DumpReader {
 public:
  static Expected<std::unique_ptr<DumpReader>> Open(const std::string& path);
  ~DumpReader();
  const std::string& path() const { return path_; }
  const DumpMetadata& metadata() const { return meta_; }
  // Inputs first, then tensors in topological order.
  const std::vector<DumpEntry>& entries() const { return entries_; }
  const DumpEntry* Find(const std::string& name, DumpEntryKind kind = DumpEntryKind::kTensor) const;
  // Loads one tensor; fails when its file is missing or disagrees with the manifest.
  Expected<Tensor> Load(const DumpEntry& e) const;

 private:
  DumpReader() = default;
  std::string path_;
  bool npz_ = false;
  DumpMetadata meta_;
  std::vector<DumpEntry> entries_;
  std::unique_ptr<class NpzReader> npz_reader_;
};

// `onnxprobe run` as one call: load the model, prepare its inputs, capture the selected tensors on
// an ONNX Runtime and write them with the inputs as a dump (folder or FILE.npz).
struct DumpRequest {
  std::string model_path;
  std::string output;  // dump folder, or a path ending in ".npz"
  TensorSelection selection;
  InputOptions inputs;
  CaptureOptions capture;   // session options, memory budget, observer check
  std::string ort_library;  // "" = the default runtime
  ProgressFn on_progress;   // called as tensors are captured
  // Look for NaN and Inf in the inputs and every captured tensor (one pass over each).
  bool find_nonfinite = false;
  // Capture the model's exact reference instead (`run --precision float64`): its float64 copy
  // (capture/exact_reference.h) on the CPU provider, fed the same inputs; the dump holds the
  // original model's tensors, in float64.
  bool exact = false;
};

// A tensor holding NaN or Inf values, as found by CaptureToDump.
struct NonfiniteTensor {
  std::string name;
  bool is_input = false;      // a graph input (then no producing node)
  std::string node, op_type;  // the producing node
  int topo_index = -1;        // of the producing node
  uint64_t elements = 0, nan_count = 0, inf_count = 0;
};

struct DumpReport {
  CaptureReport capture;
  DumpMetadata metadata;  // as written to the manifest
  uint64_t bytes_written = 0;
  double seconds = 0;              // capture and writing, model loading excluded
  std::vector<std::string> notes;  // how inputs were bound when the request did not spell it out
  // With `exact`: how each node's float64 value was computed.
  std::optional<ExactModel> exact;
  // With find_nonfinite: the first tensor holding NaN or Inf (inputs first, then the captured
  // tensors in topological order), and how many hold any. Unset when every value is finite.
  std::optional<NonfiniteTensor> first_nonfinite;
  size_t nonfinite_tensors = 0;
};

// Fails like Model::Load, SelectTensors, PrepareInputs (then `inputs`, when given, names the
// input option at fault), LoadOrtBackend, Capture and DumpWriter; nothing appears at `output`
// unless the dump is complete.
Expected<DumpReport> CaptureToDump(const DumpRequest& request, InputPreparation* inputs = nullptr);

// True when `path` names a dump (a folder, or an .npz holding manifest.json) rather than a model
// or a plain array file.
bool IsDumpPath(const std::string& path);

// The file name a tensor gets inside a dump folder: "<index>_<sanitized name>.npy".
std::string DumpFileName(size_t index, const std::string& tensor_name);

}  // namespace onnxprobe
