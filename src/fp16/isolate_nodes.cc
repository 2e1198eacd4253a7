// Isolation in batches: one model holds many single float16 nodes, so a model with hundreds of
// nodes takes one session and one run. A batch the runtime rejects is split in halves until the
// node it rejects is alone; that node is then recorded and kept in float32.
#include <algorithm>
#include <optional>
#include <set>

#include "fp16/fp16_context.h"
#include "fp16/fp16_metrics.h"
#include "onnxprobe/common/budget_planner.h"

namespace onnxprobe {
namespace {

// got[offset + i] is the float16 result of iso.outputs[i], then of iso.storage[i] (the storage
// rounding alone) after them.
void Record(Fp16Context& cx, const Fp16IsolationModel& iso, const std::vector<RunOutput>& got,
            size_t offset) {
  auto error = [&](const Fp16IsolationModel::Output& o, size_t at) -> std::optional<PairError> {
    auto ref = cx.values.find(o.tensor);
    if (at >= got.size() || ref == cx.values.end() || got[at].tensor.empty()) return std::nullopt;
    return ComparePair(*ref->second, got[at].tensor, cx.req.atol, cx.req.rtol);
  };
  for (size_t i = 0; i < iso.outputs.size(); ++i) {
    auto e = error(iso.outputs[i], offset + i);
    if (!e) continue;
    Fp16NodeRow& row = cx.report->nodes[iso.outputs[i].node];
    row.isolated = true;
    row.isolated_error = std::max(row.isolated_error, e->rel_error);
    row.isolated_max_abs = std::max(row.isolated_max_abs, e->max_abs);
    row.overflow += e->nonfinite;
  }
  offset += iso.outputs.size();
  for (size_t i = 0; i < iso.storage.size(); ++i) {
    auto e = error(iso.storage[i], offset + i);
    if (!e) continue;
    Fp16NodeRow& row = cx.report->nodes[iso.storage[i].node];
    row.storage_error = std::max(row.storage_error, e->rel_error);
    row.storage_measured = true;
  }
}

std::vector<std::string> Fetched(const Fp16IsolationModel& iso) {
  std::vector<std::string> fetch = iso.captured;
  for (const auto& o : iso.outputs) fetch.push_back(o.graph_output);
  for (const auto& o : iso.storage) fetch.push_back(o.graph_output);
  return fetch;
}

Status RunBatch(Fp16Context& cx, const std::vector<int>& nodes) {
  Fp16Report& rep = *cx.report;
  auto fail = [&](const Status& why) -> Status {
    if (nodes.size() == 1) {
      rep.nodes[nodes[0]].runtime_error = why.message();
      return Status::Ok();
    }
    std::vector<int> lo(nodes.begin(), nodes.begin() + nodes.size() / 2);
    std::vector<int> hi(nodes.begin() + nodes.size() / 2, nodes.end());
    OP_RETURN_IF_ERROR(RunBatch(cx, lo));
    return RunBatch(cx, hi);
  };
  auto iso = BuildFp16IsolationModel(cx.model, nodes, cx.types);
  if (!iso.ok()) return fail(iso.status());
  std::string missing;
  auto feed = cx.Feed(iso->feeds, &missing);
  if (!missing.empty()) return fail(NotFound("no float32 value of '" + missing + "'"));
  auto session = cx.backend.CreateSession(iso->bytes, cx.model.dir(), cx.req.session);
  ++rep.sessions;
  if (!session.ok()) return fail(session.status());
  auto got = (*session)->Run(feed, Fetched(*iso));
  ++rep.model_runs;
  ++rep.isolation_runs;
  if (!got.ok()) return fail(got.status());
  Record(cx, *iso, *got, 0);
  for (int k : nodes) rep.nodes[k].isolated |= rep.nodes[k].runtime_error.empty();
  return Status::Ok();
}

}  // namespace

Status IsolateNodes(Fp16Context& cx) {
  std::vector<int> nodes;
  for (const NodeInfo& n : cx.model.index().nodes()) {
    if (cx.eligibility[n.topo_index] == Fp16Eligibility::kConvertible)
      nodes.push_back(n.topo_index);
  }
  auto outputs_of = [&](size_t k) {
    std::vector<HeldTensor> held;
    for (const auto& o : cx.model.index().nodes()[nodes[k]].outputs) {
      auto it = cx.values.find(o);
      // known sizes (the float32 run's values); an empty tensor holds nothing. A float output
      // is held twice: the node's float16 result and its storage copy's (Fp16IsolationModel)
      if (it != cx.values.end() && it->second->byte_size() > 0) {
        held.push_back({o, it->second->byte_size()});
        if (it->second->dtype() == DType::kFloat32)
          held.push_back({o + " (storage)", it->second->byte_size()});
      }
    }
    return held;
  };
  for (const auto& [begin, end] :
       PlanBatches(nodes.size(), outputs_of, cx.req.isolation_batch_bytes)) {
    OP_RETURN_IF_ERROR(RunBatch(cx, std::vector<int>(nodes.begin() + begin, nodes.begin() + end)));
  }
  return Status::Ok();
}

EmbeddedRun RunEmbedded(Fp16Context& cx, const std::vector<NamedTensor>& inputs) {
  EmbeddedRun run;
  run.inferred = InferTensorTypes(cx.model);
  for (const auto& t : inputs) run.inferred[t.name] = t.tensor.dtype();
  for (const NodeInfo& n : cx.model.index().nodes()) {  // every tensor typed, or no gain
    for (const auto* names : {&n.inputs, &n.outputs}) {
      for (const auto& x : *names) {
        if (!x.empty() && !run.inferred.count(x)) return run;
      }
    }
  }
  uint64_t bytes = 0;
  for (const auto& [name, b] : EstimateTensorBytes(cx.model, inputs)) bytes += b;
  if (bytes > cx.req.isolation_batch_bytes) return run;
  std::vector<Fp16Eligibility> elig = Fp16EligibilityOf(cx.model, run.inferred);
  std::vector<int> nodes;
  for (size_t k = 0; k < elig.size(); ++k) {
    if (elig[k] == Fp16Eligibility::kConvertible) nodes.push_back(static_cast<int>(k));
  }
  auto iso = BuildFp16IsolationModel(cx.model, nodes, run.inferred, true);
  if (!iso.ok()) return run;
  Fp16Report& rep = *cx.report;
  auto session = cx.backend.CreateSession(iso->bytes, cx.model.dir(), cx.req.session);
  ++rep.sessions;
  if (!session.ok()) return run;
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const auto& t : inputs) feed.emplace_back(t.name, &t.tensor);
  auto got = (*session)->Run(feed, Fetched(*iso));
  ++rep.model_runs;
  if (!got.ok()) return run;
  ++rep.isolation_runs;
  run.iso = std::move(*iso);
  run.outputs = std::move(*got);
  run.ok = true;
  return run;
}

bool RecordEmbedded(Fp16Context& cx, const EmbeddedRun& run) {
  for (const NodeInfo& n : cx.model.index().nodes()) {
    for (const auto* names : {&n.inputs, &n.outputs}) {
      for (const auto& x : *names) {
        if (x.empty()) continue;
        auto real = cx.types.find(x);
        auto planned = run.inferred.find(x);
        bool real_known = real != cx.types.end(), planned_known = planned != run.inferred.end();
        if (real_known != planned_known) return false;
        if (real_known && real->second != planned->second) return false;
      }
    }
  }
  Record(cx, run.iso, run.outputs, run.iso.captured.size());
  std::set<int> isolated;
  for (const auto& o : run.iso.outputs) isolated.insert(o.node);
  for (int k : isolated) cx.report->nodes[k].isolated = true;
  return true;
}

}  // namespace onnxprobe
