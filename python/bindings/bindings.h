// Shared pieces of the _onnxprobe extension module: library errors as Python exceptions,
// tensors as numpy arrays, progress callables. Requests come through the library's front doors
// (onnxprobe/command/*_plan.h) from the command line's options. Nothing here decides: it
// converts.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/command/command.h"
#include "onnxprobe/command/compare_plan.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/generate/generate.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/report/report.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe::python {

namespace py = pybind11;

// A library error on its way to Python, where it becomes the exception class of its code
// (onnxprobe/_errors.py) carrying the message on one line, as the command line prints it.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status s) : status_(std::move(s)) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return status_.message().c_str(); }

 private:
  Status status_;
};

// "invalid-argument", "not-found", ...: the key of the Python exception class.
const char* ErrorCodeKey(ErrorCode c);
void RegisterErrorTranslator();

inline void Check(const Status& s) {
  if (!s.ok()) throw StatusError(s);
}
// "compact" or "full" (report.h ReportDetail); anything else is InvalidArgument.
ReportDetail DetailArg(const std::string& text);
template <typename T>
T Unwrap(Expected<T>&& e) {
  if (!e.ok()) throw StatusError(e.status());
  return std::move(e).value();
}

// A numpy array over the tensor's buffer (no copy; the array keeps the buffer alive). bfloat16,
// which numpy lacks, becomes a float32 copy, as in dumps.
py::array ToNumpy(const Tensor& t);
// A tensor over an array's memory (no copy when it is C-contiguous, aligned and native-endian;
// the tensor keeps the array alive). Fails naming `what` on a dtype onnxprobe cannot hold.
Expected<Tensor> FromNumpy(py::handle obj, const std::string& what);
// {input name: array} as the inputs' tensors (FromNumpy each, named "input '<name>'").
std::vector<NamedTensor> InputArrays(const py::dict& arrays);

// A Python progress callable on the library's callbacks, called with the GIL held as
// (phase, done, total): ("compare", rows done, rows), ("isolate", runs, 0), ("sample", samples
// done, samples). An exception it raises stops further calls, stops a comparison over samples
// before its next sample, and is raised again by Rethrow() once the library returns (it never
// travels through the library).
class PyProgress {
 public:
  explicit PyProgress(py::object fn) : fn_(std::move(fn)) {}
  bool active() const { return !fn_.is_none(); }
  // False once the callable has raised: a loop that can stop (the samples) stops there.
  bool operator()(const char* phase, size_t done, size_t total) {
    py::gil_scoped_acquire gil;
    if (raised_) return false;
    try {
      fn_(phase, done, total);
    } catch (py::error_already_set& e) {
      raised_.emplace(std::move(e));
      stopped_ = true;
    }
    return !raised_;
  }
  // The comparison's row and isolation callbacks report here, and once the callable has raised
  // the comparison stops before its next batch or isolated run (the request must not outlive
  // this).
  void Attach(CompareRequest* req) {
    if (!active()) return;
    req->on_row = [this](const TensorResult&, size_t d, size_t t) {
      (*this)(cmd::PhaseName(cmd::Phase::kCompare), d, t);
    };
    req->localize_options.on_run = [this](size_t runs) {
      (*this)(cmd::PhaseName(cmd::Phase::kIsolate), runs, 0);
    };
    req->job.stop = [this] { return stopped_.load(); };
  }
  void Rethrow() {
    if (raised_) throw std::move(*raised_);
  }

 private:
  py::object fn_;
  std::optional<py::error_already_set> raised_;
  std::atomic<bool> stopped_{false};  // read without the GIL by the library's stop check
};

// compare()'s request: the command line's options through the library's parser (plan.cc). The
// runners (compare, compare_samples, compare_sweep) take it.
struct PlanHandle {
  std::shared_ptr<const cmd::ComparePlan> plan;
};
void RegisterPlan(py::module_& m);
// compare over samples, merge of shards (samples.cc)
void RegisterSamples(py::module_& m);
// The output guard (guard.cc): Ok when `path` may be written as `kind` (a compare report format,
// "json", "html", "junit", ...: report/formats.h; or "sweep-json", "command-json", ...:
// output_guard.h), never over one of `inputs`. guard_output() for Python.
Status GuardOutput(const std::string& path, const std::string& kind,
                   const std::vector<std::string>& inputs = {});
void RegisterGuard(py::module_& m);
// compare_sweep() (sweep.cc)
void RegisterSweep(py::module_& m);
// command_tables() and run_command(): the library commands (commands.cc).
void RegisterCommands(py::module_& m);

}  // namespace onnxprobe::python
