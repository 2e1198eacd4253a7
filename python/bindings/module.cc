// _onnxprobe: the library calls behind `import onnxprobe`, one per command. The GIL is released
// while the library works; results come back as JSON text (parsed by the Python layer, so a
// report equals the command line's JSON by construction) and numpy arrays.
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bindings.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/polygraphy.h"
#include "onnxprobe/command/capture_plan.h"
#include "onnxprobe/command/generate_plan.h"
#include "onnxprobe/command/options.h"
#include "onnxprobe/command/parse.h"
#include "onnxprobe/common/version.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/report/formats.h"
#include "onnxprobe/report/generate_report.h"
#include "onnxprobe/report/junit.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe::python {
namespace {

class CollectSink : public CaptureSink {
 public:
  Status Consume(CapturedTensor&& t) override {
    tensors.push_back(std::move(t));
    return Status::Ok();
  }
  std::vector<CapturedTensor> tensors;
};

// run()'s capture kept in memory, its options through the library's front door (the command
// line's parser and checks, command/capture_plan.h).
struct CapturePlanHandle {
  std::shared_ptr<const cmd::CapturePlan> plan;
};

CapturePlanHandle MakeCapturePlan(const std::vector<std::string>& positionals,
                                  const std::vector<std::pair<std::string, std::string>>& options,
                                  const py::dict& arrays, const std::string& default_ort_library) {
  std::vector<NamedTensor> tensors = InputArrays(arrays);
  std::optional<Expected<cmd::CapturePlan>> plan;
  {
    py::gil_scoped_release release;
    plan.emplace(cmd::PlanCapture(positionals, options, std::move(tensors), default_ort_library));
  }
  return {std::make_shared<const cmd::CapturePlan>(Unwrap(std::move(*plan)))};
}

// (captured [(name, array)] in topological order, inputs [(name, array)], skipped [reason])
py::tuple Run(const CapturePlanHandle& h) {
  const cmd::CapturePlan& plan = *h.plan;
  std::vector<NamedTensor> used;
  CollectSink sink;
  CaptureReport report;
  {
    py::gil_scoped_release release;
    Model model = Unwrap(Model::Load(plan.model));
    std::vector<std::string> names = Unwrap(SelectTensors(model, plan.selection));
    used = Unwrap(PrepareInputs(model, plan.inputs));
    std::shared_ptr<Backend> backend = Unwrap(LoadBackend(plan.ort_library));
    report = Unwrap(Capture(model, *backend, used, names, plan.capture, sink));
  }
  py::list captured, given;
  for (const auto& t : sink.tensors) {
    if (!t.tensor.empty() || t.skipped.empty())
      captured.append(py::make_tuple(t.name, ToNumpy(t.tensor)));
  }
  for (const auto& t : used) given.append(py::make_tuple(t.name, ToNumpy(t.tensor)));
  py::list skipped;
  for (const auto& s : report.skipped) skipped.append(s.ToString());
  return py::make_tuple(captured, given, skipped);
}

py::dict ImportPolygraphyOf(const std::string& results, const std::string& output,
                            const std::string& inputs, const std::string& model,
                            const std::string& runner, size_t iteration) {
  PolygraphyImportRequest req{results, inputs, runner, iteration, model, output};
  std::optional<Expected<PolygraphyImportReport>> r;
  {
    py::gil_scoped_release release;
    r.emplace(ImportPolygraphy(req));
  }
  PolygraphyImportReport rep = Unwrap(std::move(*r));
  py::dict d;
  d["runners"] = rep.runners;
  d["runner"] = rep.runner;
  d["iterations"] = rep.iterations;
  d["tensors"] = rep.tensors;
  d["inputs"] = rep.inputs;
  d["not_in_model"] = rep.not_in_model;
  return d;
}

struct ReportHandle {
  std::shared_ptr<const CompareReport> report;
};

ReportHandle RunCompare(const PlanHandle& plan, const py::object& on_progress) {
  CompareRequest request = plan.plan->request;
  PyProgress progress(on_progress);
  progress.Attach(&request);
  std::optional<Expected<CompareReport>> result;
  {
    py::gil_scoped_release release;
    result.emplace(Compare(request));
  }
  progress.Rethrow();
  return {std::make_shared<const CompareReport>(Unwrap(std::move(*result)))};
}

std::string Render(const ReportHandle& h, const Reporter& reporter) {
  py::gil_scoped_release release;
  return reporter.Render(*h.report);
}

// The report in one of compare's formats (report/formats.h), by name.
// JUnit's class name is side B's path, as the report holds it.
std::string RenderFormat(const ReportHandle& h, const std::string& format,
                         const std::string& detail) {
  const ReportSink* sink = Unwrap(FindCompareSink(format));
  RenderContext context;
  context.detail = DetailArg(detail);
  context.side_b = h.report->comparison.side_b.path;
  py::gil_scoped_release release;
  return sink->render(*h.report, context);
}

// Written atomically where the format's own output guard lets it go.
void WriteFormat(const ReportHandle& h, const std::string& format, const std::string& path,
                 const std::string& detail) {
  std::string text = RenderFormat(h, format, detail);
  py::gil_scoped_release release;
  Check(GuardOutput(path, format));
  Check(WriteOutputFile(path, text));
}

struct GenerateHandle {
  std::shared_ptr<const GenerateReport> report;
};

// generate()'s keywords as `onnxprobe generate`'s option occurrences, through the library's
// front door (command/generate_plan.h), then run.
GenerateHandle RunGenerate(const std::vector<std::string>& positionals,
                           const std::vector<std::pair<std::string, std::string>>& options,
                           const std::string& default_ort_library, const py::object& on_step) {
  std::optional<Expected<GenerateRequest>> planned;
  {
    py::gil_scoped_release release;
    planned.emplace(cmd::PlanGenerate(positionals, options, default_ort_library));
  }
  GenerateRequest request = Unwrap(std::move(*planned));
  // progress: the callable runs with the GIL held; an exception it raises stops the calls and
  // is raised again once the library returns (it never travels through the library)
  std::optional<py::error_already_set> raised;
  if (!on_step.is_none()) {
    request.on_step = [&on_step, &raised](const std::string& phase, int step) {
      py::gil_scoped_acquire gil;
      if (raised) return;
      try {
        on_step(phase, step);
      } catch (py::error_already_set& e) {
        raised.emplace(std::move(e));
      }
    };
  }
  std::optional<Expected<GenerateReport>> result;
  {
    py::gil_scoped_release release;
    result.emplace(CompareGeneration(request));
  }
  if (raised) throw std::move(*raised);
  return {std::make_shared<const GenerateReport>(Unwrap(std::move(*result)))};
}

}  // namespace
}  // namespace onnxprobe::python

