// compare()'s one front door: the Python package's keywords arrive as the command line's option
// occurrences and become a typed plan through the library's own parser and checks
// (onnxprobe/command/compare_plan.h), so a bad value raises the command line's message. Arrays
// and a rename dict, which the command line names as files, travel as values.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>

#include "bindings.h"
#include "onnxprobe/command/compare_plan.h"

namespace onnxprobe::python {
namespace {

PlanHandle MakePlan(const std::vector<std::string>& positionals,
                    const std::vector<std::pair<std::string, std::string>>& options,
                    const py::dict& tensors, const std::map<std::string, std::string>& rename,
                    const std::string& default_ort_library) {
  cmd::CompareValues values;
  values.rename = rename;
  values.default_ort_library = default_ort_library;
  values.tensors = InputArrays(tensors);
  std::optional<Expected<cmd::ComparePlan>> plan;
  {
    py::gil_scoped_release release;
    plan.emplace(cmd::PlanCompare(positionals, options, std::move(values)));
  }
  return {std::make_shared<const cmd::ComparePlan>(Unwrap(std::move(*plan)))};
}

}  // namespace

void RegisterPlan(py::module_& m) {
  m.def("compare_plan", &MakePlan, py::arg("positionals"), py::arg("options"), py::arg("tensors"),
        py::arg("rename"), py::arg("default_ort_library"));
  py::class_<PlanHandle>(m, "ComparePlan")
      // "sweep", "samples" or "one": which of compare_sweep, compare_samples, compare runs it
      .def_property_readonly("kind", [](const PlanHandle& h) {
        return !h.plan->sweep.empty() ? "sweep" : h.plan->samples_given() ? "samples" : "one";
      });
}

}  // namespace onnxprobe::python
