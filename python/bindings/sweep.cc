// compare(sweep=...): a comparison repeated over values of symbolic input dimensions.
#include "onnxprobe/pipeline/sweep.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings.h"
#include "onnxprobe/report/sweep_report.h"

namespace onnxprobe::python {
namespace {

struct SweepHandle {
  std::shared_ptr<const SweepReport> report;
};

SweepHandle RunSweep(const PlanHandle& plan, const py::object& on_progress) {
  SweepRequest request{plan.plan->request, plan.plan->sweep};
  PyProgress progress(on_progress);
  progress.Attach(&request.compare);
  std::optional<Expected<SweepReport>> result;
  {
    py::gil_scoped_release release;
    result.emplace(CompareSweep(request));
  }
  progress.Rethrow();
  return {std::make_shared<const SweepReport>(Unwrap(std::move(*result)))};
}

}  // namespace

void RegisterSweep(py::module_& m) {
  m.def("compare_sweep", &RunSweep, py::arg("plan"), py::arg("on_progress") = py::none());
  py::class_<SweepHandle>(m, "SweepReport")
      .def_property_readonly("passed", [](const SweepHandle& h) { return h.report->passed(); })
      .def_property_readonly("failed_points",
                             [](const SweepHandle& h) { return h.report->failed_points; })
      .def("render_json",
           [](const SweepHandle& h) {
             py::gil_scoped_release release;
             return RenderSweepJson(*h.report);
           })
      .def("render_console",
           [](const SweepHandle& h) {
             py::gil_scoped_release release;
             return RenderSweepText(*h.report);
           })
      .def("write_json", [](const SweepHandle& h, const std::string& path) {
        py::gil_scoped_release release;
        Check(GuardOutput(path, "sweep-json"));
        Check(WriteSweepJson(*h.report, path));
      });
}

}  // namespace onnxprobe::python
