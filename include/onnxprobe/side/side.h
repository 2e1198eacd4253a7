// A side is where tensors come from: a live run (model + runtime + options) or a saved dump.
// Every side lists its tensors in topological order and produces a requested set on demand, so
// comparisons stream batch by batch whatever the sides are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

struct SideTensor {
  std::string name, node, op_type;
  int topo_index = -1;
  uint64_t est_bytes = 0;  // 0 when unknown
  bool is_graph_output = false;
  // PyTorch captures: the module that produced it and which call/output of it
  std::string module, module_type;
  int call_index = 0, output_index = 0;
  double float64_error = -1;  // DumpEntry::float64_error
};

enum class SideKind { kLive, kDump, kTorchCapture };
const char* SideKindName(SideKind k);  // "live", "dump", "torch-capture"

struct SideInfo {
  SideKind kind = SideKind::kLive;
  std::string path;  // model or dump
  std::string model_sha256;
  std::string runtime;          // "onnxruntime 1.23.2"; "" when a dump does not say
  std::string runtime_version;  // "1.23.2"; "" when unknown
  std::string runtime_library;
  // The CPU a live side runs on when it is not this machine's ("aarch64 (qemu-aarch64 -cpu
  // max)", backend/platform.h); "" for this machine.
  std::string platform;
  std::string provider;
  std::map<std::string, std::string> provider_options;
  OptLevel optimization_level = OptLevel::kDisabled;
  bool sequential = true;
  int intra_op_threads = 0, inter_op_threads = 0;
  // What a live side did so that its tensors can be captured, or could not do, one line each:
  // the If nodes it runs as the branch they take for the inputs (their tensors then compared
  // like any other), and why one was not.
  std::vector<std::string> notes;
  std::vector<std::string> inlined_ifs;  // the If nodes it runs as their taken branch
  // the Loop and Scan nodes it runs unrolled: their body's nodes and tensors, copied once per
  // iteration, are named "<name>@<iteration>"
  std::vector<std::string> unrolled_loops;
};

class Side {
 public:
  virtual ~Side() = default;
  virtual const SideInfo& info() const = 0;
  std::string Describe() const;
  // Capturable tensors in topological order (valid after SetInputs for live sides).
  virtual const std::vector<SideTensor>& tensors() const = 0;
  // The graph behind the side; null for dumps.
  virtual const Model* model() const = 0;
  // Inputs stored with the side (dumps); empty for live sides.
  virtual Expected<std::vector<NamedTensor>> RecordedInputs() const = 0;
  // Live sides: checks the inputs against the model and estimates tensor sizes.
  virtual Status SetInputs(const std::vector<NamedTensor>& inputs) = 0;
  // The named tensors, in `names` order (one inference run for live sides). Fails with kBackend
  // when the runtime fails, kCorrupt/kIoError when a dump cannot be read.
  virtual Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) = 0;
  virtual size_t runs() const { return 0; }
  // Runs another model (an isolated node, a repro) on this side's runtime with its options.
  // Dumps cannot run anything: kUnsupported.
  virtual Expected<std::vector<RunOutput>> RunOther(
      const std::string& model_bytes, const std::string& model_dir,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) = 0;
  // Tensors of the model this side cannot expose without changing what it measures: with
  // optimizations on, those the runtime's optimized graph fuses away (marking them as outputs
  // would block the fusion). Valid after SetInputs.
  virtual const std::vector<std::string>& hidden() const {
    static const std::vector<std::string> kNone;
    return kNone;
  }
  // The session options a live side runs with (dumps: the defaults).
  virtual SessionOptions session_options() const { return SessionOptions(); }
};

struct SideSpec {
  std::string path;         // .onnx model, dump folder, or dump .npz
  SessionOptions session;   // live sides only
  std::string ort_library;  // "" = default
  // Keep a live side's session between fetches of the same tensor set (repeated comparisons).
  // Off by default: a one-shot comparison frees each side's session, weights and arena before
  // the other side runs, which keeps peak memory down.
  bool keep_session = false;
  // Keep the capture session of a live side's first fetch for later fetches of the same set
  // (a comparison run again on other inputs: a sample, a sweep point), with fresh output buffers
  // each time; other sets get a session of their own, freed after the run.
  bool hold_session = false;
  // With optimizations on, also capture tensors the optimized graph fuses away. Marking them as
  // outputs blocks those fusions, so the side then measures another graph than it runs.
  bool mark_fused_tensors = false;
  // The comparison's memory budget (0: none): finding the optimized graph's tensors keeps
  // external weights over it out of the runtime (see OptimizedGraphTensors).
  uint64_t max_memory = 0;
};

// A dump when `path` is a folder or an .npz holding manifest.json, else a live model.
Expected<std::unique_ptr<Side>> OpenSide(const SideSpec& spec);
// A live side over an already loaded model (two sides of one model share its memory).
Expected<std::unique_ptr<Side>> OpenLiveSide(const Model& model, const SideSpec& spec);

}  // namespace onnxprobe
