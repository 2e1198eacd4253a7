// Batched capture: tensors are grouped, in topological order, into runs whose captured bytes fit
// the memory budget; each run marks its group as graph outputs and streams results to the sink.
#include "onnxprobe/capture/capture.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "onnxprobe/common/budget_planner.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

std::vector<std::pair<std::string, const Tensor*>> InputRefs(const std::vector<NamedTensor>& in) {
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& nt : in) refs.emplace_back(nt.name, &nt.tensor);
  return refs;
}

ObserverDifference Difference(const std::string& name, const Tensor& a, const Tensor& b) {
  ObserverDifference d;
  d.name = name;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    d.layout_differs = true;
    d.layout = DTypeName(a.dtype()) + ShapeToString(a.shape()) + " vs " + DTypeName(b.dtype()) +
               ShapeToString(b.shape());
    return d;
  }
  d.elements = a.num_elements();
  const size_t size = DTypeSize(a.dtype());
  const auto* pa = static_cast<const unsigned char*>(a.data());
  const auto* pb = static_cast<const unsigned char*>(b.data());
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    if (std::memcmp(pa + i * size, pb + i * size, size) == 0) continue;
    ++d.differing;  // -0 vs +0 or NaN payloads count here with a magnitude of 0
    double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    double ad = std::fabs(y - x);
    if (std::isnan(ad)) ad = INFINITY;
    d.max_abs = std::max(d.max_abs, ad);
    if (x != 0) d.max_rel = std::max(d.max_rel, ad / std::fabs(x));
  }
  return d;
}

}  // namespace

