// `inspect`'s console summary of a model (src/report/model_summary_report.cc); its JSON is
// InspectJson (model/model_json.h).
#pragma once

#include <string>

#include "onnxprobe/common/hash.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

// Path, size, IR version, opsets, producer, hashes, inputs, outputs, op counts, parameters and
// checker warnings; with `tensors`, every tensor in topological order with its producing node.
std::string RenderModelSummaryText(const Model& m, const FileHashes& h, bool tensors);

}  // namespace onnxprobe
