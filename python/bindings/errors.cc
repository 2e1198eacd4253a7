// Library errors become Python exceptions: one class per ErrorCode (onnxprobe/_errors.py), the
// message on one line as the command line prints it.
#include "bindings.h"

namespace onnxprobe::python {

const char* ErrorCodeKey(ErrorCode c) {
  switch (c) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid-argument";
    case ErrorCode::kNotFound:
      return "not-found";
    case ErrorCode::kIoError:
      return "io-error";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kBackend:
      return "backend";
    case ErrorCode::kResourceExhausted:
      return "resource-exhausted";
  }
  return "unknown";
}

void RegisterErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      std::string m = e.status().message();
      for (char& c : m) {
        if (c == '\n' || c == '\r') c = ' ';
      }
      while (!m.empty() && m.back() == ' ') m.pop_back();
      py::object cls = py::module_::import("onnxprobe._errors")
                           .attr("error_class")(ErrorCodeKey(e.status().code()));
      PyErr_SetObject(cls.ptr(), py::str(m).ptr());
    }
  });
}

ReportDetail DetailArg(const std::string& text) {
  ReportDetail d;
  if (!ParseReportDetail(text, &d))
    throw StatusError(InvalidArgument("bad detail '" + text + "' (compact or full)"));
  return d;
}

}  // namespace onnxprobe::python
