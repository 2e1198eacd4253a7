// Run-to-run determinism: one model run several times (one session and fresh sessions), and
// under other thread settings, every intermediate tensor compared bitwise with the first run.
// Its per-tensor noise floor can be saved and handed to a comparison, so tolerances never flag
// what the runtime itself cannot reproduce.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"

namespace onnxprobe {

struct DeterminismRequest {
  std::string model;
  SessionOptions session;   // the reference settings
  std::string ort_library;  // "" = default
  InputOptions inputs;
  TensorSelection selection;  // empty = every tensor
  int runs = 3;               // runs in the reference session (>= 2)
  bool fresh_session = true;  // one more run in a new session with the same settings
  // Settings that may legitimately change results; reported apart from run-to-run noise.
  bool vary_threads = true;    // intra-op threads 1 vs the reference's
  bool vary_execution = true;  // parallel vs sequential execution
  uint64_t max_memory = 0;     // bytes of tensors held at once (reference + current); 0 = all
};

// One configuration's difference from the reference run for one tensor.
struct DeterminismRow {
  std::string name, node, op_type;
  int topo_index = -1;
  double run_max_abs = 0;        // same settings: repeated runs and a fresh session
  double settings_max_abs = 0;   // other threads / execution mode
  std::string settings_varying;  // the first other setting that changed it ("" = none)
  double max_abs_value = 0;      // max |x| of the reference, for scale
  bool is_graph_output = false;
};

struct DeterminismReport {
  std::string model, runtime;
  std::vector<std::string> configurations;  // what was run, in order
  std::vector<DeterminismRow> rows;         // topological order
  int first_nondeterministic = -1;          // first row differing between runs with same settings
  int first_settings_dependent = -1;        // first row differing under other settings
  bool outputs_reproducible = true;         // graph outputs identical run to run
  size_t runs = 0;
  std::vector<NamedTensor> inputs;
};

// Fails with kInvalidArgument/kNotFound on bad input, kBackend when the runtime fails.
Expected<DeterminismReport> CheckDeterminism(const DeterminismRequest& request);

// The noise floor of a report, as a file `compare` reads (JSON, written atomically): per tensor,
// the largest difference seen between runs with the same settings (and, when
// `include_settings`, under other settings too). Only tensors that varied are listed.
Status WriteNoiseFloor(const DeterminismReport& report, bool include_settings,
                       const std::string& path);

// Reads a noise-floor file: tensor name -> absolute difference the runtime cannot reproduce.
Expected<std::map<std::string, double>> ReadNoiseFloor(const std::string& path);

}  // namespace onnxprobe
