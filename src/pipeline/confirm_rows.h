// Which rows confirm a value paired inside a PyTorch module call.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnxprobe/align/align.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

// For each value inside a module call (an `inside` row with a counterpart): the rows that
// confirm it (CompareJob::confirm_by): the call's own outputs, and, with `graph`, every other
// structural pair whose ONNX tensor lies between the value's tensor and those outputs (the
// boundaries of calls made inside the call: an output after a normalization can hide an error
// its children's rows show).
std::map<std::string, std::vector<std::string>> ConfirmingRows(
    const std::vector<AlignmentRow>& rows, const std::set<std::string>& advisory,
    const Model* graph);

}  // namespace onnxprobe
