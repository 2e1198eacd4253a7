// AnalyzeFp16: one float32 run captures every tensor; each tensor is measured for float16, each
// convertible node is isolated in float16, and the block list is searched.
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "fp16/fp16_context.h"
#include "fp16/fp16_metrics.h"
#include "onnxprobe/backend/platform.h"

namespace onnxprobe {

const char* Fp16BlockReasonName(Fp16BlockReason r) {
  switch (r) {
    case Fp16BlockReason::kRequested:
      return "requested";
    case Fp16BlockReason::kRuntimeRejects:
      return "runtime rejects float16";
    case Fp16BlockReason::kOverflow:
      return "overflow";
    case Fp16BlockReason::kInputOverflow:
      return "input overflow";
    case Fp16BlockReason::kError:
      return "error";
    case Fp16BlockReason::kFeedsSensitive:
      return "feeds an input-sensitive node";
  }
  return "?";
}

bool LosesMoreThanFp16Storage(const Fp16NodeRow& row) {
  // isolated = storage (+) the kernel's own rounding; twice the storage error means the kernel's
  // part exceeds the unavoidable part (sqrt(3) times it when the two add in quadrature)
  return row.isolated && row.storage_measured && row.runtime_error.empty() &&
         row.isolated_error > 2 * row.storage_error;
}

Expected<Fp16Report> AnalyzeFp16(const Fp16Request& req) {
  auto start = std::chrono::steady_clock::now();
  if (!(req.atol >= 0) || !(req.rtol >= 0) || !(req.atol_scale >= 0)) {
    return InvalidArgument("tolerances must be >= 0, got atol " + std::to_string(req.atol) +
                           ", atol scale " + std::to_string(req.atol_scale) + ", rtol " +
                           std::to_string(req.rtol));
  }
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  Fp16Report rep;
  rep.model = req.model;
  rep.runtime = RuntimeLabel(*backend);
  rep.atol = req.atol;
  rep.atol_scale = req.atol_scale;
  rep.rtol = req.rtol;
  rep.max_blocked = req.max_blocked;
  OP_ASSIGN_OR_RETURN(rep.inputs, PrepareInputs(model, req.inputs));
  const GraphIndex& idx = model.index();

  Fp16Context cx{req, model, *backend, {}, {}, {}, {}, &rep};
  for (const std::string& name : req.keep_fp32) {
    bool found = false;
    for (const NodeInfo& n : idx.nodes()) {
      if (n.name == name) {
        cx.keep.insert(n.topo_index);
        found = true;
      }
    }
    if (!found) return NotFound(req.model + ": no node named '" + name + "' to keep in float32");
  }

  // The float32 reference (every node output), with the isolation in the same run when the
  // types are known before running; otherwise a capture run here and isolation runs below.
  std::vector<std::string> names = idx.CapturableTensors();
  EmbeddedRun embedded = RunEmbedded(cx, rep.inputs);
  std::unique_ptr<CaptureSession> capture;
  const std::vector<RunOutput>* captured = &embedded.outputs;
  if (!embedded.ok) {
    OP_ASSIGN_OR_RETURN(capture, CaptureSession::Create(model, *backend, names, req.session));
    ++rep.sessions;
    OP_RETURN_IF_ERROR(capture->Run(rep.inputs));
    ++rep.model_runs;
    captured = &capture->outputs();
  }
  for (const auto& t : rep.inputs) {
    cx.values[t.name] = &t.tensor;
    cx.types[t.name] = t.tensor.dtype();
  }
  for (const auto& init : model.summary().initializers) {
    auto dt = DTypeFromOnnx(init.elem_type);
    if (dt.ok()) cx.types[init.name] = *dt;
  }
  size_t n_captured = embedded.ok ? embedded.iso.captured.size() : captured->size();
  for (size_t i = 0; i < n_captured && i < captured->size(); ++i) {
    const RunOutput& o = (*captured)[i];
    if (o.tensor.empty()) continue;
    cx.values[o.name] = &o.tensor;
    cx.types[o.name] = o.tensor.dtype();
  }

  // What float16 does to each float32 tensor.
  std::unordered_map<std::string, uint64_t> overflow_of;
  auto measure = [&](const std::string& name, const Tensor& t, int producer) {
    if (t.dtype() != DType::kFloat32) return;
    Fp16TensorRow row;
    row.name = name;
    if (producer >= 0) {
      row.node = idx.nodes()[producer].name;
      row.op_type = idx.nodes()[producer].op_type;
      row.topo_index = producer;
    }
    MeasureFp16(t, &row);
    overflow_of[name] = row.overflow;
    rep.tensors.push_back(std::move(row));
  };
  for (const auto& t : rep.inputs) measure(t.name, t.tensor, -1);
  for (const auto& name : names) {
    auto it = cx.values.find(name);
    const TensorEntry* e = idx.Find(name);
    if (it != cx.values.end() && e != nullptr) measure(name, *it->second, e->producer);
  }

  for (const auto& o : model.summary().outputs) {
    auto it = cx.values.find(o.name);
    double range = 0;
    if (it != cx.values.end() && it->second->dtype() == DType::kFloat32) {
      Fp16TensorRow m;
      MeasureFp16(*it->second, &m);
      range = m.max_abs;
    }
    rep.output_atol.emplace_back(o.name, req.atol + req.atol_scale * range);
  }
  cx.eligibility = Fp16EligibilityOf(model, cx.types);
  rep.node_count = idx.nodes().size();
  for (const NodeInfo& n : idx.nodes()) {
    Fp16NodeRow row;
    row.node = n.name;
    row.op_type = n.op_type;
    row.topo_index = n.topo_index;
    row.eligibility = cx.eligibility[n.topo_index];
    if (row.eligibility == Fp16Eligibility::kConvertible) ++rep.convertible;
    for (const auto& x : n.inputs) {
      auto it = overflow_of.find(x);
      if (it != overflow_of.end()) row.input_overflow += it->second;
    }
    rep.nodes.push_back(std::move(row));
  }
  if (!embedded.ok || !RecordEmbedded(cx, embedded)) OP_RETURN_IF_ERROR(IsolateNodes(cx));
  OP_RETURN_IF_ERROR(SearchBlockList(cx));

  // Ranked for the report: overflow first, then isolated error; nodes not converted last.
  std::stable_sort(rep.nodes.begin(), rep.nodes.end(),
                   [](const Fp16NodeRow& x, const Fp16NodeRow& y) {
                     bool cx_ = x.eligibility == Fp16Eligibility::kConvertible;
                     bool cy_ = y.eligibility == Fp16Eligibility::kConvertible;
                     if (cx_ != cy_) return cx_;
                     bool ox = x.overflow > 0 || x.input_overflow > 0;
                     bool oy = y.overflow > 0 || y.input_overflow > 0;
                     if (ox != oy) return ox;
                     return x.isolated_error > y.isolated_error;
                   });
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace onnxprobe
