// Polygraphy's saved results as an onnxprobe dump: `polygraphy run --save-outputs out.json`
// (and `--save-inputs in.json`) written by a team's CI become a side any command reads.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/capture/dump.h"

namespace onnxprobe {

struct PolygraphyImportRequest {
  std::string outputs_file;  // RunResults JSON (polygraphy run --save-outputs)
  std::string inputs_file;   // optional: the inputs JSON (--save-inputs), one feed per iteration
  std::string runner;    // which runner's results ("" = the only one, else an error naming them)
  size_t iteration = 0;  // which iteration of that runner (and of the inputs)
  // Optional: the model the results come from; tensors then carry their producing node, op type
  // and topological position (otherwise they keep the file's order), and the dump its hash.
  std::string model_path;
  std::string output;  // the dump to write (folder, or a path ending in ".npz")
};

struct PolygraphyImportReport {
  std::vector<std::string> runners;  // every runner in the file, in order
  std::string runner;                // the one imported
  size_t iterations = 0;             // that runner's iterations
  size_t tensors = 0, inputs = 0;
  std::vector<std::string> not_in_model;  // with a model: tensors it does not produce
  DumpMetadata metadata;
};

// Fails with kNotFound / kIoError on files, kCorrupt naming the file and the entry when the JSON
// is not Polygraphy's (or holds a value other than a NumPy array, e.g. a torch tensor),
// kInvalidArgument for an unknown runner or an iteration out of range.
Expected<PolygraphyImportReport> ImportPolygraphy(const PolygraphyImportRequest& request);

}  // namespace onnxprobe
