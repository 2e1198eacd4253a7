// Requests of run and generate from the plain dicts onnxprobe/_request.py builds (compare's
// comes through its front door, plan.cc): names and values as the Python
// API takes them, converted field by field. Absent keys and None keep the library's defaults.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "onnxprobe/pipeline/options.h"

namespace onnxprobe::python {
namespace {

template <typename T>
bool Get(const py::dict& d, const char* key, T* out) {
  if (!d.contains(key)) return false;
  py::object v = d[key];
  if (v.is_none()) return false;
  *out = v.cast<T>();
  return true;
}

py::dict SubDict(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return py::dict();
  return d[key].cast<py::dict>();
}

Expected<SideRequest> SideFromDict(const py::dict& d) {
  SideRequest s;
  Get(d, "path", &s.path);
  OP_ASSIGN_OR_RETURN(s.session, SessionFromDict(SubDict(d, "session")));
  Get(d, "session_given", &s.session_given);
  Get(d, "ort_library", &s.ort_library);
  return s;
}

Expected<TolerancePolicy> PolicyFromDict(const py::dict& d) {
  TolerancePolicy p;
  Get(d, "atol", &p.global.atol);
  Get(d, "rtol", &p.global.rtol);
  Get(d, "scale_atol", &p.global.scale_atol);
  Get(d, "rel_eps", &p.rel_eps);
  std::string judge;
  if (Get(d, "judge", &judge)) {
    OP_ASSIGN_OR_RETURN(p.judge, ParseJudgeBy(judge));
  }
  if (d.contains("rules") && !d["rules"].is_none()) {
    for (py::handle r : d["rules"]) {
      auto t = r.cast<py::tuple>();
      ToleranceRule rule;
      rule.pattern = t[0].cast<std::string>();
      rule.by_op_type = t[1].cast<bool>();
      rule.tolerance.atol = t[2].cast<double>();
      rule.tolerance.rtol = t[3].cast<double>();
      rule.tolerance.scale_atol = p.global.scale_atol;
      p.rules.push_back(rule);
    }
  }
  return p;
}

// "quant" ("auto"/"off") and "quant_min_sqnr" (dB)
Status QuantFromDict(const py::dict& d, QuantOptions* q) {
  std::string quant;
  if (Get(d, "quant", &quant)) {
    auto m = ParseQuantMode(quant);
    if (!m.ok()) return InvalidArgument("quant " + m.status().message());
    q->mode = *m;
  }
  Get(d, "quant_min_sqnr", &q->min_sqnr_db);
  return Status::Ok();
}

Status SetCandidates(const std::string& isolate, bool* localize, LocalizeOptions* options) {
  auto c = ParseIsolate(isolate);
  if (!c.ok()) return InvalidArgument("isolate " + c.status().message());
  *localize = c->isolate;
  options->candidates = c->candidates;
  return Status::Ok();
}

}  // namespace

Expected<SessionOptions> SessionFromDict(const py::dict& d) {
  SessionOptions s;
  Get(d, "provider", &s.provider);
  Get(d, "provider_options", &s.provider_options);
  std::string level;
  if (Get(d, "opt_level", &level)) {
    OP_ASSIGN_OR_RETURN(s.optimization_level, ParseOptLevelName(level));
  }
  Get(d, "intra_threads", &s.intra_op_threads);
  Get(d, "inter_threads", &s.inter_op_threads);
  bool parallel = false;
  if (Get(d, "parallel", &parallel)) s.sequential = !parallel;
  Get(d, "custom_op_libraries", &s.custom_op_libraries);
  Get(d, "allow_fallback", &s.allow_fallback);
  Get(d, "session_config", &s.config_entries);
  return s;
}

Expected<GenerateRequest> GenerateRequestFromDict(const py::dict& d) {
  GenerateRequest r;
  auto side = [](const py::dict& sd, GenerateSide* out) -> Status {
    OP_ASSIGN_OR_RETURN(SideRequest s, SideFromDict(sd));
    out->path = s.path;
    out->session = s.session;
    out->ort_library = s.ort_library;
    Get(sd, "io", &out->io);
    return Status::Ok();
  };
  OP_RETURN_IF_ERROR(side(SubDict(d, "a"), &r.a));
  OP_RETURN_IF_ERROR(side(SubDict(d, "b"), &r.b));
  Get(d, "save_a", &r.save_a);
  Get(d, "prompt", &r.prompt);
  Get(d, "prompt_length", &r.prompt_length);
  Get(d, "pad_left", &r.pad_left);
  Get(d, "pad_id", &r.pad_id);
  Get(d, "seed", &r.seed);
  Get(d, "steps", &r.steps);
  Get(d, "top_k", &r.top_k);
  OP_RETURN_IF_ERROR(QuantFromDict(d, &r.quant));
  Get(d, "max_memory", &r.job.max_memory);
  OP_ASSIGN_OR_RETURN(r.job.policy, PolicyFromDict(SubDict(d, "policy")));
  std::string isolate;
  if (Get(d, "isolate", &isolate))
    OP_RETURN_IF_ERROR(SetCandidates(isolate, &r.localize, &r.localize_options));
  return r;
}

}  // namespace onnxprobe::python
