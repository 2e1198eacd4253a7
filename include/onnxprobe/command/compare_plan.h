// compare's one front door: the options of `onnxprobe compare`, parsed and checked once (the
// same declarations, defaults, rules and messages as the command line), as a typed request.
// The command line executes it and renders the reports; the Python package's compare() builds
// the same option occurrences from its keywords and runs the plan it gets here.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/capture/samples.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/pipeline/options.h"
#include "onnxprobe/pipeline/sweep.h"

namespace onnxprobe::cmd {

struct ComparePlan {
  CompareRequest request;
  // --inputs DIR / --samples N: one comparison per sample (their base: request.inputs)
  SampleOptions samples;
  SampleShard shard;             // --shard I/N of those samples
  std::vector<SweepAxis> sweep;  // --sweep: one comparison per shape
  bool samples_given() const { return !samples.inputs_dir.empty() || samples.count > 0; }
};

// What Python gives as values where the command line names a file.
struct CompareValues {
  std::vector<NamedTensor> tensors;           // input arrays by name (--input NAME=FILE)
  std::map<std::string, std::string> rename;  // {name in A: name in B} (--map FILE)
  // The runtime of a live side whose options name none (no --ort-lib, --ort-version,
  // --platform or --remote): the Python package's own (the onnxruntime package's library in a
  // wheel); "" is the library's default.
  std::string default_ort_library;
};

// `positionals` (A [B]) and `options` as (flag, value) pairs in command-line order (a switch's
// value ""), applied as `onnxprobe compare` applies argv (command.h ApplyArguments), then the
// command's checks. `values` join the request as their flags' files would, under the same rules
// (an input given twice, inputs beside a dump side, inputs with a sweep).
Expected<ComparePlan> PlanCompare(const std::vector<std::string>& positionals,
                                  const std::vector<std::pair<std::string, std::string>>& options,
                                  CompareValues values = {});

// The samples of a plan with samples (capture/samples.h ListInputSamples), errors naming
// --inputs / --samples as the command line's do.
Expected<std::vector<InputSample>> PlanSamples(const ComparePlan& plan);

}  // namespace onnxprobe::cmd
