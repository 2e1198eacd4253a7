// A comparison opened once and run many times: the models, both sides' runtimes, the optimized
// graph's analysis, the tensor mapping and the noise floor are prepared by Open(); each Run()
// compares one set of inputs (a sample, a sweep point, a baseline sample) and localizes it.
// Compare() is Open() plus one Run(); CompareSamples, CompareSweep and CheckBaseline run one
// session over all their samples.
#pragma once

#include <memory>
#include <string>

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

// What one run changes; everything else is the request the session was opened with.
struct SessionRun {
  InputOptions inputs;  // replaces request.inputs
  bool inputs_given = false;
  // A dump that replaces side A for this run and the runs after it (a baseline check: one
  // stored dump per sample against one live side B). "" keeps side A.
  std::string side_a;
  bool localize = true;  // and request.localize
  // false: a run that passes does not look for where its differences below tolerance are born
  // (request.localize_options.drift); a run that fails is localized in full either way.
  bool drift = true;
  bool measure_resources = true;  // and request.latency_runs > 0
  RowCallback on_row;
  // The comparison an earlier run of this session made of these same inputs: taken as this run's
  // instead of running both sides again, so the run only localizes (the focus sample's drift
  // origins). Ignored where the comparison depends on more than the sides (a PyTorch capture's
  // alignment, a quantized side B). Must outlive the call.
  const ComparisonResult* compared = nullptr;
};

struct SessionOpenOptions {
  // Keep each live side's capture session (model, prepacked weights, arena) from one run to the
  // next, so later runs pay only inference. Both sides' sessions are then alive at once, which
  // the comparison's memory budget (job.max_memory) does not cover: with a budget the sessions
  // are freed after each fetch, as a single comparison does.
  bool hold_sessions = false;
};

class ComparisonSession {
 public:
  // Opens both sides of `request`. Fails like Compare() on bad sides, mapping or noise floor.
  static Expected<std::unique_ptr<ComparisonSession>> Open(const CompareRequest& request,
                                                           const SessionOpenOptions& options = {});
  ~ComparisonSession();
  ComparisonSession(const ComparisonSession&) = delete;
  ComparisonSession& operator=(const ComparisonSession&) = delete;

  // One comparison with `run`'s inputs: the report Compare() gives for the request with them.
  Expected<CompareReport> Run(const SessionRun& run);
  // The number of runs so far.
  size_t runs() const;

 private:
  struct State;
  struct Stages;  // one run's stages (comparison_session.cc)
  explicit ComparisonSession(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The run Compare() makes of a request: its inputs, localization and resources as asked.
SessionRun SingleRun(const CompareRequest& request);

}  // namespace onnxprobe
