// Renderings of a baseline check (the result types of baseline.h): console text, the versioned
// JSON document "onnxprobe-baseline-check" (docs/baseline.md), and JUnit suites (one per sample,
// a test case per stored tensor).
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/baseline/baseline.h"
#include "onnxprobe/report/junit.h"

namespace onnxprobe {

std::string RenderBaselineCheckConsole(const BaselineCheckReport& r);
std::string RenderBaselineCheckJson(const BaselineCheckReport& r);
// Renders the JSON and writes it atomically.
Status WriteBaselineCheckJson(const BaselineCheckReport& r, const std::string& path);
// classname = the model path; case name = "<sample>/<tensor>". A failing tensor's failure text
// names where the sample's error is born (first diverging tensor, introducing nodes).
std::vector<JUnitSuite> BaselineCheckJUnit(const BaselineCheckReport& r);

// The comparison a check's HTML report shows: the first failing sample's full localization
// comparison when there is one, else its comparison against the stored tensors, else the
// sample closest to its tolerance. Null when no sample was compared.
const CompareReport* BaselineCheckFocus(const BaselineCheckReport& r);

}  // namespace onnxprobe
