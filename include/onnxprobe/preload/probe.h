// Capture inside an application: attach to the model and settings of a session the application
// runs itself, then capture the intermediate tensors of chosen runs into onnxprobe dumps. The
// application's own session and outputs are never touched: each capture runs a shadow session
// (the model with the selected tensors marked as outputs, same settings) on the same inputs.
// This is what libonnxprobe_preload.so does for an unmodified application.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"

namespace onnxprobe {

struct ProbeOptions {
  TensorSelection selection;  // every node output by default
  SessionOptions session;     // the application's session settings, mirrored by the shadow
  uint64_t max_memory = 0;    // captured bytes alive at once; 0 = no limit
  std::string ort_library;    // "" = the default runtime
  // Settings recorded in each dump's manifest ("session" object), e.g. what the application set
  // on its session options, as the caller knows them.
  std::vector<std::pair<std::string, std::string>> recorded_settings;
};

// What a failed Attach or CaptureRun is about, for callers that map it to their own settings.
enum class ProbeFault { kNone, kModel, kSelection, kMemoryBudget, kRuntime, kOutput };

struct ProbeRunReport {
  CaptureReport capture;
  uint64_t bytes_written = 0;
  double seconds = 0;  // shadow run and writing
};

class Probe {
 public:
  // Loads the model and selects its tensors. Fails like Model::Load and SelectTensors (a bad
  // regex, an unknown tensor name, a selection that matches nothing) and LoadOrtBackend.
  static Expected<std::unique_ptr<Probe>> Attach(const std::string& model_path,
                                                 const ProbeOptions& options,
                                                 ProbeFault* fault = nullptr);
  ~Probe();

  // Runs the shadow session on `inputs` and writes a dump (inputs included) to `dump_path`; it
  // appears complete or not at all. The shadow session is created on the first call and reused,
  // its outputs bound to buffers reused across runs, unless the selection does not fit
  // max_memory (then each call captures in several runs). Fails with kInvalidArgument when
  // max_memory is smaller than one selected tensor, kBackend when the runtime fails, or like
  // DumpWriter. Calls are serialized: safe from several threads.
  Expected<ProbeRunReport> CaptureRun(const std::vector<NamedTensor>& inputs,
                                      const std::string& dump_path, ProbeFault* fault = nullptr);

  const Model& model() const { return *model_; }
  std::string runtime_version() const;

 private:
  Probe() = default;
  Status Prepare(const std::vector<NamedTensor>& inputs, ProbeFault* fault);
  Status WriteCaptured(DumpWriter& writer, CaptureReport* report);

  std::mutex mu_;
  ProbeOptions options_;
  std::unique_ptr<Model> model_;
  std::shared_ptr<Backend> backend_;
  std::string sha256_;
  std::vector<std::string> selected_;  // in topological order
  std::vector<std::string> tensors_;   // selected minus those fused away by optimizations
  std::vector<std::string> fused_;
  bool prepared_ = false;
  bool batched_ = false;  // the selection exceeds max_memory: capture in several runs per call
  std::unique_ptr<CaptureSession> shadow_;
};

}  // namespace onnxprobe