Expected<CaptureReport> Capture(const Model& model, Backend& backend,
                                const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& requested,
                                const CaptureOptions& options, CaptureSink& sink,
                                const ProgressFn& progress) {
  CaptureReport report;
  const GraphIndex& idx = model.index();
  std::vector<std::string> graph_outputs;
  for (const auto& o : model.summary().outputs) graph_outputs.push_back(o.name);
  // under a memory budget, allocations that are freed when done keep the peak near what is alive
  SessionOptions session_options = options.session;
  session_options.low_memory = session_options.low_memory || options.max_memory > 0;

  // with optimizations on, only what the optimized graph keeps: marking more blocks fusions
  std::vector<std::string> tensors = requested;
  std::unique_ptr<BackendSession> made;  // the one run's session, made while confirming
  std::set<std::string> made_outputs;
  if (options.session.optimization_level > OptLevel::kDisabled && !options.mark_fused_tensors) {
    // without a budget every tensor is captured in one run: its session, made now, confirms the
    // blocked-layout tensors by its own graph
    OP_ASSIGN_OR_RETURN(
        KeptTensors k,
        KeptForCapture(model, backend, options.session, options.max_memory, requested,
                       options.max_memory == 0 ? &session_options : nullptr));
    tensors.clear();
    for (const auto& n : requested) (k.kept.count(n) ? tensors : report.fused).push_back(n);
    made = std::move(k.session);
    if (made != nullptr) made_outputs = std::move(k.kept);
  }

  // on a provider other than CPU, values fixed by the model alone are not marked: compiling
  // providers fold them and cannot expose them (OpenVINO 1.24: ONNX Runtime rejects a graph with
  // a Constant's output marked, and an Identity of a weight marked comes back as zeros)
  if (!IsCpuProvider(options.session.provider)) {
    std::set<std::string> fixed = TensorsFixedByModel(model.index());
    std::vector<std::string> kept;
    for (const auto& n : tensors) {
      bool output = std::find(graph_outputs.begin(), graph_outputs.end(), n) != graph_outputs.end();
      if (!output && fixed.count(n)) {
        report.skipped.push_back({n,
                                  {SkipKind::kFixedByModel,
                                   "fixed by the model alone (constants, copies of weights), "
                                   "not captured on " +
                                       FullProviderName(options.session.provider)}});
      } else {
        kept.push_back(n);
      }
    }
    tensors = std::move(kept);
  }

  // plan batches
  std::map<std::string, uint64_t> sizes;
  uint64_t known_max = 0;
  if (options.max_memory > 0) {
    sizes = EstimateTensorBytes(model, inputs);
    for (const auto& [n, b] : sizes) known_max = std::max(known_max, b);
  }
  for (const auto& name : tensors) {
    auto it = sizes.find(name);
    if (it == sizes.end()) ++report.unknown_sizes;
    report.estimated_bytes += it != sizes.end() ? it->second : known_max;
  }
  std::vector<std::vector<std::string>> batches =
      PlanNameBatches(tensors, sizes, options.max_memory);
  if (batches.empty()) batches.emplace_back();  // no tensor: one run for the graph outputs

  auto refs = InputRefs(inputs);
  std::vector<std::pair<std::string, Tensor>>
      observed_outputs;  // graph outputs seen while capturing
  size_t done = 0;
  for (std::vector<std::string> batch : batches) {
    std::unique_ptr<BackendSession> session;
    bool covered = std::all_of(batch.begin(), batch.end(),
                               [&](const std::string& n) { return made_outputs.count(n) > 0; });
    if (made != nullptr && covered) {
      session = std::move(made);
    } else {
      made.reset();
      auto opened = OpenMarkedSession(model, backend, batch, session_options);
      if (!opened.ok() && !IsCpuProvider(options.session.provider)) {
        // a provider that cannot give some of them: the rest are captured, those said
        std::vector<std::string> inner;
        for (const auto& n : batch)
          if (std::find(graph_outputs.begin(), graph_outputs.end(), n) == graph_outputs.end())
            inner.push_back(n);
        OP_ASSIGN_OR_RETURN(
            auto refused,
            TensorsBreakingCompilation(model, backend, inner, session_options, opened.status()));
        std::string why = DescribeUnmarkable(refused, inner.size(), options.session.provider);
        for (const auto& n : refused) {
          report.skipped.push_back({n, {SkipKind::kBreaksCompilation, why}});
          batch.erase(std::find(batch.begin(), batch.end(), n));
        }
        opened = OpenMarkedSession(model, backend, batch, session_options);
      }
      OP_ASSIGN_OR_RETURN(session, std::move(opened));
    }
    std::vector<std::string> fetch = batch;
    for (const auto& o : graph_outputs) {
      if (std::find(fetch.begin(), fetch.end(), o) == fetch.end()) fetch.push_back(o);
    }
    auto ran = session->Run(refs, fetch);
    if (!ran.ok()) return ran.status().WithContext(model.path());
    auto results = std::move(*ran);
    ++report.runs;
    session.reset();
    if (report.runs == 1) {
      for (const auto& r : results) {
        if (std::find(graph_outputs.begin(), graph_outputs.end(), r.name) != graph_outputs.end()) {
          observed_outputs.emplace_back(r.name, r.tensor);
        }
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      RunOutput& r = results[i];
      const TensorEntry* t = idx.Find(r.name);
      CapturedTensor c;
      c.name = r.name;
      if (t != nullptr && t->producer >= 0) {
        const NodeInfo& node = idx.nodes()[t->producer];
        c.topo_index = node.topo_index;
        c.node_name = node.name;
        c.op_type = node.op_type;
      }
      c.tensor = std::move(r.tensor);
      c.skipped = r.skipped;
      if (!c.skipped.empty()) {
        report.skipped.push_back({c.name, c.skipped});
      } else {
        ++report.captured;
      }
      r = RunOutput();
      OP_RETURN_IF_ERROR(sink.Consume(std::move(c)));
      ++done;
      if (progress) progress(done, tensors.size());
    }
  }

  if (options.check_observer) {
    // the same model with no extra outputs: its graph outputs must be bit-identical
    OP_ASSIGN_OR_RETURN(auto session, OpenMarkedSession(model, backend, {}, session_options));
    OP_ASSIGN_OR_RETURN(auto plain, session->Run(refs, graph_outputs));
    report.observer_checked = true;
    for (size_t i = 0; i < plain.size(); ++i) {
      const Tensor* seen = nullptr;
      for (const auto& [n, t] : observed_outputs) {
        if (n == plain[i].name) seen = &t;
      }
      if (seen == nullptr || plain[i].tensor.empty() || seen->empty()) continue;
      if (!plain[i].tensor.BitwiseEqual(*seen)) {
        report.observer_differences.push_back(Difference(plain[i].name, plain[i].tensor, *seen));
      }
    }
    report.observer_identical = report.observer_differences.empty();
  }
  return report;
}

}  // namespace onnxprobe
