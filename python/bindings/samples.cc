// Comparisons over input samples (compare --inputs DIR / --samples N, one shard of them with
// --shard I/N) and the merge of shards' reports (onnxprobe merge), for `import onnxprobe`.
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/pipeline/sample_compare.h"
#include "onnxprobe/report/merge.h"
#include "onnxprobe/report/sample_report.h"

namespace onnxprobe::python {
namespace {

struct SamplesHandle {
  std::shared_ptr<const SamplesCompareReport> report;
};

SamplesHandle RunCompareSamples(const PlanHandle& plan, const py::object& on_progress) {
  CompareRequest req = plan.plan->request;
  PyProgress progress(on_progress);
  progress.Attach(&req);
  SampleCallback on_sample;
  if (progress.active()) {
    on_sample = [&progress](size_t done, size_t total, const std::string&) {
      return progress(cmd::PhaseName(cmd::Phase::kSample), done, total);
    };
  }
  std::optional<Expected<SamplesCompareReport>> result;
  {
    py::gil_scoped_release release;
    auto samples = cmd::PlanSamples(*plan.plan);
    if (!samples.ok()) {
      result.emplace(samples.status());
    } else {
      result.emplace(CompareSamples(req, *samples, plan.plan->shard, on_sample));
    }
  }
  progress.Rethrow();
  return {std::make_shared<const SamplesCompareReport>(Unwrap(std::move(*result)))};
}

struct MergedHandle {
  std::shared_ptr<const MergedSamples> merged;
};

// [(name, json text)] -> the merged report
MergedHandle Merge(const std::vector<std::pair<std::string, std::string>>& shards) {
  std::vector<ShardReport> reports;
  for (const auto& [name, json] : shards) reports.push_back({name, json});
  std::optional<Expected<MergedSamples>> merged;
  {
    py::gil_scoped_release release;
    merged.emplace(MergeSampleShards(reports));
  }
  return {std::make_shared<const MergedSamples>(Unwrap(std::move(*merged)))};
}

// How many samples a comparison over `inputs_dir` and/or `count` seeded ones runs.
size_t CountSamples(const std::string& inputs_dir, size_t count) {
  SampleOptions so;  // the list names files and seeds: no sample is read
  so.inputs_dir = inputs_dir;
  so.count = count;
  py::gil_scoped_release release;
  return Unwrap(ListInputSamples(so)).size();
}

}  // namespace

void RegisterSamples(py::module_& m) {
  m.def("count_samples", &CountSamples, py::arg("inputs_dir"), py::arg("count"));
  m.def("compare_samples", &RunCompareSamples, py::arg("plan"),
        py::arg("on_progress") = py::none());
  m.def("merge_shards", &Merge, py::arg("shards"));
  m.def("write_json_output", [](const std::string& path, const std::string& text) {
    py::gil_scoped_release release;
    Check(WriteJsonOutput(path, text));
  });
  py::class_<SamplesHandle>(m, "SamplesReport")
      .def_property_readonly("passed", [](const SamplesHandle& h) { return h.report->passed(); })
      .def_property_readonly("aborted", [](const SamplesHandle& h) { return h.report->aborted; })
      .def_property_readonly(
          "abort_code",
          [](const SamplesHandle& h) { return ErrorCodeKey(h.report->abort_status.code()); })
      .def_property_readonly(
          "abort_message", [](const SamplesHandle& h) { return h.report->abort_status.message(); })
      .def_property_readonly("samples",
                             [](const SamplesHandle& h) { return h.report->samples.size(); })
      .def_property_readonly("failed_samples",
                             [](const SamplesHandle& h) { return h.report->failed_samples; })
      .def_property_readonly("total_samples",
                             [](const SamplesHandle& h) { return h.report->total_samples; })
      .def(
          "render_json",
          [](const SamplesHandle& h, const std::string& detail) {
            ReportDetail d = DetailArg(detail);
            py::gil_scoped_release release;
            return RenderSamplesJson(*h.report, d);
          },
          py::arg("detail") = "compact")
      .def("render_console",
           [](const SamplesHandle& h) {
             py::gil_scoped_release release;
             return RenderSamplesConsole(*h.report);
           })
      .def(
          "write_json",
          [](const SamplesHandle& h, const std::string& p, const std::string& detail) {
            ReportDetail d = DetailArg(detail);
            py::gil_scoped_release release;
            Check(GuardOutput(p, "json"));
            Check(WriteSamplesJson(*h.report, p, d));
          },
          py::arg("path"), py::arg("detail") = "compact");
  py::class_<MergedHandle>(m, "MergedSamples")
      .def_property_readonly("passed", [](const MergedHandle& h) { return h.merged->passed; })
      .def_property_readonly("aborted", [](const MergedHandle& h) { return h.merged->aborted; })
      .def_property_readonly("shards", [](const MergedHandle& h) { return h.merged->shards; })
      .def_property_readonly("samples", [](const MergedHandle& h) { return h.merged->samples; })
      .def_property_readonly("failed_samples",
                             [](const MergedHandle& h) { return h.merged->failed_samples; })
      .def("render_json", [](const MergedHandle& h) { return h.merged->json; });
}

}  // namespace onnxprobe::python