PYBIND11_MODULE(_onnxprobe, m) {
  using namespace onnxprobe;          // NOLINT(google-build-using-namespace)
  using namespace onnxprobe::python;  // NOLINT(google-build-using-namespace)
  m.doc() = "onnxprobe's C++ core; use the onnxprobe package, not this module";
  RegisterErrorTranslator();
  m.attr("__version__") = Version();
  m.def("default_ort_library", &DefaultOrtLibraryPath,
        "ONNX Runtime library loaded when none is named: $ONNXPROBE_ORT_LIBRARY, else the build's");
  m.def("ort_library_for_version",
        [](const std::string& v) { return Unwrap(OrtLibraryForVersion(v)); });
  // --ort-lib, --ort-version and --platform as the command line resolves them (a runtime
  // locator: a library path, or "@<platform>@<library>" for a side on another CPU)
  m.def("resolve_runtime", [](const std::string& lib, const std::string& version,
                              const std::string& platform, const std::string& remote) {
    cmd::SessionFlags f;
    f.ort_lib = lib;
    f.ort_version = version;
    f.remote = remote;
    if (!platform.empty()) {
      Unwrap(ParsePlatform(platform));
      f.platform = platform;
    }
    return Unwrap(cmd::ResolveOrtLibrary(f));
  });
  // the command line's own parsers, so a keyword's bad value gets the flag's message
  m.def("parse_bytes", [](const std::string& v, const std::string& flag) {
    return Unwrap(cmd::ParseBytes(v, flag));
  });
  m.def("parse_int", [](const std::string& v, const std::string& what) {
    return Unwrap(cmd::ParseInt(v, what));
  });
  m.def("parse_tolerance", [](const std::string& v, const std::string& what) {
    return Unwrap(cmd::ParseTolerance(v, what));
  });
  m.def("capture_plan", &MakeCapturePlan, py::arg("positionals"), py::arg("options"),
        py::arg("arrays"), py::arg("default_ort_library"));
  py::class_<CapturePlanHandle>(m, "CapturePlan");
  m.def("run", &Run, py::arg("plan"));
  m.def("compare", &RunCompare, py::arg("plan"), py::arg("on_progress") = py::none());
  RegisterPlan(m);
  RegisterSamples(m);
  RegisterCommands(m);
  RegisterSweep(m);
  RegisterGuard(m);
  m.def("import_polygraphy", &ImportPolygraphyOf, py::arg("results"), py::arg("output"),
        py::arg("inputs"), py::arg("model"), py::arg("runner"), py::arg("iteration"));
  m.def("generate", &RunGenerate, py::arg("positionals"), py::arg("options"),
        py::arg("default_ort_library"), py::arg("on_step") = py::none());
  py::class_<GenerateHandle>(m, "GenerateReport")
      .def_property_readonly("passed", [](const GenerateHandle& h) { return h.report->passed(); })
      .def("render_json",
           [](const GenerateHandle& h) {
             py::gil_scoped_release release;
             return RenderGenerateJson(*h.report);
           })
      .def("render_html",
           [](const GenerateHandle& h) {
             py::gil_scoped_release release;
             return RenderGenerateHtml(*h.report);
           })
      .def(
          "render_console",
          [](const GenerateHandle& h, bool quiet) {
            ConsoleOptions o;
            o.quiet = quiet;
            py::gil_scoped_release release;
            return RenderGenerateConsole(*h.report, o);
          },
          py::arg("quiet") = false)
      .def("write_json",
           [](const GenerateHandle& h, const std::string& p) {
             py::gil_scoped_release release;
             Check(GuardOutput(p, "command-json"));
             Check(WriteGenerateJson(*h.report, p));
           })
      .def("write_html", [](const GenerateHandle& h, const std::string& p) {
        py::gil_scoped_release release;
        Check(GuardOutput(p, "generate-html"));
        Check(WriteGenerateHtml(*h.report, p));
      });
  py::class_<ReportHandle>(m, "CompareReport")
      .def_property_readonly("passed", [](const ReportHandle& h) { return h.report->passed(); })
      .def_property_readonly("aborted",
                             [](const ReportHandle& h) { return h.report->comparison.aborted; })
      .def_property_readonly("abort_code",
                             [](const ReportHandle& h) {
                               return ErrorCodeKey(h.report->comparison.abort_status.code());
                             })
      .def_property_readonly(
          "abort_message",
          [](const ReportHandle& h) { return h.report->comparison.abort_status.message(); })
      .def(
          "render_json",
          [](const ReportHandle& h, const std::string& detail) {
            return RenderFormat(h, "json", detail);
          },
          py::arg("detail") = "compact")
      .def("render", &RenderFormat, py::arg("format"), py::arg("detail") = "compact")
      .def("write", &WriteFormat, py::arg("format"), py::arg("path"), py::arg("detail") = "compact")
      .def_static("formats",
                  [] {
                    std::vector<std::string> names;
                    for (const auto& k : CompareSinks()) names.push_back(k.format);
                    return names;
                  })
      .def(
          "render_console",
          [](const ReportHandle& h, bool quiet) {
            ConsoleOptions o;
            o.quiet = quiet;
            return Render(h, *MakeConsoleReporter(o));
          },
          py::arg("quiet") = false);
}
