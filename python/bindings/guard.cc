// The output guard for what Python writes: as on the command line, an output replaces an
// existing file or folder only when it is an onnxprobe output of the same kind, and never one of
// the call's inputs (output_guard.h).
#include <pybind11/stl.h>

#include <map>

#include "bindings.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/report/formats.h"

namespace onnxprobe::python {
namespace {

const std::map<std::string, OutputKind>& Kinds() {
  static const std::map<std::string, OutputKind> kinds = {
      {"sweep-json", OutputKind::kSweepJson},
      {"command-json", OutputKind::kCommandJson},
      {"generate-html", OutputKind::kGenerateHtml},
      {"generation", OutputKind::kGeneration},
      {"repro-bundle", OutputKind::kReproBundle},
      {"baseline-check-json", OutputKind::kBaselineCheckJson},
  };
  return kinds;
}

}  // namespace

Status GuardOutput(const std::string& path, const std::string& kind,
                   const std::vector<std::string>& inputs) {
  // compare's formats bring their own artifact (report/formats.h)
  if (auto sink = FindCompareSink(kind); sink.ok())
    return CheckOutputTarget(path, (*sink)->artifact, inputs, false);
  auto k = Kinds().find(kind);
  if (k == Kinds().end()) return InvalidArgument("unknown output kind '" + kind + "'");
  return CheckOutputTarget(path, k->second, inputs, false);
}

void RegisterGuard(py::module_& m) {
  m.def(
      "guard_output",
      [](const std::string& path, const std::string& kind, const std::vector<std::string>& inputs) {
        Check(GuardOutput(path, kind, inputs));
      },
      py::arg("path"), py::arg("kind"), py::arg("inputs") = std::vector<std::string>());
}

}  // namespace onnxprobe::python
