// The crashing-node search: prefixes of the fetched nodes re-run in fresh workers.
#include "side/crash_search.h"

#include <set>

#include "onnxprobe/graph/graph.h"
#include "side/isolated_worker.h"

namespace onnxprobe::isolation {
namespace {

using wire::MsgType;

// A model of the nodes order[0..last] (a prefix in topological order, so closed under
// ancestors) whose outputs are the tensors no node of the prefix consumes: the runtime has to run
// every node of it. The inputs it reads are among `inputs`.
struct Prefix {
  std::string bytes;
  std::vector<std::pair<std::string, const Tensor*>> inputs;
  std::vector<std::string> outputs;
};

Expected<Prefix> MakePrefix(const Model& model, const std::vector<NamedTensor>& inputs,
                            size_t last) {
  const GraphIndex& idx = model.index();
  std::vector<char> in_prefix(idx.nodes().size(), 0);
  for (size_t i = 0; i <= last; ++i) in_prefix[i] = 1;
  Prefix p;
  SubgraphSpec spec;
  std::set<std::string> read;
  for (size_t i = 0; i <= last; ++i) {
    const NodeInfo& n = idx.nodes()[i];
    spec.nodes.push_back(static_cast<int>(i));
    for (const auto* list : {&n.inputs, &n.implicit_inputs})
      read.insert(list->begin(), list->end());
    bool consumed = false;
    const std::string* first = nullptr;
    for (const auto& out : n.outputs) {
      const TensorEntry* e = out.empty() ? nullptr : idx.Find(out);
      if (e == nullptr) continue;
      if (first == nullptr) first = &out;
      for (int c : e->consumers) consumed = consumed || in_prefix[c];
    }
    if (!consumed && first != nullptr) spec.outputs.push_back(*first);
  }
  for (const auto& in : inputs) {
    if (!read.count(in.name)) continue;
    spec.inputs.push_back(in.name);
    spec.input_types.emplace_back(in.tensor.dtype(), in.tensor.shape());
    p.inputs.emplace_back(in.name, &in.tensor);
  }
  OP_ASSIGN_OR_RETURN(p.bytes, ExtractSubgraph(model, spec));
  p.outputs = spec.outputs;
  return p;
}

// Runs a prefix in a fresh worker: true when the worker died, false when the prefix ran. Fails
// when the worker could not get that far or the runtime refused the run.
Expected<bool> CrashesInFreshWorker(Keeper* keeper, const Model& model, const Prefix& prefix) {
  OP_ASSIGN_OR_RETURN(Worker worker, keeper->Spawn(true));
  OP_ASSIGN_OR_RETURN(Hello hello, ReadHello(keeper, &worker));
  if (hello.died) {
    return BackendError("the runtime crashed while loading (" + DescribeExit(hello.exit) + ")");
  }
  auto give_up = [&](Status st) -> Expected<bool> {
    (void)keeper->Reap(&worker, true);
    return st;
  };
  if (!hello.status.ok()) return give_up(hello.status);
  wire::Writer w;
  w.Ids({});  // no region of this worker to release
  w.Str(prefix.bytes);
  w.Str(model.dir());
  w.Strings(prefix.outputs);
  std::vector<wire::TensorItem> items;
  for (const auto& [name, t] : prefix.inputs) items.push_back({&name, t, nullptr});
  wire::SharedRegion region;
  auto fd = wire::PackTensors(items, &region, &w);
  if (!fd.ok()) return give_up(fd.status());
  auto m = wire::Exchange(worker.sock.get(), MsgType::kRunOther, w.bytes(), *fd);
  if (!m.ok()) return give_up(m.status());
  if (m->type == MsgType::kClosed) {
    OP_RETURN_IF_ERROR(keeper->Reap(&worker, false).status());
    return true;
  }
  wire::Reader r(m->payload);
  Status st = r.Stat();
  if (!st.ok()) return give_up(st);
  (void)keeper->Reap(&worker, true);
  return false;
}

}  // namespace

void SearchCrash(const Model& model, const std::vector<NamedTensor>& inputs, Keeper* keeper,
                 int max_runs, RuntimeCrash* crash) {
  const GraphIndex& idx = model.index();
  size_t n = idx.nodes().size();
  if (n == 0 || max_runs < 1) return;
  auto crashes = [&](size_t last) -> Expected<bool> {
    OP_ASSIGN_OR_RETURN(Prefix prefix, MakePrefix(model, inputs, last));
    ++crash->search_runs;
    return CrashesInFreshWorker(keeper, model, prefix);
  };
  auto failed = [&](const Status& st) {
    crash->search = CrashSearch::kFailed;
    crash->search_error = st.message();
  };
  // first the whole graph again: a crash that does not recur cannot be searched for
  auto again = crashes(n - 1);
  if (!again.ok()) return failed(again.status());
  if (!*again) {
    crash->search = CrashSearch::kNotReproduced;
    return;
  }
  // the prefix ending at node hi crashes; prefixes ending before node lo do not
  size_t lo = 0, hi = n - 1;
  while (lo < hi && crash->search_runs < max_runs) {
    size_t mid = lo + (hi - lo) / 2;
    auto c = crashes(mid);
    if (!c.ok()) return failed(c.status());
    if (*c) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  crash->crashing_node = idx.nodes()[hi].name;
  crash->crashing_op_type = idx.nodes()[hi].op_type;
  crash->search = lo == hi ? CrashSearch::kFound : CrashSearch::kNarrowed;
  if (lo != hi) crash->range_first = idx.nodes()[lo].name;
}

std::string DescribeSearch(const RuntimeCrash& c) {
  std::string runs = std::to_string(c.search_runs) + (c.search_runs == 1 ? " re-run" : " re-runs");
  switch (c.search) {
    case CrashSearch::kNotRun:
      return "";
    case CrashSearch::kFound:
      return "; re-run in fresh processes, it crashes at node '" + c.crashing_node + "' (" +
             c.crashing_op_type + ") and not before it (" + runs + ")";
    case CrashSearch::kNotReproduced:
      return "; re-run in a fresh process, the same nodes ran without crashing";
    case CrashSearch::kNarrowed:
      return "; re-run in fresh processes, it crashes at a node from '" + c.range_first + "' to '" +
             c.crashing_node + "' in topological order (search stopped after " + runs + ")";
    case CrashSearch::kFailed:
      return "; the search for the crashing node failed: " + c.search_error;
  }
  return "";
}

}  // namespace onnxprobe::isolation
