#include "pipeline/inherited_verdict.h"

#include <unordered_set>

namespace onnxprobe {

void PassInheritedOnly(const Model* a, const Model* b, CompareReport* report) {
  ComparisonResult& r = report->comparison;
  const LocalizeResult& l = report->localization;
  if (r.failures == 0 || r.aborted || !l.ran || (a == nullptr && b == nullptr)) return;
  for (const Culprit& c : l.culprits) {
    if (!c.isolated || !c.error.empty()) return;  // a candidate isolation could not settle
    // a node makes the error, or a source below tolerance whose error grows (stage 2) is named
    if (c.introduced) return;
  }
  std::unordered_set<std::string> outputs_a, outputs_b;
  if (a != nullptr)
    for (const auto& v : a->summary().outputs) outputs_a.insert(v.name);
  if (b != nullptr)
    for (const auto& v : b->summary().outputs) outputs_b.insert(v.name);
  size_t outputs = 0;
  for (const TensorResult& row : r.rows) {
    if (!row.pass && row.role != Role::kInherited) return;
    if (!outputs_a.count(row.name) && !outputs_b.count(row.name_b)) continue;
    if (row.state != RowState::kCompared || !row.pass) return;  // what the model returns
    ++outputs;
  }
  if (outputs == 0) return;
  size_t passed = 0;
  for (TensorResult& row : r.rows) {
    if (row.pass) continue;
    row.pass = true;
    row.role = Role::kPass;
    row.reason = "inherited: " + row.reason +
                 "; no node introduces it (each candidate run alone on side A's inputs is within "
                 "tolerance) and the graph outputs are within tolerance";
    ++passed;
  }
  r.inherited_passed = passed;
  r.failures = 0;
  r.first_failure = -1;
  r.frontier = FrontierOf(r);
  report->notes.push_back(
      std::to_string(passed) +
      " tensors beyond tolerance pass as inherited rounding: isolation finds no node that "
      "introduces their error and every graph output is within tolerance");
}

}  // namespace onnxprobe
